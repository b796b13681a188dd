//! Authentication: 403 HTML without a header, 401 JSON for a bad key, the bad-key throttle,
//! and 404 for another account's records.

use serde_json::json;

use crate::harness::*;

#[tokio::test]
async fn no_authorization_header_is_403_with_an_html_body() {
    let s = Server::start().await;
    let anon = s.anon();
    let (pid, cid) = s.api().board().await;
    let tid = str_of(&s.api().new_task(&cid, "T").await["id"]);
    let before = s.api().account().await;

    let replies = vec![
        anon.get("/projects").await,
        anon.get(&format!("/projects/{pid}")).await,
        anon.get(&format!("/tasks/{tid}")).await,
        anon.unversioned().get("/projects").await,
        anon.post("/projects", json!({ "name": "Sneaky" })).await,
        anon.post("/columns", json!({ "projectId": pid, "name": "Sneaky" }))
            .await,
        anon.post("/tasks", json!({ "columnId": cid, "title": "Sneaky" }))
            .await,
        anon.patch(&format!("/tasks/{tid}"), json!({ "title": "Sneaky" }))
            .await,
        anon.patch(&format!("/projects/{pid}"), json!({ "name": "Sneaky" }))
            .await,
        anon.delete(&format!("/columns/{cid}")).await,
        anon.delete(&format!("/projects/{pid}")).await,
    ];
    for r in replies {
        assert_eq!(r.status, 403, "{}: {}", r.what, r.text);
        assert!(
            r.content_type().starts_with("text/html"),
            "{}: {}",
            r.what,
            r.content_type()
        );
        assert!(r.text.contains('<'), "{}: not HTML: {}", r.what, r.text);
        assert!(
            r.body.get("ok").is_none(),
            "{}: 403 must not be the JSON envelope",
            r.what
        );
    }
    assert_eq!(
        s.api().account().await,
        before,
        "a refused request changed something"
    );
}

#[tokio::test]
async fn a_bad_authorization_header_is_401_json() {
    let s = Server::start().await;
    let pid = s.api().new_project("Mine").await;
    let key = s.key.clone();
    let headers = [
        "Basic x".to_string(),
        "Bearer nonsense".to_string(),
        format!("Bearer wb_{}", "A".repeat(43)),
        "Bearer ".to_string(),
        "Bearer".to_string(),
        key.clone(),
        format!("Bearer {key}x"),
        format!("Bearer {}", &key[..key.len() - 1]),
        format!("Token {key}"),
    ];
    for header in &headers {
        let api = s.with_header(header);
        let r = api.get("/projects").await;
        assert_eq!(r.status, 401, "header {header:?}: {}", r.text);
        r.expect_error(401);
        api.get(&format!("/projects/{pid}")).await.expect_error(401);
        api.post("/projects", json!({ "name": "Nope" }))
            .await
            .expect_error(401);
    }
    let projects = s.api().projects("").await;
    assert_eq!(projects.len(), 1, "a 401 request wrote something");
    assert!(
        key.starts_with("wb_") && key.len() >= 46,
        "key format: {key}"
    );
    assert!(
        key[3..]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'),
        "key is not URL-safe: {key}"
    );
}

#[tokio::test]
async fn the_printed_key_reaches_its_account() {
    let s = Server::start().await;
    let r = s.api().get("/projects").await;
    let doc = r.expect(200);
    assert_eq!(doc["version"], json!(1));
    assert_eq!(doc["projects"], json!([]));
}

/// Sends `n` requests with unknown keys and returns their statuses.
async fn bad_key_requests(s: &Server, n: usize) -> Vec<u16> {
    let mut statuses = Vec::new();
    for i in 0..n {
        let header = match i % 3 {
            0 => format!("Bearer wb_{}", "Z".repeat(43)),
            1 => "Basic x".to_string(),
            _ => "Bearer nonsense".to_string(),
        };
        statuses.push(s.with_header(&header).get("/projects").await.status);
    }
    statuses
}

