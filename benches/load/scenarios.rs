//! The seven scenarios of the issue, each driven over HTTP against the real server, and the
//! ceiling runs beside them (the same requests against a bare route).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use bytes::Bytes;
use reqwest::{Method, StatusCode};
use tokio::runtime::Runtime;

use crate::ceiling;
use crate::drive::{self, Conn, Measured, Probe, Step, Timing};
use crate::host::{Host, Target};
use crate::raw::{self, RawLoop, RawStore, RawWrites};

/// What every scenario needs: the server, the runtimes and the timing.
pub struct Cx<'a> {
    pub host: &'a Host,
    /// Runs the server and the bare ceiling routes.
    pub server_rt: &'a Runtime,
    /// Runs the load generator.
    pub client_rt: &'a Runtime,
    pub timing: Timing,
    pub probe: Arc<dyn Probe>,
    /// Where the raw loops write (the engine the server runs on), and the card body they
    /// write.
    pub raw: RawStore<'a>,
    pub raw_body: &'a str,
}

/// One measured line of the report.
#[derive(Debug, Clone)]
pub struct Row {
    pub scenario: u8,
    pub account: String,
    pub run: Measured,
    pub ceiling: Option<Measured>,
    /// The raw loop at the group size this run reached, measured right after it.
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

pub(crate) fn group_of(run: &Measured) -> Option<f64> {
    let commits = run.window.commits?;
    (commits > 0 && run.reads.micros.is_empty())
        .then(|| run.writes.micros.len() as f64 / f64::from(commits))
}

impl Cx<'_> {
    pub(crate) fn conns(&self, n: usize) -> Vec<Conn> {
        (0..n).map(|_| Conn::new(self.host.addr)).collect()
    }

    /// Drops cached documents, then reads the target once so its document is loaded and
    /// its fragments rendered before the clock starts.
    pub(crate) fn prime(&self, target: &Target) {
        self.host.evict_documents();
        crate::host::trim_heap();
        let conn = Conn::new(self.host.addr);
        let (status, _) = self
            .client_rt
            .block_on(conn.drain("/api/v1/projects", &target.key))
            .expect("the priming read");
        assert_eq!(status, StatusCode::OK, "the priming read failed");
    }

    pub(crate) fn drive<S, F, Fut>(&self, states: Vec<S>, step: F) -> Measured
    where
        S: Send + 'static,
        F: Fn(S) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = (S, Step)> + Send + 'static,
    {
        self.client_rt
            .block_on(drive::run(self.timing, self.probe.clone(), states, step))
    }

    /// The raw loop at the group size `run` reached, writing the rows its requests wrote,
    /// measured now, while the disk is as busy as it was during the run.
    pub(crate) fn raw_beside(&self, run: &Measured, writes: RawWrites) -> Option<RawLoop> {
        let group = group_of(run)?.round().max(1.0) as usize;
        let measure = self.timing.measure.min(std::time::Duration::from_secs(2));
        Some(raw::raw_loop(
            self.raw,
            group,
            writes,
            measure,
            self.raw_body,
        ))
    }

