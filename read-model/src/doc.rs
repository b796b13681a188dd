//! One account's document: its live records indexed by project, its recycle bin, and per
//! project the serialised fragments of each `completed` view, rebuilt only when something in
//! that project changed (or, for the 30-day view, when a finished card ages out of it).

use std::collections::BTreeSet;

use ahash::{AHashMap, AHashSet};
use bytes::Bytes;
use parking_lot::Mutex;
use write_model::records::{Column, Kind, Project, Record, Task};
use write_model::store::AccountSnapshot;
use write_model::{ChangeSet, RecordChange};

use crate::Completed;

/// A record in the recycle bin.
#[derive(Debug, Clone)]
pub struct Binned {
    pub record: Record,
    pub entry: String,
    pub deleted_at: i64,
}

#[derive(Debug, Clone)]
pub(crate) struct Fragment {
    pub(crate) bytes: Bytes,
    /// The moment the view would include a different set of cards (the 30-day view only).
    pub(crate) expires_at: i64,
}

#[derive(Debug)]
pub(crate) struct ProjectEntry {
    pub(crate) project: Project,
    pub(crate) columns: AHashSet<String>,
    pub(crate) tasks: AHashSet<String>,
    pub(crate) fragments: Mutex<[Option<Fragment>; 3]>,
}

/// A project or column destroyed out of the bin: kept for good so late clients learn of it.
#[derive(Debug, Clone)]
pub struct Marker {
    pub kind: Kind,
    pub project_id: String,
    pub deleted_at: i64,
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
    /// The latest stamp any change of the account carries.
    pub max_stamp: i64,
    pub(crate) projects: AHashMap<String, ProjectEntry>,
    pub(crate) columns: AHashMap<String, Column>,
    pub(crate) tasks: AHashMap<String, Task>,
    pub(crate) binned: AHashMap<String, Binned>,
    pub(crate) markers: AHashMap<String, Marker>,
    /// Every record and marker by the stamp it last changed at: `/changes` scans a range.
    pub(crate) by_stamp: BTreeSet<(i64, String)>,
    stamp_of: AHashMap<String, i64>,
    /// Live cards not finished.
    pub(crate) open_cards: usize,
    /// `completedAt` of every live finished card, sorted: the 30-day count is a search.
    pub(crate) finished: Vec<i64>,
}

fn updated_at(record: &Record) -> i64 {
    match record {
        Record::Project(p) => p.updated_at,
        Record::Column(c) => c.updated_at,
        Record::Task(t) => t.updated_at,
    }
}

fn bin_of<T>(s: &write_model::store::Stored<T>) -> Option<(String, i64)> {
    s.bin_entry.clone().zip(s.deleted_at)
}

impl AccountDoc {
    pub fn from_snapshot(snap: AccountSnapshot) -> Self {
        let mut doc = AccountDoc {
            rev: snap.rev,
            max_stamp: snap.last_stamp,
            ..Default::default()
        };
        for m in snap.markers {
            doc.mark(m.id, m.kind, m.project_id, m.deleted_at);
        }
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
        // Projects before columns before cards, so a restored project exists before what it holds.
        let rank = |c: &&RecordChange| match c {
            RecordChange::Live(r) => r.kind() as u8,
            _ => 3,
        };
        let mut changes: Vec<&RecordChange> = cs.records.iter().collect();
        changes.sort_by_key(rank);
        for change in changes {
            match change {
                RecordChange::Live(r) => self.live(r.clone()),
                RecordChange::Binned {
                    record,
                    entry,
                    deleted_at,
                } => self.bin(record.clone(), entry.clone(), *deleted_at),
                RecordChange::Destroyed { id, kind } => self.destroy(id, *kind, cs.stamp),
            }
        }
        self.rev = cs.rev;
        self.max_stamp = self.max_stamp.max(cs.stamp);
    }

    fn live(&mut self, record: Record) {
        self.binned.remove(record.id());
        self.markers.remove(record.id());
        let stamp = updated_at(&record);
        self.index(record.id(), stamp);
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
                match t.completed_at {
                    None => self.open_cards += 1,
                    Some(done) => {
                        let at = self.finished.partition_point(|&c| c < done);
                        self.finished.insert(at, done);
                    }
                }
                self.tasks.insert(t.id.clone(), t);
            }
        }
    }

    fn bin(&mut self, record: Record, entry: String, deleted_at: i64) {
        self.unlink(record.id());
        self.index(record.id(), updated_at(&record));
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
        } else if let Some(t) = self.tasks.remove(id) {
            match t.completed_at {
                None => self.open_cards -= 1,
                Some(done) => {
                    let at = self.finished.partition_point(|&c| c < done);
                    if self.finished.get(at) == Some(&done) {
                        self.finished.remove(at);
                    }
                }
            }
            Some(t.project_id)
        } else {
            None
        };
        if let Some(entry) = project.and_then(|p| self.projects.get_mut(&p)) {
            entry.columns.remove(id);
            entry.tasks.remove(id);
            entry.invalidate();
        }
    }

    /// A record gone for good: projects and columns leave a marker, cards leave no trace.
    fn destroy(&mut self, id: &str, kind: Kind, stamp: i64) {
        self.unlink(id);
        let binned = self.binned.remove(id);
        match kind {
            Kind::Task => self.deindex(id),
            _ => {
                let (project_id, deleted_at) = match binned.map(|b| (b.record, b.deleted_at)) {
                    Some((Record::Column(c), at)) => (c.project_id, at),
                    Some((_, at)) => (id.to_owned(), at),
                    None => (id.to_owned(), stamp),
                };
                self.mark(id.to_owned(), kind, project_id, deleted_at);
            }
        }
    }

    fn mark(&mut self, id: String, kind: Kind, project_id: String, deleted_at: i64) {
        self.index(&id, deleted_at);
        self.markers.insert(
            id,
            Marker {
                kind,
                project_id,
                deleted_at,
            },
        );
    }

    fn index(&mut self, id: &str, stamp: i64) {
        if let Some(old) = self.stamp_of.insert(id.to_owned(), stamp) {
            self.by_stamp.remove(&(old, id.to_owned()));
        }
        self.by_stamp.insert((stamp, id.to_owned()));
    }

    fn deindex(&mut self, id: &str) {
        if let Some(old) = self.stamp_of.remove(id) {
            self.by_stamp.remove(&(old, id.to_owned()));
        }
    }

    /// Live cards in a view: open ones, and finished ones at or after `cutoff` (recent) or
    /// all of them (all). A count and a binary search, never a walk.
    pub fn live_cards(&self, view: Completed, cutoff: i64) -> usize {
        match view {
            Completed::None => self.open_cards,
            Completed::All => self.open_cards + self.finished.len(),
            Completed::Recent => {
                self.open_cards + self.finished.len()
                    - self.finished.partition_point(|&c| c < cutoff)
            }
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
}
