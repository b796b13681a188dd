//! Task bodies decoded: the create and update fields, checked once, on the caller's thread.

use serde::Deserialize;

use super::tag_list;
use crate::command::{Command, position};
use crate::error::WriteError;
use crate::ids::IdKind;
use crate::input::{Body, Input};
use crate::limits::Limits;
use crate::records::Task;
use crate::values::{self, Effort};

pub const CREATE_FIELDS: &[&str] = &[
    "id",
    "columnId",
    "title",
    "description",
    "priority",
    "effort",
    "deadline",
    "deadlineTime",
    "location",
    "parentId",
    "position",
    "tags",
    "tagIds",
    "checklist",
    "comments",
    "completedAt",
    "cancelledAt",
    "rev",
    "order",
    "updatedAt",
    "projectId",
];
/// The writable fields, in the documented order that names the first failing guard.
pub const UPDATE_FIELDS: &[&str] = &[
    "columnId",
    "title",
    "description",
    "priority",
    "effort",
    "deadline",
    "deadlineTime",
    "location",
    "parentId",
    "position",
    "tags",
    "completedAt",
    "cancelledAt",
];

/// The values a task create or update may carry, checked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskFields {
    pub column_id: Option<Input<String>>,
    pub title: Option<Input<String>>,
    pub description: Option<Input<String>>,
    pub priority: Option<Input<i64>>,
    pub effort: Option<Input<Option<Effort>>>,
    pub deadline: Option<Input<Option<String>>>,
    pub deadline_time: Option<Input<Option<String>>>,
    pub location: Option<Input<String>>,
    pub parent_id: Option<Input<Option<String>>>,
    pub position: Option<Input<f64>>,
    pub tags: Option<Input<Vec<String>>>,
    pub completed_at: Option<Input<Option<i64>>>,
    pub cancelled_at: Option<Input<Option<i64>>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CreateTask {
    pub id: Option<String>,
    pub fields: TaskFields,
    pub tag_ids: Option<Vec<String>>,
    pub checklist: Vec<ChecklistInput>,
    pub comments: Vec<CommentInput>,
}

