//! Column commands: create, update, delete (with every card in the column, and subtasks of
//! those cards wherever they sit).

use super::place::{existing_or_conflict, top_position};
use super::{Ctx, Outcome};
use crate::command::bin;
use crate::error::WriteError;
pub use crate::field::{ColumnFields, UPDATE_COLUMN_FIELDS as UPDATE_FIELDS};
use crate::field::{FieldValue, Name};
use crate::ids::{ColumnId, ProjectId};
use crate::input::{Body, Input};
use crate::limits::Limits;
use crate::records::{Column, Kind, Project, Record, Task};

/// What a column's create accepts: its id and project, the writable fields, and `updatedAt`
/// (read-only: accepted and ignored, so a read can be sent back).
pub const CREATE_FIELDS: &[&str] = &crate::field::names::<{ UPDATE_FIELDS.len() + 3 }>([
    &["id", "projectId"],
    UPDATE_FIELDS,
    &["updatedAt"],
]);
/// A column given inside a project create (its `projectId` is ignored: it is the new
/// project's).
pub const NESTED_FIELDS: &[&str] = CREATE_FIELDS;

#[derive(Debug, Clone, PartialEq)]
pub struct CreateColumn {
    pub id: Option<ColumnId>,
    /// Ignored in a project create (the new project's).
    pub project_id: ProjectId,
    pub fields: ColumnFields,
}

pub type UpdateColumn = ColumnFields;

impl CreateColumn {
    /// A column given by its name alone (on project create).
    pub fn named(name: String, limits: &Limits) -> Result<Self, WriteError> {
        Ok(CreateColumn {
            id: None,
            project_id: ProjectId::default(),
            fields: ColumnFields {
                name: Some(Input::bare(Name::parse("name", name, limits)?)),
                ..ColumnFields::default()
            },
        })
    }

    pub fn from_body(
        body: &Body<'_>,
        project_id: ProjectId,
        limits: &Limits,
    ) -> Result<Self, WriteError> {
        let id = body
            .client_id()?
            .map(|id| ColumnId::parse(id, "id"))
            .transpose()?;
        let fields = ColumnFields::parse(body, limits)?;
        if fields.name.is_none() {
            return Err(WriteError::invalid("name", "`name` is required"));
        }
        Ok(CreateColumn {
            id,
            project_id,
            fields,
        })
    }

    /// `POST /columns`'s body (`command::parse` makes it a command).
    pub fn read(bytes: &[u8], limits: &Limits) -> Result<CreateColumn, WriteError> {
        let body = Body::parse(bytes, CREATE_FIELDS)?;
        let project_id: ProjectId = body
            .after::<String>("projectId")?
            .map(ProjectId::named)
            .ok_or_else(|| WriteError::invalid("projectId", "`projectId` is required"))?;
        CreateColumn::from_body(&body, project_id, limits)
    }

    pub fn build(&self, project_id: &ProjectId, position: f64, stamp: i64) -> Column {
        let mut column = Column {
            id: self
                .id
                .clone()
                .unwrap_or_else(ColumnId::generate)
                .into_inner(),
            project_id: project_id.as_str().to_owned(),
            position,
            updated_at: stamp,
            ..Column::default()
        };
        self.fields.apply(&mut column);
        column.position = position;
        column
    }

    /// Whether every field this create sends equals the column's.
    pub fn matches(&self, c: &Column) -> bool {
        self.id.as_ref().is_none_or(|id| *id == c.id) && self.fields.matches(c)
    }
}

/// `PATCH /columns/:id`'s body (`command::parse` makes it a command).
pub fn read_update(bytes: &[u8], limits: &Limits) -> Result<UpdateColumn, WriteError> {
    let body = Body::parse(bytes, UPDATE_FIELDS)?;
    ColumnFields::parse(&body, limits)
}

pub fn create(ctx: &mut Ctx<'_>, c: &CreateColumn) -> Result<Outcome, WriteError> {
    if let Some(id) = &c.id
        && let Some(existing) = ctx.get::<Column>(id.as_str())?
    {
        let same = existing.bin_entry.is_none()
            && c.project_id == existing.value.project_id
            && c.matches(&existing.value);
        let live = existing.bin_entry.is_none();
        return existing_or_conflict(same, Kind::Column, id.as_str(), live);
    }
    if let Some(id) = &c.id
        && ctx.store.id_in_use(&ctx.account, id.as_str())?
    {
        return existing_or_conflict(false, Kind::Column, id.as_str(), false);
    }
    let project_missing =
        || WriteError::invalid("projectId", "`projectId` names no project of this account");
    match ctx.get::<Project>(c.project_id.as_str())? {
        Some(p) if p.bin_entry.is_none() => {}
        _ => return Err(project_missing()),
    }
    let n = ctx
        .store
        .count_live_columns(&ctx.account, c.project_id.as_str())?;
    if n >= ctx.limits.columns_per_project {
        return Err(WriteError::limit(
            "projectId",
            format!(
                "a project holds at most {} columns",
                ctx.limits.columns_per_project
            ),
        ));
    }
    let position = match &c.fields.position {
        Some(p) => p.after.get(),
        None => top_position(ctx, Kind::Column, Some(c.project_id.as_str()))?,
    };
    // Refused before it writes when even its floor cannot fit (no rollback to undo).
    ctx.expect_room(c.least_bytes())?;
    let (stamp, _) = ctx.stamp()?;
    let column = c.build(&c.project_id, position, stamp);
    let id = column.id.clone();
    ctx.put_live(Record::Column(column))?;
    ctx.touch_project(c.project_id.as_str())?;
    Ok(Outcome::Created {
        kind: Kind::Column,
        id,
    })
}

pub fn update(ctx: &mut Ctx<'_>, id: &ColumnId, u: &UpdateColumn) -> Result<Outcome, WriteError> {
    let current: Column = ctx.get_live(id.as_str())?;
    if let Some(e) = u.conflict(&current) {
        return Err(e);
    }
    let mut next = current.clone();
    u.apply(&mut next);
    if next != current {
        let (stamp, _) = ctx.stamp()?;
        next.updated_at = stamp;
        let project_id = next.project_id.clone();
        ctx.put_live(Record::Column(next))?;
        ctx.touch_project(&project_id)?;
    }
    Ok(Outcome::Updated {
        kind: Kind::Column,
        id: id.as_str().to_owned(),
    })
}

pub fn delete(ctx: &mut Ctx<'_>, id: &ColumnId) -> Result<Outcome, WriteError> {
    ctx.deleting(|ctx| delete_with_cards(ctx, id.as_str()))
}

fn delete_with_cards(ctx: &mut Ctx<'_>, id: &str) -> Result<Outcome, WriteError> {
    let column: Column = ctx.get_live(id)?;
    let tasks = ctx.store.live_column_tasks(&ctx.account, id)?;
    let mut extra: Vec<Task> = Vec::new();
    for t in &tasks {
        for sub in ctx.store.live_subtasks(&ctx.account, &t.id)? {
            if sub.column_id != id {
                extra.push(sub);
            }
        }
    }
    let project_id = column.project_id.clone();
    let label = column.name.clone();
    let mut records = vec![Record::Column(column)];
    records.extend(tasks.into_iter().chain(extra).map(Record::Task));
    let count = records.len();
    bin::delete_into_bin(ctx, "column", id, &label, records)?;
    ctx.touch_project(&project_id)?;
    Ok(Outcome::Deleted {
        id: id.to_owned(),
        count,
    })
}
