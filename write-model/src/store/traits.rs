//! The storage boundary's traits: [`Store`] (the engine, shared by every thread), [`Writer`]
//! (the one write connection) and [`Tx`] (what a command may do inside the writer's
//! transaction), and [`Engine`], how an engine's errors read in the domain's words.

use std::path::Path;
use std::sync::Arc;

use domain::storage::ReadStore;

use super::copy;
use super::remembered::{FirstReply, RememberedRow};
use super::shared::{self, Feed, ReadPoint};
use super::types::{
    AllowanceRow, Counters, EntryRow, KeyCounts, LiveKey, MarkerRow, NewBinEntry, NewKey, Row,
    TicketRow,
};
use crate::error::WriteError;
use crate::records::{Column, Kind, Record, Task};

/// An engine's result in the domain's words. [`WriteError`] lives in the `domain` crate,
/// which links no engine, so the orphan rule leaves no room for a `From<rusqlite::Error>`:
/// each engine says how its errors read (`sqlite::fault`, `postgres::fault`), and its code
/// writes `.db()?` where a `?` converts an engine's error.
pub(crate) trait Engine<T> {
    fn db(self) -> Result<T, WriteError>;
}

/// A pool that gave no connection (both engines' read pools are r2d2's).
impl<T> Engine<T> for Result<T, r2d2::Error> {
    fn db(self) -> Result<T, WriteError> {
        self.map_err(|e| WriteError::Internal(format!("no read connection: {e}")))
    }
}

/// An engine, shared by every thread of a node: the reads a read model makes
/// ([`ReadStore`], in the domain crate) and the rest. Reads here run on the caller's thread
/// and may block: callers on an async runtime move them off its workers.
pub trait Store: ReadStore {
    /// The engine's name, as the discovery document shows it (`sqlite`, `postgresql`).
    fn engine(&self) -> &'static str;

    /// The write connection for the command processor's thread.
    fn open_writer(&self) -> Result<Box<dyn Writer>, WriteError>;

    /// Every account, oldest first.
    fn account_ids(&self) -> Result<Vec<String>, WriteError>;

    fn account_exists(&self, account: &str) -> Result<bool, WriteError>;

    /// Every live key, to fill the authentication cache.
    fn live_keys(&self) -> Result<Vec<LiveKey>, WriteError>;

    /// Whether the store holds any key, live or revoked: a store with keys never takes a
    /// new pepper.
    fn holds_keys(&self) -> Result<bool, WriteError>;

    /// Every saved allowance counter.
    fn saved_allowances(&self) -> Result<Vec<AllowanceRow>, WriteError>;

    /// A value the store keeps about itself (the pepper's check value), if set.
    fn meta(&self, name: &str) -> Result<Option<Vec<u8>>, WriteError>;

    /// Sets a value the store keeps about itself unless one is set already; answers the
    /// value that stands. Runs outside the writer, at start-up.
    fn claim_meta(&self, name: &str, value: &[u8]) -> Result<Vec<u8>, WriteError>;

    /// The store's size on disk in bytes.
    fn size_bytes(&self) -> Result<u64, WriteError>;

    /// A consistent copy of the whole store as a SQLite database file at `out`, taken in
    /// one step while writers go on; answers how many records (projects, columns and
    /// cards, the bin's included) the copy holds.
    fn snapshot_to(&self, out: &Path) -> Result<u64, WriteError>;

    /// Whether the store holds any account or key.
    fn holds_data(&self) -> Result<bool, WriteError>;

    /// Streams every table's rows to `each`, from one snapshot.
    fn copy_out(
        &self,
        each: &mut dyn FnMut(copy::Rows) -> Result<(), WriteError>,
    ) -> Result<(), WriteError>;

    /// A loader of rows into this store (which must be empty), in one transaction.
    fn loader(&self) -> Result<Box<dyn copy::Loader>, WriteError>;

