//! The issues' targets, each marked met, missed, not run, or reported (a number asked for
//! with no bar to clear), from one run's results.

use crate::raw::RawLoop;
use crate::report::{Results, mib, ms, rows_of};
use crate::scenarios::Row;

#[derive(Clone, Copy, PartialEq)]
pub enum Verdict {
    Met,
    Missed,
    NotRun,
    /// A number asked for, with no bar to clear.
    Reported,
}

impl Verdict {
    fn of(ok: Option<bool>) -> Verdict {
        match ok {
            Some(true) => Verdict::Met,
            Some(false) => Verdict::Missed,
            None => Verdict::NotRun,
        }
    }

    pub fn word(self) -> &'static str {
        match self {
            Verdict::Met => "met",
            Verdict::Missed => "**missed**",
            Verdict::NotRun => "not run",
            Verdict::Reported => "reported",
        }
    }
}

/// A target's row from what was measured (the text and whether the bar was cleared), or
/// `-` and not run.
fn measured(target: String, outcome: Option<(String, bool)>) -> (String, String, Verdict) {
    let (text, ok) = outcome.map_or(("-".into(), None), |(text, ok)| (text, Some(ok)));
    (target, text, Verdict::of(ok))
}

/// The raw loop whose group size is nearest (by ratio) to `group`.
fn comparable(raw: &[RawLoop], group: f64) -> Option<&RawLoop> {
    raw.iter().min_by(|a, b| {
        let d = |r: &RawLoop| (r.group as f64 / group.max(1.0)).ln().abs();
        d(a).total_cmp(&d(b))
    })
}