pub type UpdateTask = TaskFields;

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChecklistInput {
    pub id: Option<String>,
    pub text: String,
    #[serde(default)]
    pub done: bool,
    pub position: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CommentInput {
    pub id: Option<String>,
    pub text: String,
    #[serde(alias = "created_at")]
    pub created_at: Option<i64>,
}

impl TaskFields {
    pub(super) fn parse(body: &Body<'_>, limits: &Limits) -> Result<Self, WriteError> {
        let title_chars = limits.title_chars;
        Ok(TaskFields {
            column_id: body.input("columnId")?,
            title: body
                .input::<String>("title")?
                .map(|i| i.try_map(|t| values::required_text("title", &t, title_chars)))
                .transpose()?,
            description: body
                .input::<Option<String>>("description")?
                .map(|i| {
                    i.try_map(|d| {
                        values::prose(
                            "description",
                            d.unwrap_or_default(),
                            limits.description_chars,
                        )
                    })
                })
                .transpose()?,
            priority: body
                .input::<i64>("priority")?
                .map(|i| i.try_map(|p| Ok(values::priority(p))))
                .transpose()?,
            effort: body.input("effort")?,
            deadline: body
                .input::<Option<String>>("deadline")?
                .map(|i| i.try_map(|d| d.map(|d| values::deadline("deadline", &d)).transpose()))
                .transpose()?,
            deadline_time: body
                .input::<Option<String>>("deadlineTime")?
                .map(|i| {
                    i.try_map(|t| {
                        t.map(|t| values::deadline_time("deadlineTime", &t))
                            .transpose()
                    })
                })
                .transpose()?,
            location: body
                .input::<Option<String>>("location")?
                .map(|i| {
                    i.try_map(|l| {
                        Ok(values::trim_to(
                            &l.unwrap_or_default(),
                            limits.location_chars,
                        ))
                    })
                })
                .transpose()?,
            parent_id: body.input("parentId")?,
            position: body
                .input::<f64>("position")?
                .map(|i| i.try_map(|p| position("position", p)))
                .transpose()?,
            tags: body
                .input::<Vec<String>>("tags")?
                .map(|i| i.try_map(|t| tag_texts(t, limits)))
                .transpose()?,
            completed_at: body.input("completedAt")?,
            cancelled_at: body.input("cancelledAt")?,
        })
    }
}

/// Tag texts: non-empty, trimmed to fit, at most the limit per task.
fn tag_texts(tags: Vec<String>, limits: &Limits) -> Result<Vec<String>, WriteError> {
    if tags.len() > limits.tags_per_task {
        return Err(WriteError::limit(
            "tags",
            format!("a task holds at most {} tags", limits.tags_per_task),
        ));
    }
    tags.into_iter()
        .map(|t| {
            if t.is_empty() {
                Err(WriteError::invalid("tags", "a tag must not be empty"))
            } else {
                Ok(values::trim_to(&t, limits.tag_chars))
            }
        })
        .collect()
}

impl CreateTask {
    /// Parses one create body (also one entry of a batch).
    pub fn from_body(body: &Body<'_>, limits: &Limits) -> Result<Self, WriteError> {
        let id = body.client_id()?;
        if let Some(id) = &id {
            IdKind::Task.check(id, "id")?;
        }
        let fields = TaskFields::parse(body, limits)?;
        if fields.column_id.is_none() {
            return Err(WriteError::invalid("columnId", "`columnId` is required"));
        }
        if fields.title.is_none() {
            return Err(WriteError::invalid("title", "`title` is required"));
        }
        let tag_ids: Option<Vec<String>> = body.bare("tagIds")?;
        if let Some(ids) = &tag_ids {
            let n = fields.tags.as_ref().map_or(0, |t| t.after.len());
            if ids.len() != n {
                return Err(WriteError::invalid(
                    "tagIds",
                    "`tagIds` must pair one id with each tag",
                ));
            }
            for id in ids {
                IdKind::Tag.check(id, "tagIds")?;
            }
        }
        let checklist: Vec<ChecklistInput> = body.bare("checklist")?.unwrap_or_default();
        if checklist.len() > limits.checklist_items_per_task {
            return Err(WriteError::limit(
                "checklist",
                format!(
                    "a task holds at most {} checklist items",
                    limits.checklist_items_per_task
                ),
            ));
        }
        for item in &checklist {
            if let Some(id) = &item.id {
                IdKind::ChecklistItem.check(id, "checklist")?;
            }
            if item.text.is_empty() {
                return Err(WriteError::invalid(
                    "checklist",
                    "a checklist item's text must not be empty",
                ));
            }
        }
        let comments: Vec<CommentInput> = body.bare("comments")?.unwrap_or_default();
        if comments.len() > limits.comments_per_task {
            return Err(WriteError::limit(
                "comments",
                format!("a task holds at most {} comments", limits.comments_per_task),
            ));
        }
        for c in &comments {
            if let Some(id) = &c.id {
                IdKind::Comment.check(id, "comments")?;
            }
            if c.text.is_empty() {
                return Err(WriteError::invalid(
                    "comments",
                    "a comment's text must not be empty",
                ));
            }
            values::prose("comments", c.text.clone(), limits.comment_chars)?;
        }
        Ok(CreateTask {
            id,
            fields,
            tag_ids,
            checklist,
            comments,
        })
    }

    pub fn parse(bytes: &[u8], limits: &Limits) -> Result<Command, WriteError> {
        let body = Body::parse(bytes, CREATE_FIELDS)?;
        Ok(Command::CreateTask(Box::new(CreateTask::from_body(
            &body, limits,
        )?)))
    }

    /// Whether every field this create sends equals the task's (a safe retry).
    pub(super) fn matches(&self, t: &Task, limits: &Limits) -> bool {
        let f = &self.fields;
        let eq = |a: bool| a;
        eq(f.column_id.as_ref().is_none_or(|i| i.after == t.column_id))
            && f.title.as_ref().is_none_or(|i| i.after == t.title)
            && f.description
                .as_ref()
                .is_none_or(|i| i.after == t.description)
            && f.priority.as_ref().is_none_or(|i| i.after == t.priority)
            && f.effort.as_ref().is_none_or(|i| i.after == t.effort)
            && f.deadline.as_ref().is_none_or(|i| i.after == t.deadline)
            && f.deadline_time
                .as_ref()
                .is_none_or(|i| i.after == t.deadline_time)
            && f.location.as_ref().is_none_or(|i| i.after == t.location)
            && f.parent_id.as_ref().is_none_or(|i| i.after == t.parent_id)
            && f.position.as_ref().is_none_or(|i| i.after == t.position)
            && f.tags.as_ref().is_none_or(|i| i.after == tag_list(&t.tags))
            && f.completed_at
                .as_ref()
                .is_none_or(|i| i.after == t.completed_at)
            && f.cancelled_at
                .as_ref()
                .is_none_or(|i| i.after == t.cancelled_at)
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
    ) -> Vec<(Option<String>, String, bool)> {
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
                    values::trim_to(&c.text, limits.checklist_item_chars),
                    c.done,
                )
            })
            .collect()
    }
}

pub fn parse_update(id: String, bytes: &[u8], limits: &Limits) -> Result<Command, WriteError> {
    let body = Body::parse(bytes, UPDATE_FIELDS)?;
    Ok(Command::UpdateTask(
        id,
        Box::new(TaskFields::parse(&body, limits)?),
    ))
}
