//! The memory check, in a child process of its own so nothing else the bench holds counts:
//! the largest account imported (in one command, timed), the heap trimmed, the peak reset,
//! then whole-account reads, the export, full changes reads (plain, then in gzip and zstd,
//! which keep compressed forms beside the fragments), searches (the index built) and writes;
//! the peak resident set against `/usage` `used`, with the peak after each phase.

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};

use crate::drive::Conn;
use crate::generator::{Fixture, Spec};
use crate::host::{self, Host};
use workboard::transfer::Source;

/// What the child measured.
#[derive(Debug, Clone)]
pub struct Memory {
    /// `/usage` `used` of the account, in bytes.
    pub used: u64,
    /// Resident set with the server up and the account imported but not loaded (KiB).
    pub base_kib: u64,
    /// Peak resident set while the account was read and written (KiB).
    pub peak_kib: u64,
    /// How long the account's export took to import as one command.
    pub import_ms: u64,
    /// The peak after each phase (KiB).
    pub phases: Vec<(String, u64)>,
}

impl Memory {
    /// The issue's ceiling: four times the stored bytes plus 48 MiB.
    pub fn allowed_kib(&self) -> u64 {
        (4 * self.used) / 1024 + 48 * 1024
    }
}

pub const CHILD_ENV: &str = "LOAD_CHILD";

/// The memory check's searches: common title words, a prefix, a phrase, a filter.
const SEARCHES: [&str; 5] = ["invoice", "plan*", "report", "%22fix%20bug%22", "tag:work"];

