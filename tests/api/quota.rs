//! The storage limit holds for every write (issue 32; contract, round 3: "a command may pass
//! the storage limit only when its net growth is zero or less"). Each path that grows an
//! account is tried at the limit: creates (single, batch, landing deleted), PATCH of every
//! prose field (with `cancelledAt` too), checklist, tags, comments, photo, imports of both
//! formats over HTTP and the CLI. Each answers 413 `storage-bytes` and writes nothing, with
//! `/usage` where it was. Deletes still work at the limit, restores and undo follow the rule,
//! and a purge brings the account back under it.

use reqwest::Method;
use serde_json::{Value, json};

use crate::harness::*;

const LIMIT: i64 = 30_000;
const TRELLO_BOARD: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/trello/board.json");

/// A server whose accounts hold `LIMIT` bytes, a fresh account on it and its key.
async fn small_server() -> (Server, Api, String) {
    let limit = LIMIT.to_string();
    let s = Server::start_with(&["--limit-storage-bytes", &limit]).await;
    let (key, account) = s.issue_key(None).await;
    let api = s.api_for(&key);
    (s, api, account)
}

/// `used` of `GET /usage`, after checking its `limit`.
async fn used(api: &Api) -> i64 {
    let r = api.get("/usage").await;
    let body = r.expect_ok(200);
    assert_eq!(body["limit"], json!(LIMIT), "{}", r.text);
    body["used"].as_i64().expect("used")
}

/// Asserts the 413 of a full account: `{ok:false, error, code, limit:"storage-bytes"}`.
#[track_caller]
fn expect_full(r: &Reply) {
    let body = r.expect_code(413, "storage_full");
    assert_keys(body, &["ok", "error", "code", "limit"]);
    assert_eq!(
        body["limit"],
        json!("storage-bytes"),
        "{}: {}",
        r.what,
        r.text
    );
}

/// Grows card `tid`'s description until the account holds exactly `LIMIT` bytes.
async fn fill(api: &Api, tid: &str) {
    crate::storage::fill_to(api, tid, LIMIT).await;
}

/// Shrinks card `tid`'s description by `n` characters: `n` bytes of room.
async fn make_room(api: &Api, tid: &str, n: usize) {
    let desc = str_of(&api.task(tid).await["description"]);
    api.patch(
        &format!("/tasks/{tid}"),
        json!({ "description": desc[..desc.len() - n] }),
    )
    .await
    .expect_ok(200);
}

/// Everything a refused write must leave as it was: the account, its bin, its usage.
async fn state(api: &Api) -> (Value, Value, i64) {
    let bin = api.get("/bin").await.expect_ok(200)["entries"].clone();
    (api.account().await, bin, used(api).await)
}

/// A Workboard export file of one new project with one column holding `cards`.
fn export_file(cards: Vec<Value>) -> Value {
    let cards: Vec<Value> = cards
        .into_iter()
        .map(|mut c| {
            c["columnId"] = json!("c_importedColumn");
            c
        })
        .collect();
    json!({
        "version": 1,
        "now": now_ms(),
        "projects": [{
            "id": "b_importedProject",
            "name": "Imported",
            "columns": [{ "id": "c_importedColumn", "name": "Column", "tasks": cards }],
        }],
    })
}

