//! Issue 37's instruments (`LOAD_SCENARIOS=fair`), each ratio measured in one run with the
//! server and its ceiling alternating, written into `BENCHMARKS.md` as a section of its own:
//!
//! - the idle poll under wrk with the server (and the bare route it is held against) pinned
//!   to CPU 0 and wrk to CPU 1, with the server's CPU per request from `/proc/self/stat`;
//! - search against a bare salvo route doing the same work (the read model's search of the
//!   same account: the same tantivy query on the same index, the same hits as the same JSON)
//!   with no key, allowance, log or metrics;
//! - the bytes of a `/changes` catch-up after one write, full manifest against
//!   `manifest=changed`.
//!
//! The memory check is [`crate::memory`]'s, reported here against the bar.

use std::fmt::Write as _;
use std::process::Command;
use std::sync::Arc;

use bytes::Bytes;
use read_model::search::SearchRequest;
use read_model::search::query::SearchQuery;
use read_model::{Completed, ReadModel};
use reqwest::{Method, StatusCode};
use salvo::conn::tcp::TcpAcceptor;
use salvo::http::{HeaderValue, ResBody, header};
use salvo::prelude::*;

use crate::ceiling;
use crate::drive::{Conn, Measured};
use crate::host::Target;
use crate::memory::Memory;
use crate::ops::{self, Wrk, WrkRow};
use crate::report::{mib, ms};
use crate::scenarios::{Cx, Expect, get_loop, now_and_count, now_of};

/// The section's markers: the load bench keeps it between runs that do not measure it.
pub const OPEN: &str = "<!-- keep: fair -->\n";
pub const CLOSE: &str = "<!-- end keep: fair -->\n";

/// One wrk run pinned: what wrk saw and the server process's CPU in it.
#[derive(Debug, Clone, Default)]
pub struct PinnedRun {
    pub wrk: Wrk,
    pub requests: u64,
    /// User and system CPU of this process (the server's and the bare route's, whichever
    /// was measured; the load generator's runtime is idle) during the run, microseconds.
    pub cpu_us: u64,
}

impl PinnedRun {
    fn merge(self, other: PinnedRun) -> PinnedRun {
        PinnedRun {
            wrk: Wrk {
                requests_per_s: (self.wrk.requests_per_s + other.wrk.requests_per_s) / 2.0,
                p50_ms: (self.wrk.p50_ms + other.wrk.p50_ms) / 2.0,
                p99_ms: self.wrk.p99_ms.max(other.wrk.p99_ms),
                errors: self.wrk.errors + other.wrk.errors,
            },
            requests: self.requests + other.requests,
            cpu_us: self.cpu_us + other.cpu_us,
        }
    }

    pub fn cpu_per_request_us(&self) -> f64 {
        self.cpu_us as f64 / self.requests.max(1) as f64
    }
}

/// The idle poll pinned, and the unpinned row beside it as information.
#[derive(Debug, Clone)]
pub struct Poll {
    pub account: String,
    pub conns: usize,
    pub seconds: u64,
    pub server: PinnedRun,
    pub bare: PinnedRun,
    /// The server with its request lines written through the tracing event, as before
    /// `workboard::request_log`: the log line's before and after.
    pub event: PinnedRun,
    pub unpinned: WrkRow,
}

impl Poll {
    pub fn ratio(&self) -> f64 {
        self.server.wrk.requests_per_s / self.bare.wrk.requests_per_s
    }

    pub fn cpu_ratio(&self) -> f64 {
        self.server.cpu_per_request_us() / self.bare.cpu_per_request_us()
    }
}

/// Search against the bare search route.
#[derive(Debug, Clone)]
pub struct Search {
    pub account: String,
    pub conns: usize,
    pub server: Measured,
    pub bare: Measured,
    pub bytes: usize,
}

/// The bytes of `/changes` catch-ups after one write each.
#[derive(Debug, Clone)]
pub struct Changes {
    pub account: String,
    pub cards: usize,
    pub catch_ups: usize,
    pub full: u64,
    pub changed: u64,
}

#[derive(Debug, Clone, Default)]
pub struct Fair {
    pub poll: Option<Poll>,
    pub search: Vec<Search>,
    pub changes: Vec<Changes>,
}

