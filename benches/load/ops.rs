//! The operations rows: the idle poll measured from outside by wrk against a bare salvo
//! route answering 2 bytes, and a backup of the store taken while 64 connections write.

use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;

use crate::ceiling;
use crate::drive::Measured;
use crate::host::Target;
use crate::scenarios::{Cx, editors, now_and_count, patch_loop};

/// What wrk measured against one address.
#[derive(Debug, Clone, Default)]
pub struct Wrk {
    pub requests_per_s: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    /// Non-2xx replies and socket errors.
    pub errors: u64,
}

impl Wrk {
    /// Two halves of one measurement as one.
    fn merge(self, other: Wrk) -> Wrk {
        Wrk {
            requests_per_s: (self.requests_per_s + other.requests_per_s) / 2.0,
            p50_ms: (self.p50_ms + other.p50_ms) / 2.0,
            p99_ms: self.p99_ms.max(other.p99_ms),
            errors: self.errors + other.errors,
        }
    }
}

/// The idle poll (`/changes` with `since` and `holding`) under wrk, beside a bare route.
#[derive(Debug, Clone)]
pub struct WrkRow {
    pub account: String,
    pub conns: usize,
    pub seconds: u64,
    pub server: Wrk,
    pub bare: Wrk,
}

impl WrkRow {
    pub fn ratio(&self) -> f64 {
        self.server.requests_per_s / self.bare.requests_per_s
    }
}

/// A latency of wrk's (`1.23ms`, `456.00us`, `1.02s`) in milliseconds.
fn wrk_ms(text: &str) -> Option<f64> {
    let (number, unit) = text
        .find(|c: char| c.is_ascii_alphabetic())
        .map(|i| text.split_at(i))?;
    let n: f64 = number.parse().ok()?;
    Some(match unit {
        "us" => n / 1000.0,
        "ms" => n,
        "s" => n * 1000.0,
        "m" => n * 60_000.0,
        _ => return None,
    })
}

pub(crate) fn parse_wrk(out: &str) -> Wrk {
    let mut w = Wrk::default();
    for line in out.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["Requests/sec:", n] => w.requests_per_s = n.parse().unwrap_or(0.0),
            ["50%", t] => w.p50_ms = wrk_ms(t).unwrap_or(f64::NAN),
            ["99%", t] => w.p99_ms = wrk_ms(t).unwrap_or(f64::NAN),
            ["Non-2xx", "or", "3xx", "responses:", n] => w.errors += n.parse().unwrap_or(0),
            ["Socket", "errors:", rest @ ..] => {
                w.errors += rest
                    .iter()
                    .filter_map(|t| t.trim_end_matches(',').parse::<u64>().ok())
                    .sum::<u64>()
            }
            _ => {}
        }
    }
    w
}

fn wrk(url: &str, key: &str, conns: usize, seconds: u64) -> Wrk {
    let out = Command::new("wrk")
        .args([
            "-t2",
            &format!("-c{conns}"),
            &format!("-d{seconds}s"),
            "--latency",
            "-H",
            &format!("Authorization: Bearer {key}"),
            url,
        ])
        .output()
        .expect("wrk runs");
    assert!(out.status.success(), "wrk failed: {out:?}");
    parse_wrk(&String::from_utf8_lossy(&out.stdout))
}

/// Whether wrk is on this machine (`apt-get install wrk`).
pub fn have_wrk() -> bool {
    Command::new("wrk")
        .arg("--version")
        .output()
        .is_ok_and(|o| !o.stdout.is_empty() || !o.stderr.is_empty())
}

/// wrk at `conns` connections against the holding poll and against a bare salvo route
/// answering `{}`, in alternating halves (server, bare, bare, server).
pub fn idle_poll(cx: &Cx<'_>, target: &Target, conns: usize) -> WrkRow {
    cx.prime(target);
    let full = cx.fetch("/api/v1/changes", &target.key);
    let (now, count) = now_and_count(&full).expect("a changes reply");
    let path = format!("/api/v1/changes?since={now}&holding={count}");
    let bare = ceiling::fixed(cx.server_rt, Bytes::from_static(b"{}"));
    let seconds = (cx.timing.measure.as_secs() / 2).max(2);
    let server_url = format!("http://{}{path}", cx.host.addr);
    let bare_url = format!("http://{}{path}", bare.addr);
    let first = wrk(&server_url, &target.key, conns, seconds);
    let bare_run = wrk(&bare_url, &target.key, conns, seconds).merge(wrk(
        &bare_url,
        &target.key,
        conns,
        seconds,
    ));
    let server = first.merge(wrk(&server_url, &target.key, conns, seconds));
    WrkRow {
        account: target.layout.name.clone(),
        conns,
        seconds: seconds * 2,
        server,
        bare: bare_run,
    }
}

/// A backup taken while connections PATCH an account.
#[derive(Debug, Clone)]
pub struct BackupRow {
    pub account: String,
    pub conns: usize,
    pub summary: workboard::backup::Summary,
    /// Wall time of the backup call, as the operator waits for it.
    pub seconds: f64,
    /// Whether the writers were still writing when it finished.
    pub under_load_throughout: bool,
    /// The writers' run: from the backup's start to the window's end.
    pub writes: Measured,
}

/// `workboard backup` of the whole store while `conns` connections PATCH `target`'s cards:
/// the backup starts as the writers' window opens, and the window is long enough for it
/// to end inside it.
pub fn backup_under_writes(cx: &Cx<'_>, target: &Target, conns: usize) -> BackupRow {
    cx.prime(target);
    let out = tempfile::tempdir().expect("a folder for the backup");
    let path = out.path().join("backup");
    let started = Arc::new(parking_lot::Mutex::new(None::<(Instant, f64)>));
    let window = crate::drive::Timing {
        warmup: cx.timing.warmup,
        measure: cx.timing.measure.max(Duration::from_secs(10)),
    };
    let run_cx = Cx {
        timing: window,
        probe: cx.probe.clone(),
        ..*cx
    };
    let window_ends = Instant::now() + window.warmup + window.measure;
    let summary = std::thread::scope(|scope| {
        let taking = scope.spawn(|| {
            std::thread::sleep(window.warmup);
            let t = Instant::now();
            let summary = cx.host.backup(&path);
            *started.lock() = Some((t, t.elapsed().as_secs_f64()));
            summary
        });
        let writes = patch_loop(&run_cx, editors(&run_cx, target, conns, None), &target.key);
        (taking.join().expect("the backup thread"), writes)
    });
    let (summary, writes) = summary;
    let (began, seconds) = started.lock().expect("the backup ran");
    BackupRow {
        account: target.layout.name.clone(),
        conns,
        summary,
        seconds,
        under_load_throughout: began + Duration::from_secs_f64(seconds) <= window_ends,
        writes,
    }
}
