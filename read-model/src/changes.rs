//! `GET /changes`: what changed at or after `since`, from the read model's stamp index, and
//! the `holding` short-circuit that answers an idle poll without walking the account.

use bytes::Bytes;
use serde::Serialize;
use serde::ser::{SerializeStruct, Serializer};
use write_model::records::{Kind, Record, Task};

use crate::Completed;
use crate::chunks::Chunks;
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

fn in_window(task: &Task, view: Completed, cutoff: i64) -> bool {
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

    /// The full changes reply, as a chain of buffers.
    pub fn changes(&self, q: &ChangesQuery, now: i64, cutoff: i64) -> Vec<Bytes> {
        let since = q.since.unwrap_or(i64::MIN);
        let mut projects: Vec<ProjectView<'_>> = Vec::new();
        let mut markers: Vec<MarkerView<'_>> = Vec::new();
        let mut columns: Vec<ColumnView<'_>> = Vec::new();
        let mut cards: Vec<&Task> = Vec::new();
        let mut binned_cards: Vec<&Task> = Vec::new();
        for (_, id) in self.by_stamp.range((since, String::new())..) {
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
                    cards.push(task);
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
                    Record::Task(task) => binned_cards.push(task),
                }
            } else if let Some(marker) = self.markers.get(id) {
                markers.push(MarkerView { id, marker });
            }
        }
        let card_views: Vec<TaskView<'_>> = cards
            .iter()
            .map(|task| TaskView {
                task,
                order: self
                    .projects
                    .get(&task.project_id)
                    .and_then(|entry| entry.order_of(task))
                    .unwrap_or(0),
            })
            .chain(binned_cards.iter().map(|task| TaskView { task, order: 0 }))
            .collect();
        let task_ids: Vec<&str> = if q.scoped {
            projects
                .iter()
                .filter(|p| p.deleted_at.is_none())
                .filter_map(|p| self.projects.get(&p.project.id))
                .flat_map(|e| e.tasks.iter())
                .filter_map(|(_, id)| self.tasks.get(id))
                .filter(|t| in_window(t, q.view, cutoff))
                .map(|t| t.id.as_str())
                .collect()
        } else {
            self.tasks
                .values()
                .filter(|t| in_window(t, q.view, cutoff))
                .map(|t| t.id.as_str())
                .collect()
        };
        let reply = ChangesReply {
            projects: WithMarkers {
                records: &projects,
                markers: &markers,
                kind: Kind::Project,
            },
            lists: WithMarkers {
                records: &columns,
                markers: &markers,
                kind: Kind::Column,
            },
            cards: &card_views,
            now,
            task_ids: &task_ids,
            window: window_name(q.view),
            cutoff,
            scoped: q.scoped,
        };
        let mut out = Chunks::default();
        serde_json::to_writer(&mut out, &reply).expect("a changes reply always serialises");
        out.into_chain()
    }
}

/// A destroyed project or column: `{id, deletedAt}` (and `projectId` for a column).
struct MarkerView<'a> {
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

struct ChangesReply<'a> {
    projects: WithMarkers<'a, ProjectView<'a>>,
    lists: WithMarkers<'a, ColumnView<'a>>,
    cards: &'a [TaskView<'a>],
    now: i64,
    task_ids: &'a [&'a str],
    window: &'static str,
    cutoff: i64,
    scoped: bool,
}

impl Serialize for ChangesReply<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Changes", 8)?;
        st.serialize_field("projects", &self.projects)?;
        st.serialize_field("lists", &self.lists)?;
        st.serialize_field("cards", self.cards)?;
        st.serialize_field("now", &self.now)?;
        st.serialize_field("taskIds", self.task_ids)?;
        st.serialize_field("window", self.window)?;
        st.serialize_field("cutoff", &self.cutoff)?;
        if self.scoped {
            st.serialize_field("scoped", &true)?;
        }
        st.end()
    }
}
