//! Secrets and the request log (issue 7, Isolation and secrets; contract: Authentication and
//! abuse, Running it): no key, ticket or pepper ever reaches the log, an error reply or the data
//! folder in clear; the pepper is a private 32-byte file; every request gets one structured
//! log line (method, path without its query, status, duration, request id) and its request id
//! back in `X-Request-Id`.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::json;

use crate::harness::*;

/// The log without its colour escapes (`ESC [ ... m`).
pub fn plain_log(s: &Server) -> String {
    let raw = s.log();
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Every regular file of the data folder, by name.
fn data_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).expect("read the data folder") {
        let entry = entry.expect("entry");
        if entry.file_type().expect("file type").is_file() {
            let name = entry.file_name().to_string_lossy().into_owned();
            files.push((name, std::fs::read(entry.path()).expect("read a data file")));
        }
    }
    files
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).any(|w| w == needle)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The forms a key's secret could be stored or logged in: as sent, decoded, and in hex.
fn forms_of(key: &str) -> Vec<Vec<u8>> {
    let secret = key.strip_prefix("wb_").unwrap_or(key);
    let mut forms = vec![secret.as_bytes().to_vec()];
    // A made-up key of one repeated character decodes to bytes any file may hold.
    let degenerate = secret.bytes().all(|b| Some(b) == secret.bytes().next());
    if let Ok(raw) = URL_SAFE_NO_PAD
        .decode(secret)
        .map_err(|_| ())
        .and_then(|r| if degenerate { Err(()) } else { Ok(r) })
    {
        forms.push(hex(&raw).into_bytes());
        forms.push(raw);
    }
    forms
}

/// A key of the right shape that was never issued.
fn unknown_key() -> String {
    let bytes: [u8; 32] = rand::random();
    format!("wb_{}", URL_SAFE_NO_PAD.encode(bytes))
}

#[tokio::test]
async fn keys_never_appear_in_the_log_in_error_replies_or_in_the_data_folder() {
    let mut s = Server::start().await;
    let first = s.key.clone();
    let (second, account) = s.issue_key(None).await;
    let (third, _) = s.issue_key(Some(&account)).await;
    let r = s
        .api()
        .post("/keys", json!({ "label": "issued over HTTP" }))
        .await;
    let body = r.expect_ok(201).clone();
    let (fourth, fourth_id) = (str_of(&body["key"]), str_of(&body["id"]));
    let keys = [first.clone(), second, third, fourth.clone()];
    for key in &keys {
        assert!(
            key.len() >= 3 + 43,
            "a key carries at least 256 bits: {key}"
        );
        let api = s.api_for(key);
        api.get("/projects").await.expect(200);
        api.post("/projects", json!({ "name": "Used" }))
            .await
            .expect_ok(201);
    }
    let r = s.api().get("/keys").await;
    r.expect_ok(200);
    let listed = r.text;
    for key in &keys {
        assert!(
            !listed.contains(&key[3..]),
            "GET /keys shows a key: {listed}"
        );
    }

    // Bad keys: unknown, malformed, another scheme, and a revoked one.
    s.api()
        .delete(&format!("/keys/{fourth_id}"))
        .await
        .expect_ok(200);
    let unknown = unknown_key();
    let mut bad = vec![unknown.clone(), fourth.clone()];
    for header in [
        format!("Bearer {unknown}"),
        format!("Bearer {fourth}"),
        format!("Basic {unknown}"),
        format!("Bearer {}", &unknown[3..]),
        format!("Bearer wb_{}", "A".repeat(50)),
    ] {
        let r = s.with_header(&header).get("/projects").await;
        r.expect_error(401);
        assert!(
            !r.text.contains(&unknown[3..]),
            "an error reply echoes the key: {}",
            r.text
        );
        assert!(
            !r.text.contains(&fourth[3..]),
            "an error reply echoes the key: {}",
            r.text
        );
    }
    bad.push(format!("wb_{}", "A".repeat(50)));

    // kill -9 leaves the write-ahead log and its index as they were while serving.
    s.kill().await;
    let log = s.log();
    assert!(
        log.contains("workboard::request"),
        "the log has request lines"
    );
    let files = data_files(&s.data_dir());
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert!(
        names.contains(&"pepper") && (on_postgres() || names.contains(&"workboard.db")),
        "{names:?}"
    );
    for key in keys.iter().chain(&bad) {
        let secret = &key[3..];
        assert!(
            !log.contains(secret),
            "the log holds a key's secret ({}...)",
            &key[..8]
        );
        for form in forms_of(key) {
            for (name, bytes) in &files {
                assert!(
                    !contains(bytes, &form),
                    "{name} holds a key ({}...) in clear",
                    &key[..8]
                );
            }
        }
    }
}

