//! Accounts and keys: creating an account, issuing a key (its digest only, its access and
//! its expiry), revoking one. A key never outranks the key that made it: a read key makes
//! nothing, and a key made by an expiring key expires no later.

use super::{Ctx, Outcome};
use crate::change::KeyChange;
use crate::clock::wall_ms;
use crate::error::WriteError;
use crate::ids::{IdKind, KeyId};
use crate::store::{AllowanceRow, KeyAccess, NewKey};

#[derive(Debug, Clone, PartialEq)]
pub struct IssueKey {
    /// HMAC-SHA256(pepper, key): the only form the key is stored in.
    pub digest: Vec<u8>,
    /// The first characters of the key, to tell keys apart in a list.
    pub prefix: String,
    pub label: Option<String>,
    pub access: KeyAccess,
    pub expires_at: Expiry,
}

/// When a new key stops working, as the request asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expiry {
    /// Not said: the issuing key's expiry (never, from the CLI or a key that never expires).
    Unsaid,
    /// Never, asked for in so many words (`null`).
    Never,
    /// At this moment (ms since the epoch); must be in the future.
    At(i64),
}

#[derive(Debug, Clone, PartialEq)]
pub struct RevokeKey {
    pub key_id: KeyId,
}

pub fn create_account(ctx: &mut Ctx<'_>) -> Result<Outcome, WriteError> {
    ctx.store.create_account(&ctx.account, wall_ms())?;
    Ok(Outcome::AccountCreated {
        id: ctx.account.clone(),
    })
}

/// Issues a key to the account; `parent` is the key that asked (`None`: the CLI), read from
/// the store so that two nodes agree on it.
pub fn issue_key(
    ctx: &mut Ctx<'_>,
    c: &IssueKey,
    parent: Option<&str>,
) -> Result<Outcome, WriteError> {
    if !ctx.store.account_exists(&ctx.account)? {
        return Err(WriteError::invalid(
            "account",
            format!("no account `{}`", ctx.account),
        ));
    }
    let now = wall_ms();
    let expires_at = expiry_under(ctx, c.expires_at, parent, now)?;
    if expires_at.is_some_and(|at| at <= now) {
        return Err(WriteError::invalid(
            "expiresAt",
            "`expiresAt` is in the past; give a moment to come (ms since the epoch)",
        ));
    }
    // An expired key keeps its place in the list until revoked, but not its slot.
    if ctx.store.key_counts(&ctx.account, now)?.usable >= ctx.limits.keys_per_account {
        return Err(WriteError::limit(
            "key",
            format!(
                "an account holds at most {} live keys",
                ctx.limits.keys_per_account
            ),
        ));
    }
    let id = IdKind::Key.generate();
    let created_at = now;
    ctx.store.insert_key(&NewKey {
        id: &id,
        account: &ctx.account,
        digest: &c.digest,
        label: c.label.as_deref(),
        prefix: &c.prefix,
        created_at,
        access: c.access,
        expires_at,
    })?;
    ctx.key_change(KeyChange::Issued {
        id: id.clone(),
        account: ctx.account.clone(),
        digest: c.digest.clone(),
        access: c.access,
        expires_at,
    });
    Ok(Outcome::KeyIssued {
        id,
        account: ctx.account.clone(),
        created_at,
        expires_at,
    })
}

/// The expiry a new key gets under the key that asks for it. From an expiring key, an
/// unsaid expiry is the parent's, and a later one or `null` (never) is refused rather than
/// silently cut: the caller asked for something its key cannot give. A read key makes no
/// key (the interface refuses it before this; the check here holds for every caller).
fn expiry_under(
    ctx: &Ctx<'_>,
    asked: Expiry,
    parent: Option<&str>,
    now: i64,
) -> Result<Option<i64>, WriteError> {
    let asked_at = match asked {
        Expiry::Unsaid | Expiry::Never => None,
        Expiry::At(at) => Some(at),
    };
    let Some(parent) = parent else {
        return Ok(asked_at);
    };
    let key = ctx
        .store
        .live_key(parent)?
        .filter(|k| k.account == ctx.account && k.expires_at.is_none_or(|at| at > now))
        .ok_or_else(|| {
            WriteError::invalid("key", "the key that sent this request no longer works")
        })?;
    if key.access != KeyAccess::Full {
        return Err(WriteError::invalid("access", "a read key issues no keys"));
    }
    let Some(limit) = key.expires_at else {
        return Ok(asked_at);
    };
    match asked {
        Expiry::Unsaid => Ok(Some(limit)),
        Expiry::At(at) if at <= limit => Ok(Some(at)),
        _ => Err(WriteError::invalid(
            "expiresAt",
            format!(
                "this key expires at {limit}, and a key it issues expires no later: give \
                 `expiresAt` at most {limit}, or leave it out to take {limit}"
            ),
        )),
    }
}

/// Revokes a key of the account (any account when `ctx.account` is empty: the CLI). The
/// account keeps a working key, a working full key if it had one, and a full key that never
/// expires if it had one (else it would lock itself out when the survivors expire): revoking
/// any such last one answers 422 naming `id`. An expired key can always be revoked (it
/// works no more).
pub fn revoke_key(ctx: &mut Ctx<'_>, c: &RevokeKey) -> Result<Outcome, WriteError> {
    let row = ctx.store.live_key(c.key_id.as_str())?;
    let Some(key) = row.filter(|k| ctx.account.is_empty() || k.account == ctx.account) else {
        return Err(WriteError::NotFound);
    };
    // Two nodes revoking an account's last two keys at once must not both pass the check.
    ctx.lock_account(&key.account)?;
    let now = wall_ms();
    if key.expires_at.is_none_or(|at| at > now) {
        let counts = ctx.store.key_counts(&key.account, now)?;
        if counts.usable <= 1 {
            return Err(WriteError::invalid(
                "id",
                "the account's last key cannot be revoked",
            ));
        }
        if key.access == KeyAccess::Full && counts.usable_full <= 1 {
            return Err(WriteError::invalid(
                "id",
                "the account's last full key cannot be revoked; issue another full key first",
            ));
        }
        if key.access == KeyAccess::Full && key.expires_at.is_none() && counts.lasting_full <= 1 {
            return Err(WriteError::invalid(
                "id",
                "the account's last full key that never expires cannot be revoked: the \
                 account would lock itself out when its other keys expire; issue another \
                 full key without `expiresAt` first (from this key, or with the CLI)",
            ));
        }
    }
    let digest = key.digest;
    ctx.store.revoke_key(c.key_id.as_str(), wall_ms())?;
    // A revoked key's undo steps go with it.
    crate::command::undo::forget(ctx, c.key_id.as_str())?;
    // Its idempotency keys go with it: a revoked key's retries never reach the writer.
    ctx.store
        .forget_remembered(&key.account, c.key_id.as_str())?;
    ctx.key_change(KeyChange::Revoked {
        id: c.key_id.as_str().to_owned(),
        digest,
    });
    Ok(Outcome::KeyRevoked {
        id: c.key_id.as_str().to_owned(),
    })
}

/// Adds what keys used since the last save to their allowance counters (each node adds its
/// own share, so the counts hold across nodes), and saves last-use times; batched, with no
/// change record and no stamp.
pub fn save_usage(
    ctx: &mut Ctx<'_>,
    rows: &[AllowanceRow],
    last_used: &[(KeyId, i64)],
) -> Result<Outcome, WriteError> {
    for r in rows {
        ctx.store.add_allowance(r)?;
    }
    for (key_id, at) in last_used {
        ctx.store.touch_key(key_id.as_str(), *at)?;
    }
    Ok(Outcome::Saved)
}
