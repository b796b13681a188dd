//! Serialising an account's records into replies: the cached per-project fragments of
//! whole-account reads, and single records for write replies.

use ahash::AHashMap;
use bytes::Bytes;
use write_model::records::{Column, Record, Task};

use std::sync::Arc;

use crate::Completed;
use crate::doc::{AccountDoc, Fragment, ProjectEntry};
use crate::encoded::Piece;
use crate::shape::{ColumnView, ProjectView, TaskView};

impl AccountDoc {
    /// The serialised project (with its columns and the cards of the view), from the cache
    /// when nothing in it changed.
    pub fn fragment(&self, id: &str, view: Completed, now: i64, window_ms: i64) -> Option<Bytes> {
        self.fragment_piece(id, view, now, window_ms)
            .map(|p| p.bytes.clone())
    }

    /// [`Self::fragment`] as a cached piece, whose compressed forms live as long as it does.
    pub fn fragment_piece(
        &self,
        id: &str,
        view: Completed,
        now: i64,
        window_ms: i64,
    ) -> Option<Arc<Piece>> {
        let entry = self.projects.get(id)?;
        let slot = view as usize;
        if let Some(f) = &entry.fragments.lock()[slot]
            && now < f.expires_at
        {
            return Some(f.piece.clone());
        }
        let fragment = self.render(entry, view, now - window_ms, window_ms);
        let piece = fragment.piece.clone();
        entry.fragments.lock()[slot] = Some(fragment);
        Some(piece)
    }

    /// The project's live tasks in (position, id) order: the order `order` counts in.
    pub(crate) fn sorted_tasks<'a>(
        &'a self,
        entry: &'a ProjectEntry,
    ) -> impl Iterator<Item = &'a Task> + 'a {
        entry
            .tasks
            .iter()
            .filter_map(|(_, id)| self.tasks.get(id).map(|t| &**t))
    }

    fn render(
        &self,
        entry: &ProjectEntry,
        view: Completed,
        cutoff: i64,
        window_ms: i64,
    ) -> Fragment {
        let mut expires_at = i64::MAX;
        let mut by_column: AHashMap<&str, Vec<TaskView<'_>>> = AHashMap::new();
        for (order, task) in self.sorted_tasks(entry).enumerate() {
            let shown = match (view, task.completed_at) {
                (_, None) | (Completed::All, _) => true,
                (Completed::None, Some(_)) => false,
                (Completed::Recent, Some(done)) => {
                    if done >= cutoff {
                        expires_at = expires_at.min(done.saturating_add(window_ms));
                    }
                    done >= cutoff
                }
            };
            if shown {
                by_column
                    .entry(task.column_id.as_str())
                    .or_default()
                    .push(TaskView { task, order });
            }
        }
        let mut columns: Vec<&Column> = entry
            .columns
            .iter()
            .filter_map(|id| self.columns.get(id))
            .collect();
        columns.sort_by(|a, b| {
            a.position
                .total_cmp(&b.position)
                .then_with(|| a.id.cmp(&b.id))
        });
        let view = ProjectView {
            project: &entry.project,
            columns: Some(
                columns
                    .into_iter()
                    .map(|column| ColumnView {
                        column,
                        tasks: Some(by_column.remove(column.id.as_str()).unwrap_or_default()),
                        deleted_at: None,
                    })
                    .collect(),
            ),
            deleted_at: None,
        };
        let bytes = serde_json::to_vec(&view).expect("a project always serialises");
        Fragment {
            piece: Piece::shared(Bytes::from(bytes)),
            expires_at,
        }
    }

    /// A live task as read, with its `order`.
    pub fn task_json(&self, id: &str) -> Option<Bytes> {
        let task = self.tasks.get(id)?;
        let entry = self.projects.get(&task.project_id)?;
        let order = entry.order_of(task).unwrap_or(0);
        Some(task_bytes(&TaskView { task, order }))
    }

    /// A deleted card as read (for the reply of the write that deleted it).
    pub fn binned_task_json(&self, id: &str) -> Option<Bytes> {
        match self.binned.get(id).map(|b| &b.record) {
            Some(Record::Task(task)) => Some(task_bytes(&TaskView { task, order: 0 })),
            _ => None,
        }
    }

    /// A checklist item as read: `{id, text, done, position}`.
    pub fn checklist_item_json(&self, task_id: &str, item_id: &str) -> Option<Bytes> {
        let task = self.tasks.get(task_id)?;
        let position = task.checklist.iter().position(|i| i.id == item_id)?;
        let view = crate::shape::ItemView {
            item: &task.checklist[position],
            position,
        };
        Some(Bytes::from(
            serde_json::to_vec(&view).expect("an item always serialises"),
        ))
    }

    /// A live column as read, with its open cards.
    pub fn column_json(&self, id: &str) -> Option<Bytes> {
        let column = self.columns.get(id)?;
        let entry = self.projects.get(&column.project_id)?;
        let tasks = self
            .sorted_tasks(entry)
            .enumerate()
            .filter(|(_, t)| t.column_id == id && t.completed_at.is_none())
            .map(|(order, task)| TaskView { task, order })
            .collect();
        let view = ColumnView {
            column,
            tasks: Some(tasks),
            deleted_at: None,
        };
        Some(Bytes::from(
            serde_json::to_vec(&view).expect("a column always serialises"),
        ))
    }
}

/// A card as read. Written into room for a typical card at once: `to_vec` starts empty and
/// grows the buffer about seven times on the way to half a kilobyte, on every write's reply.
fn task_bytes(view: &TaskView<'_>) -> Bytes {
    let mut out = Vec::with_capacity(1024);
    serde_json::to_writer(&mut out, view).expect("a task always serialises");
    Bytes::from(out)
}
