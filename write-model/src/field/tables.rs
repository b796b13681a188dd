//! The field tables: each record kind's writable fields, declared once, in the documented
//! order that names the first failing guard. Adding a field to a kind is one line here (and
//! the record's field in `records.rs`); its parsing, guard, write, retry check, accepted
//! names, document and read shape follow.

use serde::ser::{Serialize, Serializer};

use super::{
    ColumnDescription, ColumnId, Deadline, DeadlineTime, Description, Folder, ItemText, Location,
    Name, Photo, Position, Priority, Stamp, TagTexts, TaskId, Title,
};
use crate::checks::Effort;
use crate::records::{ChecklistItem, Column, Project, Tag, Task};
use crate::writable_fields;

writable_fields! {
    /// The values a card's create or update may carry, each checked once.
    pub struct TaskFields for Task;
    specs TASK_FIELDS, names UPDATE_TASK_FIELDS;
    [moved] column_id: ColumnId = "columnId";
    [plain] title: Title = "title";
    [plain] description: Description = "description";
    [plain] priority: Priority = "priority";
    [plain] effort: Option<Effort> = "effort";
    [plain] deadline: Option<Deadline> = "deadline";
    [plain] deadline_time: Option<DeadlineTime> = "deadlineTime";
    [plain] location: Location = "location";
    [plain] parent_id: Option<TaskId> = "parentId";
    [plain] position: Position = "position";
    [moved] tags: TagTexts = "tags", read tag_texts, show TagTextsView::of;
    [plain] completed_at: Option<Stamp> = "completedAt";
    [moved] cancelled_at: Option<Stamp> = "cancelledAt";
}

/// A card's tag texts, as its guards compare them.
fn tag_texts(t: &Task) -> Vec<String> {
    t.tags.iter().map(|tag| tag.text.clone()).collect()
}

/// A card's tags as reads show them: their texts (`tagIds` carries their ids beside).
pub struct TagTextsView<'a>(pub &'a [Tag]);

impl<'a> TagTextsView<'a> {
    fn of(t: &'a Task) -> Self {
        TagTextsView(&t.tags)
    }
}

impl Serialize for TagTextsView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(|t| &t.text))
    }
}

writable_fields! {
    /// The values a project's create or update may carry, each checked once.
    pub struct ProjectFields for Project;
    specs PROJECT_FIELDS, names UPDATE_PROJECT_FIELDS;
    [plain] name: Name = "name";
    [plain] folder: Folder = "folder";
    [plain] position: Position = "position";
    [plain] archived_at: Option<Stamp> = "archivedAt";
    [plain] pinned_at: Option<Stamp> = "pinnedAt";
    [plain] photo: Option<Photo> = "photo";
}

writable_fields! {
    /// The values a column's create or update may carry, each checked once.
    pub struct ColumnFields for Column;
    specs COLUMN_FIELDS, names UPDATE_COLUMN_FIELDS;
    [plain] name: Name = "name";
    [plain] description: Option<ColumnDescription> = "description";
    [plain] position: Position = "position";
    [plain] archived_at: Option<Stamp> = "archivedAt";
}

writable_fields! {
    /// The values a checklist item's update may carry, each checked once.
    pub struct ItemFields for ChecklistItem;
    specs ITEM_FIELDS, names ITEM_UPDATE_FIELDS;
    [plain] text: ItemText = "text";
    [plain] done: bool = "done";
}
