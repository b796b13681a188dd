//! Hostile boards, built in the test: each shape that once made the conversion's work grow
//! faster than its file (a checklist named by every card, labels by the ten thousand, one id
//! on many cards, a problem on every card) is cut at its limit as it is read, refused, or
//! counted instead of listed.

use super::*;
use crate::command::trello::LISTED_PROBLEMS;

/// A board of one list whose cards are given as JSON, with its checklists and actions.
fn board(cards: Vec<Value>, checklists: Vec<Value>, actions: Vec<Value>) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "name": "Hostile",
        "lists": [{"id": "l1", "name": "List", "pos": 1}],
        "cards": cards,
        "checklists": checklists,
        "actions": actions,
    }))
    .unwrap()
}

fn card(id: &str, name: &str) -> Value {
    json!({"id": id, "name": name, "idList": "l1", "pos": 1})
}

/// One checklist of `items` items, owned by no card in the file.
fn checklist(id: &str, name: &str, items: usize) -> Value {
    let items: Vec<Value> = (0..items)
        .map(|i| json!({"name": format!("item {i:04}"), "state": "incomplete", "pos": i}))
        .collect();
    json!({"id": id, "name": name, "pos": 1, "checkItems": items})
}

fn all_tasks(c: &Converted) -> Vec<Value> {
    let p = project(c);
    columns(&p)
        .iter()
        .flat_map(|col| col["tasks"].as_array().unwrap().clone())
        .collect()
}

#[test]
fn a_checklist_named_by_a_thousand_cards_gives_each_the_item_limit_and_one_problem() {
    let cards: Vec<Value> = (0..1_000)
        .map(|i| {
            let mut c = card(&format!("c{i}"), &format!("card {i}"));
            c["idChecklists"] = json!(["shared"]);
            c
        })
        .collect();
    let bytes = board(cards, vec![checklist("shared", "Shared", 500)], vec![]);
    let limits = Limits::default();

    let problems = refused(&bytes, &limits);
    assert_eq!(
        problems,
        [problem(
            Some("card 0"),
            Some("List"),
            "500 checklist items; at most 100; 999 other cards name the same checklists"
        )],
        "one problem for the checklist, counting the cards"
    );

    let c = convert(&bytes, &limits, true, NOW).unwrap();
    assert_eq!(c.skipped.total(), 1);
    assert_eq!(
        c.skipped.listed[0].message,
        "500 checklist items; at most 100; 999 other cards name the same checklists; \
         left out the last 400 on each"
    );
    let tasks = all_tasks(&c);
    assert_eq!(tasks.len(), 1_000);
    for t in &tasks {
        let items = texts(&t["checklist"]);
        assert_eq!(items.len(), 100, "each card gets the limit");
        assert_eq!(items[0].0, "item 0000");
        assert_eq!(items[99].0, "item 0099");
    }
    assert_eq!(c.checklist_items, 100_000);
    assert!(Command::import(&c.document, &limits).is_ok());
}

#[test]
fn a_long_checklist_name_is_cut_once_before_it_prefixes_each_item() {
    let limits = Limits::default();
    let name = "n".repeat(200_000);
    let item = "i".repeat(100_000);
    let mut c1 = card("c1", "Two checklists");
    c1["idChecklists"] = json!(["a", "b"]);
    let a = json!({"id": "a", "name": name, "pos": 1,
        "checkItems": [{"name": item, "state": "complete", "pos": 1}]});
    let b = json!({"id": "b", "name": "B", "pos": 2,
        "checkItems": [{"name": item, "state": "incomplete", "pos": 1}]});
    let bytes = board(vec![c1], vec![a, b], vec![]);
    let c = convert(&bytes, &limits, false, NOW).unwrap();
    let p = project(&c);
    let (t, _) = task(&p, "Two checklists");
    let max = limits.checklist_item_chars;
    assert_eq!(
        texts(&t["checklist"]),
        [
            ("n".repeat(max), true),
            (trim_to(&format!("B: {item}"), max), false)
        ],
        "the same as joining the whole texts and cutting after"
    );
}

