//! The store's reads outside the writer: a whole account streamed to the read model from
//! one read transaction, and the listings the interface shows (keys, bin, storage).

use rusqlite::{Connection, OptionalExtension, params};

use crate::error::WriteError;
use crate::records::Kind;
use crate::store::Engine;
use crate::store::{
    AllowanceRow, BinEntry, KeyAccess, KeyRecord, LiveKey, Loaded, MarkerRow, ProjectName, loaded,
};

/// The bytes the account's bin holds (the write transaction's storage count reads it too).
pub(super) const BINNED_BYTES: &str = "SELECT coalesce(sum(length(CAST(body AS BLOB))), 0) FROM records INDEXED BY records_by_bin_entry WHERE account = ?1 AND bin_entry IS NOT NULL";

fn kind(k: i64) -> Result<Kind, WriteError> {
    Kind::from_i64(k).ok_or_else(|| WriteError::Internal(format!("unknown record kind {k}")))
}

/// Streams a whole account's rows to `each`, in no particular order, without holding them
/// all at once; answers the account's `(rev, last_stamp)`, or `None` if it does not exist.
pub(super) fn load_account(
    conn: &Connection,
    account: &str,
    each: &mut dyn FnMut(Loaded),
) -> Result<Option<(i64, i64)>, WriteError> {
    // One read transaction: the rows and the markers come from the same snapshot.
    let tx = conn.unchecked_transaction().db()?;
    let Some(counters) = tx
        .prepare_cached("SELECT rev, last_stamp FROM accounts WHERE id = ?1")
        .db()?
        .query_row(params![account], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()
        .db()?
    else {
        return Ok(None);
    };
    let mut stmt = tx
        .prepare_cached("SELECT kind, body, bin_entry, deleted_at FROM records WHERE account = ?1")
        .db()?;
    let mut rows = stmt.query(params![account]).db()?;
    while let Some(r) = rows.next().db()? {
        let body = r
            .get_ref(1)
            .db()?
            .as_str()
            .map_err(rusqlite::Error::from)
            .db()?;
        each(loaded(
            kind(r.get(0).db()?)?,
            body,
            r.get(2).db()?,
            r.get(3).db()?,
        )?);
    }
    drop(rows);
    let mut stmt = tx
        .prepare_cached("SELECT id, kind, project_id, deleted_at FROM markers WHERE account = ?1")
        .db()?;
    let mut rows = stmt.query(params![account]).db()?;
    while let Some(r) = rows.next().db()? {
        each(Loaded::Marker(MarkerRow {
            id: r.get(0).db()?,
            kind: kind(r.get(1).db()?)?,
            project_id: r.get(2).db()?,
            deleted_at: r.get(3).db()?,
        }));
    }
    Ok(Some(counters))
}

pub(super) fn last_stamp(conn: &Connection, account: &str) -> Result<i64, WriteError> {
    Ok(conn
        .prepare_cached("SELECT last_stamp FROM accounts WHERE id = ?1")
        .db()?
        .query_row(params![account], |r| r.get(0))
        .optional()
        .db()?
        .unwrap_or(0))
}

pub(super) fn account_ids(conn: &Connection) -> Result<Vec<String>, WriteError> {
    let mut stmt = conn
        .prepare_cached("SELECT id FROM accounts ORDER BY created_at, id")
        .db()?;
    let rows = stmt.query_map([], |r| r.get::<_, String>(0)).db()?;
    rows.collect::<Result<_, _>>().db()
}

pub(super) fn account_exists(conn: &Connection, account: &str) -> Result<bool, WriteError> {
    conn.prepare_cached("SELECT 1 FROM accounts WHERE id = ?1")
        .db()?
        .exists(params![account])
        .db()
}

pub(super) fn list_keys(conn: &Connection, account: &str) -> Result<Vec<KeyRecord>, WriteError> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT id, label, prefix, created_at, last_used_at, access, expires_at FROM keys
         WHERE account = ?1 AND revoked_at IS NULL ORDER BY created_at, id",
        )
        .db()?;
    let rows = stmt
        .query_map(params![account], |r| {
            Ok(KeyRecord {
                id: r.get(0)?,
                label: r.get(1)?,
                prefix: r.get(2)?,
                created_at: r.get(3)?,
                last_used_at: r.get(4)?,
                access: access_of(&r.get::<_, String>(5)?),
                expires_at: r.get(6)?,
            })
        })
        .db()?;
    rows.collect::<Result<_, _>>().db()
}