    /// What only a store several nodes share can do (PostgreSQL), if this is one: `Some`
    /// exactly when [`ReadStore::is_shared`]. A store one node holds alone (SQLite) has
    /// none of it: its tickets live in memory, its writer takes no locks and keeps no change
    /// log.
    fn shared(self: Arc<Self>) -> Option<Arc<dyn SharedStore>> {
        None
    }
}

/// The command processor's connection. A group runs as: `begin`, then per command either
/// straight in the transaction or between `savepoint` and `release`/`rollback_to`, then
/// `commit` (or `rollback`).
pub trait Writer: Send {
    fn begin(&mut self) -> Result<(), WriteError>;
    fn commit(&mut self) -> Result<(), WriteError>;
    /// Abandons the open transaction, if any.
    fn rollback(&mut self);
    fn savepoint(&mut self) -> Result<(), WriteError>;
    fn release(&mut self) -> Result<(), WriteError>;
    fn rollback_to(&mut self) -> Result<(), WriteError>;

    /// What commands read and write inside the open transaction.
    fn tx(&self) -> &dyn Tx;

    /// Called after a group has committed and been answered (SQLite folds its log here).
    fn after_commit(&mut self) {}

    /// Makes every committed write durable in the main store file and empties any log
    /// (on shutdown, so the store needs no recovery on the next start).
    fn fold_log(&mut self) -> Result<(), WriteError> {
        Ok(())
    }
}

/// What a command may do inside the writer's transaction. Every method takes the account
/// it acts on; ids are unique only within an account.
pub trait Tx {
    /// How many rows this connection has written so far: a command that failed without
    /// writing leaves its group's transaction usable.
    fn writes(&self) -> u64;

    /// Sends any writes the engine held back to send together (PostgreSQL holds some; see
    /// its `deferred` module), so that a failure among them shows now, inside the command or
    /// group that made them. Every other operation sends them first by itself.
    fn flush(&self) -> Result<(), WriteError> {
        Ok(())
    }

    // Records.

    /// Any record of the account by id, whatever its kind, with its row.
    fn get_row(&self, account: &str, id: &str) -> Result<Option<(Record, Row)>, WriteError>;
    /// Writes a record over `old` (the row as it stands, `None` if there is none), with its
    /// place in the bin if deleted. Answers the row as now stored.
    fn put(
        &self,
        account: &str,
        record: &Record,
        bin: Option<(&str, i64)>,
        old: Option<&Row>,
    ) -> Result<Row, WriteError>;
    /// Removes a record for good.
    fn destroy(&self, account: &str, id: &str) -> Result<(), WriteError>;
    /// Whether a live (not deleted) record of `kind` has `id`.
    fn is_live(&self, account: &str, kind: Kind, id: &str) -> Result<bool, WriteError>;
    /// Whether any record of the account (live, binned, any kind) uses `id`.
    fn id_in_use(&self, account: &str, id: &str) -> Result<bool, WriteError>;
    fn live_columns(&self, account: &str, project_id: &str) -> Result<Vec<Column>, WriteError>;
    fn live_project_tasks(&self, account: &str, project_id: &str) -> Result<Vec<Task>, WriteError>;
    fn live_column_tasks(&self, account: &str, column_id: &str) -> Result<Vec<Task>, WriteError>;
    fn live_subtasks(&self, account: &str, parent_id: &str) -> Result<Vec<Task>, WriteError>;
    fn count_live_projects(&self, account: &str) -> Result<usize, WriteError>;
    fn count_live_columns(&self, account: &str, project_id: &str) -> Result<usize, WriteError>;
    /// The lowest position among live siblings of `kind` under `parent` (a project's
    /// columns, a column's cards; the account's projects with no parent).
    fn min_position(
        &self,
        account: &str,
        kind: Kind,
        parent: Option<&str>,
    ) -> Result<Option<f64>, WriteError>;

    // Checklist items, tags and comments: which card holds each id.

    fn item_task(&self, account: &str, item_id: &str) -> Result<Option<String>, WriteError>;
    /// Whether any checklist item, tag or comment of the account uses `id`.
    fn item_id_in_use(&self, account: &str, id: &str) -> Result<bool, WriteError>;
    /// Keeps the item index in step with a task's checklist, tags and comments.
    fn index_items(&self, account: &str, old: Option<&Task>, new: &Task) -> Result<(), WriteError>;
    /// Forgets every item of a destroyed task.
    fn drop_items(&self, account: &str, task_id: &str) -> Result<(), WriteError>;