#[test]
fn ten_thousand_labels_on_a_card_keep_the_first_tags_and_say_how_many() {
    let labels: Vec<Value> = (0..10_000)
        .map(|i| json!({"id": format!("lab{i}"), "name": format!("Label {i}"), "color": "red"}))
        .collect();
    let ids: Vec<String> = (0..10_000).map(|i| format!("lab{i}")).collect();
    let mut c1 = card("c1", "Labelled");
    c1["idLabels"] = json!(ids);
    // The card's own labels, as Trello writes them, name the same ones.
    c1["labels"] = json!(labels);
    let mut doc: Value = serde_json::from_slice(&board(vec![c1], vec![], vec![])).unwrap();
    doc["labels"] = json!([]);
    let bytes = serde_json::to_vec(&doc).unwrap();
    let limits = Limits::default();
    let c = convert(&bytes, &limits, true, NOW).unwrap();
    assert_eq!(c.skipped.total(), 1);
    assert_eq!(
        c.skipped.listed[0].message,
        "10,000 labels; a card holds at most 5 tags; left out \"Label 5\", \"Label 6\", \
         \"Label 7\", \"Label 8\", \"Label 9\" and 9,990 more"
    );
    let p = project(&c);
    let (t, _) = task(&p, "Labelled");
    assert_eq!(
        t["tags"],
        json!(["Label 0", "Label 1", "Label 2", "Label 3", "Label 4"])
    );
}

#[test]
fn two_cards_with_one_id_are_refused_even_when_lenient() {
    let comments: Vec<Value> = (0..3)
        .map(|i| {
            json!({"type": "commentCard", "date": "2024-01-01T00:00:00.000Z",
            "data": {"text": format!("comment {i}"), "card": {"id": "same"}}})
        })
        .collect();
    let bytes = board(
        vec![
            card("same", "First"),
            card("same", "Second"),
            card("other", "Third"),
        ],
        vec![],
        comments,
    );
    for lenient in [false, true] {
        let Err(TrelloError::Refused(problems)) = convert(&bytes, &Limits::default(), lenient, NOW)
        else {
            panic!("not refused (lenient {lenient})");
        };
        let expected = "its id \"same\" is card \"First\"'s too; each card needs an id of its own";
        let message = if lenient {
            format!("{expected}; nothing was imported")
        } else {
            expected.to_owned()
        };
        assert_eq!(
            problems,
            Problems {
                listed: vec![problem(Some("Second"), Some("List"), &message)],
                more: 0
            }
        );
    }
}

#[test]
fn two_lists_or_two_checklists_with_one_id_are_refused() {
    let mut doc: Value = serde_json::from_slice(&board(vec![], vec![], vec![])).unwrap();
    doc["lists"] = json!([{"id": "l1", "name": "One"}, {"id": "l1", "name": "Two"}]);
    let problems = refused(&serde_json::to_vec(&doc).unwrap(), &Limits::default());
    assert_eq!(
        problems,
        [problem(
            None,
            Some("Two"),
            "its id \"l1\" is list \"One\"'s too; each list needs an id of its own"
        )]
    );

    let bytes = board(
        vec![card("c1", "Card")],
        vec![checklist("k", "A", 1), checklist("k", "B", 1)],
        vec![],
    );
    let problems = refused(&bytes, &Limits::default());
    assert_eq!(problems.len(), 1);
    assert!(
        problems[0]
            .message
            .starts_with("checklist \"B\": its id \"k\" is checklist \"A\"'s too"),
        "{problems:?}"
    );
}

#[test]
fn problems_past_the_first_hundred_are_counted_not_listed() {
    // 250 cards whose list is not in the file: a problem each.
    let cards: Vec<Value> = (0..250)
        .map(|i| json!({"id": format!("c{i}"), "name": format!("card {i}"), "idList": "gone"}))
        .collect();
    let bytes = board(cards, vec![], vec![]);
    let Err(TrelloError::Refused(problems)) = convert(&bytes, &Limits::default(), false, NOW)
    else {
        panic!("not refused")
    };
    assert_eq!(problems.listed.len(), LISTED_PROBLEMS);
    assert_eq!(problems.more, 150);
    assert_eq!(problems.total(), 250);
    assert_eq!(problems.listed[0].card.as_deref(), Some("card 0"));
    assert_eq!(problems.listed[99].card.as_deref(), Some("card 99"));
    let shown = TrelloError::Refused(problems).to_string();
    assert!(
        shown.starts_with("nothing was imported: 250 things in this Trello board do not fit"),
        "{shown}"
    );
    assert!(shown.ends_with("\n- and 150 more"), "{shown}");
    assert_eq!(shown.lines().count(), 1 + 100 + 1);

    // Lenient lists what it left out the same way.
    let c = convert(&bytes, &Limits::default(), true, NOW).unwrap();
    assert_eq!((c.skipped.listed.len(), c.skipped.more), (100, 150));
    assert_eq!(c.cards, 0);
}

