//! A card's checklist, tags and comments: adding, the checklist's order and edits, and
//! removal (immediate and permanent).

use serde::Deserialize;
use serde_json::{Value, json};

use super::lists;
use super::{Ctx, Outcome};
use crate::checks;
use crate::error::WriteError;
pub use crate::field::{ITEM_UPDATE_FIELDS, ItemFields};
use crate::ids::{CommentId, IdKind, ItemId, TagId, TaskId};
use crate::input::Body;
use crate::limits::Limits;
use crate::records::{ChecklistItem, Comment, Kind, Tag, Task};

pub const TAG_FIELDS: &[&str] = &["id", "text"];
pub const COMMENT_FIELDS: &[&str] = &["id", "text"];
pub const CHECKLIST_FIELDS: &[&str] = &["id", "text", "done", "position", "items"];
pub const ORDER_FIELDS: &[&str] = &["ids"];

/// Which collection of a card an item id belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemKind {
    Checklist,
    Tag,
    Comment,
}

impl ItemKind {
    fn id_kind(self) -> IdKind {
        match self {
            ItemKind::Checklist => IdKind::ChecklistItem,
            ItemKind::Tag => IdKind::Tag,
            ItemKind::Comment => IdKind::Comment,
        }
    }
}

/// The item a removal names: its id, typed by the collection it belongs to.
#[derive(Debug, Clone, PartialEq)]
pub enum ItemRef {
    Checklist(ItemId),
    Tag(TagId),
    Comment(CommentId),
}

impl ItemRef {
    fn kind(&self) -> ItemKind {
        match self {
            ItemRef::Checklist(_) => ItemKind::Checklist,
            ItemRef::Tag(_) => ItemKind::Tag,
            ItemRef::Comment(_) => ItemKind::Comment,
        }
    }