/// Puts every thread of this process on `cpu` alone, or back on every CPU (`None`). Threads
/// made later inherit their maker's set.
fn pin(cpu: Option<usize>) {
    // Every CPU the system has online: `available_parallelism` counts only those this
    // process may use, which is one while it is pinned, so it could never unpin it.
    // SAFETY: sysconf reads a constant of the system.
    let cores = (unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) }).max(1) as usize;
    // SAFETY: a zeroed cpu_set_t is the empty set; CPU_SET writes inside it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for c in 0..cores {
        if cpu.is_none_or(|only| only == c) {
            unsafe { libc::CPU_SET(c, &mut set) };
        }
    }
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return;
    };
    for task in tasks.flatten() {
        if let Some(tid) = task.file_name().to_str().and_then(|t| t.parse().ok()) {
            // SAFETY: sched_setaffinity reads the set it is given.
            unsafe { libc::sched_setaffinity(tid, std::mem::size_of_val(&set), &set) };
        }
    }
}

/// This process's user and system CPU so far (`/proc/self/stat` fields 14 and 15), in
/// microseconds.
fn process_cpu_us() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or(vec![], |(_, rest)| rest.split_whitespace().collect());
    let tick = |i: usize| fields.get(i - 3).and_then(|v| v.parse::<u64>().ok());
    // SAFETY: sysconf reads a constant of the system.
    let hz = (unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).max(1) as u64;
    (tick(14).unwrap_or(0) + tick(15).unwrap_or(0)) * 1_000_000 / hz
}

/// wrk with one thread on CPU 1, against `url`, while this process is on CPU 0.
fn wrk_pinned(url: &str, key: &str, conns: usize, seconds: u64) -> PinnedRun {
    let cpu = process_cpu_us();
    let out = Command::new("taskset")
        .args([
            "-c",
            "1",
            "wrk",
            "-t1",
            &format!("-c{conns}"),
            &format!("-d{seconds}s"),
            "--latency",
            "-H",
            &format!("Authorization: Bearer {key}"),
            url,
        ])
        .output()
        .expect("taskset and wrk run");
    let cpu_us = process_cpu_us().saturating_sub(cpu);
    assert!(out.status.success(), "wrk failed: {out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let requests = text
        .lines()
        .find_map(|l| {
            let mut words = l.split_whitespace();
            let n = words.next()?.parse::<u64>().ok()?;
            (words.next() == Some("requests")).then_some(n)
        })
        .unwrap_or(0);
    PinnedRun {
        wrk: ops::parse_wrk(&text),
        requests,
        cpu_us,
    }
}

/// The idle poll (`/changes` with `since` and `holding`) pinned, against a bare salvo route
/// answering `{}` in the same process, in alternating runs (server, bare, bare, server);
/// then the unpinned row as the load bench always measured it.
pub fn idle_poll(cx: &Cx<'_>, target: &Target, conns: usize) -> Poll {
    cx.prime(target);
    let full = cx.fetch("/api/v1/changes", &target.key);
    let (now, count) = now_and_count(&full).expect("a changes reply");
    let path = format!("/api/v1/changes?since={now}&holding={count}");
    let bare = ceiling::fixed(cx.server_rt, Bytes::from_static(b"{}"));
    let seconds = (cx.timing.measure.as_secs() / 2).max(3);
    let server_url = format!("http://{}{path}", cx.host.addr);
    let bare_url = format!("http://{}{path}", bare.addr);
    let event = |on: bool| {
        workboard::request_log::through_tracing(on);
        wrk_pinned(&server_url, &target.key, conns, seconds)
    };
    pin(Some(0));
    // Server, through the event, bare, bare, through the event, server.
    let first = event(false);
    let event_first = event(true);
    workboard::request_log::through_tracing(false);
    let bare_run = wrk_pinned(&bare_url, &target.key, conns, seconds);
    let bare_run = bare_run.merge(wrk_pinned(&bare_url, &target.key, conns, seconds));
    let event_run = event_first.merge(event(true));
    let server = first.merge(event(false));
    pin(None);
    drop(bare);
    let unpinned = ops::idle_poll(cx, target, conns);
    Poll {
        account: target.layout.name.clone(),
        conns,
        seconds: seconds * 2,
        server,
        bare: bare_run,
        event: event_run,
        unpinned,
    }
}

/// The bare search route: the read model's search of one account, answered as its JSON.
struct BareSearch {
    model: Arc<ReadModel>,
    account: String,
    request: SearchRequest,
}

#[async_trait]
impl Handler for BareSearch {
    async fn handle(
        &self,
        _req: &mut Request,
        _depot: &mut Depot,
        res: &mut Response,
        _ctrl: &mut FlowCtrl,
    ) {
        let chunks = self
            .model
            .search(&self.account, &self.request)
            .expect("the bare route's search");
        res.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        res.replace_body(ResBody::Chunks(chunks.into()));
    }
}

/// `GET /search?q=invoice` against the bare search route, in alternating halves; the bare
/// route's reply is checked to be the server's, byte for byte.
pub fn search(cx: &Cx<'_>, target: &Target, conns: usize) -> Search {
    cx.prime(target);
    let path = format!("/api/v1/search?q={}", crate::search::QUERY);
    let body = cx.fetch(&path, &target.key);
    let model = cx.host.services.state.read.clone();
    let handler = BareSearch {
        model,
        account: target.account.clone(),
        request: SearchRequest {
            query: SearchQuery::parse(crate::search::QUERY).expect("the bench's query reads"),
            view: Completed::None,
            limit: read_model::search::DEFAULT_LIMIT,
            after: None,
        },
    };
    let (addr, handle) = cx.server_rt.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a free port");
        let addr = listener.local_addr().expect("a bound address");
        let server = Server::new(TcpAcceptor::try_from(listener).expect("an acceptor"));
        let handle = server.handle();
        tokio::spawn(server.try_serve(Router::with_path("{**rest}").goal(handler)));
        (addr, handle)
    });
    let bare_body = cx
        .client_rt
        .block_on(Conn::new(addr).call(Method::GET, &path, &target.key, None))
        .expect("the bare search answers");
    assert_eq!(bare_body.status, StatusCode::OK);
    assert_eq!(
        bare_body.body, body,
        "the bare search route answers the server's bytes"
    );
    let (server, bare) = cx.alternating(
        |cx| get_loop(cx, cx.conns(conns), &target.key, &path, Expect::Ok),
        |cx| {
            let to_bare = (0..conns).map(|_| Conn::new(addr)).collect();
            get_loop(cx, to_bare, &target.key, &path, Expect::Ok)
        },
    );
    handle.stop_forceful();
    Search {
        account: target.layout.name.clone(),
        conns,
        server,
        bare,
        bytes: body.len(),
    }
}

