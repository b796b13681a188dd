//! How long and how many idempotency keys are remembered (issue 35): each API key keeps its
//! newest `--limit-idempotency-keys-per-key` results (past them the oldest are forgotten in
//! batches between writes: a retry of a forgotten key runs again, while the newest still
//! replay); a key expires after its retention and then runs again; revoking an API key
//! forgets its keys.

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

#[tokio::test]
async fn a_key_expires_after_its_retention_and_then_runs_again() {
    let server = Server::start_with(&["--limit-idempotency-seconds", "1"]).await;
    let (api, client) = (server.api(), Keyed::of(&server, &server.key));
    let (_, column) = api.board().await;
    let body = json!({"columnId": column, "title": "E"});
    client
        .send(Method::POST, "/tasks", Some(body.clone()), "expiring")
        .await
        .expect_ok(201);
    let replay = client
        .send(Method::POST, "/tasks", Some(body.clone()), "expiring")
        .await;
    assert!(replayed(&replay), "within its retention the key replays");
    // Past the retention the same request runs again: a second card.
    until(
        "the key expires",
        std::time::Duration::from_secs(10),
        async || {
            let reply = client
                .send(Method::POST, "/tasks", Some(body.clone()), "expiring")
                .await;
            if replayed(&reply) {
                Err(reply.text)
            } else {
                Ok(reply.expect_ok(201).clone())
            }
        },
    )
    .await;
    assert_eq!(titles(&api).await, vec!["E", "E"]);
}

/// How many results the store remembers for the API key `key_id`.
fn remembered_rows(data: &std::path::Path, key_id: &str) -> i64 {
    let key_id = key_id.to_owned();
    match database_of(data) {
        None => crate::crash::open_read_only(&data.join("workboard.db"))
            .query_row(
                "SELECT count(*) FROM idempotency WHERE key_id = ?1",
                [key_id],
                |r| r.get(0),
            )
            .expect("the idempotency table"),
        Some(url) => std::thread::spawn(move || {
            let mut c = postgres::Client::connect(&url, postgres::NoTls).expect("the database");
            c.query_one(
                "SELECT count(*) FROM idempotency WHERE key_id = $1",
                &[&key_id],
            )
            .expect("the idempotency table")
            .get(0)
        })
        .join()
        .expect("the count ran"),
    }
}

#[tokio::test]
async fn revoking_an_api_key_forgets_its_idempotency_keys() {
    let server = Server::start().await;
    let api = server.api();
    let (_, column) = api.board().await;
    let made = api
        .post("/keys", json!({"label": "laptop"}))
        .await
        .expect(201)
        .clone();
    let (key_id, secret) = (str_of(&made["id"]), str_of(&made["key"]));
    let theirs = Keyed::of(&server, &secret);
    for n in 0..3 {
        theirs
            .send(
                Method::POST,
                "/tasks",
                Some(json!({"columnId": column, "title": format!("L{n}")})),
                &format!("k{n}"),
            )
            .await
            .expect_ok(201);
    }
    assert_eq!(remembered_rows(&server.data_dir(), &key_id), 3);
    api.delete(&format!("/keys/{key_id}")).await.expect_ok(200);
    assert_eq!(
        remembered_rows(&server.data_dir(), &key_id),
        0,
        "revoked, its keys are forgotten"
    );
    // And the revoked key's retry is refused like any of its requests.
    theirs
        .send(
            Method::POST,
            "/tasks",
            Some(json!({"columnId": column, "title": "L0"})),
            "k0",
        )
        .await
        .expect_code(401, "bad_key");
}
