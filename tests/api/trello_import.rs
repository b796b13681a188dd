//! Imports over HTTP and from Trello (issue 23): `POST /import` takes Workboard's export
//! (`from=workboard`, the default) or one Trello board (`from=trello`), as `workboard import
//! --from trello` does: all or nothing, one write, the storage limit, new ids for Trello, a
//! refusal that lists each card that does not fit, and `lenient` to leave them out. The
//! Trello files are the converter's fixtures, `fixtures/trello/`.

use serde_json::{Value, json};

use crate::harness::*;

const BOARD: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/trello/board.json");
const EDGE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/trello/edge.json");

fn read(path: &str) -> String {
    std::fs::read_to_string(path).expect("read the fixture")
}

/// Every Trello id in a board file: the board's, its lists', cards', labels', checklists',
/// items' and actions'.
fn trello_ids(board: &Value) -> Vec<String> {
    let mut ids = vec![str_of(&board["id"])];
    for list in ["lists", "cards", "labels", "checklists", "actions"] {
        for x in board[list].as_array().into_iter().flatten() {
            ids.extend(x["id"].as_str().map(str::to_owned));
            for item in x["checkItems"].as_array().into_iter().flatten() {
                ids.extend(item["id"].as_str().map(str::to_owned));
            }
        }
    }
    ids
}

async fn writes_used(api: &Api) -> i64 {
    api.get("/usage").await.expect_ok(200)["writes"]["used"]
        .as_i64()
        .unwrap()
}

#[tokio::test]
async fn a_trello_board_becomes_one_new_project_with_new_ids_in_one_write() {
    let s = Server::start().await;
    let api = s.api();
    let board: Value = serde_json::from_str(&read(BOARD)).unwrap();
    let before = writes_used(&api).await;
    let r = api.post_text("/import?from=trello", &read(BOARD)).await;
    let reply = r.expect_ok(201).clone();
    assert_eq!(writes_used(&api).await, before + 1, "one write");
    assert_keys(
        &reply,
        &[
            "ok",
            "projects",
            "columns",
            "tasks",
            "projectIds",
            "skipped",
            "moreSkipped",
        ],
    );
    assert_eq!(reply["projects"], json!(1));
    assert_eq!(reply["columns"], json!(6));
    assert_eq!(reply["tasks"], json!(15));
    assert_eq!(reply["skipped"], json!([]));
    assert_eq!(reply["moreSkipped"], json!(0));
    let pid = str_of(&reply["projectIds"][0]);
    let project = api.project(&pid).await;
    assert_eq!(project["name"], json!("Website relaunch"));
    assert_eq!(project["columns"].as_array().unwrap().len(), 6);
    assert_eq!(tasks_of(&project).len(), 15);
    // The Trello ids are kept nowhere a client can see.
    let everything = api.get("/projects?completed=all").await.text;
    let changes = api.get("/changes?completed=all").await.text;
    for id in trello_ids(&board) {
        assert!(!everything.contains(&id), "{id} shows in a read");
        assert!(!changes.contains(&id), "{id} shows in the changes");
    }
    // Importing it again makes another project: new ids every time.
    let again = api.post_text("/import?from=trello", &read(BOARD)).await;
    assert_ne!(again.expect_ok(201)["projectIds"][0], json!(pid));
    // Its cards are found by search at once.
    let found = api.get("/search?q=palette").await;
    assert_eq!(found.expect_ok(200)["total"], json!(2));
}

