//! Column commands: create, update, delete (with every card in the column, and subtasks of
//! those cards wherever they sit).

use super::project::set;
use super::{Command, Ctx, Outcome, existing_or_conflict, guard, position, top_position};
use crate::error::WriteError;
use crate::ids::IdKind;
use crate::input::{Body, Input};
use crate::limits::Limits;
use crate::records::{Column, Kind, Project, Record, Task};
use crate::{bin, values};

/// `updatedAt` is read-only: accepted and ignored, so a read can be sent back.
pub const CREATE_FIELDS: &[&str] = &[
    "id",
    "projectId",
    "name",
    "description",
    "position",
    "archivedAt",
    "updatedAt",
];
/// A column given inside a project create (its `projectId` is ignored: it is the new project's).
pub const NESTED_FIELDS: &[&str] = &[
    "id",
    "name",
    "description",
    "position",
    "archivedAt",
    "projectId",
    "updatedAt",
];
pub const UPDATE_FIELDS: &[&str] = &["name", "description", "position", "archivedAt"];

#[derive(Debug, Clone, PartialEq)]
pub struct CreateColumn {
    pub id: Option<String>,
    pub project_id: String,
    pub name: String,
    pub description: Option<String>,
    pub position: Option<f64>,
    pub archived_at: Option<Option<i64>>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct UpdateColumn {
    pub name: Option<Input<String>>,
    pub description: Option<Input<Option<String>>>,
    pub position: Option<Input<f64>>,
    pub archived_at: Option<Input<Option<i64>>>,
}

impl CreateColumn {
    pub fn new(
        id: Option<String>,
        project_id: String,
        name: &str,
        limits: &Limits,
    ) -> Result<Self, WriteError> {
        if let Some(id) = &id {
            IdKind::Column.check(id, "id")?;
        }
        Ok(CreateColumn {
            id,
            project_id,
            name: values::required_text("name", name, limits.name_chars)?,
            description: None,
            position: None,
            archived_at: None,
        })
    }

    pub fn from_body(
        body: &Body<'_>,
        project_id: String,
        limits: &Limits,
    ) -> Result<Self, WriteError> {
        let name: String = body
            .after("name")?
            .ok_or_else(|| WriteError::invalid("name", "`name` is required"))?;
        let mut c = CreateColumn::new(body.client_id()?, project_id, &name, limits)?;
        c.description = body
            .after::<Option<String>>("description")?
            .flatten()
            .map(|d| values::prose("description", d, limits.column_description_chars))
            .transpose()?;
        c.position = body
            .after("position")?
            .map(|p| position("position", p))
            .transpose()?;
        c.archived_at = body.after("archivedAt")?;
        Ok(c)
    }

    pub fn parse(bytes: &[u8], limits: &Limits) -> Result<Command, WriteError> {
        let body = Body::parse(bytes, CREATE_FIELDS)?;
        let project_id: String = body
            .after("projectId")?
            .ok_or_else(|| WriteError::invalid("projectId", "`projectId` is required"))?;
        Ok(Command::CreateColumn(CreateColumn::from_body(
            &body, project_id, limits,
        )?))
    }

    pub fn build(&self, project_id: &str, position: f64, stamp: i64) -> Column {
        Column {
            id: self.id.clone().unwrap_or_else(|| IdKind::Column.generate()),
            project_id: project_id.to_owned(),
            name: self.name.clone(),
            description: self.description.clone(),
            position,
            archived_at: self.archived_at.flatten(),
            updated_at: stamp,
        }
    }

