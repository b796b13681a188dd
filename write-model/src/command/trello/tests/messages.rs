//! Boards built in the test: the messages at the default limits, and documents that are
//! not a Trello board at all.

use super::*;

/// A board built in the test: one list, one card with `desc`, and comments.
fn one_card(desc: &str, comments: &[String]) -> Vec<u8> {
    let actions: Vec<Value> = comments
        .iter()
        .enumerate()
        .map(|(i, text)| {
            json!({
                "type": "commentCard",
                "date": jiff::Timestamp::from_second(1_700_000_000 + i as i64).unwrap().to_string(),
                "data": {"text": text, "card": {"id": "c1"}},
            })
        })
        .collect();
    serde_json::to_vec(&json!({
        "name": "Built", "lists": [{"id": "l1", "name": "List", "pos": 1}],
        "cards": [{"id": "c1", "name": "Big", "idList": "l1", "pos": 1, "desc": desc}],
        "actions": actions,
    }))
    .unwrap()
}

#[test]
fn messages_at_the_default_limits_read_with_thousands() {
    let mut comments: Vec<String> = (0..249).map(|i| format!("comment {i}")).collect();
    comments.insert(10, "z".repeat(20_000));
    let bytes = one_card(&"d".repeat(300_000), &comments);
    let problems = refused(&bytes, &Limits::default());
    let messages: Vec<&str> = problems.iter().map(|p| p.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "a description of 300,000 characters; at most 262,144",
            "a comment of 20,000 characters; at most 16,384",
            "250 comments; at most 200",
        ]
    );
    assert!(
        problems
            .iter()
            .all(|p| p.card.as_deref() == Some("Big") && p.list.as_deref() == Some("List"))
    );

    let c = convert(&bytes, &Limits::default(), true, NOW).unwrap();
    assert_eq!(
        c.skipped.listed.last().unwrap().message,
        "249 comments; at most 200; the oldest 200 kept and the newest 49 left out"
    );
    let p = project(&c);
    let (t, _) = task(&p, "Big");
    let kept = t["comments"].as_array().unwrap();
    assert_eq!(kept.len(), 200);
    assert_eq!(kept[0]["text"], "comment 0");
    assert_eq!(
        kept[199]["text"], "comment 199",
        "the long one left out, the oldest kept"
    );
    assert_eq!(c.comments, 200);
    assert!(Command::import(&c.document, &Limits::default()).is_ok());
}

#[test]
fn a_board_that_is_not_trello_names_what_is_missing() {
    let not_trello =
        |v: Value| match convert(v.to_string().as_bytes(), &Limits::default(), true, NOW) {
            Err(TrelloError::NotTrello { missing }) => missing,
            other => panic!("{other:?}"),
        };
    assert_eq!(
        not_trello(json!({"name": "x", "cards": []})),
        "`lists` is missing"
    );
    assert_eq!(
        not_trello(json!({"name": "x", "lists": null, "cards": []})),
        "`lists` is missing"
    );
    assert_eq!(
        not_trello(json!({"name": "x", "lists": []})),
        "`cards` is missing"
    );
    assert_eq!(
        not_trello(json!({"lists": [], "cards": []})),
        "`name` is missing"
    );
    assert_eq!(
        not_trello(json!({"name": "x", "lists": {}, "cards": []})),
        "`lists` is not an array"
    );
    assert_eq!(
        not_trello(json!({"name": 3, "lists": [], "cards": []})),
        "`name` is not a string"
    );
    // Workboard's own export is JSON, but not a Trello board.
    assert_eq!(
        not_trello(json!({"version": 1, "now": 0, "projects": []})),
        "`lists` is missing"
    );
    assert!(not_trello(json!([1, 2])).starts_with("a board object"));
    let malformed =
        not_trello(json!({"name": "x", "lists": [], "cards": [{"name": "a", "pos": "top"}]}));
    assert!(
        malformed.starts_with("`cards[0]` does not read as a Trello card"),
        "{malformed}"
    );
    let shown = TrelloError::NotTrello {
        missing: "`lists` is missing".into(),
    }
    .to_string();
    assert_eq!(
        shown,
        "the file is not a Trello board export: `lists` is missing"
    );
}

#[test]
fn bad_json_is_told_apart() {
    for bytes in [&b"{\"name\": "[..], b"", b"<html>"] {
        let err = convert(bytes, &Limits::default(), true, NOW).unwrap_err();
        assert!(matches!(err, TrelloError::BadJson(_)), "{err:?}");
        assert!(err.to_string().starts_with("the file is not JSON: "));
    }
}

#[test]
fn the_smallest_board_converts() {
    let c = convert(
        br#"{"name": "", "lists": [], "cards": []}"#,
        &Limits::default(),
        false,
        NOW,
    )
    .unwrap();
    assert_eq!(project(&c)["name"], "Untitled board");
    assert_eq!(
        (c.lists, c.cards, c.checklist_items, c.comments),
        (0, 0, 0, 0)
    );
    assert!(Command::import(&c.document, &Limits::default()).is_ok());
}

#[test]
fn thousands_are_grouped() {
    assert_eq!(thousands(0), "0");
    assert_eq!(thousands(999), "999");
    assert_eq!(thousands(1_000), "1,000");
    assert_eq!(thousands(262_144), "262,144");
    assert_eq!(thousands(1_234_567), "1,234,567");
}
