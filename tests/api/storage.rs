//! Storage (issue 4): an account's stored bytes grow with writes, count deleted records until
//! they are destroyed, shrink when the bin window pushes an entry out, on purge and when a
//! create is undone; over the limit a growing write is 413 and writes nothing, while reads,
//! deletes, purge and shrinking writes still work.

use reqwest::Method;
use serde_json::{Value, json};

use crate::harness::*;

/// (`used`, `purgeable`) of `GET /usage`.
async fn usage(api: &Api) -> (i64, i64) {
    let r = api.get("/usage").await;
    let b = r.expect_ok(200);
    (
        b["used"].as_i64().expect("used"),
        b["purgeable"].as_i64().expect("purgeable"),
    )
}

async fn purge(api: &Api) -> Reply {
    api.send(Method::POST, "/purge", None).await
}

/// Asserts the 413 of a full account.
#[track_caller]
fn expect_full(r: &Reply) {
    let body = r.expect_error(413);
    assert_keys(body, &["ok", "error", "code", "limit"]);
    assert_eq!(
        body["limit"],
        json!("storage-bytes"),
        "{}: {}",
        r.what,
        r.text
    );
}

/// Grows task `tid`'s description until the account holds exactly `limit` bytes.
pub(crate) async fn fill_to(api: &Api, tid: &str, limit: i64) {
    let mut back = 0;
    for _ in 0..40 {
        let (used, _) = usage(api).await;
        if used == limit {
            return;
        }
        assert!(used < limit, "used {used} over the limit {limit}");
        let gap = (limit - used - back).max(1);
        let desc = api.task(tid).await["description"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let r = api
            .patch(
                &format!("/tasks/{tid}"),
                json!({ "description": desc + &"x".repeat(gap as usize) }),
            )
            .await;
        match r.status {
            200 => back = 0,
            413 => back += 1,
            _ => panic!("filling: {} {}", r.status, r.text),
        }
    }
    panic!("could not fill the account to exactly {limit} bytes");
}

async fn task_with(api: &Api, cid: &str, title: &str, description: usize) -> String {
    let body = json!({ "columnId": cid, "title": title, "description": "d".repeat(description) });
    str_of(&api.create_task(body).await["id"])
}

#[tokio::test]
async fn used_follows_writes_and_deleted_records_count_until_purged() {
    let s = Server::start().await;
    let api = s.api();
    let (u0, p0) = usage(&api).await;
    assert_eq!(p0, 0);
    let (pid, cid) = api.board().await;
    let (u1, _) = usage(&api).await;
    assert!(u1 > u0, "a project and a column take space: {u0} → {u1}");

    let tid = task_with(&api, &cid, "Long", 10_000).await;
    let (u2, _) = usage(&api).await;
    assert!(
        u2 >= u1 + 10_000,
        "a 10,000-character description: {u1} → {u2}"
    );
    api.patch(&format!("/tasks/{tid}"), json!({ "description": "short" }))
        .await
        .expect_ok(200);
    let (u3, _) = usage(&api).await;
    assert!(
        (9_990..=10_000).contains(&(u2 - u3)),
        "shrinking by 9,995 characters: {u2} → {u3}"
    );
    api.patch(
        &format!("/tasks/{tid}"),
        json!({ "description": "d".repeat(10_000) }),
    )
    .await
    .expect_ok(200);
    let (u4, _) = usage(&api).await;
    assert!((u4 - u2).abs() <= 10, "{u2} vs {u4}");

    // Deleted, not destroyed: the bytes still count, and purgeable shows them.
    let c2 = api.new_column(&pid, "Doomed").await;
    task_with(&api, &c2, "In doomed", 5_000).await;
    let (u5, _) = usage(&api).await;
    api.delete(&format!("/tasks/{tid}")).await.expect_ok(200);
    api.delete(&format!("/columns/{c2}")).await.expect_ok(200);
    let (u6, p6) = usage(&api).await;
    assert!(
        (u6 - u5).abs() <= 60,
        "a delete changed the stored bytes: {u5} → {u6}"
    );
    assert!(p6 >= 15_000 && p6 <= u6, "purgeable {p6} of {u6}");

    let r = purge(&api).await;
    let body = r.expect_ok(200).clone();
    assert_keys(&body, &["ok", "purged", "freed"]);
    assert_eq!(body["purged"], json!(2), "{}", r.text);
    let freed = body["freed"].as_i64().expect("freed");
    let (u7, p7) = usage(&api).await;
    assert_eq!(freed, u6 - u7, "freed is the drop in used");
    assert_eq!(p7, 0);
    assert!(
        freed >= 15_000 && freed == p6,
        "freed {freed}, purgeable was {p6}"
    );
    assert!(
        (u7 - u1).abs() <= 20,
        "after the purge only the board is left: {u1} vs {u7}"
    );
}

#[tokio::test]
async fn a_deleted_project_counts_with_everything_under_it_until_purged() {
    let s = Server::start().await;
    let api = s.api();
    api.new_project("Kept").await;
    let (u0, _) = usage(&api).await;
    let (pid, cid) = api.board().await;
    task_with(&api, &cid, "Inside", 5_000).await;
    let (u1, _) = usage(&api).await;
    api.delete(&format!("/projects/{pid}")).await.expect_ok(200);
    let (u2, p2) = usage(&api).await;
    assert!((u2 - u1).abs() <= 60, "{u1} → {u2}");
    assert!(
        p2 >= u1 - u0 - 60,
        "purgeable {p2} < the project's bytes {}",
        u1 - u0
    );

    let r = purge(&api).await;
    let freed = r.expect_ok(200)["freed"].as_i64().expect("freed");
    let (u3, p3) = usage(&api).await;
    assert_eq!(freed, u2 - u3);
    assert_eq!(p3, 0);
    assert!(
        (u3 - u0).abs() <= 20,
        "the project, its column and card are destroyed: {u0} vs {u3}"
    );
}

#[tokio::test]
async fn undoing_a_create_frees_its_bytes() {
    let s = Server::start().await;
    let api = s.api();
    let (_, cid) = api.board().await;
    let (u0, _) = usage(&api).await;
    task_with(&api, &cid, "Undone", 3_000).await;
    let (u1, _) = usage(&api).await;
    assert!(u1 >= u0 + 3_000);
    api.send(Method::POST, "/undo", None).await.expect_ok(200);
    let (u2, p2) = usage(&api).await;
    assert!(
        (u2 - u0).abs() <= 20,
        "undoing the create freed {} of {}",
        u1 - u2,
        u1 - u0
    );
    assert_eq!(p2, 0, "an undone create is not in the bin");
}

#[tokio::test]
async fn a_full_account_refuses_growing_writes_with_413_and_writes_nothing() {
    let s = Server::start_with(&["--limit-storage-bytes", "4000"]).await;
    let api = s.api();
    let r = api.get("/usage").await;
    assert_eq!(r.expect_ok(200)["limit"], json!(4000));
    let doc = api.raw().get("/api/v1").await;
    assert_eq!(doc.expect(200)["limits"]["storage-bytes"], json!(4000));
    let (pid, cid) = api.board().await;
    let small = str_of(&api.new_task(&cid, "Small").await["id"]);
    let filler = str_of(&api.new_task(&cid, "Filler").await["id"]);
    fill_to(&api, &filler, 4000).await;

    let before = api.account().await;
    let item = |what: &str| format!("/tasks/{small}/{what}");
    let refused = [
        api.post("/projects", json!({ "name": "P" })).await,
        api.post("/columns", json!({ "projectId": pid, "name": "C" }))
            .await,
        api.post("/tasks", json!({ "columnId": cid, "title": "T" }))
            .await,
        api.post(
            "/tasks",
            json!({ "tasks": [{ "columnId": cid, "title": "B" }] }),
        )
        .await,
        api.patch(
            &format!("/tasks/{small}"),
            json!({ "title": "Small but longer now" }),
        )
        .await,
        api.patch(
            &format!("/tasks/{filler}"),
            json!({ "location": "Somewhere" }),
        )
        .await,
        api.post(&item("tags"), json!({ "text": "t" })).await,
        api.post(&item("comments"), json!({ "text": "c" })).await,
        api.post(&item("checklist"), json!({ "text": "k" })).await,
    ];
    for r in &refused {
        expect_full(r);
    }
    assert_eq!(api.account().await, before, "a 413 wrote something");
    assert_eq!(usage(&api).await, (4000, 0));

    // Reads still work, and keys take no storage.
    api.get("/projects").await.expect(200);
    for path in ["/bin", "/keys", "/usage"] {
        api.get(path).await.expect_ok(200);
    }
    api.get(&format!("/tasks/{small}")).await.expect_ok(200);
    api.post("/keys", json!({ "label": "spare" }))
        .await
        .expect_ok(201);
}

#[tokio::test]
async fn a_full_account_still_deletes_and_after_a_purge_grows_again() {
    let s = Server::start_with(&["--limit-storage-bytes", "4000"]).await;
    let api = s.api();
    let (_, cid) = api.board().await;
    let doomed = str_of(&api.new_task(&cid, "Doomed").await["id"]);
    let filler = str_of(&api.new_task(&cid, "Filler").await["id"]);
    fill_to(&api, &filler, 4000).await;

    api.delete(&format!("/tasks/{doomed}")).await.expect_ok(200);
    let (u1, p1) = usage(&api).await;
    assert!(p1 > 0, "the deleted card is purgeable");
    // Deleted bytes still count: still no room.
    expect_full(
        &api.post("/tasks", json!({ "columnId": cid, "title": "New card" }))
            .await,
    );

    let r = purge(&api).await;
    let freed = r.expect_ok(200)["freed"].as_i64().expect("freed");
    let (u2, p2) = usage(&api).await;
    assert_eq!((freed, p2), (u1 - u2, 0));
    assert_eq!(freed, p1);
    // A card no bigger than the one destroyed fits again ("New" is shorter than "Doomed",
    // which leaves room for the revision's extra digit).
    api.post("/tasks", json!({ "columnId": cid, "title": "New" }))
        .await
        .expect_ok(201);
}

#[tokio::test]
async fn a_full_account_takes_shrinking_writes() {
    let s = Server::start_with(&["--limit-storage-bytes", "4000"]).await;
    let api = s.api();
    let (_, cid) = api.board().await;
    let small = str_of(&api.new_task(&cid, "A card with a long title").await["id"]);
    let filler = str_of(&api.new_task(&cid, "Filler").await["id"]);
    fill_to(&api, &filler, 4000).await;

    let r = api
        .patch(&format!("/tasks/{small}"), json!({ "title": "A" }))
        .await;
    assert_eq!(r.expect_ok(200)["task"]["title"], json!("A"));
    let (u1, _) = usage(&api).await;
    assert!(u1 < 4000, "a shorter title must shrink the account: {u1}");

    let r = api
        .patch(
            &format!("/tasks/{filler}"),
            json!({ "description": "short" }),
        )
        .await;
    assert_eq!(r.expect_ok(200)["task"]["description"], json!("short"));
    let (u2, _) = usage(&api).await;
    assert!(u1 - u2 > 2_000, "{u1} → {u2}");
    api.post("/tasks", json!({ "columnId": cid, "title": "Room again" }))
        .await
        .expect_ok(201);
}

#[tokio::test]
async fn the_21st_deletion_destroys_the_oldest_entry_and_frees_its_space() {
    let s = Server::start_with(&["--limit-storage-bytes", "40000"]).await;
    let api = s.api();
    let (_, cid) = api.board().await;
    let big = task_with(&api, &cid, "Big", 15_000).await;
    let mut small = Vec::new();
    for i in 1..=20 {
        small.push(str_of(&api.new_task(&cid, &format!("S{i}")).await["id"]));
    }
    api.delete(&format!("/tasks/{big}")).await.expect_ok(200);
    for id in &small[..19] {
        api.delete(&format!("/tasks/{id}")).await.expect_ok(200);
    }
    let bin = |r: Reply| -> Vec<Value> {
        r.expect_ok(200)["entries"]
            .as_array()
            .expect("entries")
            .clone()
    };
    assert_eq!(bin(api.get("/bin").await).len(), 20);
    let filler = str_of(&api.new_task(&cid, "Filler").await["id"]);
    fill_to(&api, &filler, 40_000).await;
    let (u1, p1) = usage(&api).await;
    assert!(p1 >= 15_000);
    let grow = json!({ "columnId": cid, "title": "Grow", "description": "g".repeat(1_000) });
    expect_full(&api.post("/tasks", grow.clone()).await);

    // The 21st deletion pushes the big card out of the window: destroyed, space freed at once.
    api.delete(&format!("/tasks/{}", small[19]))
        .await
        .expect_ok(200);
    let (u2, p2) = usage(&api).await;
    assert!(
        u1 - u2 >= 14_900,
        "the oldest entry's space was not freed: {u1} → {u2}"
    );
    assert!(
        p1 - p2 >= 14_900,
        "purgeable still holds the destroyed entry: {p1} → {p2}"
    );
    let entries = bin(api.get("/bin").await);
    assert_eq!(entries.len(), 20);
    assert!(entries.iter().all(|e| e["label"] != json!("Big")));
    api.post("/tasks", grow).await.expect_ok(201);
}
