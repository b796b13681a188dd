//! A record an id clash names, in its read shape as the read model has it: what a conflict's
//! `current` carries, first sent or replayed under an idempotency key. A leaf of `http/`.

use write_model::records::Kind;

/// The record an id clash names, in its read shape as the read model has it.
pub fn record_value(
    read: &read_model::ReadModel,
    account: &str,
    record: &(Kind, String),
) -> serde_json::Value {
    let (kind, id) = record;
    let shaped = match kind {
        Kind::Project => read.project_json(account, id),
        Kind::Column => read.column_json(account, id),
        Kind::Task => read.task_json(account, id),
    };
    shaped
        .ok()
        .flatten()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or(serde_json::Value::Null)
}
