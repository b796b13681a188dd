//! Accounts and keys: creating an account, issuing a key (its digest only), revoking one.

use rusqlite::{OptionalExtension, params};

use super::{Ctx, Outcome};
use crate::change::KeyChange;
use crate::clock::wall_ms;
use crate::error::WriteError;
use crate::ids::IdKind;

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

/// A record of a key, as the keys listing shows it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KeyRecord {
    pub id: String,
    pub label: Option<String>,
    pub prefix: String,
    pub created_at: i64,
    pub last_used_at: Option<i64>,
}

pub fn create_account(ctx: &mut Ctx<'_>) -> Result<Outcome, WriteError> {
    ctx.conn
        .prepare_cached(
            "INSERT INTO accounts (id, rev, last_stamp, created_at) VALUES (?1, 0, 0, ?2)",
        )?
        .execute(params![ctx.account, wall_ms()])?;
    Ok(Outcome::AccountCreated {
        id: ctx.account.clone(),
    })
}

fn account_exists(ctx: &Ctx<'_>) -> Result<bool, WriteError> {
    Ok(ctx
        .conn
        .prepare_cached("SELECT 1 FROM accounts WHERE id = ?1")?
        .exists(params![ctx.account])?)
}

pub fn issue_key(ctx: &mut Ctx<'_>, c: &IssueKey) -> Result<Outcome, WriteError> {
    if !account_exists(ctx)? {
        return Err(WriteError::invalid(
            "account",
            format!("no account `{}`", ctx.account),
        ));
    }
    let live: i64 = ctx
        .conn
        .prepare_cached("SELECT count(*) FROM keys WHERE account = ?1 AND revoked_at IS NULL")?
        .query_row(params![ctx.account], |r| r.get(0))?;
    if live as usize >= ctx.limits.keys_per_account {
        return Err(WriteError::invalid(
            "key",
            format!(
                "an account holds at most {} live keys",
                ctx.limits.keys_per_account
            ),
        ));
    }
    let id = IdKind::Key.generate();
    let created_at = wall_ms();
    ctx.conn
        .prepare_cached(
            "INSERT INTO keys (id, account, digest, label, prefix, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?
        .execute(params![id, ctx.account, c.digest, c.label, c.prefix, created_at])?;
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
    let row: Option<(String, Vec<u8>)> = ctx
        .conn
        .prepare_cached("SELECT account, digest FROM keys WHERE id = ?1 AND revoked_at IS NULL")?
        .query_row(params![c.key_id], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    let Some((account, digest)) = row.filter(|(a, _)| ctx.account.is_empty() || *a == ctx.account)
    else {
        return Err(WriteError::NotFound);
    };
    let live: i64 = ctx
        .conn
        .prepare_cached("SELECT count(*) FROM keys WHERE account = ?1 AND revoked_at IS NULL")?
        .query_row(params![account], |r| r.get(0))?;
    if live <= 1 {
        return Err(WriteError::invalid(
            "id",
            "the account's last key cannot be revoked",
        ));
    }
    ctx.conn
        .prepare_cached("UPDATE keys SET revoked_at = ?2 WHERE id = ?1")?
        .execute(params![c.key_id, wall_ms()])?;
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

/// The account's live keys, oldest first.
pub fn list_keys(conn: &rusqlite::Connection, account: &str) -> Result<Vec<KeyRecord>, WriteError> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, label, prefix, created_at, last_used_at FROM keys WHERE account = ?1 AND revoked_at IS NULL ORDER BY created_at, id",
    )?;
    let rows = stmt.query_map(params![account], |r| {
        Ok(KeyRecord {
            id: r.get(0)?,
            label: r.get(1)?,
            prefix: r.get(2)?,
            created_at: r.get(3)?,
            last_used_at: r.get(4)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Every live key's digest with its id and account, to fill the authentication cache.
pub fn live_key_digests(
    conn: &rusqlite::Connection,
) -> Result<Vec<(Vec<u8>, String, String)>, WriteError> {
    let mut stmt = conn.prepare("SELECT digest, id, account FROM keys WHERE revoked_at IS NULL")?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// One key's allowance counters as saved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowanceRow {
    pub key_id: String,
    pub resets_at: i64,
    pub reads: u64,
    pub writes: u64,
}

/// Saves allowance counters and last-use times, batched: no change record, no stamp.
pub fn save_usage(
    ctx: &mut Ctx<'_>,
    rows: &[AllowanceRow],
    last_used: &[(String, i64)],
) -> Result<Outcome, WriteError> {
    for r in rows {
        ctx.conn
            .prepare_cached("INSERT OR REPLACE INTO allowance (key_id, resets_at, reads, writes) VALUES (?1, ?2, ?3, ?4)")?
            .execute(params![r.key_id, r.resets_at, r.reads as i64, r.writes as i64])?;
    }
    for (key_id, at) in last_used {
        ctx.conn
            .prepare_cached(
                "UPDATE keys SET last_used_at = max(coalesce(last_used_at, 0), ?2) WHERE id = ?1",
            )?
            .execute(params![key_id, at])?;
    }
    Ok(Outcome::Saved)
}

/// Every saved allowance counter.
pub fn saved_allowances(conn: &rusqlite::Connection) -> Result<Vec<AllowanceRow>, WriteError> {
    let mut stmt = conn.prepare("SELECT key_id, resets_at, reads, writes FROM allowance")?;
    let rows = stmt.query_map([], |r| {
        Ok(AllowanceRow {
            key_id: r.get(0)?,
            resets_at: r.get(1)?,
            reads: r.get::<_, i64>(2)? as u64,
            writes: r.get::<_, i64>(3)? as u64,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}
