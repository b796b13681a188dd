//! The real server in this process: a fresh data folder (on SQLite, or on the PostgreSQL
//! database the run was given), `Node::open` with the daily limits raised, `workboard::run`
//! on 127.0.0.1:0 with its metrics listener open and scraped every second; a second node
//! on the same database (PostgreSQL); fixture accounts made through the operator's own
//! `Admin` (issue a key, import an export); and what the process and the store did.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::runtime::Runtime;
use workboard::admin::{Admin, AdminReply};
use workboard::config::{NodeConfig, PEPPER_FILE, prepare_data_dir};
use workboard::node::{Creating, Node};
use workboard::transfer::Source;
use write_model::{Durability, Limits};

use crate::drive::Probe;
use crate::generator::Fixture;

/// Where a fixture's cards and columns are, the same in every account made from it (an
/// export imports with its ids).
#[derive(Debug)]
pub struct Layout {
    pub name: String,
    /// Cards not finished, spread over the projects in generation order.
    pub cards: Vec<String>,
    pub columns: Vec<String>,
    /// What the generator expects `/usage` `used` to be.
    pub stored: u64,
}

impl Layout {
    pub fn of(fixture: &Fixture) -> Layout {
        Layout {
            name: fixture.spec.name.clone(),
            cards: fixture.open_tasks().map(|t| t.id.clone()).collect(),
            columns: fixture.columns.iter().map(|c| c.id.clone()).collect(),
            stored: fixture.stored_bytes(),
        }
    }
}

/// One account filled from a fixture, and its key.
#[derive(Debug, Clone)]
pub struct Target {
    pub key: String,
    pub account: String,
    pub layout: Arc<Layout>,
}

/// Makes accounts from one fixture's export (for scenarios that fill accounts up).
pub struct Minter {
    admin: Arc<Admin>,
    exports: Vec<Vec<u8>>,
    layout: Arc<Layout>,
}

/// Projects per import when making an account: an import is one command, and one command's
/// cost grows faster than its size (see the report), so a large account goes in parts.
const PROJECTS_PER_IMPORT: usize = 10;

impl Minter {
    /// A new account holding the fixture. Blocking: each import is one write command.
    pub fn mint(&self) -> Target {
        let (key, account, _) = self
            .admin
            .issue_key(None, Some("load bench".into()))
            .expect("a key is issued");
        for export in &self.exports {
            match self
                .admin
                .import(&account, export, Source::Workboard, false)
            {
                Ok(AdminReply::Imported { .. }) => {}
                Ok(other) => panic!("import of `{}` answered {other:?}", self.layout.name),
                Err(e) => panic!("import of `{}` failed: {e}", self.layout.name),
            }
        }
        Target {
            key,
            account,
            layout: self.layout.clone(),
        }
    }
}

/// The log `workboard serve` keeps (a line per request at `info`), written to /dev/null: each
/// request pays for its line and the write call, as in service, without filling a disk. Like
/// `serve`'s stderr, a `File` with no lock around it: each line is one write call.
pub fn log_like_serve() {
    let sink = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/null")
        .expect("/dev/null opens");
    workboard::start_log(sink, false, workboard::LogFormat::Text);
}

pub struct Host {
    pub services: Node,
    pub addr: SocketAddr,
    /// The node's data folder (its pepper, for a second node).
    data: PathBuf,
    database: Option<String>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    served: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
    scraper: tokio::task::JoinHandle<()>,
    _root: tempfile::TempDir,
}

/// The specification's limits, with the daily allowances out of the way of a load test.
fn limits() -> Limits {
    Limits {
        reads_per_day: 1 << 40,
        writes_per_day: 1 << 40,
        ..Limits::default()
    }
}

impl Host {
    /// Opens a fresh data folder (`synchronous=FULL` unless told otherwise) on SQLite, or on
    /// `database`, and serves it on `rt`.
    pub fn start(rt: &Runtime, database: Option<&str>) -> Host {
        Host::open(rt, database, None)
    }

    /// Another node on this one's PostgreSQL database, with this one's pepper.
    pub fn another_node(&self, rt: &Runtime) -> Host {
        Host::open(
            rt,
            self.database.as_deref(),
            Some(self.data.join(PEPPER_FILE)),
        )
    }

    fn open(rt: &Runtime, database: Option<&str>, pepper_file: Option<PathBuf>) -> Host {
        let root = tempfile::Builder::new()
            .prefix("workboard-load-")
            .tempdir()
            .expect("a temporary folder");
        let data = root.path().join("data");
        prepare_data_dir(&data).expect("the data folder");
        // Diagnostic (`LOAD_DURABILITY=normal`): what `synchronous=FULL` costs each scenario.
        let durability = match std::env::var("LOAD_DURABILITY").as_deref() {
            Ok("normal") => Durability::Normal,
            _ => Durability::Full,
        };
        let config = NodeConfig {
            data: data.clone(),
            durability,
            limits: limits(),
            trust_proxy: false,
            pepper_file,
            database: database.map(str::to_owned),
            cors_origins: Vec::new(),
        };
        let services = Node::open(&config, Creating::Allowed).expect("the server opens");
        let (listener, metrics) = rt.block_on(async {
            let bind = || tokio::net::TcpListener::bind("127.0.0.1:0");
            (
                bind().await.expect("a free port"),
                bind().await.expect("a free port for metrics"),
            )
        });
        let addr = listener.local_addr().expect("a bound address");
        let metrics_addr = metrics.local_addr().expect("a bound address");
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let served = rt.spawn(workboard::run(
            services.clone(),
            workboard::serve::Listeners {
                http: listener,
                metrics: Some(metrics),
                control: None,
            },
            async move {
                let _ = stopped.await;
            },
        ));
        let scraper = rt.spawn(scrape_every_second(metrics_addr));
        Host {
            services,
            addr,
            data,
            database: database.map(str::to_owned),
            stop: Some(stop),
            served: Some(served),
            scraper,
            _root: root,
        }
    }

