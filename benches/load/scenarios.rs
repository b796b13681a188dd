//! The seven scenarios of the issue, each driven over HTTP against the real server, and the
//! ceiling runs beside them (the same requests against a bare route).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use bytes::Bytes;
use reqwest::{Method, StatusCode};
use tokio::runtime::Runtime;

use crate::ceiling::{self, RawLoop};
use crate::drive::{self, Conn, Measured, Probe, Step, Timing};
use crate::host::{Host, Minter, Target};

/// What every scenario needs: the server, the runtimes and the timing.
pub struct Cx<'a> {
    pub host: &'a Host,
    /// Runs the server and the bare ceiling routes.
    pub server_rt: &'a Runtime,
    /// Runs the load generator.
    pub client_rt: &'a Runtime,
    pub timing: Timing,
    pub probe: Arc<dyn Probe>,
    /// Where the raw rusqlite loops write, and the card body they write.
    pub raw_dir: &'a std::path::Path,
    pub raw_body: &'a str,
}

/// One measured line of the report.
#[derive(Debug, Clone)]
pub struct Row {
    pub scenario: u8,
    pub account: String,
    pub run: Measured,
    pub ceiling: Option<Measured>,
    /// The raw rusqlite loop at the group size this run reached, measured right after it.
    pub raw: Option<RawLoop>,
    pub note: String,
}

impl Row {
    pub fn ratio(&self) -> Option<f64> {
        self.ceiling.as_ref().map(|c| self.run.rate() / c.rate())
    }

    /// Commands per commit in the window, for runs whose measured requests are all writes.
    pub fn group(&self) -> Option<f64> {
        group_of(&self.run)
    }
}

fn group_of(run: &Measured) -> Option<f64> {
    let commits = run.window.commits?;
    (commits > 0 && run.reads.micros.is_empty())
        .then(|| run.writes.micros.len() as f64 / f64::from(commits))
}

impl Cx<'_> {
    fn conns(&self, n: usize) -> Vec<Conn> {
        (0..n).map(|_| Conn::new(self.host.addr)).collect()
    }

    /// Drops cached documents, then reads the target once so its document is loaded and
    /// its fragments rendered before the clock starts.
    fn prime(&self, target: &Target) {
        self.host.evict_documents();
        crate::host::trim_heap();
        let conn = Conn::new(self.host.addr);
        let (status, _) = self
            .client_rt
            .block_on(conn.drain("/api/v1/projects", &target.key))
            .expect("the priming read");
        assert_eq!(status, StatusCode::OK, "the priming read failed");
    }

    fn drive<S, F, Fut>(&self, states: Vec<S>, step: F) -> Measured
    where
        S: Send + 'static,
        F: Fn(S) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = (S, Step)> + Send + 'static,
    {
        self.client_rt
            .block_on(drive::run(self.timing, self.probe.clone(), states, step))
    }

    /// The raw loop at the group size `run` reached, measured now, while the disk is as busy
    /// as it was during the run.
    fn raw_beside(&self, run: &Measured) -> Option<RawLoop> {
        let group = group_of(run)?.round().max(1.0) as usize;
        let measure = self.timing.measure.min(std::time::Duration::from_secs(2));
        Some(ceiling::raw_loop(
            self.raw_dir,
            group,
            measure,
            self.raw_body,
        ))
    }

    /// A body read once, kept whole.
    fn fetch(&self, path: &str, key: &str) -> Bytes {
        let conn = Conn::new(self.host.addr);
        let answer = self
            .client_rt
            .block_on(conn.call(Method::GET, path, key, None))
            .expect("a read");
        assert_eq!(answer.status, StatusCode::OK, "GET {path} failed");
        answer.body
    }
}

/// How a repeated GET checks its reply.
#[derive(Clone, Copy)]
enum Expect {
    /// 200; the body is drained and counted.
    Ok,
    /// 200 and `{"unchanged":true,...}`.
    Unchanged,
}

