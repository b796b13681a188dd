//! Keys that fit one script (issue 24): `access` (`full` or `read`) and `expiresAt` on
//! `POST /keys` and `keys issue`, shown by `GET /keys` and `keys list`; a read key reads
//! everything and opens the socket but every other write answers 403 `read_only_key`,
//! counted as a read and writing nothing; an expired key answers 401 at once and loses its
//! tickets and sockets (4401) within two seconds.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use crate::harness::*;
use crate::live::{expect_close, next_nudge, open, ticket};

/// `POST /keys` with `body` by `api`: (id, key), shape-checked.
async fn issue(api: &Api, body: Value) -> (String, String) {
    let r = api.post("/keys", body.clone()).await;
    let b = r.expect_ok(201);
    assert_keys(
        b,
        &[
            "ok",
            "id",
            "key",
            "label",
            "createdAt",
            "access",
            "expiresAt",
        ],
    );
    let access = body.get("access").cloned().unwrap_or(json!("full"));
    assert_eq!(b["access"], access, "{}", r.text);
    assert_eq!(
        b["expiresAt"],
        body.get("expiresAt").cloned().unwrap_or(Value::Null)
    );
    (str_of(&b["id"]), str_of(&b["key"]))
}

async fn listed(api: &Api, id: &str) -> Value {
    let r = api.get("/keys").await;
    let keys = r.expect_ok(200)["keys"].as_array().unwrap().clone();
    for k in &keys {
        assert!(k["access"] == "full" || k["access"] == "read", "{k}");
        assert!(k["expiresAt"].is_null() || k["expiresAt"].is_i64(), "{k}");
    }
    keys.into_iter()
        .find(|k| k["id"] == json!(id))
        .unwrap_or_else(|| panic!("{id} not listed: {}", r.text))
}

/// The key's reads used today, from `/usage` (which itself counts one read).
async fn used(api: &Api) -> (u64, u64) {
    let r = api.get("/usage").await;
    let b = r.expect_ok(200);
    (
        b["reads"]["used"].as_u64().unwrap(),
        b["writes"]["used"].as_u64().unwrap(),
    )
}

#[tokio::test]
async fn keys_carry_access_and_expiry_from_the_interface_and_the_cli() {
    let s = Server::start().await;
    let api = s.api();
    let soon = now_ms() + 3_600_000;
    let (read_id, _) = issue(
        &api,
        json!({"label": "dash", "access": "read", "expiresAt": soon}),
    )
    .await;
    let (full_id, _) = issue(&api, json!({})).await;
    let k = listed(&api, &read_id).await;
    assert_eq!(
        (k["access"].clone(), k["expiresAt"].clone()),
        (json!("read"), json!(soon))
    );
    let k = listed(&api, &full_id).await;
    assert_eq!(
        (k["access"].clone(), k["expiresAt"].clone()),
        (json!("full"), Value::Null)
    );

    // A bad access, a past or non-integer expiry: 422 naming the field, no key issued.
    api.post("/keys", json!({"access": "write"}))
        .await
        .expect_field_error(422, "access");
    api.post("/keys", json!({"expiresAt": now_ms() - 1}))
        .await
        .expect_field_error(422, "expiresAt");
    api.post("/keys", json!({"expiresAt": "tomorrow"}))
        .await
        .expect_field_error(422, "expiresAt");
    assert_eq!(
        api.get("/keys").await.expect_ok(200)["keys"]
            .as_array()
            .unwrap()
            .len(),
        3
    );

    // The CLI issues the same kinds of key, and lists both fields.
    let (_, account) = s.issue_key(None).await;
    let out = s
        .cli(&[
            "keys",
            "issue",
            "--account",
            &account,
            "--access",
            "read",
            "--expires-at",
            &soon.to_string(),
        ])
        .await;
    out.success();
    let cli_key = out.stdout.lines().last().unwrap().trim().to_owned();
    let reader = s.api_for(&cli_key);
    reader.get("/projects").await.expect(200);
    reader
        .post("/projects", json!({"name": "No"}))
        .await
        .expect_code(403, "read_only_key");
    let listed_cli = s.cli(&["keys", "list", "--account", &account]).await;
    let rows = listed_cli.success().json_lines();
    let row = rows
        .iter()
        .find(|r| r["prefix"] == json!(&cli_key[..8]))
        .expect("the CLI's key is listed");
    assert_eq!(
        (row["access"].clone(), row["expiresAt"].clone()),
        (json!("read"), json!(soon))
    );
    // A past expiry is refused by the CLI too, and makes no account.
    let past = s
        .cli(&["keys", "issue", "--access", "read", "--expires-at", "1000"])
        .await;
    assert!(!past.status.success(), "{}", past.stdout);
    assert!(past.stderr.contains("expires"), "{}", past.stderr);
}

