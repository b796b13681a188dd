//! Undo: each key's own last steps (one request is one step), saved in the same transaction
//! as their write. A step records, per record it wrote, the fields it changed with their
//! values before and after (a created record: all of it, after); undoing puts back the
//! fields it wrote only while every one still holds what it wrote.

mod step;

use std::borrow::Cow;

use serde_json::{Map, Value};

use step::{Head, Step, StoredWrite, UNTRACKED, Wrote, written_only, wrote_json};

use crate::change::RecordChange;
use crate::command::Ctx;
use crate::command::bin;
use crate::error::WriteError;
use crate::ids::BinEntryId;
use crate::outcome::Outcome;
use crate::records::{Column, Kind, Project, Record, Task};

/// Whether two states of a record differ only in the fields every write moves.
fn same_but_stamp(before: &Record, after: &Record) -> bool {
    match (before, after) {
        (Record::Project(b), Record::Project(a)) => {
            Project {
                updated_at: a.updated_at,
                ..b.clone()
            } == *a
        }
        (Record::Column(b), Record::Column(a)) => {
            Column {
                updated_at: a.updated_at,
                ..b.clone()
            } == *a
        }
        (Record::Task(b), Record::Task(a)) => {
            Task {
                updated_at: a.updated_at,
                rev: a.rev,
                ..b.clone()
            } == *a
        }
        _ => false,
    }
}

fn kind_of(id: &str) -> Kind {
    match id.get(..2) {
        Some("b_") => Kind::Project,
        Some("c_") => Kind::Column,
        _ => Kind::Task,
    }
}

fn head_of(outcome: &Outcome) -> Option<Head> {
    let (kind, id) = match outcome {
        Outcome::Created { kind, id } | Outcome::Updated { kind, id } => (*kind, id.clone()),
        Outcome::Recurred { id, .. } => (Kind::Task, id.clone()),
        Outcome::Deleted { id, .. } => (kind_of(id), id.clone()),
        Outcome::ItemsAdded { task_id, .. } | Outcome::ItemUpdated { task_id, .. } => {
            (Kind::Task, task_id.clone())
        }
        Outcome::BatchCreated { ids, .. } => (Kind::Task, ids.first()?.clone()),
        _ => return None,
    };
    Some(Head {
        kind: kind as i64,
        id,
    })
}

fn to_map(record: &Record) -> Map<String, Value> {
    let value = match record {
        Record::Project(p) => serde_json::to_value(p),
        Record::Column(c) => serde_json::to_value(c),
        Record::Task(t) => serde_json::to_value(t),
    };
    match value {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    }
}

fn from_map(kind: i64, map: Map<String, Value>) -> Result<Record, WriteError> {
    let value = Value::Object(map);
    Ok(match Kind::from_i64(kind) {
        Some(Kind::Project) => Record::Project(serde_json::from_value(value)?),
        Some(Kind::Column) => Record::Column(serde_json::from_value(value)?),
        _ => Record::Task(serde_json::from_value(value)?),
    })
}

/// The fields a write changed (tracked ones only).
fn written_fields<'a>(
    before: &'a Map<String, Value>,
    after: &'a Map<String, Value>,
) -> Vec<&'a String> {
    after
        .keys()
        .filter(|k| !UNTRACKED.contains(&k.as_str()) && before.get(*k) != after.get(*k))
        .collect()
}