    fn id(&self) -> &str {
        match self {
            ItemRef::Checklist(id) => id.as_str(),
            ItemRef::Tag(id) => id.as_str(),
            ItemRef::Comment(id) => id.as_str(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewItem {
    pub id: Option<ItemId>,
    pub text: String,
    pub done: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ItemCommand {
    AddTag {
        task_id: TaskId,
        id: Option<TagId>,
        text: String,
    },
    AddComment {
        task_id: TaskId,
        id: Option<CommentId>,
        text: String,
    },
    /// `position`: where a single item goes (`None` appends); `many`: the items form.
    AddChecklist {
        task_id: TaskId,
        items: Vec<NewItem>,
        position: Option<usize>,
        many: bool,
    },
    OrderChecklist {
        task_id: TaskId,
        ids: Vec<ItemId>,
    },
    UpdateChecklistItem {
        item_id: ItemId,
        fields: ItemFields,
    },
    Delete(ItemRef),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ItemsFormEntry {
    text: String,
    #[serde(default)]
    done: bool,
}

fn text_required(field: &str, text: Option<String>) -> Result<String, WriteError> {
    match text {
        Some(t) if !t.is_empty() => Ok(t),
        _ => Err(WriteError::invalid(
            field,
            format!("`{field}` is required and must not be empty"),
        )),
    }
}

/// The required `text` of an item the request creates. A guard's `before` is checked like a
/// written text, as on every create (empty is 422), and then left alone: a new item has no
/// prior value to compare it with.
fn created_text(body: &Body<'_>) -> Result<String, WriteError> {
    let (before, after) = match body.input::<String>("text")? {
        Some(input) => (input.before, Some(input.after)),
        None => (None, None),
    };
    if before.is_some() {
        text_required("text", before)?;
    }
    text_required("text", after)
}

/// The body's `id`, when the client names the new item, checked as an id of its kind.
fn checked_id<T>(
    body: &Body<'_>,
    parse: fn(String, &str) -> Result<T, WriteError>,
) -> Result<Option<T>, WriteError> {
    body.client_id()?.map(|id| parse(id, "id")).transpose()
}

/// Each form's body (`command::parse` makes it a command).
impl ItemCommand {
    pub fn read_tag(
        task_id: TaskId,
        bytes: &[u8],
        limits: &Limits,
    ) -> Result<ItemCommand, WriteError> {
        let body = Body::parse(bytes, TAG_FIELDS)?;
        let id = checked_id(&body, TagId::parse)?;
        let text = checks::trim_to(&created_text(&body)?, limits.tag_chars);
        Ok(ItemCommand::AddTag { task_id, id, text })
    }

    pub fn read_comment(
        task_id: TaskId,
        bytes: &[u8],
        limits: &Limits,
    ) -> Result<ItemCommand, WriteError> {
        let body = Body::parse(bytes, COMMENT_FIELDS)?;
        let id = checked_id(&body, CommentId::parse)?;
        let text = checks::prose("text", created_text(&body)?, limits.comment_chars)?;
        Ok(ItemCommand::AddComment { task_id, id, text })
    }

    pub fn read_checklist(
        task_id: TaskId,
        bytes: &[u8],
        limits: &Limits,
    ) -> Result<ItemCommand, WriteError> {
        let body = Body::parse(bytes, CHECKLIST_FIELDS)?;
        let trim = |t: String| checks::trim_to(&t, limits.checklist_item_chars);
        if body.has("items") {
            if let Some(other) = ["id", "text", "done", "position"]
                .into_iter()
                .find(|f| body.has(f))
            {
                return Err(WriteError::invalid(
                    other,
                    format!("`{other}` does not go beside `items`"),
                ));
            }
            // A card holds at most the checklist limit: a longer list is refused before the
            // rest of it is read (and the writer checks the card's own count).
            let max = limits.checklist_items_per_task;
            let entries: Vec<ItemsFormEntry> = match body.raw("items") {
                Some(raw) => {
                    lists::capped(raw, "items", max, || over("items", "checklist items", max))?
                }
                None => Vec::new(),
            };
            if entries.is_empty() {
                return Err(WriteError::invalid(
                    "items",
                    "`items` must hold at least one item",
                ));
            }
            let mut items = Vec::with_capacity(entries.len());
            for (i, e) in entries.into_iter().enumerate() {
                let text = text_required("text", Some(e.text)).map_err(|e| e.at_index(i))?;
                items.push(NewItem {
                    id: None,
                    text: trim(text),
                    done: e.done,
                });
            }
            return Ok(ItemCommand::AddChecklist {
                task_id,
                items,
                position: None,
                many: true,
            });
        }
        let id = checked_id(&body, ItemId::parse)?;
        let text = trim(created_text(&body)?);
        let done = body.after::<bool>("done")?.unwrap_or(false);
        let position = body
            .after::<serde_json::Number>("position")?
            .map(|n| {
                let whole = n.as_f64().filter(|f| f.fract() == 0.0 && *f >= 0.0);
                n.as_u64()
                    .or(whole.map(|f| f as u64))
                    .map(|p| p as usize)
                    .ok_or_else(|| {
                        WriteError::invalid(
                            "position",
                            "`position` is a 0-based index: a whole number, 0 or more",
                        )
                    })
            })
            .transpose()?;
        Ok(ItemCommand::AddChecklist {
            task_id,
            items: vec![NewItem { id, text, done }],
            position,
            many: false,
        })
    }

    /// `ids` names at most a card's checklist limit: a card has no more items to order.
    pub fn read_order(
        task_id: TaskId,
        bytes: &[u8],
        limits: &Limits,
    ) -> Result<ItemCommand, WriteError> {
        let body = Body::parse(bytes, ORDER_FIELDS)?;
        let raw = body
            .raw("ids")
            .ok_or_else(|| WriteError::invalid("ids", "`ids` is required"))?;
        let max = limits.checklist_items_per_task;
        let ids: Vec<ItemId> = lists::capped(raw, "ids", max, || {
            lists::at_most("ids", max, "ids: a card holds no more checklist items")
        })?;
        Ok(ItemCommand::OrderChecklist { task_id, ids })
    }

    pub fn read_item_update(
        item_id: ItemId,
        bytes: &[u8],
        limits: &Limits,
    ) -> Result<ItemCommand, WriteError> {
        let body = Body::parse(bytes, ITEM_UPDATE_FIELDS)?;
        Ok(ItemCommand::UpdateChecklistItem {
            item_id,
            fields: ItemFields::parse(&body, limits)?,
        })
    }
}

/// The live task holding item `item_id` of `kind`; 404 otherwise.
fn holder(ctx: &mut Ctx<'_>, kind: ItemKind, item_id: &str) -> Result<Task, WriteError> {
    if !kind.id_kind().is_valid(item_id) {
        return Err(WriteError::NotFound);
    }
    let task_id = ctx
        .store
        .item_task(&ctx.account, item_id)?
        .ok_or(WriteError::NotFound)?;
    ctx.get_live(&task_id)
}

/// An item of a card as read: a checklist item with its `position`, a tag, a comment.
fn item_json(task: &Task, id: &str) -> Option<Value> {
    if let Some((position, i)) = task.checklist.iter().enumerate().find(|(_, i)| i.id == id) {
        return Some(json!({"id": i.id, "text": i.text, "done": i.done, "position": position}));
    }
    if let Some(t) = task.tags.iter().find(|t| t.id == id) {
        return Some(json!({"id": t.id, "text": t.text}));
    }
    task.comments
        .iter()
        .find(|c| c.id == id)
        .map(|c| json!({"id": c.id, "text": c.text, "createdAt": c.created_at}))
}

/// A create naming an id some item of the account already uses: a safe retry (200, nothing
/// changes) when it is this card's item and every field sent matches, else 409 showing the
/// item. `None` when the id is free.
fn retry_or_conflict(
    ctx: &mut Ctx<'_>,
    task_id: &TaskId,
    id: Option<&str>,
    same: impl Fn(&Value) -> bool,
) -> Result<Option<Outcome>, WriteError> {
    let Some(id) = id else { return Ok(None) };
    let Some(holder) = ctx.store.item_task(&ctx.account, id)? else {
        return Ok(None);
    };
    let current = ctx
        .get::<Task>(&holder)?
        .and_then(|t| item_json(&t.value, id))
        .unwrap_or(Value::Null);
    if holder == task_id.as_str() && same(&current) {
        return Ok(Some(Outcome::ItemsAdded {
            task_id: task_id.as_str().to_owned(),
            ids: vec![id.to_owned()],
            created: false,
            many: false,
        }));
    }
    Err(WriteError::Conflict {
        message: format!("the id `{id}` is already in use"),
        field: "id".into(),
        current,
        record: None,
        index: None,
    })
}

fn over(field: &str, what: &str, max: usize) -> WriteError {
    WriteError::limit(field, format!("a task holds at most {max} {what}"))
}

/// Stores the changed task, stamped, and moves its project's `updatedAt`.
fn save(ctx: &mut Ctx<'_>, old: &Task, mut next: Task) -> Result<(), WriteError> {
    let (stamp, rev) = ctx.stamp()?;
    next.rev = rev;
    next.updated_at = stamp;
    let project_id = next.project_id.clone();
    ctx.put_task(Some(old), next)?;
    ctx.touch_project(&project_id)
}

pub fn execute(ctx: &mut Ctx<'_>, c: &ItemCommand) -> Result<Outcome, WriteError> {
    match c {
        ItemCommand::AddTag { task_id, id, text } => {
            let task: Task = ctx.get_live(task_id.as_str())?;
            let sent = id.as_ref().map(|id| id.as_str());
            if let Some(retry) = retry_or_conflict(ctx, task_id, sent, |c| c["text"] == **text)? {
                return Ok(retry);
            }
            let folded = text.to_lowercase();
            if let Some(same) = task.tags.iter().find(|t| t.text.to_lowercase() == folded) {
                return Ok(Outcome::ItemsAdded {
                    task_id: task_id.as_str().to_owned(),
                    ids: vec![same.id.clone()],
                    created: false,
                    many: false,
                });
            }
            if task.tags.len() >= ctx.limits.tags_per_task {
                return Err(over("tags", "tags", ctx.limits.tags_per_task));
            }
            let id = id.clone().unwrap_or_else(TagId::generate).into_inner();
            let mut next = task.clone();
            next.tags.push(Tag {
                id: id.clone(),
                text: text.clone(),
            });
            save(ctx, &task, next)?;
            Ok(Outcome::ItemsAdded {
                task_id: task_id.as_str().to_owned(),
                ids: vec![id],
                created: true,
                many: false,
            })
        }
        ItemCommand::AddComment { task_id, id, text } => {
            let task: Task = ctx.get_live(task_id.as_str())?;
            let sent = id.as_ref().map(|id| id.as_str());
            if let Some(retry) = retry_or_conflict(ctx, task_id, sent, |c| c["text"] == **text)? {
                return Ok(retry);
            }
            if task.comments.len() >= ctx.limits.comments_per_task {
                return Err(over("comments", "comments", ctx.limits.comments_per_task));
            }
            let id = id.clone().unwrap_or_else(CommentId::generate).into_inner();
            let (stamp, _) = ctx.stamp()?;
            let mut next = task.clone();
            next.comments.push(Comment {
                id: id.clone(),
                text: text.clone(),
                created_at: stamp,
            });
            save(ctx, &task, next)?;
            Ok(Outcome::ItemsAdded {
                task_id: task_id.as_str().to_owned(),
                ids: vec![id],
                created: true,
                many: false,
            })
        }
        ItemCommand::AddChecklist {
            task_id,
            items,
            position,
            many,
        } => {
            let task: Task = ctx.get_live(task_id.as_str())?;
            if let [item] = items.as_slice()
                && !*many
            {
                let same = |c: &Value| {
                    c["text"] == *item.text
                        && c["done"] == item.done
                        && position.is_none_or(|p| c["position"] == p)
                };
                if let Some(retry) =
                    retry_or_conflict(ctx, task_id, item.id.as_ref().map(ItemId::as_str), same)?
                {
                    return Ok(retry);
                }
            }
            if task.checklist.len() + items.len() > ctx.limits.checklist_items_per_task {
                return Err(over(
                    if *many { "items" } else { "checklist" },
                    "checklist items",
                    ctx.limits.checklist_items_per_task,
                ));
            }
            let mut fresh = Vec::with_capacity(items.len());
            for item in items {
                let id = item
                    .id
                    .clone()
                    .unwrap_or_else(ItemId::generate)
                    .into_inner();
                fresh.push(ChecklistItem {
                    id,
                    text: item.text.clone(),
                    done: item.done,
                });
            }
            let ids: Vec<String> = fresh.iter().map(|i| i.id.clone()).collect();
            let mut next = task.clone();
            let at = position.unwrap_or(usize::MAX).min(next.checklist.len());
            next.checklist.splice(at..at, fresh);
            save(ctx, &task, next)?;
            Ok(Outcome::ItemsAdded {
                task_id: task_id.as_str().to_owned(),
                ids,
                created: true,
                many: *many,
            })
        }
        ItemCommand::OrderChecklist { task_id, ids } => {
            let task: Task = ctx.get_live(task_id.as_str())?;
            // One pass over each list, whatever their lengths: each item's place by its id,
            // taken once (a repeated or unknown id is passed over).
            let mut at: ahash::AHashMap<&str, usize> = task
                .checklist
                .iter()
                .enumerate()
                .map(|(n, i)| (i.id.as_str(), n))
                .collect();
            let mut ordered: Vec<ChecklistItem> = Vec::with_capacity(task.checklist.len());
            for id in ids {
                if let Some(n) = at.remove(id.as_str()) {
                    ordered.push(task.checklist[n].clone());
                }
            }
            // Items left out keep their relative place, after the ones listed.
            for item in &task.checklist {
                if at.contains_key(item.id.as_str()) {
                    ordered.push(item.clone());
                }
            }
            if ordered != task.checklist {
                let mut next = task.clone();
                next.checklist = ordered;
                save(ctx, &task, next)?;
            }
            Ok(Outcome::Updated {
                kind: Kind::Task,
                id: task_id.as_str().to_owned(),
            })
        }
        ItemCommand::UpdateChecklistItem { item_id, fields } => {
            let task = holder(ctx, ItemKind::Checklist, item_id.as_str())?;
            let at = task
                .checklist
                .iter()
                .position(|i| *item_id == i.id)
                .ok_or(WriteError::NotFound)?;
            let current = &task.checklist[at];
            if let Some(e) = fields.conflict(current) {
                return Err(e);
            }
            let mut next = task.clone();
            fields.apply(&mut next.checklist[at]);
            if next != task {
                save(ctx, &task, next)?;
            }
            Ok(Outcome::ItemUpdated {
                task_id: task.id.clone(),
                item_id: item_id.as_str().to_owned(),
            })
        }
        ItemCommand::Delete(item) => {
            let (kind, item_id) = (item.kind(), item.id());
            let task = holder(ctx, kind, item_id)?;
            let mut next = task.clone();
            match kind {
                ItemKind::Checklist => next.checklist.retain(|i| i.id != *item_id),
                ItemKind::Tag => next.tags.retain(|i| i.id != *item_id),
                ItemKind::Comment => next.comments.retain(|i| i.id != *item_id),
            }
            if next == task {
                return Err(WriteError::NotFound);
            }
            save(ctx, &task, next)?;
            Ok(Outcome::Deleted {
                id: item_id.to_owned(),
                count: 1,
            })
        }
    }
}
