//! The change socket (issue 5; specification: Events; contract: live): single-use tickets,
//! 401 before the upgrade, a `changed` nudge on every change of the account from any key (the
//! change readable by then, and in the next changes reply), none for other accounts or no-op
//! writes, the per-account socket limit, revocation closing with 4401, and the ticket
//! counting as a read but not as a write.

use std::time::Duration;

use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream, connect_async};

use crate::changes::{changes, now_of, ok, sent};
use crate::harness::*;

pub type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// How long a nudge may take to arrive before a test gives up on it.
pub const NUDGE_WAIT: Duration = Duration::from_secs(5);
/// How long a test listens to show that nothing arrives. There is no event to wait on for
/// "no message", so a bounded wait is the only way; nudges come within well under a second.
const SILENCE: Duration = Duration::from_secs(1);

/// `POST /live/ticket`, asserted 200 and shape-checked.
pub async fn ticket(api: &Api) -> String {
    let r = api.post("/live/ticket", json!({})).await;
    let body = r.expect_ok(200);
    assert_keys(body, &["ok", "ticket", "expiresAt"]);
    str_of(&body["ticket"])
}

fn live_url(s: &Server, query: &str) -> String {
    s.url(&format!("/api/v1/live{query}"))
        .replacen("http://", "ws://", 1)
}

/// Opens the socket with `ticket`.
pub async fn connect(s: &Server, ticket: &str) -> Socket {
    let url = live_url(s, &format!("?ticket={ticket}"));
    match connect_async(url.as_str()).await {
        Ok((ws, _)) => ws,
        Err(e) => panic!("the socket did not open: {e}"),
    }
}

/// A fresh ticket of `api`'s key and a socket opened with it.
pub async fn open(s: &Server, api: &Api) -> Socket {
    connect(s, &ticket(api).await).await
}

/// The HTTP status of an upgrade the server refuses.
async fn refused(s: &Server, query: &str) -> u16 {
    match connect_async(live_url(s, query).as_str()).await {
        Err(WsError::Http(resp)) => resp.status().as_u16(),
        Ok(_) => panic!("the socket opened with {query:?}"),
        Err(e) => panic!("{query:?}: not an HTTP refusal: {e}"),
    }
}

/// The next data or close message within `wait`, skipping pings and pongs.
async fn next_message(ws: &mut Socket, wait: Duration) -> Option<Message> {
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        let m = tokio::time::timeout_at(deadline, ws.next()).await.ok()?;
        match m {
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
            Some(Ok(m)) => return Some(m),
            Some(Err(e)) => panic!("socket error: {e}"),
            None => panic!("the socket ended without a close frame"),
        }
    }
}

/// The next `changed` nudge within `wait`, checked for its shape; `None` if none came.
pub async fn next_nudge(ws: &mut Socket, wait: Duration) -> Option<Value> {
    let m = next_message(ws, wait).await?;
    let Message::Text(text) = m else {
        panic!("a nudge is a text frame, got {m:?}");
    };
    let nudge: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_keys(&nudge, &["type", "at"]);
    assert_eq!(nudge["type"], json!("changed"), "{text}");
    let at = nudge["at"]
        .as_i64()
        .unwrap_or_else(|| panic!("`at` is not ms: {text}"));
    assert!(
        (now_ms() - 60_000..=now_ms() + 1_000).contains(&at),
        "`at` {at} is not now"
    );
    Some(nudge)
}

/// The socket's next message is a close frame with `code`.
pub async fn expect_close(ws: &mut Socket, code: u16) {
    match next_message(ws, NUDGE_WAIT).await {
        Some(Message::Close(Some(frame))) => assert_eq!(u16::from(frame.code), code, "{frame}"),
        other => panic!("expected a close frame with {code}, got {other:?}"),
    }
}

#[track_caller]
fn assert_silent(m: Option<Value>, why: &str) {
    assert!(m.is_none(), "{why}, yet the socket said {m:?}");
}

