//! `GET /changes`: what changed at or after `since`, from the read model's stamp index, and
//! the `holding` short-circuit that answers an idle poll without walking the account.
//!
//! A full reply is taken under the document's lock but written out while it is sent: the
//! cards it names are the document's own shared values (a write replaces a card, never
//! changes it in place), so a reply of the whole account holds pointers, not a second copy.
//! A compressed reply is planned under the lock and joined after it is let go
//! ([`crate::encoded_changes`]).
//!
//! Cards come grouped by project in the account's order, each project's in its own order
//! (`order`), then the bin's; `taskIds` in the same order.

use std::io::Write;
use std::sync::Arc;

use ahash::AHashMap;
use bytes::Bytes;
use domain::records::{Kind, Record, Task};
use serde::Serialize;
use serde::ser::{SerializeStruct, Serializer};

use crate::Completed;
use crate::chunks::{CHUNK, Chunks};
use crate::doc::{AccountDoc, Marker};
use crate::shape::{ColumnView, ProjectView, TaskView};

/// What a changes read asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChangesQuery {
    pub since: Option<i64>,
    pub view: Completed,
    /// `manifest=changed`: `taskIds` covers only the projects in the reply.
    pub scoped: bool,
    pub holding: Option<u64>,
}

/// The moment the view's window is measured from.
pub fn cutoff(view: Completed, now: i64, window_ms: i64) -> i64 {
    match view {
        Completed::Recent => now - window_ms,
        Completed::All => 0,
        Completed::None => now,
    }
}

fn window_name(view: Completed) -> &'static str {
    match view {
        Completed::Recent => "recent",
        Completed::All => "all",
        Completed::None => "none",
    }
}

pub(crate) fn in_window(task: &Task, view: Completed, cutoff: i64) -> bool {
    match (view, task.completed_at) {
        (_, None) | (Completed::All, _) => true,
        (Completed::None, Some(_)) => false,
        (Completed::Recent, Some(done)) => done >= cutoff,
    }
}

impl AccountDoc {
    /// Whether an idle client may be told `{unchanged: true}`: nothing carries a stamp at or
    /// after `since`, and it holds as many cards as the window has. O(log n), no allocation.
    pub fn unchanged(&self, q: &ChangesQuery, cutoff: i64) -> bool {
        match (q.since, q.holding) {
            (Some(since), Some(holding)) => {
                self.max_stamp < since && holding == self.live_cards(q.view, cutoff) as u64
            }
            _ => false,
        }
    }

