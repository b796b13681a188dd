//! Idempotency keys at their bound (issue 35): each API key keeps its newest
//! `--limit-idempotency-keys-per-key` results. Past them the oldest are forgotten in batches
//! between writes: a retry of a forgotten key runs again, while the newest still replay.

use reqwest::Method;
use serde_json::json;

use crate::harness::*;
use crate::idempotency::{Keyed, replayed, titles};

#[tokio::test]
async fn an_api_key_keeps_its_newest_keys_and_forgets_the_oldest() {
    const BOUND: usize = 5;
    const WRITTEN: usize = 8;
    let server =
        Server::start_with(&["--limit-idempotency-keys-per-key", &BOUND.to_string()]).await;
    let (api, client) = (server.api(), Keyed::of(&server, &server.key));
    let (_, column) = api.board().await;
    let body = |n: usize| json!({"columnId": column, "title": format!("B{n}")});
    let key = |n: usize| format!("bound-{n}");
    for n in 0..WRITTEN {
        client
            .send(Method::POST, "/tasks", Some(body(n)), &key(n))
            .await
            .expect_ok(201);
    }
    // The newest BOUND replay, and write nothing.
    for n in (WRITTEN - BOUND..WRITTEN).rev() {
        let reply = client
            .send(Method::POST, "/tasks", Some(body(n)), &key(n))
            .await;
        assert!(
            replayed(&reply),
            "key {n} of the newest {BOUND}: {}",
            reply.text
        );
        reply.expect_ok(201);
    }
    // The oldest were forgotten: their retry runs again, a second card each.
    for n in 0..2 {
        let reply = client
            .send(Method::POST, "/tasks", Some(body(n)), &key(n))
            .await;
        assert!(!replayed(&reply), "key {n} past the bound replayed");
        reply.expect_ok(201);
    }
    let titles = titles(&api).await;
    let count = |t: &str| titles.iter().filter(|x| x.as_str() == t).count();
    for n in 0..WRITTEN {
        let expected = if n < 2 { 2 } else { 1 };
        assert_eq!(count(&format!("B{n}")), expected, "B{n} in {titles:?}");
    }
}
