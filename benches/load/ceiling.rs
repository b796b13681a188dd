//! The ceilings each scenario is held against, measured in the same run: bare salvo routes in
//! the same process (one returning fixed bytes, one parsing a body and appending it to
//! memory), and a raw rusqlite loop writing card-sized rows with `synchronous=FULL`.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use parking_lot::Mutex;
use salvo::conn::tcp::TcpAcceptor;
use salvo::http::{HeaderValue, ResBody, StatusCode, header};
use salvo::prelude::*;
use salvo::server::ServerHandle;
use serde::Deserialize;
use tokio::runtime::Runtime;

use crate::drive::Tally;

/// A bare salvo server on 127.0.0.1; stopped when dropped.
pub struct Bare {
    pub addr: SocketAddr,
    handle: ServerHandle,
}

impl Drop for Bare {
    fn drop(&mut self) {
        self.handle.stop_forceful();
    }
}

fn serve(rt: &Runtime, goal: impl Handler) -> Bare {
    let (addr, handle) = rt.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a free port");
        let addr = listener.local_addr().expect("a bound address");
        let server = Server::new(TcpAcceptor::try_from(listener).expect("an acceptor"));
        let handle = server.handle();
        tokio::spawn(server.try_serve(Router::with_path("{**rest}").goal(goal)));
        (addr, handle)
    });
    Bare { addr, handle }
}

/// Every request answers these bytes as JSON.
struct Fixed(Bytes);

#[async_trait]
impl Handler for Fixed {
    async fn handle(
        &self,
        _req: &mut Request,
        _depot: &mut Depot,
        res: &mut Response,
        _ctrl: &mut FlowCtrl,
    ) {
        res.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        res.replace_body(ResBody::Once(self.0.clone()));
    }
}

pub fn fixed(rt: &Runtime, body: Bytes) -> Bare {
    serve(rt, Fixed(body))
}

/// Every request answers these bytes as JSON in `encoding`: the same headers a compressed
/// reply of the server carries.
struct FixedEncoded(Bytes, &'static str);

#[async_trait]
impl Handler for FixedEncoded {
    async fn handle(
        &self,
        _req: &mut Request,
        _depot: &mut Depot,
        res: &mut Response,
        _ctrl: &mut FlowCtrl,
    ) {
        let headers = res.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static(self.1));
        headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
        res.replace_body(ResBody::Once(self.0.clone()));
    }
}

pub fn fixed_encoded(rt: &Runtime, body: Bytes, encoding: &'static str) -> Bare {
    serve(rt, FixedEncoded(body, encoding))
}

/// The card fields the benches send, parsed into a typed value as the server does.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[allow(dead_code)] // kept in memory, never read back
struct CardBody {
    column_id: Option<String>,
    title: Option<String>,
    description: Option<String>,
    priority: Option<i64>,
    tags: Option<Vec<String>>,
}

/// Parses the body and appends it to a list in memory: a write with no storage at all.
struct ParseAppend(Arc<Mutex<Vec<CardBody>>>);

#[async_trait]
impl Handler for ParseAppend {
    async fn handle(
        &self,
        req: &mut Request,
        _depot: &mut Depot,
        res: &mut Response,
        _ctrl: &mut FlowCtrl,
    ) {
        let created = req.method() == salvo::http::Method::POST;
        let parsed = match req.payload_with_max_size(32 << 20).await {
            Ok(bytes) => serde_json::from_slice::<CardBody>(bytes).ok(),
            Err(_) => None,
        };
        let (status, body): (StatusCode, &'static [u8]) = match parsed {
            Some(card) => {
                self.0.lock().push(card);
                let status = if created {
                    StatusCode::CREATED
                } else {
                    StatusCode::OK
                };
                (status, b"{\"ok\":true}")
            }
            None => (StatusCode::UNPROCESSABLE_ENTITY, b"{\"ok\":false}"),
        };
        res.status_code(status);
        res.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        res.replace_body(ResBody::Once(Bytes::from_static(body)));
    }
}

pub fn parse_append(rt: &Runtime) -> Bare {
    serve(rt, ParseAppend(Arc::default()))
}

/// A raw rusqlite loop at one group size.
#[derive(Debug, Clone)]
pub struct RawLoop {
    pub group: usize,
    pub writes: RawWrites,
    pub rows_per_s: f64,
    pub commits_per_s: f64,
    /// The loop thread's CPU per row (microseconds): its flushes' wait is not in it.
    pub cpu_per_row_us: f64,
    /// Time of each whole transaction (its writes and its commit), in microseconds.
    pub commit: Tally,
    pub body_len: usize,
}

