//! The recycle bin: every DELETE (and every card created deleted) is one entry; the window
//! keeps the account's latest entries and destroys the oldest beyond it at once. Deleted
//! projects and columns leave a marker for good, so a client that syncs late still learns.

use rusqlite::{OptionalExtension, params};

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

/// What destroying entries gave back.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Destroyed {
    pub cards: usize,
    pub bytes: u64,
}

/// Destroys every record of a bin entry and the entry itself.
pub fn destroy_entry(ctx: &mut Ctx<'_>, entry: &str) -> Result<Destroyed, WriteError> {
    let rows: Vec<(String, i64, String, Option<i64>, i64)> = {
        let mut stmt = ctx.conn.prepare_cached(store::ENTRY_ROWS)?;
        let mapped = stmt.query_map(params![ctx.account, entry], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })?;
        mapped.collect::<Result<_, _>>()?
    };
    let (stamp, _) = ctx.stamp()?;
    let mut destroyed = Destroyed::default();
    for (id, kind, project_id, deleted_at, bytes) in &rows {
        destroyed.bytes += *bytes as u64;
        let kind = Kind::from_i64(*kind).unwrap_or(Kind::Task);
        if kind == Kind::Task {
            destroyed.cards += 1;
        } else {
            ctx.conn
                .prepare_cached(
                    "INSERT OR REPLACE INTO markers (account, id, kind, project_id, deleted_at) VALUES (?1, ?2, ?3, ?4, ?5)",
                )?
                .execute(params![ctx.account, id, kind as i64, project_id, deleted_at.unwrap_or(stamp)])?;
        }
        ctx.destroy(kind, id)?;
    }
    ctx.conn
        .prepare_cached("DELETE FROM bin WHERE account = ?1 AND id = ?2")?
        .execute(params![ctx.account, entry])?;
    Ok(destroyed)
}

/// Destroys every entry of the bin now.
pub fn purge(ctx: &mut Ctx<'_>) -> Result<Destroyed, WriteError> {
    let entries: Vec<String> = {
        let mut stmt = ctx
            .conn
            .prepare_cached("SELECT id FROM bin WHERE account = ?1 ORDER BY seq")?;
        let rows = stmt.query_map(params![ctx.account], |r| r.get(0))?;
        rows.collect::<Result<_, _>>()?
    };
    let mut total = Destroyed::default();
    for entry in entries {
        let d = destroy_entry(ctx, &entry)?;
        total.cards += d.cards;
        total.bytes += d.bytes;
    }
    Ok(total)
}

/// The entry a binned record heads, if it heads one.
pub fn entry_headed_by(ctx: &Ctx<'_>, id: &str) -> Result<Option<String>, WriteError> {
    Ok(ctx
        .conn
        .prepare_cached("SELECT id FROM bin WHERE account = ?1 AND head = ?2")?
        .query_row(params![ctx.account, id], |r| r.get(0))
        .optional()?)
}

/// Brings every record of an entry back, stamped anew, after checking it can land.
pub fn restore(ctx: &mut Ctx<'_>, entry: &str) -> Result<usize, WriteError> {
    let records: Vec<Record> = {
        let mut stmt = ctx.conn.prepare_cached(store::ENTRY_BODIES)?;
        let rows = stmt.query_map(params![ctx.account, entry], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (kind, body) = row?;
            out.push(match Kind::from_i64(kind) {
                Some(Kind::Project) => Record::Project(serde_json::from_str(&body)?),
                Some(Kind::Column) => Record::Column(serde_json::from_str(&body)?),
                _ => Record::Task(serde_json::from_str(&body)?),
            });
        }
        out
    };
    if records.is_empty() {
        return Err(WriteError::NotFound);
    }
    let within = |id: &str| records.iter().any(|r| r.id() == id);
    let live = |ctx: &Ctx<'_>, kind: Kind, id: &str| -> Result<bool, WriteError> {
        store::is_live(ctx.conn, &ctx.account, kind, id)
    };
    for record in &records {
        match record {
            Record::Project(_) => {
                let projects = store::count_live_projects(ctx.conn, &ctx.account)?;
                if projects >= ctx.limits.projects_per_account {
                    return Err(WriteError::invalid(
                        "id",
                        "the account is at its project limit",
                    ));
                }
            }
            Record::Column(c) if !within(&c.project_id) => {
                if !live(ctx, Kind::Project, &c.project_id)? {
                    return Err(WriteError::invalid(
                        "projectId",
                        "the column's project is deleted",
                    ));
                }
                if store::count_live_in_project(
                    ctx.conn,
                    &ctx.account,
                    Kind::Column,
                    &c.project_id,
                )? >= ctx.limits.columns_per_project
                {
                    return Err(WriteError::invalid(
                        "projectId",
                        "the project is at its column limit",
                    ));
                }
            }
            Record::Task(t) => {
                if !within(&t.column_id) && !live(ctx, Kind::Column, &t.column_id)? {
                    return Err(WriteError::invalid(
                        "columnId",
                        "the card's column is deleted",
                    ));
                }
                if let Some(p) = &t.parent_id
                    && !within(p)
                    && !live(ctx, Kind::Task, p)?
                {
                    return Err(WriteError::invalid(
                        "parentId",
                        "the card's parent is deleted",
                    ));
                }
            }
            _ => {}
        }
    }
    let (stamp, rev) = ctx.stamp()?;
    let count = records.len();
    let mut projects_touched: Vec<String> = Vec::new();
    for record in records {
        let record = match record {
            Record::Project(mut p) => {
                p.updated_at = stamp;
                ctx.names_changed();
                Record::Project(p)
            }
            Record::Column(mut c) => {
                c.updated_at = stamp;
                projects_touched.push(c.project_id.clone());
                Record::Column(c)
            }
            Record::Task(mut t) => {
                t.cancelled_at = None;
                t.updated_at = stamp;
                t.rev = rev;
                projects_touched.push(t.project_id.clone());
                Record::Task(t)
            }
        };
        ctx.put_live(record)?;
    }
    ctx.conn
        .prepare_cached("DELETE FROM bin WHERE account = ?1 AND id = ?2")?
        .execute(params![ctx.account, entry])?;
    projects_touched.dedup();
    for p in projects_touched {
        ctx.touch_project(&p)?;
    }
    Ok(count)
}

/// One entry of the bin, as `GET /bin` lists it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BinEntry {
    pub id: String,
    pub kind: String,
    pub deleted_at: i64,
    pub label: String,
    pub count: i64,
}

/// The account's bin, newest first.
pub fn list(conn: &rusqlite::Connection, account: &str) -> Result<Vec<BinEntry>, WriteError> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, kind, deleted_at, label, count FROM bin WHERE account = ?1 ORDER BY seq DESC",
    )?;
    let rows = stmt.query_map(params![account], |r| {
        Ok(BinEntry {
            id: r.get(0)?,
            kind: r.get(1)?,
            deleted_at: r.get(2)?,
            label: r.get(3)?,
            count: r.get(4)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}
