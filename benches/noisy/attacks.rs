//! The hostile account's attacks, each the widest or heaviest form of one of issue 32's
//! findings that a key holder can send with a valid full key. Each attack is a loop that one
//! worker runs until the window closes; it counts what it sent, so the report can put the
//! server's cost against the bytes that caused it.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// One attack: its name in the report, how many workers run it at once, and its request.
#[derive(Clone, Copy)]
pub struct Attack {
    pub name: &'static str,
    pub what: &'static str,
    pub workers: usize,
    kind: Kind,
}

#[derive(Clone, Copy)]
enum Kind {
    WideJson,
    OrderIds,
    SharedChecklist,
    QuotaPush,
    QueueFlood,
    SlowBodies,
}

/// Every attack, in the order the report lists them.
pub const ATTACKS: &[Attack] = &[
    Attack {
        name: "wide JSON",
        what: "PATCH /tasks/:id, one object of 160,000 distinct keys (1.4 MB)",
        workers: 2,
        kind: Kind::WideJson,
    },
    Attack {
        name: "checklist order",
        what: "POST /tasks/:id/checklist/order with 200,000 ids (3.6 MB)",
        workers: 2,
        kind: Kind::OrderIds,
    },
    Attack {
        name: "Trello shared checklist",
        what: "POST /import?from=trello: 7,000 cards naming one checklist of 23,000 items (1.2 MB)",
        workers: 1,
        kind: Kind::SharedChecklist,
    },
    Attack {
        name: "quota push",
        what: "an account at its storage limit: batch creates of 200 deleted cards, 64 KiB descriptions (13 MB)",
        workers: 2,
        kind: Kind::QuotaPush,
    },
    Attack {
        name: "queue flood",
        what: "64 connections PATCHing one card at full speed",
        workers: 64,
        kind: Kind::QueueFlood,
    },
    Attack {
        name: "slow bodies",
        what: "200 connections each declaring a 32 MiB import and sending 1 KiB a second",
        workers: 200,
        kind: Kind::SlowBodies,
    },
];

/// What the hostile account holds, made once before the attacks.
pub struct Target {
    pub base: String,
    pub addr: String,
    pub key: String,
    pub task: String,
    /// Bodies built once, shared by the workers.
    wide: Arc<Vec<u8>>,
    order: Arc<Vec<u8>>,
    trello: Arc<Vec<u8>>,
    quota: Arc<Vec<u8>>,
}

/// What the workers of one attack sent.
#[derive(Default)]
pub struct Sent {
    pub requests: AtomicU64,
    pub bytes: AtomicU64,
    /// Replies by class: 2xx, 4xx, 5xx, and connections that ended without one.
    pub ok: AtomicU64,
    pub refused: AtomicU64,
    pub failed: AtomicU64,
    pub dropped: AtomicU64,
}

impl Target {
    pub fn new(base: String, addr: String, key: String, task: String, column: String) -> Target {
        Target {
            base,
            addr,
            key,
            task,
            wide: Arc::new(wide_object(160_000)),
            order: Arc::new(order_body(200_000)),
            trello: Arc::new(shared_checklist_board(7_000, 23_000)),
            quota: Arc::new(deleted_batch(&column, 200, 64 * 1024)),
        }
    }
}

/// Runs one worker of `attack` until `until`.
pub async fn run(
    attack: Attack,
    target: Arc<Target>,
    http: reqwest::Client,
    sent: Arc<Sent>,
    until: Instant,
) {
    let t = &target;
    while Instant::now() < until {
        let (method, path, body): (reqwest::Method, String, Arc<Vec<u8>>) = match attack.kind {
            Kind::WideJson => (
                reqwest::Method::PATCH,
                format!("/api/v1/tasks/{}", t.task),
                t.wide.clone(),
            ),
            Kind::OrderIds => (
                reqwest::Method::POST,
                format!("/api/v1/tasks/{}/checklist/order", t.task),
                t.order.clone(),
            ),
            Kind::SharedChecklist => (
                reqwest::Method::POST,
                "/api/v1/import?from=trello".into(),
                t.trello.clone(),
            ),
            Kind::QuotaPush => (
                reqwest::Method::POST,
                "/api/v1/tasks".into(),
                t.quota.clone(),
            ),
            Kind::QueueFlood => (
                reqwest::Method::PATCH,
                format!("/api/v1/tasks/{}", t.task),
                Arc::new(
                    json!({"title": format!("flood {}", sent.requests.load(Ordering::Relaxed))})
                        .to_string()
                        .into_bytes(),
                ),
            ),
            Kind::SlowBodies => {
                slow_body(t, &sent, until).await;
                continue;
            }
        };
        sent.requests.fetch_add(1, Ordering::Relaxed);
        sent.bytes.fetch_add(body.len() as u64, Ordering::Relaxed);
        let reply = http
            .request(method, format!("{}{path}", t.base))
            .bearer_auth(&t.key)
            .header("content-type", "application/json")
            .body(body.as_ref().clone())
            .send()
            .await;
        count(&sent, reply.map(|r| r.status().as_u16()).ok());
    }
}

