//! Starts the real `workboard` binary on a free 127.0.0.1 port with a fresh data folder and
//! speaks HTTP to it. Each test owns its `Server`; dropping it kills the process.
//!
//! The server announces itself on stdout: `key: wb_...` (only on a folder with no account),
//! then `listening: 127.0.0.1:PORT` once it accepts connections. The harness waits for that
//! line instead of sleeping. Stderr (the log) goes to `server.log` beside the data folder and
//! is printed when a test fails.

use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use serde_json::Value;

pub use crate::client::*;
pub use crate::wait::{until, within};
use tempfile::TempDir;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_workboard");
const STARTUP_DEADLINE: Duration = Duration::from_secs(20);
const CLI_DEADLINE: Duration = Duration::from_secs(30);

/// A running `workboard serve` on its own data folder.
pub struct Server {
    root: TempDir,
    args: Vec<String>,
    envs: Vec<(String, String)>,
    /// Pass `--data`/`--addr` through environment variables instead of flags.
    via_env: bool,
    child: Option<Child>,
    addr: String,
    /// `GET /metrics`'s address, when started with `--metrics-addr`.
    pub metrics_addr: Option<String>,
    /// A command the server runs under (`prlimit --nofile=...`), if any.
    wrapper: Vec<String>,
    /// The account's first key, as printed by the first start.
    pub key: String,
    http: reqwest::Client,
}

impl Server {
    pub async fn start() -> Server {
        Server::start_with(&[]).await
    }

    /// Starts with extra `serve` flags, e.g. `&["--limit-projects-per-account", "3"]`.
    pub async fn start_with(args: &[&str]) -> Server {
        let mut server = Server::new(fresh_root(), args, &[], false);
        let key = server.launch().await;
        server.key = key.expect("a fresh data folder must print `key: wb_...` on stdout");
        server
    }

    /// Starts with `WORKBOARD_DATA`, `WORKBOARD_ADDR` and the given variables, no flags.
    pub async fn start_with_env(envs: &[(&str, &str)]) -> Server {
        let mut server = Server::new(fresh_root(), &[], envs, true);
        let key = server.launch().await;
        server.key = key.expect("a fresh data folder must print `key: wb_...` on stdout");
        server
    }

    /// Starts with extra flags, the server run under `wrapper` (a command and its arguments
    /// that end by running the command after them, such as `prlimit --nofile=N:N --`).
    pub async fn start_wrapped(wrapper: &[&str], args: &[&str]) -> Server {
        let mut server = Server::new(fresh_root(), args, &[], false);
        server.wrapper = wrapper.iter().map(|a| a.to_string()).collect();
        let key = server.launch().await;
        server.key = key.expect("a fresh data folder must print `key: wb_...` on stdout");
        server
    }

    /// Starts on a folder that already holds an account whose key the caller knows.
    /// Such a start must not print a key.
    pub async fn start_existing(root: TempDir, key: String) -> Server {
        let mut server = Server::new(root, &[], &[], false);
        let printed = server.launch().await;
        assert_eq!(
            printed, None,
            "a folder with an account must not print a new key"
        );
        server.key = key;
        server
    }

    /// Starts on a prepared root (see [`root_on`]) with extra flags; returns the server and
    /// the key it printed, if any.
    pub async fn start_on(root: TempDir, args: &[&str]) -> (Server, Option<String>) {
        let mut server = Server::new(root, args, &[], false);
        let printed = server.launch().await;
        if let Some(key) = &printed {
            server.key = key.clone();
        }
        (server, printed)
    }

