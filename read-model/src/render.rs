//! Serialising an account's records into replies: the cached per-project fragments of
//! whole-account reads, and single records for write replies.
//!
//! A fragment is rendered with no lock held: under the document's read lock a read takes
//! only a [`Cut`] (shared cards, small copies), so the writer, which takes the lock to
//! apply each commit, never waits for another account's text to be written out.

use ahash::AHashMap;
use bytes::Bytes;
use write_model::records::{Column, Project, Record, Task};

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
    /// Renders under whatever lock the caller holds: the read model's own replies use
    /// [`Self::fragment_or_cut`] instead, and render outside its lock.
    pub fn fragment_piece(
        &self,
        id: &str,
        view: Completed,
        now: i64,
        window_ms: i64,
    ) -> Option<Arc<Piece>> {
        match self.fragment_or_cut(id, view, now, window_ms)? {
            Fragmented::Cached(piece) => Some(piece),
            Fragmented::Cut(cut) => {
                let fragment = cut.render();
                let piece = fragment.piece.clone();
                self.keep_fragment(id, view, fragment);
                Some(piece)
            }
        }
    }

    /// The project's cached fragment for the view, or, when it has none that holds at `now`,
    /// what rendering one takes: shared cards and small copies, no text.
    pub(crate) fn fragment_or_cut(
        &self,
        id: &str,
        view: Completed,
        now: i64,
        window_ms: i64,
    ) -> Option<Fragmented> {
        let entry = self.projects.get(id)?;
        if let Some(f) = &entry.fragments.lock()[view as usize]
            && now < f.expires_at
        {
            return Some(Fragmented::Cached(f.piece.clone()));
        }
        Some(Fragmented::Cut(self.cut(
            entry,
            view,
            now - window_ms,
            window_ms,
        )))
    }

    /// Keeps a fragment rendered from this document as it is now (the caller makes sure no
    /// write came between the cut and this).
    pub(crate) fn keep_fragment(&self, id: &str, view: Completed, fragment: Fragment) {
        if let Some(entry) = self.projects.get(id) {
            entry.fragments.lock()[view as usize] = Some(fragment);
        }
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

    /// What the project's fragment for the view is made of.
    fn cut(&self, entry: &ProjectEntry, view: Completed, cutoff: i64, window_ms: i64) -> Cut {
        let mut expires_at = i64::MAX;
        let mut by_column: AHashMap<&str, Vec<Placed>> = AHashMap::new();
        let sorted = entry.tasks.iter().filter_map(|(_, id)| self.tasks.get(id));
        for (order, task) in sorted.enumerate() {
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
                    .push((task.clone(), order));
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
        Cut {
            project: entry.project.clone(),
            columns: columns
                .into_iter()
                .map(|column| {
                    let tasks = by_column.remove(column.id.as_str()).unwrap_or_default();
                    (column.clone(), tasks)
                })
                .collect(),
            expires_at,
        }
    }

    /// A live task as read, with its `order`.
    pub fn task_json(&self, id: &str) -> Option<Bytes> {
        let (task, order) = self.task_cut(id)?;
        Some(task_json_of(&task, order))
    }

    /// A live task and its `order`, to render once the lock is let go.
    pub(crate) fn task_cut(&self, id: &str) -> Option<(Arc<Task>, usize)> {
        let task = self.tasks.get(id)?;
        let entry = self.projects.get(&task.project_id)?;
        Some((task.clone(), entry.order_of(task).unwrap_or(0)))
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
        let (column, tasks) = self.column_cut(id)?;
        Some(column_json_of(&column, &tasks))
    }

    /// A live column and its open cards with their `order`, to render once the lock is let
    /// go.
    pub(crate) fn column_cut(&self, id: &str) -> Option<(Column, Vec<Placed>)> {
        let column = self.columns.get(id)?;
        let entry = self.projects.get(&column.project_id)?;
        let tasks = entry
            .tasks
            .iter()
            .filter_map(|(_, id)| self.tasks.get(id))
            .enumerate()
            .filter(|(_, t)| t.column_id == column.id && t.completed_at.is_none())
            .map(|(order, task)| (task.clone(), order))
            .collect();
        Some((column.clone(), tasks))
    }
}

/// A live column as read, from its cut.
pub(crate) fn column_json_of(column: &Column, tasks: &[Placed]) -> Bytes {
    let view = column_view(column, tasks);
    Bytes::from(serde_json::to_vec(&view).expect("a column always serialises"))
}

/// A live column's read shape over its cards of a cut.
fn column_view<'a>(column: &'a Column, tasks: &'a [Placed]) -> ColumnView<'a> {
    ColumnView {
        column,
        tasks: Some(
            tasks
                .iter()
                .map(|(task, order)| TaskView {
                    task,
                    order: *order,
                })
                .collect(),
        ),
        deleted_at: None,
    }
}

/// A live card as read, with its `order`.
pub(crate) fn task_json_of(task: &Task, order: usize) -> Bytes {
    task_bytes(&TaskView { task, order })
}

/// A card as read. Written into room for a typical card at once: `to_vec` starts empty and
/// grows the buffer about seven times on the way to half a kilobyte, on every write's reply.
fn task_bytes(view: &TaskView<'_>) -> Bytes {
    let mut out = Vec::with_capacity(1024);
    serde_json::to_writer(&mut out, view).expect("a task always serialises");
    Bytes::from(out)
}

/// A project's fragment, cached, or to be rendered from its cut.
pub(crate) enum Fragmented {
    Cached(Arc<Piece>),
    Cut(Cut),
}

/// A card of a cut with its `order`.
type Placed = (Arc<Task>, usize);

/// What a project's fragment is rendered from, taken under the document's lock and
/// rendered after it is let go: the cards are the document's own shared values (a write
/// replaces a card, never changes it in place); the project and its columns are copies.
pub(crate) struct Cut {
    project: Project,
    /// Each column, in order, with the cards of the view and their `order`.
    columns: Vec<(Column, Vec<Placed>)>,
    /// When the view would include a different set of cards (the 30-day view only).
    expires_at: i64,
}

impl Cut {
    /// The serialised project: the only part of a whole-account read that grows with the
    /// account, done with no lock held.
    pub(crate) fn render(&self) -> Fragment {
        let view = ProjectView {
            project: &self.project,
            columns: Some(
                self.columns
                    .iter()
                    .map(|(column, tasks)| column_view(column, tasks))
                    .collect(),
            ),
            deleted_at: None,
        };
        let bytes = serde_json::to_vec(&view).expect("a project always serialises");
        Fragment {
            piece: Piece::shared(Bytes::from(bytes)),
            expires_at: self.expires_at,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::tests::{apply_at as apply, project, task};
    use write_model::RecordChange;

    /// A project's cut borrows nothing from the document: the document can take a write (its
    /// lock be let go and taken by the writer) while the cut is rendered, and the cut renders
    /// what the project held when it was taken.
    #[test]
    fn a_fragment_renders_from_its_cut_after_the_lock_is_let_go() {
        let mut doc = AccountDoc::default();
        let column = Column {
            id: "l_p_a".into(),
            project_id: "p_a".into(),
            name: "To do".into(),
            updated_at: 1,
            ..Column::default()
        };
        apply(
            &mut doc,
            1,
            vec![
                RecordChange::Live(project("p_a")),
                RecordChange::Live(Record::Column(column)),
            ],
        );
        let mut card = task(1, "p_a", 1.0, None);
        card.title = "Before".into();
        apply(&mut doc, 2, vec![RecordChange::Live(Record::Task(card))]);
        let Some(Fragmented::Cut(cut)) = doc.fragment_or_cut("p_a", Completed::All, 10, 0) else {
            panic!("nothing cached yet: a cut");
        };

        let mut renamed = task(1, "p_a", 1.0, None);
        renamed.title = "After".into();
        apply(&mut doc, 3, vec![RecordChange::Live(Record::Task(renamed))]);

        let before = String::from_utf8(cut.render().piece.bytes.to_vec()).unwrap();
        assert!(before.contains("\"Before\""), "{before}");
        let after = doc.fragment("p_a", Completed::All, 10, 0).unwrap();
        assert!(String::from_utf8_lossy(&after).contains("\"After\""));
        assert!(matches!(
            doc.fragment_or_cut("p_a", Completed::All, 10, 0),
            Some(Fragmented::Cached(_))
        ));
    }
}
