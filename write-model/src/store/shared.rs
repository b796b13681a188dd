//! What nodes sharing one store (PostgreSQL) need of it beyond one node's reads and writes:
//! - the writer locks each account it writes before reading what it validates against, and
//!   learns the store's clock, so stamps never go back across nodes;
//! - each committed change set goes to a change log, readable in order per account, and is
//!   announced to the other nodes (with each key change);
//! - a node's [`Feed`] hears those announcements and tells how far the committed history
//!   reaches, so a read's `now` never runs ahead of what the node has applied;
//! - [`SharedStore`] holds the store's operations only such a store has: the feed, the
//!   tickets of live sockets, a key another node issued, every node's allowance counts.
//!
//! SQLite is never shared: one node holds its data folder, and none of this runs there.

use std::time::Duration;

use crate::change::{ChangeSet, KeyChange};
use crate::error::WriteError;
use crate::store::Counters;

// The trait lives beside `Store`, which names it; its old path still reads.
pub use super::traits::SharedStore;

/// An account's change sets after a revision (the read side's word for it, in the domain).
pub use domain::storage::Backlog;

/// The accounts a transaction locked, with their counters as committed, and the store's clock
/// read after the locks were granted.
#[derive(Debug, Clone, Default)]
pub struct Locked {
    pub accounts: Vec<(String, Counters)>,
    /// The store's clock (ms), read once every lock was held.
    pub clock_ms: i64,
}

/// A committed change set as the change log keeps it.
#[derive(Debug, Clone)]
pub struct LoggedChange {
    pub account: String,
    pub rev: i64,
    pub stamp: i64,
    /// The change set, serialised.
    pub body: String,
}

impl LoggedChange {
    pub fn of(change: &ChangeSet) -> Result<LoggedChange, WriteError> {
        Ok(LoggedChange {
            account: change.account.clone(),
            rev: change.rev,
            stamp: change.stamp,
            body: serde_json::to_string(change)?,
        })
    }

    pub fn change_set(&self) -> Result<ChangeSet, WriteError> {
        Ok(serde_json::from_str(&self.body)?)
    }
}

/// Where the store stands for a read, asked before it in one round trip (see
/// [`SharedStore::read_point`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadPoint {
    /// The account's committed revision (0 if it has none): the read shows at least this,
    /// whichever node committed it.
    pub rev: i64,
    /// Whether the reading key is still live: another node may have revoked it.
    pub key_live: bool,
}

/// What a node hears from the others.
#[derive(Debug, Clone, PartialEq)]
pub enum Notice {
    /// The account's revision `rev`, stamped `stamp`, committed.
    Changed {
        account: String,
        rev: i64,
        stamp: i64,
    },
    /// A key was issued or revoked.
    Key(KeyChange),
    /// This feed's own ping came back: every announcement committed before it was heard.
    Ping(u64),
}

/// A node's connection to what the other nodes commit. Owned by one thread.
pub trait Feed: Send {
    /// The next announcement, waiting at most `wait`; `None` when none came.
    fn next(&mut self, wait: Duration) -> Result<Option<Notice>, WriteError>;

    /// The store's clock now (ms), and the writers' transactions still open at that moment:
    /// any transaction that stamps after this moment stamps at or after the clock.
    fn clock_and_open_writes(&mut self) -> Result<(i64, Vec<String>), WriteError>;

    /// Whether any of `writes` (from [`Feed::clock_and_open_writes`]) is still open.
    fn any_open(&mut self, writes: &[String]) -> Result<bool, WriteError>;

    /// Sends a ping through the store that comes back as [`Notice::Ping`] after every
    /// announcement committed before it.
    fn ping(&mut self, n: u64) -> Result<(), WriteError>;

    /// The committed revisions of `accounts` (missing accounts left out), to heal after a
    /// reconnect.
    fn revs(&mut self, accounts: &[String]) -> Result<Vec<(String, i64)>, WriteError>;
}

/// How many revisions of each account the change log keeps at least; a node further
/// behind loads the account whole.
pub const LOG_KEPT_REVS: i64 = 1024;
