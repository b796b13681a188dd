//! The report: a table on stdout and `BENCHMARKS.md` at the repository root, with each of
//! the targets marked met or missed.

use std::fmt::Write as _;

use crate::drive::{Measured, Tally};
use crate::memory::Memory;
use crate::nodes::NodesRow;
use crate::ops::{BackupRow, WrkRow};
use crate::raw::RawLoop;
use crate::scenarios::Row;

pub const SCENARIOS: [&str; 11] = [
    "whole-account read",
    "/changes holding",
    "/changes after one write",
    "PATCH one field",
    "single POST /tasks",
    "batch create of 200",
    "90/10 read/write mix",
    "GET /search",
    "CSV export",
    "PATCH one field, search index on",
    "PATCH one field with Idempotency-Key",
];

/// Everything one run measured.
pub struct Results {
    /// The engine the server ran on: `SQLite` or `PostgreSQL`.
    pub engine: &'static str,
    pub quick: bool,
    pub seconds: f64,
    pub rows: Vec<Row>,
    pub raw: Vec<RawLoop>,
    /// Scenario 4 at one connection: (100 cards, largest).
    pub scale_patch: Option<(Measured, Measured)>,
    /// Scenario 1 at the largest account: (first read after a write, cached read).
    pub scale_read: Option<(Measured, Measured)>,
    pub memory: Option<Memory>,
    /// Accounts: name, cards, `/usage` `used`, seconds its imports took.
    pub accounts: Vec<(String, usize, u64, f64)>,
    pub wrk: Option<WrkRow>,
    pub backup: Option<BackupRow>,
    pub two_nodes: Option<NodesRow>,
}

pub(crate) fn ms(us: f64) -> String {
    if us.is_nan() {
        "-".into()
    } else {
        format!("{:.2}", us / 1000.0)
    }
}

pub(crate) fn mib(kib: u64) -> String {
    format!("{:.0}", kib as f64 / 1024.0)
}

pub(crate) fn rows_of(results: &Results, scenario: u8) -> impl Iterator<Item = &Row> {
    results.rows.iter().filter(move |r| r.scenario == scenario)
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let date = jiff::Zoned::now().strftime("%Y-%m-%d %H:%M %Z").to_string();
    format!("{date}; nproc {cores} ({cpu}); server and load generator share the cores")
}

fn scenario_table(r: &Results) -> String {
    let mut s = String::from(
        "| # | scenario | account | conns | req/s | p50 ms | p99 ms | peak RSS MiB | ceiling req/s | ratio | group | note |\n\
         |---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n",
    );
    for row in &r.rows {
        let all: Tally = row.run.all();
        let errors = row.run.errors();
        let mut notes: Vec<String> = vec![row.note.clone()];
        if errors > 0 {
            notes.push(format!("{errors} failed requests"));
        }
        if let Some(raw) = &row.raw {
            notes.push(format!(
                "raw loop right after, {} at {} commands per commit: {:.0} commands/s, commit p99 {} ms, \
                 CPU per command {:.0} us",
                raw.writes.describe(),
                raw.group,
                raw.commands_per_s,
                ms(raw.commit.quantile(0.99)),
                raw.cpu_per_command_us
            ));
        }
        if matches!(row.scenario, 4 | 5) {
            let (process, writer) = row.run.cpu_per_request();
            let mut cpu = format!(
                "CPU per request {process:.0} us (writer thread {writer:.0} us, the rest HTTP and load generator)"
            );
            match &row.ceiling {
                Some(ceiling) => {
                    let (bare, _) = ceiling.cpu_per_request();
                    cpu.push_str(&format!(", bare route {bare:.0} us"));
                    notes.push(cpu);
                    // The p99 target compares the server with the raw loop's commit p99; this
                    // is how much of that the HTTP round trip alone takes, with no store.
                    let p99 = ms(ceiling.all().quantile(0.99));
                    notes.push(format!("bare route p99 {p99} ms"));
                }
                None => notes.push(cpu),
            }
        }
        if row.scenario == 7 {
            notes.push(format!(
                "reads p50/p99 {}/{} ms, writes p50/p99 {}/{} ms",
                ms(row.run.reads.quantile(0.5)),
                ms(row.run.reads.quantile(0.99)),
                ms(row.run.writes.quantile(0.5)),
                ms(row.run.writes.quantile(0.99)),
            ));
        }
        notes.retain(|n| !n.is_empty());
        let note = notes.join("; ");
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {:.0} | {} | {} | {} | {} | {} | {} | {} |",
            row.scenario,
            SCENARIOS[usize::from(row.scenario - 1)],
            row.account,
            row.run.conns,
            row.run.rate(),
            ms(all.quantile(0.5)),
            ms(all.quantile(0.99)),
            mib(row.run.window.peak_rss_kib),
            row.ceiling
                .as_ref()
                .map_or("-".into(), |c| format!("{:.0}", c.rate())),
            row.ratio()
                .map_or("-".into(), |x| format!("{:.0}%", x * 100.0)),
            row.group().map_or("-".into(), |g| format!("{g:.1}")),
            note,
        );
    }
    s
}