#[tokio::test]
async fn every_growing_write_at_the_limit_is_413_and_writes_nothing() {
    let (_s, api, _) = small_server().await;
    let (pid, cid) = api.board().await;
    let small = str_of(
        &api.create_task(json!({
            "columnId": cid, "title": "Small", "tags": ["one"],
            "checklist": [{ "text": "item" }], "comments": [{ "text": "note" }],
        }))
        .await["id"],
    );
    let kid = str_of(&api.task(&small).await["checklist"][0]["id"]);
    let filler = str_of(&api.new_task(&cid, "Filler").await["id"]);
    fill(&api, &filler).await;
    let before = state(&api).await;

    let t = |rest: &str| format!("/tasks/{small}{rest}");
    let png = format!("data:image/png;base64,{PNG_B64}");
    let refused = [
        // Creates.
        api.post("/projects", json!({ "name": "P" })).await,
        api.post("/projects", json!({ "name": "P", "columns": ["A", "B"] }))
            .await,
        api.post("/columns", json!({ "projectId": pid, "name": "C" }))
            .await,
        api.post("/tasks", json!({ "columnId": cid, "title": "T" }))
            .await,
        api.post(
            "/tasks",
            json!({ "tasks": [{ "columnId": cid, "title": "B" }] }),
        )
        .await,
        // Landing deleted is still growth: the bin counts toward storage.
        api.post(
            "/tasks",
            json!({ "columnId": cid, "title": "Deleted", "cancelledAt": now_ms() }),
        )
        .await,
        api.post(
            "/tasks",
            json!({ "tasks": [
                { "columnId": cid, "title": "Live" },
                { "columnId": cid, "title": "Deleted", "cancelledAt": now_ms() },
            ] }),
        )
        .await,
        // Every prose field.
        api.patch(&t(""), json!({ "title": "Small but longer" }))
            .await,
        api.patch(&t(""), json!({ "description": "grown" })).await,
        api.patch(&t(""), json!({ "location": "Somewhere" })).await,
        api.patch(
            &t(""),
            json!({ "description": "grown", "cancelledAt": now_ms() }),
        )
        .await,
        api.patch(
            &format!("/columns/{cid}"),
            json!({ "name": "A longer column name" }),
        )
        .await,
        api.patch(
            &format!("/columns/{cid}"),
            json!({ "description": "about" }),
        )
        .await,
        api.patch(
            &format!("/projects/{pid}"),
            json!({ "name": "A longer project name" }),
        )
        .await,
        api.patch(&format!("/projects/{pid}"), json!({ "folder": "Work" }))
            .await,
        api.patch(&format!("/projects/{pid}"), json!({ "photo": png }))
            .await,
        // Tags, comments, checklist.
        api.post(&t("/tags"), json!({ "text": "two" })).await,
        api.patch(&t(""), json!({ "tags": ["one", "two"] })).await,
        api.post(&t("/comments"), json!({ "text": "more" })).await,
        api.post(&t("/checklist"), json!({ "text": "more" })).await,
        api.post(&t("/checklist"), json!({ "items": [{ "text": "more" }] }))
            .await,
        api.patch(
            &format!("/checklist/{kid}"),
            json!({ "text": "a longer item" }),
        )
        .await,
        // Imports, both formats.
        api.post_text(
            "/import",
            &export_file(vec![json!({ "title": "I" })]).to_string(),
        )
        .await,
        api.post_text(
            "/import",
            &export_file(vec![json!({ "title": "I", "cancelledAt": now_ms() })]).to_string(),
        )
        .await,
        api.post_text(
            "/import?from=trello",
            &std::fs::read_to_string(TRELLO_BOARD).expect("the Trello fixture"),
        )
        .await,
    ];
    for r in &refused {
        expect_full(r);
    }
    assert_eq!(state(&api).await, before, "a 413 wrote something");
}

#[tokio::test]
async fn the_cli_import_of_either_format_is_refused_whole_at_the_limit() {
    let (s, api, account) = small_server().await;
    let (_, cid) = api.board().await;
    let filler = str_of(&api.new_task(&cid, "Filler").await["id"]);
    fill(&api, &filler).await;
    let before = state(&api).await;

    let file = s.root().join("deleted-card.json");
    let doc = export_file(vec![
        json!({ "title": "Live" }),
        json!({ "title": "Deleted", "cancelledAt": now_ms() }),
    ]);
    std::fs::write(&file, doc.to_string()).unwrap();
    let limit = LIMIT.to_string();
    for args in [
        vec![file.to_str().unwrap()],
        vec![TRELLO_BOARD, "--from", "trello"],
    ] {
        let mut all = vec!["import"];
        all.extend(args);
        all.extend(["--account", &account, "--limit-storage-bytes", &limit]);
        let out = s.cli(&all).await;
        assert!(
            !out.status.success(),
            "imported at the limit: {}",
            out.stdout
        );
        assert!(
            out.stderr.to_lowercase().contains("storage"),
            "the refusal names the storage limit: {}",
            out.stderr
        );
    }
    assert_eq!(
        state(&api).await,
        before,
        "a refused import wrote something"
    );
}

