//! The conversion, on two boards in the shape of Trello's export (`fixtures/trello/`): an
//! ordinary one that fits, and one built to hit every rule and every problem.

use std::sync::Arc;

use serde_json::{Value, json};

use super::map::thousands;
use super::*;
use crate::command::{Command, Outcome, Request, import};
use crate::store::Durability;
use crate::values::trim_to;
use crate::{Clocks, WriteModel};

const BOARD: &[u8] = include_bytes!("../../../../fixtures/trello/board.json");
const EDGE: &[u8] = include_bytes!("../../../../fixtures/trello/edge.json");
/// The import's clock, for the fallbacks (`now_ms`).
const NOW: i64 = 1_717_000_000_000;

fn ms(date: &str) -> i64 {
    date.parse::<jiff::Timestamp>().unwrap().as_millisecond()
}

fn fixture(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap()
}

fn project(c: &Converted) -> Value {
    let doc: Value = serde_json::from_slice(&c.document).unwrap();
    assert_eq!(doc["version"], 1);
    assert_eq!(doc["now"], NOW);
    assert_eq!(doc["projects"].as_array().unwrap().len(), 1);
    doc["projects"][0].clone()
}

fn columns(project: &Value) -> &Vec<Value> {
    project["columns"].as_array().unwrap()
}

fn column<'a>(project: &'a Value, name: &str) -> &'a Value {
    columns(project)
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no column {name:?}"))
}

/// The task titled `title`, with the name of its column.
fn task<'a>(project: &'a Value, title: &str) -> (&'a Value, &'a str) {
    for col in columns(project) {
        for t in col["tasks"].as_array().unwrap() {
            if t["title"] == title {
                assert_eq!(t["columnId"], col["id"], "a task names its own column");
                return (t, col["name"].as_str().unwrap());
            }
        }
    }
    panic!("no task {title:?}")
}

