//! The records as stored: one JSON body per project, column and task (a task carries its
//! tags, checklist and comments). The read model shapes them for replies.

use serde::{Deserialize, Serialize};

pub use crate::kind::Kind;

use crate::checks::Effort;
use crate::repeat::Repeat;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Project {
    pub id: String,
    pub name: String,
    pub folder: Option<String>,
    pub position: f64,
    pub archived_at: Option<i64>,
    pub pinned_at: Option<i64>,
    pub photo: Option<String>,
    pub updated_at: i64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Column {
    pub id: String,
    pub project_id: String,
    pub name: String,
    pub description: Option<String>,
    pub position: f64,
    pub archived_at: Option<i64>,
    pub updated_at: i64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    pub id: String,
    pub project_id: String,
    pub column_id: String,
    pub title: String,
    pub description: String,
    pub priority: i64,
    pub effort: Option<Effort>,
    pub deadline: Option<String>,
    pub deadline_time: Option<String>,
    pub location: String,
    pub parent_id: Option<String>,
    pub position: f64,
    pub completed_at: Option<i64>,
    pub cancelled_at: Option<i64>,
    /// How the card recurs when finished (see [`crate::repeat`]); absent in cards stored
    /// before it existed. Always written, `null` included, so an undo step that clears it
    /// puts it back.
    #[serde(default)]
    pub repeat: Option<Repeat>,
    /// The day a monthly or yearly rhythm counts from while the deadline is clamped away
    /// from it (31 January behind a 28 February deadline); never shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat_anchor: Option<String>,
    pub rev: i64,
    pub updated_at: i64,
    pub tags: Vec<Tag>,
    pub checklist: Vec<ChecklistItem>,
    pub comments: Vec<Comment>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tag {
    pub id: String,
    pub text: String,
}

/// A checklist item; its `position` is its index in the task's list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChecklistItem {
    pub id: String,
    pub text: String,
    pub done: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Comment {
    pub id: String,
    pub text: String,
    pub created_at: i64,
}

/// One record of any kind. Not boxed: change sets are short-lived, and a box would add an
/// allocation to every card write.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[allow(clippy::large_enum_variant)]
pub enum Record {
    Project(Project),
    Column(Column),
    Task(Task),
}

impl Record {
    pub fn id(&self) -> &str {
        match self {
            Record::Project(p) => &p.id,
            Record::Column(c) => &c.id,
            Record::Task(t) => &t.id,
        }
    }

    pub fn kind(&self) -> Kind {
        match self {
            Record::Project(_) => Kind::Project,
            Record::Column(_) => Kind::Column,
            Record::Task(_) => Kind::Task,
        }
    }
}

/// A record type that can be taken back out of a [`Record`] of its kind.
pub trait OfKind: Sized {
    fn from_record(record: Record) -> Option<Self>;
}

impl OfKind for Project {
    fn from_record(record: Record) -> Option<Self> {
        match record {
            Record::Project(p) => Some(p),
            _ => None,
        }
    }
}

impl OfKind for Column {
    fn from_record(record: Record) -> Option<Self> {
        match record {
            Record::Column(c) => Some(c),
            _ => None,
        }
    }
}

impl OfKind for Task {
    fn from_record(record: Record) -> Option<Self> {
        match record {
            Record::Task(t) => Some(t),
            _ => None,
        }
    }
}
