//! `Idempotency-Key` on every write under `/api` (draft-ietf-httpapi-idempotency-key-header,
//! and Stripe's bare spelling of it): what the header may hold, the key's place among the
//! requests this node runs right now (a second one waits for nobody: 409), what a write
//! sends the writer with it ([`Keyed`]), and how a remembered result is answered again.
//!
//! The writer looks the key up and remembers the result in the transaction of the write
//! itself (`write_model::idempotency`), so what a client reads after a crash is what the
//! store committed. A success is remembered there as its outcome; once its first reply is
//! shaped here, it is handed back to the writer ([`answer`]), whose next group puts the
//! reply itself in the row, and a retry answers it byte for byte. A request refused before
//! it reaches the writer (authentication, allowances, body caps and budget, a body that is
//! not JSON or that the route's parser refuses, a full queue) is not remembered: its retry
//! runs again.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use read_model::Body;
use salvo::http::header::HeaderName;
use salvo::http::{HeaderValue, Method, StatusCode, header};
use salvo::prelude::*;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use write_model::idempotency::{FirstReply, Keyed, MAX_REPLY_BYTES, Remembered};
use write_model::{Outcome, Request as WriteRequest, WriteError};

use super::reply::{ApiError, REPLAYED, Reply};
use super::shared::Shared;
use super::{caller, state};
use crate::auth::Caller;

/// The request header.
pub const HEADER: HeaderName = HeaderName::from_static("idempotency-key");
/// The longest key, in characters.
pub const MAX_KEY_CHARS: usize = 255;
/// A remembered refusal longer than this keeps its status, code, message and field, and
/// drops `current` (only a conflict's `current` grows that large): what bounds the table.
pub const MAX_REMEMBERED_BYTES: usize = 16 * 1024;

/// The key a write was sent with, in the depot once the hoop has checked it.
#[derive(Clone)]
struct SentKey(String);

/// In the depot of a write sent with a key when its API key's write allowance is spent (and
/// its read allowance is not): the write may only replay, which counts as a read; a key not
/// used before answers 429 as any write would.
#[derive(Clone, Copy)]
pub struct ReplayOnly {
    pub resets_at: i64,
}

/// Whether a request carries the header at all (the authentication hoop's question, before
/// the header is checked).
pub fn carries_key(req: &Request) -> bool {
    req.headers().contains_key(HEADER)
}

/// The key a request carries: `None` without the header; a 400 naming the header for one
/// that is not 1 to 255 printable ASCII characters, bare or as a quoted string (RFC 8941;
/// `\"` and `\\` are its escapes), or that is sent twice.
pub fn parse(req: &Request) -> Result<Option<String>, ApiError> {
    let mut values = req.headers().get_all(HEADER).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(ApiError::BadIdempotencyKey(
            "the request carries two Idempotency-Key headers; send one",
        ));
    }
    key_of(value.as_bytes()).map(Some)
}

fn key_of(value: &[u8]) -> Result<String, ApiError> {
    const BAD: &str =
        "Idempotency-Key must be 1 to 255 printable ASCII characters, bare or as a quoted string";
    let value = value.trim_ascii();
    let key: Vec<u8> = match value {
        [b'"', inner @ .., b'"'] => {
            let mut key = Vec::with_capacity(inner.len());
            let mut bytes = inner.iter();
            while let Some(&b) = bytes.next() {
                match b {
                    b'\\' => match bytes.next() {
                        Some(&e @ (b'"' | b'\\')) => key.push(e),
                        _ => return Err(ApiError::BadIdempotencyKey(BAD)),
                    },
                    b'"' => return Err(ApiError::BadIdempotencyKey(BAD)),
                    b => key.push(b),
                }
            }
            key
        }
        [b'"', ..] => return Err(ApiError::BadIdempotencyKey(BAD)),
        bare => bare.to_vec(),
    };
    if key.is_empty() || key.len() > MAX_KEY_CHARS || !key.iter().all(|b| (0x20..=0x7e).contains(b))
    {
        return Err(ApiError::BadIdempotencyKey(BAD));
    }
    Ok(String::from_utf8(key).expect("printable ASCII"))
}

