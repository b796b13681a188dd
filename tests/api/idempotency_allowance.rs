//! Replays against the allowances (issue 35): a replay counts as a read, not a write, and
//! with an API key's write allowance spent a retry still replays while a new write is
//! refused.

use reqwest::Method;
use serde_json::json;

use crate::harness::*;
use crate::idempotency::{Keyed, replayed, titles};

#[tokio::test]
async fn a_replay_counts_as_a_read_and_not_a_write() {
    let server = Server::start_with(&["--limit-writes-per-day", "4"]).await;
    let (api, client) = (server.api(), Keyed::of(&server, &server.key));
    let project = str_of(&api.create_project(json!({"name": "P"})).await["id"]);
    let body = json!({"projectId": project, "name": "C"});
    client
        .send(Method::POST, "/columns", Some(body.clone()), "counted")
        .await
        .expect_ok(201);
    let before = api.get("/usage").await.expect(200).clone();
    for _ in 0..5 {
        let reply = client
            .send(Method::POST, "/columns", Some(body.clone()), "counted")
            .await;
        assert!(replayed(&reply), "{}", reply.text);
    }
    let after = api.get("/usage").await.expect(200).clone();
    assert_eq!(
        after["writes"]["used"], before["writes"]["used"],
        "{before} {after}"
    );
    assert_eq!(
        after["reads"]["used"].as_u64(),
        before["reads"]["used"].as_u64().map(|r| r + 6),
        "five replays and one usage read: {before} {after}"
    );
}

#[tokio::test]
async fn with_the_write_allowance_spent_a_retry_still_replays_and_a_new_write_is_refused() {
    let server = Server::start_with(&["--limit-writes-per-day", "3"]).await;
    let (api, client) = (server.api(), Keyed::of(&server, &server.key));
    let (_, column) = api.board().await; // two writes
    let body = json!({"columnId": column, "title": "S"});
    let first = client
        .send(Method::POST, "/tasks", Some(body.clone()), "spent")
        .await;
    first.expect_ok(201); // the third write: the allowance is spent
    let before = api.get("/usage").await.expect(200).clone();
    let retry = client
        .send(Method::POST, "/tasks", Some(body.clone()), "spent")
        .await;
    assert!(replayed(&retry), "a replay is a read: {}", retry.text);
    assert_eq!((retry.status, &retry.text), (201, &first.text));
    // A key not used before runs nothing and is refused as any write would be.
    let other = json!({"columnId": column, "title": "T"});
    client
        .send(Method::POST, "/tasks", Some(other), "unused")
        .await
        .expect_code(429, "allowance_exhausted");
    let after = api.get("/usage").await.expect(200).clone();
    assert_eq!(after["writes"]["used"], before["writes"]["used"], "{after}");
    assert_eq!(titles(&api).await, vec!["S"]);
}
