//! Caps on hostile input (issue 7, Hostile input; contract: Replies of writes): bodies over
//! the body cap answer 413 `body-bytes`, deep JSON a JSON 4xx, long URLs and huge headers a 4xx
//! or a closed connection, an oversized socket frame closes the socket, idle and slow clients
//! are dropped, and a crowd of idle connections does not keep a write waiting. After each, the
//! server still answers.

use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;

use crate::harness::*;

/// How an exchange over a raw connection ended.
#[derive(Debug, PartialEq)]
enum Ended {
    /// A reply head arrived: its status.
    Status(u16),
    /// The server closed or reset the connection without a reply.
    Closed,
    /// Nothing within the wait.
    Hung,
}

fn addr(s: &Server) -> String {
    s.url("").trim_start_matches("http://").to_string()
}

/// Sends `bytes` on a new connection and waits up to `wait` for a reply head or the end.
async fn exchange(s: &Server, bytes: &[u8], wait: Duration) -> Ended {
    let mut stream = TcpStream::connect(addr(s)).await.expect("connect");
    // The server may refuse and close before taking everything; that is an answer too.
    let _ = stream.write_all(bytes).await;
    ended(&mut stream, wait).await
}

async fn ended(stream: &mut TcpStream, wait: Duration) -> Ended {
    let mut buf = Vec::new();
    let read = tokio::time::timeout(wait, async {
        loop {
            let mut chunk = [0u8; 4096];
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return None,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
            if buf.windows(4).any(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&buf);
                return head.split_whitespace().nth(1).and_then(|s| s.parse().ok());
            }
        }
    })
    .await;
    match read {
        Ok(Some(status)) => Ended::Status(status),
        Ok(None) => Ended::Closed,
        Err(_) => Ended::Hung,
    }
}

/// The server still answers a read and a write (on new connections: a refused request may
/// have ended the client's earlier ones).
async fn assert_alive(s: &Server, after: &str) {
    let http = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("http client");
    let api = Api::new(http, s.url(""), Some(format!("Bearer {}", s.key)));
    let r = api.raw().get("/api/health").await;
    assert_eq!(r.status, 200, "health after {after}: {}", r.text);
    let r = api.post("/projects", json!({ "name": "Still here" })).await;
    assert_eq!(r.status, 201, "a write after {after}: {}", r.text);
}

#[track_caller]
fn assert_refused(ended: &Ended, what: &str) {
    match ended {
        Ended::Status(status) => assert!(
            (400..500).contains(status),
            "{what}: answered {status}, not a 4xx"
        ),
        Ended::Closed => {}
        Ended::Hung => panic!("{what}: no answer and no close within the wait"),
    }
}

#[tokio::test]
async fn a_body_over_the_cap_answers_413_body_bytes() {
    let s = Server::start_with(&["--limit-body-bytes", "1000"]).await;
    let api = s.api();
    let (pid, cid) = api.board().await;
    let fits = json!({ "name": "Small", "folder": "f".repeat(20) }).to_string();
    assert!(fits.len() < 1000);
    api.post_text("/projects", &fits).await.expect_ok(201);
    let over = "x".repeat(1900);
    for (method, path, body) in [
        (
            "POST",
            "/projects".to_string(),
            json!({ "name": "Big", "folder": over }),
        ),
        (
            "POST",
            "/tasks".to_string(),
            json!({ "columnId": cid, "title": "t", "description": over }),
        ),
        ("PATCH", format!("/projects/{pid}"), json!({ "name": over })),
    ] {
        let text = body.to_string();
        assert!((1900..2100).contains(&text.len()));
        let r = api.send(method.parse().unwrap(), &path, Some(text)).await;
        r.expect_error(413);
        assert_eq!(
            r.body["limit"],
            json!("body-bytes"),
            "{method} {path}: {}",
            r.text
        );
    }
    // A chunked body has no length to check up front; it is cut off at the cap all the same.
    let chunk = "y".repeat(500);
    let mut raw = format!(
        "POST /api/v1/projects HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
        s.key
    );
    for part in ["{\"name\":\"", &chunk, &chunk, &chunk, &chunk, "\"}"] {
        raw.push_str(&format!("{:x}\r\n{part}\r\n", part.len()));
    }
    raw.push_str("0\r\n\r\n");
    let ended = exchange(&s, raw.as_bytes(), Duration::from_secs(10)).await;
    assert_eq!(ended, Ended::Status(413), "a chunked body over the cap");
    assert_eq!(
        api.projects("").await.len(),
        2,
        "nothing over the cap was written"
    );
    assert_alive(&s, "bodies over the cap").await;
}