#[test]
fn a_name_in_a_problem_is_cut_so_a_problem_stays_small() {
    let long = "x".repeat(50_000);
    let bytes = board(
        vec![json!({"id": "c1", "name": long, "idList": "gone"})],
        vec![],
        vec![],
    );
    let problems = refused(&bytes, &Limits::default());
    assert_eq!(problems[0].card.as_deref().map(str::len), Some(1_000));
}

#[test]
fn cards_carrying_more_text_than_an_account_stores_are_refused_as_they_grow() {
    let limits = Limits {
        storage_bytes: 10_000,
        ..Limits::default()
    };
    let cards: Vec<Value> = (0..100)
        .map(|i| {
            let mut c = card(&format!("c{i}"), &format!("card {i}"));
            c["desc"] = json!("d".repeat(1_000));
            c
        })
        .collect();
    let bytes = board(cards, vec![], vec![]);
    for lenient in [false, true] {
        let Err(TrelloError::Refused(problems)) = convert(&bytes, &limits, lenient, NOW) else {
            panic!("not refused (lenient {lenient})");
        };
        assert_eq!(
            problems.listed[0].message,
            "its cards would take more than 10,000 bytes to store, more than an account \
             stores (the storage limit); nothing was imported"
        );
    }
    // A shared checklist's problem, listed before the limit is passed, keeps its place.
    let shared: Vec<Value> = (0..100)
        .map(|i| {
            let mut c = card(&format!("c{i}"), &format!("card {i}"));
            c["idChecklists"] = json!(["k"]);
            c
        })
        .collect();
    let bytes_shared = board(shared, vec![checklist("k", "K", 150)], vec![]);
    let Err(TrelloError::Refused(problems)) = convert(&bytes_shared, &limits, true, NOW) else {
        panic!("not refused");
    };
    assert_eq!(problems.total(), 2);
    assert!(
        problems.listed[0]
            .message
            .starts_with("its cards would take more than")
    );
    assert!(
        problems.listed[1]
            .message
            .starts_with("150 checklist items; at most 100; "),
        "{problems:?}"
    );
    // Under the limit the same cards convert.
    let c = convert(&bytes, &Limits::default(), false, NOW).unwrap();
    assert_eq!(c.cards, 100);
}

#[test]
fn comments_stop_at_the_limit_and_count_the_rest() {
    let actions: Vec<Value> = (0..1_000)
        .map(|i| {
            json!({"type": "commentCard",
                "date": jiff::Timestamp::from_second(1_700_000_000 + i).unwrap().to_string(),
                "data": {"text": format!("comment {i}"), "card": {"id": "c1"}}})
        })
        .collect();
    let bytes = board(vec![card("c1", "Talked about")], vec![], actions);
    let c = convert(&bytes, &Limits::default(), true, NOW).unwrap();
    assert_eq!(
        c.skipped.listed[0].message,
        "1,000 comments; at most 200; the oldest 200 kept and the newest 800 left out"
    );
    assert_eq!(c.comments, 200);
}

#[test]
fn unknown_fields_and_actions_of_other_shapes_are_skipped() {
    let mut doc: Value = serde_json::from_slice(&board(
        vec![card("c1", "Card")],
        vec![],
        vec![
            json!({"type": "updateCard", "data": {"old": {"pos": 3}, "card": "not an object"}}),
            json!({"type": 7, "data": [1, 2]}),
            json!({"type": "commentCard", "data": {"text": 5, "card": {"id": "c1"}}}),
            json!({"type": "commentCard", "date": null,
                "data": {"text": "kept", "card": {"id": "c1", "extra": {"deep": [1]}}}}),
        ],
    ))
    .unwrap();
    doc["prefs"] = json!({"background": "blue", "nested": {"a": [null, {"b": 1}]}});
    doc["cards"][0]["badges"] = json!({"votes": 0});
    doc["cards"][0]["desc"] = Value::Null;
    let c = convert(
        &serde_json::to_vec(&doc).unwrap(),
        &Limits::default(),
        false,
        NOW,
    )
    .unwrap();
    let p = project(&c);
    let (t, _) = task(&p, "Card");
    assert_eq!(t["comments"], json!([{"text": "kept"}]));
    assert!(t.get("description").is_none());
}
