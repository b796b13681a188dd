//! Request bodies and the edge (issue 32, "One account can never hurt another"; contract:
//! Additions, round 3): an object wider than any route takes is refused at once while every
//! other request is answered; duplicate keys are still refused; each route has its own body
//! cap; one budget bounds the bytes held in bodies across the process (under `--trust-proxy`
//! too); a body must keep a minimum rate; request heads are capped at 64 KiB.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::harness::*;
use crate::shutdown::read_reply;

/// `{"k0":0,"k1":1,...}` with `keys` distinct keys.
fn wide_object(keys: usize) -> String {
    let mut out = String::with_capacity(keys * 12);
    out.push('{');
    for i in 0..keys {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&format!("\"k{i}\":{i}"));
    }
    out.push('}');
    out
}

#[tokio::test]
async fn an_object_of_160000_keys_is_refused_while_other_requests_are_answered() {
    let s = Server::start().await;
    let api = s.api();
    let (_, cid) = api.board().await;
    let wide = wide_object(160_000);
    // Two of them at once (the issue's two requests that froze every account), beside a
    // health check, a read and a write.
    let task = str_of(&api.new_task(&cid, "wide target").await["id"]);
    let (raw, task) = (api.raw(), format!("/tasks/{task}"));
    let (a, b, health, read, write) = tokio::join!(
        api.post_text("/tasks", &wide),
        api.patch_text(&task, &wide),
        raw.get("/api/health"),
        api.get("/projects"),
        api.post("/tasks", json!({"columnId": cid, "title": "beside"})),
    );
    for r in [&a, &b] {
        let body = r.expect_code(422, "object_too_wide");
        assert!(
            body["limit"].as_u64().is_some_and(|n| n < 1000),
            "{}",
            r.text
        );
    }
    health.expect(200);
    read.expect(200);
    write.expect_ok(201);
    // Inside a list, and inside an import file: refused the same way.
    let nested = format!("{{\"tasks\":[{{\"columnId\":\"{cid}\",\"title\":{wide}}}]}}");
    api.post_text("/tasks", &nested)
        .await
        .expect_code(422, "object_too_wide");
    let file = format!(
        "{{\"version\":1,\"now\":0,\"projects\":[{{\"name\":\"P\",\"columns\":[{{\"name\":\"C\",\"tasks\":[{wide}]}}]}}]}}"
    );
    api.post_text("/import", &file)
        .await
        .expect_code(422, "object_too_wide");
    assert_eq!(api.projects("").await.len(), 1, "nothing wide was written");
}

#[tokio::test]
async fn a_key_named_twice_is_still_refused_in_narrow_and_wide_objects() {
    let s = Server::start().await;
    let api = s.api();
    let (_, cid) = api.board().await;
    let r = api
        .post_text(
            "/tasks",
            &format!("{{\"columnId\":\"{cid}\",\"title\":\"a\",\"title\":\"b\"}}"),
        )
        .await;
    assert_eq!(r.expect_code(400, "duplicate_key")["field"], json!("title"));
    // Past the few keys checked by a scan, a set finds the repeat.
    let mut wide = wide_object(40);
    wide.pop();
    wide.push_str(",\"k7\":0}");
    let r = api.post_text("/tasks", &wide).await;
    assert_eq!(r.expect_code(400, "duplicate_key")["field"], json!("k7"));
}

/// A JSON body of exactly `len` bytes: a small object padded with spaces.
fn body_of(len: usize) -> String {
    let core = "{\"title\":\"x\"}";
    assert!(len >= core.len());
    format!("{core}{}", " ".repeat(len - core.len()))
}

#[tokio::test]
async fn each_route_has_its_own_body_cap() {
    let s = Server::start().await;
    let api = s.api();
    let discovery = api.raw().get("/api/v1").await;
    let caps = discovery.expect(200)["bodyLimits"]["caps"]
        .as_array()
        .expect("bodyLimits.caps")
        .clone();
    let openapi = api.raw().get("/api/v1/openapi.json").await;
    let openapi = openapi.expect(200).clone();
    assert!(caps.len() >= 14, "{caps:?}");
    let body_bytes = discovery.body["limits"]["body-bytes"].as_u64().unwrap();
    let mut smaller = 0;
    for cap in &caps {
        let method = cap["method"].as_str().unwrap();
        let path = cap["path"].as_str().unwrap();
        let bytes = cap["bytes"].as_u64().unwrap();
        assert!(bytes <= body_bytes, "{method} {path}: {bytes}");
        if bytes < body_bytes {
            smaller += 1;
        }
        // The OpenAPI document names the same cap on the operation.
        let op = &openapi["paths"][path][method.to_ascii_lowercase()];
        assert_eq!(op["x-body-limit-bytes"], json!(bytes), "{method} {path}");
        assert!(
            op["responses"]["413"]["description"]
                .as_str()
                .is_some_and(|d| d.contains(&bytes.to_string())),
            "{method} {path}: {}",
            op["responses"]["413"]
        );
        let relative = path.trim_start_matches("/api/v1").replace("{id}", "x_1");
        let over = api
            .send(
                method.parse().unwrap(),
                &relative,
                Some(body_of(bytes as usize + 1)),
            )
            .await;
        assert_eq!(
            over.status, 413,
            "{method} {path} over {bytes}: {}",
            over.text
        );
        assert_eq!(over.body["limit"], json!("body-bytes"), "{method} {path}");
        let under = api
            .send(
                method.parse().unwrap(),
                &relative,
                Some(body_of(bytes as usize)),
            )
            .await;
        assert_ne!(
            under.status, 413,
            "{method} {path} at {bytes}: {}",
            under.text
        );
        assert!(
            under.body["ok"] == json!(false) || under.status < 300,
            "{method} {path} at {bytes}: {}",
            under.text
        );
    }
    // The small routes are capped well below the 32 MiB of an import.
    assert!(smaller >= 10, "only {smaller} routes below body-bytes");
}