pub(super) fn live_keys(conn: &Connection) -> Result<Vec<LiveKey>, WriteError> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT digest, id, account, access, expires_at FROM keys WHERE revoked_at IS NULL",
        )
        .db()?;
    let rows = stmt.query_map([], live_key_row).db()?;
    rows.collect::<Result<_, _>>().db()
}

/// A key's row as `SELECT digest, id, account, access, expires_at` reads it.
pub(super) fn live_key_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<LiveKey> {
    Ok(LiveKey {
        digest: r.get(0)?,
        id: r.get(1)?,
        account: r.get(2)?,
        access: access_of(&r.get::<_, String>(3)?),
        expires_at: r.get(4)?,
    })
}

/// A stored access: anything but `read` is full, as every key was before keys had one.
fn access_of(stored: &str) -> KeyAccess {
    KeyAccess::parse(stored).unwrap_or(KeyAccess::Full)
}

pub(super) fn holds_keys(conn: &Connection) -> Result<bool, WriteError> {
    conn.prepare_cached("SELECT 1 FROM keys LIMIT 1")
        .db()?
        .exists([])
        .db()
}

pub(super) fn saved_allowances(conn: &Connection) -> Result<Vec<AllowanceRow>, WriteError> {
    let mut stmt = conn
        .prepare_cached("SELECT key_id, resets_at, reads, writes FROM allowance")
        .db()?;
    let rows = stmt
        .query_map([], |r| {
            Ok(AllowanceRow {
                key_id: r.get(0)?,
                resets_at: r.get(1)?,
                reads: r.get::<_, i64>(2)? as u64,
                writes: r.get::<_, i64>(3)? as u64,
            })
        })
        .db()?;
    rows.collect::<Result<_, _>>().db()
}

pub(super) fn list_bin(conn: &Connection, account: &str) -> Result<Vec<BinEntry>, WriteError> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, kind, deleted_at, label, count FROM bin WHERE account = ?1 ORDER BY seq DESC",
    ).db()?;
    let rows = stmt
        .query_map(params![account], |r| {
            Ok(BinEntry {
                id: r.get(0)?,
                kind: r.get(1)?,
                deleted_at: r.get(2)?,
                label: r.get(3)?,
                count: r.get(4)?,
            })
        })
        .db()?;
    rows.collect::<Result<_, _>>().db()
}

pub(super) fn storage(conn: &Connection, account: &str) -> Result<(u64, u64), WriteError> {
    let used: i64 = conn
        .prepare_cached("SELECT coalesce(max(stored_bytes), 0) FROM accounts WHERE id = ?1")
        .db()?
        .query_row(params![account], |r| r.get(0))
        .db()?;
    let binned: i64 = conn
        .prepare_cached(BINNED_BYTES)
        .db()?
        .query_row(params![account], |r| r.get(0))
        .db()?;
    Ok((used as u64, binned as u64))
}

pub(super) fn project_names(conn: &Connection) -> Result<Vec<ProjectName>, WriteError> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT account, id, json_extract(body, '$.name') FROM records
         WHERE kind = 0 AND bin_entry IS NULL",
        )
        .db()?;
    let rows = stmt
        .query_map([], |r| {
            Ok(ProjectName {
                account: r.get(0)?,
                id: r.get(1)?,
                name: r.get(2)?,
            })
        })
        .db()?;
    rows.collect::<Result<_, _>>().db()
}

pub(super) fn meta(conn: &Connection, name: &str) -> Result<Option<Vec<u8>>, WriteError> {
    conn.prepare_cached("SELECT value FROM meta WHERE name = ?1")
        .db()?
        .query_row(params![name], |r| r.get(0))
        .optional()
        .db()
}