/// A server that refuses a body without reading it all cannot keep the connection; it must
/// say so (`Connection: close`), or a keep-alive client's next request on that connection
/// fails instead of getting an answer.
#[tokio::test]
async fn a_413_that_ends_the_connection_says_so() {
    let s = Server::start_with(&["--limit-body-bytes", "1000"]).await;
    let body = json!({ "name": "x".repeat(100_000) }).to_string();
    let mut stream = TcpStream::connect(addr(&s)).await.expect("connect");
    let head = format!(
        "POST /api/v1/projects HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        s.key,
        body.len()
    );
    stream.write_all(head.as_bytes()).await.expect("send head");
    let _ = stream.write_all(body.as_bytes()).await;
    let (status, reply_head, _) = tokio::time::timeout(
        Duration::from_secs(10),
        crate::shutdown::read_reply(&mut stream),
    )
    .await
    .expect("no reply to a body over the cap");
    assert_eq!(status, 413, "{reply_head}");
    if reply_head
        .to_ascii_lowercase()
        .contains("connection: close")
    {
        return;
    }
    let next = b"GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n";
    let sent = stream.write_all(next).await.is_ok();
    let answered = sent
        && matches!(
            ended(&mut stream, Duration::from_secs(5)).await,
            Ended::Status(200)
        );
    assert!(
        answered,
        "the 413 reply kept the connection alive (no `Connection: close`), yet the next request on it got no answer:\n{reply_head}"
    );
}

#[tokio::test]
async fn the_default_body_cap_is_32_mib() {
    let s = Server::start().await;
    let body = json!({ "name": "Huge", "folder": "z".repeat(33 * 1024 * 1024) }).to_string();
    let r = s.api().post_text("/projects", &body).await;
    r.expect_error(413);
    assert_eq!(r.body["limit"], json!("body-bytes"), "{}", r.text);
    assert_alive(&s, "a 33 MiB body").await;
}

#[tokio::test]
async fn json_nested_past_any_sane_depth_answers_a_json_4xx_and_the_server_lives() {
    let s = Server::start().await;
    let api = s.api();
    let (_, cid) = api.board().await;
    let nest = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    let objects = |depth: usize| format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth));
    for depth in [200, 100_000] {
        let bodies = [
            (
                "/projects",
                format!("{{\"name\":\"Deep\",\"folder\":{}}}", nest(depth)),
            ),
            ("/projects", nest(depth)),
            ("/projects", objects(depth)),
            (
                "/projects",
                format!("{{\"name\":\"Deep\",\"columns\":{}}}", nest(depth)),
            ),
            (
                "/tasks",
                format!(
                    "{{\"tasks\":[{{\"columnId\":\"{cid}\",\"title\":{}}}]}}",
                    nest(depth)
                ),
            ),
            (
                "/tasks",
                format!(
                    "{{\"columnId\":\"{cid}\",\"title\":{{\"before\":{},\"after\":\"x\"}}}}",
                    nest(depth)
                ),
            ),
        ];
        for (path, body) in bodies {
            let r = api.post_text(path, &body).await;
            assert!(
                r.status == 400 || r.status == 422,
                "POST {path} with JSON {depth} deep answered {}: {}",
                r.status,
                &r.text[..r.text.len().min(300)]
            );
            r.expect_error(r.status);
        }
    }
    assert_eq!(api.projects("").await.len(), 1, "nothing deep was written");
    assert_alive(&s, "deeply nested JSON").await;
}

#[tokio::test]
async fn long_urls_and_huge_headers_are_refused_without_harm() {
    let s = Server::start().await;
    let long = "a".repeat(100_000);
    let key = s.key.clone();
    let cases = [
        (
            "a 100 KB path",
            format!(
                "GET /api/v1/tasks/t_{long} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n\r\n"
            ),
        ),
        (
            "a 100 KB query",
            format!(
                "GET /api/v1/projects?name={long} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n\r\n"
            ),
        ),
        (
            "a 1 MB header",
            format!(
                "GET /api/v1/projects HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\nX-Big: {}\r\n\r\n",
                "h".repeat(1_000_000)
            ),
        ),
        (
            "a 1 MB key",
            format!(
                "GET /api/v1/projects HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer wb_{}\r\n\r\n",
                "k".repeat(1_000_000)
            ),
        ),
        (
            "2000 headers",
            format!(
                "GET /api/v1/projects HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n{}\r\n",
                (0..2000)
                    .map(|i| format!("X-H{i}: v\r\n"))
                    .collect::<String>()
            ),
        ),
    ];
    for (what, request) in &cases {
        let ended = exchange(&s, request.as_bytes(), Duration::from_secs(10)).await;
        assert_refused(&ended, what);
    }
    assert_alive(&s, "long URLs and huge headers").await;
}

