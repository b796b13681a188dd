//! `cargo bench --bench noisy`: what one account can cost another (issue 32). The real
//! `workboard` binary runs as its own process on a fresh SQLite data folder; a victim account
//! PATCHes a card and reads it back at a steady rate while a hostile account runs, one at a
//! time, each attack of [`attacks::ATTACKS`] at full speed. The victim's quiet run comes first,
//! in the same run, as the baseline.
//!
//! For each window it reports the victim's p50/p99 and its errors (any 5xx, any 503), and
//! the server's CPU (from `/proc/PID/stat`) and peak RSS (`VmHWM`, reset before each window
//! through `/proc/PID/clear_refs`) against the quiet window's, with the cost per MiB the
//! attack sent. The table goes to stdout and into `BENCHMARKS.md`'s noisy-neighbour section,
//! which the load bench keeps when it rewrites the file.
//!
//! `NOISY_SECONDS=N` sets each window (default 6); `NOISY_ATTACKS=wide,order,...` (prefixes
//! of the attack names) runs a subset; `NOISY_PIN=1` runs the server on CPU 0 alone and the
//! bench's clients on CPU 1 alone (`taskset`; the table says which it was).

#[path = "noisy/attacks.rs"]
mod attacks;
#[path = "noisy/report.rs"]
mod report;

use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

use attacks::{ATTACKS, Attack, Sent, Target};
use report::{report, write_section};

/// The victim's pace: one PATCH and one read every this often, whatever the replies take
/// (an open loop, so a stalled server shows as latency, not as a slower client).
pub(crate) const VICTIM_EVERY: Duration = Duration::from_millis(20);

struct Server {
    /// Held so the server lives as long as this value (it is killed on drop).
    _child: tokio::process::Child,
    pid: u32,
    addr: String,
    key: String,
    data: tempfile::TempDir,
}

impl Server {
    async fn start(pinned: bool) -> Server {
        let data = tempfile::tempdir().expect("a data folder");
        // Pinned, the server has CPU 0 to itself and this process (both accounts' clients)
        // CPU 1, so the load generator never takes the server's CPU.
        let mut command = if pinned {
            let mut c = tokio::process::Command::new("taskset");
            c.args(["-c", "0", env!("CARGO_BIN_EXE_workboard")]);
            c
        } else {
            tokio::process::Command::new(env!("CARGO_BIN_EXE_workboard"))
        };
        let mut child = command
            .args(["serve", "--addr", "127.0.0.1:0", "--data"])
            .arg(data.path())
            .args(["--limit-reads-per-day", "100000000"])
            .args(["--limit-writes-per-day", "100000000"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("start workboard serve");
        let pid = child.id().expect("a pid");
        let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let (mut key, mut addr) = (None, None);
        while let Some(line) = lines.next_line().await.expect("read stdout") {
            if let Some(k) = line.strip_prefix("key: ") {
                key = Some(k.trim().to_owned());
            } else if let Some(a) = line.strip_prefix("listening: ") {
                addr = Some(a.trim().to_owned());
                break;
            }
        }
        Server {
            _child: child,
            pid,
            addr: addr.expect("the server listens"),
            key: key.expect("a first key"),
            data,
        }
    }

    /// A key of a new account, issued through the running server.
    async fn new_account(&self) -> String {
        let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_workboard"))
            .args(["keys", "issue", "--data"])
            .arg(self.data.path())
            .output()
            .await
            .expect("workboard keys issue");
        let stdout = String::from_utf8_lossy(&out.stdout);
        stdout.lines().last().expect("a key").trim().to_owned()
    }

    /// The server's CPU time so far (user and system), from `/proc/PID/stat`.
    fn cpu(&self) -> Duration {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid)).unwrap_or_default();
        let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
        let fields: Vec<&str> = after.split_whitespace().collect();
        let ticks = |i: usize| {
            fields
                .get(i)
                .and_then(|f| f.parse::<u64>().ok())
                .unwrap_or(0)
        };
        // Fields 14 and 15 of stat (utime, stime); `after` starts at field 3.
        // SAFETY: sysconf only reads a constant of the system.
        let hz = match unsafe { libc::sysconf(libc::_SC_CLK_TCK) } {
            n if n > 0 => n as f64,
            _ => 100.0,
        };
        Duration::from_secs_f64((ticks(11) + ticks(12)) as f64 / hz)
    }

