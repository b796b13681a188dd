//! PostgreSQL, the server engine: the same contract as SQLite on a database that several
//! nodes can share. The writer owns one connection (the `postgres` crate's sync client, on
//! its own thread); the reads the store serves go to a few connections, each owned by a
//! thread of its own, so that a read asked from anywhere (an async worker included) never
//! runs the client's runtime inside another.
//!
//! A write is acknowledged only after PostgreSQL's COMMIT. With `--durability normal` the
//! writer's session sets `synchronous_commit = off`: a crash of the PostgreSQL server may
//! then lose the last acknowledged writes.
//!
//! Every connection has a connect timeout, TCP keepalives and a statement timeout
//! ([`Timeouts`], set once per process from the flags), so a server or a network that stops
//! answering is found in bounded time instead of holding the writer, a read or the follower
//! for ever. The URL's own `connect_timeout` and `statement_timeout` (in `options`) win.

mod connect;
mod copy;
mod deferred;
mod feed;
mod idempotency;
mod load;
mod notice;
mod schema;
mod session;
mod tx;

use std::path::Path;
use std::sync::Arc;

use crossbeam_channel::{Receiver, Sender};
use domain::storage::ReadStore;
use postgres::Client;

pub use connect::{Timeouts, redacted, schema_exists, set_timeouts};

use super::Engine;
use super::shared::{Backlog, Feed, ReadPoint, SharedStore};
use super::{
    AllowanceRow, BinEntry, Durability, KeyRecord, LiveKey, Loaded, ProjectName, Store, TicketRow,
    Tx, Writer,
};
use crate::error::WriteError;
use connect::{WRITER_APPLICATION, connect, connect_named, connect_unbounded};
use session::PgTx;

/// A job for a read connection.
type Job = Box<dyn FnOnce(&mut Client) + Send>;

/// Read connections, each owned by a thread of its own.
struct Reads {
    jobs: Sender<Job>,
}

/// How many read connections a node keeps.
const READ_CONNECTIONS: usize = 4;

impl Reads {
    fn start(url: &str) -> Result<Reads, WriteError> {
        let (jobs, queue) = crossbeam_channel::unbounded::<Job>();
        for i in 0..READ_CONNECTIONS {
            let client = connect(url)?;
            let (url, queue) = (url.to_owned(), queue.clone());
            std::thread::Builder::new()
                .name(format!("workboard-pg-read-{i}"))
                .spawn(move || serve_reads(client, &url, &queue))
                .map_err(|e| WriteError::Internal(e.to_string()))?;
        }
        Ok(Reads { jobs })
    }

    /// Runs `f` on a read connection and waits for its answer.
    fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Client) -> Result<T, WriteError> + Send + 'static,
    ) -> Result<T, WriteError> {
        let (tx, rx) = crossbeam_channel::bounded(1);
        self.jobs
            .send(Box::new(move |client| {
                let _ = tx.send(f(client));
            }))
            .map_err(|_| WriteError::Unavailable("the read connections have stopped".into()))?;
        rx.recv()
            .unwrap_or_else(|_| Err(WriteError::Unavailable("a read connection failed".into())))
    }
}

/// A read connection's thread: runs jobs until the store is gone, reconnecting when the
/// connection was lost.
fn serve_reads(mut client: Client, url: &str, queue: &Receiver<Job>) {
    while let Ok(job) = queue.recv() {
        if client.is_closed() {
            match connect(url) {
                Ok(fresh) => client = fresh,
                Err(e) => tracing::warn!(error = %e, "a read connection could not reconnect"),
            }
        }
        job(&mut client);
    }
}

/// The PostgreSQL store of a node.
pub struct PgStore {
    url: String,
    /// This process's token in what it announces to other nodes (and its feed's pings).
    node: String,
    durability: Durability,
    reads: Reads,
}

impl PgStore {
    /// Connects, and creates or migrates the schema under an advisory lock, so that two
    /// nodes starting at once on an empty database do not both create it.
    pub fn open(url: &str, durability: Durability) -> Result<PgStore, WriteError> {
        let mut client = connect_unbounded(url)?;
        schema::upgrade(&mut client)?;
        Ok(PgStore {
            url: url.to_owned(),
            node: crate::ids::random_token(12),
            durability,
            reads: Reads::start(url)?,
        })
    }
}

