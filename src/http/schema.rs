//! The shapes of the OpenAPI document: request bodies (closed to unknown fields, every
//! writable field bare or guarded) and replies, as the specification and contract set them.
//! These types exist for the document only; handlers decode bodies with the write model and
//! serialise replies from the read model.

#![allow(dead_code)]

use std::marker::PhantomData;

use salvo::oapi::schema::{
    AdditionalProperties, BasicType, KnownFormat, Object, OneOf, Schema, SchemaFormat,
};
use salvo::oapi::{Components, RefOr, ToSchema};
use serde::Deserialize;
use serde_json::Value;

/// A writable field: the bare value, or `{before, after}`, which lands only while the field
/// holds `before` (409 otherwise).
pub struct Guarded<T>(PhantomData<T>);

impl<T> Default for Guarded<T> {
    fn default() -> Self {
        Guarded(PhantomData)
    }
}

/// Document-only types derive `Deserialize` so serde's container attributes reach the schema
/// derive (`deny_unknown_fields` becomes `additionalProperties: false`, `default` optional).
impl<'de, T> Deserialize<'de> for Guarded<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        serde::de::IgnoredAny::deserialize(d)?;
        Ok(Guarded(PhantomData))
    }
}

impl<T: ToSchema> ToSchema for Guarded<T> {
    fn to_schema(components: &mut Components) -> RefOr<Schema> {
        let guard = Object::new()
            .property("before", T::to_schema(components))
            .property("after", T::to_schema(components))
            .required("after")
            .additional_properties(AdditionalProperties::FreeForm(false));
        OneOf::new()
            .item(T::to_schema(components))
            .item(guard)
            .into()
    }
}

