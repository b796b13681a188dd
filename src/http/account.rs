//! The account's own routes: keys, undo, usage.

use salvo::http::StatusCode;
use salvo::prelude::*;
use serde_json::json;
use write_model::command::account::{Expiry, IssueKey, RevokeKey};
use write_model::ids::KeyId;
use write_model::input::Body;
use write_model::store::KeyAccess;
use write_model::{Command, Outcome, WriteError, checks};

use super::common::{body, from_store, id_param, no_query, request, write_without_body};
use super::reply::{ApiError, Reply};
use super::schema;
use super::{caller, state};
use crate::pepper::new_key;

#[endpoint(tags("account"), security(("bearer" = [])), responses(schema::ReadErrors, (status_code = 200, description = "Success", body = schema::Keys)))]
pub async fn list_keys(req: &mut Request, depot: &mut Depot) -> Result<Reply, ApiError> {
    no_query(req)?;
    let (state, caller) = (state(depot), caller(depot));
    let account = caller.account.clone();
    let keys: Vec<_> = from_store(&state, move |read| read.keys(&account))
        .await?
        .into_iter()
        .map(|k| {
            let last_used = match (k.last_used_at, state.allowances.last_used(&k.id)) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            };
            json!({
                "id": k.id, "label": k.label, "prefix": k.prefix, "createdAt": k.created_at,
                "lastUsedAt": last_used, "current": k.id == caller.key_id,
                "access": k.access.as_str(), "expiresAt": k.expires_at,
            })
        })
        .collect();
    Ok(Reply::json(
        StatusCode::OK,
        &json!({"ok": true, "keys": keys}),
    ))
}

/// Issues a key to the caller's account; the key is shown once.
///
/// A key never outranks the key that makes it: a read key makes none (403 `read_only_key`).
/// Sent with a key that expires, the new key expires no later: `expiresAt` omitted takes the
/// sending key's expiry (the reply shows it), and a later `expiresAt`, or null, answers 422
/// naming `expiresAt`.
#[endpoint(tags("account"), security(("bearer" = [])), request_body(content = Option<schema::KeyCreate>, description = "Optional: an empty body is `{}`"), responses(schema::WriteErrors, (status_code = 201, description = "Success", body = schema::KeyCreated)))]
pub async fn issue_key(req: &mut Request, depot: &mut Depot) -> Result<Reply, ApiError> {
    no_query(req)?;
    let (state, caller) = (state(depot), caller(depot));
    let bytes = body(req, &state, &caller).await?;
    let asked = KeyAsked::parse(&bytes, state.limits.name_chars)?;
    let key = new_key();
    let command = Command::IssueKey(IssueKey {
        digest: state.pepper.digest(&key).to_vec(),
        prefix: key.chars().take(8).collect(),
        label: asked.label.clone(),
        access: asked.access,
        expires_at: asked.expires_at,
    });
    let answer = super::idempotency::submit(req, depot, &bytes, request(&caller, command)).await?;
    // Never handed back: the key itself is in the first reply only.
    match super::idempotency::outcome(depot, answer.outcome)? {
        // The key is in this reply only: no cache keeps it, and a remembered reply (an
        // idempotency key's retry) shows `key: null`.
        (
            Outcome::KeyIssued {
                id,
                created_at,
                expires_at,
                ..
            },
            replayed,
        ) => Ok(super::idempotency::mark(
            Reply::json(
                StatusCode::CREATED,
                &json!({
                    "ok": true, "id": id, "key": (!replayed).then_some(key), "label": asked.label,
                    "createdAt": created_at, "access": asked.access.as_str(), "expiresAt": expires_at,
                }),
            ),
            replayed,
        )
        .with_header(
            salvo::http::header::CACHE_CONTROL,
            salvo::http::HeaderValue::from_static("no-store"),
        )),
        (other, _) => Err(ApiError::Write(write_model::WriteError::Internal(format!(
            "unexpected {other:?}"
        )))),
    }
}

/// What `POST /keys` asks for: `{label?, access?, expiresAt?}`.
struct KeyAsked {
    label: Option<String>,
    access: KeyAccess,
    expires_at: Expiry,
}

impl KeyAsked {
    /// The body is optional: empty, `null` and `{}` all ask for a full key with no label
    /// and the caller's expiry (never, from a key that never expires). `expiresAt: null`
    /// asks for never in so many words. The command refuses an `expiresAt` in the past, and
    /// one later than the caller's own (422).
    fn parse(bytes: &[u8], name_chars: usize) -> Result<KeyAsked, ApiError> {
        let mut asked = KeyAsked {
            label: None,
            access: KeyAccess::Full,
            expires_at: Expiry::Unsaid,
        };
        if bytes.iter().all(u8::is_ascii_whitespace) || bytes.trim_ascii() == b"null" {
            return Ok(asked);
        }
        let body = Body::parse(bytes, &["label", "access", "expiresAt"])?;
        asked.label = body
            .after::<Option<String>>("label")?
            .flatten()
            .map(|l| checks::trim_to(&l, name_chars));
        if let Some(access) = body.after::<Option<String>>("access")?.flatten() {
            asked.access = KeyAccess::parse(&access).ok_or_else(|| {
                WriteError::invalid("access", "`access` is `full`, `read` or `calendar`")
            })?;
        }
        asked.expires_at = match body.after::<Option<i64>>("expiresAt")? {
            None => Expiry::Unsaid,
            Some(None) => Expiry::Never,
            Some(Some(at)) => Expiry::At(at),
        };
        Ok(asked)
    }
}

/// Revokes a key of the caller's account.
///
/// The account keeps a working key, a working full key, and a full key that never expires if
/// it had one (else it would lock itself out when the others expire): revoking such a last
/// one answers 422 naming `id`.
#[endpoint(tags("account"), security(("bearer" = [])), parameters(("id" = String, Path, description = "The record's id")), responses(schema::WriteErrors, (status_code = 200, description = "Success", body = schema::KeyRevoked)))]
pub async fn revoke_key(req: &mut Request, depot: &mut Depot) -> Result<Reply, ApiError> {
    let key_id = KeyId::named(id_param(req));
    let command = Command::RevokeKey(RevokeKey { key_id });
    write_without_body(req, depot, command).await
}

#[endpoint(tags("account"), security(("bearer" = [])), responses(schema::WriteErrors, (status_code = 200, description = "Success", body = schema::UndoReply)))]
pub async fn undo(req: &mut Request, depot: &mut Depot) -> Result<Reply, ApiError> {
    write_without_body(req, depot, Command::Undo).await
}

#[endpoint(tags("account"), security(("bearer" = [])), responses(schema::ReadErrors, (status_code = 200, description = "Success", body = schema::Usage)))]
pub async fn usage(req: &mut Request, depot: &mut Depot) -> Result<Reply, ApiError> {
    no_query(req)?;
    let (state, caller) = (state(depot), caller(depot));
    let account = caller.account.clone();
    let (used, purgeable) = from_store(&state, move |read| read.storage(&account)).await?;
    let standing = state
        .allowances
        .standing(&caller.key_id, write_model::clock::wall_ms());
    Ok(Reply::json(
        StatusCode::OK,
        &json!({
            "ok": true,
            "used": used,
            "limit": state.limits.storage_bytes,
            "purgeable": purgeable,
            "reads": {"used": standing.reads_used, "limit": state.allowances.reads_per_day()},
            "writes": {"used": standing.writes_used, "limit": state.allowances.writes_per_day()},
            "resetsAt": standing.resets_at,
        }),
    ))
}