#[tokio::test]
async fn after_50_bad_keys_an_address_gets_429_but_valid_keys_still_work() {
    let s = Server::start().await;
    let pid = s.api().new_project("Still mine").await;
    assert_eq!(bad_key_requests(&s, 50).await, vec![401; 50]);

    let r = s
        .with_header(&format!("Bearer wb_{}", "Q".repeat(43)))
        .get("/projects")
        .await;
    r.expect_error(429);
    assert!(
        r.header("retry-after").is_some(),
        "429 without Retry-After: {:?}",
        r.headers
    );
    s.with_header("Basic y")
        .get("/tasks/t_x")
        .await
        .expect_error(429);

    for _ in 0..5 {
        assert_eq!(s.api().project(&pid).await["name"], json!("Still mine"));
    }
    s.api()
        .post("/projects", json!({ "name": "More" }))
        .await
        .expect_ok(201);
}

#[tokio::test]
async fn a_lowered_bad_key_burst_throttles_sooner() {
    let s = Server::start_with(&["--limit-bad-key-burst", "5"]).await;
    assert_eq!(
        bad_key_requests(&s, 6).await,
        vec![401, 401, 401, 401, 401, 429]
    );
    s.api().get("/projects").await.expect(200);
}

#[tokio::test]
async fn another_accounts_records_answer_404_and_stay_untouched() {
    let s = Server::start().await;
    let mine = s.api();
    let (pid, cid) = mine.board().await;
    let tid = str_of(&mine.new_task(&cid, "Private").await["id"]);
    let before = mine.account().await;

    let (other_key, _) = s.issue_key(None).await;
    let other = s.api_for(&other_key);
    assert!(
        other.projects("").await.is_empty(),
        "another account sees my projects"
    );
    assert!(other.projects("?completed=all&name=Board").await.is_empty());

    other
        .get(&format!("/projects/{pid}"))
        .await
        .expect_error(404);
    other
        .patch(&format!("/projects/{pid}"), json!({ "name": "Stolen" }))
        .await
        .expect_error(404);
    other
        .patch(&format!("/columns/{cid}"), json!({ "name": "Stolen" }))
        .await
        .expect_error(404);
    other.get(&format!("/tasks/{tid}")).await.expect_error(404);
    other
        .patch(&format!("/tasks/{tid}"), json!({ "title": "Stolen" }))
        .await
        .expect_error(404);
    other
        .delete(&format!("/tasks/{tid}"))
        .await
        .expect_error(404);
    other
        .delete(&format!("/columns/{cid}"))
        .await
        .expect_error(404);
    other
        .delete(&format!("/projects/{pid}"))
        .await
        .expect_error(404);
    // A guarded write that would match still cannot reach it.
    let guarded = json!({ "title": { "before": "Private", "after": "Stolen" } });
    other
        .patch(&format!("/tasks/{tid}"), guarded)
        .await
        .expect_error(404);

    assert_eq!(
        mine.account().await,
        before,
        "another account changed my records"
    );
}

#[tokio::test]
async fn ids_are_unique_per_account_not_across_accounts() {
    let s = Server::start().await;
    let mine = s.api();
    mine.create_project(json!({ "id": "b_shared", "name": "Mine" }))
        .await;
    let (other_key, _) = s.issue_key(None).await;
    let other = s.api_for(&other_key);

    let r = other
        .post("/projects", json!({ "id": "b_shared", "name": "Theirs" }))
        .await;
    assert_eq!(r.expect_ok(201)["project"]["name"], json!("Theirs"));
    assert_eq!(mine.project("b_shared").await["name"], json!("Mine"));
    assert_eq!(other.project("b_shared").await["name"], json!("Theirs"));

    other.delete("/projects/b_shared").await.expect_ok(200);
    assert_eq!(mine.project("b_shared").await["name"], json!("Mine"));
}
