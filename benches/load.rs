//! `cargo bench --bench load`: the real Workboard server in this process, driven over HTTP
//! at 1, 16 and 64 connections through the seven scenarios (and scenario 1 in gzip
//! and zstd, `1c`), each beside its ceiling measured in the same run; prints a table and
//! writes `BENCHMARKS.md`. With `LOAD_ENGINE=postgres` the server runs on a PostgreSQL the
//! bench starts, through scenarios 1, 2, 4 and 5 and the two-node row, and the run writes
//! the file's PostgreSQL section, leaving the rest as the last SQLite run left it.
//!
//! - [`drive`]: connections, the timed window, latencies; [`bare`]: the diagnostic load
//!   generator of `LOAD_CLIENT=bare`.
//! - [`host`]: the server, fixture accounts, the process's memory and the store's commits.
//! - [`scenarios`]: the read scenarios, PATCH, and the scale checks.
//! - [`creates`]: single and batch creates, and the 90/10 mix with live sockets.
//! - [`ceiling`]: bare salvo routes.
//! - [`raw`]: the raw loops writing what a command writes, on SQLite and on PostgreSQL.
//! - [`pg`]: the PostgreSQL of `LOAD_ENGINE=postgres`.
//! - [`nodes`]: the two-node row (PostgreSQL).
//! - [`ops`]: the idle poll under wrk, and a backup under writes.
//! - [`search`]: search against a raw tantivy loop, the CSV export's rate, and scenario 4
//!   with the search index on and off.
//! - [`memory`]: the memory check, in a child process.
//! - [`fair`]: issue 37's instruments (`fair`): the idle poll pinned, search against a bare
//!   search route, the bytes of a catch-up; its own section of `BENCHMARKS.md`.
//! - [`report`]: the tables and `BENCHMARKS.md`; [`targets`]: each target met or missed.

#[allow(dead_code)] // the load bench and the criterion benches each use part of it
#[path = "../fixtures/generator/mod.rs"]
mod generator;

// A bench's root file resolves `mod` beside itself; its parts live in `benches/load/`.
#[path = "load/bare.rs"]
mod bare;
#[path = "load/ceiling.rs"]
mod ceiling;
#[path = "load/creates.rs"]
mod creates;
#[path = "load/drive.rs"]
mod drive;
#[path = "load/fair.rs"]
mod fair;
#[path = "load/host.rs"]
mod host;
#[path = "load/idem.rs"]
mod idem;
#[path = "load/memory.rs"]
mod memory;
#[path = "load/nodes.rs"]
mod nodes;
#[path = "load/ops.rs"]
mod ops;
#[path = "load/pg.rs"]
mod pg;
#[path = "load/raw.rs"]
mod raw;
#[path = "load/report.rs"]
mod report;
#[path = "load/scenarios.rs"]
mod scenarios;
#[path = "load/search.rs"]
mod search;
#[path = "load/targets.rs"]
mod targets;

use std::sync::Arc;
use std::time::Duration;

use generator::{Fixture, Spec};
use scenarios::{Cx, Row};

/// Wall-clock milliseconds: fixtures are generated at the real `now`, so finished cards
/// fall inside the server's 30-day window.
pub fn wall_ms() -> i64 {
    write_model::clock::wall_ms()
}

/// The server's runtime and the load generator's, each as wide as the machine: they share
/// the cores the way a server and its clients on one host do.
pub fn runtimes() -> (tokio::runtime::Runtime, tokio::runtime::Runtime) {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let build = |name: &str| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(cores)
            .thread_name(name)
            .enable_all()
            .build()
            .expect("a tokio runtime")
    };
    (build("server"), build("load"))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Size {
    Cards(usize),
    Largest,
}

impl Size {
    fn spec(self) -> Spec {
        match self {
            Size::Cards(n) => Spec::one_project(n),
            Size::Largest => Spec::largest(),
        }
    }
}

struct Config {
    postgres: bool,
    quick: bool,
    seconds: f64,
    conns: Vec<usize>,
    sizes: Vec<Size>,
    scenarios: Vec<String>,
}

fn env_list(name: &str) -> Option<Vec<String>> {
    std::env::var(name)
        .ok()
        .filter(|v| !v.trim().is_empty())
        .map(|v| v.split(',').map(|s| s.trim().to_owned()).collect())
}