/// Which rows the raw loop writes: the rows its scenario's requests write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RawWrites {
    /// New rows with ids in creation order, as `POST /tasks` writes cards.
    Append,
    /// Existing rows picked at random from this many, as a PATCH rewrites one card of an
    /// account of that size.
    Rewrite(usize),
}

impl RawWrites {
    /// How the report names it.
    pub fn describe(self) -> String {
        match self {
            RawWrites::Append => "new rows".into(),
            RawWrites::Rewrite(rows) => format!("random rows of {rows}"),
        }
    }
}

/// Writes card-sized rows (`body`) into a fresh WAL database with `synchronous=FULL`,
/// `group` rows per transaction, for `measure` after a short warm-up.
pub fn raw_loop(
    dir: &Path,
    group: usize,
    writes: RawWrites,
    measure: Duration,
    body: &str,
) -> RawLoop {
    let path = dir.join(format!("raw-{group}.db"));
    let conn = rusqlite::Connection::open(&path).expect("a raw database");
    conn.pragma_update(None, "journal_mode", "WAL")
        .expect("WAL mode");
    conn.pragma_update(None, "synchronous", "FULL")
        .expect("synchronous=FULL");
    conn.execute_batch(
        "CREATE TABLE rows (account TEXT NOT NULL, id TEXT NOT NULL, body TEXT NOT NULL,
         PRIMARY KEY (account, id)) WITHOUT ROWID;",
    )
    .expect("the table");
    let id = |n: u64| format!("t_{n:022}");
    if let RawWrites::Rewrite(rows) = writes {
        let tx = conn.unchecked_transaction().expect("a transaction");
        {
            let mut insert = tx
                .prepare("INSERT INTO rows (account, id, body) VALUES (?1, ?2, ?3)")
                .expect("the insert");
            for n in 0..rows as u64 {
                insert
                    .execute(rusqlite::params!["a_bench", id(n), body])
                    .expect("a row");
            }
        }
        tx.commit().expect("the account's rows");
    }
    // A small deterministic generator picks the rewritten rows (xorshift).
    let mut pick = 0x9E37_79B9_7F4A_7C15u64;
    // Every write changes the body, as a PATCH changes a field: SQLite skips a rewrite that
    // leaves a page's bytes as they were.
    let mut written = 0u64;
    let tail = &body[body.char_indices().nth(16).map_or(body.len(), |(i, _)| i)..];
    let mut group_once = |conn: &mut rusqlite::Connection| {
        let tx = conn.transaction().expect("a transaction");
        {
            let mut insert = tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO rows (account, id, body) VALUES (?1, ?2, ?3)",
                )
                .expect("the insert");
            for _ in 0..group {
                written += 1;
                let row = match writes {
                    RawWrites::Append => written,
                    RawWrites::Rewrite(rows) => {
                        pick ^= pick << 13;
                        pick ^= pick >> 7;
                        pick ^= pick << 17;
                        pick % rows.max(1) as u64
                    }
                };
                let varied = format!("{written:016}{tail}");
                insert
                    .execute(rusqlite::params!["a_bench", id(row), varied])
                    .expect("a row");
            }
        }
        tx.commit().expect("a commit");
    };
    let mut conn = conn;
    let warm = Instant::now() + Duration::from_millis(200);
    while Instant::now() < warm {
        group_once(&mut conn);
    }
    let mut commit = Tally::default();
    let started = Instant::now();
    let cpu_before = crate::host::thread_cpu_us();
    let mut commits = 0u64;
    while started.elapsed() < measure {
        let t = Instant::now();
        group_once(&mut conn);
        commit.add(t.elapsed(), true, 0);
        commits += 1;
    }
    let secs = started.elapsed().as_secs_f64();
    let cpu_us = crate::host::thread_cpu_us().saturating_sub(cpu_before);
    drop(conn);
    for suffix in ["", "-wal", "-shm"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        let _ = std::fs::remove_file(p);
    }
    RawLoop {
        group,
        writes,
        rows_per_s: (commits * group as u64) as f64 / secs,
        commits_per_s: commits as f64 / secs,
        cpu_per_row_us: cpu_us as f64 / (commits * group as u64).max(1) as f64,
        commit,
        body_len: body.len(),
    }
}