impl ReadStore for PgStore {
    fn load_account(
        &self,
        account: &str,
        each: &mut dyn FnMut(Loaded),
    ) -> Result<Option<(i64, i64)>, WriteError> {
        // The rows come back whole from the read connection's thread, then go to `each`.
        let account = account.to_owned();
        let (counters, rows) = self.reads.run(move |c| load::load_account(c, &account))?;
        for row in rows {
            each(row);
        }
        Ok(counters)
    }

    fn last_stamp(&self, account: &str) -> Result<i64, WriteError> {
        let account = account.to_owned();
        self.reads.run(move |c| load::last_stamp(c, &account))
    }

    fn list_keys(&self, account: &str) -> Result<Vec<KeyRecord>, WriteError> {
        let account = account.to_owned();
        self.reads.run(move |c| load::list_keys(c, &account))
    }

    fn list_bin(&self, account: &str) -> Result<Vec<BinEntry>, WriteError> {
        let account = account.to_owned();
        self.reads.run(move |c| load::list_bin(c, &account))
    }

    fn storage(&self, account: &str) -> Result<(u64, u64), WriteError> {
        let account = account.to_owned();
        self.reads.run(move |c| load::storage(c, &account))
    }

    fn project_names(&self) -> Result<Vec<ProjectName>, WriteError> {
        self.reads.run(load::project_names)
    }

    fn is_shared(&self) -> bool {
        true
    }

    fn backlog(&self, account: &str, rev: i64) -> Result<Backlog, WriteError> {
        let account = account.to_owned();
        self.reads.run(move |c| load::backlog(c, &account, rev))
    }
}

impl Store for PgStore {
    fn engine(&self) -> &'static str {
        "postgresql"
    }

    fn open_writer(&self) -> Result<Box<dyn Writer>, WriteError> {
        let writer = PgWriter {
            tx: PgTx::new(writer_connection(&self.url, self.durability)?, &self.node),
            url: self.url.clone(),
            durability: self.durability,
        };
        Ok(Box::new(writer))
    }

    fn account_ids(&self) -> Result<Vec<String>, WriteError> {
        self.reads.run(load::account_ids)
    }

    fn account_exists(&self, account: &str) -> Result<bool, WriteError> {
        let account = account.to_owned();
        self.reads.run(move |c| load::account_exists(c, &account))
    }

    fn live_keys(&self) -> Result<Vec<LiveKey>, WriteError> {
        self.reads.run(load::live_keys)
    }

    fn holds_keys(&self) -> Result<bool, WriteError> {
        self.reads.run(load::holds_keys)
    }

    fn saved_allowances(&self) -> Result<Vec<AllowanceRow>, WriteError> {
        self.reads.run(load::saved_allowances)
    }

    fn meta(&self, name: &str) -> Result<Option<Vec<u8>>, WriteError> {
        let name = name.to_owned();
        self.reads.run(move |c| load::meta(c, &name))
    }

    fn claim_meta(&self, name: &str, value: &[u8]) -> Result<Vec<u8>, WriteError> {
        let (name, value) = (name.to_owned(), value.to_vec());
        self.reads.run(move |c| {
            c.execute(
                "INSERT INTO meta (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
                &[&name, &value],
            )
            .db()?;
            load::meta(c, &name)?
                .ok_or_else(|| WriteError::Internal(format!("`{name}` was not kept")))
        })
    }

    fn size_bytes(&self) -> Result<u64, WriteError> {
        self.reads.run(|c| {
            let row = c
                .query_one("SELECT pg_database_size(current_database())", &[])
                .db()?;
            Ok(row.get::<_, i64>(0) as u64)
        })
    }

    fn snapshot_to(&self, out: &Path) -> Result<u64, WriteError> {
        // A logical copy of one snapshot into a new SQLite file: the backup's format.
        let target = super::sqlite::SqliteStore::open(out, Durability::Normal)?;
        let mut loader = target.loader()?;
        self.copy_out(&mut |rows| loader.load(rows))?;
        loader.commit()?;
        super::sqlite::count_records(out)
    }

    fn holds_data(&self) -> Result<bool, WriteError> {
        self.reads.run(|c| {
            let row = c
                .query_one(
                    "SELECT EXISTS (SELECT 1 FROM accounts) OR EXISTS (SELECT 1 FROM keys)",
                    &[],
                )
                .db()?;
            Ok(row.get(0))
        })
    }

    fn copy_out(
        &self,
        each: &mut dyn FnMut(super::copy::Rows) -> Result<(), WriteError>,
    ) -> Result<(), WriteError> {
        // A connection of its own, on this thread: a copy is an operator's command, run
        // outside the async runtime.
        let mut client = connect_unbounded(&self.url)?;
        copy::copy_out(&mut client, each)
    }

    fn loader(&self) -> Result<Box<dyn super::copy::Loader>, WriteError> {
        let client = connect_unbounded(&self.url)?;
        Ok(Box::new(copy::PgLoader::begin(client)?))
    }

    fn shared(self: Arc<Self>) -> Option<Arc<dyn SharedStore>> {
        Some(self)
    }
}