#[tokio::test]
async fn an_import_or_a_batch_larger_than_the_room_left_is_refused_whole() {
    let (_s, api, _) = small_server().await;
    let (_, cid) = api.board().await;
    let filler = str_of(&api.new_task(&cid, "Filler").await["id"]);
    let retried = json!({ "tasks": [{ "id": "t_sentTwice", "columnId": cid, "title": "Again", "position": 5 }] });
    api.post("/tasks", retried.clone()).await.expect_ok(201);
    fill(&api, &filler).await;
    make_room(&api, &filler, 3_000).await;
    let before = state(&api).await;

    // Each holds one card deleted on arrival: once, that let the whole request through.
    let big = || "x".repeat(5_000);
    let cards = vec![
        json!({ "title": "Live" }),
        json!({ "title": "Deleted", "description": big(), "cancelledAt": now_ms() }),
    ];
    expect_full(
        &api.post_text("/import", &export_file(cards).to_string())
            .await,
    );
    expect_full(
        &api.post(
            "/tasks",
            json!({ "tasks": [
                { "columnId": cid, "title": "Live" },
                { "columnId": cid, "title": "Deleted", "description": big(), "cancelledAt": now_ms() },
            ] }),
        )
        .await,
    );
    expect_full(
        &api.post(
            "/tasks",
            json!({ "columnId": cid, "title": "Deleted", "description": big(), "cancelledAt": now_ms() }),
        )
        .await,
    );
    assert_eq!(state(&api).await, before, "a refused write wrote something");

    // What fits is taken: the room is there.
    let fits = export_file(vec![
        json!({ "title": "Fits", "description": "y".repeat(1_000) }),
    ]);
    api.post_text("/import", &fits.to_string())
        .await
        .expect_ok(201);
    assert!(used(&api).await <= LIMIT);
    // The account's own export, at the limit: every create is a retry that adds nothing,
    // so the early refusal must not turn it away.
    fill(&api, &filler).await;
    let before = state(&api).await;
    let export = api.get("/export").await.text;
    api.post_text("/import", &export).await.expect_ok(201);
    let r = api.post("/tasks", retried).await;
    assert_eq!(r.expect_ok(201)["created"], json!(0), "{}", r.text);
    assert_eq!(
        state(&api).await,
        before,
        "a retried import changed the account"
    );
}