fn raw_table(r: &Results) -> String {
    let mut s = String::from(
        "| commands per commit | commands/s | commits/s | commit p50 ms | commit p99 ms | CPU per command us |\n|---:|---:|---:|---:|---:|---:|\n",
    );
    for raw in &r.raw {
        let _ = writeln!(
            s,
            "| {} | {:.0} | {:.0} | {} | {} | {:.1} |",
            raw.group,
            raw.commands_per_s,
            raw.commits_per_s,
            ms(raw.commit.quantile(0.5)),
            ms(raw.commit.quantile(0.99)),
            raw.cpu_per_command_us
        );
    }
    s
}

/// The wrk row and the backup row.
fn operations(r: &Results, h: &str) -> String {
    let mut s = String::new();
    if let Some(w) = &r.wrk {
        let _ = writeln!(
            s,
            "\n{h} The idle poll under wrk\n\n`wrk -t2 -c{} --latency` from outside the process, \
             with the request's `Authorization` header, against `/changes?since=…&holding=…` \
             on the {} (metrics counted and scraped, the request log written) and against a \
             bare salvo route answering `{{}}`, in alternating halves of {} s in all each.\n",
            w.conns, w.account, w.seconds
        );
        s.push_str("| target | req/s | p50 ms | p99 ms | errors |\n|---|---:|---:|---:|---:|\n");
        for (name, x) in [
            ("workboard `holding`", &w.server),
            ("bare salvo route", &w.bare),
        ] {
            let _ = writeln!(
                s,
                "| {name} | {:.0} | {:.2} | {:.2} | {} |",
                x.requests_per_s, x.p50_ms, x.p99_ms, x.errors
            );
        }
        let _ = writeln!(s, "| ratio | {:.0}% | | | |", w.ratio() * 100.0);
        let bench = rows_of(r, 2)
            .filter(|row| row.run.conns == w.conns)
            .filter_map(|row| {
                row.ratio()
                    .map(|x| format!("{:.0}% ({})", x * 100.0, row.account))
            })
            .collect::<Vec<_>>();
        if !bench.is_empty() {
            let _ = writeln!(
                s,
                "\nThe load bench's own client at x{} in the same run (scenario 2): {}.",
                w.conns,
                bench.join(", ")
            );
        }
    }
    if let Some(b) = &r.backup {
        let _ = writeln!(
            s,
            "\n{h} A backup under writes\n\n`Admin::backup` (what `workboard backup` runs) of \
             the whole store while {} connections PATCH cards of the {}: {:.2} s for {} records \
             and {:.1} MiB. The writers' window ({:.0} s) opened as the backup began; they \
             made {:.0} PATCH/s, p50 {} ms, p99 {} ms, {} failed.",
            b.conns,
            b.account,
            b.seconds,
            b.summary.records,
            b.summary.bytes as f64 / 1_048_576.0,
            b.writes.secs,
            b.writes.rate(),
            ms(b.writes.writes.quantile(0.5)),
            ms(b.writes.writes.quantile(0.99)),
            b.writes.errors(),
        );
    }
    s
}