    /// Another node on this server's PostgreSQL database: a data folder of its own, this
    /// node's pepper, the first key, and `args`.
    pub async fn another_node(&self, args: &[&str]) -> Server {
        let database = database_of(&self.data_dir()).expect("another node needs PostgreSQL");
        let root = tempfile::Builder::new()
            .prefix("workboard-test-")
            .tempdir()
            .expect("temp dir");
        std::fs::write(root.path().join(DATABASE_FILE), database).expect("the database file");
        let pepper = self.data_dir().join("pepper");
        let mut all = vec!["--pepper-file", pepper.to_str().expect("a UTF-8 path")];
        all.extend(args);
        let (mut node, printed) = Server::start_on(root, &all).await;
        assert_eq!(printed, None, "a second node prints no first key");
        node.key = self.key.clone();
        node
    }

    fn new(root: TempDir, args: &[&str], envs: &[(&str, &str)], via_env: bool) -> Server {
        Server {
            root,
            args: args.iter().map(|a| a.to_string()).collect(),
            envs: envs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            via_env,
            child: None,
            addr: String::new(),
            metrics_addr: None,
            wrapper: Vec::new(),
            key: String::new(),
            http: reqwest::Client::builder()
                .no_proxy()
                .timeout(Duration::from_secs(30))
                .build()
                .expect("http client"),
        }
    }

    /// Spawns `serve`, waits for `listening:`, returns the key line if one was printed.
    async fn launch(&mut self) -> Option<String> {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.log_path())
            .expect("open server log");
        let mut cmd = match self.wrapper.split_first() {
            Some((program, rest)) => {
                let mut cmd = Command::new(program);
                for (k, _) in std::env::vars() {
                    if k.starts_with("WORKBOARD_") {
                        cmd.env_remove(k);
                    }
                }
                cmd.kill_on_drop(true);
                cmd.args(rest).arg(BIN);
                cmd
            }
            None => command(),
        };
        cmd.arg("serve");
        let database = database_of(&self.data_dir());
        if self.via_env {
            cmd.env("WORKBOARD_DATA", self.data_dir());
            cmd.env("WORKBOARD_ADDR", "127.0.0.1:0");
            if let Some(url) = &database {
                cmd.env("WORKBOARD_DATABASE", url);
            }
        } else {
            cmd.args(["--addr", "127.0.0.1:0", "--data"])
                .arg(self.data_dir());
            if let Some(url) = &database {
                cmd.args(["--database", url]);
            }
        }
        cmd.args(&self.args);
        for (k, v) in &self.envs {
            cmd.env(k, v);
        }
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log));
        let mut child = cmd.spawn().expect("spawn workboard serve");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut lines = BufReader::new(stdout).lines();
        let waited = tokio::time::timeout(STARTUP_DEADLINE, async {
            let mut key = None;
            let mut metrics = None;
            while let Some(line) = lines.next_line().await.expect("read server stdout") {
                if let Some(k) = line.strip_prefix("key: ") {
                    key = Some(k.trim().to_string());
                } else if let Some(m) = line.strip_prefix("metrics: ") {
                    metrics = Some(m.trim().to_string());
                } else if let Some(a) = line.strip_prefix("listening: ") {
                    return Some((key, a.trim().to_string(), metrics));
                }
            }
            None
        })
        .await;
        let (key, addr, metrics) = match waited {
            Ok(Some(found)) => found,
            Ok(None) => panic!("server exited before `listening:`\n{}", self.log_tail()),
            Err(_) => panic!("no `listening:` line within 20 s\n{}", self.log_tail()),
        };
        // Keep draining stdout so the server never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        self.child = Some(child);
        self.addr = addr;
        self.metrics_addr = metrics;
        key
    }

    /// kill -9 the server, then start it again on the same data folder (new port).
    pub async fn restart(&mut self) {
        self.kill().await;
        let printed = self.launch().await;
        assert_eq!(printed, None, "a restart must not print a new key");
    }

    /// kill -9 the server and wait for it to be gone.
    pub async fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().await.expect("kill server");
        }
    }

    pub fn root(&self) -> &Path {
        self.root.path()
    }

    pub fn data_dir(&self) -> PathBuf {
        self.root.path().join("data")
    }

    fn log_path(&self) -> PathBuf {
        self.root.path().join("server.log")
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.log_path()).unwrap_or_default()
    }

    fn log_tail(&self) -> String {
        let log = self.log();
        let lines: Vec<&str> = log.lines().collect();
        let from = lines.len().saturating_sub(30);
        format!("--- server log (tail) ---\n{}", lines[from..].join("\n"))
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    /// The interface's `host:port`.
    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// The server process's id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().and_then(|c| c.id())
    }

    /// A client with this server's first key, paths relative to `/api/v1`.
    pub fn api(&self) -> Api {
        self.api_for(&self.key)
    }

    pub fn api_for(&self, key: &str) -> Api {
        self.with_header(&format!("Bearer {key}"))
    }

    /// A client sending this exact `Authorization` header value.
    pub fn with_header(&self, value: &str) -> Api {
        Api::new(self.http.clone(), self.url(""), Some(value.to_string()))
    }

    /// A client sending no `Authorization` header at all.
    pub fn anon(&self) -> Api {
        Api::new(self.http.clone(), self.url(""), None)
    }

    /// Runs a CLI command against this server's data folder (`--data` is appended).
    pub async fn cli(&self, args: &[&str]) -> CliOutput {
        cli(&self.data_dir(), args).await
    }

    /// `keys issue [--account ID]`: a new account when `account` is None. Returns (key, account).
    pub async fn issue_key(&self, account: Option<&str>) -> (String, String) {
        issue_key(&self.data_dir(), account, None).await
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("{}", self.log_tail());
        }
        if let Some(child) = self.child.as_mut() {
            let _ = child.start_kill();
        }
    }
}