impl SharedStore for PgStore {
    fn read_point(&self, account: &str, key_id: &str) -> Result<ReadPoint, WriteError> {
        let (account, key_id) = (account.to_owned(), key_id.to_owned());
        self.reads
            .run(move |c| load::read_point(c, &account, &key_id))
    }

    fn allowances(&self, keys: &[String]) -> Result<Vec<AllowanceRow>, WriteError> {
        let keys = keys.to_vec();
        self.reads.run(move |c| load::allowances(c, &keys))
    }

    fn live_key_by_digest(&self, digest: &[u8]) -> Result<Option<LiveKey>, WriteError> {
        let digest = digest.to_vec();
        self.reads
            .run(move |c| load::live_key_by_digest(c, &digest))
    }

    fn put_ticket(&self, ticket: &TicketRow, now: i64) -> Result<(), WriteError> {
        let ticket = ticket.clone();
        self.reads.run(move |c| load::put_ticket(c, &ticket, now))
    }

    fn ticket(&self, digest: &[u8], take: bool) -> Result<Option<TicketRow>, WriteError> {
        let digest = digest.to_vec();
        self.reads.run(move |c| load::ticket(c, &digest, take))
    }

    fn listen(&self) -> Result<Box<dyn Feed>, WriteError> {
        Ok(Box::new(feed::PgFeed::open(&self.url, &self.node)?))
    }
}

/// The writer's session: named, and with `synchronous_commit` off under `--durability
/// normal`.
fn writer_connection(url: &str, durability: Durability) -> Result<Client, WriteError> {
    let name = format!("{WRITER_APPLICATION} {}", std::process::id());
    let mut client = connect_named(url, &name)?;
    if durability == Durability::Normal {
        client.batch_execute("SET synchronous_commit = off").db()?;
    }
    Ok(client)
}

/// The writer's connection, made again when it was lost (the server restarted, failed over,
/// or ended the session): the group that found it lost was refused, and the next begins on a
/// new one.
struct PgWriter {
    tx: PgTx,
    url: String,
    durability: Durability,
}

impl Writer for PgWriter {
    fn begin(&mut self) -> Result<(), WriteError> {
        self.tx.discard();
        match self.tx.batch("BEGIN") {
            Err(_) if self.tx.is_closed() => {
                tracing::warn!("the writer's connection was lost; connecting again");
                self.tx
                    .reconnect(writer_connection(&self.url, self.durability)?);
                self.tx.batch("BEGIN")
            }
            other => other,
        }
    }

    fn commit(&mut self) -> Result<(), WriteError> {
        self.tx.batch("COMMIT")
    }

    fn rollback(&mut self) {
        self.tx.discard();
        let _ = self.tx.batch("ROLLBACK");
    }

    fn savepoint(&mut self) -> Result<(), WriteError> {
        self.tx.batch("SAVEPOINT command")
    }

    fn release(&mut self) -> Result<(), WriteError> {
        self.tx.batch("RELEASE SAVEPOINT command")
    }

    fn rollback_to(&mut self) -> Result<(), WriteError> {
        self.tx.discard();
        self.tx.batch("ROLLBACK TO SAVEPOINT command")?;
        self.tx.batch("RELEASE SAVEPOINT command")
    }

    fn tx(&self) -> &dyn Tx {
        &self.tx
    }
}
