//! A repeating card's next occurrence, made by the command that completes it, in the same
//! transaction and change set: the finished card stays as history, and a new card takes its
//! place right after it in its list, open, with the next deadline (see [`crate::repeat`]).
//!
//! What the occurrence copies: title, description, priority, effort, location, tags, deadline
//! time, `repeat`, the checklist with every item open, and the card's parent (a repeating
//! subtask recurs under the same parent). Comments stay with the finished card. Its subtasks
//! come back too, as Todoist does it: each live subtask is copied, open, under the occurrence,
//! right after the subtask it copies; a subtask's deadline moves by as many days as the
//! card's did (kept as it was when the card had none). The finished subtasks stay as
//! history beside the finished card.

use jiff::civil::Date;

use crate::command::Ctx;
use crate::error::WriteError;
use crate::ids::IdKind;
use crate::records::{ChecklistItem, Tag, Task};
use crate::repeat::{self, Basis};

/// The day a completion stamp falls on, in UTC (a deadline has no time zone).
fn day_of(ms: i64) -> Option<Date> {
    let at = jiff::Timestamp::from_millisecond(ms).ok()?;
    Some(at.to_zoned(jiff::tz::TimeZone::UTC).date())
}

fn date(s: Option<&str>) -> Option<Date> {
    s.and_then(|s| s.parse().ok())
}

/// Refuses a card whose `repeat` counts from a deadline it does not have: naming `deadline`
/// when the write cleared the deadline of such a card, `repeat` otherwise.
pub(super) fn check(task: &Task, cleared_deadline: bool) -> Result<(), WriteError> {
    match task.repeat {
        Some(r) if r.from == Basis::Deadline && task.deadline.is_none() => {
            Err(if cleared_deadline {
                WriteError::invalid(
                    "deadline",
                    "a card that repeats from its deadline keeps a deadline: clear `repeat` or set \
                 its `from` to `completion` first",
                )
            } else {
                WriteError::invalid(
                    "repeat",
                    "`repeat` from the deadline needs a deadline on the card (or `from: completion`)",
                )
            })
        }
        _ => Ok(()),
    }
}

/// A copy of `t`, open, with fresh ids for it, its tags and its checklist items.
fn open_copy(t: &Task, parent_id: Option<String>, stamp: i64, rev: i64) -> Task {
    Task {
        id: IdKind::Task.generate(),
        parent_id,
        completed_at: None,
        cancelled_at: None,
        rev,
        updated_at: stamp,
        tags: t
            .tags
            .iter()
            .map(|tag| Tag {
                id: IdKind::Tag.generate(),
                text: tag.text.clone(),
            })
            .collect(),
        checklist: t
            .checklist
            .iter()
            .map(|item| ChecklistItem {
                id: IdKind::ChecklistItem.generate(),
                text: item.text.clone(),
                done: false,
            })
            .collect(),
        comments: Vec::new(),
        ..t.clone()
    }
}

/// A position right after `t` in its list: halfway to the next card, or one past the last.
fn right_after(ctx: &mut Ctx<'_>, t: &Task) -> Result<f64, WriteError> {
    let next = ctx
        .store
        .live_column_tasks(&ctx.account, &t.column_id)?
        .into_iter()
        .filter(|o| o.id != t.id && o.position > t.position)
        .map(|o| o.position)
        .min_by(f64::total_cmp);
    Ok(match next {
        Some(q) => t.position + (q - t.position) / 2.0,
        None => t.position + 1.0,
    })
}

/// Makes the next occurrence of `finished`, a repeating card this command just completed
/// (already written, its subtasks completed with it), and its subtasks' copies. Returns the
/// occurrence's id, `None` when the card does not repeat. The storage limit is the
/// processor's exact check after the command, as for any create.
pub(super) fn next_occurrence(
    ctx: &mut Ctx<'_>,
    finished: &Task,
    stamp: i64,
    rev: i64,
) -> Result<Option<String>, WriteError> {
    let (Some(rule), Some(done)) = (finished.repeat, finished.completed_at) else {
        return Ok(None);
    };
    let completed = day_of(done).unwrap_or_else(|| day_of(stamp).unwrap_or_default());
    let deadline = date(finished.deadline.as_deref());
    let anchor = date(finished.repeat_anchor.as_deref());
    let next = repeat::next_deadline(rule, deadline, anchor, completed).ok_or_else(|| {
        WriteError::invalid("repeat", "the next deadline would fall after the year 9999")
    })?;
    let mut card = open_copy(finished, finished.parent_id.clone(), stamp, rev);
    card.position = right_after(ctx, finished)?;
    card.deadline = Some(next.deadline.to_string());
    card.repeat_anchor = next.anchor.map(|a| a.to_string());
    let id = card.id.clone();
    // The days the card's deadline moved, for its subtasks' deadlines.
    let moved = deadline.and_then(|d| d.until(next.deadline).ok());
    let subtasks = ctx.store.live_subtasks(&ctx.account, &finished.id)?;
    ctx.fresh(&id);
    ctx.put_task(None, card)?;
    for sub in subtasks {
        let mut copy = open_copy(&sub, Some(id.clone()), stamp, rev);
        copy.position = right_after(ctx, &sub)?;
        if let (Some(span), Some(d)) = (moved, date(sub.deadline.as_deref()))
            && let Ok(shifted) = d.checked_add(span)
        {
            copy.deadline = Some(shifted.to_string());
            copy.repeat_anchor = None;
        }
        ctx.fresh(&copy.id);
        ctx.put_task(None, copy)?;
    }
    Ok(Some(id))
}
