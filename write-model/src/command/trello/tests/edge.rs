//! The edge board: every problem listed when strict, left out and told when lenient, and
//! every limit crossed.

use super::*;

#[test]
fn strict_refuses_the_edge_board_listing_every_problem_by_card() {
    let problems = refused(EDGE, &Limits::default());
    let inbox = Some("Inbox");
    assert_eq!(
        problems,
        [
            problem(Some("Orphan"), None, "its list is not in the file"),
            problem(
                Some("Six labels"),
                inbox,
                "6 labels; a card holds at most 5 tags"
            ),
            problem(
                Some("Long checklist"),
                inbox,
                "120 checklist items; at most 100"
            ),
            problem(
                Some("Done on time"),
                inbox,
                "a comment dated \"not a date\", which does not parse"
            ),
            problem(
                Some("Bad due date"),
                inbox,
                "a due date \"next Tuesday\" that does not parse"
            ),
            problem(
                Some("Archived, activity unreadable"),
                inbox,
                "a `dateLastActivity` \"yesterday\" that does not parse"
            ),
        ]
    );
    let shown = TrelloError::Refused(Problems {
        listed: problems,
        more: 0,
    })
    .to_string();
    assert!(
        shown.starts_with("nothing was imported: 6 things in this Trello board do not fit"),
        "{shown}"
    );
    assert!(shown.contains("\n- card \"Six labels\" in list \"Inbox\": 6 labels;"));
}

#[test]
fn lenient_leaves_out_what_does_not_fit_and_says_what() {
    let limits = Limits::default();
    let c = convert(EDGE, &limits, true, NOW).unwrap();
    let messages: Vec<(Option<&str>, &str)> = c
        .skipped
        .iter()
        .map(|p| (p.card.as_deref(), p.message.as_str()))
        .collect();
    assert_eq!(
        messages,
        [
            (Some("Orphan"), "its list is not in the file; left out"),
            (
                Some("Six labels"),
                "6 labels; a card holds at most 5 tags; left out \"Label 5\""
            ),
            (
                Some("Long checklist"),
                "120 checklist items; at most 100; left out the last 20"
            ),
            (
                Some("Done on time"),
                "a comment dated \"not a date\", which does not parse; its date left out, so it \
                 takes the import's time"
            ),
            (
                Some("Bad due date"),
                "a due date \"next Tuesday\" that does not parse; left out"
            ),
            (
                Some("Archived, activity unreadable"),
                "a `dateLastActivity` \"yesterday\" that does not parse; left out, so the card \
                 is finished at the import's time"
            ),
        ]
    );
    let p = project(&c);
    let (six, _) = task(&p, "Six labels");
    assert_eq!(
        six["tags"],
        json!(["Label 0", "Label 1", "Label 2", "Label 3", "Label 4"])
    );
    let (long, _) = task(&p, "Long checklist");
    let items = texts(&long["checklist"]);
    assert_eq!(items.len(), 100);
    assert_eq!(items[0], ("step 001".into(), false));
    assert_eq!(items[99], ("step 100".into(), true));
    let (bad_due, _) = task(&p, "Bad due date");
    assert!(bad_due.get("deadline").is_none() && bad_due.get("deadlineTime").is_none());
    let (unreadable, _) = task(&p, "Archived, activity unreadable");
    assert_eq!(unreadable["completedAt"], NOW);
    let (done, _) = task(&p, "Done on time");
    assert_eq!(
        done["comments"],
        json!([{"text": "a comment whose date is unreadable"}]),
        "kept, without a date: Workboard stamps it"
    );
    assert!(
        !String::from_utf8(c.document.clone())
            .unwrap()
            .contains("Orphan")
    );

    let edge = fixture(EDGE);
    let (lists, cards, items, comments) = counted(&edge);
    assert_eq!(c.lists, lists);
    assert_eq!(c.cards, cards - 1, "the orphan is left out");
    assert_eq!(c.checklist_items, items - 20);
    assert_eq!(c.comments, comments);
    assert!(Command::import(&c.document, &limits).is_ok());
    assert_eq!(lands(&c.document), (1, c.lists, c.cards));
}

