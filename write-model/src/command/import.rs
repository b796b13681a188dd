//! Importing an export file: its projects, columns and cards recreated with their ids,
//! positions and timestamps, through the same creates the interface uses, all or nothing.
//! The file is read as every write body is: an unknown field, at the top or in a project,
//! column or card, is refused with the accepted list, and checking costs time linear in it.

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

use super::column::CreateColumn;
use super::project::{self, CreateProject};
use super::task::{self, CreateTask};
use super::{Ctx, Outcome};
use crate::error::WriteError;
use crate::ids::ProjectId;
use crate::input::Body;
use crate::limits::Limits;

/// A column as an export shows it: its cards nested.
const EXPORTED_COLUMN_FIELDS: &[&str] = &[
    "id",
    "projectId",
    "name",
    "description",
    "position",
    "archivedAt",
    "updatedAt",
    "tasks",
];

/// The fields of an export file itself; any other is refused, as every write refuses one.
pub const FILE_FIELDS: &[&str] = &["version", "now", "projects"];

/// An export file's top level, read as it streams: an unknown field is refused where it
/// stands, before the rest of the file is read.
struct ExportFile<'a> {
    projects: Vec<&'a RawValue>,
}

/// What the refusal of an unknown top-level field starts with, to tell it from serde's own.
const UNKNOWN: &str = "unknown top-level field: ";

impl<'de> Deserialize<'de> for ExportFile<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(FileVisitor)
    }
}

struct FileVisitor;

impl<'de> Visitor<'de> for FileVisitor {
    type Value = ExportFile<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an export file ({version, now, projects})")
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
        let (mut version, mut projects) = (false, None);
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match &*key {
                "version" => {
                    map.next_value::<u32>()?;
                    version = true;
                }
                "now" => {
                    map.next_value::<Option<i64>>()?;
                }
                "projects" => projects = Some(map.next_value::<Vec<&'de RawValue>>()?),
                other => return Err(de::Error::custom(format!("{UNKNOWN}{other}"))),
            }
        }
        if !version {
            return Err(de::Error::missing_field("version"));
        }
        let projects = projects.ok_or_else(|| de::Error::missing_field("projects"))?;
        Ok(ExportFile { projects })
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Import {
    pub projects: Vec<CreateProject>,
    /// Parents before their subtasks.
    pub tasks: Vec<CreateTask>,
}

fn array<'a>(raw: &'a RawValue, field: &str) -> Result<Vec<&'a RawValue>, WriteError> {
    serde_json::from_str(raw.get())
        .map_err(|_| WriteError::invalid(field, format!("`{field}` must be an array")))
}

/// Reads an export file (`{version, now, projects}`) into one import (`command::parse`
/// makes it a command).
pub fn read(bytes: &[u8], limits: &Limits) -> Result<Import, WriteError> {
    let file: ExportFile<'_> = serde_json::from_slice(bytes).map_err(|e| {
        let text = e.to_string();
        match text.strip_prefix(UNKNOWN) {
            Some(rest) => {
                let name = rest.rsplit_once(" at line ").map_or(rest, |(name, _)| name);
                WriteError::Invalid {
                    message: format!("unknown field `{name}`"),
                    field: Some(name.to_owned()),
                    accepted: Some(FILE_FIELDS),
                    index: None,
                }
            }
            None => WriteError::BadJson(format!(
                "not an export file ({{version, now, projects}}): {text}"
            )),
        }
    })?;
    let text = std::str::from_utf8(bytes).map_err(|e| WriteError::BadJson(e.to_string()))?;
    crate::input::refuse_duplicate_keys(text)?;
    let mut projects = Vec::with_capacity(file.projects.len());
    let mut tasks = Vec::new();
    // The least the cards will store, counted as they are read: a file whose cards alone
    // pass the storage limit can never land, and is refused before it is read whole.
    let mut least = 0i64;
    for (i, raw) in file.projects.into_iter().enumerate() {
        let body = Body::from_raw(raw, project::CREATE_FIELDS).map_err(|e| e.at_index(i))?;
        let mut columns = Vec::new();
        if let Some(cols) = body.raw("columns") {
            for col in array(cols, "columns")? {
                let col_body =
                    Body::from_raw(col, EXPORTED_COLUMN_FIELDS).map_err(|e| e.at_index(i))?;
                columns.push(
                    CreateColumn::from_body(&col_body, ProjectId::default(), limits)
                        .map_err(|e| e.at_index(i))?,
                );
                if let Some(cards) = col_body.raw("tasks") {
                    for card in array(cards, "tasks")? {
                        let card_body = Body::from_raw(card, task::CREATE_FIELDS)?;
                        let card = CreateTask::from_body(&card_body, limits)?;
                        least += card.least_bytes(limits);
                        if least > limits.storage_bytes as i64 {
                            return Err(WriteError::StorageFull);
                        }
                        tasks.push(card);
                    }
                }
            }
        }
        projects.push(CreateProject::from_body(&body, columns, limits).map_err(|e| e.at_index(i))?);
    }
    // Parents land before their subtasks.
    tasks.sort_by_key(|t| {
        t.fields
            .parent_id
            .as_ref()
            .is_some_and(|p| p.after.is_some())
    });
    Ok(Import { projects, tasks })
}

pub fn execute(ctx: &mut Ctx<'_>, import: &Import) -> Result<Outcome, WriteError> {
    if !ctx.store.account_exists(&ctx.account)? {
        return Err(WriteError::invalid(
            "account",
            format!("no account `{}`", ctx.account),
        ));
    }
    // An import that cannot fit is refused before it writes. Were one of its projects in
    // the account already (the same file again), its creates may be retries that add
    // nothing, so only the exact count after decides.
    let mut fresh = true;
    for id in import
        .projects
        .iter()
        .filter_map(|p| p.id.as_ref().map(ProjectId::as_str))
    {
        fresh &= !ctx.store.id_in_use(&ctx.account, id)?;
    }
    if fresh {
        ctx.expect_room(import.least_bytes(ctx.limits))?;
    }
    ctx.store.expect_many_rows()?;
    let mut project_ids = Vec::with_capacity(import.projects.len());
    for p in &import.projects {
        match project::create(ctx, p)? {
            Outcome::Created { id, .. } | Outcome::Existing { id, .. } => project_ids.push(id),
            other => {
                return Err(WriteError::Internal(format!(
                    "a project create answered {other:?}"
                )));
            }
        }
    }
    for t in &import.tasks {
        task::create(ctx, t)?;
    }
    Ok(Outcome::Imported {
        projects: import.projects.len(),
        columns: import.projects.iter().map(|p| p.columns.len()).sum(),
        tasks: import.tasks.len(),
        project_ids,
    })
}