fn get_loop(cx: &Cx<'_>, conns: Vec<Conn>, key: &str, path: &str, expect: Expect) -> Measured {
    let key: Arc<str> = key.into();
    let path: Arc<str> = path.into();
    cx.drive(conns, move |conn| {
        let (key, path) = (key.clone(), path.clone());
        async move {
            let t = Instant::now();
            let step = match expect {
                Expect::Ok => match conn.drain(&path, &key).await {
                    Ok((s, n)) => Step::read(t, s == StatusCode::OK, n),
                    Err(_) => Step::read(t, false, 0),
                },
                Expect::Unchanged => match conn.call(Method::GET, &path, &key, None).await {
                    Ok(a) => Step::read(
                        t,
                        a.status == StatusCode::OK && a.body.starts_with(b"{\"unchanged\":true"),
                        a.body.len() as u64,
                    ),
                    Err(_) => Step::read(t, false, 0),
                },
            };
            (conn, step)
        }
    })
}

/// Scenario 1: `GET /projects`, and the bare route serving the same bytes.
pub fn whole_read(cx: &Cx<'_>, target: &Target, conns: usize) -> Row {
    cx.prime(target);
    let path = "/api/v1/projects";
    let run = get_loop(cx, cx.conns(conns), &target.key, path, Expect::Ok);
    let body = cx.fetch(path, &target.key);
    let note = format!("{} KB per reply", body.len() / 1000);
    let bare = ceiling::fixed(cx.server_rt, body);
    let conns_bare = (0..conns).map(|_| Conn::new(bare.addr)).collect();
    let ceiling = get_loop(cx, conns_bare, &target.key, path, Expect::Ok);
    Row {
        scenario: 1,
        account: target.layout.name.clone(),
        run,
        ceiling: Some(ceiling),
        raw: None,
        note,
    }
}

/// `now` and the `taskIds` count of a full changes reply.
fn now_and_count(body: &[u8]) -> Option<(i64, usize)> {
    #[derive(serde::Deserialize)]
    struct Changes {
        now: i64,
        #[serde(rename = "taskIds")]
        task_ids: Vec<serde::de::IgnoredAny>,
    }
    let c: Changes = serde_json::from_slice(body).ok()?;
    Some((c.now, c.task_ids.len()))
}