/// Limits low enough that the edge board crosses the prose, comment and column limits too.
fn tight() -> Limits {
    Limits {
        description_chars: 500,
        comment_chars: 200,
        comments_per_task: 2,
        columns_per_project: 3,
        ..Limits::default()
    }
}

#[test]
fn the_limits_passed_in_rule_prose_comments_and_columns() {
    let limits = tight();
    let problems = refused(EDGE, &limits);
    let mine = |card: Option<&str>, list: Option<&str>| {
        problems
            .iter()
            .filter(|p| p.card.as_deref() == card && p.list.as_deref() == list)
            .map(|p| p.message.as_str())
            .collect::<Vec<_>>()
    };
    let past = "the board has 5 lists and a project holds at most 3 columns";
    assert_eq!(
        mine(None, Some("Archived long ago")),
        [format!("an archived list past the limit: {past}")]
    );
    assert_eq!(
        mine(None, Some("Archived, with its actions")),
        [format!("an archived list past the limit: {past}")]
    );
    assert_eq!(
        mine(Some("Wordy"), Some("Inbox")),
        [
            "a description of 600 characters; at most 500",
            "a comment of 300 characters; at most 200"
        ]
    );
    assert_eq!(
        mine(Some("Ship it, \"now\"\nplease"), Some("Inbox")),
        ["3 comments; at most 2"]
    );
    assert_eq!(
        problems.len(),
        6 + 5,
        "the six of the default limits, and these"
    );

    let c = convert(EDGE, &limits, true, NOW).unwrap();
    let left_out: Vec<&str> = c.skipped.iter().map(|p| p.message.as_str()).collect();
    assert!(left_out.contains(
        &format!("an archived list past the limit: {past}; left out with its 0 cards").as_str()
    ));
    assert!(left_out.contains(
        &format!("an archived list past the limit: {past}; left out with its 1 card").as_str()
    ));
    assert!(left_out.contains(
        &"a description of 600 characters; at most 500; left out (the card keeps an empty description)"
    ));
    assert!(left_out.contains(&"a comment of 300 characters; at most 200; left out"));
    assert!(
        left_out.contains(&"3 comments; at most 2; the oldest 2 kept and the newest 1 left out")
    );
    let p = project(&c);
    let names: Vec<&str> = columns(&p)
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 3);
    assert_eq!(
        &names[..2],
        ["Inbox", "Untitled list"],
        "archived lists go first"
    );
    assert_eq!(
        c.cards,
        fixture(EDGE)["cards"].as_array().unwrap().len() - 2
    );
    let (wordy, _) = task(&p, "Wordy");
    assert!(wordy.get("description").is_none() && wordy.get("comments").is_none());
    let (quirky, _) = task(&p, "Ship it, \"now\"\nplease");
    let kept: Vec<&str> = quirky["comments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["text"].as_str().unwrap())
        .collect();
    assert_eq!(kept, ["first, the oldest \u{1F44B}", "second"]);
    assert!(Command::import(&c.document, &limits).is_ok());
}

#[test]
fn past_the_archived_lists_the_last_lists_by_pos_go_with_their_cards() {
    let limits = Limits {
        columns_per_project: 2,
        ..Limits::default()
    };
    let c = convert(EDGE, &limits, true, NOW).unwrap();
    let p = project(&c);
    let names: Vec<&str> = columns(&p)
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Inbox", "Untitled list"]);
    let long_list = fixture(EDGE)["lists"][2]["name"]
        .as_str()
        .unwrap()
        .to_owned();
    let gone: Vec<&Problem> = c
        .skipped
        .iter()
        .filter(|p| p.list.as_deref() == Some(long_list.as_str()))
        .collect();
    assert_eq!(gone.len(), 1);
    assert_eq!(
        gone[0].message,
        "a list past the limit: the board has 5 lists and a project holds at most 2 columns; \
         left out with its 1 card"
    );
}