#[tokio::test]
async fn deletes_work_at_the_limit_and_a_purge_brings_the_account_back_under_it() {
    let (_s, api, _) = small_server().await;
    let (pid, cid) = api.board().await;
    let (p2, c2) = api.board().await;
    let mut cards = Vec::new();
    for i in 0..3 {
        cards.push(str_of(
            &api.new_task(&cid, &format!("Card {i}")).await["id"],
        ));
    }
    api.new_task(&c2, "In the other project").await;
    let doomed_column = api.new_column(&pid, "Doomed").await;
    api.new_task(&doomed_column, "In the doomed column").await;
    let filler = str_of(&api.new_task(&cid, "Filler").await["id"]);
    fill(&api, &filler).await;

    api.delete(&format!("/tasks/{}", cards[0]))
        .await
        .expect_ok(200);
    api.patch(
        &format!("/tasks/{}", cards[1]),
        json!({ "cancelledAt": now_ms() }),
    )
    .await
    .expect_ok(200);
    api.delete(&format!("/columns/{doomed_column}"))
        .await
        .expect_ok(200);
    api.delete(&format!("/projects/{p2}")).await.expect_ok(200);
    // Only the deletion stamps grew the account: a few bytes for each record deleted.
    let after_deletes = used(&api).await;
    assert!(
        after_deletes <= LIMIT + 100,
        "deletes added more than their stamps: {after_deletes}"
    );
    expect_full(
        &api.patch(
            &format!("/tasks/{}", cards[2]),
            json!({ "title": "Grown much longer" }),
        )
        .await,
    );
    // Nor does a card that lands deleted: a delete's room is its own.
    expect_full(
        &api.post(
            "/tasks",
            json!({ "columnId": cid, "title": "Deleted", "cancelledAt": now_ms() }),
        )
        .await,
    );
    assert_eq!(used(&api).await, after_deletes);

    let r = api.send(Method::POST, "/purge", None).await;
    let freed = r.expect_ok(200)["freed"].as_i64().expect("freed");
    let now = used(&api).await;
    assert_eq!(now, after_deletes - freed, "freed is what used dropped by");
    assert!(
        now < LIMIT,
        "a purge leaves the account under its limit: {now}"
    );
    api.patch(
        &format!("/tasks/{}", cards[2]),
        json!({ "title": "Grown much longer" }),
    )
    .await
    .expect_ok(200);

    // `used` stayed exact through every refusal: with everything deleted and purged, it is 0.
    api.delete(&format!("/projects/{pid}")).await.expect_ok(200);
    api.send(Method::POST, "/purge", None).await.expect_ok(200);
    assert_eq!(used(&api).await, 0, "the count drifted from the records");
}

#[tokio::test]
async fn restores_shrink_a_full_account_and_carry_no_growth_past_its_limit() {
    let (_s, api, _) = small_server().await;
    let (_, cid) = api.board().await;
    let card = str_of(
        &api.create_task(
            json!({ "columnId": cid, "title": "Kept", "description": "k".repeat(2_000) }),
        )
        .await["id"],
    );
    let filler = str_of(&api.new_task(&cid, "Filler").await["id"]);
    fill(&api, &filler).await;
    make_room(&api, &filler, 1_500).await;
    // Created in the bin, then restored: with room for one such card, the second is
    // refused (once, cards created deleted and restored grew an account without bound).
    for round in 0..2 {
        let r = api
            .post(
                "/tasks",
                json!({ "columnId": cid, "title": "Ghost", "description": "g".repeat(1_000),
                    "cancelledAt": now_ms() }),
            )
            .await;
        if round == 1 {
            expect_full(&r);
            break;
        }
        let id = str_of(&r.expect_ok(201)["task"]["id"]);
        api.patch(&format!("/tasks/{id}"), json!({ "cancelledAt": null }))
            .await
            .expect_ok(200);
    }
    fill(&api, &filler).await;

    // Three ways back from the bin: the bin's restore, `cancelledAt: null`, undo.
    for way in ["bin", "patch", "undo"] {
        api.delete(&format!("/tasks/{card}")).await.expect_ok(200);
        let deleted = used(&api).await;
        let r = match way {
            "bin" => {
                let entries = api.get("/bin").await.expect_ok(200)["entries"].clone();
                let entry = str_of(&entries[0]["id"]);
                api.send(Method::POST, &format!("/bin/{entry}/restore"), None)
                    .await
            }
            "patch" => {
                api.patch(&format!("/tasks/{card}"), json!({ "cancelledAt": null }))
                    .await
            }
            _ => api.send(Method::POST, "/undo", None).await,
        };
        r.expect_ok(200);
        assert_eq!(api.task(&card).await["cancelledAt"], json!(null), "{way}");
        // Taking the deletion stamp off shrinks the card; what the delete's new revision
        // added stays, a digit at most.
        let restored = used(&api).await;
        assert!(
            restored < deleted && restored <= LIMIT + 2,
            "a restore ({way}) grew the account: {deleted} → {restored}"
        );
    }
}