#[tokio::test]
async fn a_socket_frame_over_64_kib_closes_the_socket() {
    let s = Server::start().await;
    let api = s.api();
    let mut small = crate::live::open(&s, &api).await;
    small
        .send(Message::text("x".repeat(1024)))
        .await
        .expect("send a small frame");
    let mut ws = crate::live::open(&s, &api).await;
    let _ = ws.send(Message::text("x".repeat(100 * 1024))).await;
    let closed = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            match ws.next().await {
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => return,
                Some(Ok(_)) => continue,
            }
        }
    })
    .await;
    assert!(
        closed.is_ok(),
        "a 100 KiB frame did not close the socket within 5 s"
    );
    // A small frame is harmless: that socket still gets its nudges.
    api.new_project("Nudge").await;
    let nudge = crate::live::next_nudge(&mut small, crate::live::NUDGE_WAIT).await;
    assert!(
        nudge.is_some(),
        "the socket that sent a small frame stopped working"
    );
    assert_alive(&s, "an oversized socket frame").await;
}

#[tokio::test]
async fn idle_and_slow_clients_are_dropped() {
    let s = Server::start().await;
    // Bounded waits: there is no event for "the server gave up on me" but the close itself.
    const DROPPED_WITHIN: Duration = Duration::from_secs(20);
    let started = Instant::now();
    let silent = async {
        let mut stream = TcpStream::connect(addr(&s)).await.expect("connect");
        ended(&mut stream, DROPPED_WITHIN).await
    };
    let trickle = async {
        let mut stream = TcpStream::connect(addr(&s)).await.expect("connect");
        let head = b"GET /api/health HTTP/1.1\r\nHost: x\r\nX-Slow: ";
        stream.write_all(head).await.expect("send");
        // One byte a second, never finishing the head.
        let deadline = Instant::now() + DROPPED_WITHIN;
        while Instant::now() < deadline {
            if stream.write_all(b"a").await.is_err() {
                return Ended::Closed;
            }
            if let Ok(e) =
                tokio::time::timeout(Duration::from_secs(1), ended(&mut stream, DROPPED_WITHIN))
                    .await
            {
                return e;
            }
        }
        Ended::Hung
    };
    let (silent, trickle) = tokio::join!(silent, trickle);
    assert!(
        matches!(silent, Ended::Closed | Ended::Status(408)),
        "a client that sends nothing: {silent:?} after {:?}",
        started.elapsed()
    );
    assert!(
        matches!(trickle, Ended::Closed | Ended::Status(408)),
        "a client that trickles its headers: {trickle:?}"
    );
    assert_alive(&s, "idle clients").await;
}

#[tokio::test]
async fn a_crowd_of_idle_connections_does_not_keep_a_write_waiting() {
    let s = Server::start().await;
    let api = s.api();
    let (_, cid) = api.board().await;
    let mut crowd = Vec::new();
    for i in 0..200 {
        let mut stream = TcpStream::connect(addr(&s)).await.expect("connect");
        if i % 2 == 0 {
            // Half of them start a request and stop halfway through its head.
            stream
                .write_all(b"POST /api/v1/tasks HTTP/1.1\r\nHost: x\r\nContent-Le")
                .await
                .expect("send");
        }
        crowd.push(stream);
    }
    let started = Instant::now();
    let body = json!({ "columnId": cid, "title": "Through the crowd" });
    let write = tokio::time::timeout(Duration::from_secs(5), api.post("/tasks", body)).await;
    let took = started.elapsed();
    let r = write.expect("a write did not get through 200 idle connections within 5 s");
    let task: Value = r.expect_ok(201)["task"].clone();
    assert!(
        took < Duration::from_secs(3),
        "the write took {took:?} beside 200 idle connections"
    );
    api.task(&str_of(&task["id"])).await;
    drop(crowd);
    assert_alive(&s, "a crowd of idle connections").await;
}