/// `/changes` after one PATCH of a card, read with the full manifest and with
/// `manifest=changed`, from the same `since`, `catch_ups` times.
pub fn changes(cx: &Cx<'_>, target: &Target) -> Changes {
    const CATCH_UPS: usize = 10;
    cx.prime(target);
    let conn = Conn::new(cx.host.addr);
    let key = target.key.as_str();
    let mut since = now_of(&cx.fetch("/api/v1/changes", key)).expect("a changes reply");
    let (mut full, mut changed) = (0u64, 0u64);
    cx.client_rt.block_on(async {
        for (i, card) in target.layout.cards.iter().take(CATCH_UPS).enumerate() {
            let body = format!("{{\"title\":\"Catch-up {i:03}\"}}");
            let a = conn
                .call(
                    Method::PATCH,
                    &format!("/api/v1/tasks/{card}"),
                    key,
                    Some(body.into()),
                )
                .await
                .expect("a write");
            assert!(a.status.is_success(), "PATCH answered {}", a.status);
            let read = |path: String| {
                let conn = conn.clone();
                async move {
                    let a = conn
                        .call(Method::GET, &path, key, None)
                        .await
                        .expect("a catch-up");
                    assert_eq!(a.status, StatusCode::OK, "GET {path}");
                    a.body
                }
            };
            let f = read(format!("/api/v1/changes?since={since}")).await;
            let c = read(format!("/api/v1/changes?since={since}&manifest=changed")).await;
            full += f.len() as u64;
            changed += c.len() as u64;
            since = now_of(&f).expect("a changes reply");
        }
    });
    let n = CATCH_UPS.min(target.layout.cards.len()).max(1);
    Changes {
        account: target.layout.name.clone(),
        cards: target.layout.cards.len(),
        catch_ups: n,
        full: full / n as u64,
        changed: changed / n as u64,
    }
}

/// Whether `LOAD_FAIR_PARTS` (default: `poll,search,changes,memory`) names `part`.
pub fn part(name: &str) -> bool {
    std::env::var("LOAD_FAIR_PARTS")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .is_none_or(|v| v.split(',').any(|p| p.trim() == name))
}

fn verdict(ok: bool) -> &'static str {
    if ok { "met" } else { "**missed**" }
}