    pub fn minter(&self, fixture: &Fixture) -> Minter {
        Minter {
            admin: self.services.admin.clone(),
            exports: fixture.export_chunks(PROJECTS_PER_IMPORT),
            layout: Arc::new(Layout::of(fixture)),
        }
    }

    /// Drops every cached account document, so memory follows what the next run loads.
    pub fn evict_documents(&self) {
        self.services.state.read.evict_idle(0);
    }

    pub fn probe(&self) -> Arc<dyn Probe> {
        Arc::new(GroupCommits(self.services.state.metrics.clone()))
    }

    /// A backup of the whole store, taken as `workboard backup` takes it.
    pub fn backup(&self, out: &Path) -> workboard::backup::Summary {
        self.services.admin.backup(out).expect("a backup")
    }

    /// Stops serving and waits for the server to drain.
    pub fn stop(mut self, rt: &Runtime) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(served) = self.served.take() {
            let _ = rt.block_on(served);
        }
        self.scraper.abort();
    }
}

/// Reads `/metrics` once a second, as a Prometheus scraping this node much more often than
/// its default of 15 s would: the runs are measured with the metrics on and read.
async fn scrape_every_second(addr: SocketAddr) {
    let client = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("an HTTP client");
    let url = format!("http://{addr}/metrics");
    loop {
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        match client.get(&url).send().await {
            Ok(r) if r.status().is_success() => {
                let _ = r.bytes().await;
            }
            other => panic!("load: the metrics scrape failed: {other:?}"),
        }
    }
}

/// The store's commits: the writer's own count of commit groups (the observations of
/// `workboard_write_group_size`), the same on both engines.
struct GroupCommits(Arc<workboard::metrics::Metrics>);

impl Probe for GroupCommits {
    fn commits(&self) -> Option<u32> {
        Some(self.0.group_size.count() as u32)
    }
}

fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// The process's peak resident set since the last reset (VmHWM), in KiB.
pub fn peak_rss_kib() -> u64 {
    status_kib("VmHWM:")
}

pub fn rss_kib() -> u64 {
    status_kib("VmRSS:")
}

/// CPU time used so far (microseconds): by the whole process, and by the writer thread.
#[derive(Debug, Default, Clone, Copy)]
pub struct CpuTime {
    pub process_us: u64,
    pub writer_us: u64,
}

impl CpuTime {
    pub fn now() -> CpuTime {
        CpuTime {
            process_us: rusage_us(libc::RUSAGE_SELF),
            writer_us: writer_ticks() * 1_000_000 / clock_ticks_per_s(),
        }
    }

    pub fn since(self, earlier: CpuTime) -> CpuTime {
        CpuTime {
            process_us: self.process_us.saturating_sub(earlier.process_us),
            writer_us: self.writer_us.saturating_sub(earlier.writer_us),
        }
    }

    pub fn plus(self, other: CpuTime) -> CpuTime {
        CpuTime {
            process_us: self.process_us + other.process_us,
            writer_us: self.writer_us + other.writer_us,
        }
    }
}

/// User and system CPU time of the calling thread so far (microseconds).
pub fn thread_cpu_us() -> u64 {
    rusage_us(libc::RUSAGE_THREAD)
}

/// User and system CPU time (microseconds) of the process or the calling thread (`who`).
fn rusage_us(who: libc::c_int) -> u64 {
    // SAFETY: getrusage only writes the struct it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(who, &mut usage);
        usage
    };
    let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    us(usage.ru_utime) + us(usage.ru_stime)
}

fn clock_ticks_per_s() -> u64 {
    // SAFETY: sysconf reads a constant of the system.
    (unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).max(1) as u64
}

/// User and system ticks of the writer thread (`workboard-writer`, 15 characters in
/// `comm`), or 0 when it is not running.
fn writer_ticks() -> u64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    for task in tasks.flatten() {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if comm.trim_end() != "workboard-write" {
            continue;
        }
        let stat = std::fs::read_to_string(task.path().join("stat")).unwrap_or_default();
        // Fields after the parenthesised name: state is field 3, utime 14, stime 15.
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .map_or(vec![], |(_, rest)| rest.split_whitespace().collect());
        let tick = |i: usize| fields.get(i - 3).and_then(|v| v.parse::<u64>().ok());
        return tick(14).unwrap_or(0) + tick(15).unwrap_or(0);
    }
    0
}

/// Lowers VmHWM to the current resident set (Linux `clear_refs` 5), so a run's peak is its own.
pub fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Gives freed heap back to the system, so a reset peak starts from what is live: the
/// server's allocator (jemalloc, `src/alloc.rs`) purges pages unused for 200 ms from its
/// background thread, so this waits that out twice over; SQLite's allocations are glibc's,
/// trimmed.
pub fn trim_heap() {
    std::thread::sleep(std::time::Duration::from_millis(400));
    // SAFETY: malloc_trim only releases free memory at the top and inside glibc's arenas.
    unsafe {
        libc::malloc_trim(0);
    }
}
