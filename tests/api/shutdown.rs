//! Graceful shutdown (issue 7, Faults; contract: Running it): on SIGTERM or SIGINT a request
//! in flight still completes, an open live socket gets a close frame (1001), the process exits
//! 0, the write-ahead log is folded into the store, and a restart shows the write.
//!
//! These tests spawn `workboard serve` themselves, because they need the process's pid and its
//! exit status; the restart afterwards goes through the harness.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::Child;
use tokio_tungstenite::connect_async;
use tokio_tungstenite::tungstenite::Message;

use crate::harness::*;

/// How long the process may take to exit after the signal.
const EXIT_WAIT: Duration = Duration::from_secs(5);
const CARDS: usize = 200;

/// A `workboard serve` this test spawned and owns.
struct Spawned {
    child: Child,
    addr: String,
    key: String,
}

impl Spawned {
    async fn start(data: &Path, log: PathBuf) -> Spawned {
        let log = std::fs::File::create(log).expect("log file");
        let mut cmd = command();
        cmd.args(["serve", "--addr", "127.0.0.1:0", "--data"])
            .arg(data);
        if let Some(url) = database_of(data) {
            cmd.args(["--database", &url]);
        }
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log))
            .spawn()
            .expect("spawn workboard serve");
        let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let (mut key, mut addr) = (String::new(), String::new());
        tokio::time::timeout(Duration::from_secs(20), async {
            while let Some(line) = lines.next_line().await.expect("stdout") {
                if let Some(k) = line.strip_prefix("key: ") {
                    key = k.trim().to_string();
                } else if let Some(a) = line.strip_prefix("listening: ") {
                    addr = a.trim().to_string();
                    return;
                }
            }
            panic!("the server exited before `listening:`");
        })
        .await
        .expect("no `listening:` within 20 s");
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        assert!(
            key.starts_with("wb_"),
            "a fresh folder prints its first key"
        );
        Spawned { child, addr, key }
    }

    fn api(&self) -> Api {
        let http = reqwest::Client::builder()
            .no_proxy()
            .build()
            .expect("http client");
        Api::new(
            http,
            format!("http://{}", self.addr),
            Some(format!("Bearer {}", self.key)),
        )
    }

    fn signal(&self, signal: i32) {
        let pid = self.child.id().expect("the server is running") as i32;
        // SAFETY: sends a signal to the process this test spawned and still owns.
        let rc = unsafe { libc::kill(pid, signal) };
        assert_eq!(rc, 0, "kill({pid}, {signal})");
    }

    /// Waits for the process to end; panics if it does not within `EXIT_WAIT`.
    async fn exit_code(&mut self) -> Option<i32> {
        let status = tokio::time::timeout(EXIT_WAIT, self.child.wait())
            .await
            .expect("the server did not exit within 5 s of the signal")
            .expect("wait for the server");
        status.code()
    }
}

/// Reads one HTTP/1.1 reply with a `content-length` body: (status, head, body).
pub async fn read_reply(stream: &mut TcpStream) -> (u16, String, Vec<u8>) {
    let mut buf = Vec::new();
    let head_end = loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let mut chunk = [0u8; 8192];
        let n = stream.read(&mut chunk).await.expect("read reply");
        assert!(
            n > 0,
            "the connection closed before a reply: {:?}",
            String::from_utf8_lossy(&buf)
        );
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP reply: {head:?}"));
    let length = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse::<usize>().ok())?
        })
        .unwrap_or(0);
    let mut body = buf[head_end..].to_vec();
    while body.len() < length {
        let mut chunk = vec![0u8; length - body.len()];
        let n = stream.read(&mut chunk).await.expect("read body");
        assert!(n > 0, "the connection closed inside the body");
        body.extend_from_slice(&chunk[..n]);
    }
    (status, head, body)
}

fn wal_size(data: &Path) -> u64 {
    std::fs::metadata(data.join("workboard.db-wal")).map_or(0, |m| m.len())
}