    /// Resets the peak RSS the kernel keeps for the process.
    fn reset_peak(&self) {
        let _ = std::fs::write(format!("/proc/{}/clear_refs", self.pid), "5");
    }

    fn peak_mib(&self) -> f64 {
        let status =
            std::fs::read_to_string(format!("/proc/{}/status", self.pid)).unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .map_or(0.0, |kb| kb / 1024.0)
    }
}

/// Keeps this process (and the threads it starts) on one CPU.
fn pin_self_to_cpu(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t is an empty set; CPU_SET and sched_setaffinity only read
    // and write it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// A client for one account.
#[derive(Clone)]
struct Client {
    http: reqwest::Client,
    base: String,
    key: String,
}

impl Client {
    async fn send(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut req = self
            .http
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(&self.key);
        if let Some(body) = body {
            req = req.json(&body);
        }
        match req.send().await {
            Ok(r) => {
                let status = r.status().as_u16();
                (status, r.json().await.unwrap_or(Value::Null))
            }
            Err(_) => (0, Value::Null),
        }
    }

    async fn post(&self, path: &str, body: Value) -> Value {
        self.send(reqwest::Method::POST, path, Some(body)).await.1
    }

    /// A project with one column and one card: returns (column, card).
    async fn board(&self, name: &str) -> (String, String) {
        let project = self
            .post(
                "/api/v1/projects",
                json!({"name": name, "columns": ["To do"]}),
            )
            .await;
        let column = project["project"]["columns"][0]["id"]
            .as_str()
            .expect("a column")
            .to_owned();
        let task = self
            .post(
                "/api/v1/tasks",
                json!({"columnId": column, "title": "card"}),
            )
            .await;
        (column, task["id"].as_str().expect("a card").to_owned())
    }
}

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(120))
        .build()
        .expect("http client")
}

/// The victim's view of one window.
#[derive(Default)]
pub(crate) struct Victim {
    latencies: Vec<Duration>,
    pub(crate) server_errors: usize,
    pub(crate) overloaded: usize,
    other_errors: usize,
}

impl Victim {
    pub(crate) fn quantile(&self, q: f64) -> f64 {
        let mut sorted = self.latencies.clone();
        sorted.sort();
        if sorted.is_empty() {
            return f64::NAN;
        }
        let at = ((sorted.len() - 1) as f64 * q).round() as usize;
        sorted[at].as_secs_f64() * 1000.0
    }
}