/// Notes the peak so far as the phase `name`'s, and tells what is resident now (the heap and
/// mapped files apart), which the table leaves out.
fn record(phases: &mut Vec<(&'static str, u64)>, name: &'static str) {
    let kib = host::peak_rss_kib();
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |f: &str| {
        (status.lines().find(|l| l.starts_with(f)))
            .and_then(|l| l.split_whitespace().nth(1))
            .unwrap_or("?")
            .to_owned()
    };
    eprintln!(
        "load: memory phase `{name}`: peak {kib} KiB; now anonymous {} KiB, files {} KiB",
        field("RssAnon:"),
        field("RssFile:")
    );
    phases.push((name, kib));
}

/// Runs the check in a child process (this same executable) and reads its answer.
pub fn measure() -> Option<Memory> {
    let exe = std::env::current_exe().ok()?;
    let out = std::process::Command::new(exe)
        .env(CHILD_ENV, "memory")
        .stderr(std::process::Stdio::inherit())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().find_map(|l| l.strip_prefix("memory "))?;
    let mut parts = line.split_whitespace().map(|v| v.parse::<u64>().ok());
    let mut memory = Memory {
        used: parts.next()??,
        base_kib: parts.next()??,
        peak_kib: parts.next()??,
        import_ms: parts.next()??,
        phases: Vec::new(),
    };
    for line in text.lines().filter_map(|l| l.strip_prefix("phase ")) {
        if let Some((kib, name)) = line.split_once(' ') {
            memory
                .phases
                .push((name.to_owned(), kib.parse().unwrap_or(0)));
        }
    }
    Some(memory)
}

/// The child's side: prints `phase <KiB> <name>` lines, then
/// `memory <used> <base KiB> <peak KiB> <import ms>`.
pub fn child() {
    let (server_rt, client_rt) = crate::runtimes();
    let host = Host::start(&server_rt, None);
    let admin = host.services.admin.clone();
    let (key, account, _) = admin
        .issue_key(None, Some("memory check".into()))
        .expect("a key");
    let (cards, import_ms) = {
        let fixture = Fixture::generate(&Spec::largest().at(crate::wall_ms()));
        let cards: Vec<String> = fixture
            .open_tasks()
            .step_by(97)
            .take(200)
            .map(|t| t.id.clone())
            .collect();
        let export = fixture.export();
        drop(fixture);
        let started = Instant::now();
        admin
            .import(&account, &export, Source::Workboard, false)
            .expect("the import lands");
        (cards, started.elapsed().as_millis() as u64)
    };
    host.evict_documents();
    host::trim_heap();
    std::thread::sleep(Duration::from_millis(200));
    let base_kib = host::rss_kib();
    host::reset_peak_rss();
    let conn = Conn::new(host.addr);
    let key = key.as_str();
    let mut phases = Vec::new();
    let used = client_rt.block_on(async {
        let phase_reads: [(&str, &[&str]); 3] = [
            (
                "load + GET /projects",
                &["/api/v1/projects", "/api/v1/projects"],
            ),
            (
                "+ ?completed=all and /export",
                &["/api/v1/projects?completed=all", "/api/v1/export"],
            ),
            (
                "+ full /changes (recent, all)",
                &["/api/v1/changes", "/api/v1/changes?completed=all"],
            ),
        ];
        for (name, paths) in phase_reads {
            for path in paths {
                let (status, _) = conn.drain(path, key).await.expect("a read");
                assert_eq!(status, StatusCode::OK, "GET {path}");
            }
            record(&mut phases, name);
        }
        // The compressed forms kept beside the fragments and the changes runs, one
        // encoding after the other: what each adds.
        for (encoding, name) in [
            ("gzip", "+ the same in gzip"),
            ("zstd", "+ the same in zstd"),
        ] {
            for path in [
                "/api/v1/projects",
                "/api/v1/projects?completed=all",
                "/api/v1/export",
                "/api/v1/changes",
                "/api/v1/changes?completed=all",
            ] {
                let (status, _) = conn
                    .drain_with(path, key, &[("accept-encoding", encoding)])
                    .await
                    .expect("a compressed read");
                assert_eq!(status, StatusCode::OK, "GET {path} in {encoding}");
            }
            record(&mut phases, name);
        }
        // The search index: built from the document on the first search (an index of the
        // account's every card, in the data folder, read through memory maps), then queried.
        let search = |q: &str| {
            let path = format!("/api/v1/search?q={q}&completed=all&limit=100");
            let conn = conn.clone();
            async move {
                let (status, _) = conn.drain(&path, key).await.expect("a search");
                assert_eq!(status, StatusCode::OK, "GET {path}");
            }
        };
        search(SEARCHES[0]).await;
        record(&mut phases, "+ the search index built (first search)");
        for q in SEARCHES.iter().cycle().take(20) {
            search(q).await;
        }
        record(&mut phases, "+ 20 searches");
        for (i, card) in cards.iter().enumerate() {
            let body = format!("{{\"title\":\"Memory check {i:06}\"}}");
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
        }
        let (status, _) = conn.drain("/api/v1/projects", key).await.expect("a read");
        assert_eq!(status, StatusCode::OK);
        let (status, _) = conn
            .drain("/api/v1/search?q=memory", key)
            .await
            .expect("a search");
        assert_eq!(status, StatusCode::OK);
        record(
            &mut phases,
            "+ 200 PATCHes, a read and a search (indexing them)",
        );
        // As after a restart: the document dropped and loaded again, the index opened from
        // the data folder as the last search left it, not built; the peak starts afresh.
        host.evict_documents();
        host::trim_heap();
        host::reset_peak_rss();
        for path in ["/api/v1/projects", "/api/v1/export", "/api/v1/changes"] {
            let (status, _) = conn.drain(path, key).await.expect("a read");
            assert_eq!(status, StatusCode::OK, "GET {path}");
        }
        for q in SEARCHES.iter().cycle().take(20) {
            search(q).await;
        }
        record(
            &mut phases,
            "reloaded: peak reset, reads, 20 searches on the index from disk",
        );
        #[derive(serde::Deserialize)]
        struct Usage {
            used: u64,
        }
        let a = conn
            .call(Method::GET, "/api/v1/usage", key, None)
            .await
            .expect("usage");
        serde_json::from_slice::<Usage>(&a.body)
            .expect("a usage reply")
            .used
    });
    // The highest of the phases: the reloaded phase reset the peak.
    let peak_kib = phases.iter().map(|(_, kib)| *kib).max().unwrap_or(0);
    for (name, kib) in phases {
        println!("phase {kib} {name}");
    }
    println!("memory {used} {base_kib} {peak_kib} {import_ms}");
    host.stop(&server_rt);
}