/// The two-node row.
fn two_nodes(n: &NodesRow, h: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "\n{h} Two nodes on one database\n\nA second node in the same process on the same \
         database (its own writer, follower, read model and listener), the {} account, \
         {} connections. Both nodes, the load generator and PostgreSQL share the machine's \
         cores, so spreading reads shows what a second node costs here, not what a second \
         machine adds.\n",
        n.account, n.conns
    );
    s.push_str(
        "| run | req/s | reads/s | writes/s | read p50 ms | read p99 ms | write p99 ms |\n\
         |---|---:|---:|---:|---:|---:|---:|\n",
    );
    for (name, m) in [
        ("whole-account reads, all on node A", &n.one_node),
        ("whole-account reads, spread over A and B", &n.two_nodes),
        (
            "PATCH on A (half the connections), reads on B (the other half)",
            &n.mixed,
        ),
    ] {
        let _ = writeln!(
            s,
            "| {name} | {:.0} | {:.0} | {:.0} | {} | {} | {} |",
            m.rate(),
            m.reads.micros.len() as f64 / m.secs,
            m.writes.micros.len() as f64 / m.secs,
            ms(m.reads.quantile(0.5)),
            ms(m.reads.quantile(0.99)),
            ms(m.writes.quantile(0.99)),
        );
    }
    let _ = writeln!(
        s,
        "\nCatch-up: a PATCH on A every 20 ms, timed from its acknowledgement to the first nudge \
         on a live socket of B whose stamp is at least the write's (B has applied it: its \
         reads and `/changes` show it).\n\n| while | probes | p50 ms | p99 ms | max ms | missed (> 1 s) |\n\
         |---|---:|---:|---:|---:|---:|"
    );
    for (name, t) in [
        ("nothing else runs", &n.catch_up_idle),
        ("the PATCH-on-A, reads-on-B run", &n.catch_up_loaded),
    ] {
        let _ = writeln!(
            s,
            "| {name} | {} | {} | {} | {} | {} |",
            t.micros.len(),
            ms(t.quantile(0.5)),
            ms(t.quantile(0.99)),
            ms(t.quantile(1.0)),
            t.errors
        );
    }
    s
}