/// A string schema with constraints, for the document only.
macro_rules! string_schema {
    ($(#[$doc:meta])* $name:ident => |$o:ident| $build:expr) => {
        $(#[$doc])*
        pub struct $name;

        impl ToSchema for $name {
            fn to_schema(_: &mut Components) -> RefOr<Schema> {
                let $o = Object::with_type(BasicType::String);
                Schema::Object(Box::new($build)).into()
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                serde::de::IgnoredAny::deserialize(d)?;
                Ok($name)
            }
        }
    };
}

string_schema!(
    /// A required name or title: not empty; trimmed to fit.
    NonEmpty => |o| o.min_length(1)
);
string_schema!(
    /// `YYYY-MM-DD`, a date that exists.
    Date => |o| o.format(SchemaFormat::KnownFormat(KnownFormat::Date)).pattern("^[0-9]{4}-[0-9]{2}-[0-9]{2}$")
);
string_schema!(
    /// `HH:MM`, 24-hour.
    Time => |o| o.pattern("^([01][0-9]|2[0-3]):[0-5][0-9]$")
);
string_schema!(
    /// Which finished cards a read includes.
    CompletedView => |o| o.enum_values(["none", "recent", "all"])
);
string_schema!(
    /// `changed`: `taskIds` covers only the projects in the reply.
    Manifest => |o| o.enum_values(["changed"])
);
string_schema!(
    /// A base64 data URL of a WebP, JPEG or PNG image (checked by its bytes), at most 24,576
    /// characters.
    Photo => |o| o.pattern("^data:image/(png|jpeg|webp);base64,[A-Za-z0-9+/]*={0,2}$").max_length(24_576)
);
string_schema!(
    /// Whole digits only.
    Digits => |o| o.pattern("^[0-9]{1,15}$")
);

/// A card's tags: at most 5 non-empty texts.
pub struct TagList;

impl ToSchema for TagList {
    fn to_schema(components: &mut Components) -> RefOr<Schema> {
        Schema::Array(
            salvo::oapi::schema::Array::new()
                .items(NonEmpty::to_schema(components))
                .max_items(5),
        )
        .into()
    }
}

impl<'de> Deserialize<'de> for TagList {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        serde::de::IgnoredAny::deserialize(d)?;
        Ok(TagList)
    }
}

type Text = Guarded<String>;
type NullableText = Guarded<Option<String>>;
type Stamp = Guarded<Option<i64>>;
type Number = Guarded<f64>;

/// `effort`: one of these, or null.
#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "Effort"))]
#[serde(rename_all = "lowercase")]
pub enum Effort {
    Easy,
    Medium,
    Hard,
}

// ---------- request bodies ----------

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

// ---------- replies ----------

/// Every error but 403: `{ok: false, error}` and what the status adds.
#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "Error"))]
#[serde(rename_all = "camelCase")]
pub struct ErrorBody {
    ok: bool,
    error: String,
    /// 409, 422: the field at fault.
    field: Option<String>,
    /// 422 on an unknown field: the fields the route accepts.
    accepted: Option<Vec<String>>,
    /// 409, 422 in a batch: the 0-based entry at fault.
    index: Option<i64>,
    /// 409: the field's (or the record's) current value.
    current: Option<Value>,
    /// 413: `storage-bytes` or `body-bytes`.
    limit: Option<String>,
    /// 429: when the allowance or window resets, in ms.
    resets_at: Option<i64>,
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "AccountDocument"))]
pub struct AccountDocument {
    version: i64,
    now: i64,
    projects: Vec<ProjectRead>,
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "Project"))]
#[serde(rename_all = "camelCase")]
pub struct ProjectRead {
    id: String,
    name: String,
    folder: Option<String>,
    position: f64,
    archived_at: Option<i64>,
    pinned_at: Option<i64>,
    photo: Option<String>,
    updated_at: i64,
    columns: Vec<ColumnRead>,
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "Column"))]
#[serde(rename_all = "camelCase")]
pub struct ColumnRead {
    id: String,
    project_id: String,
    name: String,
    description: Option<String>,
    position: f64,
    archived_at: Option<i64>,
    updated_at: i64,
    tasks: Vec<TaskRead>,
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "Task"))]
#[serde(rename_all = "camelCase")]
pub struct TaskRead {
    id: String,
    project_id: String,
    column_id: String,
    title: String,
    description: String,
    priority: i64,
    effort: Option<Effort>,
    deadline: Option<String>,
    deadline_time: Option<String>,
    location: String,
    parent_id: Option<String>,
    position: f64,
    completed_at: Option<i64>,
    cancelled_at: Option<i64>,
    rev: i64,
    order: i64,
    updated_at: i64,
    tags: Vec<String>,
    tag_ids: Vec<String>,
    checklist: Vec<ChecklistItemRead>,
    comments: Vec<CommentRead>,
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "ChecklistItem"))]
pub struct ChecklistItemRead {
    id: String,
    text: String,
    done: bool,
    position: i64,
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "Comment"))]
#[serde(rename_all = "camelCase")]
pub struct CommentRead {
    id: String,
    text: String,
    created_at: i64,
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "ProjectWritten"))]
pub struct ProjectWritten {
    ok: bool,
    id: Option<String>,
    project: ProjectRead,
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "ColumnWritten"))]
pub struct ColumnWritten {
    ok: bool,
    id: Option<String>,
    column: ColumnRead,
}

/// A task after a write (`id` on create; `ids` for the checklist's items form).
#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "TaskWritten"))]
pub struct TaskWritten {
    ok: bool,
    id: Option<String>,
    ids: Option<Vec<String>>,
    task: TaskRead,
}

/// `POST /tasks`: one card (`{ok, id, task}`) or a batch (`{ok, created, rev, ids}`).
#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "TaskCreated"))]
#[serde(untagged)]
pub enum TaskCreated {
    One(Box<TaskWritten>),
    Batch(BatchCreated),
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "BatchCreated"))]
pub struct BatchCreated {
    ok: bool,
    created: i64,
    rev: i64,
    ids: Vec<String>,
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "ItemWritten"))]
pub struct ItemWritten {
    ok: bool,
    item: ChecklistItemRead,
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "Deleted"))]
pub struct Deleted {
    ok: bool,
    id: String,
    /// Records removed, descendants included.
    deleted: i64,
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "PositionsWritten"))]
pub struct PositionsWritten {
    ok: bool,
    changed: bool,
    moved: i64,
}