/// Opens a connection with `key` and sends the head of a task create declaring `declared`
/// bytes, and `sent` of them. The head asks `Expect: 100-continue`, and the body's start
/// goes only once the server answers `100 Continue`: its handler reads the body only after
/// reserving the declared length, so from then on the reservation is held.
async fn hold_body(s: &Server, key: &str, declared: usize, sent: &[u8]) -> TcpStream {
    let mut stream = TcpStream::connect(s.addr()).await.expect("connect");
    let head = format!(
        "POST /api/v1/tasks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n\
         Content-Type: application/json\r\nContent-Length: {declared}\r\n\
         Expect: 100-continue\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.expect("the head");
    let mut interim = Vec::new();
    while !interim.ends_with(b"\r\n\r\n") {
        let byte = tokio::time::timeout(Duration::from_secs(10), stream.read_u8())
            .await
            .expect("the server goes on to read the body")
            .expect("the connection stays open");
        interim.push(byte);
    }
    let interim = String::from_utf8_lossy(&interim);
    assert!(interim.starts_with("HTTP/1.1 100"), "{interim}");
    stream.write_all(sent).await.expect("the body's start");
    stream
}

/// A task create of exactly `len` bytes.
fn task_of(cid: &str, len: usize) -> String {
    let core = json!({"columnId": cid, "title": "padded"}).to_string();
    format!("{core}{}", " ".repeat(len - core.len()))
}

/// A new account with a board: its client, its key and the id of its column.
async fn account(s: &Server) -> (Api, String, String) {
    let (key, _) = s.issue_key(None).await;
    let api = s.api_for(&key);
    let (_, cid) = api.board().await;
    (api, key, cid)
}

#[tokio::test]
async fn the_body_budget_refuses_with_503_at_once_and_is_given_back() {
    // A budget of 200,000 bytes, 50,000 of them for one account's bodies. Behind a trusted
    // proxy the budget holds all the same: it is the process's.
    let s = Server::start_with(&["--limit-body-budget-bytes", "200000", "--trust-proxy"]).await;
    let api = s.api();
    let (_, cid) = api.board().await;
    let first = task_of(&cid, 40_000);
    let mut held = hold_body(&s, &s.key, first.len(), &first.as_bytes()[..1000]).await;
    // The same account's second body passes its share: refused at once, nothing read.
    let r = api.post_text("/tasks", &task_of(&cid, 40_000)).await;
    r.expect_code(503, "body_budget");
    assert!(r.header("retry-after").is_some(), "{:?}", r.headers);
    // Another account's body of the same size is taken.
    let (b, _, b_column) = account(&s).await;
    b.post_text("/tasks", &task_of(&b_column, 40_000))
        .await
        .expect_ok(201);
    // Three more accounts hold 40,000 each: 160,000 of 200,000 are held.
    let mut others = Vec::new();
    for _ in 0..3 {
        let (_, key, column) = account(&s).await;
        let body = task_of(&column, 40_000);
        others.push(hold_body(&s, &key, body.len(), &body.as_bytes()[..1000]).await);
    }
    let (e, _, e_column) = account(&s).await;
    let r = e.post_text("/tasks", &task_of(&e_column, 45_000)).await;
    r.expect_code(503, "body_budget");
    assert!(r.header("retry-after").is_some(), "{:?}", r.headers);
    // A small body still fits beside them.
    e.post("/tasks", json!({"columnId": e_column, "title": "small"}))
        .await
        .expect_ok(201);
    // The first held body completes and lands; its share goes back, and the 45,000 fits.
    held.write_all(&first.as_bytes()[1000..])
        .await
        .expect("the rest");
    let (status, head, body) = read_reply(&mut held).await;
    assert_eq!(status, 201, "{head}{}", String::from_utf8_lossy(&body));
    e.post_text("/tasks", &task_of(&e_column, 45_000))
        .await
        .expect_ok(201);
    drop(others);
}

/// Sends a chunked task create, `chunk` bytes of padding every `every`, `chunks` times, then
/// the end; answers what the server said before it closed.
async fn chunked(s: &Server, cid: &str, chunk: usize, every: Duration, chunks: usize) -> String {
    let mut stream = TcpStream::connect(s.addr()).await.expect("connect");
    let head = format!(
        "POST /api/v1/tasks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
        s.key
    );
    let start = json!({"columnId": cid, "title": "chunked"}).to_string();
    let frame = |part: &str| format!("{:x}\r\n{part}\r\n", part.len());
    let _ = stream.write_all(head.as_bytes()).await;
    let _ = stream.write_all(frame(&start).as_bytes()).await;
    let pad = " ".repeat(chunk);
    for _ in 0..chunks {
        // Time is what is tested: a body's rate over time against the minimum.
        tokio::time::sleep(every).await;
        if stream.write_all(frame(&pad).as_bytes()).await.is_err() {
            break;
        }
    }
    let _ = stream.write_all(b"0\r\n\r\n").await;
    let mut got = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(20), stream.read_to_end(&mut got)).await;
    String::from_utf8_lossy(&got).into_owned()
}

