//! The daily allowance of each key (issue 4): requests of any method and writes, 429 with
//! `resetsAt` and `Retry-After` once spent, `RateLimit-*` headers on every keyed reply,
//! `GET /usage`, the reset at midnight in New York, and counts kept across a restart.

use std::time::Duration;

use jiff::{Span, Timestamp};
use reqwest::Method;
use serde_json::json;

use crate::harness::*;

const NEW_YORK: &str = "America/New_York";

/// The next midnight in New York after `ts`, in ms, computed here by zoned calendar
/// arithmetic (start of the local day plus one calendar day), apart from the server's code.
fn ny_midnight_after(ts: Timestamp) -> i64 {
    let local = ts.in_tz(NEW_YORK).expect("New York is in the tz database");
    let next = local
        .start_of_day()
        .expect("start of day")
        .checked_add(Span::new().days(1))
        .expect("a day later");
    assert_eq!(
        (next.hour(), next.minute(), next.second()),
        (0, 0, 0),
        "{next}"
    );
    next.timestamp().as_millisecond()
}

/// The expected `resetsAt` just now.
fn expected_reset() -> i64 {
    ny_midnight_after(Timestamp::now())
}

fn ms(s: &str) -> i64 {
    s.parse::<Timestamp>().expect("timestamp").as_millisecond()
}

/// An integer header of a reply.
#[track_caller]
fn int_header(r: &Reply, name: &str) -> i64 {
    let v = r
        .header(name)
        .unwrap_or_else(|| panic!("{}: no {name} header", r.what));
    v.trim()
        .parse()
        .unwrap_or_else(|_| panic!("{}: {name} is not an integer: {v:?}", r.what))
}

/// Asserts `resetsAt` is the New York midnight expected between `lo` and `hi` (computed
/// before and after the request, so a test running across midnight still passes).
#[track_caller]
fn assert_reset(resets_at: i64, lo: i64, hi: i64) {
    assert!(
        resets_at == lo || resets_at == hi,
        "resetsAt {resets_at} is not the next New York midnight ({lo})"
    );
}

/// Asserts the 429 of a spent allowance: its body and `resetsAt`. (`Retry-After` has a test
/// of its own, so that its absence does not hide the other rules.)
async fn expect_spent(r: Reply, lo: i64) -> Reply {
    let hi = expected_reset();
    let body = r.expect_error(429);
    assert_keys(body, &["ok", "error", "code", "resetsAt"]);
    let resets_at = body["resetsAt"].as_i64().expect("resetsAt ms");
    assert_reset(resets_at, lo, hi);
    r
}

/// Asserts a 429's `Retry-After`: whole seconds, > 0, until its `resetsAt`.
#[track_caller]
fn expect_retry_after(r: &Reply) {
    let resets_at = r.body["resetsAt"].as_i64().expect("resetsAt ms");
    let retry = r
        .header("retry-after")
        .unwrap_or_else(|| panic!("{}: a 429 without Retry-After: {}", r.what, r.text));
    let retry: i64 = retry
        .parse()
        .unwrap_or_else(|_| panic!("Retry-After is not whole seconds: {retry:?}"));
    let until = (resets_at - now_ms()) / 1000;
    assert!(
        retry > 0 && (retry - until).abs() <= 5,
        "Retry-After {retry}, reset in {until} s"
    );
}

#[tokio::test]
async fn a_spent_allowance_answers_429_with_retry_after_in_whole_seconds() {
    let s =
        Server::start_with(&["--limit-reads-per-day", "3", "--limit-writes-per-day", "1"]).await;
    let api = s.api();
    api.new_project("One").await;
    let lo = expected_reset();
    // Writes spent: a write is refused, a read still goes.
    let r = expect_spent(api.post("/projects", json!({ "name": "Two" })).await, lo).await;
    expect_retry_after(&r);
    api.get("/projects").await.expect(200);
    api.get("/projects").await.expect(200);
    // Reads spent: everything is refused.
    let r = expect_spent(api.get("/projects").await, lo).await;
    expect_retry_after(&r);
}

#[test]
fn the_server_resets_at_new_york_midnight_on_daylight_saving_days_too() {
    use workboard::allowance::next_reset;
    // The spring-forward day (23 h) and the fall-back day (25 h) of 2026.
    let spring = ms("2026-03-08T05:00:00Z");
    assert_eq!(next_reset(spring), ms("2026-03-09T04:00:00Z"));
    assert_eq!(next_reset(spring) - spring, 23 * 3_600_000);
    let fall = ms("2026-11-01T04:00:00Z");
    assert_eq!(next_reset(fall), ms("2026-11-02T05:00:00Z"));
    assert_eq!(next_reset(fall) - fall, 25 * 3_600_000);
    // One millisecond before midnight belongs to the old day; midnight starts the new one.
    assert_eq!(
        next_reset(ms("2026-03-09T03:59:59.999Z")),
        ms("2026-03-09T04:00:00Z")
    );
    assert_eq!(
        next_reset(ms("2026-03-09T04:00:00Z")),
        ms("2026-03-10T04:00:00Z")
    );
    // Every quarter hour around both changes agrees with the zoned computation here.
    for (from, to) in [
        ("2026-03-06T00:00:00Z", "2026-03-11T00:00:00Z"),
        ("2026-10-30T00:00:00Z", "2026-11-04T00:00:00Z"),
    ] {
        let mut t = ms(from);
        while t < ms(to) {
            let ts = Timestamp::from_millisecond(t).unwrap();
            assert_eq!(next_reset(t), ny_midnight_after(ts), "at {ts}");
            t += 15 * 60_000;
        }
    }
}