    // The recycle bin.

    /// Adds an entry after the account's newest.
    fn add_bin_entry(&self, account: &str, entry: &NewBinEntry<'_>) -> Result<(), WriteError>;
    fn bin_len(&self, account: &str) -> Result<usize, WriteError>;
    /// The account's entries, oldest first.
    fn bin_entry_ids(&self, account: &str) -> Result<Vec<String>, WriteError>;
    fn bin_entry_exists(&self, account: &str, entry: &str) -> Result<bool, WriteError>;
    /// The entry a binned record heads, if it heads one.
    fn bin_entry_headed_by(&self, account: &str, head: &str) -> Result<Option<String>, WriteError>;
    /// The records of an entry, as rows to destroy.
    fn bin_entry_rows(&self, account: &str, entry: &str) -> Result<Vec<EntryRow>, WriteError>;
    /// The records of an entry, whole, to restore.
    fn bin_entry_records(&self, account: &str, entry: &str) -> Result<Vec<Record>, WriteError>;
    fn remove_bin_entry(&self, account: &str, entry: &str) -> Result<(), WriteError>;
    /// Remembers a destroyed project or column for good, so late clients learn of it.
    fn put_marker(&self, account: &str, marker: &MarkerRow) -> Result<(), WriteError>;

    // Accounts and their counters.

    fn create_account(&self, account: &str, created_at: i64) -> Result<(), WriteError>;
    fn account_exists(&self, account: &str) -> Result<bool, WriteError>;
    fn counters(&self, account: &str) -> Result<Counters, WriteError>;
    fn save_counters(&self, account: &str, counters: &Counters) -> Result<(), WriteError>;

    // Keys and their bookkeeping.

    /// The account's keys that work at `now`: neither revoked nor expired.
    fn key_counts(&self, account: &str, now: i64) -> Result<KeyCounts, WriteError>;
    fn insert_key(&self, key: &NewKey<'_>) -> Result<(), WriteError>;
    /// A key not revoked (expired or not), by id.
    fn live_key(&self, key_id: &str) -> Result<Option<LiveKey>, WriteError>;
    fn revoke_key(&self, key_id: &str, at: i64) -> Result<(), WriteError>;
    /// Adds `row`'s reads and writes to the key's counters of the same day (a later day's
    /// replace an earlier day's; an earlier day's are dropped).
    fn add_allowance(&self, row: &AllowanceRow) -> Result<(), WriteError>;
    /// Moves a key's last use forward to `at` (never back).
    fn touch_key(&self, key_id: &str, at: i64) -> Result<(), WriteError>;
    /// Sets a value the store keeps about itself.
    fn set_meta(&self, name: &str, value: &[u8]) -> Result<(), WriteError>;

    // Undo steps, per key, numbered by `seq`.

    /// The number after the key's newest stored step.
    fn next_undo_seq(&self, key_id: &str) -> Result<i64, WriteError>;
    fn push_undo(
        &self,
        key_id: &str,
        seq: i64,
        account: &str,
        step: &str,
    ) -> Result<(), WriteError>;
    /// The key's newest step in the account.
    fn latest_undo(&self, key_id: &str, account: &str)
    -> Result<Option<(i64, String)>, WriteError>;
    fn delete_undo(&self, key_id: &str, seq: i64) -> Result<(), WriteError>;
    /// Deletes the key's steps numbered `upto` or lower.
    fn delete_undo_up_to(&self, key_id: &str, upto: i64) -> Result<(), WriteError>;
    /// Deletes every step of the key.
    fn forget_undo(&self, key_id: &str) -> Result<(), WriteError>;

    // Idempotency keys: each API key's remembered results (see `crate::idempotency`).

    /// The result remembered for the idempotency key `key` of the API key `key_id`, if it
    /// was remembered at `since` (ms) or later.
    fn remembered(
        &self,
        account: &str,
        key_id: &str,
        key: &str,
        since: i64,
    ) -> Result<Option<RememberedRow>, WriteError>;
    /// Remembers a result, over an expired one of the same key.
    /// Remembers a result; answers the row's name where the engine has one (SQLite's
    /// rowid), for the first reply to find it by.
    fn remember(&self, row: &RememberedRow) -> Result<Option<i64>, WriteError>;
    /// Keeps the first reply of a remembered success with its row, if the row is still
    /// there and remembers the same request (`fingerprint`) and the reply is within
    /// [`MAX_REPLY_BYTES`](super::remembered::MAX_REPLY_BYTES) as this engine stores it (a longer one is left out:
    /// the row keeps the outcome).
    fn remember_reply(&self, reply: &FirstReply) -> Result<(), WriteError>;
    /// Forgets every idempotency key of the API key (it was revoked).
    fn forget_remembered(&self, account: &str, key_id: &str) -> Result<(), WriteError>;
    /// Forgets, of each API key of `key_ids` (with its account), the results remembered
    /// before `before` and those past its newest `keep`. SQLite forgets every API key's
    /// expired results at once, reading from its oldest row to the first it keeps, and counts
    /// each key's rows through the key's index; PostgreSQL goes by each key's age index.
    fn prune_remembered(
        &self,
        before: i64,
        key_ids: &[(&str, &str)],
        keep: usize,
    ) -> Result<(), WriteError>;

    /// The command about to run reads and writes thousands of rows in one transaction (an
    /// import). PostgreSQL plans each statement afresh for the rest of the transaction: a
    /// plan it keeps from when the tables were nearly empty would look each record up by
    /// scanning its whole account.
    fn expect_many_rows(&self) -> Result<(), WriteError> {
        Ok(())
    }

    // Nodes sharing the store; see [`ReadStore::is_shared`].

    /// Locks the accounts (in the order given, which callers sort, so that two writers never
    /// wait on each other) until the transaction ends; answers their committed counters
    /// (accounts that do not exist yet are left out) and the store's clock.
    fn lock_accounts(&self, _accounts: &[&str]) -> Result<shared::Locked, WriteError> {
        Ok(shared::Locked::default())
    }

    /// Logs the group's change sets and announces them, and its key changes, to the other
    /// nodes once the transaction commits.
    fn log_changes(
        &self,
        _changes: &[shared::LoggedChange],
        _keys: &[crate::change::KeyChange],
    ) -> Result<(), WriteError> {
        Ok(())
    }
}

/// What only a store several nodes share does, beyond [`Store`]: reached through
/// [`Store::shared`], so a store one node holds alone has none of it rather than methods that
/// answer errors.
pub trait SharedStore: Store {
    /// The saved allowance counters of `keys` (each node's counts added up), to learn what
    /// the other nodes counted.
    fn allowances(&self, keys: &[String]) -> Result<Vec<AllowanceRow>, WriteError>;

    /// The live key with this digest: a key another node issued moments ago may not have
    /// reached this node's cache yet.
    fn live_key_by_digest(&self, digest: &[u8]) -> Result<Option<LiveKey>, WriteError>;

    /// Keeps a live socket's ticket, dropping those expired by `now`.
    fn put_ticket(&self, ticket: &TicketRow, now: i64) -> Result<(), WriteError>;

    /// The ticket with `digest`, taken out of the store when `take` (single use).
    fn ticket(&self, digest: &[u8], take: bool) -> Result<Option<TicketRow>, WriteError>;

    /// A connection that hears what the other nodes commit.
    fn listen(&self) -> Result<Box<dyn Feed>, WriteError>;

    /// Where the store stands for a read of `account` by the key `key_id`: the account's
    /// committed revision and whether the key is live, so the read shows every write and
    /// revocation acknowledged before it on any node. Asked before every read, in one
    /// round trip.
    fn read_point(&self, account: &str, key_id: &str) -> Result<ReadPoint, WriteError>;
}
