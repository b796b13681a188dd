//! Request bodies: closed to unknown fields, every writable field bare or guarded.

use salvo::oapi::ToSchema;
use serde::Deserialize;

use super::*;

/// A column given on project create: its name, or its fields.
#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "ColumnSeed"))]
#[serde(untagged)]
pub enum ColumnSeed {
    Name(String),
    Fields(ColumnNested),
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
#[salvo(schema(name = "KeyCreate"))]
#[serde(deny_unknown_fields)]
#[serde(rename_all = "camelCase")]
pub struct KeyCreate {
    #[serde(default)]
    label: Option<String>,
    /// `full` (default), `read` or `calendar` (only the calendar feed, `?key=` in its URL).
    /// A read or calendar key cannot issue or revoke keys.
    #[serde(default)]
    access: Option<KeyAccessName>,
    /// When the key stops working, ms since the epoch; must be in the future (else 422
    /// naming `expiresAt`). Omitted or null: never. At expiry the key answers 401, its
    /// tickets die and its sockets close with 4401. Sent with a key that expires, the new
    /// key expires no later: omitted, it takes the sending key's expiry; later than that,
    /// or null, answers 422 naming `expiresAt`.
    #[serde(default)]
    expires_at: Option<i64>,
}