/// Whether a request may carry a key that is remembered: every POST, PATCH and DELETE but
/// `POST /live/ticket`, which writes nothing (each call opens a new ticket; its key is
/// checked and otherwise ignored).
fn remembers(req: &Request) -> bool {
    matches!(
        *req.method(),
        Method::POST | Method::PATCH | Method::PUT | Method::DELETE
    ) && !req.uri().path().ends_with("/live/ticket")
}

/// The hoop of every keyed route, after authentication: checks the header of a write,
/// refuses a key this node is running a write for (409), and takes back the write a
/// replayed reply was counted as (it counts as a read).
#[handler]
pub async fn hoop(req: &mut Request, depot: &mut Depot, res: &mut Response, ctrl: &mut FlowCtrl) {
    if !matches!(
        *req.method(),
        Method::POST | Method::PATCH | Method::PUT | Method::DELETE
    ) {
        return;
    }
    let key = match parse(req) {
        Ok(Some(key)) => key,
        Ok(None) => return,
        Err(e) => {
            e.render(res);
            return ctrl.skip_rest();
        }
    };
    if !remembers(req) {
        return;
    }
    let (state, caller) = (state(depot), caller(depot));
    let Some(_entered) = state.idempotency.enter(&caller.key_id, &key) else {
        ApiError::IdempotencyKeyInFlight.render(res);
        return ctrl.skip_rest();
    };
    depot.insert_typed(SentKey(key));
    ctrl.call_next(req, depot, res).await;
    // A write counted as one and answered from memory is taken back: a replay is a read.
    if res.headers().contains_key(REPLAYED) && depot.get_typed::<ReplayOnly>().is_err() {
        state.allowances.refund_write(&caller.key_id);
    }
}

/// What the writer needs of a request sent with a key, or `None` without one. The
/// fingerprint covers the method, the path (one route under `/api/v1/` and `/api/` is one
/// path), the query and the body.
fn keyed(
    req: &Request,
    depot: &Depot,
    state: &Arc<Shared>,
    caller: &Caller,
    body: &[u8],
) -> Option<Keyed> {
    let SentKey(key) = depot.get_typed::<SentKey>().ok()?.clone();
    let path = req.uri().path();
    let path = path.strip_prefix("/api/v1").unwrap_or(path);
    let path = path.strip_prefix("/api").unwrap_or(path);
    let mut digest = Sha256::new();
    for part in [
        req.method().as_str().as_bytes(),
        path.as_bytes(),
        req.uri().query().unwrap_or("").as_bytes(),
    ] {
        digest.update((part.len() as u64).to_be_bytes());
        digest.update(part);
    }
    digest.update(body);
    let (read, account) = (state.read.clone(), caller.account.clone());
    Some(Keyed {
        key_id: caller.key_id.clone(),
        key,
        fingerprint: digest.finalize().to_vec(),
        replay_only: depot.get_typed::<ReplayOnly>().is_ok(),
        refusal: Box::new(move |e| refusal(&read, &account, e)),
        row: Arc::default(),
    })
}

/// A refusal as it is sent (status and envelope), or `None` for a fault of the service.
fn refusal(read: &read_model::ReadModel, account: &str, e: &WriteError) -> Option<(u16, String)> {
    let current = match e {
        WriteError::Conflict {
            record: Some(record),
            ..
        } => Some(super::record::record_value(read, account, record)),
        _ => None,
    };
    let (status, mut body) = super::error::write_refusal(e, current)?;
    let mut text = body.to_string();
    if text.len() > MAX_REMEMBERED_BYTES {
        body["current"] = Value::Null;
        text = body.to_string();
    }
    Some((status, text))
}

/// What the writer answered a write: its outcome, and the key and fingerprint it was sent
/// with (for its first reply, handed back by [`answer`]).
pub struct Answer {
    pub outcome: Outcome,
    sent: Option<Sent>,
}