/// `GET /changes`: the difference since `since`, or `{unchanged, now}` for an idle poll.
#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "ChangesReply"))]
#[serde(untagged)]
pub enum ChangesReply {
    Unchanged(Unchanged),
    Changes(Changes),
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "Unchanged"))]
#[serde(deny_unknown_fields)]
pub struct Unchanged {
    unchanged: bool,
    now: i64,
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "Changes"))]
#[serde(rename_all = "camelCase")]
pub struct Changes {
    projects: Vec<ProjectChange>,
    lists: Vec<ListChange>,
    cards: Vec<TaskRead>,
    now: i64,
    task_ids: Vec<String>,
    /// `recent`, `all` or `none`.
    window: String,
    cutoff: i64,
    scoped: Option<bool>,
}

/// A changed project or list in its read shape without nested records; a deleted one
/// carries `deletedAt` (a destroyed one only `id`, `deletedAt` and, for lists, `projectId`).
#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "ProjectChange"))]
#[serde(rename_all = "camelCase")]
pub struct ProjectChange {
    id: String,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    folder: Option<String>,
    #[serde(default)]
    position: Option<f64>,
    #[serde(default)]
    archived_at: Option<i64>,
    #[serde(default)]
    pinned_at: Option<i64>,
    #[serde(default)]
    photo: Option<String>,
    #[serde(default)]
    updated_at: Option<i64>,
    #[serde(default)]
    deleted_at: Option<i64>,
}

/// A changed list: as [`ProjectChange`], for columns.
#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "ListChange"))]
#[serde(rename_all = "camelCase")]
pub struct ListChange {
    id: String,
    #[serde(default)]
    project_id: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    position: Option<f64>,
    #[serde(default)]
    archived_at: Option<i64>,
    #[serde(default)]
    updated_at: Option<i64>,
    #[serde(default)]
    deleted_at: Option<i64>,
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "TaskReply"))]
pub struct TaskReply {
    ok: bool,
    task: TaskRead,
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "Bin"))]
pub struct Bin {
    ok: bool,
    entries: Vec<BinEntry>,
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "BinEntry"))]
#[serde(rename_all = "camelCase")]
pub struct BinEntry {
    id: String,
    /// `project`, `column` or `task`.
    kind: String,
    deleted_at: i64,
    label: String,
    count: i64,
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "Restored"))]
pub struct Restored {
    ok: bool,
    id: String,
    restored: i64,
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "Purged"))]
pub struct Purged {
    ok: bool,
    purged: i64,
    freed: i64,
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "UndoReply"))]
pub struct UndoReply {
    ok: bool,
    undone: bool,
    change: Option<UndoChange>,
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "UndoChange"))]
pub struct UndoChange {
    kind: String,
    id: String,
    fields: Vec<String>,
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "Usage"))]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    ok: bool,
    used: i64,
    limit: i64,
    purgeable: i64,
    reads: Allowance,
    writes: Allowance,
    resets_at: i64,
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "Allowance"))]
pub struct Allowance {
    used: i64,
    limit: i64,
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "Keys"))]
pub struct Keys {
    ok: bool,
    keys: Vec<KeyRead>,
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "Key"))]
#[serde(rename_all = "camelCase")]
pub struct KeyRead {
    id: String,
    label: Option<String>,
    /// The first 8 characters of the key.
    prefix: String,
    created_at: i64,
    last_used_at: Option<i64>,
    /// Whether this is the calling key.
    current: bool,
}

/// The key is shown this once.
#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "KeyCreated"))]
#[serde(rename_all = "camelCase")]
pub struct KeyCreated {
    ok: bool,
    id: String,
    key: String,
    label: Option<String>,
    created_at: i64,
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "KeyRevoked"))]
pub struct KeyRevoked {
    ok: bool,
    id: String,
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "Ticket"))]
#[serde(rename_all = "camelCase")]
pub struct Ticket {
    ok: bool,
    ticket: String,
    expires_at: i64,
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "Health"))]
pub struct Health {
    ok: bool,
    /// `normal`, or `read-only` while the store cannot take writes.
    mode: String,
}