/// The whole report as Markdown: the file for a SQLite run, the PostgreSQL section for a
/// PostgreSQL run (see [`merge_into`]).
pub fn markdown(r: &Results) -> String {
    let postgres = r.engine == "PostgreSQL";
    // Headings one level down inside the PostgreSQL section.
    let h = if postgres { "###" } else { "##" };
    let mut s = if postgres {
        String::from("## PostgreSQL\n\n")
    } else {
        String::from("# Workboard benchmarks\n\n")
    };
    if r.quick {
        s.push_str(
            "> **Quick run** (`LOAD_QUICK=1`): the 1,000-card account only, 1 and 16 connections, \
             short windows. These are smoke numbers, not the final ones; run \
             `cargo bench --bench load` for the full table.\n\n",
        );
    }
    let _ = writeln!(s, "Measured {}.\n", machine());
    if std::env::var("LOAD_DURABILITY").is_ok_and(|v| v == "normal") {
        s.push_str(
            "> **Diagnostic run**: `LOAD_DURABILITY=normal` served with `synchronous=NORMAL` \
             (`synchronous_commit=off` on PostgreSQL); the default is FULL.\n\n",
        );
    }
    if crate::drive::bare_client() {
        s.push_str(
            "> **Diagnostic run**: `LOAD_CLIENT=bare` drove the server with hyper's bare client \
             connection instead of a reqwest client per connection: a lighter load generator on \
             the cores the server shares, for the server's and the ceilings' routes alike.\n\n",
        );
    }
    if let Some(micros) = writer_floor_micros() {
        let _ = writeln!(
            s,
            "> **Diagnostic run**: `LOAD_WRITER_FLOOR_US={micros}`: the writer answered card \
             PATCHes (scenario 4) without writing them, after one disk flush per group and \
             {micros} us of CPU per PATCH.\n"
        );
    }
    if postgres {
        s.push_str(
            "`LOAD_ENGINE=postgres cargo bench --bench load`: the same bench with the server's \
             store on a throwaway PostgreSQL cluster the bench starts (initdb on this machine, \
             `synchronous_commit` on, TCP on 127.0.0.1), through scenarios 1, 2, 4 and 5 and \
             the two-node row, after the fixtures' imports are vacuumed and checkpointed. \
             Reads are held against the same bare routes as on SQLite; writes against a raw \
             loop in which the `postgres` crate writes what a command writes (see below).\n\n",
        );
    }
    let _ = writeln!(
        s,
        "`cargo bench --bench load`: the real server in this process (release build, \
         `synchronous=FULL` on SQLite, daily limits raised, its request log written as `serve` \
         writes it, to /dev/null, its metrics counted and `/metrics` scraped on its own \
         listener every second), driven over HTTP/1.1 by one keep-alive \
         reqwest client per connection, {:.0} s per run after a warm-up. Latencies are per \
         request as the client sees them. Peak RSS is the whole process's (server and load \
         generator) during the run's window. *ratio* is req/s against the ceiling measured in \
         the same run (for scenarios 1, 2, 4 and 5 in alternating halves: server, bare, \
         bare, server, so a drift of the machine weighs on both alike); *group* is commands \
         per commit (from the writer's own count of commit groups). Scenarios 4 and 5 are \
         held against the raw loop of their engine writing what a command writes, at the \
         group size the server reached, right after the run; the bare parse-and-append \
         route stays in the table as information. The machine is shared with other builds \
         and tests, which move these numbers from run to run; compare within a run.\n",
        r.seconds
    );
    let _ = writeln!(
        s,
        "{h} Targets\n\n| target | measured | verdict |\n|---|---|---|"
    );
    for (name, text, verdict) in crate::targets::targets(r) {
        let _ = writeln!(s, "| {name} | {text} | {} |", verdict.word());
    }
    let _ = writeln!(
        s,
        "\n{h} Accounts\n\nEach made with `Admin::issue_key` and `Admin::import`, ten projects per \
         import.\n\n| account | cards | `/usage` used | import s |\n|---|---:|---:|---:|"
    );
    for (name, cards, used, secs) in &r.accounts {
        let _ = writeln!(s, "| {name} | {cards} | {used} | {secs:.1} |");
    }
    let _ = writeln!(s, "\n{h} Scenarios\n");
    s.push_str(&scenario_table(r));
    s.push_str(&operations(r, h));
    if let Some(n) = &r.two_nodes {
        s.push_str(&two_nodes(n, h));
    }
    if !r.raw.is_empty() {
        let _ = writeln!(
            s,
            "\n{h} Raw {} loop (what a command writes, new cards)\n",
            r.raw[0].engine
        );
        let _ = writeln!(
            s,
            "Each command: a new {} byte card, its project's row rewritten and an undo step; \
             each commit: the account's counters{}.\n",
            r.raw[0].body_len,
            if postgres {
                ", and first the account's row locked, the transaction id and clock read, and \
                 last the change records logged and announced"
            } else {
                ""
            }
        );
        s.push_str(&raw_table(r));
    }
    if let Some(m) = &r.memory {
        let _ = writeln!(
            s,
            "\n{h} Memory\n\nA child process with only the largest account (`used` {} bytes, \
             imported as one command in {:.1} s): resident set {} MiB after the import (heap \
             trimmed, document not loaded), then the peak after each phase:\n",
            m.used,
            m.import_ms as f64 / 1000.0,
            mib(m.base_kib),
        );
        s.push_str("| phase | peak RSS MiB |\n|---|---:|\n");
        for (name, kib) in &m.phases {
            let _ = writeln!(s, "| {name} | {} |", mib(*kib));
        }
        let _ = writeln!(
            s,
            "| allowed (4 x used + 48 MiB) | {} |",
            mib(m.allowed_kib())
        );
    }
    if !postgres {
        s.push_str(
            "\n## Running\n\n\
             - `cargo bench --bench load`: everything on SQLite (about fifteen minutes on 2 cores).\n\
             - `LOAD_ENGINE=postgres cargo bench --bench load`: scenarios 1, 2, 4 and 5 and the \
               two-node row on a PostgreSQL the bench starts itself (or the one `LOAD_DATABASE` \
               names); it rewrites only the PostgreSQL section of this file.\n\
             - `LOAD_QUICK=1 cargo bench --bench load`: the smoke run.\n\
             - `LOAD_SECONDS=N`: the window of each run (default 5, quick 2).\n\
             - `LOAD_CONNS=1,16,64`, `LOAD_ACCOUNTS=100,1000,10000,largest`, \
               `LOAD_SCENARIOS=1,1c,2,3,4,5,6,7,search,csv,index,idem,scale,wrk,backup,nodes,raw,memory,fair`: \
               run a subset (`1c`: scenario 1 in gzip and zstd; `search`, `csv` and `index` are \
               scenarios 8, 9 and 10, `idem` scenario 11; `fair` is issue 37's instruments, \
               written in their own section; `wrk` and `fair`'s idle poll need \
               `apt-get install wrk`; `nodes` needs PostgreSQL).\n\
             - `LOAD_DURABILITY=normal`: diagnostic; serves with `synchronous=NORMAL`.\n\
             - `LOAD_CLIENT=bare`: diagnostic; drives every route with hyper's bare client \
               connection, a lighter load generator on the cores the server shares (about 20 us \
               of CPU per request in scenario 4 at 64 connections, against the default reqwest \
               client's 33 us): how much of a ratio is the load generator's.\n\
             - `LOAD_WRITER_FLOOR_US=N cargo bench --bench load --features floor`: diagnostic; \
               the writer answers card PATCHes without writing them, after one disk flush per \
               group and N us of CPU each: what the rest of the service leaves for the writer's \
               own work.\n\
             - `cargo bench --bench hot`: criterion benches of the hot functions.\n\
             - `cargo bench --bench noisy`: what one account's attacks cost another's requests \
               (issue 32), unpinned and pinned (`NOISY_PIN=0|1` for one, `NOISY_SECONDS`, \
               `NOISY_ATTACKS`); it rewrites only its own section.\n",
        );
    }
    s
}