/// The victim's steady load until `until`: a PATCH of its card's title and a read of it,
/// every [`VICTIM_EVERY`], each timed from when it was due.
async fn victim(client: Client, task: String, until: Instant) -> Victim {
    let mut tick = tokio::time::interval(VICTIM_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let mut inflight = Vec::new();
    let mut n = 0u64;
    while Instant::now() < until {
        tick.tick().await;
        n += 1;
        let (client, task) = (client.clone(), task.clone());
        inflight.push(tokio::spawn(async move {
            let due = Instant::now();
            let (patched, _) = client
                .send(
                    reqwest::Method::PATCH,
                    &format!("/api/v1/tasks/{task}"),
                    Some(json!({"title": format!("victim {n}")})),
                )
                .await;
            let patch_took = due.elapsed();
            let read_at = Instant::now();
            let (read, _) = client
                .send(reqwest::Method::GET, &format!("/api/v1/tasks/{task}"), None)
                .await;
            [(patched, patch_took), (read, read_at.elapsed())]
        }));
    }
    let mut out = Victim::default();
    for handle in inflight {
        for (status, took) in handle.await.expect("a victim request") {
            out.latencies.push(took);
            match status {
                200..=299 => {}
                503 => out.overloaded += 1,
                500..=599 | 0 => out.server_errors += 1,
                _ => out.other_errors += 1,
            }
        }
    }
    out
}

/// One window's measures.
pub(crate) struct Window {
    pub(crate) name: String,
    pub(crate) victim: Victim,
    pub(crate) cpu: Duration,
    pub(crate) peak_mib: f64,
    pub(crate) sent: Option<Arc<Sent>>,
}

async fn window(
    server: &Server,
    victim_client: &Client,
    victim_task: &str,
    attack: Option<(Attack, Arc<Target>)>,
    seconds: f64,
) -> Window {
    server.reset_peak();
    let cpu_before = server.cpu();
    let until = Instant::now() + Duration::from_secs_f64(seconds);
    let sent = Arc::new(Sent::default());
    let mut workers = Vec::new();
    if let Some((attack, target)) = &attack {
        let http = http();
        for _ in 0..attack.workers {
            workers.push(tokio::spawn(attacks::run(
                *attack,
                target.clone(),
                http.clone(),
                sent.clone(),
                until,
            )));
        }
    }
    let victim = victim(victim_client.clone(), victim_task.to_owned(), until).await;
    for w in workers {
        let _ = w.await;
    }
    let cpu = server.cpu().saturating_sub(cpu_before);
    Window {
        name: attack
            .as_ref()
            .map_or("quiet".into(), |(a, _)| a.name.into()),
        victim,
        cpu,
        peak_mib: server.peak_mib(),
        sent: attack.map(|_| sent),
    }
}

/// Fills the hostile account to its storage limit with live cards, so the quota push finds
/// it full.
async fn fill_to_limit(client: &Client, column: &str) {
    for size in [60_000usize, 4_000, 200] {
        loop {
            let (status, _) = client
                .send(
                    reqwest::Method::POST,
                    "/api/v1/tasks",
                    Some(json!({"columnId": column, "title": "fill", "description": "f".repeat(size)})),
                )
                .await;
            if status != 201 {
                break;
            }
        }
    }
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is taken.
    let seconds: f64 = std::env::var("NOISY_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(6.0);
    let only: Option<Vec<String>> = std::env::var("NOISY_ATTACKS")
        .ok()
        .map(|v| v.split(',').map(|s| s.trim().to_lowercase()).collect());
    let modes: &[bool] = match std::env::var("NOISY_PIN").as_deref() {
        Ok("1") => &[true],
        Ok("0") => &[false],
        _ => &[false, true],
    };
    let mut sections = String::from("## Noisy neighbour (issue 32)\n\n");
    for &pinned in modes {
        if pinned {
            pin_self_to_cpu(1);
        }
        // A runtime per mode, built after the pin so that its threads inherit it.
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let windows = runtime.block_on(run(pinned, seconds, only.clone()));
        let section = report(&windows, seconds, pinned);
        println!("{section}");
        sections.push_str(&section);
    }
    write_section(&sections);
}

/// One server, its three accounts, the quiet windows and every attack chosen.
async fn run(pinned: bool, seconds: f64, only: Option<Vec<String>>) -> Vec<Window> {
    let server = Server::start(pinned).await;
    let base = format!("http://{}", server.addr);
    let client = |key: &str| Client {
        http: http(),
        base: base.clone(),
        key: key.to_owned(),
    };
    let victim = client(&server.key);
    let hostile_key = server.new_account().await;
    let (_, victim_task) = victim.board("victim").await;
    let (column, task) = client(&hostile_key).board("hostile").await;
    // The quota push needs a full account of its own; the other attacks a plain one.
    let full_key = server.new_account().await;
    let full = client(&full_key);
    let (full_column, full_task) = full.board("full").await;
    fill_to_limit(&full, &full_column).await;
    let target = |key: String, task: String, column: String| {
        Arc::new(Target::new(
            base.clone(),
            server.addr.clone(),
            key,
            task,
            column,
        ))
    };
    let plain = target(hostile_key, task, column);
    let at_limit = target(full_key, full_task, full_column);
    // Warm the victim's path, then the first quiet window.
    window(&server, &victim, &victim_task, None, 1.0).await;
    let mut windows = vec![window(&server, &victim, &victim_task, None, seconds).await];
    for attack in ATTACKS {
        let wanted = only.as_ref().is_none_or(|names| {
            names
                .iter()
                .any(|n| attack.name.to_lowercase().starts_with(n.as_str()))
        });
        if !wanted {
            continue;
        }
        let target = if attack.name == "quota push" {
            at_limit.clone()
        } else {
            plain.clone()
        };
        eprintln!("noisy: {}", attack.name);
        let attacked = Some((*attack, target));
        windows.push(window(&server, &victim, &victim_task, attacked, seconds).await);
        // Let what the attack left (slow connections, queued work) drain before the next.
        tokio::time::sleep(Duration::from_secs(3)).await;
    }
    // The second quiet window: the baseline is the quieter of the two, so one unlucky
    // quiet window cannot flatter the attacks' ratios.
    let mut last = window(&server, &victim, &victim_task, None, seconds).await;
    last.name = "quiet (after)".into();
    windows.push(last);
    windows
}
