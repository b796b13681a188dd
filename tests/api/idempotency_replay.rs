//! Idempotency keys (issue 35): a success replays its first reply byte for byte after the
//! record was edited or deleted, on this node and on another, and a reply past the bound
//! kept in a row replays its record as it is; a retry sent to another node replays and
//! writes once.

use reqwest::Method;
use serde_json::json;
use tokio::task::JoinSet;

use crate::harness::*;
use crate::idempotency::{Keyed, replayed, titles};

/// The retry answers `first` byte for byte: status, body and Content-Type, marked.
fn assert_first_reply(retry: &Reply, first: &Reply) {
    assert!(replayed(retry), "{}: {}", retry.what, retry.text);
    assert_eq!(
        (retry.status, &retry.text),
        (first.status, &first.text),
        "{}: the retry answers the first reply byte for byte",
        retry.what
    );
    assert_eq!(
        retry.header("content-type"),
        first.header("content-type"),
        "{}",
        retry.what
    );
}

#[tokio::test]
async fn a_success_replays_its_first_reply_after_the_record_was_edited_or_deleted() {
    let server = Server::start().await;
    let (api, client) = (server.api(), Keyed::of(&server, &server.key));
    let (_, column) = api.board().await;
    let body = json!({"columnId": column, "title": "As made", "description": "first"});
    let first = client
        .send(Method::POST, "/tasks", Some(body.clone()), "made")
        .await;
    first.expect_ok(201);
    let id = str_of(&first.body["id"]);
    let path = format!("/tasks/{id}");
    // A keyed edit too: its retry answers the card as that edit left it.
    let patch = json!({"title": "Edited once"});
    let edited = client
        .send(Method::PATCH, &path, Some(patch.clone()), "edit")
        .await;
    edited.expect_ok(200);
    api.patch(
        &path,
        json!({"title": "Edited twice", "description": "later"}),
    )
    .await
    .expect(200);
    let retry = client
        .send(Method::POST, "/tasks", Some(body.clone()), "made")
        .await;
    assert_first_reply(&retry, &first);
    assert_eq!(retry.body["task"]["title"], "As made", "{}", retry.text);
    let retry = client
        .send(Method::PATCH, &path, Some(patch.clone()), "edit")
        .await;
    assert_first_reply(&retry, &edited);
    // Deleted since: the create still answers the card as it was made.
    api.delete(&path).await.expect(200);
    let retry = client
        .send(Method::POST, "/tasks", Some(body.clone()), "made")
        .await;
    assert_first_reply(&retry, &first);
    // Nothing ran again.
    let seen = titles(&api).await;
    assert!(seen.is_empty(), "{seen:?}");
}

#[tokio::test]
async fn a_first_reply_past_the_bound_replays_its_record_as_it_is() {
    let server = Server::start().await;
    let (api, client) = (server.api(), Keyed::of(&server, &server.key));
    let (_, column) = api.board().await;
    // 70,000 characters: the first reply is past 64 KiB, and stays remembered as its ids.
    let long = "d".repeat(70_000);
    let body = json!({"columnId": column, "title": "Long", "description": long});
    let first = client
        .send(Method::POST, "/tasks", Some(body.clone()), "long")
        .await;
    first.expect_ok(201);
    assert!(first.text.len() > 64 * 1024);
    let id = str_of(&first.body["id"]);
    api.patch(&format!("/tasks/{id}"), json!({"title": "Renamed"}))
        .await
        .expect(200);
    let retry = client
        .send(Method::POST, "/tasks", Some(body), "long")
        .await;
    assert!(replayed(&retry), "{}", retry.text);
    assert_eq!(retry.status, 201);
    assert_eq!(retry.body["id"], first.body["id"]);
    assert_eq!(
        retry.body["task"]["title"], "Renamed",
        "the record as it is"
    );
}

#[tokio::test]
async fn another_node_replays_the_first_reply_after_an_edit() {
    let (mut a, printed) = Server::start_on(root_on(Engine::Postgres), &[]).await;
    a.key = printed.expect("the first node prints the first key");
    let b = a.another_node(&[]).await;
    let (on_a, on_b) = (Keyed::of(&a, &a.key), Keyed::of(&b, &b.key));
    let (_, column) = a.api().board().await;
    let body = json!({"columnId": column, "title": "As made"});
    let first = on_a
        .send(Method::POST, "/tasks", Some(body.clone()), "roaming")
        .await;
    first.expect_ok(201);
    let path = format!("/tasks/{}", str_of(&first.body["id"]));
    // Answered after the writer's next group on the first node, which put the first reply
    // in the row.
    a.api()
        .patch(&path, json!({"title": "Edited"}))
        .await
        .expect(200);
    let retry = on_b
        .send(Method::POST, "/tasks", Some(body.clone()), "roaming")
        .await;
    assert_first_reply(&retry, &first);
    a.api().delete(&path).await.expect(200);
    let retry = on_b
        .send(Method::POST, "/tasks", Some(body), "roaming")
        .await;
    assert_first_reply(&retry, &first);
}

#[tokio::test]
async fn a_retry_sent_to_another_node_replays() {
    let (mut a, printed) = Server::start_on(root_on(Engine::Postgres), &[]).await;
    a.key = printed.expect("the first node prints the first key");
    let b = a.another_node(&[]).await;
    let (on_a, on_b) = (Keyed::of(&a, &a.key), Keyed::of(&b, &b.key));
    let (_, column) = a.api().board().await;
    let body = json!({"columnId": column, "title": "N"});
    let first = on_a
        .send(Method::POST, "/tasks", Some(body.clone()), "roaming")
        .await;
    first.expect_ok(201);
    let retry = on_b
        .send(Method::POST, "/tasks", Some(body.clone()), "roaming")
        .await;
    assert!(replayed(&retry), "{}", retry.text);
    assert_eq!(retry.body["id"], first.body["id"]);
    // Concurrent on both nodes with a new key: one card, whatever node ran it.
    let mut sent = JoinSet::new();
    for n in 0..8 {
        let client = if n % 2 == 0 {
            on_a.clone()
        } else {
            on_b.clone()
        };
        let body = json!({"columnId": column, "title": "M"});
        sent.spawn(async move {
            client
                .send(Method::POST, "/tasks", Some(body), "both")
                .await
        });
    }
    while let Some(reply) = sent.join_next().await {
        let reply = reply.expect("a sender");
        assert!(
            matches!(reply.status, 201 | 409),
            "{}: {}",
            reply.status,
            reply.text
        );
    }
    let seen = titles(&b.api()).await;
    assert_eq!(seen.iter().filter(|t| *t == "M").count(), 1, "{seen:?}");
    assert_eq!(seen.iter().filter(|t| *t == "N").count(), 1, "{seen:?}");
}
