//! The recycle bin: every DELETE (and every card created deleted) is one entry; the window
//! keeps the account's latest entries and destroys the oldest beyond it at once. Deleted
//! projects and columns leave a marker for good, so a client that syncs late still learns.

use crate::command::Ctx;
use crate::error::WriteError;
use crate::ids::{BinEntryId, IdKind, TaskId};
use crate::records::{Kind, Record};
use crate::store::{MarkerRow, NewBinEntry};

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
    ctx.store.add_bin_entry(
        &ctx.account,
        &NewBinEntry {
            id: &entry,
            kind,
            head,
            deleted_at: stamp,
            label,
            count,
        },
    )?;
    enforce_window(ctx)?;
    Ok(entry)
}

/// Destroys the oldest entries beyond the window of recoverable deletions.
fn enforce_window(ctx: &mut Ctx<'_>) -> Result<(), WriteError> {
    let len = ctx.store.bin_len(&ctx.account)?;
    let over = len.saturating_sub(ctx.limits.recoverable_deletions);
    if over == 0 {
        return Ok(());
    }
    let oldest = ctx.store.bin_entry_ids(&ctx.account)?;
    for entry in oldest.iter().take(over) {
        destroy_entry(ctx, entry)?;
    }
    Ok(())
}

/// What destroying entries gave back.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Destroyed {
    pub cards: usize,
    pub bytes: u64,
}

/// Destroys every record of a bin entry and the entry itself.
pub fn destroy_entry(ctx: &mut Ctx<'_>, entry: &str) -> Result<Destroyed, WriteError> {
    let rows = ctx.store.bin_entry_rows(&ctx.account, entry)?;
    let (stamp, _) = ctx.stamp()?;
    let mut destroyed = Destroyed::default();
    for row in rows {
        destroyed.bytes += row.bytes as u64;
        if row.kind == Kind::Task {
            destroyed.cards += 1;
        } else {
            let marker = MarkerRow {
                deleted_at: row.deleted_at.unwrap_or(stamp),
                id: row.id.clone(),
                kind: row.kind,
                project_id: row.project_id,
            };
            ctx.store.put_marker(&ctx.account, &marker)?;
        }
        ctx.destroy(row.kind, &row.id)?;
    }
    ctx.store.remove_bin_entry(&ctx.account, entry)?;
    Ok(destroyed)
}

/// Destroys every entry of the bin now.
pub fn purge(ctx: &mut Ctx<'_>) -> Result<Destroyed, WriteError> {
    let entries = ctx.store.bin_entry_ids(&ctx.account)?;
    let mut total = Destroyed::default();
    for entry in entries {
        let d = destroy_entry(ctx, &entry)?;
        total.cards += d.cards;
        total.bytes += d.bytes;
    }
    Ok(total)
}

/// The entry a binned record heads, if it heads one.
pub fn entry_headed_by(ctx: &Ctx<'_>, id: &TaskId) -> Result<Option<BinEntryId>, WriteError> {
    Ok(ctx
        .store
        .bin_entry_headed_by(&ctx.account, id.as_str())?
        .map(BinEntryId::named))
}

/// Brings every record of an entry back, stamped anew, after checking it can land.
pub fn restore(ctx: &mut Ctx<'_>, entry: &BinEntryId) -> Result<usize, WriteError> {
    let entry = entry.as_str();
    let records = ctx.store.bin_entry_records(&ctx.account, entry)?;
    if records.is_empty() {
        return Err(WriteError::NotFound);
    }
    let within = |id: &str| records.iter().any(|r| r.id() == id);
    let live = |ctx: &Ctx<'_>, kind: Kind, id: &str| -> Result<bool, WriteError> {
        ctx.store.is_live(&ctx.account, kind, id)
    };
    for record in &records {
        match record {
            Record::Project(_) => {
                let projects = ctx.store.count_live_projects(&ctx.account)?;
                if projects >= ctx.limits.projects_per_account {
                    return Err(WriteError::limit(
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
                if ctx.store.count_live_columns(&ctx.account, &c.project_id)?
                    >= ctx.limits.columns_per_project
                {
                    return Err(WriteError::limit(
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
    ctx.store.remove_bin_entry(&ctx.account, entry)?;
    projects_touched.dedup();
    for p in projects_touched {
        ctx.touch_project(&p)?;
    }
    Ok(count)
}
