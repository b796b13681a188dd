//! The values that cross the storage boundary: rows as commands see them, and what the
//! store's reads hand back.

use serde::Serialize;

pub use domain::storage::{
    AccountSnapshot, BinEntry, KeyAccess, KeyRecord, Loaded, MarkerRow, ProjectName, Stored,
};

use crate::error::WriteError;
use crate::records::{Kind, Record, Task};

/// How hard a commit waits for the disk (contract: `--durability`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// `synchronous=FULL`: an acknowledged write survives a power loss.
    #[default]
    Full,
    /// `synchronous=NORMAL`: survives a crash of the process only.
    Normal,
}

/// What a stored record's row holds besides its body: the indexed columns and the body's
/// size. A rewrite that keeps every indexed column replaces only the body, so it dirties one
/// page instead of one per index.
#[derive(Debug, Clone)]
pub struct Row {
    pub(crate) kind: Kind,
    pub(crate) project_id: String,
    pub(crate) column_id: Option<String>,
    pub(crate) parent_id: Option<String>,
    pub bin: Option<(String, i64)>,
    pub(crate) position: f64,
    /// The body's length in bytes: what the record counts toward the account's storage.
    pub(crate) len: i64,
    /// The record's JSON as stored, for undo steps, which keep it as it is rather than
    /// serialising the record again; dropped by commands that record no step (an import
    /// of a whole account would otherwise hold every body at once).
    pub body: Option<String>,
}

impl Row {
    pub(crate) fn of(record: &Record, bin: Option<(&str, i64)>, body: String) -> Row {
        let (project_id, column_id, parent_id, position) = match record {
            Record::Project(p) => (p.id.clone(), None, None, p.position),
            Record::Column(c) => (c.project_id.clone(), None, None, c.position),
            Record::Task(t) => (
                t.project_id.clone(),
                Some(t.column_id.clone()),
                t.parent_id.clone(),
                t.position,
            ),
        };
        Row {
            kind: record.kind(),
            project_id,
            column_id,
            parent_id,
            bin: bin.map(|(entry, at)| (entry.to_owned(), at)),
            position,
            len: body.len() as i64,
            body: Some(body),
        }
    }

    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The bytes the record counts toward the account's storage.
    pub fn stored_len(&self) -> i64 {
        self.len
    }

    /// Whether `other` keeps every indexed column of this row.
    pub(crate) fn same_columns(&self, other: &Row) -> bool {
        self.kind == other.kind
            && self.project_id == other.project_id
            && self.column_id == other.column_id
            && self.parent_id == other.parent_id
            && self.bin == other.bin
            && self.position == other.position
    }

    pub fn bin_entry(&self) -> Option<&str> {
        self.bin.as_ref().map(|(entry, _)| entry.as_str())
    }
}

/// A record's JSON body as stored, written into room for `room` bytes.
pub(crate) fn record_json(record: &Record, room: usize) -> Result<String, WriteError> {
    fn to_json<T: Serialize>(v: &T, room: usize) -> Result<String, WriteError> {
        let mut out = Vec::with_capacity(room);
        serde_json::to_writer(&mut out, v).map_err(|e| WriteError::Internal(e.to_string()))?;
        // serde_json writes UTF-8 only.
        String::from_utf8(out).map_err(|e| WriteError::Internal(e.to_string()))
    }
    match record {
        Record::Project(p) => to_json(p, room),
        Record::Column(c) => to_json(c, room),
        Record::Task(t) => to_json(t, room),
    }
}

/// The ids of a task's tags, checklist items and comments (what the item index holds).
pub(crate) fn item_ids(t: &Task) -> Vec<String> {
    t.tags
        .iter()
        .map(|x| x.id.clone())
        .chain(t.checklist.iter().map(|x| x.id.clone()))
        .chain(t.comments.iter().map(|x| x.id.clone()))
        .collect()
}

/// A stored body of `kind` read back into its record.
pub(crate) fn record_from_json(kind: Kind, body: &str) -> Result<Record, WriteError> {
    Ok(match kind {
        Kind::Project => Record::Project(serde_json::from_str(body)?),
        Kind::Column => Record::Column(serde_json::from_str(body)?),
        Kind::Task => Record::Task(serde_json::from_str(body)?),
    })
}

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

/// One record of a bin entry, as destroying it needs it.
#[derive(Debug, Clone)]
pub struct EntryRow {
    pub id: String,
    pub kind: Kind,
    pub project_id: String,
    pub deleted_at: Option<i64>,
    pub bytes: i64,
}

/// A bin entry about to be added.
#[derive(Debug, Clone)]
pub struct NewBinEntry<'a> {
    pub id: &'a str,
    pub kind: &'a str,
    pub head: &'a str,
    pub deleted_at: i64,
    pub label: &'a str,
    pub count: usize,
}

/// A key about to be stored: its digest, never the key.
#[derive(Debug, Clone)]
pub struct NewKey<'a> {
    pub id: &'a str,
    pub account: &'a str,
    pub digest: &'a [u8],
    pub label: Option<&'a str>,
    pub prefix: &'a str,
    pub created_at: i64,
    pub access: KeyAccess,
    /// When the key stops working (ms); `None`: never.
    pub expires_at: Option<i64>,
}

/// An account's keys that work at a moment: not revoked, not expired.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct KeyCounts {
    pub usable: usize,
    /// Of those, the keys with full access.
    pub usable_full: usize,
    /// Of those, the full keys that never expire.
    pub lasting_full: usize,
}

/// A live key, for the authentication cache.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveKey {
    pub digest: Vec<u8>,
    pub id: String,
    pub account: String,
    pub access: KeyAccess,
    pub expires_at: Option<i64>,
}

/// One key's allowance counters as saved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowanceRow {
    pub key_id: String,
    pub resets_at: i64,
    pub reads: u64,
    pub writes: u64,
}

/// A stored row of `kind` with its body and place in the bin.
pub(crate) fn loaded(
    kind: Kind,
    body: &str,
    bin_entry: Option<String>,
    deleted_at: Option<i64>,
) -> Result<Loaded, WriteError> {
    Ok(match record_from_json(kind, body)? {
        Record::Project(value) => Loaded::Project(Stored {
            value,
            bin_entry,
            deleted_at,
        }),
        Record::Column(value) => Loaded::Column(Stored {
            value,
            bin_entry,
            deleted_at,
        }),
        Record::Task(value) => Loaded::Task(Stored {
            value,
            bin_entry,
            deleted_at,
        }),
    })
}

/// A live socket's ticket, kept in a store other nodes share so that any node takes it. Only
/// a digest of the ticket is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TicketRow {
    pub account: String,
    pub digest: Vec<u8>,
    pub key_id: String,
    pub expires_at: i64,
}