/// What a keyed write's first reply is handed back with: the key, the request's
/// fingerprint, and where the writer leaves the name of the row it remembered the result in.
struct Sent {
    key: String,
    fingerprint: Vec<u8>,
    row: Arc<AtomicI64>,
}

/// Sends a write to the writer, with its key when it has one.
pub async fn submit(
    req: &Request,
    depot: &Depot,
    body: &[u8],
    request: WriteRequest,
) -> Result<Answer, WriteError> {
    let (state, caller) = (state(depot), caller(depot));
    let keyed = keyed(req, depot, &state, &caller, body);
    let sent = keyed.as_ref().map(|k| Sent {
        key: k.key.clone(),
        fingerprint: k.fingerprint.clone(),
        row: k.row.clone(),
    });
    let (tx, rx) = tokio::sync::oneshot::channel();
    state.write.submit_keyed(
        request,
        keyed,
        Box::new(move |r| {
            let _ = tx.send(r);
        }),
    );
    let outcome = rx.await.unwrap_or_else(|_| Err(state.write.gone()))?;
    Ok(Answer { outcome, sent })
}

/// The reply of a write the writer answered: a remembered first reply as it was sent, else
/// the reply `shape` makes of the outcome (told whether it is a remembered one). The first
/// reply of a success sent with a key is handed back to the writer for its row, without
/// waiting: a retry then answers it byte for byte.
pub fn answer(
    depot: &Depot,
    answer: Answer,
    shape: impl FnOnce(Outcome, bool) -> Result<Reply, ApiError>,
) -> Result<Reply, ApiError> {
    let Answer { outcome, sent } = answer;
    if let Outcome::Remembered(found) = &outcome
        && let Remembered::Reply {
            status,
            content_type,
            body,
        } = &**found
    {
        let status = StatusCode::from_u16(*status).unwrap_or(StatusCode::OK);
        let reply = Reply::chunks(status, vec![bytes::Bytes::from(body.clone())]);
        let reply = match HeaderValue::from_str(content_type) {
            Ok(value) => reply.with_header(header::CONTENT_TYPE, value),
            Err(_) => reply,
        };
        return Ok(mark(reply, true));
    }
    let (outcome, replayed) = self::outcome(depot, outcome)?;
    let reply = shape(outcome, replayed)?;
    if let (false, Some(sent)) = (replayed, sent) {
        hand_back(depot, sent, &reply);
    }
    Ok(mark(reply, replayed))
}

/// Hands the writer a first reply for its row: a success whose body is ready and within
/// [`MAX_REPLY_BYTES`] (a longer one stays remembered as its outcome).
fn hand_back(depot: &Depot, sent: Sent, reply: &Reply) {
    let Body::Ready(chunks) = &reply.body else {
        return;
    };
    let len: usize = chunks.iter().map(|c| c.len()).sum();
    if !reply.status.is_success() || reply.etag.is_some() || len > MAX_REPLY_BYTES {
        return;
    }
    let mut body = Vec::with_capacity(len);
    for chunk in chunks {
        body.extend_from_slice(chunk);
    }
    let Ok(body) = String::from_utf8(body) else {
        return;
    };
    let content_type = reply
        .headers
        .iter()
        .rev()
        .find(|(name, _)| *name == header::CONTENT_TYPE)
        .and_then(|(_, value)| value.to_str().ok())
        .unwrap_or("application/json")
        .to_owned();
    let (state, caller) = (state(depot), caller(depot));
    state.write.remember_reply(FirstReply {
        account: caller.account.clone(),
        key_id: caller.key_id.clone(),
        key: sent.key,
        fingerprint: sent.fingerprint,
        // The writer named the row before it answered (0: an engine without row names).
        row: Some(sent.row.load(Ordering::Acquire)).filter(|&id| id != 0),
        status: reply.status.as_u16(),
        content_type,
        body,
    });
}

