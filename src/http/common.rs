//! What every handler shares: query checks, reading the body once, submitting a command and
//! shaping the reply of a write from the read model.

use bytes::Bytes;
use read_model::Completed;
use salvo::http::StatusCode;
use salvo::prelude::*;
use serde_json::json;
use write_model::records::Kind;
use write_model::{Command, Outcome, Request as WriteRequest, WriteError};

use super::body::{Held, INLINE_PARSE_BYTES};
use super::query::Query;
use super::record::record_value;
use super::reply::{ApiError, Reply};
use super::shared::Shared;
use super::{caller, state};
use crate::auth::Caller;

/// Runs a read that asks the store (the bin, storage used, keys) on a blocking thread, off
/// the async workers.
pub async fn from_store<T: Send + 'static>(
    state: &std::sync::Arc<Shared>,
    read: impl FnOnce(&read_model::ReadModel) -> Result<T, read_model::ReadError> + Send + 'static,
) -> Result<T, ApiError> {
    let model = state.read.clone();
    tokio::task::spawn_blocking(move || read(&model))
        .await
        .map_err(|e| ApiError::Write(WriteError::Internal(format!("a store read failed: {e}"))))?
        .map_err(ApiError::Read)
}

/// Runs work that may block on the store (a shared store's tickets) on a blocking thread.
pub async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, WriteError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ApiError::Write(WriteError::Internal(format!("a blocking task failed: {e}"))))?
        .map_err(ApiError::Write)
}

/// Refuses query parameters the route does not take (contract: 422 naming it).
pub fn check_query(req: &Request, accepted: &[&str]) -> Result<(), ApiError> {
    Query::of(req).only(accepted)
}

pub fn no_query(req: &Request) -> Result<(), ApiError> {
    check_query(req, &[])
}

/// `completed` of a whole-account read: `none` unless given.
pub fn completed(req: &Request) -> Result<Completed, ApiError> {
    Query::of(req).completed(Completed::None)
}

/// The request body of `caller`, within its route's cap, the process's budget for bodies
/// (and the account's share of it) and its deadline (see [`super::body::read`]). What it
/// returns holds its share of the budget until it is dropped, so a handler keeps it until its
/// command has run.
pub async fn body(req: &mut Request, state: &Shared, caller: &Caller) -> Result<Held, ApiError> {
    super::body::read(req, state, Some(&caller.account)).await
}

pub fn id_param(req: &Request) -> String {
    req.param::<String>("id").unwrap_or_default()
}

pub fn request(caller: &Caller, command: Command) -> WriteRequest {
    WriteRequest {
        account: Some(caller.account.clone()),
        key_id: Some(caller.key_id.clone()),
        command,
    }
}

/// The reply to a write, with the record's read shape taken from the read model (the write
/// is visible there before the writer acknowledges it).
pub fn write_reply(state: &Shared, caller: &Caller, outcome: Outcome) -> Result<Reply, ApiError> {
    let account = &caller.account;
    let read = &state.read;
    let shaped = |kind: Kind, id: &str| -> Result<(&'static str, Option<Bytes>), ApiError> {
        Ok(match kind {
            Kind::Project => ("project", read.project_json(account, id)?),
            Kind::Column => ("column", read.column_json(account, id)?),
            Kind::Task => ("task", read.task_json_any(account, id)?),
        })
    };
    let id_head = |id: &str| format!("\"id\":{},", json!(id));
    Ok(match outcome {
        Outcome::Created { kind, id } | Outcome::Existing { kind, id } => {
            let (name, record) = shaped(kind, &id)?;
            Reply::record(StatusCode::CREATED, &id_head(&id), name, record)
        }
        Outcome::Updated { kind, id } => {
            let (name, record) = shaped(kind, &id)?;
            Reply::record(StatusCode::OK, "", name, record)
        }
        Outcome::Recurred { id, next } => {
            // The next occurrence of a repeating card, as read, beside the finished card.
            let made = read.task_json(account, &next)?;
            let made = made
                .as_deref()
                .map_or("null".into(), String::from_utf8_lossy);
            let head = format!("\"next\":{made},");
            Reply::record(
                StatusCode::OK,
                &head,
                "task",
                read.task_json_any(account, &id)?,
            )
        }
        Outcome::Deleted { id, count } => Reply::json(
            StatusCode::OK,
            &json!({"ok": true, "id": id, "deleted": count}),
        ),
        Outcome::ItemsAdded {
            task_id,
            ids,
            created,
            many,
        } => {
            let status = if created {
                StatusCode::CREATED
            } else {
                StatusCode::OK
            };
            let head = if many {
                format!("\"ids\":{},", json!(ids))
            } else {
                id_head(&ids[0])
            };
            Reply::record(status, &head, "task", read.task_json(account, &task_id)?)
        }
        Outcome::ItemUpdated { task_id, item_id } => Reply::record(
            StatusCode::OK,
            "",
            "item",
            read.checklist_item_json(account, &task_id, &item_id)?,
        ),
        Outcome::BatchCreated { created, rev, ids } => Reply::json(
            StatusCode::CREATED,
            &json!({"ok": true, "created": created, "rev": rev, "ids": ids}),
        ),
        Outcome::Positions { changed, moved } => Reply::json(
            StatusCode::OK,
            &json!({"ok": true, "changed": changed, "moved": moved}),
        ),
        Outcome::Restored { id, count } => Reply::json(
            StatusCode::OK,
            &json!({"ok": true, "id": id, "restored": count}),
        ),
        Outcome::Purged { cards, bytes } => Reply::json(
            StatusCode::OK,
            &json!({"ok": true, "purged": cards, "freed": bytes}),
        ),
        Outcome::KeyRevoked { id } => Reply::json(StatusCode::OK, &json!({"ok": true, "id": id})),
        Outcome::Undone { kind, id, fields } => Reply::json(
            StatusCode::OK,
            &json!({"ok": true, "undone": true, "change": {"kind": kind.name(), "id": id, "fields": fields}}),
        ),
        Outcome::NothingToUndo => {
            Reply::json(StatusCode::OK, &json!({"ok": true, "undone": false}))
        }
        Outcome::UndoConflict { field, current } => {
            return Err(ApiError::UndoConflict { field, current });
        }
        other => {
            return Err(ApiError::Write(WriteError::Internal(format!(
                "unexpected outcome {other:?}"
            ))));
        }
    })
}

