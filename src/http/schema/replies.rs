//! Replies: the write replies of the contract, around the read shapes of the records (built
//! from the field tables in [`super::reads`]).

use salvo::oapi::ToSchema;
use serde::Deserialize;
use serde_json::Value;

use super::{ChecklistItemRead, ColumnRead, ListChange, ProjectChange, ProjectRead, TaskRead};

/// Every error but the edge's 403: `{ok: false, error, code}` and what the status adds;
/// `code` is stable, from the table the discovery document lists.
#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "Error"))]
#[serde(rename_all = "camelCase")]
pub struct ErrorBody {
    ok: bool,
    error: String,
    code: super::ErrorCodeName,
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
    /// 422 from a Trello import: what does not fit, the first hundred.
    problems: Option<Vec<ImportProblem>>,
    /// 422 from a Trello import: how many problems were found past those listed.
    more: Option<i64>,
}

/// Something of a Trello board that does not fit Workboard's limits.
#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "ImportProblem"))]
pub struct ImportProblem {
    /// The card's name in Trello, when the problem is a card's.
    card: Option<String>,
    /// The list's name in Trello: the card's list, or the list the problem is about.
    list: Option<String>,
    message: String,
}

/// `POST /import`: what was made.
#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "Imported"))]
#[serde(rename_all = "camelCase")]
pub struct Imported {
    ok: bool,
    projects: i64,
    columns: i64,
    tasks: i64,
    /// The projects' ids, in the file's order (new ones for a Trello board).
    project_ids: Vec<String>,
    /// What a lenient Trello import left out, the first hundred; empty otherwise.
    skipped: Vec<ImportProblem>,
    /// How many more things it left out past those listed.
    more_skipped: i64,
}

/// `GET /search`: one page of hits, best first.
#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "SearchReply"))]
pub struct SearchReply {
    ok: bool,
    /// Every card that matches, on every page.
    total: i64,
    hits: Vec<SearchHit>,
    /// Present when more hits follow: send it back as `cursor` for the next page.
    cursor: Option<String>,
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "SearchHit"))]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    /// The card as a read shapes it.
    task: TaskRead,
    project_id: String,
    /// BM25 relevance (higher is better); a title match ranks above any match elsewhere.
    score: f64,
    /// Per field that matched (`title`, `description`, `location`, `tags`, `checklist`,
    /// `comments`): up to 3 snippets of at most 160 characters of text, HTML-escaped, the
    /// matched words in `<mark>`.
    highlights: std::collections::BTreeMap<String, Vec<String>>,
}

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "AccountDocument"))]
pub struct AccountDocument {
    version: i64,
    now: i64,
    projects: Vec<ProjectRead>,
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

#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "TaskReply"))]
pub struct TaskReply {
    ok: bool,
    task: TaskRead,
}

/// `PATCH /tasks/:id`: the card after the write, and `next` when the write completed a
/// repeating card: its next occurrence, made in the same step.
#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "TaskUpdated"))]
pub struct TaskUpdated {
    ok: bool,
    task: TaskRead,
    /// Present only when this write completed a card whose `repeat` is set: the card made as
    /// its next occurrence (right after it, open, with the next deadline).
    next: Option<TaskRead>,
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
    access: KeyAccessName,
    /// When the key stops working (ms); null: never. An expired key is listed until revoked.
    expires_at: Option<i64>,
}

/// A key's access: `full` (everything), `read` (every GET, `/changes`, `POST /live/ticket`
/// and the socket; any other write answers 403 `read_only_key`) or `calendar` (only
/// `GET /calendar.ics`, where it may be passed as `?key=`; every other route answers 403
/// `calendar_key`).
#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "KeyAccess"))]
#[serde(rename_all = "lowercase")]
pub enum KeyAccessName {
    Full,
    Read,
    Calendar,
}

/// The key is shown this once.
#[derive(ToSchema, Deserialize)]
#[salvo(schema(name = "KeyCreated"))]
#[serde(rename_all = "camelCase")]
pub struct KeyCreated {
    ok: bool,
    id: String,
    /// The key itself, shown this once. A replay of the creation (the same
    /// `Idempotency-Key`) answers `null`: only the key's HMAC digest is stored,
    /// so the key cannot be told again.
    key: Option<String>,
    label: Option<String>,
    created_at: i64,
    access: KeyAccessName,
    expires_at: Option<i64>,
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