#[tokio::test]
async fn an_undo_that_would_grow_a_full_account_is_413_and_stays_undoable() {
    let (s, api, account) = small_server().await;
    let (key, _) = s.issue_key(Some(&account)).await;
    let other = s.api_for(&key);
    let (_, cid) = api.board().await;
    let card = str_of(&api.new_task(&cid, "A card with a long title").await["id"]);
    let filler = str_of(&api.new_task(&cid, "Filler").await["id"]);
    api.patch(&format!("/tasks/{card}"), json!({ "title": "A" }))
        .await
        .expect_ok(200);
    // Another key fills the account, so this key's latest step is the shrink.
    fill(&other, &filler).await;
    let before = state(&api).await;
    // Growing a card while deleting it is growth all the same (restored after, it was once
    // a live card past the limit).
    expect_full(
        &api.patch(
            &format!("/tasks/{card}"),
            json!({ "title": "A card with a long title", "cancelledAt": now_ms() }),
        )
        .await,
    );
    expect_full(&api.send(Method::POST, "/undo", None).await);
    assert_eq!(state(&api).await, before, "a refused undo wrote something");

    make_room(&other, &filler, 100).await;
    api.send(Method::POST, "/undo", None).await.expect_ok(200);
    assert_eq!(
        api.task(&card).await["title"],
        json!("A card with a long title"),
        "the step was kept for when there is room"
    );
}

#[tokio::test]
async fn an_account_already_over_its_limit_takes_no_growth_and_still_shrinks() {
    let limit = LIMIT.to_string();
    let mut s = Server::start_with(&["--limit-storage-bytes", &limit]).await;
    let (key, _) = s.issue_key(None).await;
    let api = s.api_for(&key);
    let (_, cid) = api.board().await;
    let doomed = str_of(&api.new_task(&cid, "Doomed").await["id"]);
    let card = str_of(&api.new_task(&cid, "A card with a long title").await["id"]);
    let filler = str_of(&api.new_task(&cid, "Filler").await["id"]);
    fill(&api, &filler).await;
    api.delete(&format!("/tasks/{doomed}")).await.expect_ok(200);

    // The same store served with a lower limit: the account is over it, as one that grew
    // past it before the rule held would be.
    s.kill().await;
    let root = tempfile::Builder::new()
        .prefix("workboard-test-")
        .tempdir()
        .expect("temp dir");
    let copied = std::process::Command::new("cp")
        .arg("-a")
        .arg(s.root().join("."))
        .arg(root.path())
        .status()
        .expect("cp");
    assert!(copied.success());
    let lower = LIMIT / 2;
    let (s, _) = Server::start_on(root, &["--limit-storage-bytes", &lower.to_string()]).await;
    let api = s.api_for(&key);
    let usage = || async {
        let r = api.get("/usage").await;
        let body = r.expect_ok(200).clone();
        assert_eq!(body["limit"], json!(lower), "{}", r.text);
        body["used"].as_i64().expect("used")
    };
    let over = usage().await;
    assert!(over > lower);

    for r in [
        api.patch(
            &format!("/tasks/{card}"),
            json!({ "title": "A card with a longer title" }),
        )
        .await,
        api.post("/tasks", json!({ "columnId": cid, "title": "New" }))
            .await,
        api.post(
            "/tasks",
            json!({ "columnId": cid, "title": "New", "cancelledAt": now_ms() }),
        )
        .await,
    ] {
        expect_full(&r);
    }
    assert_eq!(usage().await, over, "a refused write moved used");

    // A restore takes its deletion stamp off: it shrinks, so it is taken.
    api.patch(&format!("/tasks/{doomed}"), json!({ "cancelledAt": null }))
        .await
        .expect_ok(200);
    let restored = usage().await;
    assert!(restored < over, "{over} → {restored}");
    api.patch(&format!("/tasks/{card}"), json!({ "title": "A" }))
        .await
        .expect_ok(200);
    api.delete(&format!("/tasks/{card}")).await.expect_ok(200);
    make_room(&api, &filler, (restored - lower) as usize + 1_000).await;
    assert!(usage().await < lower);
    api.post("/tasks", json!({ "columnId": cid, "title": "New" }))
        .await
        .expect_ok(201);
}