/// A result the writer answered: the outcome, and whether it is a remembered one (its
/// reply then carries `Idempotent-Replayed: true`). A remembered refusal, or a key first
/// used for another request, is an error.
pub fn outcome(depot: &Depot, outcome: Outcome) -> Result<(Outcome, bool), ApiError> {
    match outcome {
        Outcome::Remembered(found) => match *found {
            Remembered::Outcome(outcome) => Ok((*outcome, true)),
            Remembered::Refusal { status, body } => Err(ApiError::Replayed { status, body }),
            // Answered by [`answer`]; a route that shapes its own reply (POST /keys) never
            // hands its reply back.
            Remembered::Reply { .. } => Err(ApiError::Write(WriteError::Internal(
                "a remembered reply where an outcome was expected".into(),
            ))),
            Remembered::OtherRequest => Err(ApiError::IdempotencyKeyReused),
            Remembered::NotRun => Err(ApiError::AllowanceSpent {
                resets_at: depot.get_typed::<ReplayOnly>().map_or(0, |r| r.resets_at),
            }),
        },
        outcome => Ok((outcome, false)),
    }
}

/// Marks a reply as remembered, when it is.
pub fn mark(reply: Reply, replayed: bool) -> Reply {
    match replayed {
        true => reply.with_header(REPLAYED, HeaderValue::from_static("true")),
        false => reply,
    }
}

/// What the discovery document says of idempotency keys.
pub fn discovery(limits: &write_model::Limits) -> Value {
    json!({
        "header": "Idempotency-Key, on every POST, PATCH and DELETE under /api: 1 to 255 printable ASCII characters, bare (Stripe's form) or as a quoted string (the IETF draft's form, with \\\" and \\\\ as escapes); both spellings are the same key. Anything else, an empty key or two headers included, answers 400 `bad_idempotency_key`.",
        "scope": "A key belongs to the API key that sent it: another API key of the same account using the same key makes a different request.",
        "replay": format!("A retry with the same key, from the same API key, for the same request (method, path, query and body; /api/v1/ and /api/ are one path) answers the remembered status and body with `Idempotent-Replayed: true`, writes nothing and counts as a read, not a write: with the API key's write allowance spent, a retry still replays, and a key not used before answers 429 as any write would. A remembered refusal is answered byte for byte, and so is a remembered success (status, Content-Type and body as first sent): the write's own transaction remembers its outcome (status and ids), and the first reply, once sent, is put in the same row by the writer's next group (with the next writes, or within 20 ms on an idle writer). Until that group commits, and for a first reply past {} bytes as stored (a card with a long description), a success is answered from its outcome: the status, ids and every other field as first answered, the record as it is when the retry is answered (an edit since shows). That window is a node stopped (a crash, kill -9) between the write's commit and the next group's, a retry reaching another node before that group committed (at most about 20 ms after the reply), or a writer too busy to take the reply (its queue of replies full). A retry to the same node after the reply always finds it. POST /keys remembers the key's id but never the key itself: its replay answers `key: null`.", MAX_REPLY_BYTES),
        "otherRequest": "The same key with another request answers 422 `idempotency_key_reused`; nothing runs.",
        "inFlight": "The same key while its first request is still running on the same node answers 409 `idempotency_key_in_flight`; retry it after a moment. On several nodes, a retry that reaches another node while the first is running waits for the first's transaction (the account's lock) and then replays its result.",
        "remembered": "Every result the writer produced is remembered in the transaction of the write itself, so a crash after the commit and before the reply still replays (a success then as its outcome; see `replay`): successes, and the writer's refusals (404, 409, 413 `storage_full`, 422 from the writer). Not remembered, so that the retry runs again: refusals before the writer (400, 401, 403, 408, 413 `body_too_large`, 422 of a body or query the route's parser refuses, 429), and every 5xx. POST /live/ticket checks the header and remembers nothing (each call opens a new ticket).",
        "retentionSeconds": limits.idempotency_seconds,
        "keysPerApiKey": limits.idempotency_keys_per_key,
        "bounds": format!("A key is remembered for {} seconds after its first request; each API key keeps its newest {} (the oldest are forgotten in batches between writes, so between two batches it may hold a fifth more, at most 2,048 more; expired results go within a minute of the store's next write, on PostgreSQL an idle API key's when it next writes). Remembered results do not count toward storage: a remembered success holds the ids of what it wrote and then its first reply if that is at most {} bytes (stored as a JSON string; a longer one keeps the ids), a remembered refusal at most {} bytes (past that, a conflict's `current` is dropped), so an account holds at most about keysPerAccount x keysPerApiKey x 64.5 KiB of them, and in practice a few KiB each. Revoking an API key forgets its keys. A backup of a SQLite store keeps them; `workboard copy` does not.", limits.idempotency_seconds, limits.idempotency_keys_per_key, MAX_REPLY_BYTES, MAX_REMEMBERED_BYTES),
    })
}