/// Whether this run tests the PostgreSQL engine (`WORKBOARD_TEST_ENGINE=postgres`, with
/// `WORKBOARD_TEST_DATABASE` naming the server: `tests/run.sh` starts one).
pub fn on_postgres() -> bool {
    std::env::var("WORKBOARD_TEST_ENGINE").is_ok_and(|e| e == "postgres")
}

/// The file in a test root that names its PostgreSQL database.
const DATABASE_FILE: &str = "database-url";

/// The PostgreSQL database of the root holding the data folder `data`, on a PostgreSQL run.
pub fn database_of(data: &Path) -> Option<String> {
    let root = data.parent()?;
    std::fs::read_to_string(root.join(DATABASE_FILE))
        .ok()
        .map(|s| s.trim().to_owned())
}

/// Runs a statement on the PostgreSQL server of this run (as its superuser), off the async
/// runtime (the sync client runs a runtime of its own).
pub fn on_server(sql: String) {
    let admin = std::env::var("WORKBOARD_TEST_DATABASE")
        .expect("WORKBOARD_TEST_DATABASE names a PostgreSQL server on a PostgreSQL run");
    std::thread::spawn(move || {
        let mut client = postgres::Client::connect(&admin, postgres::NoTls)
            .unwrap_or_else(|e| panic!("the test database server: {e}"));
        client
            .batch_execute(&sql)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    })
    .join()
    .expect("the statement ran");
}

/// The PostgreSQL server of this run. Tests that move stores between the engines need one on
/// either pass: `tests/run.sh` starts one, or set `WORKBOARD_TEST_DATABASE`.
pub fn postgres_server() -> String {
    std::env::var("WORKBOARD_TEST_DATABASE").expect(
        "WORKBOARD_TEST_DATABASE must name a PostgreSQL server (tests/run.sh starts a throwaway one)",
    )
}

/// A new empty database on the run's server, by URL.
pub fn fresh_database() -> String {
    let admin = postgres_server();
    let name = format!("wb_{}", rand::random::<u64>());
    on_server(format!("CREATE DATABASE {name}"));
    let (base, _) = admin.rsplit_once('/').expect("a URL ending in /dbname");
    format!("{base}/{name}")
}

/// A test root on this pass's engine.
fn fresh_root() -> TempDir {
    root_on(Engine::of_this_run())
}

