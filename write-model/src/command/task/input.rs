//! Task bodies decoded: the create and update fields, checked once, on the caller's thread.

use serde::Deserialize;

use super::{TaskFields, UPDATE_FIELDS};
use crate::checks;
use crate::command::lists;
use crate::error::WriteError;
use crate::ids::{CommentId, ItemId, TagId, TaskId};
use crate::input::Body;
use crate::limits::Limits;
use crate::records::Task;

/// What a card's create accepts: its id, the writable fields, the nested collections (so a
/// read sent back lands as it left), and the read-only fields, accepted and ignored.
pub const CREATE_FIELDS: &[&str] = &crate::field::names::<{ UPDATE_FIELDS.len() + 8 }>([
    &["id"],
    UPDATE_FIELDS,
    &[
        "tagIds",
        "checklist",
        "comments",
        "rev",
        "order",
        "updatedAt",
        "projectId",
    ],
]);

#[derive(Debug, Clone, PartialEq)]
pub struct CreateTask {
    pub id: Option<TaskId>,
    pub fields: TaskFields,
    pub tag_ids: Option<Vec<TagId>>,
    pub checklist: Vec<ChecklistInput>,
    pub comments: Vec<CommentInput>,
}

pub type UpdateTask = TaskFields;

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChecklistInput {
    /// Checked in [`CreateTask::from_body`], naming `checklist`.
    pub id: Option<ItemId>,
    pub text: String,
    #[serde(default)]
    pub done: bool,
    pub position: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CommentInput {
    /// Checked in [`CreateTask::from_body`], naming `comments`.
    pub id: Option<CommentId>,
    pub text: String,
    #[serde(alias = "created_at")]
    pub created_at: Option<i64>,
}

impl CreateTask {
    /// Parses one create body (also one entry of a batch).
    pub fn from_body(body: &Body<'_>, limits: &Limits) -> Result<Self, WriteError> {
        let id = body
            .client_id()?
            .map(|id| TaskId::parse(id, "id"))
            .transpose()?;
        let fields = TaskFields::parse(body, limits)?;
        if fields.column_id.is_none() {
            return Err(WriteError::invalid("columnId", "`columnId` is required"));
        }
        if fields.title.is_none() {
            return Err(WriteError::invalid("title", "`title` is required"));
        }
        // Each list is read against its cap: past it, refused before the rest is decoded.
        let tag_ids: Option<Vec<TagId>> = body
            .raw("tagIds")
            .map(|raw| {
                let max = limits.tags_per_task;
                lists::capped(raw, "tagIds", max, || {
                    lists::at_most("tagIds", max, "ids: a task holds no more tags")
                })
            })
            .transpose()?;
        if let Some(ids) = &tag_ids {
            let n = fields.tags.as_ref().map_or(0, |t| t.after.texts().len());
            if ids.len() != n {
                return Err(WriteError::invalid(
                    "tagIds",
                    "`tagIds` must pair one id with each tag",
                ));
            }
            for id in ids {
                id.check("tagIds")?;
            }
        }
        let checklist: Vec<ChecklistInput> =
            capped_field(body, "checklist", limits.checklist_items_per_task, || {
                WriteError::limit(
                    "checklist",
                    format!(
                        "a task holds at most {} checklist items",
                        limits.checklist_items_per_task
                    ),
                )
            })?;
        for item in &checklist {
            if let Some(id) = &item.id {
                id.check("checklist")?;
            }
            if item.text.is_empty() {
                return Err(WriteError::invalid(
                    "checklist",
                    "a checklist item's text must not be empty",
                ));
            }
        }
        let comments: Vec<CommentInput> =
            capped_field(body, "comments", limits.comments_per_task, || {
                WriteError::limit(
                    "comments",
                    format!("a task holds at most {} comments", limits.comments_per_task),
                )
            })?;
        for c in &comments {
            if let Some(id) = &c.id {
                id.check("comments")?;
            }
            if c.text.is_empty() {
                return Err(WriteError::invalid(
                    "comments",
                    "a comment's text must not be empty",
                ));
            }
            checks::prose("comments", c.text.clone(), limits.comment_chars)?;
        }
        Ok(CreateTask {
            id,
            fields,
            tag_ids,
            checklist,
            comments,
        })
    }

    /// `POST /tasks`'s body (`command::parse` makes it a command).
    pub fn read(bytes: &[u8], limits: &Limits) -> Result<CreateTask, WriteError> {
        let body = Body::parse(bytes, CREATE_FIELDS)?;
        CreateTask::from_body(&body, limits)
    }

    /// Whether every field this create sends equals the task's (a safe retry).
    pub(super) fn matches(&self, t: &Task, limits: &Limits) -> bool {
        self.fields.matches(t)
            && (self.checklist.is_empty()
                || self
                    .checklist_in_order(limits)
                    .iter()
                    .map(|(_, text, done)| (text, *done))
                    .eq(t.checklist.iter().map(|c| (&c.text, c.done))))
            && (self.comments.is_empty()
                || self
                    .comments
                    .iter()
                    .map(|c| &c.text)
                    .eq(t.comments.iter().map(|c| &c.text)))
    }

    /// The checklist items in the order they land: by their `position` (an index), else as
    /// sent; each with its text trimmed to fit.
    pub(super) fn checklist_in_order(
        &self,
        limits: &Limits,
    ) -> Vec<(Option<ItemId>, String, bool)> {
        let mut items: Vec<(usize, &ChecklistInput)> = self.checklist.iter().enumerate().collect();
        items.sort_by(|(ia, a), (ib, b)| {
            let pa = a.position.unwrap_or(*ia as f64);
            let pb = b.position.unwrap_or(*ib as f64);
            pa.total_cmp(&pb).then(ia.cmp(ib))
        });
        items
            .into_iter()
            .map(|(_, c)| {
                (
                    c.id.clone(),
                    checks::trim_to(&c.text, limits.checklist_item_chars),
                    c.done,
                )
            })
            .collect()
    }
}

/// `PATCH /tasks/:id`'s body (`command::parse` makes it a command).
pub fn read_update(bytes: &[u8], limits: &Limits) -> Result<UpdateTask, WriteError> {
    let body = Body::parse(bytes, UPDATE_FIELDS)?;
    TaskFields::parse(&body, limits)
}

/// A list field read against its cap (empty when the body leaves it out).
fn capped_field<T: serde::de::DeserializeOwned>(
    body: &Body<'_>,
    field: &str,
    max: usize,
    over: impl FnOnce() -> WriteError,
) -> Result<Vec<T>, WriteError> {
    match body.raw(field) {
        Some(raw) => lists::capped(raw, field, max, over),
        None => Ok(Vec::new()),
    }
}
