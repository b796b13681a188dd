//! Project commands: create (with initial columns), update, delete into the bin.

use serde_json::value::RawValue;

use super::{Command, Ctx, Outcome, column, existing_or_conflict, guard, position, top_position};
use crate::error::WriteError;
use crate::ids::IdKind;
use crate::input::{Body, Input};
use crate::limits::Limits;
use crate::records::{Column, Kind, Project, Record, Task};
use crate::{bin, store, values};

/// `updatedAt` is read-only: accepted and ignored, so a read can be sent back.
pub const CREATE_FIELDS: &[&str] = &[
    "id",
    "name",
    "columns",
    "folder",
    "position",
    "archivedAt",
    "pinnedAt",
    "photo",
    "updatedAt",
];
pub const UPDATE_FIELDS: &[&str] = &[
    "name",
    "folder",
    "position",
    "archivedAt",
    "pinnedAt",
    "photo",
];

#[derive(Debug, Clone, PartialEq)]
pub struct CreateProject {
    pub id: Option<String>,
    pub name: String,
    pub columns: Vec<column::CreateColumn>,
    pub folder: Option<Option<String>>,
    pub position: Option<f64>,
    pub archived_at: Option<Option<i64>>,
    pub pinned_at: Option<Option<i64>>,
    pub photo: Option<Option<String>>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct UpdateProject {
    pub name: Option<Input<String>>,
    pub folder: Option<Input<Option<String>>>,
    pub position: Option<Input<f64>>,
    pub archived_at: Option<Input<Option<i64>>>,
    pub pinned_at: Option<Input<Option<i64>>>,
    pub photo: Option<Input<Option<String>>>,
}

fn photo(limits: &Limits) -> impl Fn(Option<String>) -> Result<Option<String>, WriteError> + '_ {
    move |p| {
        p.map(|p| values::photo("photo", &p, limits.photo_chars))
            .transpose()
    }
}

impl CreateProject {
    pub fn parse(bytes: &[u8], limits: &Limits) -> Result<Command, WriteError> {
        let body = Body::parse(bytes, CREATE_FIELDS)?;
        let columns = match body.raw("columns") {
            Some(raw) => parse_columns(raw, limits)?,
            None => Vec::new(),
        };
        Ok(Command::CreateProject(CreateProject::from_body(
            &body, columns, limits,
        )?))
    }

    /// A project create from its fields, with its columns already parsed.
    pub fn from_body(
        body: &Body<'_>,
        columns: Vec<column::CreateColumn>,
        limits: &Limits,
    ) -> Result<Self, WriteError> {
        let id = body.client_id()?;
        if let Some(id) = &id {
            IdKind::Project.check(id, "id")?;
        }
        let name: String = body
            .after("name")?
            .ok_or_else(|| WriteError::invalid("name", "`name` is required"))?;
        Ok(CreateProject {
            id,
            name: values::required_text("name", &name, limits.name_chars)?,
            columns,
            folder: body
                .after::<Option<String>>("folder")?
                .map(|f| values::folder(f, limits.folder_chars)),
            position: body
                .after("position")?
                .map(|p| position("position", p))
                .transpose()?,
            archived_at: body.after("archivedAt")?,
            pinned_at: body.after("pinnedAt")?,
            photo: body
                .after::<Option<String>>("photo")?
                .map(photo(limits))
                .transpose()?,
        })
    }
}

/// `columns` on project create: name strings or `{id?, name, description?, position?, archivedAt?}`.
fn parse_columns(raw: &RawValue, limits: &Limits) -> Result<Vec<column::CreateColumn>, WriteError> {
    let items: Vec<&RawValue> = serde_json::from_str(raw.get())
        .map_err(|_| WriteError::invalid("columns", "`columns` must be an array"))?;
    if items.len() > limits.columns_per_project {
        return Err(WriteError::limit(
            "columns",
            format!(
                "a project holds at most {} columns",
                limits.columns_per_project
            ),
        ));
    }
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            let column = if item.get().trim_start().starts_with('"') {
                let name: String = serde_json::from_str(item.get()).map_err(|_| {
                    WriteError::invalid("columns", "a column name must be a string")
                })?;
                column::CreateColumn::new(None, String::new(), &name, limits)
            } else {
                let body = Body::from_raw(item, column::NESTED_FIELDS)?;
                column::CreateColumn::from_body(&body, String::new(), limits)
            };
            column.map_err(|e| e.at_index(i))
        })
        .collect()
}

