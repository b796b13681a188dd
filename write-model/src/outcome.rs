//! What a write did: a command's [`Outcome`], shaped into its reply by the interface, or
//! what an idempotency key remembered of an earlier one ([`Remembered`]). Below the commands,
//! the idempotency keys and the store alike, so each names it without naming the others.

use serde_json::Value;

use crate::records::Kind;

/// What a command did, for the reply. Serialised as a remembered result of an idempotency
/// key ([`crate::idempotency`]).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Outcome {
    /// A write sent with an idempotency key that was used before: nothing ran.
    #[serde(skip)]
    Remembered(Box<Remembered>),
    /// A new record (201).
    Created {
        kind: Kind,
        id: String,
    },
    /// A create whose id exists with the same fields: a safe retry (200).
    Existing {
        kind: Kind,
        id: String,
    },
    /// A record after a PATCH (200), changed or not.
    Updated {
        kind: Kind,
        id: String,
    },
    /// A repeating card completed by a PATCH (200), and its next occurrence, created in the
    /// same step (`command/task/recur.rs`).
    Recurred {
        id: String,
        next: String,
    },
    /// A DELETE (200), counting the records removed.
    Deleted {
        id: String,
        count: usize,
    },
    AccountCreated {
        id: String,
    },
    KeyIssued {
        id: String,
        account: String,
        created_at: i64,
        /// When the key stops working (ms), as stored: `None`, never.
        expires_at: Option<i64>,
    },
    KeyRevoked {
        id: String,
    },
    /// Checklist items, a tag or a comment added to a card (`created: false` when a tag
    /// equal to one the card has was sent).
    ItemsAdded {
        task_id: String,
        ids: Vec<String>,
        created: bool,
        /// The checklist's items form, which answers `ids` rather than `id`.
        many: bool,
    },
    /// A batch create: how many were new, the revision after, every id in the order sent.
    BatchCreated {
        created: usize,
        rev: i64,
        ids: Vec<String>,
    },
    /// A bulk position write.
    Positions {
        changed: bool,
        moved: usize,
    },
    /// A bin entry restored.
    Restored {
        id: String,
        count: usize,
    },
    /// The bin emptied: cards destroyed and bytes freed.
    Purged {
        cards: usize,
        bytes: u64,
    },
    /// A step undone: the record it headed and the fields put back.
    Undone {
        kind: Kind,
        id: String,
        fields: Vec<String>,
    },
    /// An export file recreated: what it made, and its projects' ids in the file's order.
    Imported {
        projects: usize,
        columns: usize,
        tasks: usize,
        project_ids: Vec<String>,
    },
    /// Bookkeeping saved (allowances, last use of keys).
    Saved,
    /// Nothing left to undo.
    NothingToUndo,
    /// The step could not be undone (a field moved since, or the record is gone); it is
    /// dropped all the same, so this is not an error of the transaction.
    UndoConflict {
        field: String,
        current: Value,
    },
    /// A checklist item after a PATCH.
    ItemUpdated {
        task_id: String,
        item_id: String,
    },
}

/// What a key's lookup found, answered as [`Outcome::Remembered`]: nothing ran. Kept
/// beside [`Outcome`], which carries it and which it carries.
#[derive(Debug, Clone, PartialEq)]
pub enum Remembered {
    /// The first request's outcome, shaped into a reply when the retry is answered (the
    /// first reply was not handed back: a crash, a full queue, or a body past the bound).
    Outcome(Box<Outcome>),
    /// The first request's reply as it was sent: its status, `Content-Type` and body.
    Reply {
        status: u16,
        content_type: String,
        body: String,
    },
    /// The first request's refusal, as it was sent.
    Refusal { status: u16, body: String },
    /// The key was first used for another request.
    OtherRequest,
    /// The key was not used before, and the request may only replay ([`Keyed::replay_only`]):
    /// nothing ran.
    NotRun,
}
