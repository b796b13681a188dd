//! The recycle bin: every DELETE (and every card created deleted) is one entry; the window
//! keeps the account's latest entries and destroys the oldest beyond it at once. Deleted
//! projects and columns leave a marker for good, so a client that syncs late still learns.

use rusqlite::{OptionalExtension, params};

use crate::change::RecordChange;
use crate::command::Ctx;
use crate::error::WriteError;
use crate::ids::IdKind;
use crate::records::{Kind, Record};
use crate::store;

/// Moves `records` (a head record and everything under it) into a new bin entry.
pub fn delete_into_bin(
    ctx: &mut Ctx<'_>,
    kind: &str,
    head: &str,
    label: &str,
    records: Vec<Record>,
) -> Result<String, WriteError> {
    let (stamp, rev) = ctx.stamp()?;
    let entry = IdKind::BinEntry.generate();
    let count = records.len();
    for record in records {
        let record = match record {
            Record::Task(mut t) => {
                t.cancelled_at = Some(stamp);
                t.rev = rev;
                t.updated_at = stamp;
                Record::Task(t)
            }
            Record::Column(mut c) => {
                c.updated_at = stamp;
                Record::Column(c)
            }
            Record::Project(mut p) => {
                p.updated_at = stamp;
                Record::Project(p)
            }
        };
        ctx.put_binned(record, &entry, stamp)?;
    }
    let seq: i64 = ctx
        .conn
        .prepare_cached("SELECT coalesce(max(seq), 0) + 1 FROM bin WHERE account = ?1")?
        .query_row(params![ctx.account], |r| r.get(0))?;
    ctx.conn
        .prepare_cached(
            "INSERT INTO bin (account, id, seq, kind, head, deleted_at, label, count) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )?
        .execute(params![ctx.account, entry, seq, kind, head, stamp, label, count as i64])?;
    enforce_window(ctx)?;
    Ok(entry)
}

/// Destroys the oldest entries beyond the window of recoverable deletions.
fn enforce_window(ctx: &mut Ctx<'_>) -> Result<(), WriteError> {
    loop {
        let entries: i64 = ctx
            .conn
            .prepare_cached("SELECT count(*) FROM bin WHERE account = ?1")?
            .query_row(params![ctx.account], |r| r.get(0))?;
        if entries as usize <= ctx.limits.recoverable_deletions {
            return Ok(());
        }
        let oldest: Option<String> = ctx
            .conn
            .prepare_cached("SELECT id FROM bin WHERE account = ?1 ORDER BY seq LIMIT 1")?
            .query_row(params![ctx.account], |r| r.get(0))
            .optional()?;
        match oldest {
            Some(entry) => {
                destroy_entry(ctx, &entry)?;
            }
            None => return Ok(()),
        }
    }
}

/// Destroys every record of a bin entry and the entry itself.
pub fn destroy_entry(ctx: &mut Ctx<'_>, entry: &str) -> Result<usize, WriteError> {
    let rows: Vec<(String, i64, String, Option<i64>)> = {
        let mut stmt = ctx.conn.prepare_cached(
            "SELECT id, kind, project_id, deleted_at FROM records WHERE account = ?1 AND bin_entry = ?2",
        )?;
        let mapped = stmt.query_map(params![ctx.account, entry], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })?;
        mapped.collect::<Result<_, _>>()?
    };
    let (stamp, _) = ctx.stamp()?;
    for (id, kind, project_id, deleted_at) in &rows {
        let kind = Kind::from_i64(*kind).unwrap_or(Kind::Task);
        if kind != Kind::Task {
            ctx.conn
                .prepare_cached(
                    "INSERT OR REPLACE INTO markers (account, id, kind, project_id, deleted_at) VALUES (?1, ?2, ?3, ?4, ?5)",
                )?
                .execute(params![ctx.account, id, kind as i64, project_id, deleted_at.unwrap_or(stamp)])?;
        }
        store::destroy(ctx.conn, &ctx.account, id)?;
        ctx.record_change(RecordChange::Destroyed {
            kind,
            id: id.clone(),
        });
    }
    ctx.conn
        .prepare_cached("DELETE FROM bin WHERE account = ?1 AND id = ?2")?
        .execute(params![ctx.account, entry])?;
    Ok(rows.len())
}