    /// What a full changes reply holds, taken under the document's lock: its records and
    /// markers, the cards that changed (grouped by project in the account's order, each
    /// project's in its own order, then the bin's), and the projects whose cards `taskIds`
    /// lists, in the same order.
    pub(crate) fn take(&self, q: &ChangesQuery, cutoff: i64) -> Taken<'_> {
        let since = q.since.unwrap_or(i64::MIN);
        let mut projects: Vec<ProjectView<'_>> = Vec::new();
        let mut markers: Vec<MarkerView<'_>> = Vec::new();
        let mut columns: Vec<ColumnView<'_>> = Vec::new();
        let mut cards: Vec<(Arc<Task>, usize)> = Vec::new();
        let mut binned_cards: Vec<Arc<Task>> = Vec::new();
        let changed = self.by_stamp.range((since, Arc::<str>::default())..);
        for id in changed.map(|(_, id)| &**id) {
            if let Some(entry) = self.projects.get(id) {
                projects.push(ProjectView {
                    project: &entry.project,
                    columns: None,
                    deleted_at: None,
                });
            } else if let Some(column) = self.columns.get(id) {
                columns.push(ColumnView {
                    column,
                    tasks: None,
                    deleted_at: None,
                });
            } else if let Some(task) = self.tasks.get(id) {
                if in_window(task, q.view, cutoff) {
                    let order = (self.projects.get(&task.project_id))
                        .and_then(|entry| entry.order_of(task))
                        .unwrap_or(0);
                    cards.push((task.clone(), order));
                }
            } else if let Some(b) = self.binned.get(id) {
                match &b.record {
                    Record::Project(project) => projects.push(ProjectView {
                        project,
                        columns: None,
                        deleted_at: Some(b.deleted_at),
                    }),
                    Record::Column(column) => columns.push(ColumnView {
                        column,
                        tasks: None,
                        deleted_at: Some(b.deleted_at),
                    }),
                    Record::Task(task) => binned_cards.push(Arc::new(task.clone())),
                }
            } else if let Some(marker) = self.markers.get(id) {
                markers.push(MarkerView { id, marker });
            }
        }
        let order: Vec<&str> = self.project_ids();
        let rank: AHashMap<&str, usize> =
            order.iter().enumerate().map(|(i, id)| (*id, i)).collect();
        let rank_of = |id: &str| rank.get(id).copied().unwrap_or(usize::MAX);
        cards.sort_by_key(|(task, order)| (rank_of(&task.project_id), *order));
        let id_projects: Vec<&str> = if q.scoped {
            let mut scoped: Vec<&str> = projects
                .iter()
                .filter(|p| p.deleted_at.is_none() && self.projects.contains_key(&p.project.id))
                .map(|p| p.project.id.as_str())
                .collect();
            scoped.sort_by_key(|id| rank_of(id));
            scoped
        } else {
            order
        };
        Taken {
            projects,
            markers,
            columns,
            cards,
            binned_cards,
            id_projects,
        }
    }

    /// The head of a full reply: `{"projects":[..],"lists":[..],"cards":[`.
    pub(crate) fn head(taken: &Taken<'_>) -> Chunks {
        let mut out = Chunks::default();
        let projects = WithMarkers {
            records: &taken.projects,
            markers: &taken.markers,
            kind: Kind::Project,
        };
        let lists = WithMarkers {
            records: &taken.columns,
            markers: &taken.markers,
            kind: Kind::Column,
        };
        (|| {
            out.write_all(b"{\"projects\":")?;
            serde_json::to_writer(&mut out, &projects)?;
            out.write_all(b",\"lists\":")?;
            serde_json::to_writer(&mut out, &lists)?;
            out.write_all(b",\"cards\":[")
        })()
        .expect("a changes reply always serialises");
        out
    }

    pub(crate) fn tail(q: &ChangesQuery, cutoff: i64) -> String {
        let mut tail = format!(
            "],\"window\":\"{}\",\"cutoff\":{cutoff}",
            window_name(q.view)
        );
        if q.scoped {
            tail.push_str(",\"scoped\":true");
        }
        tail.push('}');
        tail
    }

    /// The full changes reply, as parts to write out while it is sent.
    pub fn changes(&self, q: &ChangesQuery, now: i64, cutoff: i64) -> ChangesParts {
        let taken = self.take(q, cutoff);
        let head = Self::head(&taken);
        let task_ids: Vec<Arc<Task>> = taken
            .id_projects
            .iter()
            .filter_map(|id| self.projects.get(*id))
            .flat_map(|e| e.tasks.iter())
            .filter_map(|(_, id)| self.tasks.get(id))
            .filter(|t| in_window(t, q.view, cutoff))
            .cloned()
            .collect();
        let Taken {
            mut cards,
            binned_cards,
            ..
        } = taken;
        // A deleted card's `order` is 0: it is in no project's order any more.
        cards.extend(binned_cards.into_iter().map(|task| (task, 0)));
        ChangesParts {
            head: head.into_chain().into_iter(),
            cards: cards.into_iter(),
            middle: Some(Bytes::from(format!("],\"now\":{now},\"taskIds\":["))),
            task_ids: task_ids.into_iter(),
            tail: Some(Bytes::from(Self::tail(q, cutoff))),
            first: true,
        }
    }
}

/// What a full changes reply holds (see [`AccountDoc::take`]).
pub(crate) struct Taken<'a> {
    projects: Vec<ProjectView<'a>>,
    markers: Vec<MarkerView<'a>>,
    columns: Vec<ColumnView<'a>>,
    pub(crate) cards: Vec<(Arc<Task>, usize)>,
    pub(crate) binned_cards: Vec<Arc<Task>>,
    pub(crate) id_projects: Vec<&'a str>,
}

/// A changes reply taken under the lock, written out in buffers of about [`CHUNK`] bytes as
/// the connection takes them: `{"projects":..,"lists":..,"cards":[..],"now":N,
/// "taskIds":[..],"window":..,"cutoff":N(,"scoped":true)}`.
pub struct ChangesParts {
    /// The projects and lists, serialised under the lock (they are few beside the cards).
    head: std::vec::IntoIter<Bytes>,
    cards: std::vec::IntoIter<(Arc<Task>, usize)>,
    middle: Option<Bytes>,
    task_ids: std::vec::IntoIter<Arc<Task>>,
    tail: Option<Bytes>,
    /// Whether the next card or id opens its array (no comma before it).
    first: bool,
}

impl Iterator for ChangesParts {
    type Item = Bytes;