/// Counts how a write ended, for the metrics.
pub fn count_write(state: &Shared, result: &Result<Reply, ApiError>) {
    use crate::metrics::WriteOutcome;
    let outcome = match result {
        Ok(_) => WriteOutcome::Committed,
        Err(e) => match e.code() {
            super::error::ErrorCode::Conflict => WriteOutcome::Conflict,
            _ if e.is_fault() => WriteOutcome::Failed,
            _ => WriteOutcome::Refused,
        },
    };
    state.metrics.write(outcome);
}

/// Runs a write: parse the body into a command, submit it, shape the reply. A body larger
/// than [`INLINE_PARSE_BYTES`] is parsed (and its keys checked) in a blocking slot, so a wide
/// or long body never holds up the async workers that answer everyone else.
pub async fn write(
    req: &mut Request,
    depot: &Depot,
    parse: impl FnOnce(&[u8], &write_model::Limits) -> Result<Command, write_model::WriteError>
    + Send
    + 'static,
) -> Result<Reply, ApiError> {
    let state = state(depot);
    let caller = caller(depot);
    let result = async {
        no_query(req)?;
        // Held until the command has run: its share of the body budget goes back then.
        let held = body(req, &state, &caller).await?;
        let command = if held.len() <= INLINE_PARSE_BYTES {
            parse(&held, &state.limits)?
        } else {
            let (bytes, limits) = (held.bytes(), state.limits.clone());
            state
                .bodies
                .off_workers(move || parse(&bytes, &limits))
                .await??
        };
        let answer = super::idempotency::submit(req, depot, &held, request(&caller, command))
            .await
            .map_err(|e| shape_conflict(&state, &caller, e))?;
        drop(held);
        super::idempotency::answer(depot, answer, |outcome, _| {
            let existing = matches!(outcome, Outcome::Existing { .. });
            let mut reply = write_reply(&state, &caller, outcome)?;
            if existing {
                reply.status = StatusCode::OK;
            }
            Ok(reply)
        })
    }
    .await;
    count_write(&state, &result);
    result
}

/// Runs a body-less write (DELETE).
pub async fn write_without_body(
    req: &mut Request,
    depot: &Depot,
    command: Command,
) -> Result<Reply, ApiError> {
    let state = state(depot);
    let caller = caller(depot);
    let result = async {
        no_query(req)?;
        let answer = super::idempotency::submit(req, depot, &[], request(&caller, command)).await?;
        super::idempotency::answer(depot, answer, |outcome, _| {
            write_reply(&state, &caller, outcome)
        })
    }
    .await;
    count_write(&state, &result);
    result
}

/// A conditional read: 304 when `If-None-Match` holds the current tag (weak comparison),
/// else the body `read` produces. The tag is taken first, so a body is never older than it.
pub fn conditional(
    req: &Request,
    etag: String,
    read: impl FnOnce() -> Result<read_model::Body, ApiError>,
) -> Result<Reply, ApiError> {
    if fresh(req, &etag) {
        return Ok(Reply::not_modified(etag));
    }
    Ok(Reply::body(StatusCode::OK, read()?).with_etag(etag))
}

/// Whether the client's copy is current: `If-None-Match` holds `etag` (weak comparison).
pub fn fresh(req: &Request, etag: &str) -> bool {
    let opaque = |t: &str| t.trim().trim_start_matches("W/").to_owned();
    req.headers()
        .get(salvo::http::header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(',')
                .any(|t| t.trim() == "*" || opaque(t) == opaque(etag))
        })
}

/// The request's query string, part of what a conditional read's tag covers.
pub fn query_string(req: &Request) -> &str {
    req.uri().query().unwrap_or("")
}

/// An id clash answers with the existing record in its read shape, as the read model has it.
fn shape_conflict(state: &Shared, caller: &Caller, e: WriteError) -> ApiError {
    let WriteError::Conflict {
        message,
        field,
        record: Some(record),
        index,
        ..
    } = e
    else {
        return ApiError::Write(e);
    };
    let current = record_value(&state.read, &caller.account, &record);
    ApiError::Write(WriteError::Conflict {
        message,
        field,
        current,
        record: None,
        index,
    })
}
