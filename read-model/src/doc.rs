//! One account's document: its live records indexed by project, its recycle bin, and per
//! project the serialised fragments of each `completed` view, rebuilt only when something in
//! that project changed (or, for the 30-day view, when a finished card ages out of it).

use ahash::{AHashMap, AHashSet};
use bytes::Bytes;
use parking_lot::Mutex;
use write_model::records::{Column, Project, Record, Task};
use write_model::store::AccountSnapshot;
use write_model::{ChangeSet, RecordChange};

use crate::Completed;
use crate::shape::{ColumnView, ProjectView, TaskView};

/// A record in the recycle bin.
#[derive(Debug, Clone)]
pub struct Binned {
    pub record: Record,
    pub entry: String,
    pub deleted_at: i64,
}

#[derive(Debug, Clone)]
struct Fragment {
    bytes: Bytes,
    /// The moment the view would include a different set of cards (the 30-day view only).
    expires_at: i64,
}

#[derive(Debug)]
struct ProjectEntry {
    project: Project,
    columns: AHashSet<String>,
    tasks: AHashSet<String>,
    fragments: Mutex<[Option<Fragment>; 3]>,
}

impl ProjectEntry {
    fn new(project: Project) -> Self {
        ProjectEntry {
            project,
            columns: AHashSet::new(),
            tasks: AHashSet::new(),
            fragments: Mutex::new(Default::default()),
        }
    }

    fn invalidate(&mut self) {
        *self.fragments.get_mut() = Default::default();
    }
}

#[derive(Debug, Default)]
pub struct AccountDoc {
    pub rev: i64,
    projects: AHashMap<String, ProjectEntry>,
    columns: AHashMap<String, Column>,
    tasks: AHashMap<String, Task>,
    binned: AHashMap<String, Binned>,
}

fn bin_of<T>(s: &write_model::store::Stored<T>) -> Option<(String, i64)> {
    s.bin_entry.clone().zip(s.deleted_at)
}

impl AccountDoc {
    pub fn from_snapshot(snap: AccountSnapshot) -> Self {
        let mut doc = AccountDoc {
            rev: snap.rev,
            ..Default::default()
        };
        for p in snap.projects {
            match bin_of(&p) {
                Some((entry, at)) => doc.bin(Record::Project(p.value), entry, at),
                None => doc.live(Record::Project(p.value)),
            }
        }
        for c in snap.columns {
            match bin_of(&c) {
                Some((entry, at)) => doc.bin(Record::Column(c.value), entry, at),
                None => doc.live(Record::Column(c.value)),
            }
        }
        for t in snap.tasks {
            match bin_of(&t) {
                Some((entry, at)) => doc.bin(Record::Task(t.value), entry, at),
                None => doc.live(Record::Task(t.value)),
            }
        }
        doc
    }

    /// Applies one committed change set; one already reflected (older revision) is skipped.
    pub fn apply(&mut self, cs: &ChangeSet) {
        if cs.rev <= self.rev {
            return;
        }
        for change in &cs.records {
            match change {
                RecordChange::Live(r) => self.live(r.clone()),
                RecordChange::Binned {
                    record,
                    entry,
                    deleted_at,
                } => self.bin(record.clone(), entry.clone(), *deleted_at),
                RecordChange::Destroyed { id, .. } => {
                    self.unlink(id);
                    self.binned.remove(id);
                }
            }
        }
        self.rev = cs.rev;
    }

    fn live(&mut self, record: Record) {
        self.binned.remove(record.id());
        match record {
            Record::Project(p) => match self.projects.get_mut(&p.id) {
                Some(entry) => {
                    entry.project = p;
                    entry.invalidate();
                }
                None => {
                    self.projects.insert(p.id.clone(), ProjectEntry::new(p));
                }
            },
            Record::Column(c) => {
                self.unlink(&c.id);
                if let Some(entry) = self.projects.get_mut(&c.project_id) {
                    entry.columns.insert(c.id.clone());
                    entry.invalidate();
                }
                self.columns.insert(c.id.clone(), c);
            }
            Record::Task(t) => {
                self.unlink(&t.id);
                if let Some(entry) = self.projects.get_mut(&t.project_id) {
                    entry.tasks.insert(t.id.clone());
                    entry.invalidate();
                }
                self.tasks.insert(t.id.clone(), t);
            }
        }
    }

