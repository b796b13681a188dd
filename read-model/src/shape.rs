//! The read shapes (contract: Shapes), serialised straight from the records: a task with its
//! computed `order`, `tags` as texts beside `tagIds`, checklist positions as indexes.

use serde::ser::{Serialize, SerializeStruct, Serializer};
use write_model::records::{ChecklistItem, Column, Comment, Project, Task};

/// Positions are doubles echoed as given: a whole number reads back without a fraction.
pub fn position<S: Serializer>(p: &f64, s: S) -> Result<S::Ok, S::Error> {
    if p.fract() == 0.0 && p.abs() < 9.0e15 {
        s.serialize_i64(*p as i64)
    } else {
        s.serialize_f64(*p)
    }
}

struct Pos(f64);
impl Serialize for Pos {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        position(&self.0, s)
    }
}

/// A task as read, with its `order` among the project's live tasks.
pub struct TaskView<'a> {
    pub task: &'a Task,
    pub order: usize,
}

struct Texts<'a>(&'a Task, bool);
impl Serialize for Texts<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(
            self.0
                .tags
                .iter()
                .map(|t| if self.1 { &t.id } else { &t.text }),
        )
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
        st.serialize_field("text", &self.item.text)?;
        st.serialize_field("done", &self.item.done)?;
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
        st.serialize_field("columnId", &t.column_id)?;
        st.serialize_field("title", &t.title)?;
        st.serialize_field("description", &t.description)?;
        st.serialize_field("priority", &t.priority)?;
        st.serialize_field("effort", &t.effort)?;
        st.serialize_field("deadline", &t.deadline)?;
        st.serialize_field("deadlineTime", &t.deadline_time)?;
        st.serialize_field("location", &t.location)?;
        st.serialize_field("parentId", &t.parent_id)?;
        st.serialize_field("position", &Pos(t.position))?;
        st.serialize_field("completedAt", &t.completed_at)?;
        st.serialize_field("cancelledAt", &t.cancelled_at)?;
        st.serialize_field("rev", &t.rev)?;
        st.serialize_field("order", &self.order)?;
        st.serialize_field("updatedAt", &t.updated_at)?;
        st.serialize_field("tags", &Texts(t, false))?;
        st.serialize_field("tagIds", &Texts(t, true))?;
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
        st.serialize_field("name", &c.name)?;
        st.serialize_field("description", &c.description)?;
        st.serialize_field("position", &Pos(c.position))?;
        st.serialize_field("archivedAt", &c.archived_at)?;
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
        st.serialize_field("name", &p.name)?;
        st.serialize_field("folder", &p.folder)?;
        st.serialize_field("position", &Pos(p.position))?;
        st.serialize_field("archivedAt", &p.archived_at)?;
        st.serialize_field("pinnedAt", &p.pinned_at)?;
        st.serialize_field("photo", &p.photo)?;
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