/// Saves the step a successful request made, keeping the key's latest steps only.
pub fn record(ctx: &mut Ctx<'_>, key_id: &str, outcome: &Outcome) -> Result<(), WriteError> {
    let Some(head) = head_of(outcome) else {
        return Ok(());
    };
    // A restore from the bin is not a step (undoing it would destroy what came back).
    if ctx
        .changes_with_befores()
        .any(|(c, b)| matches!(c, RecordChange::Live(_)) && matches!(b, Some((_, Some(_)))))
    {
        return Ok(());
    }
    let step = match ctx.bin_entries().first() {
        Some(entry) => serde_json::to_string(&Step::Deleted {
            head,
            entry: entry.clone(),
        })?,
        None => {
            let mut records = Vec::new();
            for (change, before) in ctx.changes_with_befores() {
                let RecordChange::Live(after) = change else {
                    continue;
                };
                let before = match before {
                    Some((record, None)) => Some(record),
                    _ => None,
                };
                if before.is_some_and(|b| same_but_stamp(b, after)) {
                    continue; // only its stamp moved (a project whose card changed)
                }
                let (before_body, after_body) = ctx.stored_bodies(after.id());
                let after_body = after_body.ok_or_else(|| {
                    WriteError::Internal(format!("{} was written but has no row", after.id()))
                })?;
                let (before, after_body) = match before.and(before_body) {
                    Some(before_body) => {
                        let (was, now) = written_only(before_body, after_body)?;
                        (Some(Cow::Owned(was)), Cow::Owned(now))
                    }
                    None => (None, Cow::Borrowed(after_body)),
                };
                records.push(StoredWrite {
                    kind: after.kind() as i64,
                    id: after.id(),
                    before,
                    after: after_body,
                });
            }
            if records.is_empty() {
                return Ok(());
            }
            wrote_json(&head, &records)?
        }
    };
    // The writer's ledger knows the key's next number, and deletes the steps this one
    // pushes out of the history once per group (an `INSERT ... SELECT ... RETURNING`
    // reading the table it writes built a temporary table for each step).
    let seq = ctx.next_undo_seq(key_id)?;
    ctx.store.push_undo(key_id, seq, &ctx.account, &step)?;
    ctx.stepped(seq);
    Ok(())
}

/// Forgets a key's steps (the key was revoked).
pub fn forget(ctx: &mut Ctx<'_>, key_id: &str) -> Result<(), WriteError> {
    ctx.settle_steps(key_id)?;
    ctx.store.forget_undo(key_id)?;
    Ok(())
}

fn conflict(field: &str, current: Value) -> Outcome {
    Outcome::UndoConflict {
        field: field.to_owned(),
        current,
    }
}

/// Undoes the key's latest step. The step is dropped whether it lands or conflicts.
pub fn undo(ctx: &mut Ctx<'_>, key_id: &str) -> Result<Outcome, WriteError> {
    ctx.settle_steps(key_id)?;
    let row = ctx.store.latest_undo(key_id, &ctx.account)?;
    let Some((seq, step)) = row else {
        return Ok(Outcome::NothingToUndo);
    };
    ctx.store.delete_undo(key_id, seq)?;
    match serde_json::from_str::<Step>(&step)? {
        Step::Deleted { head, entry } => {
            if !ctx.store.bin_entry_exists(&ctx.account, &entry)? {
                return Ok(conflict("id", Value::Null));
            }
            bin::restore(ctx, &BinEntryId::named(entry))?;
            let field = if head.kind == Kind::Task as i64 {
                "cancelledAt"
            } else {
                "deletedAt"
            };
            Ok(undone(&head, vec![field.to_owned()]))
        }
        Step::Wrote { head, records } => undo_writes(ctx, head, records),
    }
}

fn undone(head: &Head, fields: Vec<String>) -> Outcome {
    let kind = Kind::from_i64(head.kind).unwrap_or(Kind::Task);
    Outcome::Undone {
        kind,
        id: head.id.clone(),
        fields,
    }
}

