//! Serialising an account's records into replies: the cached per-project fragments of
//! whole-account reads, and single records for write replies.
//!
//! A fragment is rendered with no lock held: under the document's read lock a read takes
//! only a [`Cut`] (shared cards, small copies), so the writer, which takes the lock to
//! apply each commit, never waits for another account's text to be written out.
//!
//! A project is rendered once with every card (the `all` view), noting where each finished
//! card lies in the buffer; the views that leave finished cards out (`none`, `recent`) are
//! slices of that buffer, not copies, so an account read in several views holds its open
//! cards' text once.

use ahash::AHashMap;
use bytes::Bytes;
use domain::records::{Column, Project, Record, Task};
use serde::Serialize;

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
            .map(|p| p.contiguous())
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
                let rendered = cut.render();
                let piece = rendered.piece();
                self.keep_rendered(id, rendered);
                Some(piece)
            }
        }
    }

    /// The project's cached fragment for the view (a view that leaves finished cards out is
    /// cut from the cached `all` one, which is cheap: slices of its buffer), or, when neither
    /// holds at `now`, what rendering one takes: shared cards and small copies, no text.
    pub(crate) fn fragment_or_cut(
        &self,
        id: &str,
        view: Completed,
        now: i64,
        window_ms: i64,
    ) -> Option<Fragmented> {
        let entry = self.projects.get(id)?;
        let cutoff = now - window_ms;
        let mut slots = entry.fragments.lock();
        if let Some(f) = &slots[view as usize]
            && now < f.expires_at
        {
            return Some(Fragmented::Cached(f.piece.clone()));
        }
        if let Some(all) = &slots[Completed::All as usize] {
            let f = all.without_finished(view, cutoff, window_ms);
            let piece = f.piece.clone();
            slots[view as usize] = Some(f);
            return Some(Fragmented::Cached(piece));
        }
        drop(slots);
        Some(Fragmented::Cut(self.cut(entry, view, cutoff, window_ms)))
    }

    /// Keeps what was rendered from this document as it is now (the caller makes sure no
    /// write came between the cut and this).
    pub(crate) fn keep_rendered(&self, id: &str, rendered: Rendered) {
        if let Some(entry) = self.projects.get(id) {
            let mut slots = entry.fragments.lock();
            if let Some((view, f)) = rendered.asked {
                slots[view as usize] = Some(f);
            }
            slots[Completed::All as usize] = Some(rendered.all);
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

    /// What the project's fragments are made of: every card (the `all` view, from which
    /// `view` is cut).
    fn cut(&self, entry: &ProjectEntry, view: Completed, cutoff: i64, window_ms: i64) -> Cut {
        let mut by_column: AHashMap<&str, Vec<Placed>> = AHashMap::new();
        let sorted = entry.tasks.iter().filter_map(|(_, id)| self.tasks.get(id));
        for (order, task) in sorted.enumerate() {
            by_column
                .entry(task.column_id.as_str())
                .or_default()
                .push((task.clone(), order));
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
            view,
            cutoff,
            window_ms,
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

/// Where a finished card lies in a project's `all` buffer: what a view that leaves it out
/// skips, with the comma that joined it to a neighbour.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FinishedSpan {
    start: usize,
    end: usize,
    /// Its `completedAt`.
    done: i64,
    /// The index of its column in the project.
    column: usize,
    /// Whether an open card comes before it in its column.
    open_before: bool,
    /// Whether any card comes after it in its column.
    has_after: bool,
}

impl Fragment {
    /// The `none` or `recent` view of the project, cut from its `all` fragment (`self`):
    /// slices of its buffer around the finished cards the view leaves out. A view that
    /// leaves nothing out shares the `all` piece, compressed forms and all.
    pub(crate) fn without_finished(
        &self,
        view: Completed,
        cutoff: i64,
        window_ms: i64,
    ) -> Fragment {
        let whole = self.piece.contiguous();
        let mut parts = Vec::new();
        let mut at = 0;
        let mut expires_at = i64::MAX;
        // The column of the last finished card kept, if any.
        let mut kept_in = None;
        for f in self.finished.iter() {
            if view == Completed::Recent && f.done >= cutoff {
                expires_at = expires_at.min(f.done.saturating_add(window_ms));
                kept_in = Some(f.column);
                continue;
            }
            // The comma goes with the card: the one before it when a card is kept before it
            // in its column, else the one after it, if any.
            let (start, end) = if f.open_before || kept_in == Some(f.column) {
                (f.start - 1, f.end)
            } else if f.has_after {
                (f.start, f.end + 1)
            } else {
                (f.start, f.end)
            };
            parts.push(whole.slice(at..start));
            at = end;
        }
        let piece = if parts.is_empty() {
            self.piece.clone()
        } else {
            parts.push(whole.slice(at..));
            parts.retain(|p| !p.is_empty());
            Arc::new(Piece::of_parts(parts))
        };
        Fragment {
            piece,
            expires_at,
            finished: Arc::from([]),
        }
    }
}

/// A project rendered: its `all` fragment, and the view asked for when it is another.
pub(crate) struct Rendered {
    all: Fragment,
    asked: Option<(Completed, Fragment)>,
}

impl Rendered {
    /// The piece of the view asked for.
    pub(crate) fn piece(&self) -> Arc<Piece> {
        match &self.asked {
            Some((_, f)) => f.piece.clone(),
            None => self.all.piece.clone(),
        }
    }
}

/// A card of a cut with its `order`.
type Placed = (Arc<Task>, usize);

/// What a project's fragment is rendered from, taken under the document's lock and
/// rendered after it is let go: the cards are the document's own shared values (a write
/// replaces a card, never changes it in place); the project and its columns are copies.
pub(crate) struct Cut {
    project: Project,
    /// Each column, in order, with every card and its `order`.
    columns: Vec<(Column, Vec<Placed>)>,
    /// The view asked for, and where its 30-day window starts.
    view: Completed,
    cutoff: i64,
    window_ms: i64,
}

impl Cut {
    /// The serialised project: the only part of a whole-account read that grows with the
    /// account, done with no lock held. Written as `ProjectView` serialises it (each object
    /// left open for its last field, the nested list), noting where each finished card lies.
    pub(crate) fn render(&self) -> Rendered {
        let mut out = Vec::new();
        let mut finished = Vec::new();
        open_object(
            &mut out,
            &ProjectView {
                project: &self.project,
                columns: None,
                deleted_at: None,
            },
        );
        out.extend_from_slice(b",\"columns\":[");
        for (c, (column, tasks)) in self.columns.iter().enumerate() {
            if c > 0 {
                out.push(b',');
            }
            let view = ColumnView {
                column,
                tasks: None,
                deleted_at: None,
            };
            open_object(&mut out, &view);
            out.extend_from_slice(b",\"tasks\":[");
            let mut open_before = false;
            for (i, (task, order)) in tasks.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                let start = out.len();
                let view = TaskView {
                    task,
                    order: *order,
                };
                serde_json::to_writer(&mut out, &view).expect("a task always serialises");
                match task.completed_at {
                    None => open_before = true,
                    Some(done) => finished.push(FinishedSpan {
                        start,
                        end: out.len(),
                        done,
                        column: c,
                        open_before,
                        has_after: i + 1 < tasks.len(),
                    }),
                }
            }
            out.extend_from_slice(b"]}");
        }
        out.extend_from_slice(b"]}");
        // A kept fragment holds what it uses, not the room it was written into.
        out.shrink_to_fit();
        let all = Fragment {
            piece: Piece::shared(Bytes::from(out)),
            expires_at: i64::MAX,
            finished: finished.into(),
        };
        let asked = (self.view != Completed::All).then(|| {
            let f = all.without_finished(self.view, self.cutoff, self.window_ms);
            (self.view, f)
        });
        Rendered { all, asked }
    }
}

/// Serialises `value`, an object, leaving it open for a field written after it: its
/// closing brace is taken off.
fn open_object(out: &mut Vec<u8>, value: &impl Serialize) {
    serde_json::to_writer(&mut *out, value).expect("a record always serialises");
    debug_assert_eq!(out.last(), Some(&b'}'));
    out.pop();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::tests::{apply_at as apply, project, task};
    use domain::RecordChange;

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

        let before = String::from_utf8(cut.render().piece().contiguous().to_vec()).unwrap();
        assert!(before.contains("\"Before\""), "{before}");
        let after = doc.fragment("p_a", Completed::All, 10, 0).unwrap();
        assert!(String::from_utf8_lossy(&after).contains("\"After\""));
        assert!(matches!(
            doc.fragment_or_cut("p_a", Completed::All, 10, 0),
            Some(Fragmented::Cached(_))
        ));
    }

    /// The `none` and `recent` views, cut from the `all` buffer around its finished cards,
    /// are byte for byte what serialising the view's cards gives, whichever view is asked
    /// first: finished cards first, last, alone, in runs and between open ones, in columns
    /// empty or not.
    #[test]
    fn views_cut_from_the_all_buffer_equal_the_views_serialised_whole() {
        let (window, now) = (100, 1_000);
        let cutoff = now - window;
        let mut next = crate::doc::tests::seeded(0x5eed_cafe);
        for round in 0..40 {
            let mut doc = AccountDoc::default();
            let mut records = vec![RecordChange::Live(project("p_a"))];
            for c in 0..3 {
                records.push(RecordChange::Live(Record::Column(Column {
                    id: format!("l_{c}"),
                    project_id: "p_a".into(),
                    name: format!("List {c}"),
                    position: c as f64,
                    updated_at: 1,
                    ..Column::default()
                })));
            }
            for n in 0..next(12) as usize {
                // Open, finished inside the 30-day window, or before it.
                let done = match next(3) {
                    0 => None,
                    1 => Some(cutoff + next(50) as i64),
                    _ => Some(cutoff - 1 - next(50) as i64),
                };
                let mut card = task(n, "p_a", next(6) as f64, done);
                card.column_id = format!("l_{}", next(2) * 2);
                card.title = format!("Card {n} \u{e9}\"");
                records.push(RecordChange::Live(Record::Task(card)));
            }
            apply(&mut doc, 1, records);
            let expected = |doc: &AccountDoc, view: Completed| {
                let entry = &doc.projects["p_a"];
                let placed: Vec<(Arc<Task>, usize)> = (entry.tasks.iter())
                    .filter_map(|(_, id)| doc.tasks.get(id).cloned())
                    .enumerate()
                    .map(|(order, t)| (t, order))
                    .collect();
                let mut columns: Vec<&Column> = doc.columns.values().collect();
                columns.sort_by(|a, b| a.position.total_cmp(&b.position));
                let shown = |t: &Task| match (view, t.completed_at) {
                    (_, None) | (Completed::All, _) => true,
                    (Completed::None, Some(_)) => false,
                    (Completed::Recent, Some(done)) => done >= cutoff,
                };
                let lists: Vec<(&Column, Vec<Placed>)> = (columns.into_iter())
                    .map(|c| {
                        let tasks = (placed.iter())
                            .filter(|(t, _)| t.column_id == c.id && shown(t))
                            .cloned()
                            .collect();
                        (c, tasks)
                    })
                    .collect();
                let view = ProjectView {
                    project: &entry.project,
                    columns: Some(lists.iter().map(|(c, t)| column_view(c, t)).collect()),
                    deleted_at: None,
                };
                String::from_utf8(serde_json::to_vec(&view).unwrap()).unwrap()
            };
            let views = [Completed::None, Completed::Recent, Completed::All];
            for first in views {
                for entry in doc.projects.values_mut() {
                    *entry.fragments.get_mut() = Default::default();
                }
                for view in std::iter::once(first).chain(views) {
                    let got = doc.fragment("p_a", view, now, window).unwrap();
                    let got = String::from_utf8(got.to_vec()).unwrap();
                    assert_eq!(
                        got,
                        expected(&doc, view),
                        "round {round}, {view:?} after {first:?}"
                    );
                }
            }
        }
    }
}
