//! Project commands: create (with initial columns), update, delete into the bin.

use serde_json::value::RawValue;

use super::place::{existing_or_conflict, top_position};
use super::{Ctx, Outcome, column};
use crate::error::WriteError;
pub use crate::field::{ProjectFields, UPDATE_PROJECT_FIELDS as UPDATE_FIELDS};
use crate::ids::ProjectId;
use crate::input::Body;
use crate::limits::Limits;
use crate::records::{Column, Kind, Project, Record, Task};
use crate::{bin, store};

/// What a project's create accepts: its id and initial columns, the writable fields, and
/// `updatedAt` (read-only: accepted and ignored, so a read can be sent back).
pub const CREATE_FIELDS: &[&str] = &crate::field::names::<{ UPDATE_FIELDS.len() + 3 }>([
    &["id", "columns"],
    UPDATE_FIELDS,
    &["updatedAt"],
]);

#[derive(Debug, Clone, PartialEq)]
pub struct CreateProject {
    pub id: Option<ProjectId>,
    pub fields: ProjectFields,
    pub columns: Vec<column::CreateColumn>,
}

pub type UpdateProject = ProjectFields;

impl CreateProject {
    /// `POST /projects`'s body, with its columns (`command::parse` makes it a command).
    pub fn read(bytes: &[u8], limits: &Limits) -> Result<CreateProject, WriteError> {
        let body = Body::parse(bytes, CREATE_FIELDS)?;
        let columns = match body.raw("columns") {
            Some(raw) => parse_columns(raw, limits)?,
            None => Vec::new(),
        };
        CreateProject::from_body(&body, columns, limits)
    }

    /// A project create from its fields, with its columns already parsed.
    pub fn from_body(
        body: &Body<'_>,
        columns: Vec<column::CreateColumn>,
        limits: &Limits,
    ) -> Result<Self, WriteError> {
        let id = body
            .client_id()?
            .map(|id| ProjectId::parse(id, "id"))
            .transpose()?;
        let fields = ProjectFields::parse(body, limits)?;
        if fields.name.is_none() {
            return Err(WriteError::invalid("name", "`name` is required"));
        }
        Ok(CreateProject {
            id,
            fields,
            columns,
        })
    }
}

/// `columns` on project create: name strings or `{id?, name, description?, position?, archivedAt?}`.
fn parse_columns(raw: &RawValue, limits: &Limits) -> Result<Vec<column::CreateColumn>, WriteError> {
    // Past the column limit, refused before the rest of the list is read.
    let items: Vec<&RawValue> =
        super::lists::capped(raw, "columns", limits.columns_per_project, || {
            WriteError::limit(
                "columns",
                format!(
                    "a project holds at most {} columns",
                    limits.columns_per_project
                ),
            )
        })?;
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            let column = if item.get().trim_start().starts_with('"') {
                let name: String = serde_json::from_str(item.get()).map_err(|_| {
                    WriteError::invalid("columns", "a column name must be a string")
                })?;
                column::CreateColumn::named(name, limits)
            } else {
                let body = Body::from_raw(item, column::NESTED_FIELDS)?;
                column::CreateColumn::from_body(&body, ProjectId::default(), limits)
            };
            column.map_err(|e| e.at_index(i))
        })
        .collect()
}

/// `PATCH /projects/:id`'s body (`command::parse` makes it a command).
pub fn read_update(bytes: &[u8], limits: &Limits) -> Result<UpdateProject, WriteError> {
    let body = Body::parse(bytes, UPDATE_FIELDS)?;
    ProjectFields::parse(&body, limits)
}