#[tokio::test]
async fn a_board_that_does_not_fit_is_refused_whole_naming_each_card_or_taken_leniently() {
    let s = Server::start().await;
    let api = s.api();
    let before = api.account().await;
    let r = api.post_text("/import?from=trello", &read(EDGE)).await;
    let body = r.expect_code(422, "invalid_value").clone();
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("nothing was imported")
    );
    let problems = body["problems"].as_array().expect("problems");
    assert_eq!(problems.len(), 6, "{problems:#?}");
    for p in problems {
        assert_keys(p, &["card", "list", "message"]);
    }
    let six = problems
        .iter()
        .find(|p| p["card"] == json!("Six labels"))
        .unwrap();
    assert_eq!(six["list"], json!("Inbox"));
    assert!(six["message"].as_str().unwrap().contains("at most 5 tags"));
    assert!(problems.iter().any(|p| p["card"] == json!("Orphan")));
    assert_eq!(api.account().await, before, "nothing landed");

    let r = api
        .post_text("/import?from=trello&lenient=true", &read(EDGE))
        .await;
    let reply = r.expect_ok(201).clone();
    let skipped = reply["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 6, "{skipped:#?}");
    let long = skipped
        .iter()
        .find(|p| p["card"] == json!("Long checklist"))
        .unwrap();
    assert_eq!(long["list"], json!("Inbox"));
    assert!(
        long["message"].as_str().unwrap().contains("left out"),
        "{long}"
    );
    let project = api.project(&str_of(&reply["projectIds"][0])).await;
    let tasks = tasks_of(&project);
    let six = tasks
        .iter()
        .find(|t| t["title"] == json!("Six labels"))
        .unwrap();
    assert_eq!(
        six["tags"].as_array().unwrap().len(),
        5,
        "the first five kept"
    );
    assert!(
        tasks.iter().all(|t| t["title"] != json!("Orphan")),
        "a card without its list is left out"
    );
}

#[tokio::test]
async fn a_file_that_is_not_a_trello_board_says_what_is_missing() {
    let s = Server::start().await;
    let api = s.api();
    let r = api
        .post_text("/import?from=trello", r#"{"name": "A board", "cards": []}"#)
        .await;
    let body = r.expect_code(422, "invalid_value");
    let error = body["error"].as_str().unwrap();
    assert!(
        error.contains("not a Trello board export") && error.contains("missing"),
        "{error}"
    );
    api.post_text("/import?from=trello", "{not json")
        .await
        .expect_code(400, "invalid_json");
    api.post_text("/import?from=asana", "{}")
        .await
        .expect_field_error(422, "from");
    api.post_text("/import?lenient=true", &read(BOARD))
        .await
        .expect_field_error(422, "lenient");
    api.post_text("/import?from=trello&lenient=maybe", &read(BOARD))
        .await
        .expect_field_error(422, "lenient");
    // A Trello board sent as Workboard's export is not one: its first field is unknown there.
    let r = api.post_text("/import", &read(BOARD)).await;
    let body = r.expect_field_error(422, "id");
    assert_eq!(body["code"], json!("unknown_field"));
    assert_eq!(body["accepted"], json!(["version", "now", "projects"]));
}

#[tokio::test]
async fn workboard_exports_import_over_http_all_or_nothing_within_the_storage_limit() {
    let s = Server::start_with(&["--limit-storage-bytes", "60000"]).await;
    let source = s.api();
    let (_, cid) = source.board().await;
    source
        .create_task(
            json!({"columnId": cid, "title": "Carried over", "tags": ["a"],
            "checklist": [{"text": "item"}], "comments": [{"text": "note"}]}),
        )
        .await;
    let export = source.get("/export").await.text;
    let (key, _) = s.issue_key(None).await;
    let target = s.api_for(&key);
    let before = writes_used(&target).await;
    let r = target.post_text("/import", &export).await;
    let reply = r.expect_ok(201).clone();
    assert_eq!(
        (
            reply["projects"].clone(),
            reply["columns"].clone(),
            reply["tasks"].clone()
        ),
        (json!(1), json!(1), json!(1))
    );
    assert_eq!(writes_used(&target).await, before + 1);
    let exported: Value = serde_json::from_str(&export).unwrap();
    assert_eq!(reply["projectIds"], json!([exported["projects"][0]["id"]]));
    let mut mine = source.account().await;
    let mut theirs = target.account().await;
    for doc in [&mut mine, &mut theirs] {
        for p in doc["projects"].as_array_mut().unwrap() {
            p.as_object_mut().unwrap().remove("updatedAt");
            for c in p["columns"].as_array_mut().unwrap() {
                c.as_object_mut().unwrap().remove("updatedAt");
                for t in c["tasks"].as_array_mut().unwrap() {
                    let t = t.as_object_mut().unwrap();
                    t.remove("updatedAt");
                    t.remove("rev");
                }
            }
        }
    }
    assert_eq!(mine, theirs, "the same account, ids kept");

    // Over the storage limit: 413, and nothing of it lands.
    let (key, _) = s.issue_key(None).await;
    let full = s.api_for(&key);
    let mut big: Value = serde_json::from_str(&export).unwrap();
    big["projects"][0]["columns"][0]["tasks"][0]["description"] = json!("x".repeat(70_000));
    let r = full.post_text("/import", &big.to_string()).await;
    r.expect_code(413, "storage_full");
    assert!(full.projects("?completed=all").await.is_empty());
}

#[tokio::test]
async fn the_cli_imports_a_trello_board_strictly_or_leniently() {
    let s = Server::start().await;
    let (key, account) = s.issue_key(None).await;
    let api = s.api_for(&key);
    let out = s
        .cli(&["import", BOARD, "--account", &account, "--from", "trello"])
        .await;
    out.success();
    let summary = out.json_lines().pop().unwrap();
    assert_eq!(
        (summary["projects"].clone(), summary["tasks"].clone()),
        (json!(1), json!(15))
    );
    let pid = str_of(&summary["projectIds"][0]);
    assert_eq!(
        api.project(&pid).await["name"],
        json!("Website relaunch"),
        "shows at once"
    );

    let refused = s
        .cli(&["import", EDGE, "--account", &account, "--from", "trello"])
        .await;
    assert!(!refused.status.success());
    assert!(
        refused.stderr.contains("nothing was imported")
            && refused
                .stderr
                .contains("card \"Six labels\" in list \"Inbox\""),
        "{}",
        refused.stderr
    );
    assert_eq!(api.projects("?completed=all").await.len(), 1);

    let lenient = s
        .cli(&[
            "import",
            EDGE,
            "--account",
            &account,
            "--from",
            "trello",
            "--lenient",
        ])
        .await;
    lenient.success();
    assert!(
        lenient
            .stderr
            .contains("warning: left out: card \"Long checklist\" in list \"Inbox\""),
        "{}",
        lenient.stderr
    );
    assert_eq!(
        lenient.json_lines().pop().unwrap()["skipped"]
            .as_array()
            .unwrap()
            .len(),
        6
    );
    assert_eq!(api.projects("?completed=all").await.len(), 2);

    let wrong = s
        .cli(&["import", BOARD, "--account", &account, "--lenient"])
        .await;
    assert!(!wrong.status.success());
    assert!(wrong.stderr.contains("lenient"), "{}", wrong.stderr);
}

/// A board of one list built in the test, its cards as given.
fn built_board(cards: Vec<Value>) -> String {
    json!({"name": "Built", "lists": [{"id": "l1", "name": "List", "pos": 1}], "cards": cards})
        .to_string()
}

#[tokio::test]
async fn two_cards_with_one_id_are_refused_even_leniently_and_nothing_lands() {
    let s = Server::start().await;
    let api = s.api();
    let before = api.account().await;
    let file = built_board(vec![
        json!({"id": "same", "name": "First", "idList": "l1"}),
        json!({"id": "same", "name": "Second", "idList": "l1"}),
    ]);
    for query in ["from=trello", "from=trello&lenient=true"] {
        let r = api.post_text(&format!("/import?{query}"), &file).await;
        let body = r.expect_code(422, "invalid_value").clone();
        assert_eq!(body["more"], json!(0), "{body}");
        let problems = body["problems"].as_array().expect("problems");
        assert_eq!(problems.len(), 1, "{problems:#?}");
        assert_eq!(problems[0]["card"], json!("Second"));
        assert_eq!(problems[0]["list"], json!("List"));
        let message = problems[0]["message"].as_str().unwrap();
        assert!(
            message.starts_with("its id \"same\" is card \"First\"'s too"),
            "{message}"
        );
    }
    assert_eq!(api.account().await, before, "nothing landed");
}

#[tokio::test]
async fn problems_past_the_first_hundred_are_counted_refused_or_skipped() {
    let s = Server::start().await;
    let api = s.api();
    // 140 cards whose list is not in the file, and one that fits.
    let mut cards: Vec<Value> = (0..140)
        .map(|i| json!({"id": format!("c{i}"), "name": format!("card {i}"), "idList": "gone"}))
        .collect();
    cards.push(json!({"id": "kept", "name": "Kept", "idList": "l1"}));
    let file = built_board(cards);

    let r = api.post_text("/import?from=trello", &file).await;
    let body = r.expect_code(422, "invalid_value").clone();
    assert_eq!(body["problems"].as_array().unwrap().len(), 100);
    assert_eq!(body["more"], json!(40));
    assert_eq!(body["problems"][0]["card"], json!("card 0"));
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .starts_with("nothing was imported: 140 things"),
        "{body}"
    );

    let r = api
        .post_text("/import?from=trello&lenient=true", &file)
        .await;
    let reply = r.expect_ok(201).clone();
    assert_eq!(reply["skipped"].as_array().unwrap().len(), 100);
    assert_eq!(reply["moreSkipped"], json!(40));
    assert_eq!(reply["tasks"], json!(1), "what fits still lands");
}

#[tokio::test]
async fn a_checklist_named_by_many_cards_gives_each_the_limit_and_is_one_problem() {
    let s = Server::start().await;
    let api = s.api();
    let items: Vec<Value> = (0..300)
        .map(|i| json!({"name": format!("item {i}"), "state": "incomplete", "pos": i}))
        .collect();
    let cards: Vec<Value> = (0..50)
        .map(|i| {
            json!({"id": format!("c{i}"), "name": format!("card {i}"), "idList": "l1",
            "idChecklists": ["shared"]})
        })
        .collect();
    let mut file: Value = serde_json::from_str(&built_board(cards)).unwrap();
    file["checklists"] = json!([{"id": "shared", "name": "Shared", "checkItems": items}]);
    let file = file.to_string();

    let r = api.post_text("/import?from=trello", &file).await;
    let body = r.expect_code(422, "invalid_value").clone();
    assert_eq!(body["problems"].as_array().unwrap().len(), 1, "{body}");
    assert_eq!(body["more"], json!(0));
    assert!(
        body["problems"][0]["message"]
            .as_str()
            .unwrap()
            .contains("49 other cards name the same checklists"),
        "{body}"
    );

    let r = api
        .post_text("/import?from=trello&lenient=true", &file)
        .await;
    let reply = r.expect_ok(201).clone();
    assert_eq!(reply["skipped"].as_array().unwrap().len(), 1);
    let project = api.project(&str_of(&reply["projectIds"][0])).await;
    let tasks = tasks_of(&project);
    assert_eq!(tasks.len(), 50);
    for t in &tasks {
        assert_eq!(
            t["checklist"].as_array().unwrap().len(),
            100,
            "{}",
            t["title"]
        );
    }
}
