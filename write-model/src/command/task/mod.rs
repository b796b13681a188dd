//! Task commands: create (with tags, checklist and comments, so an exported card lands as it
//! left), update (moves, subtask rules, the completion cascade), delete with subtasks.

mod input;
mod recur;

pub use crate::field::{TASK_FIELDS, TaskFields, UPDATE_TASK_FIELDS as UPDATE_FIELDS};
pub use input::{CREATE_FIELDS, ChecklistInput, CommentInput, CreateTask, UpdateTask, read_update};

use super::place::{existing_or_conflict, top_position};
use super::{Ctx, Outcome};
use crate::command::bin;
use crate::error::WriteError;
use crate::field::FieldValue;
use crate::ids::{CommentId, ItemId, TagId, TaskId};
use crate::input::Input;
use crate::records::{ChecklistItem, Column, Comment, Kind, Record, Tag, Task};

fn column_missing() -> WriteError {
    WriteError::invalid("columnId", "`columnId` names no column of this account")
}

fn live_column(ctx: &mut Ctx<'_>, id: &str) -> Result<Column, WriteError> {
    match ctx.get::<Column>(id)? {
        Some(c) if c.bin_entry.is_none() => Ok(c.value),
        _ => Err(column_missing()),
    }
}

/// Checks that `parent_id` can be the parent of task `child` in `project_id`.
fn check_parent(
    ctx: &mut Ctx<'_>,
    parent_id: &str,
    child: Option<&str>,
    project_id: &str,
) -> Result<(), WriteError> {
    let bad = |why: &str| WriteError::invalid("parentId", why.to_owned());
    if Some(parent_id) == child {
        return Err(bad("a card cannot be its own parent"));
    }
    let parent = match ctx.get::<Task>(parent_id)? {
        Some(p) if p.bin_entry.is_none() => p.value,
        _ => return Err(bad("`parentId` names no card of this account")),
    };
    if parent.project_id != project_id {
        return Err(bad("a subtask lives in its parent's project"));
    }
    if parent.parent_id.is_some() {
        return Err(bad(
            "subtasks go one level deep: the parent is itself a subtask",
        ));
    }
    if let Some(child) = child
        && !ctx.store.live_subtasks(&ctx.account, child)?.is_empty()
    {
        return Err(bad("a card that has subtasks cannot become a subtask"));
    }
    Ok(())
}

/// Replaces a task's tags by texts, keeping the id of every tag whose text stays.
fn replace_tags(old: &[Tag], texts: &[String], ids: Option<&[TagId]>) -> Vec<Tag> {
    let mut out: Vec<Tag> = Vec::with_capacity(texts.len());
    for (i, text) in texts.iter().enumerate() {
        if out
            .iter()
            .any(|t| t.text.to_lowercase() == text.to_lowercase())
        {
            continue;
        }
        let id = ids
            .and_then(|ids| ids.get(i))
            .map(|id| id.as_str().to_owned())
            .or_else(|| old.iter().find(|t| t.text == *text).map(|t| t.id.clone()))
            .unwrap_or_else(|| TagId::generate().into_inner());
        out.push(Tag {
            id,
            text: text.clone(),
        });
    }
    out
}