#[tokio::test]
async fn a_ticket_is_random_single_use_and_good_for_sixty_seconds() {
    let s = Server::start().await;
    let api = s.api();
    let t0 = now_ms();
    let r = api.post("/live/ticket", json!({})).await;
    let body = r.expect_ok(200).clone();
    let expires = body["expiresAt"].as_i64().expect("expiresAt in ms");
    assert!(
        expires >= t0 + 59_000 && expires <= now_ms() + 61_000,
        "expiresAt {expires} is not now + 60 s"
    );
    let first = str_of(&body["ticket"]);
    assert!(
        first.len() >= 22,
        "a ticket of 128 random bits is at least 22 characters: {first}"
    );
    let second = ticket(&api).await;
    assert_ne!(first, second);
    assert!(!s.log().contains(&first), "a ticket reached the log");

    let mut ws = connect(&s, &first).await;
    assert_eq!(
        refused(&s, &format!("?ticket={first}")).await,
        401,
        "second use"
    );
    api.new_project("P").await;
    assert!(
        next_nudge(&mut ws, NUDGE_WAIT).await.is_some(),
        "the first socket works"
    );
    assert!(
        !s.log().contains(&first),
        "the socket's query string reached the log"
    );
}

#[tokio::test]
async fn a_bad_missing_or_expired_ticket_is_refused_with_401_before_the_upgrade() {
    let s = Server::start_with(&["--limit-ticket-seconds", "1"]).await;
    let api = s.api();
    assert_eq!(refused(&s, "?ticket=not-a-ticket").await, 401);
    assert_eq!(refused(&s, "?ticket=").await, 401);
    assert_eq!(refused(&s, "").await, 401);
    // A valid key is not a ticket.
    assert_eq!(refused(&s, &format!("?ticket={}", s.key)).await, 401);

    let t0 = now_ms();
    let r = api.post("/live/ticket", json!({})).await;
    let body = r.expect_ok(200).clone();
    let expires = body["expiresAt"].as_i64().unwrap();
    assert!(
        expires >= t0 + 900 && expires <= now_ms() + 1_100,
        "expiresAt {expires}"
    );
    // Expiry is a matter of time: waiting past it is the only way to test it.
    tokio::time::sleep(Duration::from_millis(1_300)).await;
    assert_eq!(
        refused(&s, &format!("?ticket={}", str_of(&body["ticket"]))).await,
        401
    );
}