#[tokio::test]
async fn the_request_past_the_allowance_is_429_while_another_key_still_works() {
    let s = Server::start_with(&["--limit-reads-per-day", "6"]).await;
    let api = s.api();
    let r = api.post("/keys", json!({ "label": "other" })).await;
    let other = s.api_for(&str_of(&r.expect_ok(201)["key"]));
    assert_eq!(int_header(&r, "ratelimit-remaining"), 5);
    for i in 2..=6 {
        let r = api.get("/projects").await;
        r.expect(200);
        assert_eq!(int_header(&r, "ratelimit-remaining"), 6 - i, "request {i}");
    }
    let lo = expected_reset();
    let r = api.get("/projects").await;
    assert_eq!(int_header(&r, "ratelimit-remaining"), 0);
    assert_eq!(int_header(&r, "ratelimit-limit"), 6);
    expect_spent(r, lo).await;
    // Every route and method is refused for this key, even one that would be 404.
    expect_spent(api.post("/projects", json!({ "name": "x" })).await, lo).await;
    expect_spent(api.get("/usage").await, lo).await;
    expect_spent(api.get("/tasks/t_nothere").await, lo).await;
    expect_spent(api.send(Method::POST, "/undo", None).await, lo).await;

    // The other key of the same account has its own allowance.
    let r = other.get("/projects").await;
    r.expect(200);
    assert_eq!(int_header(&r, "ratelimit-remaining"), 5);
    other.new_project("Still possible").await;
    let usage = other.get("/usage").await.expect_ok(200).clone();
    assert_eq!(usage["reads"], json!({ "used": 3, "limit": 6 }));
    assert_eq!(usage["writes"], json!({ "used": 1, "limit": 3000 }));
    expect_spent(api.get("/projects").await, lo).await;
}

#[tokio::test]
async fn spent_writes_refuse_every_write_but_reads_go_on_and_refusals_do_not_count() {
    let s = Server::start_with(&["--limit-writes-per-day", "2"]).await;
    let api = s.api();
    let pid = api.new_project("A").await;
    api.patch(&format!("/projects/{pid}"), json!({ "name": "B" }))
        .await
        .expect_ok(200);
    let lo = expected_reset();
    expect_spent(api.post("/projects", json!({ "name": "C" })).await, lo).await;
    expect_spent(
        api.patch(&format!("/projects/{pid}"), json!({ "name": "D" }))
            .await,
        lo,
    )
    .await;
    expect_spent(api.delete(&format!("/projects/{pid}")).await, lo).await;
    expect_spent(api.send(Method::POST, "/undo", None).await, lo).await;
    expect_spent(api.post("/keys", json!({})).await, lo).await;

    let projects = api.projects("").await;
    assert_eq!(projects.len(), 1, "a refused write landed");
    assert_eq!(projects[0]["name"], json!("B"));
    // Two writes, one read and this usage read: the five 429s counted nowhere.
    let r = api.get("/usage").await;
    let body = r.expect_ok(200);
    assert_eq!(
        body["reads"],
        json!({ "used": 4, "limit": 9000 }),
        "{}",
        r.text
    );
    assert_eq!(
        body["writes"],
        json!({ "used": 2, "limit": 2 }),
        "{}",
        r.text
    );
    let r = api.get("/usage").await;
    assert_eq!(r.expect_ok(200)["reads"]["used"], json!(5));
    assert_eq!(int_header(&r, "ratelimit-remaining"), 9000 - 5);
}