pub fn create(ctx: &mut Ctx<'_>, c: &CreateTask) -> Result<Outcome, WriteError> {
    if let Some(id) = &c.id
        && let Some(existing) = ctx.get::<Task>(id.as_str())?
    {
        let same = existing.bin_entry.is_none() && c.matches(&existing.value, ctx.limits);
        let live = existing.bin_entry.is_none();
        return existing_or_conflict(same, Kind::Task, id.as_str(), live);
    }
    if let Some(id) = &c.id
        && ctx.store.id_in_use(&ctx.account, id.as_str())?
    {
        return existing_or_conflict(false, Kind::Task, id.as_str(), false);
    }
    let nested = c
        .tag_ids
        .iter()
        .flatten()
        .map(TagId::as_str)
        .chain(
            c.checklist
                .iter()
                .filter_map(|i| i.id.as_ref().map(ItemId::as_str)),
        )
        .chain(
            c.comments
                .iter()
                .filter_map(|m| m.id.as_ref().map(CommentId::as_str)),
        );
    for id in nested {
        if ctx.store.item_id_in_use(&ctx.account, id)? {
            return existing_or_conflict(false, Kind::Task, id, false);
        }
    }
    let f = &c.fields;
    let column_id = f
        .column_id
        .as_ref()
        .map(|i| i.after.to_stored())
        .unwrap_or_default();
    let column = live_column(ctx, &column_id)?;
    let parent_id = f.parent_id.as_ref().and_then(|i| i.after.to_stored());
    if let Some(p) = &parent_id {
        check_parent(ctx, p, None, &column.project_id)?;
    }
    let position = match &f.position {
        Some(p) => p.after.get(),
        None => top_position(ctx, Kind::Task, Some(&column_id))?,
    };
    // Refused before it writes when even its floor cannot fit (no rollback to undo).
    ctx.expect_room(c.least_bytes(ctx.limits))?;
    let (stamp, rev) = ctx.stamp()?;
    let texts = f
        .tags
        .as_ref()
        .map(|t| t.after.to_stored())
        .unwrap_or_default();
    let checklist = c
        .checklist_in_order(ctx.limits)
        .into_iter()
        .map(|(id, text, done)| ChecklistItem {
            id: id.unwrap_or_else(ItemId::generate).into_inner(),
            text,
            done,
        })
        .collect();
    let comments = c
        .comments
        .iter()
        .map(|m| Comment {
            id: m
                .id
                .clone()
                .unwrap_or_else(CommentId::generate)
                .into_inner(),
            text: m.text.clone(),
            created_at: m.created_at.unwrap_or(stamp),
        })
        .collect();
    let mut task = Task {
        id: c.id.clone().unwrap_or_else(TaskId::generate).into_inner(),
        project_id: column.project_id.clone(),
        column_id,
        priority: 4,
        parent_id,
        position,
        rev,
        updated_at: stamp,
        tags: replace_tags(&[], &texts, c.tag_ids.as_deref()),
        checklist,
        comments,
        ..Task::default()
    };
    f.apply(&mut task);
    recur::check(&task, false)?;
    if c.id.is_none() {
        ctx.fresh(&task.id);
    }
    let id = task.id.clone();
    let project_id = task.project_id.clone();
    let title = task.title.clone();
    if f.cancelled_at.as_ref().is_some_and(|i| i.after.is_some()) {
        // A card created deleted lands in the bin as an entry of its own.
        ctx.store.index_items(&ctx.account, None, &task)?;
        bin::delete_into_bin(ctx, "task", &id, &title, vec![Record::Task(task)])?;
    } else {
        ctx.put_task(None, task)?;
    }
    ctx.touch_project(&project_id)?;
    Ok(Outcome::Created {
        kind: Kind::Task,
        id,
    })
}