#[tokio::test]
async fn the_pepper_is_a_private_32_byte_file_that_never_reaches_the_log() {
    let mut s = Server::start().await;
    s.api().get("/projects").await.expect(200);
    let path = s.data_dir().join("pepper");
    let meta = std::fs::metadata(&path).expect("the pepper file exists");
    assert_eq!(
        meta.permissions().mode() & 0o777,
        0o600,
        "the pepper's mode"
    );
    assert_eq!(meta.len(), 32, "the pepper's size");
    let dir = std::fs::metadata(s.data_dir()).expect("data folder");
    assert_eq!(
        dir.permissions().mode() & 0o777,
        0o700,
        "a data folder the server creates"
    );
    let pepper = std::fs::read(&path).expect("read the pepper");
    s.kill().await;
    let log = s.log();
    for form in [
        hex(&pepper),
        URL_SAFE_NO_PAD.encode(&pepper),
        base64::engine::general_purpose::STANDARD.encode(&pepper),
    ] {
        assert!(!log.contains(&form), "the log holds the pepper");
    }
    for (name, bytes) in data_files(&s.data_dir()) {
        if name != "pepper" {
            assert!(!contains(&bytes, &pepper), "{name} holds the pepper");
        }
    }
}

#[tokio::test]
async fn socket_tickets_never_reach_the_log() {
    let s = Server::start().await;
    let api = s.api();
    let ticket = crate::live::ticket(&api).await;
    let _ws = crate::live::connect(&s, &ticket).await;
    let unused = crate::live::ticket(&api).await;
    let ws_url = |q: &str| {
        s.url(&format!("/api/v1/live?{q}"))
            .replacen("http://", "ws://", 1)
    };
    // A used ticket, a ticket with an unknown parameter beside it, and a made-up ticket.
    for q in [
        format!("ticket={ticket}"),
        format!("ticket={unused}&other=1"),
        "ticket=MadeUpTicketValue0123456789abcdef".to_string(),
    ] {
        let refused = tokio_tungstenite::connect_async(ws_url(&q).as_str()).await;
        assert!(refused.is_err(), "the socket opened with {q}");
    }
    let log = plain_log(&s);
    for secret in [
        &ticket,
        &unused,
        &"MadeUpTicketValue0123456789abcdef".to_string(),
    ] {
        assert!(
            !log.contains(secret.as_str()),
            "the log holds a ticket: {log}"
        );
    }
    assert!(
        !log.contains("ticket="),
        "the log holds a query string: {log}"
    );
    let socket_lines: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("workboard::request") && l.contains("path=/api/v1/live "))
        .collect();
    assert!(
        socket_lines.len() >= 4,
        "each socket request is logged by its path: {log}"
    );
    assert!(
        socket_lines.iter().any(|l| l.contains("status=101")),
        "the upgrade is logged: {socket_lines:?}"
    );
}

