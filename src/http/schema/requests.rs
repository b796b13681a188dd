//! Request bodies: closed to unknown fields, every writable field bare or guarded.

use salvo::oapi::ToSchema;
use serde::Deserialize;

use super::*;

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "ProjectCreate"))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ProjectCreate {
    #[serde(default)]
    id: Option<String>,
    name: Guarded<NonEmpty>,
    #[serde(default)]
    columns: Vec<ColumnSeed>,
    #[serde(default)]
    folder: NullableText,
    #[serde(default)]
    position: Number,
    #[serde(default)]
    archived_at: Stamp,
    #[serde(default)]
    pinned_at: Stamp,
    #[serde(default)]
    photo: Guarded<Option<Photo>>,
    /// Read-only: accepted and ignored.
    #[serde(default)]
    updated_at: Option<i64>,
}

/// A column given on project create: its name, or its fields.
#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "ColumnSeed"))]
#[serde(untagged)]
pub enum ColumnSeed {
    Name(String),
    Fields(ColumnNested),
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "ColumnNested"))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ColumnNested {
    #[serde(default)]
    id: Option<String>,
    name: Guarded<NonEmpty>,
    #[serde(default)]
    description: NullableText,
    #[serde(default)]
    position: Number,
    #[serde(default)]
    archived_at: Stamp,
    #[serde(default)]
    project_id: Option<String>,
    #[serde(default)]
    updated_at: Option<i64>,
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "ProjectUpdate"))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ProjectUpdate {
    #[serde(default)]
    name: Guarded<NonEmpty>,
    #[serde(default)]
    folder: NullableText,
    #[serde(default)]
    position: Number,
    #[serde(default)]
    archived_at: Stamp,
    #[serde(default)]
    pinned_at: Stamp,
    #[serde(default)]
    photo: Guarded<Option<Photo>>,
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "ColumnCreate"))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ColumnCreate {
    #[serde(default)]
    id: Option<String>,
    project_id: Text,
    name: Guarded<NonEmpty>,
    #[serde(default)]
    description: NullableText,
    #[serde(default)]
    position: Number,
    #[serde(default)]
    archived_at: Stamp,
    #[serde(default)]
    updated_at: Option<i64>,
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "ColumnUpdate"))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ColumnUpdate {
    #[serde(default)]
    name: Guarded<NonEmpty>,
    #[serde(default)]
    description: NullableText,
    #[serde(default)]
    position: Number,
    #[serde(default)]
    archived_at: Stamp,
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "TaskCreate"))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TaskCreate {
    #[serde(default)]
    id: Option<String>,
    column_id: Text,
    title: Guarded<NonEmpty>,
    #[serde(default)]
    description: NullableText,
    /// 1 (highest) to 4; out-of-range integers are clamped.
    #[serde(default)]
    priority: Guarded<i64>,
    #[serde(default)]
    effort: Guarded<Option<Effort>>,
    #[serde(default)]
    deadline: Guarded<Option<Date>>,
    #[serde(default)]
    deadline_time: Guarded<Option<Time>>,
    #[serde(default)]
    location: NullableText,
    #[serde(default)]
    parent_id: NullableText,
    #[serde(default)]
    position: Number,
    #[serde(default)]
    tags: Guarded<TagList>,
    #[serde(default)]
    tag_ids: Option<Vec<String>>,
    #[serde(default)]
    checklist: Option<Vec<ChecklistSeed>>,
    #[serde(default)]
    comments: Option<Vec<CommentSeed>>,
    #[serde(default)]
    completed_at: Stamp,
    #[serde(default)]
    cancelled_at: Stamp,
    /// Read-only fields of a task read: accepted and ignored.
    #[serde(default)]
    rev: Option<i64>,
    #[serde(default)]
    order: Option<i64>,
    #[serde(default)]
    updated_at: Option<i64>,
    #[serde(default)]
    project_id: Option<String>,
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "ChecklistSeed"))]
#[serde(deny_unknown_fields)]
pub struct ChecklistSeed {
    #[serde(default)]
    id: Option<String>,
    text: String,
    #[serde(default)]
    done: Option<bool>,
    #[serde(default)]
    position: Option<f64>,
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "CommentSeed"))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CommentSeed {
    #[serde(default)]
    id: Option<String>,
    text: String,
    #[serde(default)]
    created_at: Option<i64>,
}

/// One card, or the batch form: 1 to 200 cards, all or nothing.
#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "TaskCreateBody"))]
#[serde(untagged)]
pub enum TaskCreateBody {
    One(Box<TaskCreate>),
    Batch(TaskBatch),
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "TaskBatch"))]
#[serde(deny_unknown_fields)]
pub struct TaskBatch {
    tasks: Vec<TaskCreate>,
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "TaskUpdate"))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TaskUpdate {
    #[serde(default)]
    column_id: Text,
    #[serde(default)]
    title: Guarded<NonEmpty>,
    #[serde(default)]
    description: NullableText,
    #[serde(default)]
    priority: Guarded<i64>,
    #[serde(default)]
    effort: Guarded<Option<Effort>>,
    #[serde(default)]
    deadline: Guarded<Option<Date>>,
    #[serde(default)]
    deadline_time: Guarded<Option<Time>>,
    #[serde(default)]
    location: NullableText,
    #[serde(default)]
    parent_id: NullableText,
    #[serde(default)]
    position: Number,
    #[serde(default)]
    tags: Guarded<TagList>,
    #[serde(default)]
    completed_at: Stamp,
    /// A timestamp deletes the card; null restores the bin entry the card heads.
    #[serde(default)]
    cancelled_at: Stamp,
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "Positions"))]
#[serde(deny_unknown_fields)]
pub struct Positions {
    positions: Vec<PositionEntry>,
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "PositionEntry"))]
#[serde(deny_unknown_fields)]
pub struct PositionEntry {
    id: String,
    position: f64,
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "TextItemCreate"))]
#[serde(deny_unknown_fields)]
pub struct TextItemCreate {
    #[serde(default)]
    id: Option<String>,
    text: Guarded<NonEmpty>,
}

/// One item (`position` is a 0-based index: it inserts there), or `items`, appended in order.
#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "ChecklistCreate"))]
#[serde(untagged)]
pub enum ChecklistCreate {
    One(ChecklistOne),
    Many(ChecklistMany),
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "ChecklistOne"))]
#[serde(deny_unknown_fields)]
pub struct ChecklistOne {
    #[serde(default)]
    id: Option<String>,
    text: Guarded<NonEmpty>,
    #[serde(default)]
    done: Guarded<bool>,
    #[serde(default)]
    position: Guarded<u32>,
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "ChecklistMany"))]
#[serde(deny_unknown_fields)]
pub struct ChecklistMany {
    items: Vec<ChecklistManyEntry>,
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "ChecklistManyEntry"))]
#[serde(deny_unknown_fields)]
pub struct ChecklistManyEntry {
    text: NonEmpty,
    #[serde(default)]
    done: Option<bool>,
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "ChecklistOrder"))]
#[serde(deny_unknown_fields)]
pub struct ChecklistOrder {
    ids: Vec<String>,
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "ChecklistItemUpdate"))]
#[serde(deny_unknown_fields)]
pub struct ChecklistItemUpdate {
    #[serde(default)]
    text: Guarded<NonEmpty>,
    #[serde(default)]
    done: Guarded<bool>,
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "KeyCreate"))]
#[serde(deny_unknown_fields)]
pub struct KeyCreate {
    #[serde(default)]
    label: Option<String>,
}