impl UpdateProject {
    pub fn parse(id: String, bytes: &[u8], limits: &Limits) -> Result<Command, WriteError> {
        let body = Body::parse(bytes, UPDATE_FIELDS)?;
        let name_chars = limits.name_chars;
        Ok(Command::UpdateProject(
            id,
            UpdateProject {
                name: body
                    .input::<String>("name")?
                    .map(|i| i.try_map(|n| values::required_text("name", &n, name_chars)))
                    .transpose()?,
                folder: body
                    .input::<Option<String>>("folder")?
                    .map(|i| i.try_map(|f| Ok(values::folder(f, limits.folder_chars))))
                    .transpose()?,
                position: body
                    .input::<f64>("position")?
                    .map(|i| i.try_map(|p| position("position", p)))
                    .transpose()?,
                archived_at: body.input("archivedAt")?,
                pinned_at: body.input("pinnedAt")?,
                photo: body
                    .input::<Option<String>>("photo")?
                    .map(|i| i.try_map(photo(limits)))
                    .transpose()?,
            },
        ))
    }
}

pub fn create(ctx: &mut Ctx<'_>, c: &CreateProject) -> Result<Outcome, WriteError> {
    if let Some(id) = &c.id
        && let Some(existing) = ctx.get::<Project>(id)?
    {
        return retry_or_conflict(ctx, c, existing);
    }
    if let Some(id) = &c.id
        && ctx.store.id_in_use(&ctx.account, id)?
    {
        return existing_or_conflict(false, Kind::Project, id, false);
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
            && ctx.store.id_in_use(&ctx.account, id)?
        {
            return existing_or_conflict(false, Kind::Column, id, false);
        }
    }
    let position = match c.position {
        Some(p) => p,
        None => top_position(ctx, Kind::Project, None)?,
    };
    let (stamp, _) = ctx.stamp()?;
    let id = c.id.clone().unwrap_or_else(|| IdKind::Project.generate());
    let project = Project {
        id: id.clone(),
        name: c.name.clone(),
        folder: c.folder.clone().flatten(),
        position,
        archived_at: c.archived_at.flatten(),
        pinned_at: c.pinned_at.flatten(),
        photo: c.photo.clone().flatten(),
        updated_at: stamp,
    };
    ctx.put_live(Record::Project(project))?;
    // Columns land in the order given: each after the one before.
    for (i, col) in c.columns.iter().enumerate() {
        let column = col.build(&id, col.position.unwrap_or(i as f64), stamp);
        ctx.put_live(Record::Column(column))?;
    }
    ctx.names_changed();
    Ok(Outcome::Created {
        kind: Kind::Project,
        id,
    })
}

fn retry_or_conflict(
    ctx: &Ctx<'_>,
    c: &CreateProject,
    existing: store::Stored<Project>,
) -> Result<Outcome, WriteError> {
    let p = &existing.value;
    let mut same = existing.bin_entry.is_none()
        && p.name == c.name
        && c.folder.as_ref().is_none_or(|f| *f == p.folder)
        && c.position.is_none_or(|x| x == p.position)
        && c.archived_at.is_none_or(|x| x == p.archived_at)
        && c.pinned_at.is_none_or(|x| x == p.pinned_at)
        && c.photo.as_ref().is_none_or(|x| *x == p.photo);
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

pub fn update(ctx: &mut Ctx<'_>, id: &str, u: &UpdateProject) -> Result<Outcome, WriteError> {
    let current: Project = ctx.get_live(id)?;
    let conflict = guard("name", &u.name, &current.name)
        .or_else(|| guard("folder", &u.folder, &current.folder))
        .or_else(|| guard("position", &u.position, &current.position))
        .or_else(|| guard("archivedAt", &u.archived_at, &current.archived_at))
        .or_else(|| guard("pinnedAt", &u.pinned_at, &current.pinned_at))
        .or_else(|| guard("photo", &u.photo, &current.photo));
    if let Some(e) = conflict {
        return Err(e);
    }
    let mut next = current.clone();
    set(&mut next.name, &u.name);
    set(&mut next.folder, &u.folder);
    set(&mut next.position, &u.position);
    set(&mut next.archived_at, &u.archived_at);
    set(&mut next.pinned_at, &u.pinned_at);
    set(&mut next.photo, &u.photo);
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
        id: id.to_owned(),
    })
}

/// Writes a field the request sent.
pub fn set<T: Clone>(slot: &mut T, input: &Option<Input<T>>) {
    if let Some(i) = input {
        *slot = i.after.clone();
    }
}

pub fn delete(ctx: &mut Ctx<'_>, id: &str) -> Result<Outcome, WriteError> {
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
