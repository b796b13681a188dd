//! SQLite, the embedded engine: one database file in the data folder, in WAL mode. The
//! writer owns one connection; reads outside it come from a small pool of read-only
//! connections; a checkpoint thread folds the log back into the file.

mod checkpoint;
mod copy;
mod idempotency;
mod load;
mod migrate;
mod tx;

use std::path::{Path, PathBuf};

use r2d2::Pool;
use r2d2_sqlite::SqliteConnectionManager;
use rusqlite::Connection;

pub use checkpoint::Checkpoints;

use domain::storage::ReadStore;

use super::Engine;
use super::{
    AllowanceRow, BinEntry, Durability, KeyRecord, LiveKey, Loaded, ProjectName, Store, Tx, Writer,
};
use crate::error::WriteError;
use tx::SqliteTx;

/// SQLite's error in the domain's words: a full disk, a read-only or unopenable file and
/// failed I/O say the store cannot take writes now; the rest is a fault of ours.
pub(crate) fn fault(e: rusqlite::Error) -> WriteError {
    use rusqlite::ErrorCode::*;
    match e.sqlite_error_code() {
        Some(DiskFull | ReadOnly | CannotOpen | SystemIoFailure) => {
            WriteError::Unavailable(e.to_string())
        }
        _ => WriteError::Internal(e.to_string()),
    }
}

impl<T> Engine<T> for Result<T, rusqlite::Error> {
    fn db(self) -> Result<T, WriteError> {
        self.map_err(fault)
    }
}

/// SQLite's `synchronous` setting for a durability.
fn synchronous(durability: Durability) -> &'static str {
    match durability {
        Durability::Full => "FULL",
        Durability::Normal => "NORMAL",
    }
}

/// A connection with the chosen durability that waits up to 5 s for a lock.
fn connect(path: &Path, durability: Durability) -> Result<Connection, WriteError> {
    let conn = Connection::open(path).db()?;
    conn.pragma_update(None, "synchronous", synchronous(durability))
        .db()?;
    conn.busy_timeout(std::time::Duration::from_secs(5)).db()?;
    Ok(conn)
}

/// Opens (creating and migrating if needed) the database at `path` in WAL mode, tuned for
/// the writer.
fn open_connection(path: &Path, durability: Durability) -> Result<Connection, WriteError> {
    let conn = connect(path, durability)?;
    conn.pragma_update(None, "journal_mode", "WAL").db()?;
    // 4 MiB of page cache: the upper levels of the indexes and the leaves being written stay
    // in memory; the rest come from the OS cache, which costs a read call, not resident
    // memory. (16 MiB kept a large import's pages resident: 17 MiB of the memory peak.)
    conn.pragma_update(None, "cache_size", -4_096).db()?;
    // Savepoint journals stay in memory: a group replayed with a savepoint per command
    // copies the pages each touches, and would otherwise spill them to a temporary file.
    conn.pragma_update(None, "temp_store", "MEMORY").db()?;
    migrate::upgrade(&conn)?;
    Ok(conn)
}

/// The SQLite store of one data folder.
pub struct SqliteStore {
    path: PathBuf,
    durability: Durability,
    /// Read-only connections for the reads outside the writer.
    reads: Pool<SqliteConnectionManager>,
}

impl SqliteStore {
    /// Opens the database at `path`, creating it and bringing its schema up to date.
    pub fn open(path: &Path, durability: Durability) -> Result<SqliteStore, WriteError> {
        drop(open_connection(path, durability)?);
        let manager = SqliteConnectionManager::file(path).with_flags(
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
        );
        let reads = Pool::builder().max_size(4).build(manager).db()?;
        Ok(SqliteStore {
            path: path.to_owned(),
            durability,
            reads,
        })
    }

    fn read<T>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, WriteError>,
    ) -> Result<T, WriteError> {
        let conn = self.reads.get().db()?;
        f(&conn)
    }
}

impl ReadStore for SqliteStore {
    fn load_account(
        &self,
        account: &str,
        each: &mut dyn FnMut(Loaded),
    ) -> Result<Option<(i64, i64)>, WriteError> {
        self.read(|c| load::load_account(c, account, each))
    }

    fn last_stamp(&self, account: &str) -> Result<i64, WriteError> {
        self.read(|c| load::last_stamp(c, account))
    }

    fn list_keys(&self, account: &str) -> Result<Vec<KeyRecord>, WriteError> {
        self.read(|c| load::list_keys(c, account))
    }

    fn list_bin(&self, account: &str) -> Result<Vec<BinEntry>, WriteError> {
        self.read(|c| load::list_bin(c, account))
    }

    fn storage(&self, account: &str) -> Result<(u64, u64), WriteError> {
        self.read(|c| load::storage(c, account))
    }

    fn project_names(&self) -> Result<Vec<ProjectName>, WriteError> {
        self.read(load::project_names)
    }
}