    /// Measures the server and its ceiling in alternating halves of the window (server,
    /// bare, bare, server): the machine's speed drifts by tens of percent within a minute,
    /// and a drift that is steady over the four slices then weighs on both alike.
    pub(crate) fn alternating(
        &self,
        server: impl Fn(&Cx<'_>) -> Measured,
        bare: impl Fn(&Cx<'_>) -> Measured,
    ) -> (Measured, Measured) {
        let half = Cx {
            timing: Timing {
                warmup: self.timing.warmup / 2,
                measure: self.timing.measure / 2,
            },
            probe: self.probe.clone(),
            ..*self
        };
        let first = server(&half);
        let ceiling = bare(&half).merge(bare(&half));
        (first.merge(server(&half)), ceiling)
    }

    /// A body read once, kept whole.
    pub(crate) fn fetch(&self, path: &str, key: &str) -> Bytes {
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
pub(crate) enum Expect {
    /// 200; the body is drained and counted.
    Ok,
    /// 200 and `{"unchanged":true,...}`.
    Unchanged,
}

pub(crate) fn get_loop(
    cx: &Cx<'_>,
    conns: Vec<Conn>,
    key: &str,
    path: &str,
    expect: Expect,
) -> Measured {
    if let Expect::Ok = expect {
        return get_loop_with(cx, conns, key, path, &[]);
    }
    let key: Arc<str> = key.into();
    let path: Arc<str> = path.into();
    cx.drive(conns, move |conn| {
        let (key, path) = (key.clone(), path.clone());
        async move {
            let t = Instant::now();
            let step = match conn.call(Method::GET, &path, &key, None).await {
                Ok(a) => Step::read(
                    t,
                    a.status == StatusCode::OK && a.body.starts_with(b"{\"unchanged\":true"),
                    a.body.len() as u64,
                ),
                Err(_) => Step::read(t, false, 0),
            };
            (conn, step)
        }
    })
}

/// Scenario 1: `GET /projects`, and the bare route serving the same bytes.
pub fn whole_read(cx: &Cx<'_>, target: &Target, conns: usize) -> Row {
    cx.prime(target);
    let path = "/api/v1/projects";
    let body = cx.fetch(path, &target.key);
    let note = format!("{} KB per reply", body.len() / 1000);
    let bare = ceiling::fixed(cx.server_rt, body);
    let (run, ceiling) = cx.alternating(
        |cx| get_loop(cx, cx.conns(conns), &target.key, path, Expect::Ok),
        |cx| {
            let conns_bare = (0..conns).map(|_| Conn::new(bare.addr)).collect();
            get_loop(cx, conns_bare, &target.key, path, Expect::Ok)
        },
    );
    Row {
        scenario: 1,
        account: target.layout.name.clone(),
        run,
        ceiling: Some(ceiling),
        raw: None,
        note,
    }
}

/// [`get_loop`] of 200 replies with `headers` added, each body counted as it came.
fn get_loop_with(
    cx: &Cx<'_>,
    conns: Vec<Conn>,
    key: &str,
    path: &str,
    headers: &'static [(&'static str, &'static str)],
) -> Measured {
    let key: Arc<str> = key.into();
    let path: Arc<str> = path.into();
    cx.drive(conns, move |conn| {
        let (key, path) = (key.clone(), path.clone());
        async move {
            let t = Instant::now();
            let step = match conn.drain_with(&path, &key, headers).await {
                Ok((s, n)) => Step::read(t, s == StatusCode::OK, n),
                Err(_) => Step::read(t, false, 0),
            };
            (conn, step)
        }
    })
}

/// The `Accept-Encoding` header of a compressed scenario 1.
fn accept(encoding: &'static str) -> &'static [(&'static str, &'static str)] {
    match encoding {
        "zstd" => &[("accept-encoding", "zstd")],
        _ => &[("accept-encoding", "gzip")],
    }
}

/// Scenario 1 compressed: `GET /projects` with `Accept-Encoding: gzip` (or `zstd`), and the
/// bare route serving the same compressed bytes with the same headers. The note gives the
/// compression ratio; the account reads `<name> (gzip)`.
pub fn whole_read_encoded(
    cx: &Cx<'_>,
    target: &Target,
    conns: usize,
    encoding: &'static str,
) -> Row {
    cx.prime(target);
    let path = "/api/v1/projects";
    let identity = cx.fetch(path, &target.key);
    let conn = Conn::new(cx.host.addr);
    let answer = cx
        .client_rt
        .block_on(conn.call_with(Method::GET, path, &target.key, accept(encoding)))
        .expect("a compressed read");
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(
        answer.encoding.as_deref(),
        Some(encoding),
        "the server did not answer in {encoding}"
    );
    let body = answer.body;
    let ratio = identity.len() as f64 / body.len().max(1) as f64;
    let note = format!(
        "{encoding}: {} KB -> {} KB per reply, {ratio:.1}x smaller",
        identity.len() / 1000,
        body.len() / 1000
    );
    let bare = ceiling::fixed_encoded(cx.server_rt, body, encoding);
    let (run, ceiling) = cx.alternating(
        |cx| get_loop_with(cx, cx.conns(conns), &target.key, path, accept(encoding)),
        |cx| {
            let conns_bare = (0..conns).map(|_| Conn::new(bare.addr)).collect();
            get_loop_with(cx, conns_bare, &target.key, path, accept(encoding))
        },
    );
    Row {
        scenario: 1,
        account: format!("{} ({encoding})", target.layout.name),
        run,
        ceiling: Some(ceiling),
        raw: None,
        note,
    }
}

/// `now` and the `taskIds` count of a full changes reply.
pub(crate) fn now_and_count(body: &[u8]) -> Option<(i64, usize)> {
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
pub(crate) fn now_of(body: &[u8]) -> Option<i64> {
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
    let body = cx.fetch(&path, &target.key);
    assert!(
        body.starts_with(b"{\"unchanged\":true"),
        "the holding read did not short-circuit: {}",
        String::from_utf8_lossy(&body[..body.len().min(200)])
    );
    let bare = ceiling::fixed(cx.server_rt, body);
    let (run, ceiling) = cx.alternating(
        |cx| get_loop(cx, cx.conns(conns), &target.key, &path, Expect::Unchanged),
        |cx| {
            let conns_bare = (0..conns).map(|_| Conn::new(bare.addr)).collect();
            get_loop(cx, conns_bare, &target.key, &path, Expect::Unchanged)
        },
    );
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
pub(crate) fn cards_of(target: &Target, i: usize, n: usize) -> Vec<String> {
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
pub(crate) fn title_patch(conn: usize) -> Bytes {
    let n = EDITS.fetch_add(1, Ordering::Relaxed);
    Bytes::from(format!("{{\"title\":\"Patched {n:08} by {conn:02}\"}}"))
}

pub(crate) struct Editor {
    pub(crate) conn: Conn,
    pub(crate) index: usize,
    pub(crate) cards: Vec<String>,
    pub(crate) next: usize,
}

impl Editor {
    pub(crate) fn new(conn: Conn, target: &Target, index: usize, of: usize) -> Editor {
        Editor {
            conn,
            index,
            cards: cards_of(target, index, of),
            next: 0,
        }
    }

    /// PATCHes the title of this connection's next card.
    pub(crate) async fn patch(&mut self, key: &str) -> (bool, u64) {
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

pub(crate) fn editors(
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

pub(crate) fn patch_loop(cx: &Cx<'_>, editors: Vec<Editor>, key: &str) -> Measured {
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
    let bare = ceiling::parse_append(cx.server_rt);
    let (run, ceiling) = cx.alternating(
        |cx| patch_loop(cx, editors(cx, target, conns, None), &target.key),
        |cx| patch_loop(cx, editors(cx, target, conns, Some(bare.addr)), &target.key),
    );
    let raw = cx.raw_beside(&run, RawWrites::Rewrite(target.layout.cards.len()));
    Row {
        scenario: 4,
        account: target.layout.name.clone(),
        run,
        ceiling: Some(ceiling),
        raw,
        note: String::new(),
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