/// Writes the header into the OpenAPI document: a parameter of every POST, PATCH and DELETE,
/// the codes it adds to their 400, 409 and 422, and `Idempotent-Replayed` on their replies.
pub fn document(doc: &mut Value) {
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else {
        return;
    };
    let parameter = json!({
        "name": "Idempotency-Key",
        "in": "header",
        "required": false,
        "description": "Makes the write safe to retry: 1 to 255 printable ASCII characters, bare or as a quoted string (both spellings are one key), scoped to the API key. A retry of the same request answers the remembered status and body with `Idempotent-Replayed: true`, writes nothing and counts as a read: byte for byte as first sent (status, Content-Type, body), but for a success whose first reply was not yet kept (a crash between the write's commit and the writer's next group, a retry on another node within that moment, about 20 ms) or was longer than 64 KiB, whose record is shown as it is when the retry is answered. Remembered: every result the writer produced (successes, and 404, 409, 413 storage_full and 422 refusals of the writer); not remembered: refusals before the writer (400, 401, 403, 408, 413 body_too_large, 422 of the body's parser, 429) and 5xx. See the discovery document's `idempotency`.",
        "schema": {"type": "string", "minLength": 1, "maxLength": 257},
    });
    let replayed = json!({
        "description": "`true` on a reply remembered under the request's Idempotency-Key",
        "schema": {"type": "string", "enum": ["true"]},
    });
    let added = [
        (
            "400",
            "; or a malformed Idempotency-Key (`bad_idempotency_key`)",
        ),
        (
            "409",
            "; or the Idempotency-Key's first request is still running (`idempotency_key_in_flight`)",
        ),
        (
            "422",
            "; or the Idempotency-Key was first used for another request (`idempotency_key_reused`)",
        ),
    ];
    for (path, item) in paths.iter_mut() {
        if path.ends_with("/live/ticket") {
            continue;
        }
        let Some(item) = item.as_object_mut() else {
            continue;
        };
        for (method, op) in item.iter_mut() {
            if !matches!(method.as_str(), "post" | "patch" | "delete") {
                continue;
            }
            match op.get_mut("parameters").and_then(Value::as_array_mut) {
                Some(list) => list.push(parameter.clone()),
                None => op["parameters"] = json!([parameter.clone()]),
            }
            let Some(responses) = op.get_mut("responses").and_then(Value::as_object_mut) else {
                continue;
            };
            for (status, text) in added {
                let response = responses.entry(status).or_insert_with(|| {
                    json!({
                        "description": "",
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
                    })
                });
                let description = response["description"].as_str().unwrap_or("").to_owned();
                let text = match description.is_empty() {
                    true => text.trim_start_matches("; or ").to_owned(),
                    false => format!("{description}{text}"),
                };
                response["description"] = json!(text);
            }
            for response in responses.values_mut() {
                if let Some(response) = response.as_object_mut() {
                    let headers = response.entry("headers").or_insert_with(|| json!({}));
                    headers["Idempotent-Replayed"] = replayed.clone();
                }
            }
        }
    }
}