#[tokio::test]
async fn a_read_key_reads_everything_and_any_other_write_is_refused_as_a_counted_read() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, cid) = api.board().await;
    let task = api.new_task(&cid, "Card").await;
    let tid = str_of(&task["id"]);
    let (read_id, read_key) = issue(&api, json!({"access": "read"})).await;
    let reader = s.api_for(&read_key);

    // Every GET route answers.
    for path in [
        "/projects".to_string(),
        format!("/projects/{pid}"),
        format!("/tasks/{tid}"),
        "/changes".into(),
        "/export".into(),
        "/usage".into(),
        "/bin".into(),
        "/keys".into(),
    ] {
        reader.get(&path).await.expect(200);
    }
    // The socket: a ticket, and nudges of the full key's writes.
    let mut ws = open(&s, &reader).await;
    api.patch(&format!("/tasks/{tid}"), json!({"title": "Seen"}))
        .await
        .expect_ok(200);
    assert!(next_nudge(&mut ws, Duration::from_secs(5)).await.is_some());

    let before = api.account().await;
    let (reads0, writes0) = used(&reader).await;
    let writes: Vec<(Method, String, Option<Value>)> = vec![
        (Method::POST, "/projects".into(), Some(json!({"name": "X"}))),
        (
            Method::PATCH,
            format!("/projects/{pid}"),
            Some(json!({"name": "X"})),
        ),
        (Method::DELETE, format!("/projects/{pid}"), None),
        (
            Method::POST,
            "/columns".into(),
            Some(json!({"projectId": pid, "name": "X"})),
        ),
        (Method::DELETE, format!("/columns/{cid}"), None),
        (
            Method::POST,
            "/tasks".into(),
            Some(json!({"columnId": cid, "title": "X"})),
        ),
        (
            Method::PATCH,
            format!("/tasks/{tid}"),
            Some(json!({"title": "X"})),
        ),
        (Method::DELETE, format!("/tasks/{tid}"), None),
        (
            Method::PATCH,
            "/tasks/positions".into(),
            Some(json!({"positions": []})),
        ),
        (
            Method::POST,
            format!("/tasks/{tid}/tags"),
            Some(json!({"text": "x"})),
        ),
        (
            Method::POST,
            format!("/tasks/{tid}/comments"),
            Some(json!({"text": "x"})),
        ),
        (
            Method::POST,
            format!("/tasks/{tid}/checklist"),
            Some(json!({"text": "x"})),
        ),
        (Method::POST, "/undo".into(), None),
        (Method::POST, "/purge".into(), None),
        (
            Method::POST,
            "/keys".into(),
            Some(json!({"access": "read"})),
        ),
        (Method::DELETE, format!("/keys/{read_id}"), None),
    ];
    for (method, path, body) in &writes {
        let r = reader
            .send(method.clone(), path, body.as_ref().map(Value::to_string))
            .await;
        let b = r.expect_code(403, "read_only_key");
        assert_keys(b, &["ok", "error", "code"]);
        assert!(
            r.content_type().starts_with("application/json"),
            "{}",
            r.what
        );
    }
    // Nothing was written, and each refusal was counted as a read, not a write.
    assert_eq!(api.account().await, before);
    let (reads1, writes1) = used(&reader).await;
    assert_eq!(writes1, writes0, "a refused write is not a write");
    assert_eq!(
        reads1,
        reads0 + writes.len() as u64 + 1,
        "each refusal is a read"
    );
    // The read key is still listed: it could not revoke itself.
    listed(&api, &read_id).await;
}

#[tokio::test]
async fn a_full_key_manages_read_keys_and_the_last_full_key_stays() {
    let s = Server::start().await;
    let api = s.api();
    let (read_id, read_key) = issue(&api, json!({"access": "read"})).await;
    let first = str_of(
        &api.get("/keys").await.expect_ok(200)["keys"]
            .as_array()
            .unwrap()
            .iter()
            .find(|k| k["current"] == json!(true))
            .unwrap()["id"],
    );
    // The only full key cannot go, even with a read key beside it.
    api.delete(&format!("/keys/{first}"))
        .await
        .expect_field_error(422, "id");
    // A full key revokes a read key, which stops working at once.
    api.delete(&format!("/keys/{read_id}")).await.expect_ok(200);
    s.api_for(&read_key)
        .get("/projects")
        .await
        .expect_code(401, "bad_key");
}

#[tokio::test]
async fn an_expired_key_answers_401_and_loses_its_tickets_and_sockets_within_two_seconds() {
    let s = Server::start().await;
    let api = s.api();
    let expires = now_ms() + 3_000;
    let (id, key) = issue(&api, json!({"access": "read", "expiresAt": expires})).await;
    let short = s.api_for(&key);
    let mut ws = open(&s, &short).await;
    let unused = ticket(&short).await;
    // A ticket never outlives its key.
    let r = short.post("/live/ticket", json!({})).await;
    assert!(r.expect_ok(200)["expiresAt"].as_i64().unwrap() <= expires);
    short.get("/projects").await.expect(200);

    // The socket closes with 4401 within two seconds of the moment.
    expect_close(&mut ws, 4401).await;
    let closed_at = now_ms();
    assert!(
        closed_at >= expires,
        "closed {} ms early",
        expires - closed_at
    );
    assert!(
        closed_at <= expires + 2_000,
        "closed {} ms late",
        closed_at - expires
    );
    // From the moment on: 401, as a revoked key; the unused ticket is dead.
    short.get("/projects").await.expect_code(401, "bad_key");
    let url = s
        .url(&format!("/api/v1/live?ticket={unused}"))
        .replacen("http://", "ws://", 1);
    assert!(
        tokio_tungstenite::connect_async(url.as_str())
            .await
            .is_err()
    );
    // It stays listed with its expiry until revoked, and revoking it is allowed.
    let k = listed(&api, &id).await;
    assert_eq!(k["expiresAt"], json!(expires));
    api.delete(&format!("/keys/{id}")).await.expect_ok(200);
}

