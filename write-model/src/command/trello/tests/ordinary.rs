//! The ordinary board: it converts whole, lands in a store, and keeps what Trello held.

use super::*;

#[test]
fn the_ordinary_board_converts_whole_and_the_import_accepts_it() {
    let limits = Limits::default();
    let c = convert(BOARD, &limits, false, NOW).unwrap();
    assert!(c.skipped.is_empty());
    let board = fixture(BOARD);
    assert_eq!(
        (c.lists, c.cards, c.checklist_items, c.comments),
        counted(&board)
    );
    assert_eq!(c.project, "Website relaunch");

    let Command::Import(i) = Command::import(&c.document, &limits).unwrap() else {
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
    assert!(lenient.skipped.is_empty());
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