/// A board, an open socket and a 200-card batch whose headers the server has taken (it
/// answered `100 Continue`) but whose body is not sent yet; then `signal`; then the checks.
async fn shutdown_with_work_in_flight(signal: i32) {
    let root = empty_root();
    let data = root.path().join("data");
    let mut server = Spawned::start(&data, root.path().join("first.log")).await;
    let api = server.api();
    let (pid, cid) = api.board().await;

    let r = api.post("/live/ticket", json!({})).await;
    let ticket = str_of(&r.expect_ok(200)["ticket"]);
    let url = format!("ws://{}/api/v1/live?ticket={ticket}", server.addr);
    let (mut ws, _) = connect_async(url.as_str()).await.expect("the socket opens");

    let tasks: Vec<Value> = (0..CARDS)
        .map(|i| json!({ "id": format!("t_late{i}"), "columnId": cid, "title": format!("Late {i}"), "description": "d".repeat(20_000) }))
        .collect();
    let body = json!({ "tasks": tasks }).to_string();
    let mut stream = TcpStream::connect(&server.addr).await.expect("connect");
    let head = format!(
        "POST /api/v1/tasks HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: {}\r\n\r\n",
        server.addr,
        server.key,
        body.len()
    );
    stream.write_all(head.as_bytes()).await.expect("send head");
    let mut line = [0u8; 25];
    tokio::time::timeout(Duration::from_secs(5), stream.read_exact(&mut line))
        .await
        .expect("no `100 Continue` within 5 s")
        .expect("read 100 Continue");
    assert!(
        line.starts_with(b"HTTP/1.1 100"),
        "expected `100 Continue`, got {:?}",
        String::from_utf8_lossy(&line)
    );

    server.signal(signal);

    // The socket is told the server is going away.
    let closed = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            match ws.next().await {
                Some(Ok(Message::Close(frame))) => return frame,
                Some(Ok(_)) => continue,
                other => panic!("the socket ended without a close frame: {other:?}"),
            }
        }
    })
    .await
    .expect("no close frame within 5 s of the signal");
    let frame = closed.expect("the close frame carries a code");
    assert_eq!(u16::from(frame.code), 1001, "close frame {frame}");

    // The request in flight still completes.
    stream
        .write_all(body.as_bytes())
        .await
        .expect("send the body after the signal");
    let (status, head, reply) =
        tokio::time::timeout(Duration::from_secs(10), read_reply(&mut stream))
            .await
            .expect("the in-flight request got no reply within 10 s");
    let reply: Value = serde_json::from_slice(&reply).unwrap_or(Value::Null);
    assert_eq!(
        status, 201,
        "the in-flight batch after the signal: {head}{reply}"
    );
    assert_eq!(reply["created"], json!(CARDS), "{reply}");

    assert_eq!(
        server.exit_code().await,
        Some(0),
        "exit status after the signal"
    );
    if !on_postgres() {
        // SQLite's own log, folded back into the database file on a clean stop.
        assert_eq!(
            wal_size(&data),
            0,
            "the write-ahead log is checkpointed on a clean stop"
        );
    }
    assert_eq!(crate::stored::integrity(&data), "ok");

    let key = server.key.clone();
    let s = Server::start_existing(root, key).await;
    let project = s.api().project(&pid).await;
    assert_eq!(
        task_ids(&project).len(),
        CARDS,
        "the batch answered during shutdown is kept"
    );
    assert!(
        s.api().task("t_late199").await["description"]
            .as_str()
            .unwrap()
            .len()
            == 20_000
    );
}

#[tokio::test]
async fn sigterm_finishes_the_request_in_flight_closes_sockets_checkpoints_and_exits_0() {
    shutdown_with_work_in_flight(libc::SIGTERM).await;
}

#[tokio::test]
async fn sigint_stops_as_cleanly_as_sigterm() {
    shutdown_with_work_in_flight(libc::SIGINT).await;
}

#[tokio::test]
async fn an_idle_server_stops_on_sigterm_with_every_write_kept_and_the_log_folded_in() {
    let root = empty_root();
    let data = root.path().join("data");
    let mut server = Spawned::start(&data, root.path().join("first.log")).await;
    let api = server.api();
    let (pid, cid) = api.board().await;
    for i in 0..20 {
        api.new_task(&cid, &format!("Card {i}")).await;
    }
    let before = api.account().await;
    let sqlite = !on_postgres();
    if sqlite {
        assert!(
            wal_size(&data) > 0,
            "writes go to the write-ahead log first"
        );
    }
    server.signal(libc::SIGTERM);
    assert_eq!(server.exit_code().await, Some(0));
    if sqlite {
        assert_eq!(
            wal_size(&data),
            0,
            "the write-ahead log is checkpointed on a clean stop"
        );
    }
    let key = server.key.clone();
    let s = Server::start_existing(root, key).await;
    assert_eq!(s.api().account().await, before);
    assert_eq!(task_ids(&s.api().project(&pid).await).len(), 20);
}
