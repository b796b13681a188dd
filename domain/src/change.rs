//! Change records: what one applied command changed, as post-images, for the read model (and
//! later the change feed and the socket) to apply. A change set is emitted only after commit.
//!
//! On a store that several nodes share, each change set is also written to the store's change
//! log in the same transaction (serialised with serde), and each key change is announced to
//! the other nodes, so every node's read model and key cache apply the same records.

use serde::{Deserialize, Serialize};

use crate::records::{Kind, Record};

/// What happened to one record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum RecordChange {
    /// The record is live (created, changed or restored); this is its whole new state.
    Live(Record),
    /// The record moved into the recycle bin under `entry`.
    Binned {
        record: Record,
        entry: String,
        deleted_at: i64,
    },
    /// The record is gone for good (pushed out of the bin, purged, or a create undone).
    Destroyed { kind: Kind, id: String },
}

impl RecordChange {
    pub fn id(&self) -> &str {
        match self {
            RecordChange::Live(r) | RecordChange::Binned { record: r, .. } => r.id(),
            RecordChange::Destroyed { id, .. } => id,
        }
    }
}

/// Everything one request changed in one account, all stamped alike.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChangeSet {
    pub account: String,
    /// The account's revision after this change.
    pub rev: i64,
    /// The stamp every changed record carries.
    pub stamp: i64,
    pub records: Vec<RecordChange>,
    /// A project was created, renamed, deleted or restored: the name index must follow.
    pub names_changed: bool,
}

/// A change to the keys of an account, for the authentication cache.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum KeyChange {
    Issued {
        id: String,
        account: String,
        digest: Vec<u8>,
        access: crate::access::KeyAccess,
        expires_at: Option<i64>,
    },
    Revoked {
        id: String,
        digest: Vec<u8>,
    },
}

/// One effect of a committed command, in commit order.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    Records(ChangeSet),
    Key(KeyChange),
}
