//! The PostgreSQL the bench runs against with `LOAD_ENGINE=postgres`: the server named by
//! `LOAD_DATABASE`, or a throwaway cluster it starts itself, as `tests/pg.sh` does (initdb in
//! a temporary folder, as the `postgres` user when run as root, on a free port of 127.0.0.1,
//! `synchronous_commit` on as shipped), stopped and removed when dropped.

use std::path::PathBuf;
use std::process::{Command, Stdio};

pub struct Cluster {
    /// `postgres://…/postgres`: where the bench makes its databases.
    admin_url: String,
    /// The throwaway cluster's folder and `pg_ctl`, when the bench started one.
    owned: Option<(tempfile::TempDir, PathBuf)>,
}

fn bin_dir() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|d| d.join("initdb").exists())
        .collect();
    dirs.sort();
    dirs.pop()
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Runs `program args…`, as the `postgres` user when this process is root (initdb refuses
/// root).
fn run(program: &std::path::Path, args: &[&str]) {
    let status = if is_root() {
        let line = std::iter::once(program.display().to_string())
            .chain(args.iter().map(|a| format!("'{a}'")))
            .collect::<Vec<_>>()
            .join(" ");
        Command::new("su")
            .args(["postgres", "-s", "/bin/sh", "-c", &line])
            .stdout(Stdio::null())
            .status()
    } else {
        Command::new(program)
            .args(args)
            .stdout(Stdio::null())
            .status()
    };
    match status {
        Ok(s) if s.success() => {}
        other => panic!("load: {} failed: {other:?}", program.display()),
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

impl Cluster {
    pub fn start() -> Cluster {
        if let Ok(url) = std::env::var("LOAD_DATABASE") {
            return Cluster {
                admin_url: url,
                owned: None,
            };
        }
        let bin = bin_dir().expect(
            "load: LOAD_ENGINE=postgres needs PostgreSQL (apt-get install postgresql) or LOAD_DATABASE",
        );
        let dir = tempfile::Builder::new()
            .prefix("workboard-load-pg-")
            .tempdir()
            .expect("a temporary folder");
        if is_root() {
            let _ = Command::new("chown")
                .args(["postgres", &dir.path().display().to_string()])
                .status();
        }
        let data = dir.path().join("data");
        let data_s = data.display().to_string();
        run(
            &bin.join("initdb"),
            &[
                "-D",
                &data_s,
                "--auth=trust",
                "--username=postgres",
                "-E",
                "UTF8",
                "--no-instructions",
            ],
        );
        let port = free_port();
        let options = format!(
            "-p {port} -k {} -c listen_addresses=127.0.0.1 -c max_connections=300 -c shared_buffers=256MB",
            dir.path().display()
        );
        let log = dir.path().join("server.log").display().to_string();
        run(
            &bin.join("pg_ctl"),
            &["-D", &data_s, "-l", &log, "-w", "-o", &options, "start"],
        );
        eprintln!("load: a throwaway PostgreSQL on port {port}");
        Cluster {
            admin_url: format!("postgres://postgres@127.0.0.1:{port}/postgres"),
            owned: Some((dir, bin.join("pg_ctl"))),
        }
    }

    /// A new, empty database named `name` (dropped first if a run left one), and its URL.
    pub fn database(&self, name: &str) -> String {
        let mut client = postgres::Client::connect(&self.admin_url, postgres::NoTls)
            .expect("the bench's PostgreSQL answers");
        // Each its own statement: neither runs inside a transaction block.
        for sql in [
            format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
            format!("CREATE DATABASE {name}"),
        ] {
            client
                .batch_execute(&sql)
                .expect("a database for the bench");
        }
        let (base, _) = self
            .admin_url
            .rsplit_once('/')
            .expect("a URL with a database name");
        format!("{base}/{name}")
    }
}

/// Vacuums and analyses the database at `url`, then checkpoints: the work a bulk import
/// leaves due is done before anything is measured.
pub fn settle(url: &str) {
    let started = std::time::Instant::now();
    let mut client =
        postgres::Client::connect(url, postgres::NoTls).expect("the bench's PostgreSQL answers");
    client
        .batch_execute("VACUUM ANALYZE")
        .expect("the database vacuumed");
    client.batch_execute("CHECKPOINT").expect("a checkpoint");
    eprintln!(
        "load: the database vacuumed and checkpointed after the imports ({:.1} s)",
        started.elapsed().as_secs_f64()
    );
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if let Some((dir, pg_ctl)) = &self.owned {
            let data = dir.path().join("data").display().to_string();
            run(pg_ctl, &["-D", &data, "-m", "immediate", "stop"]);
        }
    }
}
