//! The PostgreSQL store's reads outside the writer: a whole account from one snapshot, and
//! the listings the interface shows. Its rows out and in for `workboard copy` are in
//! `copy`.

use postgres::{Client, IsolationLevel};

use crate::error::WriteError;
use crate::records::Kind;
use crate::store::Engine;
use crate::store::shared::{Backlog, LoggedChange, ReadPoint};
use crate::store::{
    AllowanceRow, BinEntry, KeyAccess, KeyRecord, LiveKey, Loaded, MarkerRow, ProjectName,
    TicketRow, loaded,
};

fn kind(k: i64) -> Result<Kind, WriteError> {
    Kind::from_i64(k).ok_or_else(|| WriteError::Internal(format!("unknown record kind {k}")))
}

/// An account as loaded: its `(rev, last_stamp)` (`None`: no such account) and its rows.
pub(super) type LoadedAccount = (Option<(i64, i64)>, Vec<Loaded>);

/// A whole account's rows from one snapshot, with its counters.
pub(super) fn load_account(
    client: &mut Client,
    account: &str,
) -> Result<LoadedAccount, WriteError> {
    let mut tx = client
        .build_transaction()
        .isolation_level(IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .db()?;
    let Some(counters) = tx
        .query_opt(
            "SELECT rev, last_stamp FROM accounts WHERE id = $1",
            &[&account],
        )
        .db()?
    else {
        return Ok((None, Vec::new()));
    };
    let mut rows = Vec::new();
    for r in tx
        .query(
            "SELECT kind, body, bin_entry, deleted_at FROM records WHERE account = $1",
            &[&account],
        )
        .db()?
    {
        rows.push(loaded(
            kind(r.get(0))?,
            r.get::<_, &str>(1),
            r.get(2),
            r.get(3),
        )?);
    }
    for r in tx
        .query(
            "SELECT id, kind, project_id, deleted_at FROM markers WHERE account = $1",
            &[&account],
        )
        .db()?
    {
        rows.push(Loaded::Marker(MarkerRow {
            id: r.get(0),
            kind: kind(r.get(1))?,
            project_id: r.get(2),
            deleted_at: r.get(3),
        }));
    }
    tx.commit().db()?;
    Ok((Some((counters.get(0), counters.get(1))), rows))
}

/// The account's change sets after `rev`, from one snapshot: [`Backlog::Gone`] when the log
/// no longer holds every one of them.
pub(super) fn backlog(client: &mut Client, account: &str, rev: i64) -> Result<Backlog, WriteError> {
    let mut tx = client
        .build_transaction()
        .isolation_level(IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .db()?;
    let current: i64 = tx
        .query_opt("SELECT rev FROM accounts WHERE id = $1", &[&account])
        .db()?
        .map_or(0, |r| r.get(0));
    if current <= rev {
        return Ok(Backlog::Changes(Vec::new()));
    }
    let rows = tx
        .query(
            "SELECT rev, stamp, body FROM changes WHERE account = $1 AND rev > $2 ORDER BY rev",
            &[&account, &rev],
        )
        .db()?;
    tx.commit().db()?;
    let whole = rows.len() as i64 == current - rev
        && rows
            .iter()
            .enumerate()
            .all(|(i, r)| r.get::<_, i64>(0) == rev + 1 + i as i64);
    if !whole {
        return Ok(Backlog::Gone);
    }
    let mut changes = Vec::with_capacity(rows.len());
    for r in rows {
        let logged = LoggedChange {
            account: account.to_owned(),
            rev: r.get(0),
            stamp: r.get(1),
            body: r.get(2),
        };
        changes.push(logged.change_set()?);
    }
    Ok(Backlog::Changes(changes))
}

/// The live key with `digest`, if any.
pub(super) fn live_key_by_digest(
    client: &mut Client,
    digest: &[u8],
) -> Result<Option<LiveKey>, WriteError> {
    Ok(client
        .query_opt(
            "SELECT digest, id, account, access, expires_at FROM keys
             WHERE digest = $1 AND revoked_at IS NULL",
            &[&digest],
        )
        .db()?
        .map(|r| live_key_row(&r)))
}

/// A key's row as `SELECT digest, id, account, access, expires_at` reads it.
pub(super) fn live_key_row(r: &postgres::Row) -> LiveKey {
    LiveKey {
        digest: r.get(0),
        id: r.get(1),
        account: r.get(2),
        access: access_of(r.get(3)),
        expires_at: r.get(4),
    }
}

/// A stored access: anything but `read` is full, as every key was before keys had one.
fn access_of(stored: &str) -> KeyAccess {
    KeyAccess::parse(stored).unwrap_or(KeyAccess::Full)
}

/// The saved counters of `keys`.
pub(super) fn allowances(
    client: &mut Client,
    keys: &[String],
) -> Result<Vec<AllowanceRow>, WriteError> {
    Ok(client
        .query(
            "SELECT key_id, resets_at, reads, writes FROM allowance WHERE key_id = ANY($1)",
            &[&keys],
        )
        .db()?
        .iter()
        .map(|r| AllowanceRow {
            key_id: r.get(0),
            resets_at: r.get(1),
            reads: r.get::<_, i64>(2) as u64,
            writes: r.get::<_, i64>(3) as u64,
        })
        .collect())
}

/// Keeps a ticket; the expired ones go first (the table holds a minute of tickets).
pub(super) fn put_ticket(client: &mut Client, t: &TicketRow, now: i64) -> Result<(), WriteError> {
    client
        .execute("DELETE FROM tickets WHERE expires_at <= $1", &[&now])
        .db()?;
    client
        .execute(
            "INSERT INTO tickets (account, digest, key_id, expires_at) VALUES ($1, $2, $3, $4)",
            &[&t.account, &t.digest, &t.key_id, &t.expires_at],
        )
        .db()?;
    Ok(())
}

/// The ticket with `digest`; with `take`, deleted in the same statement, so that two nodes
/// redeeming it at once cannot both have it.
pub(super) fn ticket(
    client: &mut Client,
    digest: &[u8],
    take: bool,
) -> Result<Option<TicketRow>, WriteError> {
    let sql = match take {
        true => "DELETE FROM tickets WHERE digest = $1 RETURNING account, key_id, expires_at",
        false => "SELECT account, key_id, expires_at FROM tickets WHERE digest = $1",
    };
    Ok(client.query_opt(sql, &[&digest]).db()?.map(|r| TicketRow {
        account: r.get(0),
        digest: digest.to_vec(),
        key_id: r.get(1),
        expires_at: r.get(2),
    }))
}

/// The account's committed revision and whether the key is live. Asked before every read,
/// so in one round trip: a typed query is not prepared first (a plain `query` would be two).
pub(super) fn read_point(
    client: &mut Client,
    account: &str,
    key_id: &str,
) -> Result<ReadPoint, WriteError> {
    use postgres::types::Type;
    let row = client
        .query_typed_one(
            "SELECT (SELECT rev FROM accounts WHERE id = $1),
                    EXISTS (SELECT 1 FROM keys
                            WHERE account = $1 AND id = $2 AND revoked_at IS NULL)",
            &[(&account, Type::TEXT), (&key_id, Type::TEXT)],
        )
        .db()?;
    Ok(ReadPoint {
        rev: row.get::<_, Option<i64>>(0).unwrap_or(0),
        key_live: row.get(1),
    })
}

pub(super) fn last_stamp(client: &mut Client, account: &str) -> Result<i64, WriteError> {
    Ok(client
        .query_opt("SELECT last_stamp FROM accounts WHERE id = $1", &[&account])
        .db()?
        .map_or(0, |r| r.get(0)))
}

pub(super) fn account_ids(client: &mut Client) -> Result<Vec<String>, WriteError> {
    Ok(client
        .query("SELECT id FROM accounts ORDER BY created_at, id", &[])
        .db()?
        .iter()
        .map(|r| r.get(0))
        .collect())
}

pub(super) fn account_exists(client: &mut Client, account: &str) -> Result<bool, WriteError> {
    Ok(client
        .query_opt("SELECT 1 FROM accounts WHERE id = $1", &[&account])
        .db()?
        .is_some())
}

pub(super) fn list_keys(client: &mut Client, account: &str) -> Result<Vec<KeyRecord>, WriteError> {
    Ok(client
        .query(
            "SELECT id, label, prefix, created_at, last_used_at, access, expires_at FROM keys
             WHERE account = $1 AND revoked_at IS NULL ORDER BY created_at, id",
            &[&account],
        )
        .db()?
        .iter()
        .map(|r| KeyRecord {
            id: r.get(0),
            label: r.get(1),
            prefix: r.get(2),
            created_at: r.get(3),
            last_used_at: r.get(4),
            access: access_of(r.get(5)),
            expires_at: r.get(6),
        })
        .collect())
}

pub(super) fn live_keys(client: &mut Client) -> Result<Vec<LiveKey>, WriteError> {
    Ok(client
        .query(
            "SELECT digest, id, account, access, expires_at FROM keys WHERE revoked_at IS NULL",
            &[],
        )
        .db()?
        .iter()
        .map(live_key_row)
        .collect())
}

pub(super) fn holds_keys(client: &mut Client) -> Result<bool, WriteError> {
    Ok(client
        .query_opt("SELECT 1 FROM keys LIMIT 1", &[])
        .db()?
        .is_some())
}

pub(super) fn saved_allowances(client: &mut Client) -> Result<Vec<AllowanceRow>, WriteError> {
    Ok(client
        .query(
            "SELECT key_id, resets_at, reads, writes FROM allowance",
            &[],
        )
        .db()?
        .iter()
        .map(|r| AllowanceRow {
            key_id: r.get(0),
            resets_at: r.get(1),
            reads: r.get::<_, i64>(2) as u64,
            writes: r.get::<_, i64>(3) as u64,
        })
        .collect())
}

pub(super) fn list_bin(client: &mut Client, account: &str) -> Result<Vec<BinEntry>, WriteError> {
    Ok(client
        .query(
            "SELECT id, kind, deleted_at, label, count FROM bin WHERE account = $1 ORDER BY seq DESC",
            &[&account],
        ).db()?
        .iter()
        .map(|r| BinEntry {
            id: r.get(0),
            kind: r.get(1),
            deleted_at: r.get(2),
            label: r.get(3),
            count: r.get(4),
        })
        .collect())
}

pub(super) fn storage(client: &mut Client, account: &str) -> Result<(u64, u64), WriteError> {
    let used: i64 = client
        .query_opt(
            "SELECT stored_bytes FROM accounts WHERE id = $1",
            &[&account],
        )
        .db()?
        .map_or(0, |r| r.get(0));
    let binned: i64 = client
        .query_one(
            "SELECT coalesce(sum(octet_length(body)), 0)::bigint FROM records
             WHERE account = $1 AND bin_entry IS NOT NULL",
            &[&account],
        )
        .db()?
        .get(0);
    Ok((used as u64, binned as u64))
}

pub(super) fn project_names(client: &mut Client) -> Result<Vec<ProjectName>, WriteError> {
    Ok(client
        .query(
            "SELECT account, id, (body::json)->>'name' FROM records
             WHERE kind = 0 AND bin_entry IS NULL",
            &[],
        )
        .db()?
        .iter()
        .map(|r| ProjectName {
            account: r.get(0),
            id: r.get(1),
            name: r.get(2),
        })
        .collect())
}

pub(super) fn meta(client: &mut Client, name: &str) -> Result<Option<Vec<u8>>, WriteError> {
    Ok(client
        .query_opt("SELECT value FROM meta WHERE name = $1", &[&name])
        .db()?
        .map(|r| r.get(0)))
}
