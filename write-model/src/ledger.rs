//! What the writer knows of each account beyond the store, kept in step with its commits:
//! - the account's counters (revision, latest stamp, stored bytes), read from the store on
//!   first use, moved in memory by each command that succeeds and written back once per
//!   commit group, so a write pays no `accounts` row update of its own;
//! - its records as they stand, as recent requests left them, so the commands that read
//!   them over and over (every card write touches its project, every create reads its
//!   column, a card is edited field by field) skip a query and a parse. Every write of a
//!   record goes through a command's `Ctx`, which takes the record out first and hands what
//!   it left back only once the command succeeded, so no copy here can be stale.
//!
//! - each key's next undo step number, and how far back its history has grown past its
//!   limit: a step then costs one INSERT, and the steps pushed out are deleted once per
//!   group;
//! - the least position under each parent a create has asked about ([`crate::tops`]).
//!
//! All are dropped whole when a group's transaction is rolled back. Only the writer thread
//! holds a ledger; readers see the store as of the last commit.
//!
//! On a store other nodes share, the ledger also locks each account a group writes, before
//! anything of it is read: the lock answers the account's counters as committed, and when
//! another node has written since, what the ledger kept of the account is dropped. It also
//! keeps, per locked account, the least stamp the group may give it (after the account's last
//! committed stamp, and at or after the store's clock).

use ahash::{AHashMap, AHashSet};

use crate::error::WriteError;
use crate::records::Record;
use crate::store::shared::Locked;
use crate::store::{Row, Tx};
use crate::tops::{Least, TopKey, Tops, TopsUpdate};

pub use crate::store::Counters;

/// How many records, and how many bytes of their stored JSON, the ledger keeps before it
/// starts over.
const KEPT_RECORDS: usize = 4_096;
const KEPT_BYTES: i64 = 2 << 20;

/// A record as it stands in the store, by id.
pub type Kept = (String, (Record, Row));

#[derive(Debug, Default)]
pub struct Ledger {
    known: AHashMap<String, Counters>,
    /// Accounts whose counters moved since the last write-back.
    moved: AHashSet<String>,
    /// Records by account, then id; boxed, so that a map growing moves pointers, not records.
    records: AHashMap<String, AHashMap<String, Box<(Record, Row)>>>,
    kept: usize,
    kept_bytes: i64,
    /// Each key's next undo step number, once a step of it stood.
    undo_next: AHashMap<String, i64>,
    /// Per key, the newest step number its history has pushed out: deleted at write-back.
    undo_dropped: AHashMap<String, i64>,
    /// The least position under each parent, where known.
    tops: Tops,
    /// Whether other nodes write the store too, so accounts are locked before use.
    locking: bool,
    /// The accounts the open transaction has locked, with the least stamp each may take.
    locked: AHashMap<String, Option<i64>>,
    /// The same accounts in the order they were locked, so that rolling back to a savepoint
    /// (which releases the locks taken after it) forgets them too.
    lock_order: Vec<String>,
}

impl Ledger {
    /// A ledger for a store other nodes write too: accounts are locked before use.
    pub fn locking() -> Ledger {
        Ledger {
            locking: true,
            ..Ledger::default()
        }
    }

    /// Locks the accounts the open transaction has not locked yet (sorted, so that two
    /// nodes' writers never wait on each other), and drops what is kept of any account
    /// another node has written since. Nothing happens on a store one node holds.
    pub fn lock(&mut self, store: &dyn Tx, accounts: &[&str]) -> Result<(), WriteError> {
        if !self.locking {
            return Ok(());
        }
        let mut wanted: Vec<&str> = accounts
            .iter()
            .copied()
            .filter(|a| !a.is_empty() && !self.locked.contains_key(*a))
            .collect();
        if wanted.is_empty() {
            return Ok(());
        }
        wanted.sort_unstable();
        wanted.dedup();
        let Locked {
            accounts: committed,
            clock_ms,
        } = store.lock_accounts(&wanted)?;
        for account in wanted {
            self.locked.insert(account.to_owned(), None);
            self.lock_order.push(account.to_owned());
        }
        for (account, counters) in committed {
            let least = clock_ms.max(counters.last_stamp + 1);
            if self.known.get(&account) != Some(&counters) {
                // Another node wrote the account (or it is new here): its kept records and
                // every key's next step number may be stale.
                if let Some(gone) = self.records.remove(&account) {
                    self.kept -= gone.len();
                    self.kept_bytes -= gone.values().map(|k| k.1.stored_len()).sum::<i64>();
                }
                self.tops.drop_account(&account);
                self.undo_next.clear();
                self.known.insert(account.clone(), counters);
            }
            self.locked.insert(account, Some(least));
        }
        Ok(())
    }

    /// The least stamp the account may take in this transaction, when it is locked.
    pub fn least_stamp(&self, account: &str) -> Option<i64> {
        self.locked.get(account).copied().flatten()
    }

    /// The transaction ended (committed): locks are gone with it.
    pub fn unlock(&mut self) {
        self.locked.clear();
        self.lock_order.clear();
    }

