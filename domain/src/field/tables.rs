//! The field tables: each record kind's writable fields, declared once, in the documented
//! order that names the first failing guard. Adding a field to a kind is one line here (and
//! the record's field in `records.rs`); its parsing, guard, write, retry check, accepted
//! names, request and read schemas, discovery note, read shape and export columns follow.
//! A field's `note` is what the discovery document's `fieldNotes` say of it; a field without
//! one is described by its shape, or by another table's field of the same name.

use serde::ser::{Serialize, Serializer};

use super::{
    ColumnDescription, ColumnId, Deadline, DeadlineTime, Description, Folder, ItemText, Location,
    Name, Photo, Position, Priority, Stamp, TagTexts, TaskId, Title,
};
use crate::checks::Effort;
use crate::records::{ChecklistItem, Column, Project, Tag, Task};
use crate::repeat::Repeat;
use crate::writable_fields;

writable_fields! {
    /// The values a card's create or update may carry, each checked once.
    pub struct TaskFields for Task;
    specs TASK_FIELDS, names UPDATE_TASK_FIELDS;
    [moved] column_id: ColumnId = "columnId", note |_| "Required on create: the list the card \
        is in. A write that would move a subtask or a parent into another project answers 422 \
        naming columnId.".into();
    [plain] title: Title = "title", note |l| format!("Required on create, never empty; at most \
        {} characters, trimmed to fit.", l.title_chars);
    [plain] description: Description = "description", note |l| format!("Markdown on a card, at \
        most {} characters; plain text on a list, at most {}. Longer is refused with 422 and the \
        previous value stands. null reads back as \"\" on a card and as null on a list.",
        l.description_chars, l.column_description_chars);
    [plain] priority: Priority = "priority", note |_| "1 (highest) to 4, default 4; an integer \
        out of range is clamped, a non-integer answers 422.".into();
    [plain] effort: Option<Effort> = "effort", note |_| "easy, medium, hard or null.".into();
    [plain] deadline: Option<Deadline> = "deadline", note |_| "YYYY-MM-DD, a date that exists, \
        or null. Independent of deadlineTime.".into();
    [plain] deadline_time: Option<DeadlineTime> = "deadlineTime", note |_| "Strict HH:MM, \
        24-hour, no time zone, or null; anything else (such as 9:30) answers 422. A card with \
        only a time sorts and filters with undated cards.".into();
    [plain] location: Location = "location", note |l| format!("Free text of at most {} \
        characters, trimmed to fit; no geofence or reminder.", l.location_chars);
    [plain] parent_id: Option<TaskId> = "parentId", note |_| "Makes the card a subtask of a card \
        in the same project; null lifts it. One level deep: a subtask cannot be a parent and a \
        parent cannot become a subtask (422 naming the field).".into();
    [plain] position: Position = "position", note |_| "A finite decimal, echoed as given; reads \
        sort by (position, id). To insert between two records send a number between theirs; \
        nothing is renumbered. Omitted on create: the lowest among its siblings minus 1 (the \
        top). A checklist item's position is a 0-based index instead; omitted or past the end \
        appends.".into();
    [moved] tags: TagTexts = "tags", read tag_texts, show TagTextsView::of, note |l| format!(
        "Strings, at most {} per task, each non-empty and trimmed to {} characters. PATCH \
        replaces the list; a tag whose text stays keeps its id. Adding a tag the card has \
        (ignoring case) changes nothing.", l.tags_per_task, l.tag_chars);
    [plain] completed_at: Option<Stamp> = "completedAt", note |_| "ms or null. A PATCH \
        completing an open parent gives its still-open subtasks the same stamp; reopening \
        touches only the card. Accepted on create, without the cascade.".into();
    [moved] cancelled_at: Option<Stamp> = "cancelledAt", note |_| "Set when a card is deleted; \
        PATCH null restores it while its bin entry lasts. Accepted on create.".into();
    [plain] repeat: Option<Repeat> = "repeat", note |_| "null (the default) or {every, unit, \
        from}: every 1 to 365, unit day, week, month or year, from deadline (the rhythm of the \
        deadlines) or completion (the day the card was finished, UTC); else 422 naming repeat. \
        from: deadline needs a deadline (422 naming repeat; clearing it, 422 naming deadline). \
        A PATCH completing a repeating card also makes its next occurrence in the same step: an \
        open copy right after it in its list (checklist open, no comments, subtasks copied open) \
        with the next deadline, answered as `next` beside `task`. From the deadline, the next is \
        the first date of the rhythm after both the deadline and the day of completion; months \
        clamp to the month's end and keep the rhythm (31 Jan, 28 Feb, 31 Mar). POST /undo takes \
        back the completion and the occurrence in one step; a card created finished makes none."
        .into();
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
    [plain] name: Name = "name", note |l| format!("A project's or list's name: required on \
        create, never empty; at most {} characters, trimmed to fit.", l.name_chars);
    [plain] folder: Folder = "folder", note |l| format!("A project's folder: at most {} \
        characters, trimmed to fit; \"\" and null both mean none and read back as null.",
        l.folder_chars);
    [plain] position: Position = "position";
    [plain] archived_at: Option<Stamp> = "archivedAt", note |_| "ms or null, on projects and \
        columns. Archiving moves and deletes nothing; reads still return the record.".into();
    [plain] pinned_at: Option<Stamp> = "pinnedAt", note |_| "ms or null; the account's, the \
        same on every device. Clients list pinned projects newest-pinned first; nothing filters \
        on it.".into();
    [plain] photo: Option<Photo> = "photo", note |l| format!("A project's image as a base64 \
        data URL of a WebP, JPEG or PNG, checked by its bytes, at most {} characters; null \
        removes it; anything else answers 422 and nothing is saved.", l.photo_chars);
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
