//! The read shapes (contract: Shapes), serialised straight from the records: each kind's
//! writable fields as its field table shows them (`domain::field`), around them the
//! ids, stamps and nested collections, a task's computed `order` and `tagIds`, and checklist
//! positions as indexes.

use domain::field::{ColumnFields, ItemFields, ProjectFields, TaskFields};
use domain::records::{ChecklistItem, Column, Comment, Project, Task};
use serde::ser::{Serialize, SerializeStruct, Serializer};

/// A task as read, with its `order` among the project's live tasks.
pub struct TaskView<'a> {
    pub task: &'a Task,
    pub order: usize,
}

/// A card's tag ids, in the order of its `tags`.
struct TagIds<'a>(&'a Task);
impl Serialize for TagIds<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.tags.iter().map(|t| &t.id))
    }
}

struct Items<'a>(&'a [ChecklistItem]);
impl Serialize for Items<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(
            self.0
                .iter()
                .enumerate()
                .map(|(i, item)| ItemView { item, position: i }),
        )
    }
}

/// A checklist item as read: its `position` is its index.
pub struct ItemView<'a> {
    pub item: &'a ChecklistItem,
    pub position: usize,
}
impl Serialize for ItemView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("ChecklistItem", 4)?;
        st.serialize_field("id", &self.item.id)?;
        ItemFields::serialize_fields(self.item, &mut st)?;
        st.serialize_field("position", &self.position)?;
        st.end()
    }
}

impl Serialize for TaskView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let t = self.task;
        let mut st = s.serialize_struct("Task", 22)?;
        st.serialize_field("id", &t.id)?;
        st.serialize_field("projectId", &t.project_id)?;
        TaskFields::serialize_fields(t, &mut st)?;
        st.serialize_field("rev", &t.rev)?;
        st.serialize_field("order", &self.order)?;
        st.serialize_field("updatedAt", &t.updated_at)?;
        st.serialize_field("tagIds", &TagIds(t))?;
        st.serialize_field("checklist", &Items(&t.checklist))?;
        st.serialize_field("comments", &CommentsView(&t.comments))?;
        st.end()
    }
}

struct CommentsView<'a>(&'a [Comment]);
impl Serialize for CommentsView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter())
    }
}

/// A column as read; `tasks` is `None` where the shape carries no nested cards (`/changes`).
pub struct ColumnView<'a> {
    pub column: &'a Column,
    pub tasks: Option<Vec<TaskView<'a>>>,
    pub deleted_at: Option<i64>,
}

impl Serialize for ColumnView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let c = self.column;
        let mut st = s.serialize_struct("Column", 8)?;
        st.serialize_field("id", &c.id)?;
        st.serialize_field("projectId", &c.project_id)?;
        ColumnFields::serialize_fields(c, &mut st)?;
        st.serialize_field("updatedAt", &c.updated_at)?;
        if let Some(d) = self.deleted_at {
            st.serialize_field("deletedAt", &d)?;
        }
        if let Some(tasks) = &self.tasks {
            st.serialize_field("tasks", tasks)?;
        }
        st.end()
    }
}

/// A project as read; `columns` is `None` where the shape carries no nested lists.
pub struct ProjectView<'a> {
    pub project: &'a Project,
    pub columns: Option<Vec<ColumnView<'a>>>,
    pub deleted_at: Option<i64>,
}

impl Serialize for ProjectView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let p = self.project;
        let mut st = s.serialize_struct("Project", 10)?;
        st.serialize_field("id", &p.id)?;
        ProjectFields::serialize_fields(p, &mut st)?;
        st.serialize_field("updatedAt", &p.updated_at)?;
        if let Some(d) = self.deleted_at {
            st.serialize_field("deletedAt", &d)?;
        }
        if let Some(columns) = &self.columns {
            st.serialize_field("columns", columns)?;
        }
        st.end()
    }
}