    /// How many locks the transaction holds: a mark to roll back to with a savepoint.
    pub fn lock_mark(&self) -> usize {
        self.lock_order.len()
    }

    /// The transaction rolled back to a savepoint taken at `mark`: the locks taken since
    /// were released.
    pub fn unlock_to(&mut self, mark: usize) {
        for account in self.lock_order.drain(mark..) {
            self.locked.remove(&account);
        }
    }

    /// The account's counters as this group has left them.
    pub fn get(&mut self, store: &dyn Tx, account: &str) -> Result<Counters, WriteError> {
        if self.locking && !self.locked.contains_key(account) {
            self.lock(store, &[account])?;
        }
        if let Some(c) = self.known.get(account) {
            return Ok(*c);
        }
        let c = store.counters(account)?;
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
    pub fn write_back(&mut self, store: &dyn Tx) -> Result<(), WriteError> {
        for account in self.moved.drain() {
            store.save_counters(&account, &self.known[&account])?;
        }
        for (key_id, upto) in self.undo_dropped.drain() {
            store.delete_undo_up_to(&key_id, upto)?;
        }
        Ok(())
    }

    /// The number a key's next undo step takes.
    pub fn next_undo_seq(&self, store: &dyn Tx, key_id: &str) -> Result<i64, WriteError> {
        if let Some(&seq) = self.undo_next.get(key_id) {
            return Ok(seq);
        }
        store.next_undo_seq(key_id)
    }

    /// Books the step numbered `seq` that a command which succeeded stored for the key, whose
    /// history keeps `keep` steps.
    pub fn stepped(&mut self, key_id: &str, seq: i64, keep: i64) {
        match self.undo_next.get_mut(key_id) {
            Some(next) => *next = seq + 1,
            None => {
                self.undo_next.insert(key_id.to_owned(), seq + 1);
            }
        }
        if seq > keep {
            match self.undo_dropped.get_mut(key_id) {
                Some(upto) => *upto = seq - keep,
                None => {
                    self.undo_dropped.insert(key_id.to_owned(), seq - keep);
                }
            }
        }
    }

    /// Deletes now the steps the key's history has pushed out (its history is about to be
    /// read), and forgets its next number (its steps are about to change).
    pub fn settle_steps(&mut self, store: &dyn Tx, key_id: &str) -> Result<(), WriteError> {
        self.undo_next.remove(key_id);
        if let Some(upto) = self.undo_dropped.remove(key_id) {
            store.delete_undo_up_to(key_id, upto)?;
        }
        Ok(())
    }

    /// A record of the account as it stands, when kept (commands take records out with
    /// [`Ledger::take_record`]; the processor's tests look at what is kept).
    #[cfg(test)]
    pub fn record(&self, account: &str, id: &str) -> Option<&(Record, Row)> {
        self.records.get(account)?.get(id).map(|kept| &**kept)
    }

    /// Takes a kept record out, for a command to work on: the command hands it back if it
    /// succeeds, and a command that fails leaves it out, which costs the next one a read.
    pub fn take_record(&mut self, account: &str, id: &str) -> Option<(Record, Row)> {
        let taken = self.records.get_mut(account)?.remove(id)?;
        self.kept -= 1;
        self.kept_bytes -= taken.1.stored_len();
        Some(*taken)
    }

    /// Keeps the records a command that succeeded left behind.
    pub fn keep_records(&mut self, account: &str, records: Vec<Kept>) {
        if records.is_empty() {
            return;
        }
        let incoming: i64 = records.iter().map(|(_, (_, row))| row.stored_len()).sum();
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
            self.kept_bytes += record.1.stored_len();
            match by_id.insert(id, Box::new(record)) {
                Some(old) => self.kept_bytes -= old.1.stored_len(),
                None => self.kept += 1,
            }
        }
    }

    /// The least position under `key` in the account, when known.
    pub fn least_position(&self, account: &str, key: &TopKey) -> Option<Least> {
        self.tops.get(account, key)
    }

    /// Whether a least position of the account is kept (else its moves need not be told).
    pub fn holds_tops(&self, account: &str) -> bool {
        self.tops.holds(account)
    }

    /// Takes in the least positions a command that succeeded read, and how it moved its
    /// records.
    pub fn keep_tops(&mut self, account: &str, update: TopsUpdate) {
        self.tops.keep(account, update);
    }

    /// Every least position kept for `account` (for the processor's tests).
    #[cfg(test)]
    pub fn tops(&self, account: &str) -> Vec<(TopKey, Least)> {
        self.tops.of(account)
    }

    /// Drops every copy: the group's transaction was rolled back, so the store holds the
    /// truth again.
    pub fn forget(&mut self) {
        self.locked.clear();
        self.lock_order.clear();
        self.known.clear();
        self.moved.clear();
        self.records.clear();
        self.kept = 0;
        self.kept_bytes = 0;
        self.undo_next.clear();
        self.undo_dropped.clear();
        self.tops.clear();
    }
}