#[tokio::test]
async fn every_change_from_any_key_nudges_and_is_in_the_next_changes_reply() {
    let s = Server::start().await;
    let api = s.api();
    let r = api.post("/keys", json!({ "label": "phone" })).await;
    let w = s.api_for(&str_of(&r.expect_ok(201)["key"]));
    let mut ws = open(&s, &api).await;
    let mut from = now_of(&changes(&api, "").await);
    // After each write: a nudge, then the change in the reply since the previous `now`.
    let mut next = async |list: &str, id: &str| -> Value {
        next_nudge(&mut ws, NUDGE_WAIT)
            .await
            .unwrap_or_else(|| panic!("no nudge for {id}"));
        let reply = changes(&api, &format!("?since={from}")).await;
        from = now_of(&reply);
        sent(&reply, list, id).clone()
    };

    // A client reacts to the nudge alone: by then the change must be readable.
    let writer = w.clone();
    let pending = tokio::spawn(async move {
        writer
            .create_project(json!({ "id": "b_live", "name": "P" }))
            .await
    });
    assert_eq!(next("projects", "b_live").await["name"], json!("P"));
    pending.await.expect("the write");
    let cid = api.new_column("b_live", "C").await;
    assert_eq!(
        next("lists", &cid).await["name"],
        json!("C"),
        "the socket key's own write"
    );
    let tid = str_of(&w.new_task(&cid, "T").await["id"]);
    assert_eq!(next("cards", &tid).await["title"], json!("T"));
    let path = format!("/tasks/{tid}");
    ok(w.patch(&path, json!({ "deadline": "2025-01-31" })).await);
    assert_eq!(next("cards", &tid).await["deadline"], json!("2025-01-31"));
    ok(w.post(&format!("{path}/tags"), json!({ "text": "red" }))
        .await);
    assert_eq!(next("cards", &tid).await["tags"], json!(["red"]));
    ok(w.post(&format!("{path}/checklist"), json!({ "text": "x" }))
        .await);
    assert_eq!(
        next("cards", &tid).await["checklist"][0]["text"],
        json!("x")
    );
    ok(w.post(&format!("{path}/comments"), json!({ "text": "c" }))
        .await);
    assert_eq!(next("cards", &tid).await["comments"][0]["text"], json!("c"));
    let done = now_ms();
    ok(w.patch(&path, json!({ "completedAt": done })).await);
    assert_eq!(next("cards", &tid).await["completedAt"], json!(done));
    ok(w.patch(&path, json!({ "completedAt": null })).await);
    assert_eq!(next("cards", &tid).await["completedAt"], json!(null));
    ok(w.patch(&format!("/columns/{cid}"), json!({ "name": "C2" }))
        .await);
    assert_eq!(next("lists", &cid).await["name"], json!("C2"));
    ok(w.patch("/projects/b_live", json!({ "archivedAt": done }))
        .await);
    assert_eq!(next("projects", "b_live").await["archivedAt"], json!(done));
    ok(w.delete(&path).await);
    assert!(next("cards", &tid).await["cancelledAt"].is_i64());
    let bin = ok(w.get("/bin").await)["entries"][0]["id"].clone();
    ok(w.post(&format!("/bin/{}/restore", str_of(&bin)), json!({}))
        .await);
    assert_eq!(next("cards", &tid).await["cancelledAt"], json!(null));
    ok(api
        .patch("/projects/b_live", json!({ "name": "Renamed" }))
        .await);
    assert_eq!(next("projects", "b_live").await["name"], json!("Renamed"));
    assert_eq!(
        ok(api.post("/undo", json!({})).await)["undone"],
        json!(true)
    );
    assert_eq!(
        next("projects", "b_live").await["name"],
        json!("P"),
        "an undo"
    );
    ok(w.delete(&format!("/columns/{cid}")).await);
    assert!(next("lists", &cid).await["deletedAt"].is_i64());
}

#[tokio::test]
async fn quick_writes_coalesce_into_well_formed_nudges() {
    let s = Server::start().await;
    let api = s.api();
    let (_, cid) = api.board().await;
    let mut ws = open(&s, &api).await;
    let writes = 30;
    let mut set = tokio::task::JoinSet::new();
    for i in 0..writes {
        let (api, cid) = (api.clone(), cid.clone());
        set.spawn(async move { api.new_task(&cid, &format!("{i}")).await });
    }
    set.join_all().await;
    let mut frames = 0;
    while next_nudge(&mut ws, SILENCE).await.is_some() {
        frames += 1;
    }
    assert!(frames >= 1, "no nudge for {writes} writes");
    assert!(frames <= writes, "{frames} nudges for {writes} writes");
}

#[tokio::test]
async fn a_write_that_changes_nothing_sends_no_nudge() {
    let s = Server::start().await;
    let api = s.api();
    let (_, cid) = api.board().await;
    let tid = str_of(&api.new_task(&cid, "Same").await["id"]);
    let mut ws = open(&s, &api).await;
    let path = format!("/tasks/{tid}");
    api.patch(&path, json!({ "title": "Same" }))
        .await
        .expect_ok(200);
    let r = api
        .patch(
            &path,
            json!({ "title": "Refused", "deadline": "2025-02-30" }),
        )
        .await;
    r.expect_field_error(422, "deadline");
    assert_silent(
        next_nudge(&mut ws, SILENCE).await,
        "the writes changed nothing",
    );
    api.patch(&path, json!({ "title": "Different" }))
        .await
        .expect_ok(200);
    next_nudge(&mut ws, NUDGE_WAIT)
        .await
        .expect("a real change");
}

#[tokio::test]
async fn a_change_in_another_account_sends_nothing() {
    let s = Server::start().await;
    let api = s.api();
    let (stranger_key, _) = s.issue_key(None).await;
    let stranger = s.api_for(&stranger_key);
    let mut ws = open(&s, &api).await;
    let mut theirs = open(&s, &stranger).await;

    stranger.new_project("Theirs").await;
    next_nudge(&mut theirs, NUDGE_WAIT)
        .await
        .expect("their own socket hears it");
    assert_silent(
        next_nudge(&mut ws, SILENCE).await,
        "another account changed",
    );
    api.new_project("Mine").await;
    next_nudge(&mut ws, NUDGE_WAIT)
        .await
        .expect("the socket is alive");
}