    /// Whether every field this create sends equals the column's.
    pub fn matches(&self, c: &Column) -> bool {
        self.id.as_ref().is_none_or(|id| *id == c.id)
            && self.name == c.name
            && self
                .description
                .as_ref()
                .is_none_or(|d| Some(d) == c.description.as_ref())
            && self.position.is_none_or(|p| p == c.position)
            && self.archived_at.is_none_or(|a| a == c.archived_at)
    }
}

impl UpdateColumn {
    pub fn parse(id: String, bytes: &[u8], limits: &Limits) -> Result<Command, WriteError> {
        let body = Body::parse(bytes, UPDATE_FIELDS)?;
        Ok(Command::UpdateColumn(
            id,
            UpdateColumn {
                name: body
                    .input::<String>("name")?
                    .map(|i| i.try_map(|n| values::required_text("name", &n, limits.name_chars)))
                    .transpose()?,
                description: body
                    .input::<Option<String>>("description")?
                    .map(|i| {
                        i.try_map(|d| {
                            d.map(|d| {
                                values::prose("description", d, limits.column_description_chars)
                            })
                            .transpose()
                        })
                    })
                    .transpose()?,
                position: body
                    .input::<f64>("position")?
                    .map(|i| i.try_map(|p| position("position", p)))
                    .transpose()?,
                archived_at: body.input("archivedAt")?,
            },
        ))
    }
}

pub fn create(ctx: &mut Ctx<'_>, c: &CreateColumn) -> Result<Outcome, WriteError> {
    if let Some(id) = &c.id
        && let Some(existing) = ctx.get::<Column>(id)?
    {
        let same = existing.bin_entry.is_none()
            && existing.value.project_id == c.project_id
            && c.matches(&existing.value);
        return existing_or_conflict(same, Kind::Column, id, existing.bin_entry.is_none());
    }
    if let Some(id) = &c.id
        && ctx.store.id_in_use(&ctx.account, id)?
    {
        return existing_or_conflict(false, Kind::Column, id, false);
    }
    let project_missing =
        || WriteError::invalid("projectId", "`projectId` names no project of this account");
    match ctx.get::<Project>(&c.project_id)? {
        Some(p) if p.bin_entry.is_none() => {}
        _ => return Err(project_missing()),
    }
    let n = ctx.store.count_live_columns(&ctx.account, &c.project_id)?;
    if n >= ctx.limits.columns_per_project {
        return Err(WriteError::limit(
            "projectId",
            format!(
                "a project holds at most {} columns",
                ctx.limits.columns_per_project
            ),
        ));
    }
    let position = match c.position {
        Some(p) => p,
        None => top_position(ctx, Kind::Column, Some(&c.project_id))?,
    };
    let (stamp, _) = ctx.stamp()?;
    let column = c.build(&c.project_id, position, stamp);
    let id = column.id.clone();
    ctx.put_live(Record::Column(column))?;
    ctx.touch_project(&c.project_id)?;
    Ok(Outcome::Created {
        kind: Kind::Column,
        id,
    })
}

pub fn update(ctx: &mut Ctx<'_>, id: &str, u: &UpdateColumn) -> Result<Outcome, WriteError> {
    let current: Column = ctx.get_live(id)?;
    let conflict = guard("name", &u.name, &current.name)
        .or_else(|| guard("description", &u.description, &current.description))
        .or_else(|| guard("position", &u.position, &current.position))
        .or_else(|| guard("archivedAt", &u.archived_at, &current.archived_at));
    if let Some(e) = conflict {
        return Err(e);
    }
    let mut next = current.clone();
    set(&mut next.name, &u.name);
    set(&mut next.description, &u.description);
    set(&mut next.position, &u.position);
    set(&mut next.archived_at, &u.archived_at);
    if next != current {
        let (stamp, _) = ctx.stamp()?;
        next.updated_at = stamp;
        let project_id = next.project_id.clone();
        ctx.put_live(Record::Column(next))?;
        ctx.touch_project(&project_id)?;
    }
    Ok(Outcome::Updated {
        kind: Kind::Column,
        id: id.to_owned(),
    })
}

pub fn delete(ctx: &mut Ctx<'_>, id: &str) -> Result<Outcome, WriteError> {
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