/// `POST /keys` by `api`: the reply's `expiresAt` (asserted 201).
async fn issued_expiry(api: &Api, body: Value) -> (String, String, Value) {
    let r = api.post("/keys", body).await;
    let b = r.expect_ok(201);
    (str_of(&b["id"]), str_of(&b["key"]), b["expiresAt"].clone())
}

async fn key_count(api: &Api) -> usize {
    api.get("/keys").await.expect_ok(200)["keys"]
        .as_array()
        .unwrap()
        .len()
}

#[tokio::test]
async fn a_key_made_by_an_expiring_key_expires_no_later_and_a_read_key_makes_none() {
    let s = Server::start().await;
    let api = s.api();
    let limit = now_ms() + 3_600_000;
    let (_, short_key) = issue(&api, json!({"label": "short", "expiresAt": limit})).await;
    let short = s.api_for(&short_key);

    // Unsaid, the expiry is the parent's: shown in the reply and the list, and in force.
    let (child, child_key, at) = issued_expiry(&short, json!({"label": "child"})).await;
    assert_eq!(at, json!(limit));
    assert_eq!(listed(&api, &child).await["expiresAt"], json!(limit));
    let (_, _, at) = issued_expiry(&short, json!({})).await;
    assert_eq!(at, json!(limit));
    let (read_child, _, at) = issued_expiry(&short, json!({"access": "read"})).await;
    assert_eq!(at, json!(limit));
    assert_eq!(listed(&api, &read_child).await["access"], json!("read"));
    // The grandchild is bound by the same moment.
    let (_, _, at) = issued_expiry(&s.api_for(&child_key), json!({"label": "grand"})).await;
    assert_eq!(at, json!(limit));
    // Earlier is fine; later, or never in so many words, is refused and issues nothing.
    let (_, _, at) = issued_expiry(&short, json!({"expiresAt": limit - 1_000})).await;
    assert_eq!(at, json!(limit - 1_000));
    let before = key_count(&api).await;
    for body in [
        json!({"expiresAt": limit + 1}),
        json!({"expiresAt": null}),
        json!({"label": "forever", "access": "read", "expiresAt": null}),
    ] {
        short
            .post("/keys", body)
            .await
            .expect_field_error(422, "expiresAt");
    }
    assert_eq!(key_count(&api).await, before);

    // A key that never expires still makes keys that never expire.
    let (_, _, at) = issued_expiry(&api, json!({"label": "lasting"})).await;
    assert_eq!(at, Value::Null);

    // A read key makes no key, of either access, and nothing is issued.
    let (_, read_key) = issue(&api, json!({"access": "read"})).await;
    let reader = s.api_for(&read_key);
    let before = key_count(&api).await;
    for body in [
        json!({}),
        json!({"access": "read"}),
        json!({"access": "full"}),
    ] {
        reader
            .post("/keys", body)
            .await
            .expect_code(403, "read_only_key");
    }
    assert_eq!(key_count(&api).await, before);
}

#[tokio::test]
async fn the_last_full_key_that_never_expires_cannot_be_revoked() {
    let s = Server::start().await;
    let api = s.api();
    let first = str_of(
        &api.get("/keys").await.expect_ok(200)["keys"]
            .as_array()
            .unwrap()
            .iter()
            .find(|k| k["current"] == json!(true))
            .unwrap()["id"],
    );
    let soon = now_ms() + 3_600_000;
    let (_, short_key) = issue(&api, json!({"expiresAt": soon})).await;
    let short = s.api_for(&short_key);
    // From the expiring key, or from the lasting key itself: 422 naming `id`, and the
    // lasting key keeps working.
    short
        .delete(&format!("/keys/{first}"))
        .await
        .expect_field_error(422, "id");
    api.delete(&format!("/keys/{first}"))
        .await
        .expect_field_error(422, "id");
    api.get("/projects").await.expect(200);

    // With a second lasting full key, the first can go; then the second is the last.
    let (second, second_key) = issue(&api, json!({"label": "second"})).await;
    short.delete(&format!("/keys/{first}")).await.expect_ok(200);
    api.get("/projects").await.expect_code(401, "bad_key");
    short
        .delete(&format!("/keys/{second}"))
        .await
        .expect_field_error(422, "id");
    s.api_for(&second_key).get("/projects").await.expect(200);
    // An expiring full key beside a lasting one can still be revoked.
    let (short_id, _) = issue(&s.api_for(&second_key), json!({"expiresAt": soon})).await;
    s.api_for(&second_key)
        .delete(&format!("/keys/{short_id}"))
        .await
        .expect_ok(200);
}