pub fn targets(r: &Results) -> Vec<(String, String, Verdict)> {
    let mut out = Vec::new();
    // Ratios of every connection count, all of which must clear the bar.
    let ratio_target = |rows: Vec<&Row>, bar: f64| -> (String, Verdict) {
        if rows.is_empty() {
            return ("-".into(), Verdict::NotRun);
        }
        let text = rows
            .iter()
            .filter_map(|row| {
                row.ratio()
                    .map(|x| format!("{:.0}% at x{}, {}", x * 100.0, row.run.conns, row.account))
            })
            .collect::<Vec<_>>()
            .join("; ");
        let ok = rows.iter().all(|row| row.ratio().is_some_and(|x| x >= bar));
        (text, Verdict::of(Some(ok)))
    };
    let s1: Vec<&Row> = rows_of(r, 1)
        .filter(|row| row.account == "1000 cards")
        .collect();
    let (text, v) = ratio_target(s1, 0.70);
    out.push((
        "Scenario 1 at 1,000 cards >= 70% of the bare route".into(),
        text,
        v,
    ));
    let s1c: Vec<&Row> = rows_of(r, 1)
        .filter(|row| row.account == "1000 cards (gzip)" || row.account == "1000 cards (zstd)")
        .collect();
    let (text, v) = ratio_target(s1c, 0.70);
    out.push((
        "Scenario 1 compressed (gzip, zstd) at 1,000 cards >= 70% of a bare route serving the same compressed bytes".into(),
        text,
        v,
    ));
    let (text, v) = ratio_target(rows_of(r, 2).collect(), 0.80);
    out.push(("Scenario 2 >= 80% of the bare route".into(), text, v));
    let keyed: Vec<&Row> = rows_of(r, 11).filter(|row| row.run.conns == 64).collect();
    let (text, v) = ratio_target(keyed, 0.85);
    out.push((
        "Scenario 11 (PATCH with Idempotency-Key) at 64 connections >= 85% of the plain PATCH in the same run".into(),
        text,
        v,
    ));
    for scenario in [4u8, 5] {
        let at64: Vec<&Row> = rows_of(r, scenario)
            .filter(|row| row.run.conns == 64 && row.account == "1000 cards")
            .collect();
        let against_raw = at64.first().and_then(|row| {
            let raw = row.raw.as_ref()?;
            let x = row.run.rate() / raw.commands_per_s;
            Some((
                format!(
                    "{:.0}% ({:.0} req/s vs {:.0} commands/s of the raw {} loop writing {} at group {}, the server's mean group {:.1})",
                    x * 100.0,
                    row.run.rate(),
                    raw.commands_per_s,
                    raw.engine,
                    raw.writes.describe(),
                    raw.group,
                    row.group().unwrap_or(f64::NAN),
                ),
                x >= 0.50,
            ))
        });
        out.push(measured(
            format!(
                "Scenario {scenario} at 64 connections >= 50% of the raw loop writing what a command writes"
            ),
            against_raw,
        ));
        let p99 = at64.first().and_then(|row| {
            let group = row.group().unwrap_or(64.0);
            let raw = row.raw.as_ref().or_else(|| comparable(&r.raw, group))?;
            let (mine, theirs) = (row.run.writes.quantile(0.99), raw.commit.quantile(0.99));
            Some((
                format!(
                    "p99 {} ms vs raw loop commit p99 {} ms writing {} at group {} (server's mean group {:.1}): {:.1}x",
                    ms(mine),
                    ms(theirs),
                    raw.writes.describe(),
                    raw.group,
                    group,
                    mine / theirs
                ),
                mine <= 3.0 * theirs,
            ))
        });
        out.push(measured(
            format!("Scenario {scenario} at 64 connections: p99 <= 3x the raw loop's commit p99"),
            p99,
        ));
        // The bare parse-and-append route, kept as information: what HTTP and parsing
        // alone leave, with no store at all.
        let (text, v) = ratio_target(at64, 0.0);
        out.push((
            format!(
                "Scenario {scenario} at 64 connections against bare parse-and-append (information)"
            ),
            text,
            if v == Verdict::NotRun {
                v
            } else {
                Verdict::Reported
            },
        ));
    }
    let scale = r.scale_patch.as_ref().map(|(small, large)| {
        let (a, b) = (small.writes.quantile(0.5), large.writes.quantile(0.5));
        (
            format!(
                "p50 {} ms at 100 cards, {} ms at the largest: {:.2}x",
                ms(a),
                ms(b),
                b / a
            ),
            b <= 1.5 * a,
        )
    });
    out.push(measured(
        "Scale: scenario 4 at the largest account within 1.5x of 100 cards".into(),
        scale,
    ));
    let read = r.scale_read.as_ref().map(|(after, cached)| {
        let (a, c) = (after.reads.quantile(0.5), cached.reads.quantile(0.5));
        (
            format!(
                "p50 {} ms after a write, {} ms cached: {:.2}x",
                ms(a),
                ms(c),
                a / c
            ),
            a <= 3.0 * c,
        )
    });
    out.push(measured(
        "Scale: first read after a write at the largest account within 3x of a cached read".into(),
        read,
    ));
    let largest = |row: &&Row| row.account.starts_with("largest");
    let search: Vec<&Row> = rows_of(r, 8)
        .filter(largest)
        .filter(|row| matches!(row.run.conns, 1 | 16))
        .collect();
    let (text, v) = ratio_target(search.clone(), 0.50);
    let latencies = search
        .iter()
        .map(|row| {
            let all = row.run.all();
            format!(
                "x{}: p50 {} ms, p99 {} ms",
                row.run.conns,
                ms(all.quantile(0.5)),
                ms(all.quantile(0.99))
            )
        })
        .collect::<Vec<_>>()
        .join("; ");
    out.push((
        "Search at the largest account >= 50% of a raw tantivy query loop (1 and 16 connections)"
            .into(),
        if latencies.is_empty() {
            text
        } else {
            format!("{text} ({latencies})")
        },
        v,
    ));
    let index: Vec<&Row> = rows_of(r, 10).filter(largest).collect();
    let (text, v) = ratio_target(index.clone(), 1.0 / 1.2);
    out.push((
        "Scenario 4 with the search index on within 1.2x of its cost without (largest account; ratio = rate on / rate off)".into(),
        text,
        v,
    ));
    let csv = rows_of(r, 9)
        .filter(largest)
        .map(|row| row.note.clone())
        .collect::<Vec<_>>();
    out.push((
        "CSV export of the largest account: its rate".into(),
        if csv.is_empty() {
            "-".into()
        } else {
            csv.join("; ")
        },
        if csv.is_empty() {
            Verdict::NotRun
        } else {
            Verdict::Reported
        },
    ));
    let wrk = r.wrk.as_ref().map(|w| {
        (
            format!(
                "{:.0}% at x{} ({:.0} req/s vs {:.0} req/s, p99 {:.2} vs {:.2} ms)",
                w.ratio() * 100.0,
                w.conns,
                w.server.requests_per_s,
                w.bare.requests_per_s,
                w.server.p99_ms,
                w.bare.p99_ms
            ),
            w.ratio() >= 0.80 && w.server.errors == 0,
        )
    });
    out.push(measured(
        "Idle poll (`holding`) under wrk at 64 connections >= 80% of a bare salvo route answering 2 bytes, metrics and logs on".into(),
        wrk,
    ));
    if let Some(b) = &r.backup {
        out.push((
            format!(
                "Backup of the store (the largest account among others) while {} connections PATCH it: its time",
                b.conns
            ),
            format!(
                "{:.2} s for {} records, {:.1} MiB{}; the writers went on at {:.0} PATCH/s, p99 {} ms",
                b.seconds,
                b.summary.records,
                b.summary.bytes as f64 / 1_048_576.0,
                if b.under_load_throughout { "" } else { " (the writers stopped before it ended)" },
                b.writes.rate(),
                ms(b.writes.writes.quantile(0.99)),
            ),
            Verdict::Reported,
        ));
    }
    if let Some(n) = &r.two_nodes {
        let p99 = n
            .catch_up_loaded
            .quantile(0.99)
            .max(n.catch_up_idle.quantile(0.99));
        out.push((
            "Two nodes: catch-up from a commit on A to its nudge on B, p99 < 100 ms".into(),
            format!(
                "idle p50 {} / p99 {} ms; under load p50 {} / p99 {} ms; {} of {} probes missed",
                ms(n.catch_up_idle.quantile(0.5)),
                ms(n.catch_up_idle.quantile(0.99)),
                ms(n.catch_up_loaded.quantile(0.5)),
                ms(n.catch_up_loaded.quantile(0.99)),
                n.catch_up_missed,
                n.catch_up_idle.micros.len() + n.catch_up_loaded.micros.len(),
            ),
            Verdict::of(Some(p99 < 100_000.0 && n.catch_up_missed == 0)),
        ));
    }
    let mem = r.memory.as_ref().map(|m| {
        (
            format!(
                "peak {} MiB (base {} MiB) vs 4 x {:.1} MiB + 48 MiB = {} MiB",
                mib(m.peak_kib),
                mib(m.base_kib),
                m.used as f64 / 1_048_576.0,
                mib(m.allowed_kib())
            ),
            m.peak_kib <= m.allowed_kib(),
        )
    });
    out.push(measured(
        "Memory: peak RSS with the largest account <= 4x `used` + 48 MiB".into(),
        mem,
    ));
    out
}