pub fn update(ctx: &mut Ctx<'_>, task: &TaskId, u: &UpdateTask) -> Result<Outcome, WriteError> {
    let id = task.as_str();
    let stored = ctx.get::<Task>(id)?.ok_or(WriteError::NotFound)?;
    let restoring = stored.bin_entry.is_some();
    if restoring && !matches!(&u.cancelled_at, Some(Input { after: None, .. })) {
        return Err(WriteError::NotFound);
    }
    let current = stored.value;
    if let Some(e) = u.conflict(&current) {
        return Err(e);
    }
    if restoring {
        // `cancelledAt: null` restores the bin entry this card heads, then the rest applies.
        let entry = bin::entry_headed_by(ctx, task)?.ok_or_else(|| {
            WriteError::invalid(
                "cancelledAt",
                "the card was deleted with its parent: restore the parent",
            )
        })?;
        bin::restore(ctx, &entry)?;
        let mut rest = u.clone();
        rest.cancelled_at = None;
        return update(ctx, task, &rest);
    }
    let deleting = u.cancelled_at.as_ref().is_some_and(|i| i.after.is_some());
    let mut next = current.clone();
    if let Some(i) = &u.column_id
        && i.after.as_str() != current.column_id
    {
        let column = live_column(ctx, i.after.as_str())?;
        if column.project_id != current.project_id {
            let moving_subtask = current.parent_id.is_some()
                && u.parent_id.as_ref().is_none_or(|p| p.after.is_some());
            if moving_subtask || !ctx.store.live_subtasks(&ctx.account, id)?.is_empty() {
                return Err(WriteError::invalid(
                    "columnId",
                    "a move into another project would split a parent from its subtasks",
                ));
            }
        }
        next.column_id = column.id;
        next.project_id = column.project_id;
    }
    if let Some(Input {
        after: Some(parent),
        ..
    }) = &u.parent_id
        && Some(parent.as_str()) != current.parent_id.as_deref()
    {
        check_parent(ctx, parent.as_str(), Some(id), &next.project_id)?;
    }
    u.apply(&mut next);
    if let Some(tags) = &u.tags {
        next.tags = replace_tags(&current.tags, tags.after.texts(), None);
    }
    let cleared_deadline =
        u.repeat.is_none() && matches!(&u.deadline, Some(Input { after: None, .. }));
    recur::check(&next, cleared_deadline)?;
    if next.deadline != current.deadline || next.repeat != current.repeat {
        // A deadline or rule set by hand is the rhythm's new anchor.
        next.repeat_anchor = None;
    }
    if deleting {
        // `cancelledAt` set on a live card deletes it, as DELETE does, after the other fields.
        if next != current {
            ctx.put_task(Some(&current), next)?;
        }
        delete(ctx, task)?;
        return Ok(Outcome::Updated {
            kind: Kind::Task,
            id: id.to_owned(),
        });
    }
    if next == current {
        return Ok(Outcome::Updated {
            kind: Kind::Task,
            id: id.to_owned(),
        });
    }
    let (stamp, rev) = ctx.stamp()?;
    // Completing a parent completes its still-open subtasks with the same timestamp.
    if current.completed_at.is_none()
        && let Some(done) = next.completed_at
    {
        for mut sub in ctx.store.live_subtasks(&ctx.account, id)? {
            if sub.completed_at.is_none() {
                sub.completed_at = Some(done);
                sub.rev = rev;
                sub.updated_at = stamp;
                ctx.put_live(Record::Task(sub))?;
            }
        }
    }
    next.rev = rev;
    next.updated_at = stamp;
    let (old_project, new_project) = (current.project_id.clone(), next.project_id.clone());
    // Completing a repeating card makes its next occurrence in the same step.
    let finished =
        (current.completed_at.is_none() && next.completed_at.is_some()).then(|| next.clone());
    ctx.put_task(Some(&current), next)?;
    let occurrence = match finished {
        Some(card) => recur::next_occurrence(ctx, &card, stamp, rev)?,
        None => None,
    };
    ctx.touch_project(&new_project)?;
    if old_project != new_project {
        ctx.touch_project(&old_project)?;
    }
    Ok(match occurrence {
        Some(next) => Outcome::Recurred {
            id: id.to_owned(),
            next,
        },
        None => Outcome::Updated {
            kind: Kind::Task,
            id: id.to_owned(),
        },
    })
}

pub fn delete(ctx: &mut Ctx<'_>, id: &TaskId) -> Result<Outcome, WriteError> {
    ctx.deleting(|ctx| delete_with_subtasks(ctx, id.as_str()))
}

fn delete_with_subtasks(ctx: &mut Ctx<'_>, id: &str) -> Result<Outcome, WriteError> {
    let task: Task = ctx.get_live(id)?;
    let subtasks = ctx.store.live_subtasks(&ctx.account, id)?;
    let project_id = task.project_id.clone();
    let label = task.title.clone();
    let mut records = vec![Record::Task(task)];
    records.extend(subtasks.into_iter().map(Record::Task));
    let count = records.len();
    bin::delete_into_bin(ctx, "task", id, &label, records)?;
    ctx.touch_project(&project_id)?;
    Ok(Outcome::Deleted {
        id: id.to_owned(),
        count,
    })
}