/// A temporary folder whose `data` subfolder does not exist yet.
pub fn empty_root() -> TempDir {
    fresh_root()
}

/// The two store engines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Sqlite,
    Postgres,
}

impl Engine {
    /// The engine this pass tests.
    pub fn of_this_run() -> Engine {
        if on_postgres() {
            Engine::Postgres
        } else {
            Engine::Sqlite
        }
    }

    pub fn other(self) -> Engine {
        match self {
            Engine::Sqlite => Engine::Postgres,
            Engine::Postgres => Engine::Sqlite,
        }
    }
}

/// A test root on the given engine, whatever this pass tests: on PostgreSQL it names a fresh
/// database of its own.
pub fn root_on(engine: Engine) -> TempDir {
    let root = tempfile::Builder::new()
        .prefix("workboard-test-")
        .tempdir()
        .expect("temp dir");
    if engine == Engine::Postgres {
        std::fs::write(root.path().join(DATABASE_FILE), fresh_database())
            .expect("the root's database file");
    }
    root
}

/// Where a root's store lives, as `workboard copy` names it: its database URL, or its data
/// folder.
pub fn store_of(root: &Path) -> String {
    database_of(&root.join("data"))
        .unwrap_or_else(|| root.join("data").to_string_lossy().into_owned())
}

/// A `workboard` command with no inherited `WORKBOARD_*` variables.
pub fn command() -> Command {
    let mut cmd = Command::new(BIN);
    for (k, _) in std::env::vars() {
        if k.starts_with("WORKBOARD_") {
            cmd.env_remove(k);
        }
    }
    cmd.kill_on_drop(true);
    cmd
}

pub struct CliOutput {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl CliOutput {
    #[track_caller]
    pub fn success(&self) -> &Self {
        assert!(
            self.status.success(),
            "CLI failed ({}):\nstdout: {}\nstderr: {}",
            self.status,
            self.stdout,
            self.stderr
        );
        self
    }

    /// Stdout parsed as JSON lines.
    pub fn json_lines(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
            .collect()
    }
}

/// Runs `workboard ARGS --data DATA` (and `--database URL` on a PostgreSQL run) with a
/// deadline.
pub async fn cli(data: &Path, args: &[&str]) -> CliOutput {
    let mut all: Vec<&str> = args.to_vec();
    let data = data.to_string_lossy();
    all.extend(["--data", &data]);
    let database = database_of(Path::new(&*data));
    if let Some(url) = &database {
        all.extend(["--database", url]);
    }
    workboard(&all).await
}

/// Runs `workboard ARGS` exactly as given, with a deadline.
pub async fn workboard(args: &[&str]) -> CliOutput {
    let mut cmd = command();
    cmd.args(args).stdin(Stdio::null());
    let out = tokio::time::timeout(CLI_DEADLINE, cmd.output())
        .await
        .unwrap_or_else(|_| panic!("`workboard {}` did not finish within 30 s", args.join(" ")))
        .expect("run workboard CLI");
    CliOutput {
        status: out.status,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `workboard keys issue`: the key is the last stdout line, `account: a_...` is on stderr.
pub async fn issue_key(
    data: &Path,
    account: Option<&str>,
    label: Option<&str>,
) -> (String, String) {
    let mut args = vec!["keys", "issue"];
    if let Some(a) = account {
        args.extend(["--account", a]);
    }
    if let Some(l) = label {
        args.extend(["--label", l]);
    }
    let out = cli(data, &args).await;
    out.success();
    let key = out
        .stdout
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .expect("keys issue printed no key")
        .trim()
        .to_string();
    assert!(
        key.starts_with("wb_"),
        "last stdout line is not a key: {key:?}"
    );
    let at = out
        .stderr
        .find("account: ")
        .expect("keys issue printed no `account:` on stderr");
    let account: String = out.stderr[at + "account: ".len()..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
        .collect();
    assert!(account.starts_with("a_"), "account id {account:?}");
    (key, account)
}
