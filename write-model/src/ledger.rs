//! What the writer knows of each account beyond the store, kept in step with its commits:
//! - the account's counters (revision, latest stamp, stored bytes), read from the store on
//!   first use, moved in memory by each command that succeeds and written back once per
//!   commit group, so a write pays no `accounts` row update of its own;
//! - its records as they stand, as recent requests left them, so the commands that read
//!   them over and over (every card write touches its project, every create reads its
//!   column, a card is edited field by field) skip a query and a parse. Every write of a
//!   record goes through a command's `Ctx`, which hands what it left here only once the
//!   command succeeded.
//!
//! Both are dropped whole when a group's transaction is rolled back. Only the writer thread
//! holds a ledger; readers see the store as of the last commit.

use ahash::{AHashMap, AHashSet};
use rusqlite::{Connection, params};

use crate::error::WriteError;
use crate::records::Record;
use crate::store::Row;

/// How many records, and how many bytes of their stored JSON, the ledger keeps before it
/// starts over.
const KEPT_RECORDS: usize = 4_096;
const KEPT_BYTES: i64 = 2 << 20;

/// A record as it stands in the store, or `None` once it is gone.
pub type Kept = (String, Option<(Record, Row)>);

/// One account's counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counters {
    /// Raised by one for every request that changes the account.
    pub rev: i64,
    /// The latest stamp any change of the account carries.
    pub last_stamp: i64,
    /// The bytes the account's records take (contract: Storage).
    pub stored_bytes: i64,
}

#[derive(Debug, Default)]
pub struct Ledger {
    known: AHashMap<String, Counters>,
    /// Accounts whose counters moved since the last write-back.
    moved: AHashSet<String>,
    /// Records by account, then id.
    records: AHashMap<String, AHashMap<String, (Record, Row)>>,
    kept: usize,
    kept_bytes: i64,
}

impl Ledger {
    /// The account's counters as this group has left them.
    pub fn get(&mut self, conn: &Connection, account: &str) -> Result<Counters, WriteError> {
        if let Some(c) = self.known.get(account) {
            return Ok(*c);
        }
        let c = conn
            .prepare_cached("SELECT rev, last_stamp, stored_bytes FROM accounts WHERE id = ?1")?
            .query_row(params![account], |r| {
                Ok(Counters {
                    rev: r.get(0)?,
                    last_stamp: r.get(1)?,
                    stored_bytes: r.get(2)?,
                })
            })?;
        self.known.insert(account.to_owned(), c);
        Ok(c)
    }

    /// Keeps what a command that succeeded left the counters at.
    pub fn set(&mut self, account: &str, counters: Counters) {
        match self.known.get_mut(account) {
            Some(known) if *known == counters => return,
            Some(known) => *known = counters,
            None => {
                self.known.insert(account.to_owned(), counters);
            }
        }
        if !self.moved.contains(account) {
            self.moved.insert(account.to_owned());
        }
    }

    /// Writes the moved counters into the group's transaction, just before its commit.
    pub fn write_back(&mut self, conn: &Connection) -> Result<(), WriteError> {
        for account in self.moved.drain() {
            let c = self.known[&account];
            conn.prepare_cached(
                "UPDATE accounts SET rev = ?2, last_stamp = ?3, stored_bytes = ?4 WHERE id = ?1",
            )?
            .execute(params![account, c.rev, c.last_stamp, c.stored_bytes])?;
        }
        Ok(())
    }

    /// A record of the account as it stands, when kept.
    pub fn record(&self, account: &str, id: &str) -> Option<&(Record, Row)> {
        self.records.get(account)?.get(id)
    }

    /// Keeps the records a command that succeeded left behind.
    pub fn keep_records(&mut self, account: &str, records: Vec<Kept>) {
        if records.is_empty() {
            return;
        }
        let incoming: i64 = records
            .iter()
            .filter_map(|(_, r)| r.as_ref().map(|(_, row)| row.stored_len()))
            .sum();
        if self.kept + records.len() > KEPT_RECORDS || self.kept_bytes + incoming > KEPT_BYTES {
            self.records.clear();
            self.kept = 0;
            self.kept_bytes = 0;
        }
        let by_id = match self.records.get_mut(account) {
            Some(by_id) => by_id,
            None => self.records.entry(account.to_owned()).or_default(),
        };
        for (id, record) in records {
            match record {
                Some(record) => {
                    self.kept_bytes += record.1.stored_len();
                    match by_id.insert(id, record) {
                        Some((_, old)) => self.kept_bytes -= old.stored_len(),
                        None => self.kept += 1,
                    }
                }
                None => {
                    if let Some((_, old)) = by_id.remove(&id) {
                        self.kept -= 1;
                        self.kept_bytes -= old.stored_len();
                    }
                }
            }
        }
    }

    /// Drops every copy: the group's transaction was rolled back, so the store holds the
    /// truth again.
    pub fn forget(&mut self) {
        self.known.clear();
        self.moved.clear();
        self.records.clear();
        self.kept = 0;
        self.kept_bytes = 0;
    }
}