    fn bin(&mut self, record: Record, entry: String, deleted_at: i64) {
        self.unlink(record.id());
        self.binned.insert(
            record.id().to_owned(),
            Binned {
                record,
                entry,
                deleted_at,
            },
        );
    }

    /// Takes a live record out of the live maps and its project's sets.
    fn unlink(&mut self, id: &str) {
        if let Some(entry) = self.projects.remove(id) {
            drop(entry);
            return;
        }
        let project = if let Some(c) = self.columns.remove(id) {
            Some(c.project_id)
        } else {
            self.tasks.remove(id).map(|t| t.project_id)
        };
        if let Some(entry) = project.and_then(|p| self.projects.get_mut(&p)) {
            entry.columns.remove(id);
            entry.tasks.remove(id);
            entry.invalidate();
        }
    }

    /// Live project ids sorted by (position, id).
    pub fn project_ids(&self) -> Vec<&str> {
        let mut ps: Vec<&Project> = self.projects.values().map(|e| &e.project).collect();
        ps.sort_by(|a, b| {
            a.position
                .total_cmp(&b.position)
                .then_with(|| a.id.cmp(&b.id))
        });
        ps.into_iter().map(|p| p.id.as_str()).collect()
    }

    pub fn has_project(&self, id: &str) -> bool {
        self.projects.contains_key(id)
    }

    /// The serialised project (with its columns and the cards of the view), from the cache
    /// when nothing in it changed.
    pub fn fragment(&self, id: &str, view: Completed, now: i64, window_ms: i64) -> Option<Bytes> {
        let entry = self.projects.get(id)?;
        let slot = view as usize;
        if let Some(f) = &entry.fragments.lock()[slot]
            && now < f.expires_at
        {
            return Some(f.bytes.clone());
        }
        let fragment = self.render(entry, view, now - window_ms, window_ms);
        let bytes = fragment.bytes.clone();
        entry.fragments.lock()[slot] = Some(fragment);
        Some(bytes)
    }

    /// The project's live tasks sorted by (position, id): the order `order` counts in.
    fn sorted_tasks(&self, entry: &ProjectEntry) -> Vec<&Task> {
        let mut tasks: Vec<&Task> = entry
            .tasks
            .iter()
            .filter_map(|id| self.tasks.get(id))
            .collect();
        tasks.sort_by(|a, b| {
            a.position
                .total_cmp(&b.position)
                .then_with(|| a.id.cmp(&b.id))
        });
        tasks
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
        for (order, task) in self.sorted_tasks(entry).into_iter().enumerate() {
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
            bytes: Bytes::from(bytes),
            expires_at,
        }
    }

    /// A live task as read, with its `order`.
    pub fn task_json(&self, id: &str) -> Option<Bytes> {
        let task = self.tasks.get(id)?;
        let entry = self.projects.get(&task.project_id)?;
        let order = self
            .sorted_tasks(entry)
            .iter()
            .position(|t| t.id == id)
            .unwrap_or(0);
        Some(Bytes::from(
            serde_json::to_vec(&TaskView { task, order }).expect("a task always serialises"),
        ))
    }

    /// A deleted card as read (for the reply of the write that deleted it).
    pub fn binned_task_json(&self, id: &str) -> Option<Bytes> {
        match self.binned.get(id).map(|b| &b.record) {
            Some(Record::Task(task)) => Some(Bytes::from(
                serde_json::to_vec(&TaskView { task, order: 0 }).expect("a task always serialises"),
            )),
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
            .into_iter()
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

    pub fn binned(&self) -> impl Iterator<Item = &Binned> {
        self.binned.values()
    }
}
