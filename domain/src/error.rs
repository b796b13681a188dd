//! The domain's one error type, the write model's and the store's alike (each engine says how
//! its own errors read, in `write-model`'s `store`). The binary maps each variant to its HTTP
//! status in one place; the variants carry exactly what the contract's error bodies show.

use serde_json::Value;

use crate::kind::Kind;

#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// 400: the body is not JSON at all.
    #[error("{0}")]
    BadJson(String),
    /// 400: a JSON object names the same key twice; which one was meant is not guessed.
    #[error("the key `{key}` appears twice in one object")]
    DuplicateKey { key: String },
    /// 422: an object names more keys than any route takes (`input::MAX_OBJECT_KEYS`); it is
    /// refused at the first key past the cap, before the rest is read.
    #[error("an object in the body names more than {max} keys; no route takes one that wide")]
    TooWide { max: usize },
    /// 404: the record does not exist or is not the caller's.
    #[error("not found")]
    NotFound,
    /// 409: a guard found another value, or a create reused an id with other fields.
    #[error("{message}")]
    Conflict {
        message: String,
        field: String,
        current: Value,
        /// The existing record an id clash names; the reply shows it in its read shape.
        record: Option<Box<(Kind, String)>>,
        /// The batch entry that clashed.
        index: Option<usize>,
    },
    /// 413: the write would grow the account past its storage limit.
    #[error("the account's storage is full")]
    StorageFull,
    /// 422: an invalid value, or an unknown field (`accepted` lists the route's fields).
    #[error("{message}")]
    Invalid {
        message: String,
        field: Option<String>,
        accepted: Option<&'static [&'static str]>,
        index: Option<usize>,
    },
    /// 422: a count limit reached (projects, columns, tags, items, keys, batch sizes).
    #[error("{message}")]
    LimitReached {
        message: String,
        field: Option<String>,
        index: Option<usize>,
    },
    /// 503: the writer's queue is full; nothing was written, and a retry later may land.
    #[error("the writer's queue is full")]
    Overloaded,
    /// 503: the store cannot take writes (full disk, read-only folder).
    #[error("the store cannot take writes: {0}")]
    Unavailable(String),
    /// 503: the writer thread has stopped (the cause, a panic's message, is in the log); no
    /// write lands until the node restarts.
    #[error("the writer has stopped: {0}")]
    WriterStopped(String),
    /// 500: a fault of ours; the cause goes to the log, not the client.
    #[error("internal error: {0}")]
    Internal(String),
}

impl WriteError {
    pub fn invalid(field: &str, message: impl Into<String>) -> Self {
        WriteError::Invalid {
            message: message.into(),
            field: Some(field.to_owned()),
            accepted: None,
            index: None,
        }
    }

    /// A count limit reached, naming the field.
    pub fn limit(field: &str, message: impl Into<String>) -> Self {
        WriteError::LimitReached {
            message: message.into(),
            field: Some(field.to_owned()),
            index: None,
        }
    }

    pub fn conflict(field: &str, current: Value) -> Self {
        WriteError::Conflict {
            message: format!("`{field}` no longer holds the value the write expected"),
            field: field.to_owned(),
            current,
            record: None,
            index: None,
        }
    }

    /// Tags an error from one entry of a batch with that entry's index.
    pub fn at_index(self, i: usize) -> Self {
        match self {
            WriteError::Invalid {
                message,
                field,
                accepted,
                ..
            } => WriteError::Invalid {
                message: format!("entry {i}: {message}"),
                field,
                accepted,
                index: Some(i),
            },
            WriteError::LimitReached { message, field, .. } => WriteError::LimitReached {
                message: format!("entry {i}: {message}"),
                field,
                index: Some(i),
            },
            WriteError::Conflict {
                message,
                field,
                current,
                record,
                ..
            } => WriteError::Conflict {
                message: format!("entry {i}: {message}"),
                field,
                current,
                record,
                index: Some(i),
            },
            other => other,
        }
    }
}

impl From<serde_json::Error> for WriteError {
    fn from(e: serde_json::Error) -> Self {
        WriteError::Internal(format!("stored record does not decode: {e}"))
    }
}