impl Config {
    fn from_env() -> Config {
        let quick = std::env::var("LOAD_QUICK").is_ok_and(|v| v == "1");
        let postgres = match std::env::var("LOAD_ENGINE").as_deref() {
            Ok("postgres" | "postgresql") => true,
            Ok("sqlite") | Err(_) => false,
            Ok(other) => {
                eprintln!("load: LOAD_ENGINE is `sqlite` or `postgres`, not `{other}`");
                std::process::exit(2);
            }
        };
        let seconds = std::env::var("LOAD_SECONDS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(if quick { 2.0 } else { 5.0 });
        let conns = env_list("LOAD_CONNS")
            .map(|l| l.iter().filter_map(|c| c.parse().ok()).collect())
            .unwrap_or_else(|| if quick { vec![1, 16] } else { vec![1, 16, 64] });
        let sizes = env_list("LOAD_ACCOUNTS")
            .map(|l| {
                l.iter()
                    .filter_map(|a| match a.as_str() {
                        "largest" => Some(Size::Largest),
                        n => n.replace('_', "").parse().ok().map(Size::Cards),
                    })
                    .collect()
            })
            .unwrap_or_else(|| {
                if quick {
                    vec![Size::Cards(1_000)]
                } else if postgres {
                    vec![Size::Cards(1_000), Size::Largest]
                } else {
                    vec![
                        Size::Cards(100),
                        Size::Cards(1_000),
                        Size::Cards(10_000),
                        Size::Largest,
                    ]
                }
            });
        let scenarios = env_list("LOAD_SCENARIOS").unwrap_or_else(|| {
            let all: &[&str] = if postgres {
                &["1", "2", "4", "5", "nodes", "raw"]
            } else {
                &[
                    "1", "1c", "2", "3", "4", "5", "6", "7", "search", "csv", "index", "idem",
                    "scale", "wrk", "backup", "raw", "memory", "fair",
                ]
            };
            let skip: &[&str] = if quick {
                &["scale", "memory", "fair"]
            } else {
                &[]
            };
            all.iter()
                .filter(|s| !skip.contains(s))
                .map(|s| (*s).to_owned())
                .collect()
        });
        Config {
            postgres,
            quick,
            seconds,
            conns,
            sizes,
            scenarios,
        }
    }

    fn runs(&self, scenario: &str) -> bool {
        self.scenarios.iter().any(|s| s == scenario)
    }
}

fn main() {
    if report::writer_floor_micros().is_some() && !cfg!(feature = "floor") {
        eprintln!("load: LOAD_WRITER_FLOOR_US needs `--features floor`");
        std::process::exit(2);
    }
    host::log_like_serve();
    if std::env::var(memory::CHILD_ENV).as_deref() == Ok("memory") {
        memory::child();
        return;
    }
    let cfg = Config::from_env();
    let (server_rt, client_rt) = runtimes();
    let cluster = cfg.postgres.then(pg::Cluster::start);
    let database = cluster.as_ref().map(|c| c.database("workboard_load"));
    let raw_database = cluster.as_ref().map(|c| c.database("workboard_raw"));
    let host = host::Host::start(&server_rt, database.as_deref());
    let now = wall_ms();
    let mut accounts = Vec::new();
    for &size in &cfg.sizes {
        let started = std::time::Instant::now();
        let fixture = Fixture::generate(&size.spec().at(now));
        let generated = started.elapsed();
        let minter = Arc::new(host.minter(&fixture));
        let target = minter.mint();
        let imported = (started.elapsed() - generated).as_secs_f64();
        eprintln!(
            "load: account `{}`: {} cards, {} bytes stored (generated in {:.1} s, imported in {:.1} s)",
            fixture.spec.name,
            fixture.tasks.len(),
            fixture.stored_bytes(),
            generated.as_secs_f64(),
            imported
        );
        accounts.push((size, fixture.tasks.len(), minter, target, imported));
    }
    // On PostgreSQL, the fixtures' bulk imports leave vacuuming and a checkpoint due, which
    // would run in the first scenarios' windows: settle them first, as a service settles
    // after an import.
    if let Some(url) = &database {
        pg::settle(url);
    }
    let raw_dir = tempfile::tempdir().expect("a temporary folder");
    // A card body of about 400 bytes, as the store writes it.
    let raw_body = Fixture::generate(&Spec::one_project(1_000))
        .tasks
        .iter()
        .filter_map(|t| serde_json::to_string(t).ok())
        .min_by_key(|b| b.len().abs_diff(400))
        .unwrap_or_else(|| "x".repeat(400));
    let raw_store = match &raw_database {
        Some(url) => raw::RawStore::Postgres(url),
        None => raw::RawStore::Sqlite(raw_dir.path()),
    };
    let cx = Cx {
        host: &host,
        server_rt: &server_rt,
        client_rt: &client_rt,
        timing: drive::Timing {
            warmup: Duration::from_millis(if cfg.quick { 300 } else { 500 }),
            measure: Duration::from_secs_f64(cfg.seconds),
        },
        probe: host.probe(),
        raw: raw_store,
        raw_body: &raw_body,
    };
    let find = |size: Size| accounts.iter().find(|a| a.0 == size);
    let thousand = find(Size::Cards(1_000)).or(accounts.first());
    let max_conns = cfg.conns.iter().copied().max().unwrap_or(1);
    let mut rows: Vec<Row> = Vec::new();
    let mut record = |row: Row| {
        eprintln!(
            "load: {} `{}` x{}: {:.0} req/s{}",
            report::SCENARIOS[usize::from(row.scenario - 1)],
            row.account,
            row.run.conns,
            row.run.rate(),
            row.ratio().map_or(String::new(), |r| format!(
                " ({:.0}% of ceiling)",
                r * 100.0
            ))
        );
        rows.push(row);
    };
    // Scenarios 2 and 3 run on the 1,000-card and the largest account (or whatever was asked).
    let focus: Vec<_> = accounts
        .iter()
        .filter(|a| matches!(a.0, Size::Cards(1_000) | Size::Largest))
        .collect();
    let focus = if focus.is_empty() {
        accounts.iter().collect()
    } else {
        focus
    };
    for &conns in &cfg.conns {
        if cfg.runs("1") {
            for a in &accounts {
                record(scenarios::whole_read(&cx, &a.3, conns));
            }
        }
        // Scenario 1 compressed (`1c`), gzip and zstd, each beside a bare route serving the
        // same compressed bytes.
        if cfg.runs("1c") {
            for a in &accounts {
                for encoding in ["gzip", "zstd"] {
                    record(scenarios::whole_read_encoded(&cx, &a.3, conns, encoding));
                }
            }
        }
        if cfg.runs("2") {
            for a in &focus {
                record(scenarios::holding(&cx, &a.3, conns));
            }
        }
        if cfg.runs("3") {
            for a in &focus {
                record(scenarios::changes_after_write(&cx, &a.3, conns));
            }
        }
        if cfg.runs("4") {
            for a in &accounts {
                record(scenarios::patch(&cx, &a.3, conns));
            }
        }
        if cfg.runs("search") {
            for a in &focus {
                record(search::search(&cx, &a.3, conns));
            }
        }
        if cfg.runs("index") {
            for a in &focus {
                record(search::patch_with_index(&cx, &a.3, conns));
            }
        }
        if cfg.runs("idem")
            && let Some(a) = thousand
        {
            record(idem::patch_keyed(&cx, &a.3, conns));
        }
        if let Some(a) = thousand {
            if cfg.runs("5") {
                record(creates::create_one(&cx, a.2.clone(), conns));
            }
            if cfg.runs("6") {
                record(creates::create_batch(&cx, a.2.clone(), conns));
            }
        }
    }
    if cfg.runs("7")
        && let Some(a) = thousand
    {
        record(creates::mix(&cx, &a.3, max_conns));
    }
    if cfg.runs("csv") {
        for a in &focus {
            record(search::csv_export(&cx, &a.3));
        }
    }
    let scale_patch = {
        let at = |name: &str| {
            rows.iter()
                .find(|r| r.scenario == 4 && r.run.conns == 1 && r.account == name)
                .map(|r| r.run.clone())
        };
        let largest = find(Size::Largest).map(|a| a.3.layout.name.clone());
        largest.and_then(|l| at("100 cards").zip(at(&l)))
    };
    // The operations rows: the idle poll under wrk (at the most connections asked), and a
    // backup of the store while as many connections write to the largest account.
    let wrk = match thousand {
        Some(a) if cfg.runs("wrk") && ops::have_wrk() => Some(ops::idle_poll(&cx, &a.3, max_conns)),
        Some(_) if cfg.runs("wrk") => {
            eprintln!("load: wrk is not installed (apt-get install wrk); its row is skipped");
            None
        }
        _ => None,
    };
    let backup = match find(Size::Largest).or(accounts.last()) {
        Some(a) if cfg.runs("backup") => {
            let row = ops::backup_under_writes(&cx, &a.3, max_conns);
            eprintln!(
                "load: backup under {} writers: {:.2} s",
                row.conns, row.seconds
            );
            Some(row)
        }
        _ => None,
    };
    let two_nodes = match thousand {
        Some(a) if cfg.runs("nodes") && cfg.postgres => {
            let b = host.another_node(&server_rt);
            let row = nodes::two_nodes(&cx, &b, &a.3, max_conns);
            b.stop(&server_rt);
            Some(row)
        }
        _ => None,
    };
    // Issue 37's instruments: the idle poll pinned on the 1,000 cards, search against the
    // bare search route on the largest account, and the bytes of a catch-up on both.
    let mut fair = fair::Fair::default();
    if cfg.runs("fair") {
        if let Some(a) = thousand
            && ops::have_wrk()
            && fair::part("poll")
        {
            fair.poll = Some(fair::idle_poll(&cx, &a.3, max_conns.max(64)));
        }
        let largest = find(Size::Largest).or(accounts.last());
        for conns in [1, 16] {
            if let Some(a) = largest
                && fair::part("search")
            {
                fair.search.push(fair::search(&cx, &a.3, conns));
            }
        }
        for a in focus.iter().filter(|_| fair::part("changes")) {
            fair.changes.push(fair::changes(&cx, &a.3));
        }
    }
    let scale_read = match find(Size::Largest) {
        Some(a) if cfg.runs("scale") => Some(scenarios::read_after_write(&cx, &a.3)),
        _ => None,
    };
    let account_rows = accounts
        .iter()
        .map(|a| {
            (
                a.3.layout.name.clone(),
                a.1,
                scenarios::used(&cx, &a.3),
                a.4,
            )
        })
        .collect();
    host.stop(&server_rt);
    let mut raw = Vec::new();
    if cfg.runs("raw") {
        let measure = Duration::from_secs_f64((cfg.seconds / 2.0).max(1.0));
        for group in [1, 8, 64] {
            let r = raw::raw_loop(raw_store, group, raw::RawWrites::Append, measure, &raw_body);
            eprintln!(
                "load: raw {} loop, {group} commands per commit: {:.0} commands/s",
                r.engine, r.commands_per_s
            );
            raw.push(r);
        }
    }
    let memory = if cfg.runs("memory") || (cfg.runs("fair") && fair::part("memory")) {
        eprintln!("load: memory check in a child process");
        memory::measure()
    } else {
        None
    };
    let results = report::Results {
        engine: if cfg.postgres { "PostgreSQL" } else { "SQLite" },
        quick: cfg.quick,
        seconds: cfg.seconds,
        rows,
        raw,
        scale_patch,
        scale_read,
        memory,
        accounts: account_rows,
        wrk,
        backup,
        two_nodes,
    };
    let text = report::markdown(&results);
    println!("{text}");
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("BENCHMARKS.md");
    let before = std::fs::read_to_string(&path).unwrap_or_default();
    // A run of `fair` alone (with `memory`) rewrites only its own section.
    let only_fair = cfg.scenarios.iter().all(|s| s == "fair" || s == "memory");
    let mut after = if only_fair && cfg.runs("fair") {
        before.clone()
    } else {
        report::merge_into(&before, &text, cfg.postgres)
    };
    if cfg.runs("fair") {
        let section = fair::section(&fair, results.memory.as_ref(), &fair::stamp());
        println!("{section}");
        after = fair::place(&after, &section);
    }
    if let Err(e) = std::fs::write(&path, after) {
        eprintln!("load: could not write {}: {e}", path.display());
    }
    // The throwaway PostgreSQL stops once the server is gone.
    drop(cluster);
}