impl Store for SqliteStore {
    fn engine(&self) -> &'static str {
        "sqlite"
    }

    fn open_writer(&self) -> Result<Box<dyn Writer>, WriteError> {
        let conn = open_connection(&self.path, self.durability)?;
        let checkpoints = Checkpoints::start(&conn, &self.path, self.durability)?;
        Ok(Box::new(SqliteWriter {
            tx: SqliteTx::new(conn),
            checkpoints,
        }))
    }

    fn account_ids(&self) -> Result<Vec<String>, WriteError> {
        self.read(load::account_ids)
    }

    fn account_exists(&self, account: &str) -> Result<bool, WriteError> {
        self.read(|c| load::account_exists(c, account))
    }

    fn live_keys(&self) -> Result<Vec<LiveKey>, WriteError> {
        self.read(load::live_keys)
    }

    fn holds_keys(&self) -> Result<bool, WriteError> {
        self.read(load::holds_keys)
    }

    fn saved_allowances(&self) -> Result<Vec<AllowanceRow>, WriteError> {
        self.read(load::saved_allowances)
    }

    fn meta(&self, name: &str) -> Result<Option<Vec<u8>>, WriteError> {
        self.read(|c| load::meta(c, name))
    }

    fn claim_meta(&self, name: &str, value: &[u8]) -> Result<Vec<u8>, WriteError> {
        let conn = connect(&self.path, self.durability)?;
        conn.execute(
            "INSERT OR IGNORE INTO meta (name, value) VALUES (?1, ?2)",
            rusqlite::params![name, value],
        )
        .db()?;
        load::meta(&conn, name)?
            .ok_or_else(|| WriteError::Internal(format!("`{name}` was not kept")))
    }

    fn size_bytes(&self) -> Result<u64, WriteError> {
        let len = |p: PathBuf| std::fs::metadata(p).map_or(0, |m| m.len());
        let mut wal = self.path.clone().into_os_string();
        wal.push("-wal");
        Ok(len(self.path.clone()) + len(PathBuf::from(wal)))
    }

    fn holds_data(&self) -> Result<bool, WriteError> {
        self.read(|c| {
            c.prepare_cached("SELECT 1 FROM accounts UNION ALL SELECT 1 FROM keys LIMIT 1")
                .db()?
                .exists([])
                .db()
        })
    }

    fn copy_out(
        &self,
        each: &mut dyn FnMut(crate::store::copy::Rows) -> Result<(), WriteError>,
    ) -> Result<(), WriteError> {
        self.read(|c| copy::copy_out(c, each))
    }

    fn loader(&self) -> Result<Box<dyn crate::store::copy::Loader>, WriteError> {
        let conn = open_connection(&self.path, self.durability)?;
        Ok(Box::new(copy::SqliteLoader::begin(conn)?))
    }

    fn snapshot_to(&self, out: &Path) -> Result<u64, WriteError> {
        // `VACUUM INTO` copies one read transaction's snapshot in a single step: writers go
        // on beside it (WAL), and it never starts over as the incremental backup API does
        // whenever another connection writes between its steps.
        let path = out
            .to_str()
            .ok_or_else(|| WriteError::Internal("the backup path is not UTF-8".into()))?;
        self.read(|c| {
            c.execute("VACUUM INTO ?1", [path]).db()?;
            Ok(())
        })?;
        count_records(out)
    }
}

/// The writer's connection, with the checkpoints that fold its log.
struct SqliteWriter {
    tx: SqliteTx,
    checkpoints: Checkpoints,
}

impl SqliteWriter {
    fn batch(&self, sql: &str) -> Result<(), WriteError> {
        self.tx.conn.execute_batch(sql).db()?;
        Ok(())
    }
}

impl Writer for SqliteWriter {
    fn begin(&mut self) -> Result<(), WriteError> {
        self.batch("BEGIN")
    }

    fn commit(&mut self) -> Result<(), WriteError> {
        self.batch("COMMIT")
    }

    fn rollback(&mut self) {
        if !self.tx.conn.is_autocommit() {
            let _ = self.batch("ROLLBACK");
        }
    }

    fn savepoint(&mut self) -> Result<(), WriteError> {
        self.batch("SAVEPOINT command")
    }

    fn release(&mut self) -> Result<(), WriteError> {
        self.batch("RELEASE command")
    }

    fn rollback_to(&mut self) -> Result<(), WriteError> {
        self.batch("ROLLBACK TO command; RELEASE command")
    }

    fn tx(&self) -> &dyn Tx {
        &self.tx
    }

    fn after_commit(&mut self) {
        self.checkpoints.after_commit(&self.tx.conn);
    }

    /// Folds the whole log into the database and empties it, waiting out readers that still
    /// hold old frames (the pragma reports them as busy rather than failing).
    fn fold_log(&mut self) -> Result<(), WriteError> {
        let mut tries = 0;
        loop {
            let busy = self
                .tx
                .conn
                .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
                    r.get::<_, i64>(0)
                });
            match busy {
                Ok(0) => return Ok(()),
                Ok(_) | Err(_) if tries < 500 => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                Ok(_) => return Err(WriteError::Unavailable("the log stayed busy".into())),
                Err(e) => return Err(fault(e)),
            }
        }
    }
}

/// A writer on a store of its own, with SQLite's own checkpoints, for the processor's tests.
#[cfg(test)]
pub(crate) fn test_writer(path: &Path) -> Box<dyn Writer> {
    let conn = open_connection(path, Durability::Normal).expect("a store");
    Box::new(SqliteWriter {
        tx: SqliteTx::new(conn),
        checkpoints: Checkpoints::inline(),
    })
}

/// The rows of `table` in the store at `path`, for tests that look at what is stored.
#[cfg(test)]
pub(crate) fn test_count_rows(path: &Path, table: &str) -> i64 {
    let conn = Connection::open(path).expect("the store");
    conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
        .expect("a count")
}

/// The records (projects, columns and cards, the bin's included) of the SQLite database at
/// `path`: what a snapshot answers, for a backup's summary.
pub(crate) fn count_records(path: &Path) -> Result<u64, WriteError> {
    let conn =
        Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).db()?;
    let n: i64 = conn
        .query_row("SELECT count(*) FROM records", [], |r| r.get(0))
        .db()?;
    Ok(n as u64)
}
