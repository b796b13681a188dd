//! The noisy-neighbour report: the table of each mode's windows, and its section of
//! `BENCHMARKS.md`, which the load bench keeps when it rewrites the file.

use std::sync::atomic::Ordering;

use crate::attacks::ATTACKS;
use crate::{VICTIM_EVERY, Window};

const BEGIN: &str = "<!-- keep: noisy -->\n";
const END: &str = "<!-- end keep: noisy -->\n";

pub fn report(windows: &[Window], seconds: f64, pinned: bool) -> String {
    let quiet = &windows[0];
    let mut s = String::from(if pinned {
        "### Pinned: the server on CPU 0, the clients on CPU 1\n\n"
    } else {
        "### Unpinned: the server and the clients share both cores\n\n"
    });
    s.push_str(&format!(
        "`{}cargo bench --bench noisy`, measured {} UTC: the release `workboard` binary alone in its process on SQLite{}; a victim account PATCHes one card and reads it back every {} ms (open loop) while a hostile account runs one attack at a time at full speed, {seconds} s a window. *CPU* and *peak* are the server process's in the window; *p99 vs quiet* is against the lower p99 of the two quiet windows (before and after the attacks), *above quiet* against the first quiet window's CPU and peak; the cost per MiB divides by the bytes the attack sent. Target: the victim's p99 within 2x its quiet p99, no 5xx and no 503 for the victim, and at most 100 ms of server CPU and 16 MiB of memory above the quiet peak per MiB of body.\n\n",
        if pinned { "NOISY_PIN=1 " } else { "" },
        now_text(),
        if pinned {
            " and pinned to CPU 0, the bench's clients to CPU 1"
        } else {
            ", sharing both cores with the bench's clients"
        },
        VICTIM_EVERY.as_millis(),
    ));
    s.push_str("| window | attack | victim p50 ms | victim p99 ms | p99 vs quiet | victim 5xx / 503 | attack requests (2xx/4xx/5xx/cut) | MiB sent | server CPU s | CPU ms per MiB | peak MiB | above quiet MiB | above quiet per MiB sent | target |\n");
    s.push_str("|---|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---|\n");
    let quiet_p99 = windows
        .iter()
        .filter(|w| w.sent.is_none())
        .map(|w| w.victim.quantile(0.99))
        .fold(f64::INFINITY, f64::min);
    for w in windows {
        let (what, counts, mib) = match (&w.sent, ATTACKS.iter().find(|a| a.name == w.name)) {
            (Some(sent), Some(a)) => {
                let mib = sent.bytes.load(Ordering::Relaxed) as f64 / (1 << 20) as f64;
                (
                    a.what.to_owned(),
                    format!(
                        "{} ({}/{}/{}/{})",
                        sent.requests.load(Ordering::Relaxed),
                        sent.ok.load(Ordering::Relaxed),
                        sent.refused.load(Ordering::Relaxed),
                        sent.failed.load(Ordering::Relaxed),
                        sent.dropped.load(Ordering::Relaxed)
                    ),
                    mib,
                )
            }
            _ => ("none".to_owned(), "-".to_owned(), 0.0),
        };
        let extra_cpu = w.cpu.saturating_sub(quiet.cpu).as_secs_f64() * 1000.0;
        let above = (w.peak_mib - quiet.peak_mib).max(0.0);
        let per = |x: f64| {
            if mib > 0.0 {
                format!("{:.1}", x / mib)
            } else {
                "-".into()
            }
        };
        let ratio = w.victim.quantile(0.99) / quiet_p99;
        let verdict = verdict(w, ratio, extra_cpu, above, mib);
        s.push_str(&format!(
            "| {} | {} | {:.2} | {:.2} | {:.2}x | {} / {} | {} | {:.1} | {:.2} | {} | {:.0} | {:.0} | {} | {verdict} |\n",
            w.name,
            what,
            w.victim.quantile(0.5),
            w.victim.quantile(0.99),
            ratio,
            w.victim.server_errors,
            w.victim.overloaded,
            counts,
            mib,
            w.cpu.as_secs_f64(),
            per(extra_cpu),
            w.peak_mib,
            above,
            per(above),
        ));
    }
    s.push('\n');
    s
}

/// Each part of the target an attack's window missed, or "met". A flood of small writes is
/// held to its CPU per write rather than per MiB (its bodies are tiny, its work legitimate and
/// bounded by the daily write allowance), and reported so.
fn verdict(w: &Window, ratio: f64, extra_cpu_ms: f64, above_mib: f64, mib: f64) -> String {
    let Some(sent) = &w.sent else {
        return "baseline".into();
    };
    let mut missed = Vec::new();
    if ratio > 2.0 {
        missed.push(format!("p99 {ratio:.1}x"));
    }
    if w.victim.server_errors + w.victim.overloaded > 0 {
        missed.push("victim 5xx/503".to_owned());
    }
    let requests = sent.requests.load(Ordering::Relaxed).max(1) as f64;
    let flood = w.name == "queue flood";
    if !flood && mib > 0.0 && extra_cpu_ms / mib > 100.0 {
        missed.push("CPU per MiB".to_owned());
    }
    // Peak RSS moves by a few MiB between quiet windows alone (see the second quiet row), so
    // growth within 16 MiB is not held against an attack that sent little.
    if mib > 0.0 && above_mib / mib > 16.0 && above_mib > 16.0 {
        missed.push("memory per MiB".to_owned());
    }
    let mut text = if missed.is_empty() {
        "met".to_owned()
    } else {
        format!("**missed**: {}", missed.join(", "))
    };
    if flood {
        text.push_str(&format!(
            " ({:.0} us of CPU per write)",
            extra_cpu_ms * 1000.0 / requests
        ));
    }
    text
}

fn now_text() -> String {
    let out = std::process::Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M"])
        .output();
    out.map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}

/// Puts the section into `BENCHMARKS.md`, replacing the last one, before "Running".
pub fn write_section(section: &str) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/BENCHMARKS.md");
    let before = std::fs::read_to_string(path).unwrap_or_default();
    let block = format!("{BEGIN}{section}{END}");
    let after = match (before.find(BEGIN), before.find(END)) {
        (Some(start), Some(end)) if end > start => {
            format!("{}{block}{}", &before[..start], &before[end + END.len()..])
        }
        _ => match before.find("\n## Running") {
            Some(at) => format!("{}\n{block}{}", &before[..at], &before[at..]),
            None => format!("{before}\n{block}"),
        },
    };
    std::fs::write(path, after).expect("write BENCHMARKS.md");
}