    fn next(&mut self) -> Option<Bytes> {
        if let Some(head) = self.head.next() {
            return Some(head);
        }
        let mut buf = Vec::with_capacity(CHUNK);
        while buf.len() < CHUNK - 1024 {
            if let Some((task, order)) = self.cards.next() {
                element(&mut buf, &mut self.first, &TaskView { task: &task, order });
            } else if let Some(middle) = self.middle.take() {
                buf.extend_from_slice(&middle);
                self.first = true;
            } else if let Some(task) = self.task_ids.next() {
                element(&mut buf, &mut self.first, &task.id);
            } else if let Some(tail) = self.tail.take() {
                buf.extend_from_slice(&tail);
            } else {
                break;
            }
        }
        (!buf.is_empty()).then(|| Bytes::from(buf))
    }
}

/// Writes one element of an array, after a comma unless it opens the array.
pub(crate) fn element(buf: &mut Vec<u8>, first: &mut bool, value: &impl Serialize) {
    if !std::mem::take(first) {
        buf.push(b',');
    }
    serde_json::to_writer(buf, value).expect("a changes reply always serialises");
}

/// A destroyed project or column: `{id, deletedAt}` (and `projectId` for a column).
pub(crate) struct MarkerView<'a> {
    id: &'a str,
    marker: &'a Marker,
}

impl Serialize for MarkerView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Marker", 3)?;
        st.serialize_field("id", self.id)?;
        if self.marker.kind == Kind::Column {
            st.serialize_field("projectId", &self.marker.project_id)?;
        }
        st.serialize_field("deletedAt", &self.marker.deleted_at)?;
        st.end()
    }
}

/// Live or deleted records of one kind, then the markers of that kind.
struct WithMarkers<'a, T> {
    records: &'a [T],
    markers: &'a [MarkerView<'a>],
    kind: Kind,
}

impl<T: Serialize> Serialize for WithMarkers<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(None)?;
        for r in self.records {
            seq.serialize_element(r)?;
        }
        for m in self.markers.iter().filter(|m| m.marker.kind == self.kind) {
            seq.serialize_element(m)?;
        }
        seq.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::tests::{apply_at as apply, project, task};
    use domain::RecordChange;

    /// A reply is what the account held when it was taken, however long it takes to send:
    /// a write that lands meanwhile changes neither its cards nor its manifest. It arrives in
    /// buffers of bounded size that join into one document.
    #[test]
    fn a_reply_being_sent_keeps_what_it_was_taken_with() {
        let mut doc = AccountDoc::default();
        apply(&mut doc, 1, vec![RecordChange::Live(project("p_a"))]);
        let cards: Vec<RecordChange> = (0..3000)
            .map(|i| {
                let mut t = task(i, "p_a", i as f64, None);
                t.title = format!("Card {i} with a title long enough to fill buffers");
                t.updated_at = 2;
                RecordChange::Live(Record::Task(t))
            })
            .collect();
        apply(&mut doc, 2, cards);
        let q = ChangesQuery {
            since: None,
            view: Completed::All,
            scoped: false,
            holding: None,
        };
        let parts = doc.changes(&q, 10, 0);

        let mut renamed = task(7, "p_a", 7.0, None);
        renamed.title = "Renamed after the reply was taken".into();
        renamed.updated_at = 3;
        apply(&mut doc, 3, vec![RecordChange::Live(Record::Task(renamed))]);
        apply(
            &mut doc,
            4,
            vec![RecordChange::Destroyed {
                kind: Kind::Task,
                id: "t_8".into(),
            }],
        );

        let chain: Vec<Bytes> = parts.collect();
        assert!(chain.len() > 3, "{} buffers", chain.len());
        assert!(chain.iter().all(|b| b.len() <= CHUNK + 1024));
        let reply: serde_json::Value = serde_json::from_slice(&chain.concat()).unwrap();
        let keys: Vec<&String> = reply.as_object().unwrap().keys().collect();
        let cards = reply["cards"].as_array().unwrap();
        assert_eq!(cards.len(), 3000, "keys {keys:?}");
        let seven = cards.iter().find(|c| c["id"] == "t_7").unwrap();
        assert_eq!(
            seven["title"],
            "Card 7 with a title long enough to fill buffers"
        );
        assert_eq!(seven["order"], 7);
        assert_eq!(reply["taskIds"].as_array().unwrap().len(), 3000);
        assert!(reply["taskIds"].as_array().unwrap().contains(&"t_8".into()));
        assert_eq!(reply["now"], 10);
        assert_eq!(reply["window"], "all");
    }
}
