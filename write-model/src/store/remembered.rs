//! The rows of idempotency keys as the store keeps them: a remembered result
//! ([`RememberedRow`]) and a first reply handed back for it ([`FirstReply`]). What a row
//! means, and when one is written or pruned, is `crate::idempotency`'s.

use serde::Serialize;

use crate::error::WriteError;

/// One row of the `idempotency` table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RememberedRow {
    pub account: String,
    pub key_id: String,
    pub key: String,
    pub fingerprint: Vec<u8>,
    pub created_at: i64,
    /// The result, as JSON.
    pub result: String,
}

/// The longest first reply a row keeps, in bytes, as stored (on SQLite the body as sent, on
/// PostgreSQL the body as a JSON string): a longer one (a card with a long description)
/// stays remembered as its outcome. The table holds at most keys x this.
pub const MAX_REPLY_BYTES: usize = 64 * 1024;

/// The first reply of a success sent with a key, handed back by the interface once it has
/// shaped it, for the row the write's own transaction wrote.
#[derive(Debug, Clone)]
pub struct FirstReply {
    pub account: String,
    pub key_id: String,
    pub key: String,
    /// The request's fingerprint: a row of another request under the key is left alone.
    pub fingerprint: Vec<u8>,
    /// The row the writer named when it remembered the success (`idempotency::Keyed::row`),
    /// if any.
    pub row: Option<i64>,
    pub status: u16,
    pub content_type: String,
    /// At most [`MAX_REPLY_BYTES`].
    pub body: String,
}

impl FirstReply {
    /// The row's result that remembers this reply, for an engine that keeps it in `result`.
    pub fn result(&self) -> Result<String, WriteError> {
        reply_result(self.status, &self.content_type, &self.body)
    }
}

/// A remembered reply as a row's `result`: how an engine that keeps replies apart (SQLite,
/// in a table of their own, the body as sent) hands one to `idempotency::lookup`.
pub fn reply_result(status: u16, content_type: &str, body: &str) -> Result<String, WriteError> {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    enum Borrowed<'a> {
        Reply {
            status: u16,
            content_type: &'a str,
            body: &'a str,
        },
    }
    Ok(serde_json::to_string(&Borrowed::Reply {
        status,
        content_type,
        body,
    })?)
}