fn undo_writes(ctx: &mut Ctx<'_>, head: Head, records: Vec<Wrote>) -> Result<Outcome, WriteError> {
    let created: Vec<&str> = records
        .iter()
        .filter(|w| w.before.is_none())
        .map(|w| w.id.as_str())
        .collect();
    // First check every record still holds what the step wrote; nothing is written before.
    let mut currents = Vec::with_capacity(records.len());
    let mut maps = Vec::with_capacity(records.len());
    for w in &records {
        maps.push((w.before_map()?, w.after_map()?));
    }
    for (w, (before, after)) in records.iter().zip(&maps) {
        let current = match ctx.store.get_row(&ctx.account, &w.id)? {
            Some((record, row)) if row.bin.is_none() => to_map(&record),
            _ => return Ok(conflict("id", Value::Null)),
        };
        let fields: Vec<&String> = match before {
            None => after
                .keys()
                .filter(|k| !UNTRACKED.contains(&k.as_str()))
                .collect(),
            Some(before) => written_fields(before, after),
        };
        if let Some(moved) = fields
            .iter()
            .find(|f| current.get(f.as_str()) != after.get(f.as_str()))
        {
            return Ok(conflict(
                moved,
                current.get(moved.as_str()).cloned().unwrap_or(Value::Null),
            ));
        }
        if w.before.is_none() && has_other_children(ctx, w, &created)? {
            return Ok(conflict("id", Value::Object(current)));
        }
        currents.push(current);
    }
    let (stamp, rev) = ctx.stamp()?;
    let mut fields_restored: Vec<String> = Vec::new();
    let mut projects: Vec<String> = Vec::new();
    for ((w, current), (before, after)) in records.iter().zip(currents).zip(&maps) {
        let Some(before) = before else {
            let kind = Kind::from_i64(w.kind).unwrap_or(Kind::Task);
            if let Some(Value::String(p)) = current.get("projectId") {
                projects.push(p.clone());
            }
            ctx.destroy(kind, &w.id)?;
            if kind == Kind::Project {
                ctx.names_changed();
            }
            continue;
        };
        let mut next = current.clone();
        for f in written_fields(before, after) {
            next.insert(f.clone(), before.get(f).cloned().unwrap_or(Value::Null));
            if w.id == head.id && !fields_restored.contains(f) {
                fields_restored.push(f.clone());
            }
        }
        next.insert("updatedAt".into(), Value::from(stamp));
        if next.contains_key("rev") {
            next.insert("rev".into(), Value::from(rev));
        }
        let old = from_map(w.kind, current)?;
        let record = from_map(w.kind, next)?;
        match (&old, record) {
            (Record::Task(old), Record::Task(t)) => {
                projects.push(t.project_id.clone());
                projects.push(old.project_id.clone());
                ctx.put_task(Some(old), t)?;
            }
            (_, Record::Project(p)) => {
                ctx.names_changed();
                ctx.put_live(Record::Project(p))?;
            }
            (_, Record::Column(c)) => {
                projects.push(c.project_id.clone());
                ctx.put_live(Record::Column(c))?;
            }
            _ => {}
        }
    }
    projects.dedup();
    for p in projects {
        ctx.touch_project(&p)?;
    }
    Ok(undone(&head, fields_restored))
}

/// Whether a created record now holds live records that the step did not create.
fn has_other_children(ctx: &Ctx<'_>, w: &Wrote, created: &[&str]) -> Result<bool, WriteError> {
    let children: Vec<String> = match Kind::from_i64(w.kind) {
        Some(Kind::Project) => {
            let columns: Vec<crate::records::Column> =
                ctx.store.live_columns(&ctx.account, &w.id)?;
            let tasks: Vec<crate::records::Task> =
                ctx.store.live_project_tasks(&ctx.account, &w.id)?;
            columns
                .into_iter()
                .map(|c| c.id)
                .chain(tasks.into_iter().map(|t| t.id))
                .collect()
        }
        Some(Kind::Column) => ctx
            .store
            .live_column_tasks(&ctx.account, &w.id)?
            .into_iter()
            .map(|t| t.id)
            .collect(),
        _ => ctx
            .store
            .live_subtasks(&ctx.account, &w.id)?
            .into_iter()
            .map(|t| t.id)
            .collect(),
    };
    Ok(children.iter().any(|c| !created.contains(&c.as_str())))
}