#[tokio::test]
async fn an_account_opens_at_most_its_limit_of_sockets() {
    let s = Server::start_with(&["--limit-sockets-per-account", "2"]).await;
    let api = s.api();
    let spare = ticket(&api).await;
    let mut first = open(&s, &api).await;
    let _second = open(&s, &api).await;

    let r = api.post("/live/ticket", json!({})).await;
    r.expect_error(429);
    assert!(r.header("retry-after").is_some(), "429 without Retry-After");
    // A ticket issued before the limit was reached cannot open a third socket either.
    assert_eq!(refused(&s, &format!("?ticket={spare}")).await, 429);
    let (stranger_key, _) = s.issue_key(None).await;
    ticket(&s.api_for(&stranger_key)).await;

    // Closing one frees its place; the server notices the close asynchronously.
    first.close(None).await.expect("close");
    until(
        "a ticket once a socket closed",
        Duration::from_secs(5),
        async || {
            let r = api.post("/live/ticket", json!({})).await;
            match r.status {
                200 => Ok(()),
                _ => Err(r.expect_error(429).clone()),
            }
        },
    )
    .await;
}

#[tokio::test]
async fn revoking_a_key_closes_its_socket_with_4401_and_kills_its_tickets() {
    let s = Server::start().await;
    let api = s.api();
    let r = api.post("/keys", json!({ "label": "tablet" })).await;
    let (tablet_id, tablet_key) = (str_of(&r.expect_ok(201)["id"]), str_of(&r.body["key"]));
    let tablet = s.api_for(&tablet_key);
    let mut revoked_ws = open(&s, &tablet).await;
    let unused = ticket(&tablet).await;
    let mut kept_ws = open(&s, &api).await;

    api.delete(&format!("/keys/{tablet_id}"))
        .await
        .expect_ok(200);
    expect_close(&mut revoked_ws, 4401).await;
    assert_eq!(refused(&s, &format!("?ticket={unused}")).await, 401);
    tablet
        .post("/live/ticket", json!({}))
        .await
        .expect_error(401);

    api.new_project("After").await;
    next_nudge(&mut kept_ws, NUDGE_WAIT)
        .await
        .expect("the other key's socket stays open");
}

#[tokio::test]
async fn a_key_revoked_from_the_cli_closes_its_socket_too() {
    let s = Server::start().await;
    let api = s.api();
    let r = api.post("/keys", json!({ "label": "script" })).await;
    let (id, key) = (str_of(&r.expect_ok(201)["id"]), str_of(&r.body["key"]));
    let mut ws = open(&s, &s.api_for(&key)).await;
    s.cli(&["keys", "revoke", &id]).await.success();
    expect_close(&mut ws, 4401).await;
}

#[tokio::test]
async fn a_ticket_counts_as_a_read_but_not_as_a_write() {
    let s = Server::start_with(&["--limit-writes-per-day", "1"]).await;
    let (key, account) = s.issue_key(None).await;
    let api = s.api_for(&key);
    api.new_project("The one write").await;
    api.post("/projects", json!({ "name": "Over" }))
        .await
        .expect_error(429);
    let mut ws = open(&s, &api).await;
    ticket(&api).await;
    let usage = api.get("/usage").await;
    assert_eq!(
        usage.expect_ok(200)["writes"]["used"],
        json!(1),
        "{}",
        usage.text
    );
    // The socket opened on the spent key still hears the account's other keys.
    let (other, _) = s.issue_key(Some(&account)).await;
    s.api_for(&other).new_project("Other key").await;
    next_nudge(&mut ws, NUDGE_WAIT).await.expect("nudge");

    let s = Server::start_with(&["--limit-reads-per-day", "3"]).await;
    let api = s.api();
    for _ in 0..3 {
        ticket(&api).await;
    }
    api.post("/live/ticket", json!({})).await.expect_error(429);
}