#[tokio::test]
async fn a_body_slower_than_the_minimum_rate_answers_408_and_one_that_keeps_it_lands() {
    let s = Server::start_with(&[
        "--limit-body-seconds",
        "1",
        "--limit-body-bytes-per-second",
        "2000",
    ])
    .await;
    let api = s.api();
    let (_, cid) = api.board().await;
    // 4,000 bytes a second, for three times the grace: it keeps the rate, so it lands.
    let kept = chunked(&s, &cid, 1000, Duration::from_millis(250), 12).await;
    assert!(kept.starts_with("HTTP/1.1 201"), "{kept}");
    // 400 bytes a second: owed 2 s for its 4,000 declared bytes after a grace of 1 s, it is
    // cut off with 408 and the connection closes.
    let body = task_of(&cid, 4000);
    let mut stream = hold_body(&s, &s.key, body.len(), &body.as_bytes()[..100]).await;
    let mut sent = 100;
    let mut got = Vec::new();
    while sent < body.len() {
        // Time is what is tested: 100 bytes every 250 ms, under the minimum rate.
        tokio::time::sleep(Duration::from_millis(250)).await;
        if stream
            .write_all(&body.as_bytes()[sent..sent + 100])
            .await
            .is_err()
        {
            break;
        }
        sent += 100;
        let mut chunk = [0u8; 4096];
        if let Ok(Ok(n)) =
            tokio::time::timeout(Duration::from_millis(1), stream.read(&mut chunk)).await
        {
            got.extend_from_slice(&chunk[..n]);
            if n == 0 {
                break;
            }
        }
    }
    let closed = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut got))
        .await
        .is_ok();
    let said = String::from_utf8_lossy(&got);
    assert!(closed, "the connection stayed open after: {said}");
    assert!(said.starts_with("HTTP/1.1 408"), "{said}");
    assert!(said.contains("request_timeout"), "{said}");
    assert!(sent < body.len(), "the slow body was read whole");
    let titles: Vec<Value> = tasks_of(&api.account().await["projects"][0])
        .iter()
        .map(|t| t["title"].clone())
        .collect();
    assert_eq!(titles, vec![json!("chunked")], "the slow body landed");
}

/// A `GET /api/health` whose head is exactly `len` bytes.
fn head_of(len: usize) -> String {
    let start = "GET /api/health HTTP/1.1\r\nHost: x\r\nX-Pad: ";
    let end = "\r\n\r\n";
    format!("{start}{}{end}", "p".repeat(len - start.len() - end.len()))
}

#[tokio::test]
async fn a_request_head_over_64_kib_is_refused_and_one_at_it_is_answered() {
    let s = Server::start().await;
    for (len, expect) in [(64 * 1024, 200), (64 * 1024 + 1, 431), (70 * 1024, 431)] {
        let mut stream = TcpStream::connect(s.addr()).await.expect("connect");
        let _ = stream.write_all(head_of(len).as_bytes()).await;
        let mut got = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(10), async {
            let mut chunk = [0u8; 4096];
            while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut chunk).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => got.extend_from_slice(&chunk[..n]),
                }
            }
        })
        .await;
        let said = String::from_utf8_lossy(&got);
        assert!(
            said.starts_with(&format!("HTTP/1.1 {expect}")),
            "a head of {len} bytes: {said}"
        );
    }
}
