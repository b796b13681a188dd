//! Bulk writes: creating up to a batch of cards in one all-or-nothing step, and moving many
//! cards' positions at once (not guarded, not undoable).

use serde::Deserialize;
use serde_json::value::RawValue;

use super::place::{position, top_position};
use super::task::{self, CreateTask};
use super::{Ctx, Outcome, lists};
use crate::error::WriteError;
use crate::field::{FieldValue, Position};
use crate::ids::TaskId;
use crate::input::{Body, Input};
use crate::limits::Limits;
use crate::records::{Kind, Record, Task};

pub const BATCH_FIELDS: &[&str] = &["tasks"];
pub const POSITIONS_FIELDS: &[&str] = &["positions"];

/// Whether a `POST /tasks` body is the batch form (`{tasks: [...]}`).
pub fn is_batch(bytes: &[u8]) -> bool {
    #[derive(Deserialize)]
    struct Probe<'a> {
        #[serde(borrow)]
        tasks: Option<&'a RawValue>,
    }
    serde_json::from_slice::<Probe<'_>>(bytes).is_ok_and(|p| p.tasks.is_some())
}

/// A required array field, its entries left as raw JSON; past `max` entries it is refused
/// with `over` before the rest is read.
fn raw_array<'a>(
    body: &Body<'a>,
    field: &str,
    max: usize,
    over: impl FnOnce() -> WriteError,
) -> Result<Vec<&'a RawValue>, WriteError> {
    let raw = body
        .raw(field)
        .ok_or_else(|| WriteError::invalid(field, format!("`{field}` is required")))?;
    lists::capped(raw, field, max, over)
}

/// `POST /tasks`'s batch body (`command::parse` makes it a command).
pub fn read_batch(bytes: &[u8], limits: &Limits) -> Result<Vec<CreateTask>, WriteError> {
    let body = Body::parse(bytes, BATCH_FIELDS)?;
    let size = || format!("a batch holds 1 to {} tasks", limits.tasks_per_batch);
    let entries = raw_array(&body, "tasks", limits.tasks_per_batch, || {
        WriteError::limit("tasks", size())
    })?;
    if entries.is_empty() {
        return Err(WriteError::invalid("tasks", size()));
    }
    let creates = entries
        .into_iter()
        .enumerate()
        .map(|(i, raw)| {
            Body::from_raw(raw, task::CREATE_FIELDS)
                .and_then(|b| CreateTask::from_body(&b, limits))
                .map_err(|e| e.at_index(i))
        })
        .collect::<Result<Vec<CreateTask>, _>>()?;
    let mut seen = ahash::AHashSet::with_capacity(creates.len());
    for (i, c) in creates.iter().enumerate() {
        if let Some(id) = &c.id
            && !seen.insert(id.as_str())
        {
            return Err(WriteError::invalid(
                "id",
                format!("the id `{id}` is sent twice in the batch"),
            )
            .at_index(i));
        }
    }
    Ok(creates)
}

/// Creates every entry or none: entries without a position land above the column's cards,
/// in the order sent.
pub fn create_batch(ctx: &mut Ctx<'_>, entries: &[CreateTask]) -> Result<Outcome, WriteError> {
    // A batch that cannot fit is refused before it writes. An entry whose id names a card
    // already may be a retry that adds nothing; every other one adds at least its floor.
    let mut least = 0;
    for e in entries {
        let retry = match &e.id {
            Some(id) => ctx.get::<Task>(id.as_str())?.is_some(),
            None => false,
        };
        if !retry {
            least += e.least_bytes(ctx.limits);
        }
    }
    ctx.expect_room(least)?;
    let mut entries = entries.to_vec();
    let mut columns: Vec<(String, Vec<usize>)> = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        if e.fields.position.is_none() {
            let column = e
                .fields
                .column_id
                .as_ref()
                .map(|c| c.after.to_stored())
                .unwrap_or_default();
            match columns.iter_mut().find(|(c, _)| *c == column) {
                Some((_, idx)) => idx.push(i),
                None => columns.push((column, vec![i])),
            }
        }
    }
    for (column, idx) in columns {
        let top = top_position(ctx, Kind::Task, Some(&column))?;
        let k = idx.len();
        for (j, i) in idx.into_iter().enumerate() {
            let below_top = Position::from_finite(top - (k - 1 - j) as f64);
            entries[i].fields.position = Some(Input::bare(below_top));
        }
    }
    let mut ids = Vec::with_capacity(entries.len());
    let mut created = 0;
    for (i, entry) in entries.iter().enumerate() {
        match task::create(ctx, entry).map_err(|e| e.at_index(i))? {
            Outcome::Created { id, .. } => {
                created += 1;
                ids.push(id);
            }
            Outcome::Existing { id, .. } => ids.push(id),
            other => {
                return Err(WriteError::Internal(format!(
                    "unexpected outcome {other:?}"
                )));
            }
        }
    }
    let rev = if created > 0 {
        ctx.stamp()?.1
    } else {
        ctx.rev()?
    };
    Ok(Outcome::BatchCreated { created, rev, ids })
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PositionEntry {
    /// A card's id, as sent (an id naming no live card is passed over).
    pub id: TaskId,
    pub position: f64,
}

/// `PATCH /tasks/positions`'s body (`command::parse` makes it a command).
pub fn read_positions(bytes: &[u8], limits: &Limits) -> Result<Vec<PositionEntry>, WriteError> {
    let body = Body::parse(bytes, POSITIONS_FIELDS)?;
    let max = limits.positions_per_request;
    let raw = raw_array(&body, "positions", max, || {
        WriteError::limit("positions", format!("at most {max} cards per request"))
    })?;
    let entries = raw
        .into_iter()
        .enumerate()
        .map(|(i, r)| {
            serde_json::from_str::<PositionEntry>(r.get())
                .map_err(|_| {
                    WriteError::invalid(
                        "positions",
                        "each entry is `{id, position}` with a bare number (positions are not guarded)",
                    )
                    .at_index(i)
                })
                .and_then(|e| position("position", e.position).map(|_| e).map_err(|e| e.at_index(i)))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(entries)
}

/// Moves the cards the account holds; unknown ids are ignored, unmoved cards cost nothing.
pub fn set_positions(ctx: &mut Ctx<'_>, entries: &[PositionEntry]) -> Result<Outcome, WriteError> {
    let mut moved = 0;
    let mut projects: Vec<String> = Vec::new();
    for e in entries {
        let Some(stored) = ctx.get::<Task>(e.id.as_str())? else {
            continue;
        };
        if stored.bin_entry.is_some() || stored.value.position == e.position {
            continue;
        }
        let (stamp, rev) = ctx.stamp()?;
        let mut t = stored.value;
        t.position = e.position;
        t.rev = rev;
        t.updated_at = stamp;
        if !projects.contains(&t.project_id) {
            projects.push(t.project_id.clone());
        }
        ctx.put_live(Record::Task(t))?;
        moved += 1;
    }
    for p in projects {
        ctx.touch_project(&p)?;
    }
    Ok(Outcome::Positions {
        changed: moved > 0,
        moved,
    })
}
