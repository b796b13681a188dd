//! A whole store as rows, engine to engine: what `workboard copy` moves, and what a backup
//! of a PostgreSQL store writes into its SQLite file. Every table comes along, keys (their
//! digests), undo steps, the bin and the pepper's check value included.

use crate::error::WriteError;

/// The rows of one table, a batch at a time.
#[derive(Debug, Clone, PartialEq)]
pub enum Rows {
    Meta(Vec<MetaRow>),
    Accounts(Vec<AccountRow>),
    Keys(Vec<KeyRow>),
    Allowances(Vec<AllowanceCopy>),
    Records(Vec<RecordRow>),
    Bin(Vec<BinRow>),
    Items(Vec<ItemRow>),
    Markers(Vec<MarkerCopy>),
    Undo(Vec<UndoRow>),
}

impl Rows {
    pub fn len(&self) -> usize {
        match self {
            Rows::Meta(r) => r.len(),
            Rows::Accounts(r) => r.len(),
            Rows::Keys(r) => r.len(),
            Rows::Allowances(r) => r.len(),
            Rows::Records(r) => r.len(),
            Rows::Bin(r) => r.len(),
            Rows::Items(r) => r.len(),
            Rows::Markers(r) => r.len(),
            Rows::Undo(r) => r.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// How many rows a batch holds at most.
pub const BATCH: usize = 1_000;

#[derive(Debug, Clone, PartialEq)]
pub struct MetaRow {
    pub name: String,
    pub value: Vec<u8>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct AccountRow {
    pub id: String,
    pub rev: i64,
    pub last_stamp: i64,
    pub stored_bytes: i64,
    pub created_at: i64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct KeyRow {
    pub id: String,
    pub account: String,
    pub digest: Vec<u8>,
    pub label: Option<String>,
    pub prefix: String,
    pub created_at: i64,
    pub last_used_at: Option<i64>,
    pub revoked_at: Option<i64>,
    /// `full` or `read`, as stored.
    pub access: String,
    pub expires_at: Option<i64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct AllowanceCopy {
    pub account: String,
    pub key_id: String,
    pub resets_at: i64,
    pub reads: i64,
    pub writes: i64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RecordRow {
    pub account: String,
    pub id: String,
    pub kind: i64,
    pub project_id: String,
    pub column_id: Option<String>,
    pub parent_id: Option<String>,
    pub bin_entry: Option<String>,
    pub deleted_at: Option<i64>,
    pub position: f64,
    pub body: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct BinRow {
    pub account: String,
    pub id: String,
    pub seq: i64,
    pub kind: String,
    pub head: String,
    pub deleted_at: i64,
    pub label: String,
    pub count: i64,
    pub key_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ItemRow {
    pub account: String,
    pub id: String,
    pub task_id: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct MarkerCopy {
    pub account: String,
    pub id: String,
    pub kind: i64,
    pub project_id: String,
    pub deleted_at: i64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct UndoRow {
    pub account: String,
    pub key_id: String,
    pub seq: i64,
    pub step: String,
}

/// Rows written into an empty store, all in one transaction: nothing of a copy that fails
/// halfway stays.
pub trait Loader {
    fn load(&mut self, rows: Rows) -> Result<(), WriteError>;
    fn commit(self: Box<Self>) -> Result<(), WriteError>;
}

/// Sends a table's rows to `each` in batches of [`BATCH`].
pub(crate) fn batched<T>(
    rows: impl Iterator<Item = Result<T, WriteError>>,
    wrap: fn(Vec<T>) -> Rows,
    each: &mut dyn FnMut(Rows) -> Result<(), WriteError>,
) -> Result<(), WriteError> {
    let mut batch = Vec::with_capacity(BATCH);
    for row in rows {
        batch.push(row?);
        if batch.len() == BATCH {
            each(wrap(std::mem::replace(
                &mut batch,
                Vec::with_capacity(BATCH),
            )))?;
        }
    }
    if !batch.is_empty() {
        each(wrap(batch))?;
    }
    Ok(())
}