const POSTGRES_BEGIN: &str =
    "<!-- The PostgreSQL section: written by `LOAD_ENGINE=postgres` runs. -->\n";
const POSTGRES_END: &str = "<!-- End of the PostgreSQL section. -->\n";

/// `BENCHMARKS.md` after a run: a SQLite run rewrites the file and keeps the PostgreSQL
/// section the last PostgreSQL run wrote; a PostgreSQL run replaces only that section. The
/// section sits just before "Running". Either run also keeps every section other benches
/// write between `<!-- keep: NAME -->` and `<!-- end keep: NAME -->` (the noisy-neighbour
/// bench's, the import bounds), in the order they stood.
pub fn merge_into(before: &str, report: &str, postgres: bool) -> String {
    let section_of = |text: &str| -> Option<(usize, usize)> {
        let start = text.find(POSTGRES_BEGIN)?;
        let end = text[start..].find(POSTGRES_END)? + start + POSTGRES_END.len();
        Some((start, end))
    };
    let place = |text: &str, section: &str| -> String {
        match text.find("\n## Running") {
            Some(at) => format!("{}\n{section}{}", &text[..at], &text[at..]),
            None => format!("{text}\n{section}"),
        }
    };
    if postgres {
        let section = format!("{POSTGRES_BEGIN}{report}{POSTGRES_END}");
        return match section_of(before) {
            Some((start, end)) => format!("{}{section}{}", &before[..start], &before[end..]),
            None => place(before, &section),
        };
    }
    let mut after = match section_of(before) {
        Some((start, end)) => place(report, &before[start..end]),
        None => report.to_owned(),
    };
    for kept in kept_sections(before) {
        after = place(&after, kept);
    }
    after
}

/// The `<!-- keep: NAME -->` ... `<!-- end keep: NAME -->` blocks of a file, whole.
fn kept_sections(text: &str) -> Vec<&str> {
    const OPEN: &str = "<!-- keep: ";
    let mut found = Vec::new();
    let mut rest = 0;
    while let Some(at) = text[rest..].find(OPEN).map(|i| i + rest) {
        let name_end = text[at..].find(" -->").map_or(text.len(), |i| i + at);
        let name = &text[at + OPEN.len()..name_end];
        let close = format!("<!-- end keep: {name} -->\n");
        match text[at..].find(&close) {
            Some(i) => {
                let end = at + i + close.len();
                found.push(&text[at..end]);
                rest = end;
            }
            None => break,
        }
    }
    found
}

/// `LOAD_WRITER_FLOOR_US`, when set: the writer's stand-in cost per PATCH (diagnostic runs).
pub fn writer_floor_micros() -> Option<u64> {
    std::env::var("LOAD_WRITER_FLOOR_US").ok()?.parse().ok()
}