fn count(sent: &Sent, status: Option<u16>) {
    let class = match status {
        Some(200..=299) => &sent.ok,
        Some(400..=499) => &sent.refused,
        Some(_) => &sent.failed,
        None => &sent.dropped,
    };
    class.fetch_add(1, Ordering::Relaxed);
}

/// Declares a 32 MiB import and trickles it at 1 KiB a second until the server answers or
/// closes, or the window ends.
async fn slow_body(t: &Target, sent: &Sent, until: Instant) {
    sent.requests.fetch_add(1, Ordering::Relaxed);
    let Ok(mut stream) = tokio::net::TcpStream::connect(&t.addr).await else {
        count(sent, None);
        tokio::time::sleep(Duration::from_millis(100)).await;
        return;
    };
    let head = format!(
        "POST /api/v1/import HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        t.addr,
        t.key,
        32 << 20
    );
    if stream.write_all(head.as_bytes()).await.is_err() {
        count(sent, None);
        return;
    }
    let chunk = vec![b' '; 1024];
    let mut reply = [0u8; 64];
    while Instant::now() < until {
        if stream.write_all(&chunk).await.is_err() {
            break;
        }
        sent.bytes.fetch_add(chunk.len() as u64, Ordering::Relaxed);
        // A reply (or a close) ends this body; otherwise wait a second for the next chunk.
        match tokio::time::timeout(Duration::from_secs(1), stream.read(&mut reply)).await {
            Ok(Ok(0)) | Ok(Err(_)) => {
                count(sent, None);
                return;
            }
            Ok(Ok(n)) => {
                let status = std::str::from_utf8(&reply[..n])
                    .ok()
                    .and_then(|s| s.split(' ').nth(1))
                    .and_then(|s| s.parse().ok());
                count(sent, status);
                return;
            }
            Err(_) => {}
        }
    }
    count(sent, None);
}

/// `{"k0":0,"k1":0,...}`: wider than any route accepts.
fn wide_object(keys: usize) -> Vec<u8> {
    let mut s = String::with_capacity(keys * 10);
    s.push('{');
    for i in 0..keys {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&format!("\"k{i}\":0"));
    }
    s.push('}');
    s.into_bytes()
}

fn order_body(ids: usize) -> Vec<u8> {
    let ids: Vec<String> = (0..ids).map(|i| format!("k_{i:012}")).collect();
    json!({ "ids": ids }).to_string().into_bytes()
}

/// A Trello board whose every card names one checklist of many items.
fn shared_checklist_board(cards: usize, items: usize) -> Vec<u8> {
    let items: Vec<Value> = (0..items)
        .map(|i| json!({"name": "i", "state": "incomplete", "pos": i}))
        .collect();
    let cards: Vec<Value> = (0..cards)
        .map(|i| json!({"id": format!("c{i}"), "name": "c", "idList": "l", "idChecklists": ["x"]}))
        .collect();
    json!({
        "id": "b", "name": "shared checklist", "closed": false,
        "labels": [], "actions": [],
        "lists": [{"id": "l", "name": "L", "closed": false, "pos": 1}],
        "cards": cards,
        "checklists": [{"id": "x", "idCard": "c0", "name": "X", "pos": 1, "checkItems": items}],
    })
    .to_string()
    .into_bytes()
}

/// A batch of cards created already deleted, each with a large description: growth that
/// once passed the storage check because it also made bin entries.
fn deleted_batch(column: &str, cards: usize, description: usize) -> Vec<u8> {
    let text = "d".repeat(description);
    let tasks: Vec<Value> = (0..cards)
        .map(|i| {
            json!({"columnId": column, "title": format!("q{i}"), "description": text,
                   "cancelledAt": 1_700_000_000_000i64})
        })
        .collect();
    json!({ "tasks": tasks }).to_string().into_bytes()
}
