//! What the read side needs of the store, in the domain's words: [`ReadStore`], the reads a
//! read model makes (a cold account's records, its bin, keys and storage, the project names,
//! and on a store several nodes share the change sets it missed), and the values they hand
//! back. The engines implement it in `write-model` (its `store` module, the only code that
//! speaks SQL), so a reader of the store links no engine.

use serde::{Deserialize, Serialize};

pub use crate::access::KeyAccess;

use crate::change::ChangeSet;
use crate::error::WriteError;
use crate::records::{Column, Kind, Project, Task};

/// The store's reads that the read model makes. They run on the caller's thread and may
/// block: callers on an async runtime move them off its workers.
pub trait ReadStore: Send + Sync {
    /// Streams a whole account's rows to `each`, in no particular order, from one snapshot;
    /// answers the account's `(rev, last_stamp)`, or `None` if it does not exist.
    fn load_account(
        &self,
        account: &str,
        each: &mut dyn FnMut(Loaded),
    ) -> Result<Option<(i64, i64)>, WriteError>;

    /// The latest stamp of an account (0 if it has none yet).
    fn last_stamp(&self, account: &str) -> Result<i64, WriteError>;

    /// The account's live keys, oldest first.
    fn list_keys(&self, account: &str) -> Result<Vec<KeyRecord>, WriteError>;

    /// The account's recycle bin, newest first.
    fn list_bin(&self, account: &str) -> Result<Vec<BinEntry>, WriteError>;

    /// The account's stored bytes, and how many of them sit in the bin (what a purge frees).
    fn storage(&self, account: &str) -> Result<(u64, u64), WriteError>;

    /// Every live project's name, for the name index.
    fn project_names(&self) -> Result<Vec<ProjectName>, WriteError>;

    // Nodes sharing the store (PostgreSQL). A store one node holds alone (SQLite) keeps the
    // defaults.

    /// Whether other nodes may write this store too.
    fn is_shared(&self) -> bool {
        false
    }

    /// The account's change sets after `rev`, from the change log.
    fn backlog(&self, _account: &str, _rev: i64) -> Result<Backlog, WriteError> {
        Ok(Backlog::Changes(Vec::new()))
    }
}

/// An account's change sets after a revision, as the log holds them.
#[derive(Debug)]
pub enum Backlog {
    /// Every change set after the revision, in order (none when nothing moved).
    Changes(Vec<ChangeSet>),
    /// The log no longer reaches back that far: load the account whole instead.
    Gone,
}

/// A record as the store holds it, with where it sits in the recycle bin if deleted.
#[derive(Debug, Clone)]
pub struct Stored<T> {
    pub value: T,
    pub bin_entry: Option<String>,
    pub deleted_at: Option<i64>,
}

/// One entry of the bin, as `GET /bin` lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BinEntry {
    pub id: String,
    pub kind: String,
    pub deleted_at: i64,
    pub label: String,
    pub count: i64,
}

/// A project or column destroyed out of the bin, remembered for late clients.
#[derive(Debug, Clone)]
pub struct MarkerRow {
    pub id: String,
    pub kind: Kind,
    pub project_id: String,
    pub deleted_at: i64,
}

/// A record of a key, as the keys listing shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KeyRecord {
    pub id: String,
    pub label: Option<String>,
    pub prefix: String,
    pub created_at: i64,
    pub last_used_at: Option<i64>,
    #[serde(default)]
    pub access: KeyAccess,
    #[serde(default)]
    pub expires_at: Option<i64>,
}

/// A live project's name, for the name index.
#[derive(Debug, Clone, PartialEq)]
pub struct ProjectName {
    pub account: String,
    pub id: String,
    pub name: String,
}

/// Everything the read model needs to build an account's document.
#[derive(Debug, Default)]
pub struct AccountSnapshot {
    pub rev: i64,
    pub last_stamp: i64,
    pub projects: Vec<Stored<Project>>,
    pub columns: Vec<Stored<Column>>,
    pub tasks: Vec<Stored<Task>>,
    pub markers: Vec<MarkerRow>,
}

/// One stored row of an account, as the loader hands it over.
// Moved once per row straight into the document, never stored: boxing would only add an
// allocation per card.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Loaded {
    Project(Stored<Project>),
    Column(Stored<Column>),
    Task(Stored<Task>),
    Marker(MarkerRow),
}
