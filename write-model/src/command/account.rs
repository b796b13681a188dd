//! Accounts and keys: creating an account, issuing a key (its digest only), revoking one.

use super::{Ctx, Outcome};
use crate::change::KeyChange;
use crate::clock::wall_ms;
use crate::error::WriteError;
use crate::ids::IdKind;
use crate::store::{AllowanceRow, NewKey};

#[derive(Debug, Clone, PartialEq)]
pub struct IssueKey {
    /// HMAC-SHA256(pepper, key): the only form the key is stored in.
    pub digest: Vec<u8>,
    /// The first characters of the key, to tell keys apart in a list.
    pub prefix: String,
    pub label: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RevokeKey {
    pub key_id: String,
}

pub fn create_account(ctx: &mut Ctx<'_>) -> Result<Outcome, WriteError> {
    ctx.store.create_account(&ctx.account, wall_ms())?;
    Ok(Outcome::AccountCreated {
        id: ctx.account.clone(),
    })
}

pub fn issue_key(ctx: &mut Ctx<'_>, c: &IssueKey) -> Result<Outcome, WriteError> {
    if !ctx.store.account_exists(&ctx.account)? {
        return Err(WriteError::invalid(
            "account",
            format!("no account `{}`", ctx.account),
        ));
    }
    if ctx.store.live_key_count(&ctx.account)? >= ctx.limits.keys_per_account {
        return Err(WriteError::limit(
            "key",
            format!(
                "an account holds at most {} live keys",
                ctx.limits.keys_per_account
            ),
        ));
    }
    let id = IdKind::Key.generate();
    let created_at = wall_ms();
    ctx.store.insert_key(&NewKey {
        id: &id,
        account: &ctx.account,
        digest: &c.digest,
        label: c.label.as_deref(),
        prefix: &c.prefix,
        created_at,
    })?;
    ctx.key_change(KeyChange::Issued {
        id: id.clone(),
        account: ctx.account.clone(),
        digest: c.digest.clone(),
    });
    Ok(Outcome::KeyIssued {
        id,
        account: ctx.account.clone(),
        created_at,
    })
}

/// Revokes a key of the account (any account when `ctx.account` is empty: the CLI).
pub fn revoke_key(ctx: &mut Ctx<'_>, c: &RevokeKey) -> Result<Outcome, WriteError> {
    let row = ctx.store.live_key(&c.key_id)?;
    let Some((account, digest)) = row.filter(|(a, _)| ctx.account.is_empty() || *a == ctx.account)
    else {
        return Err(WriteError::NotFound);
    };
    // Two nodes revoking an account's last two keys at once must not both pass the check.
    ctx.lock_account(&account)?;
    if ctx.store.live_key_count(&account)? <= 1 {
        return Err(WriteError::invalid(
            "id",
            "the account's last key cannot be revoked",
        ));
    }
    ctx.store.revoke_key(&c.key_id, wall_ms())?;
    // A revoked key's undo steps go with it.
    crate::undo::forget(ctx, &c.key_id)?;
    ctx.key_change(KeyChange::Revoked {
        id: c.key_id.clone(),
        digest,
    });
    Ok(Outcome::KeyRevoked {
        id: c.key_id.clone(),
    })
}

/// Adds what keys used since the last save to their allowance counters (each node adds its
/// own share, so the counts hold across nodes), and saves last-use times; batched, with no
/// change record and no stamp.
pub fn save_usage(
    ctx: &mut Ctx<'_>,
    rows: &[AllowanceRow],
    last_used: &[(String, i64)],
) -> Result<Outcome, WriteError> {
    for r in rows {
        ctx.store.add_allowance(r)?;
    }
    for (key_id, at) in last_used {
        ctx.store.touch_key(key_id, *at)?;
    }
    Ok(Outcome::Saved)
}
