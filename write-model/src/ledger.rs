//! The writer's copy of each account's counters: its revision, latest stamp and stored
//! bytes. Read from the store on first use, moved in memory by each command that succeeds,
//! and written back once per commit group, so a write pays no `accounts` row update of its
//! own. Only the writer thread holds a ledger; readers see the row as of the last commit.

use ahash::{AHashMap, AHashSet};
use rusqlite::{Connection, params};

use crate::error::WriteError;

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

    /// Drops every copy: the group's commit failed, so the store holds the truth again.
    pub fn forget(&mut self) {
        self.known.clear();
        self.moved.clear();
    }
}