/// The `key=value` fields of the request log line carrying `request_id`; panics unless there
/// is exactly one.
fn line_of(log: &str, request_id: &str) -> Vec<(String, String)> {
    let needle = format!("request_id={request_id} ");
    let lines: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("workboard::request") && l.contains(&needle))
        .collect();
    assert_eq!(lines.len(), 1, "request {request_id}: log lines {lines:?}");
    lines[0]
        .split_whitespace()
        .filter_map(|t| t.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn valid_request_id(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// One request of the log test: method, path, whether it carries the key, body,
/// `X-Request-Id` sent, status expected.
type Case<'a> = (
    &'a str,
    &'a str,
    bool,
    Option<&'a str>,
    Option<&'a str>,
    u16,
);

#[tokio::test]
async fn every_request_has_one_log_line_and_its_request_id_echoed() {
    let s = Server::start().await;
    let http = reqwest::Client::builder().no_proxy().build().expect("http");
    let bearer = format!("Bearer {}", s.key);
    let lines_before = plain_log(&s).matches("workboard::request").count();
    let long_ok = "a".repeat(64);
    let too_long = "b".repeat(65);
    let cases: Vec<Case> = vec![
        (
            "GET",
            "/api/v1/projects?completed=all",
            true,
            None,
            Some("trace-Abc_123"),
            200,
        ),
        (
            "POST",
            "/api/v1/projects",
            true,
            Some(r#"{"name":"Logged"}"#),
            Some("create-1"),
            201,
        ),
        (
            "GET",
            "/api/v1/tasks/t_nothere",
            true,
            None,
            Some(&long_ok),
            404,
        ),
        (
            "GET",
            "/api/v1/projects",
            false,
            None,
            Some("keyless-403"),
            403,
        ),
        (
            "POST",
            "/api/v1/projects",
            true,
            Some(r#"{"nope":1}"#),
            Some("unknown-field"),
            422,
        ),
        ("GET", "/api/health", false, None, Some("health_1"), 200),
        ("GET", "/api/v1/projects", true, None, None, 200),
        ("GET", "/api/v1/projects", true, None, None, 200),
        ("GET", "/api/v1/projects", true, None, Some("bad.id"), 200),
        ("GET", "/api/v1/projects", true, None, Some(&too_long), 200),
    ];
    let mut echoed = Vec::new();
    for (method, path, keyed, body, sent, status) in &cases {
        let mut req = http.request(method.parse().unwrap(), s.url(path));
        if *keyed {
            req = req.header("authorization", &bearer);
        }
        if let Some(b) = body {
            req = req
                .header("content-type", "application/json")
                .body(b.to_string());
        }
        if let Some(id) = sent {
            req = req.header("x-request-id", *id);
        }
        let resp = req.send().await.expect("request");
        assert_eq!(resp.status().as_u16(), *status, "{method} {path}");
        let id = resp
            .headers()
            .get("x-request-id")
            .unwrap_or_else(|| panic!("{method} {path}: no X-Request-Id"))
            .to_str()
            .expect("ascii")
            .to_string();
        assert!(valid_request_id(&id), "{method} {path}: request id {id:?}");
        match sent {
            Some(sent) if valid_request_id(sent) => {
                assert_eq!(&id, sent, "{method} {path}: a valid client id is kept")
            }
            Some(sent) => assert_ne!(
                &id, sent,
                "{method} {path}: an invalid client id is replaced"
            ),
            None => {}
        }
        echoed.push(id);
    }
    let unique: std::collections::BTreeSet<&String> = echoed.iter().collect();
    assert_eq!(
        unique.len(),
        echoed.len(),
        "generated request ids repeat: {echoed:?}"
    );

    let log = plain_log(&s);
    assert_eq!(
        log.matches("workboard::request").count() - lines_before,
        cases.len(),
        "one log line per request"
    );
    for ((method, path, _, _, _, status), id) in cases.iter().zip(&echoed) {
        let fields = line_of(&log, id);
        let get = |k: &str| {
            fields
                .iter()
                .find(|(name, _)| name == k)
                .map(|(_, v)| v.clone())
                .unwrap_or_else(|| panic!("request {id}: no `{k}` in {fields:?}"))
        };
        assert_eq!(get("method"), *method, "request {id}");
        assert_eq!(
            get("path"),
            path.split('?').next().unwrap(),
            "request {id}: path without its query"
        );
        assert_eq!(get("status"), status.to_string(), "request {id}");
        assert!(
            get("micros").parse::<u64>().is_ok(),
            "request {id}: micros {:?}",
            get("micros")
        );
    }
}