fn titles(col: &Value) -> Vec<&str> {
    col["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["title"].as_str().unwrap())
        .collect()
}

fn texts(items: &Value) -> Vec<(String, bool)> {
    items
        .as_array()
        .map(|a| {
            a.iter()
                .map(|i| {
                    (
                        i["text"].as_str().unwrap().to_owned(),
                        i["done"].as_bool().unwrap(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn problem(card: Option<&str>, list: Option<&str>, message: &str) -> Problem {
    Problem {
        card: card.map(str::to_owned),
        list: list.map(str::to_owned),
        message: message.to_owned(),
    }
}

fn refused(bytes: &[u8], limits: &Limits) -> Vec<Problem> {
    match convert(bytes, limits, false, NOW) {
        Err(TrelloError::Refused(problems)) => problems,
        other => panic!("not refused: {other:?}"),
    }
}

/// Imports a converted document into a fresh store, through the real writer.
/// The document imported into a fresh store: (projects, columns, cards) made.
fn lands(document: &[u8]) -> (usize, usize, usize) {
    let dir = tempfile::tempdir().unwrap();
    let limits = Arc::new(Limits::default());
    let store = crate::store::open(
        &crate::store::Location::Sqlite(dir.path().join("store.db")),
        Durability::Normal,
    )
    .unwrap();
    let (model, thread) = WriteModel::start(
        &*store,
        limits.clone(),
        Arc::new(Clocks::default()),
        Box::new(|_| {}),
        Box::new(|_, _| {}),
    )
    .unwrap();
    let created = model.execute_blocking(Request {
        account: Some(crate::ids::IdKind::Account.generate()),
        key_id: None,
        command: Command::CreateAccount,
    });
    let Ok(Outcome::AccountCreated { id }) = created else {
        panic!("no account: {created:?}")
    };
    let outcome = model.execute_blocking(Request {
        account: Some(id),
        key_id: None,
        command: import::parse(document, &limits).unwrap(),
    });
    drop(model);
    thread.join().unwrap();
    match outcome.unwrap() {
        Outcome::Imported {
            projects,
            columns,
            tasks,
            project_ids,
        } => {
            assert_eq!(project_ids.len(), projects);
            assert!(project_ids.iter().all(|id| id.starts_with("b_")));
            (projects, columns, tasks)
        }
        other => panic!("not an import: {other:?}"),
    }
}

/// What the fixture holds, counted from its own JSON: lists, cards, non-empty checklist items,
/// comments.
fn counted(board: &Value) -> (usize, usize, usize, usize) {
    let n = |field: &str| board[field].as_array().unwrap().len();
    let items = board["checklists"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["checkItems"].as_array().unwrap())
        .filter(|i| i["name"] != "")
        .count();
    let comments = board["actions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["type"] == "commentCard")
        .count();
    (n("lists"), n("cards"), items, comments)
}

#[test]
fn the_ordinary_board_converts_whole_and_the_import_accepts_it() {
    let limits = Limits::default();
    let c = convert(BOARD, &limits, false, NOW).unwrap();
    assert_eq!(c.skipped, vec![]);
    let board = fixture(BOARD);
    assert_eq!(
        (c.lists, c.cards, c.checklist_items, c.comments),
        counted(&board)
    );
    assert_eq!(c.project, "Website relaunch");

    let Command::Import(i) = import::parse(&c.document, &limits).unwrap() else {
        panic!("not an import")
    };
    assert_eq!(i.projects.len(), 1);
    assert_eq!(
        i.projects[0].fields.name.as_ref().map(|n| n.after.as_str()),
        Some("Website relaunch")
    );
    assert_eq!(i.projects[0].columns.len(), c.lists);
    assert_eq!(i.tasks.len(), c.cards);
    let items: usize = i.tasks.iter().map(|t| t.checklist.len()).sum();
    let comments: usize = i.tasks.iter().map(|t| t.comments.len()).sum();
    assert_eq!((items, comments), (c.checklist_items, c.comments));

    // Lenient changes nothing when everything fits.
    let lenient = convert(BOARD, &limits, true, NOW).unwrap();
    assert_eq!(lenient.skipped, vec![]);
    assert_eq!(
        project(&lenient)["columns"].as_array().unwrap().len(),
        c.lists
    );
}

#[test]
fn the_ordinary_board_lands_in_a_store() {
    let c = convert(BOARD, &Limits::default(), false, NOW).unwrap();
    assert_eq!(lands(&c.document), (1, c.lists, c.cards));
}

#[test]
fn lists_become_columns_in_pos_order_and_the_archived_one_is_dated_by_its_closing() {
    let c = convert(BOARD, &Limits::default(), false, NOW).unwrap();
    let p = project(&c);
    assert!(
        p.get("archivedAt").is_none(),
        "an open board is a live project"
    );
    let names: Vec<&str> = columns(&p)
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "Backlog",
            "This week",
            "Doing",
            "Review",
            "Done",
            "Parking lot"
        ]
    );
    let positions: Vec<f64> = columns(&p)
        .iter()
        .map(|c| c["position"].as_f64().unwrap())
        .collect();
    assert_eq!(
        positions,
        [16384.0, 32768.0, 49152.0, 57344.0, 65536.0, 81920.0]
    );
    for col in &columns(&p)[..5] {
        assert!(col.get("archivedAt").is_none());
        assert!(
            col["id"].as_str().unwrap().starts_with("c_"),
            "a fresh Workboard id"
        );
    }
    assert_eq!(
        column(&p, "Parking lot")["archivedAt"],
        ms("2024-03-28T11:42:05.901Z")
    );
    // Cards in `pos` order within their list.
    assert_eq!(
        titles(column(&p, "Backlog")),
        [
            "Pick the new colour palette",
            "Press kit PDF",
            "Newsletter signup, with double opt-in",
            "Migrate blog posts (2019\u{2013}2023)"
        ]
    );
    // No Trello id is carried anywhere.
    let text = String::from_utf8(c.document.clone()).unwrap();
    let board = fixture(BOARD);
    for card in board["cards"].as_array().unwrap() {
        assert!(!text.contains(card["id"].as_str().unwrap()));
    }
}

#[test]
fn cards_carry_title_deadline_tags_checklist_and_comments() {
    let c = convert(BOARD, &Limits::default(), false, NOW).unwrap();
    let p = project(&c);

    let (redirects, list) = task(&p, "Redirects from old URLs (301)");
    assert_eq!(list, "This week");
    assert_eq!(redirects["position"], 32768.0);
    assert_eq!(redirects["deadline"], "2024-04-16");
    assert_eq!(redirects["deadlineTime"], "22:30");
    assert_eq!(redirects["tags"], json!(["Backend", "Blocker"]));
    assert!(
        redirects.get("priority").is_none(),
        "priority stays at its default"
    );
    assert!(redirects.get("completedAt").is_none());
    assert!(
        redirects.get("description").is_none(),
        "an empty desc sends none"
    );
    assert_eq!(
        texts(&redirects["checklist"]),
        [
            ("/shop/index.php \u{2192} /shop".into(), true),
            ("/news.html \u{2192} /blog".into(), true),
            ("/contact.php \u{2192} /contact".into(), false),
            ("Old product ids (?pid=)".into(), false),
            ("Check with a crawler after go-live".into(), false),
        ],
        "one checklist: its items unprefixed, in pos order"
    );
    assert_eq!(
        redirects["comments"],
        json!([
            {"text": "Map is half done.", "createdAt": ms("2024-04-09T13:27:03.000Z")},
            {"text": "Blocking go-live until this is done.", "createdAt": ms("2024-04-10T08:00:00.000Z")},
            {"text": "@anaribeiro the crawler found 14 more URLs.", "createdAt": ms("2024-04-11T17:05:44.000Z")},
        ]),
        "oldest first"
    );

    let (a11y, _) = task(
        &p,
        "Accessibility pass: contrast, alt text, \"skip to content\"",
    );
    assert_eq!(
        a11y["tags"],
        json!(["Design", "orange"]),
        "an unnamed label by its colour"
    );
    assert!(
        a11y["description"]
            .as_str()
            .unwrap()
            .contains("| home | ok |")
    );
    assert_eq!(
        texts(&a11y["checklist"]),
        [
            ("Contrast: Buttons".into(), true),
            ("Contrast: Footer links".into(), false),
            ("Contrast: Sale badges".into(), false),
            ("Alt text: Logo".into(), true),
            ("Alt text: Product photos".into(), false),
        ],
        "two checklists: in pos order, each item prefixed"
    );

    let (hero, _) = task(&p, "Hero image: compress to < 200 KB");
    assert_eq!(hero["completedAt"], ms("2024-04-05T11:48:30.250Z"));
    assert_eq!(hero["deadline"], "2024-04-05");
    assert_eq!(hero["deadlineTime"], "12:00");
    let (gone, list) = task(&p, "Old analytics script");
    assert_eq!(list, "Done");
    assert_eq!(
        gone["completedAt"],
        ms("2024-03-15T10:02:17.000Z"),
        "an archived card is a finished one"
    );
    let (cafe, _) = task(&p, "Caf\u{e9} menu page \u{2615}");
    assert_eq!(cafe["completedAt"], ms("2024-03-22T13:31:00.000Z"));
    assert!(cafe.get("deadline").is_none());
    let (parked, list) = task(&p, "Live chat widget");
    assert_eq!(list, "Parking lot");
    assert!(parked.get("completedAt").is_none());
}

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
    let shown = TrelloError::Refused(problems).to_string();
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
    assert!(import::parse(&c.document, &limits).is_ok());
    assert_eq!(lands(&c.document), (1, c.lists, c.cards));
}

#[test]
fn a_card_named_with_a_comma_quote_and_newline_keeps_its_labels_checklists_and_comments() {
    let c = convert(EDGE, &Limits::default(), true, NOW).unwrap();
    let p = project(&c);
    let (t, list) = task(&p, "Ship it, \"now\"\nplease");
    assert_eq!(list, "Inbox");
    assert_eq!(
        t["description"],
        "Line one,\n\"quoted\"\n\u{2014} and \u{fc}ml\u{e4}uts \u{1F600}"
    );
    assert_eq!(t["deadline"], "2024-02-29");
    assert_eq!(t["deadlineTime"], "23:45");
    // By name, by colour when unnamed, "bug" equal to "Bug" ignoring case, the label with
    // neither skipped, the long one trimmed by characters.
    let long = "\u{dc}bersetzung \u{2014} \u{8a33}\u{3059} \u{2014} a label name longer than forty";
    assert_eq!(t["tags"], json!(["green", "Bug", trim_to(long, 40)]));
    assert_eq!(trim_to(long, 40).chars().count(), 40);
    assert_eq!(
        texts(&t["checklist"]),
        [
            ("First \u{2713}: one".into(), true),
            ("First \u{2713}: two".into(), false),
            ("Zweite: beta".into(), false),
            ("Zweite: gamma".into(), true),
        ],
        "checklists in pos order (one found through idChecklists only), items in pos order, \
         the empty one dropped"
    );
    assert_eq!(
        t["comments"],
        json!([
            {"text": "first, the oldest \u{1F44B}", "createdAt": ms("2024-03-01T12:00:00.000Z")},
            {"text": "second", "createdAt": ms("2024-03-02T12:00:00.000Z")},
            {"text": "third, the newest", "createdAt": ms("2024-03-03T12:00:00.000Z")},
        ])
    );
    assert!(t.get("completedAt").is_none());
}

#[test]
fn names_are_trimmed_by_characters_and_empty_ones_are_named() {
    let c = convert(EDGE, &Limits::default(), true, NOW).unwrap();
    let p = project(&c);
    let board = fixture(EDGE);
    let board_name = board["name"].as_str().unwrap();
    assert!(board_name.chars().count() > 40);
    assert_eq!(p["name"], trim_to(board_name, 40));
    assert_eq!(c.project, trim_to(board_name, 40));

    let names: Vec<&str> = columns(&p)
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    let long_list = board["lists"][2]["name"].as_str().unwrap();
    assert!(long_list.chars().count() > 40);
    let long_list = trim_to(long_list, 40);
    assert_eq!(
        names,
        [
            "Archived long ago",
            "Inbox",
            "Untitled list",
            long_list.as_str(),
            "Archived, with its actions"
        ]
    );
    assert_eq!(titles(column(&p, "Untitled list")), ["Untitled card"]);
    let long_title = titles(column(&p, &long_list))[0];
    assert_eq!(long_title.chars().count(), 250);
    assert!(long_title.starts_with("T\u{ef}tle \u{1F431}") && long_title.ends_with('\u{1F431}'));
}

#[test]
fn a_closed_board_and_its_archived_lists_keep_their_dates() {
    let c = convert(EDGE, &Limits::default(), true, NOW).unwrap();
    let p = project(&c);
    assert_eq!(p["archivedAt"], ms("2024-05-20T18:00:00.000Z"));
    // The newest action that archived it: not the older closing, the reopening or the rename.
    let archived = column(&p, "Archived, with its actions");
    assert_eq!(archived["archivedAt"], ms("2024-03-15T08:30:00.000Z"));
    assert_eq!(titles(archived), ["In an archived list"]);
    // No action: the board's last activity.
    assert_eq!(
        column(&p, "Archived long ago")["archivedAt"],
        ms("2024-05-20T18:00:00.000Z")
    );
    for live in ["Inbox", "Untitled list"] {
        assert!(column(&p, live).get("archivedAt").is_none());
    }
    let (archived_card, _) = task(&p, "Archived card");
    assert_eq!(archived_card["completedAt"], ms("2024-04-30T07:15:00.000Z"));
}

#[test]
fn due_dates_are_read_in_utc() {
    let c = convert(EDGE, &Limits::default(), true, NOW).unwrap();
    let p = project(&c);
    // Due "2024-04-01T01:30:00.000+02:00" is the evening before in UTC.
    let (t, _) = task(&p, "Done on time");
    assert_eq!(t["deadline"], "2024-03-31");
    assert_eq!(t["deadlineTime"], "23:30");
    assert_eq!(t["completedAt"], ms("2024-03-31T22:00:00.000Z"));
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
    assert!(import::parse(&c.document, &limits).is_ok());
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
        c.skipped.last().unwrap().message,
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
    assert!(import::parse(&c.document, &Limits::default()).is_ok());
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
    assert!(import::parse(&c.document, &Limits::default()).is_ok());
}

#[test]
fn thousands_are_grouped() {
    assert_eq!(thousands(0), "0");
    assert_eq!(thousands(999), "999");
    assert_eq!(thousands(1_000), "1,000");
    assert_eq!(thousands(262_144), "262,144");
    assert_eq!(thousands(1_234_567), "1,234,567");
}