#[tokio::test]
async fn every_keyed_reply_carries_the_ratelimit_headers() {
    let s = Server::start().await;
    let api = s.api();
    let requests: Vec<(&str, Reply)> = vec![
        ("GET /projects", api.get("/projects").await),
        ("404", api.get("/tasks/t_nothere").await),
        ("422", api.post("/projects", json!({ "name": "" })).await),
        ("400", api.post_text("/projects", "{nope").await),
        ("discovery", api.raw().get("/api/v1").await),
        ("unversioned", api.unversioned().get("/usage").await),
        ("unknown route", api.get("/nothing/here").await),
    ];
    let mut expected_remaining = 9000;
    for (what, r) in &requests {
        expected_remaining -= 1;
        assert_eq!(int_header(r, "ratelimit-limit"), 9000, "{what}");
        assert_eq!(
            int_header(r, "ratelimit-remaining"),
            expected_remaining,
            "{what}: {}",
            r.status
        );
        let reset = int_header(r, "ratelimit-reset");
        let until = (expected_reset() - now_ms()) as f64 / 1000.0;
        assert!(
            reset > 0 && reset <= 25 * 3600,
            "{what}: RateLimit-Reset {reset}"
        );
        assert!(
            (reset as f64 - until).abs() <= 3.0,
            "{what}: RateLimit-Reset {reset}, New York midnight in {until} s"
        );
    }
    // Requests with a bad key count for nobody and carry no allowance.
    let bad = s.api_for("wb_notakeyatallnotakeyatallnotakeyatallnotakey");
    let r = bad.get("/projects").await;
    r.expect_error(401);
    let r = api.get("/projects").await;
    assert_eq!(
        int_header(&r, "ratelimit-remaining"),
        expected_remaining - 1
    );

    // Another key counts from the full allowance.
    let r = api.post("/keys", json!({})).await;
    let other = s.api_for(&str_of(&r.expect_ok(201)["key"]));
    let r = other.get("/projects").await;
    assert_eq!(int_header(&r, "ratelimit-remaining"), 8999);
}

#[tokio::test]
async fn usage_reports_storage_and_the_calling_keys_allowance_with_the_new_york_reset() {
    let s = Server::start().await;
    let api = s.api();
    let r = api.post("/keys", json!({})).await;
    let other = s.api_for(&str_of(&r.expect_ok(201)["key"]));
    other.get("/projects").await.expect(200);
    other.new_project("P").await;
    let lo = expected_reset();
    let r = other.get("/usage").await;
    let hi = expected_reset();
    let body = r.expect_ok(200);
    assert_keys(
        body,
        &[
            "ok",
            "used",
            "limit",
            "purgeable",
            "reads",
            "writes",
            "resetsAt",
        ],
    );
    assert_eq!(
        body["reads"],
        json!({ "used": 3, "limit": 9000 }),
        "{}",
        r.text
    );
    assert_eq!(
        body["writes"],
        json!({ "used": 1, "limit": 3000 }),
        "{}",
        r.text
    );
    assert_eq!(body["limit"], json!(16_777_216));
    assert!(
        body["used"].as_i64().unwrap() > 0,
        "a project takes space: {}",
        r.text
    );
    assert_eq!(body["purgeable"], json!(0));
    let resets_at = body["resetsAt"].as_i64().expect("resetsAt");
    assert_reset(resets_at, lo, hi);
    let now = now_ms();
    assert!(resets_at > now && resets_at <= now + 25 * 3_600_000);

    // The first key's own count: the POST /keys and this read.
    let r = api.get("/usage").await;
    let body = r.expect_ok(200);
    assert_eq!(
        body["reads"],
        json!({ "used": 2, "limit": 9000 }),
        "{}",
        r.text
    );
    assert_eq!(
        body["writes"],
        json!({ "used": 1, "limit": 3000 }),
        "{}",
        r.text
    );
    // Storage is the account's, the same for both keys.
    assert_eq!(
        body["used"],
        other.get("/usage").await.expect_ok(200)["used"]
    );
}

#[tokio::test]
async fn counts_survive_a_restart_within_a_few_seconds() {
    let mut s = Server::start_with(&["--limit-reads-per-day", "5"]).await;
    let api = s.api();
    let r = api.post("/keys", json!({})).await;
    let key = str_of(&r.expect_ok(201)["key"]);
    let other_id = str_of(&r.body["id"]);
    let other = s.api_for(&key);
    for _ in 0..4 {
        api.get("/projects").await.expect(200);
    }
    let lo = expected_reset();
    expect_spent(api.get("/projects").await, lo).await;
    other.get("/projects").await.expect(200);
    other.new_project("P").await;
    other.get("/projects").await.expect(200);

    // Counts are kept in memory and saved every ~2 s (no write per request), so a kill -9
    // may lose up to that much. No route tells saved from unsaved counts: the store does.
    // Once it holds the other key's last read, a save has run after every request above.
    let saved = format!("SELECT reads FROM allowance WHERE key_id = '{other_id}'");
    until(
        "the counts saved",
        Duration::from_secs(15),
        async || match s.stored_number(&saved) {
            Some(reads) if reads >= 2 => Ok(()),
            seen => Err(seen),
        },
    )
    .await;
    s.restart().await;

    expect_spent(s.api().get("/projects").await, lo).await;
    let r = s.api_for(&key).get("/usage").await;
    let body = r.expect_ok(200);
    let reads = body["reads"]["used"].as_i64().expect("reads.used");
    assert!(reads >= 4, "reads lost on restart: {}", r.text);
    assert!(
        body["writes"]["used"].as_i64().unwrap() >= 1,
        "writes lost on restart: {}",
        r.text
    );
    assert_reset(
        body["resetsAt"].as_i64().expect("resetsAt"),
        lo,
        expected_reset(),
    );
}
