//! How this node reaches PostgreSQL: the connection settings (the process's [`Timeouts`]
//! where the URL sets none), named connections, a URL as logs show it, and how the server's
//! errors read in the domain's words.

use std::sync::OnceLock;
use std::time::Duration;

use postgres::{Client, NoTls};

use crate::error::WriteError;
use crate::store::Engine;

/// PostgreSQL's error in the domain's words.
pub(crate) fn fault(e: postgres::Error) -> WriteError {
    // Class 08 (connection), 53 (insufficient resources: disk full, out of memory), 57P
    // (the server shutting down) and 57014 (a statement past its timeout: the server is
    // too slow now) say the store cannot take writes now; the rest is a fault of ours.
    let unavailable = e.is_closed()
        || e.code().is_some_and(|c| {
            let code = c.code();
            code.starts_with("08")
                || code.starts_with("53")
                || code.starts_with("57P")
                || code == "57014"
        })
        || e.to_string().contains("connection");
    if unavailable {
        WriteError::Unavailable(e.to_string())
    } else {
        WriteError::Internal(e.to_string())
    }
}

impl<T> Engine<T> for Result<T, postgres::Error> {
    fn db(self) -> Result<T, WriteError> {
        self.map_err(fault)
    }
}

/// A URL with its password, if any, hidden.
pub fn redacted(url: &str) -> String {
    match url.parse::<postgres::Config>() {
        Ok(config) => {
            let host = config
                .get_hosts()
                .first()
                .map(|h| match h {
                    postgres::config::Host::Tcp(name) => name.clone(),
                    postgres::config::Host::Unix(path) => path.display().to_string(),
                })
                .unwrap_or_default();
            let port = config.get_ports().first().copied().unwrap_or(5432);
            let db = config.get_dbname().unwrap_or("");
            format!("postgres://{host}:{port}/{db}")
        }
        Err(_) => "postgres://(unreadable URL)".to_owned(),
    }
}

/// How long this process's PostgreSQL connections wait before giving up on the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// Opening a connection.
    pub connect: Duration,
    /// Silence on a connection before TCP keepalive probes start; three unanswered probes,
    /// ten seconds apart, end it (a peer gone silently is found within this plus 30 s).
    pub keepalive_idle: Duration,
    /// The longest one statement may run (zero: no limit). The largest legitimate one
    /// measured, the change log of an honest 29 MB Trello board's import, took 0.47 s.
    pub statement: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: Duration::from_secs(5),
            keepalive_idle: Duration::from_secs(30),
            statement: Duration::from_secs(30),
        }
    }
}

static TIMEOUTS: OnceLock<Timeouts> = OnceLock::new();

/// Sets the timeouts of every PostgreSQL connection this process makes from now on (once,
/// at start; a second call changes nothing and answers false).
pub fn set_timeouts(timeouts: Timeouts) -> bool {
    TIMEOUTS.set(timeouts).is_ok()
}

/// The connection settings of `url`, with the process's timeouts where the URL sets none.
pub(super) fn config(url: &str) -> Result<postgres::Config, WriteError> {
    let mut config: postgres::Config = url
        .parse()
        .map_err(|e| WriteError::Unavailable(format!("{}: {e}", redacted(url))))?;
    let t = TIMEOUTS.get().copied().unwrap_or_default();
    if config.get_connect_timeout().is_none() && !t.connect.is_zero() {
        config.connect_timeout(t.connect);
    }
    if !t.keepalive_idle.is_zero() {
        config
            .keepalives(true)
            .keepalives_idle(t.keepalive_idle)
            .keepalives_interval(Duration::from_secs(10))
            .keepalives_retries(3);
    }
    let options = config.get_options().unwrap_or_default().to_owned();
    if !t.statement.is_zero() && !options.contains("statement_timeout") {
        let bound = format!("-c statement_timeout={}", t.statement.as_millis());
        config.options(format!("{options} {bound}").trim());
    }
    Ok(config)
}

pub(super) fn connect(url: &str) -> Result<Client, WriteError> {
    config(url)?
        .connect(NoTls)
        .map_err(|e| WriteError::Unavailable(format!("cannot reach {}: {e}", redacted(url))))
}

/// A connection whose statements run as long as they need: an operator's copy of a whole
/// store, and the schema's upgrade (which may wait on another node's under a lock).
pub(super) fn connect_unbounded(url: &str) -> Result<Client, WriteError> {
    let mut client = connect(url)?;
    client.batch_execute("SET statement_timeout = 0").db()?;
    Ok(client)
}

/// How every node's writer connection names itself (`workboard writer PID`): a node taking
/// its horizon waits for the open transactions of these (see `store::shared`).
pub(super) const WRITER_APPLICATION: &str = "workboard writer";

/// A connection under an `application_name`: the writer's, so that other nodes can find
/// its open transaction; the follower's (`workboard follower PID`), so that an operator can
/// tell whose it is.
pub(super) fn connect_named(url: &str, name: &str) -> Result<Client, WriteError> {
    let mut config = config(url)?;
    config.application_name(name);
    config
        .connect(NoTls)
        .map_err(|e| WriteError::Unavailable(format!("cannot reach {}: {e}", redacted(url))))
}

/// Whether the database at `url` holds Workboard's schema.
pub fn schema_exists(url: &str) -> Result<bool, WriteError> {
    let mut client = connect(url)?;
    let row = client
        .query_one("SELECT to_regclass('meta') IS NOT NULL", &[])
        .db()?;
    Ok(row.get(0))
}