/// `now` of a changes reply, found without parsing the whole reply.
fn now_of(body: &[u8]) -> Option<i64> {
    let at = body.windows(6).position(|w| w == b"\"now\":")? + 6;
    let digits: String = body[at..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .map(|&b| b as char)
        .collect();
    digits.parse().ok()
}

/// Scenario 2: `/changes` with `since` and `holding` from a prior read: `{"unchanged":true}`.
pub fn holding(cx: &Cx<'_>, target: &Target, conns: usize) -> Row {
    cx.prime(target);
    let full = cx.fetch("/api/v1/changes", &target.key);
    let (now, count) = now_and_count(&full).expect("a changes reply");
    let path = format!("/api/v1/changes?since={now}&holding={count}");
    let run = get_loop(cx, cx.conns(conns), &target.key, &path, Expect::Unchanged);
    let body = cx.fetch(&path, &target.key);
    assert!(
        body.starts_with(b"{\"unchanged\":true"),
        "the holding read did not short-circuit: {}",
        String::from_utf8_lossy(&body[..body.len().min(200)])
    );
    let bare = ceiling::fixed(cx.server_rt, body);
    let conns_bare = (0..conns).map(|_| Conn::new(bare.addr)).collect();
    let ceiling = get_loop(cx, conns_bare, &target.key, &path, Expect::Unchanged);
    Row {
        scenario: 2,
        account: target.layout.name.clone(),
        run,
        ceiling: Some(ceiling),
        raw: None,
        note: format!("holding={count}"),
    }
}

/// The cards connection `i` of `n` edits: every n-th, so connections never share a card.
fn cards_of(target: &Target, i: usize, n: usize) -> Vec<String> {
    let cards = &target.layout.cards;
    let mine: Vec<String> = cards.iter().skip(i).step_by(n).cloned().collect();
    if mine.is_empty() {
        vec![cards[i % cards.len()].clone()]
    } else {
        mine
    }
}

/// Numbers every title edit of the whole bench, so no PATCH repeats an earlier one (a write
/// that changes nothing commits nothing).
static EDITS: AtomicU64 = AtomicU64::new(0);

/// A title edit of constant length, so storage stays put.
fn title_patch(conn: usize) -> Bytes {
    let n = EDITS.fetch_add(1, Ordering::Relaxed);
    Bytes::from(format!("{{\"title\":\"Patched {n:08} by {conn:02}\"}}"))
}

struct Editor {
    conn: Conn,
    index: usize,
    cards: Vec<String>,
    next: usize,
}

impl Editor {
    fn new(conn: Conn, target: &Target, index: usize, of: usize) -> Editor {
        Editor {
            conn,
            index,
            cards: cards_of(target, index, of),
            next: 0,
        }
    }

    /// PATCHes the title of this connection's next card.
    async fn patch(&mut self, key: &str) -> (bool, u64) {
        let card = &self.cards[self.next % self.cards.len()];
        self.next += 1;
        let path = format!("/api/v1/tasks/{card}");
        match self
            .conn
            .call(Method::PATCH, &path, key, Some(title_patch(self.index)))
            .await
        {
            Ok(a) => (a.status.is_success(), a.body.len() as u64),
            Err(_) => (false, 0),
        }
    }
}

fn editors(
    cx: &Cx<'_>,
    target: &Target,
    conns: usize,
    addr: Option<std::net::SocketAddr>,
) -> Vec<Editor> {
    (0..conns)
        .map(|i| {
            let conn = Conn::new(addr.unwrap_or(cx.host.addr));
            Editor::new(conn, target, i, conns)
        })
        .collect()
}

/// Scenario 3: a PATCH, then `/changes?since=<the previous now>`; only the read is measured.
pub fn changes_after_write(cx: &Cx<'_>, target: &Target, conns: usize) -> Row {
    cx.prime(target);
    let key: Arc<str> = target.key.as_str().into();
    // A synced client: each connection starts from the `now` of a full read.
    let since = now_of(&cx.fetch("/api/v1/changes", &target.key)).expect("a changes reply");
    let states: Vec<(Editor, i64)> = editors(cx, target, conns, None)
        .into_iter()
        .map(|e| (e, since))
        .collect();
    let run = cx.drive(states, move |(mut editor, since)| {
        let key = key.clone();
        async move {
            let (patched, _) = editor.patch(&key).await;
            if !patched {
                return ((editor, since), Step::read(Instant::now(), false, 0));
            }
            let path = format!("/api/v1/changes?since={since}");
            let t = Instant::now();
            let (step, next) = match editor.conn.call(Method::GET, &path, &key, None).await {
                Ok(a) => match now_of(&a.body) {
                    Some(now) if a.status == StatusCode::OK => {
                        (Step::read(t, true, a.body.len() as u64), now)
                    }
                    _ => (Step::read(t, false, 0), since),
                },
                Err(_) => (Step::read(t, false, 0), since),
            };
            ((editor, next), step)
        }
    });
    let per = run.reads.bytes / (run.reads.micros.len().max(1) as u64);
    Row {
        scenario: 3,
        account: target.layout.name.clone(),
        run,
        ceiling: None,
        raw: None,
        note: format!("read after own PATCH; {} KB per reply", per / 1000),
    }
}

fn patch_loop(cx: &Cx<'_>, editors: Vec<Editor>, key: &str) -> Measured {
    let key: Arc<str> = key.into();
    cx.drive(editors, move |mut editor| {
        let key = key.clone();
        async move {
            let t = Instant::now();
            let (ok, bytes) = editor.patch(&key).await;
            (editor, Step::write(t, ok, bytes))
        }
    })
}

/// Scenario 4: PATCH one field of a card (each connection its own cards), and the bare
/// parse-and-append route taking the same requests.
pub fn patch(cx: &Cx<'_>, target: &Target, conns: usize) -> Row {
    cx.prime(target);
    let run = patch_loop(cx, editors(cx, target, conns, None), &target.key);
    let raw = cx.raw_beside(&run);
    let bare = ceiling::parse_append(cx.server_rt);
    let ceiling = patch_loop(cx, editors(cx, target, conns, Some(bare.addr)), &target.key);
    Row {
        scenario: 4,
        account: target.layout.name.clone(),
        run,
        ceiling: Some(ceiling),
        raw,
        note: String::new(),
    }
}

/// Accounts that fill up: the connections share one, and move to a fresh copy of the
/// fixture when it nears the storage limit (or answers 413).
struct Rotating {
    minter: Arc<Minter>,
    current: parking_lot::Mutex<(u64, Target)>,
    swapping: tokio::sync::Mutex<()>,
    cards: AtomicU64,
    budget: u64,
    swaps: AtomicU64,
}

impl Rotating {
    fn new(minter: Arc<Minter>, bytes_per_card: u64) -> Arc<Rotating> {
        let first = minter.mint();
        let free = crate::generator::STORAGE_LIMIT
            .saturating_sub(first.layout.stored)
            .saturating_sub(1 << 20);
        Arc::new(Rotating {
            minter,
            current: parking_lot::Mutex::new((0, first)),
            swapping: tokio::sync::Mutex::new(()),
            cards: AtomicU64::new(0),
            budget: free / bytes_per_card,
            swaps: AtomicU64::new(0),
        })
    }

    fn current(&self) -> (u64, Target) {
        self.current.lock().clone()
    }

    /// Counts created cards; past the budget, moves everyone to a fresh account.
    async fn created(&self, generation: u64, cards: u64) {
        if self.cards.fetch_add(cards, Ordering::Relaxed) + cards >= self.budget {
            self.swap(generation).await;
        }
    }

    async fn swap(&self, generation: u64) {
        let _one_at_a_time = self.swapping.lock().await;
        if self.current.lock().0 != generation {
            return;
        }
        let minter = self.minter.clone();
        let fresh = tokio::task::spawn_blocking(move || minter.mint())
            .await
            .expect("a fresh account");
        *self.current.lock() = (generation + 1, fresh);
        self.cards.store(0, Ordering::Relaxed);
        self.swaps.fetch_add(1, Ordering::Relaxed);
    }
}

/// One create body: a typical card.
fn create_body(column: &str, n: u64, conn: usize) -> Bytes {
    Bytes::from(format!(
        "{{\"columnId\":\"{column}\",\"title\":\"Bench card {n:08} from {conn:02}\",\
         \"description\":\"Made by the load bench to measure a single create.\",\
         \"priority\":3,\"tags\":[\"bench\"]}}"
    ))
}

struct Creator {
    conn: Conn,
    index: usize,
    made: u64,
}

/// Scenario 5: single `POST /tasks` into a copy of the fixture (the bare parse-and-append route beside).
pub fn create_one(cx: &Cx<'_>, minter: Arc<Minter>, conns: usize) -> Row {
    let rotating = Rotating::new(minter, 500);
    let (_, first) = rotating.current();
    cx.prime(&first);
    let states = (0..conns)
        .map(|index| Creator {
            conn: Conn::new(cx.host.addr),
            index,
            made: 0,
        })
        .collect();
    let rot = rotating.clone();
    let run = cx.drive(states, move |mut c: Creator| {
        let rot = rot.clone();
        async move {
            let (generation, target) = rot.current();
            let columns = &target.layout.columns;
            let column = &columns[(c.made as usize + c.index) % columns.len()];
            c.made += 1;
            let body = create_body(column, c.made, c.index);
            let t = Instant::now();
            let answer = c
                .conn
                .call(Method::POST, "/api/v1/tasks", &target.key, Some(body))
                .await;
            let step = match answer {
                Ok(a) if a.status == StatusCode::CREATED => {
                    let step = Step::write(t, true, a.body.len() as u64);
                    rot.created(generation, 1).await;
                    step
                }
                Ok(a) if a.status == StatusCode::PAYLOAD_TOO_LARGE => {
                    rot.swap(generation).await;
                    Step::Unmeasured
                }
                _ => Step::write(t, false, 0),
            };
            (c, step)
        }
    });
    let raw = cx.raw_beside(&run);
    let bare = ceiling::parse_append(cx.server_rt);
    let column = first.layout.columns[0].clone();
    let states = (0..conns)
        .map(|index| Creator {
            conn: Conn::new(bare.addr),
            index,
            made: 0,
        })
        .collect();
    let key: Arc<str> = first.key.as_str().into();
    let ceiling = cx.drive(states, move |mut c: Creator| {
        let (key, column) = (key.clone(), column.clone());
        async move {
            c.made += 1;
            let body = create_body(&column, c.made, c.index);
            let t = Instant::now();
            let ok = matches!(
                c.conn.call(Method::POST, "/api/v1/tasks", &key, Some(body)).await,
                Ok(a) if a.status == StatusCode::CREATED
            );
            (c, Step::write(t, ok, 0))
        }
    });
    Row {
        scenario: 5,
        account: first.layout.name.clone(),
        run,
        ceiling: Some(ceiling),
        raw,
        note: format!(
            "fresh copy; moved to a new copy {} times",
            rotating.swaps.load(Ordering::Relaxed)
        ),
    }
}

const BATCH: usize = 200;

fn batch_body(columns: &[String], n: u64, conn: usize) -> Bytes {
    let entries: Vec<String> = (0..BATCH)
        .map(|i| {
            format!(
                "{{\"columnId\":\"{}\",\"title\":\"Batch {n:06}-{conn:02} card {i:03}\"}}",
                columns[i % columns.len()]
            )
        })
        .collect();
    Bytes::from(format!("{{\"tasks\":[{}]}}", entries.join(",")))
}

/// Scenario 6: `POST /tasks {"tasks":[200]}` into copies of the fixture, moving to a fresh copy as each
/// one fills up.
pub fn create_batch(cx: &Cx<'_>, minter: Arc<Minter>, conns: usize) -> Row {
    let rotating = Rotating::new(minter, 360);
    let (_, first) = rotating.current();
    cx.prime(&first);
    let states = (0..conns)
        .map(|index| Creator {
            conn: Conn::new(cx.host.addr),
            index,
            made: 0,
        })
        .collect();
    let rot = rotating.clone();
    let run = cx.drive(states, move |mut c: Creator| {
        let rot = rot.clone();
        async move {
            let (generation, target) = rot.current();
            c.made += 1;
            let body = batch_body(&target.layout.columns, c.made, c.index);
            let t = Instant::now();
            let answer = c
                .conn
                .call(Method::POST, "/api/v1/tasks", &target.key, Some(body))
                .await;
            let step = match answer {
                Ok(a) if a.status == StatusCode::CREATED => {
                    let step = Step::write(t, true, a.body.len() as u64);
                    rot.created(generation, BATCH as u64).await;
                    step
                }
                Ok(a) if a.status == StatusCode::PAYLOAD_TOO_LARGE => {
                    rot.swap(generation).await;
                    Step::Unmeasured
                }
                _ => Step::write(t, false, 0),
            };
            (c, step)
        }
    });
    Row {
        scenario: 6,
        account: first.layout.name.clone(),
        run,
        ceiling: None,
        raw: None,
        note: format!(
            "{BATCH} cards per request; moved to a new copy {} times",
            rotating.swaps.load(Ordering::Relaxed)
        ),
    }
}

struct Mixer {
    editor: Editor,
    rng: u64,
    since: i64,
    holding: usize,
}

impl Mixer {
    /// xorshift: the mix needs no more than a cheap, seeded coin.
    fn coin(&mut self) -> f64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        (self.rng >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Opens a live socket and counts the nudges it receives until `until`.
async fn socket(
    conn: Conn,
    addr: std::net::SocketAddr,
    key: String,
    from: Instant,
    until: Instant,
) -> u64 {
    use futures_util::StreamExt;
    let answer = conn
        .call(
            Method::POST,
            "/api/v1/live/ticket",
            &key,
            Some(Bytes::new()),
        )
        .await
        .expect("a ticket");
    #[derive(serde::Deserialize)]
    struct Ticket {
        ticket: String,
    }
    let ticket: Ticket = serde_json::from_slice(&answer.body).expect("a ticket reply");
    let url = format!("ws://{addr}/api/v1/live?ticket={}", ticket.ticket);
    let (mut ws, _) = tokio_tungstenite::connect_async(url)
        .await
        .expect("the live socket opens");
    let mut nudges = 0;
    loop {
        tokio::select! {
            frame = ws.next() => match frame {
                Some(Ok(tokio_tungstenite::tungstenite::Message::Text(text))) => {
                    let now = Instant::now();
                    if text.contains("\"changed\"") && now >= from && now <= until {
                        nudges += 1;
                    }
                }
                Some(Ok(_)) => {}
                _ => break,
            },
            _ = tokio::time::sleep_until(until.into()) => break,
        }
    }
    nudges
}

/// Scenario 7: 90% reads (half `/changes` polls with `since` and `holding`, half whole-account
/// reads), 10% PATCHes, and a live socket per 8 connections counting nudges.
pub fn mix(cx: &Cx<'_>, target: &Target, conns: usize) -> Row {
    cx.prime(target);
    let from = Instant::now() + cx.timing.warmup;
    let until = from + cx.timing.measure;
    let sockets: Vec<_> = (0..conns.div_ceil(8))
        .map(|_| {
            cx.client_rt.spawn(socket(
                Conn::new(cx.host.addr),
                cx.host.addr,
                target.key.clone(),
                from,
                until,
            ))
        })
        .collect();
    let states = editors(cx, target, conns, None)
        .into_iter()
        .enumerate()
        .map(|(i, editor)| Mixer {
            editor,
            rng: 0x9E37_79B9_7F4A_7C15 ^ (i as u64 + 1),
            since: 0,
            holding: 0,
        })
        .collect();
    let key: Arc<str> = target.key.as_str().into();
    let run = cx.drive(states, move |mut m: Mixer| {
        let key = key.clone();
        async move {
            let coin = m.coin();
            let t = Instant::now();
            let step = if coin < 0.10 {
                let (ok, bytes) = m.editor.patch(&key).await;
                Step::write(t, ok, bytes)
            } else if coin < 0.55 {
                let path = format!("/api/v1/changes?since={}&holding={}", m.since, m.holding);
                match m.editor.conn.call(Method::GET, &path, &key, None).await {
                    Ok(a) if a.status == StatusCode::OK => {
                        let step = Step::read(t, true, a.body.len() as u64);
                        if a.body.starts_with(b"{\"unchanged\":true") {
                            m.since = now_of(&a.body).unwrap_or(m.since);
                        } else if let Some((now, count)) = now_and_count(&a.body) {
                            (m.since, m.holding) = (now, count);
                        }
                        step
                    }
                    _ => Step::read(t, false, 0),
                }
            } else {
                match m.editor.conn.drain("/api/v1/projects", &key).await {
                    Ok((s, n)) => Step::read(t, s == StatusCode::OK, n),
                    Err(_) => Step::read(t, false, 0),
                }
            };
            (m, step)
        }
    });
    let nudges: Vec<u64> = sockets
        .into_iter()
        .map(|s| cx.client_rt.block_on(s).unwrap_or(0))
        .collect();
    let total: u64 = nudges.iter().sum();
    Row {
        scenario: 7,
        account: target.layout.name.clone(),
        note: format!(
            "{} sockets got {} nudges each on average ({} writes in the window)",
            nudges.len(),
            total / nudges.len().max(1) as u64,
            run.writes.micros.len()
        ),
        run,
        ceiling: None,
        raw: None,
    }
}

/// The scale check of scenario 1: the first read after a write (one project re-rendered)
/// against a read with nothing changed, one connection.
pub fn read_after_write(cx: &Cx<'_>, target: &Target) -> (Measured, Measured) {
    cx.prime(target);
    let key: Arc<str> = target.key.as_str().into();
    let k = key.clone();
    let after = cx.drive(editors(cx, target, 1, None), move |mut editor| {
        let key = k.clone();
        async move {
            let (patched, _) = editor.patch(&key).await;
            let t = Instant::now();
            let step = match editor.conn.drain("/api/v1/projects", &key).await {
                Ok((s, n)) => Step::read(t, patched && s == StatusCode::OK, n),
                Err(_) => Step::read(t, false, 0),
            };
            (editor, step)
        }
    });
    let cached = get_loop(cx, cx.conns(1), &key, "/api/v1/projects", Expect::Ok);
    (after, cached)
}

/// `/usage` `used` of an account.
pub fn used(cx: &Cx<'_>, target: &Target) -> u64 {
    #[derive(serde::Deserialize)]
    struct Usage {
        used: u64,
    }
    let body = cx.fetch("/api/v1/usage", &target.key);
    serde_json::from_slice::<Usage>(&body)
        .expect("a usage reply")
        .used
}