/// The section, between its markers.
pub fn section(fair: &Fair, memory: Option<&Memory>, measured: &str) -> String {
    let mut s = String::from(OPEN);
    let _ = writeln!(
        s,
        "## Fair ceilings (issue 37)\n\n`LOAD_SCENARIOS=fair cargo bench --bench load` \
         (with `memory` for the memory row), measured {measured}. Each ratio is measured in \
         one run, the server and its ceiling alternating (server, ceiling, ceiling, server).\n"
    );
    s.push_str("| target | measured | verdict |\n|---|---|---|\n");
    if let Some(p) = &fair.poll {
        let _ = writeln!(
            s,
            "| Idle poll (`holding`, x{}, logs and metrics on, pinned) >= 60% of the bare route's rate | {:.0}% ({:.0} vs {:.0} req/s) | {} |",
            p.conns,
            p.ratio() * 100.0,
            p.server.wrk.requests_per_s,
            p.bare.wrk.requests_per_s,
            verdict(p.ratio() >= 0.60 && p.server.wrk.errors == 0),
        );
        let _ = writeln!(
            s,
            "| Idle poll: server CPU per poll <= 1.7x the bare route's | {:.1} us vs {:.1} us: {:.2}x | {} |",
            p.server.cpu_per_request_us(),
            p.bare.cpu_per_request_us(),
            p.cpu_ratio(),
            verdict(p.cpu_ratio() <= 1.7),
        );
    } else {
        s.push_str("| Idle poll pinned | - | not run |\n");
    }
    if fair.search.is_empty() {
        s.push_str("| Search >= 70% of the bare search route | - | not run |\n");
    }
    for x in &fair.search {
        let ratio = x.server.rate() / x.bare.rate();
        let _ = writeln!(
            s,
            "| Search at x{}, {} >= 70% of the bare search route | {:.0}% ({:.0} vs {:.0} req/s; p50 {} vs {} ms) | {} |",
            x.conns,
            x.account,
            ratio * 100.0,
            x.server.rate(),
            x.bare.rate(),
            ms(x.server.reads.quantile(0.5)),
            ms(x.bare.reads.quantile(0.5)),
            verdict(ratio >= 0.70),
        );
    }
    match memory {
        Some(m) => {
            let _ = writeln!(
                s,
                "| Memory: peak RSS with the largest account (every view, gzip and zstd, index built) <= 4x `used` + 48 MiB | peak {} MiB vs 4 x {:.1} MiB + 48 MiB = {} MiB | {} |",
                mib(m.peak_kib),
                m.used as f64 / 1_048_576.0,
                mib(m.allowed_kib()),
                verdict(m.peak_kib <= m.allowed_kib()),
            );
        }
        None => s.push_str("| Memory <= 4x `used` + 48 MiB | - | not run |\n"),
    }
    for c in &fair.changes {
        let _ = writeln!(
            s,
            "| `/changes` after one write, {} ({} open cards): bytes per catch-up | full manifest {} B, `manifest=changed` {} B ({:.1}x fewer) | reported |",
            c.account,
            c.cards,
            c.full,
            c.changed,
            c.full as f64 / c.changed.max(1) as f64,
        );
    }
    if let Some(p) = &fair.poll {
        let _ = writeln!(
            s,
            "\n### The idle poll, pinned\n\n`taskset -c 1 wrk -t1 -c{} --latency` with the \
             request's `Authorization` header against `/changes?since=…&holding=…` on the {} \
             (metrics counted and scraped every second, the request log written to /dev/null), \
             and against a bare salvo route in the same process answering `{{}}`, {} s each in \
             all; every thread of the bench's process on CPU 0 alone while wrk runs. *CPU per \
             request* is the process's user and system time (`/proc/self/stat`) over wrk's \
             requests. Unpinned (`wrk -t2`, sharing both cores): information.\n",
            p.conns, p.account, p.seconds
        );
        s.push_str(
            "| run | req/s | p50 ms | p99 ms | errors | CPU per request us |\n|---|---:|---:|---:|---:|---:|\n",
        );
        for (name, r) in [
            ("workboard `holding`, pinned", &p.server),
            (
                "the same, its request line through the tracing event (before)",
                &p.event,
            ),
            ("bare route, pinned", &p.bare),
        ] {
            let _ = writeln!(
                s,
                "| {name} | {:.0} | {:.2} | {:.2} | {} | {:.1} |",
                r.wrk.requests_per_s,
                r.wrk.p50_ms,
                r.wrk.p99_ms,
                r.wrk.errors,
                r.cpu_per_request_us()
            );
        }
        for (name, w) in [
            ("workboard `holding`, unpinned", &p.unpinned.server),
            ("bare route, unpinned", &p.unpinned.bare),
        ] {
            let _ = writeln!(
                s,
                "| {name} | {:.0} | {:.2} | {:.2} | {} | - |",
                w.requests_per_s, w.p50_ms, w.p99_ms, w.errors
            );
        }
        let _ = writeln!(
            s,
            "\nPinned: {:.0}% of the bare route's rate, {:.2}x its CPU per request. Unpinned: {:.0}%. \
             The request line written straight to the log's writer (`workboard::request_log`) \
             against the tracing event it replaced, in the same run: {:.1} us against {:.1} us \
             of server CPU per poll ({:.0}% against {:.0}% of the bare route's rate).",
            p.ratio() * 100.0,
            p.cpu_ratio(),
            p.unpinned.ratio() * 100.0,
            p.server.cpu_per_request_us(),
            p.event.cpu_per_request_us(),
            p.ratio() * 100.0,
            p.event.wrk.requests_per_s / p.bare.wrk.requests_per_s * 100.0,
        );
    }
    if !fair.search.is_empty() {
        s.push_str(
            "\n### Search against the bare search route\n\n`GET /search?q=invoice` (20 hits a \
             page, open cards) through the bench's client, against a bare salvo route in the \
             same process that calls the read model's search of the same account (the same \
             tantivy query on the same index, the same hits rendered as the same JSON: its \
             reply is checked equal to the server's, byte for byte) with no key, allowance, \
             ETag, log or metrics. The in-process loop of scenario 8 stays in the scenario \
             table as information.\n\n",
        );
        s.push_str(
            "| account | conns | server req/s | bare req/s | ratio | server p50 / p99 ms | bare p50 / p99 ms | CPU per search us (server, bare; whole process) | KB per reply |\n|---|---:|---:|---:|---:|---|---|---|---:|\n",
        );
        for x in &fair.search {
            let _ = writeln!(
                s,
                "| {} | {} | {:.0} | {:.0} | {:.0}% | {} / {} | {} / {} | {:.0}, {:.0} | {} |",
                x.account,
                x.conns,
                x.server.rate(),
                x.bare.rate(),
                x.server.rate() / x.bare.rate() * 100.0,
                ms(x.server.reads.quantile(0.5)),
                ms(x.server.reads.quantile(0.99)),
                ms(x.bare.reads.quantile(0.5)),
                ms(x.bare.reads.quantile(0.99)),
                x.server.cpu_per_request().0,
                x.bare.cpu_per_request().0,
                x.bytes / 1000,
            );
        }
    }
    if let Some(m) = memory {
        let _ = writeln!(
            s,
            "\n### Memory\n\nThe load bench's memory check (a child process: the largest \
             account imported, then read in every view, in gzip and zstd, searched with its \
             index built, and written): base {} MiB, peak {} MiB, `used` {:.1} MiB. The peak \
             after each phase:\n",
            mib(m.base_kib),
            mib(m.peak_kib),
            m.used as f64 / 1_048_576.0
        );
        s.push_str("| phase | peak MiB |\n|---|---:|\n");
        for (name, kib) in &m.phases {
            let _ = writeln!(s, "| {name} | {} |", mib(*kib));
        }
    }
    if !fair.changes.is_empty() {
        s.push_str(
            "\n### `/changes` after one write\n\nA PATCH of one card, then `/changes?since=` \
             the last reply's `now`, read with the full manifest (`taskIds` lists every live \
             card) and with `manifest=changed` (only the projects in the reply, `scoped: true`; \
             the client drops held cards finished before `cutoff`), the mean of the catch-ups. \
             The web client and the sync core ask for `manifest=changed`.\n\n",
        );
        s.push_str(
            "| account | open cards | catch-ups | full manifest bytes | `manifest=changed` bytes |\n|---|---:|---:|---:|---:|\n",
        );
        for c in &fair.changes {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} |",
                c.account, c.cards, c.catch_ups, c.full, c.changed
            );
        }
    }
    s.push_str(CLOSE);
    s
}

/// `text` with its fair section replaced by `section`, or `section` put before "Running".
pub fn place(text: &str, section: &str) -> String {
    if let Some(start) = text.find(OPEN)
        && let Some(end) = text[start..].find(CLOSE).map(|i| start + i + CLOSE.len())
    {
        return format!("{}{section}{}", &text[..start], &text[end..]);
    }
    match text.find("\n## Running") {
        Some(at) => format!("{}\n{section}{}", &text[..at], &text[at..]),
        None => format!("{text}\n{section}"),
    }
}

/// When the fair scenario ran: the time the section names.
pub fn stamp() -> String {
    let out = Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M UTC"])
        .output()
        .ok();
    out.map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}