pub fn create(ctx: &mut Ctx<'_>, c: &CreateProject) -> Result<Outcome, WriteError> {
    if let Some(id) = &c.id
        && let Some(existing) = ctx.get::<Project>(id.as_str())?
    {
        return retry_or_conflict(ctx, c, existing);
    }
    if let Some(id) = &c.id
        && ctx.store.id_in_use(&ctx.account, id.as_str())?
    {
        return existing_or_conflict(false, Kind::Project, id.as_str(), false);
    }
    let live = ctx.store.count_live_projects(&ctx.account)?;
    if live >= ctx.limits.projects_per_account {
        return Err(WriteError::limit(
            "id",
            format!(
                "an account holds at most {} projects",
                ctx.limits.projects_per_account
            ),
        ));
    }
    for col in &c.columns {
        if let Some(id) = &col.id
            && ctx.store.id_in_use(&ctx.account, id.as_str())?
        {
            return existing_or_conflict(false, Kind::Column, id.as_str(), false);
        }
    }
    let position = match &c.fields.position {
        Some(p) => p.after.get(),
        None => top_position(ctx, Kind::Project, None)?,
    };
    // Refused before it writes when even its floor cannot fit (no rollback to undo).
    ctx.expect_room(c.least_bytes())?;
    let (stamp, _) = ctx.stamp()?;
    let id = c.id.clone().unwrap_or_else(ProjectId::generate);
    let mut project = Project {
        id: id.as_str().to_owned(),
        position,
        updated_at: stamp,
        ..Project::default()
    };
    c.fields.apply(&mut project);
    ctx.put_live(Record::Project(project))?;
    // Columns land in the order given: each after the one before.
    for (i, col) in c.columns.iter().enumerate() {
        let position = col
            .fields
            .position
            .as_ref()
            .map_or(i as f64, |p| p.after.get());
        let column = col.build(&id, position, stamp);
        ctx.put_live(Record::Column(column))?;
    }
    ctx.names_changed();
    Ok(Outcome::Created {
        kind: Kind::Project,
        id: id.into_inner(),
    })
}

fn retry_or_conflict(
    ctx: &Ctx<'_>,
    c: &CreateProject,
    existing: store::Stored<Project>,
) -> Result<Outcome, WriteError> {
    let p = &existing.value;
    let mut same = existing.bin_entry.is_none() && c.fields.matches(p);
    if same && !c.columns.is_empty() {
        let mut cols: Vec<Column> = ctx.store.live_columns(&ctx.account, &p.id)?;
        cols.sort_by(|a, b| {
            a.position
                .total_cmp(&b.position)
                .then_with(|| a.id.cmp(&b.id))
        });
        same = cols.len() == c.columns.len()
            && cols
                .iter()
                .zip(&c.columns)
                .all(|(have, sent)| sent.matches(have));
    }
    existing_or_conflict(same, Kind::Project, &p.id, existing.bin_entry.is_none())
}

pub fn update(ctx: &mut Ctx<'_>, id: &ProjectId, u: &UpdateProject) -> Result<Outcome, WriteError> {
    let current: Project = ctx.get_live(id.as_str())?;
    if let Some(e) = u.conflict(&current) {
        return Err(e);
    }
    let mut next = current.clone();
    u.apply(&mut next);
    if next != current {
        let (stamp, _) = ctx.stamp()?;
        next.updated_at = stamp;
        if next.name != current.name {
            ctx.names_changed();
        }
        ctx.put_live(Record::Project(next))?;
    }
    Ok(Outcome::Updated {
        kind: Kind::Project,
        id: id.as_str().to_owned(),
    })
}

pub fn delete(ctx: &mut Ctx<'_>, id: &ProjectId) -> Result<Outcome, WriteError> {
    ctx.deleting(|ctx| delete_with_contents(ctx, id.as_str()))
}

fn delete_with_contents(ctx: &mut Ctx<'_>, id: &str) -> Result<Outcome, WriteError> {
    let project: Project = ctx.get_live(id)?;
    let columns: Vec<Column> = ctx.store.live_columns(&ctx.account, id)?;
    let tasks: Vec<Task> = ctx.store.live_project_tasks(&ctx.account, id)?;
    let label = project.name.clone();
    let mut records = vec![Record::Project(project)];
    records.extend(columns.into_iter().map(Record::Column));
    records.extend(tasks.into_iter().map(Record::Task));
    let count = records.len();
    bin::delete_into_bin(ctx, "project", id, &label, records)?;
    ctx.names_changed();
    Ok(Outcome::Deleted {
        id: id.to_owned(),
        count,
    })
}
