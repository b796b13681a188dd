//! One account's document: its live records indexed by project, its recycle bin, and per
//! project the serialised fragments of each `completed` view, rebuilt only when something in
//! that project changed (or, for the 30-day view, when a finished card ages out of it).

use std::collections::BTreeSet;
use std::sync::Arc;

use ahash::{AHashMap, AHashSet};
use domain::RecordChange;
use domain::records::{Column, Kind, Project, Record, Task};
use domain::storage::{AccountSnapshot, Loaded};
use parking_lot::Mutex;

use crate::Completed;
use crate::encoded::Piece;
use crate::order::TaskOrder;

/// A record in the recycle bin.
#[derive(Debug, Clone)]
pub struct Binned {
    pub record: Record,
    pub entry: String,
    pub deleted_at: i64,
}

#[derive(Debug, Clone)]
pub(crate) struct Fragment {
    /// The serialised project, with its compressed forms once a reply asks for them.
    pub(crate) piece: Arc<Piece>,
    /// The moment the view would include a different set of cards (the 30-day view only).
    pub(crate) expires_at: i64,
    /// In the `all` view's fragment, where its finished cards lie (the other views are cut
    /// from it); empty in the others.
    pub(crate) finished: Arc<[crate::render::FinishedSpan]>,
}

#[derive(Debug)]
pub(crate) struct ProjectEntry {
    pub(crate) project: Project,
    pub(crate) columns: AHashSet<String>,
    /// The project's live tasks by `(position, id)`: a task's index here is its `order`,
    /// found by a search instead of sorting the project on every reply.
    pub(crate) tasks: TaskOrder,
    pub(crate) fragments: Mutex<[Option<Fragment>; 3]>,
    /// Per view, the project's cards as a compressed changes reply sends them.
    pub(crate) runs: Mutex<[Option<Arc<crate::runs::Runs>>; 3]>,
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
            tasks: TaskOrder::default(),
            fragments: Mutex::new(Default::default()),
            runs: Mutex::new(Default::default()),
        }
    }

    /// The task's `order`: its index among the project's live tasks by (position, id).
    pub(crate) fn order_of(&self, task: &Task) -> Option<usize> {
        self.tasks.index_of(task.position, &task.id)
    }

    fn invalidate(&mut self) {
        *self.fragments.get_mut() = Default::default();
        *self.runs.get_mut() = Default::default();
    }
}

#[derive(Debug, Default)]
pub struct AccountDoc {
    pub rev: i64,
    /// The latest stamp any change of the account carries.
    pub max_stamp: i64,
    pub(crate) projects: AHashMap<String, ProjectEntry>,
    pub(crate) columns: AHashMap<String, Column>,
    /// Shared, never changed in place (a write replaces the card): the map keeps spare slots
    /// a pointer wide, and a changes reply holds the cards it sends without copying them.
    /// A card's key is the one allocation of its id that its project's order and the stamp
    /// index share (see [`Self::shared_id`]): three copies cost about 4 MiB of peak on the
    /// largest account.
    pub(crate) tasks: AHashMap<Arc<str>, Arc<Task>>,
    pub(crate) binned: AHashMap<String, Binned>,
    pub(crate) markers: AHashMap<String, Marker>,
    /// Every record and marker by the stamp it last changed at: `/changes` scans a range.
    pub(crate) by_stamp: BTreeSet<(i64, Arc<str>)>,
    /// Live cards not finished.
    pub(crate) open_cards: usize,
    /// `completedAt` of every live finished card, sorted: the 30-day count is a search.
    pub(crate) finished: Vec<i64>,
    /// The cards the account's search index lacks (see `search::index`).
    pub(crate) search: crate::search::index::Pending,
}

fn updated_at(record: &Record) -> i64 {
    match record {
        Record::Project(p) => p.updated_at,
        Record::Column(c) => c.updated_at,
        Record::Task(t) => t.updated_at,
    }
}

fn bin_of<T>(s: &domain::storage::Stored<T>) -> Option<(String, i64)> {
    s.bin_entry.clone().zip(s.deleted_at)
}

impl AccountDoc {
    pub fn from_snapshot(snap: AccountSnapshot) -> Self {
        let mut doc = AccountDoc::default();
        let rows = (snap.markers.into_iter().map(Loaded::Marker))
            .chain(snap.projects.into_iter().map(Loaded::Project))
            .chain(snap.columns.into_iter().map(Loaded::Column))
            .chain(snap.tasks.into_iter().map(Loaded::Task));
        for row in rows {
            doc.add_loaded(row);
        }
        doc.finish_load(snap.rev, snap.last_stamp);
        doc
    }

    /// Takes one stored row while loading, in any order; [`Self::finish_load`] then links
    /// columns and cards into their projects.
    pub fn add_loaded(&mut self, row: Loaded) {
        match row {
            Loaded::Marker(m) => self.mark(m.id, m.kind, m.project_id, m.deleted_at),
            Loaded::Project(p) => match bin_of(&p) {
                Some((entry, at)) => self.bin(Record::Project(p.value), entry, at),
                None => self.live(Record::Project(p.value)),
            },
            Loaded::Column(c) => match bin_of(&c) {
                Some((entry, at)) => self.bin(Record::Column(c.value), entry, at),
                None => {
                    self.index(c.value.id.as_str().into(), c.value.updated_at);
                    self.columns.insert(c.value.id.clone(), c.value);
                }
            },
            Loaded::Task(t) => match bin_of(&t) {
                Some((entry, at)) => self.bin(Record::Task(t.value), entry, at),
                None => {
                    let task = t.value;
                    let id: Arc<str> = task.id.as_str().into();
                    self.index(id.clone(), task.updated_at);
                    self.count(&task);
                    self.tasks.insert(id, Arc::new(task));
                }
            },
        }
    }

    /// Ends a load at the account's counters: each project's columns, and its cards sorted
    /// once into their order.
    pub fn finish_load(&mut self, rev: i64, last_stamp: i64) {
        self.rev = rev;
        self.max_stamp = last_stamp;
        self.search = crate::search::index::Pending::from(rev);
        for c in self.columns.values() {
            if let Some(entry) = self.projects.get_mut(&c.project_id) {
                entry.columns.insert(c.id.clone());
            }
        }
        let mut orders: AHashMap<&str, Vec<(f64, Arc<str>)>> = AHashMap::new();
        for (id, t) in self.tasks.iter() {
            (orders.entry(t.project_id.as_str()).or_default()).push((t.position, id.clone()));
        }
        for (id, entry) in self.projects.iter_mut() {
            entry.tasks = TaskOrder::from_unsorted(orders.remove(id.as_str()).unwrap_or_default());
            entry.invalidate();
        }
    }

    /// Applies one committed change set, numbered `rev` and stamped `stamp`, taking its
    /// records; one already reflected (older revision) is skipped.
    pub fn apply(&mut self, rev: i64, stamp: i64, mut records: Vec<RecordChange>) {
        if rev <= self.rev {
            return;
        }
        // Projects before columns before cards, so a restored project exists before what it
        // holds (a stable sort keeps the writer's order within each kind).
        records.sort_by_key(|c| match c {
            RecordChange::Live(r) => r.kind() as u8,
            _ => 3,
        });
        for change in records {
            match &change {
                RecordChange::Live(Record::Task(t))
                | RecordChange::Binned {
                    record: Record::Task(t),
                    ..
                } => self.search.touch(&t.id),
                RecordChange::Destroyed {
                    kind: Kind::Task,
                    id,
                } => self.search.touch(id),
                _ => {}
            }
            match change {
                RecordChange::Live(r) => self.live(r),
                RecordChange::Binned {
                    record,
                    entry,
                    deleted_at,
                } => self.bin(record, entry, deleted_at),
                RecordChange::Destroyed { id, kind } => self.destroy(&id, kind, stamp),
            }
        }
        self.rev = rev;
        self.max_stamp = self.max_stamp.max(stamp);
    }

    fn live(&mut self, record: Record) {
        let id = self.shared_id(record.id());
        self.deindex(&id);
        self.binned.remove(record.id());
        self.markers.remove(record.id());
        self.index(id.clone(), updated_at(&record));
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
                // A card that keeps its project and position keeps its place in the order.
                let same_place = self.tasks.get(t.id.as_str()).is_some_and(|old| {
                    old.project_id == t.project_id && old.position.total_cmp(&t.position).is_eq()
                });
                // A card that keeps its `completedAt` keeps its place in the counts.
                let mut counted = false;
                if same_place {
                    if let Some(old) = self.tasks.remove(t.id.as_str()) {
                        counted = old.completed_at == t.completed_at;
                        if !counted {
                            self.uncount(&old);
                        }
                    }
                } else {
                    self.unlink(&t.id);
                }
                if let Some(entry) = self.projects.get_mut(&t.project_id) {
                    if !same_place {
                        entry.tasks.insert(t.position, &id);
                    }
                    entry.invalidate();
                }
                if !counted {
                    self.count(&t);
                }
                // The map holds no key for the card here (taken out above), so it keeps `id`.
                self.tasks.insert(id, Arc::new(t));
            }
        }
    }

    /// Counts a live card into the per-window counts.
    fn count(&mut self, t: &Task) {
        match t.completed_at {
            None => self.open_cards += 1,
            Some(done) => {
                let at = self.finished.partition_point(|&c| c < done);
                self.finished.insert(at, done);
            }
        }
    }

    /// Takes a card that leaves the live set out of the per-window counts.
    fn uncount(&mut self, t: &Task) {
        match t.completed_at {
            None => self.open_cards -= 1,
            Some(done) => {
                let at = self.finished.partition_point(|&c| c < done);
                if self.finished.get(at) == Some(&done) {
                    self.finished.remove(at);
                }
            }
        }
    }

    fn bin(&mut self, record: Record, entry: String, deleted_at: i64) {
        let id = self.shared_id(record.id());
        self.deindex(&id);
        self.unlink(record.id());
        self.index(id, updated_at(&record));
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
        if let Some(c) = self.columns.remove(id) {
            if let Some(entry) = self.projects.get_mut(&c.project_id) {
                entry.columns.remove(id);
                entry.invalidate();
            }
        } else if let Some(t) = self.tasks.remove(id) {
            self.uncount(&t);
            if let Some(entry) = self.projects.get_mut(&t.project_id) {
                entry.tasks.remove(t.position, id);
                entry.invalidate();
            }
        }
    }

    /// A record gone for good: projects and columns leave a marker, cards leave no trace.
    fn destroy(&mut self, id: &str, kind: Kind, stamp: i64) {
        self.deindex(&self.shared_id(id));
        self.unlink(id);
        let binned = self.binned.remove(id);
        match kind {
            Kind::Task => {}
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
        self.index(id.as_str().into(), deleted_at);
        self.markers.insert(
            id,
            Marker {
                kind,
                project_id,
                deleted_at,
            },
        );
    }

    /// The id as the stamp index and a project's order take it: a live card's map key, shared
    /// rather than copied; any other record's a new allocation (what a copy cost before).
    fn shared_id(&self, id: &str) -> Arc<str> {
        match self.tasks.get_key_value(id) {
            Some((key, _)) => key.clone(),
            None => id.into(),
        }
    }

    /// Indexes a record or marker not indexed yet (see [`Self::deindex`]).
    fn index(&mut self, id: Arc<str>, stamp: i64) {
        self.by_stamp.insert((stamp, id));
    }

    /// Takes a record or marker out of the stamp index, under the stamp it holds now; called
    /// before it changes, so the index needs no map of stamps of its own.
    fn deindex(&mut self, id: &Arc<str>) {
        if let Some(old) = self.indexed_stamp(id) {
            self.by_stamp.remove(&(old, id.clone()));
        }
    }

    /// The stamp a record or marker is indexed under: its own, wherever it lives.
    fn indexed_stamp(&self, id: &str) -> Option<i64> {
        if let Some(t) = self.tasks.get(id) {
            return Some(t.updated_at);
        }
        if let Some(c) = self.columns.get(id) {
            return Some(c.updated_at);
        }
        if let Some(e) = self.projects.get(id) {
            return Some(e.project.updated_at);
        }
        if let Some(b) = self.binned.get(id) {
            return Some(updated_at(&b.record));
        }
        self.markers.get(id).map(|m| m.deleted_at)
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use domain::records::Task;

    pub(crate) fn project(id: &str) -> Record {
        Record::Project(Project {
            id: id.into(),
            name: id.into(),
            folder: None,
            position: 0.0,
            archived_at: None,
            pinned_at: None,
            photo: None,
            updated_at: 1,
        })
    }

    /// A seeded xorshift generator: `next(n)` is a number below `n`, the same every run.
    pub(crate) fn seeded(mut seed: u64) -> impl FnMut(u64) -> u64 {
        move |n| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        }
    }

    /// Applies one change set of `records`, stamped and numbered `rev`.
    pub(crate) fn apply_at(doc: &mut AccountDoc, rev: i64, records: Vec<RecordChange>) {
        doc.apply(rev, rev, records);
    }

    pub(crate) fn task(id: usize, project: &str, position: f64, done: Option<i64>) -> Task {
        Task {
            id: format!("t_{id}"),
            project_id: project.into(),
            column_id: format!("l_{project}"),
            title: "t".into(),
            priority: 1,
            position,
            completed_at: done,
            updated_at: 1,
            ..Task::default()
        }
    }

    /// Every live card's `order` is its index in a fresh sort of its project, the stamp index
    /// holds each record once under its own stamp, and the per-window counts match a walk,
    /// after a long run of moves, completions, deletions and restores.
    #[test]
    fn the_order_and_stamp_indexes_match_a_fresh_build_after_random_changes() {
        let mut doc = AccountDoc::default();
        let mut next = seeded(0x9e37_79b9_7f4a_7c15);
        let projects = ["p_a", "p_b", "p_c"];
        let mut rev = 0;
        let mut apply = |doc: &mut AccountDoc, records: Vec<RecordChange>| {
            rev += 1;
            apply_at(doc, rev, records);
        };
        apply(
            &mut doc,
            projects
                .iter()
                .map(|p| RecordChange::Live(project(p)))
                .collect(),
        );
        for step in 0..3000 {
            let id = next(60) as usize;
            let p = projects[next(3) as usize];
            // Few distinct positions, so ties fall back to the id.
            let position = next(8) as f64 - 4.0;
            let done = (next(4) == 0).then_some(next(1000) as i64);
            let mut t = task(id, p, position, done);
            t.updated_at = step;
            let change = match next(5) {
                0 => RecordChange::Binned {
                    record: Record::Task(t),
                    entry: format!("b_{step}"),
                    deleted_at: step,
                },
                _ => RecordChange::Live(Record::Task(t)),
            };
            apply(&mut doc, vec![change]);
        }
        for p in projects {
            let entry = &doc.projects[p];
            let mut fresh: Vec<&Task> = doc
                .tasks
                .values()
                .map(|t| &**t)
                .filter(|t| t.project_id == p)
                .collect();
            fresh.sort_by(|a, b| {
                a.position
                    .total_cmp(&b.position)
                    .then_with(|| a.id.cmp(&b.id))
            });
            assert_eq!(entry.tasks.len(), fresh.len(), "{p}");
            for (i, t) in fresh.iter().enumerate() {
                assert_eq!(entry.order_of(t), Some(i), "{} in {p}", t.id);
            }
        }
        // The stamp index holds every record once, under its own stamp.
        let expected: BTreeSet<(i64, String)> = (doc.tasks.values())
            .map(|t| (t.updated_at, t.id.clone()))
            .chain(
                doc.binned
                    .iter()
                    .map(|(id, b)| (updated_at(&b.record), id.clone())),
            )
            .chain((doc.projects.values()).map(|e| (e.project.updated_at, e.project.id.clone())))
            .collect();
        let indexed: BTreeSet<(i64, String)> = (doc.by_stamp.iter())
            .map(|(stamp, id)| (*stamp, id.to_string()))
            .collect();
        assert_eq!(indexed, expected);
        // A live card's id is one allocation: the map's key, its order's entry and its stamp
        // index entry point at the same bytes.
        for (id, t) in doc.tasks.iter() {
            let ordered = (doc.projects[t.project_id.as_str()].tasks.iter())
                .find(|(_, o)| o == id)
                .map(|(_, o)| o);
            assert!(
                ordered.is_some_and(|o| Arc::ptr_eq(o, id)),
                "{id} in its order"
            );
            let stamped = doc.by_stamp.get(&(t.updated_at, id.clone()));
            assert!(
                stamped.is_some_and(|(_, s)| Arc::ptr_eq(s, id)),
                "{id} by stamp"
            );
        }
        let open = doc
            .tasks
            .values()
            .filter(|t| t.completed_at.is_none())
            .count();
        assert_eq!(doc.open_cards, open);
        let mut finished: Vec<i64> = doc.tasks.values().filter_map(|t| t.completed_at).collect();
        finished.sort();
        assert_eq!(doc.finished, finished);

        // A document loaded from the same records (tasks last, in any order) agrees.
        fn live<T>(value: T) -> domain::storage::Stored<T> {
            domain::storage::Stored {
                value,
                bin_entry: None,
                deleted_at: None,
            }
        }
        let reloaded = AccountDoc::from_snapshot(AccountSnapshot {
            rev: doc.rev,
            last_stamp: doc.max_stamp,
            projects: doc
                .projects
                .values()
                .map(|e| live(e.project.clone()))
                .collect(),
            columns: Vec::new(),
            tasks: doc.tasks.values().map(|t| live((**t).clone())).collect(),
            markers: Vec::new(),
        });
        for p in projects {
            assert!(
                (reloaded.projects[p].tasks.iter()).eq(doc.projects[p].tasks.iter()),
                "{p}"
            );
        }
        assert_eq!(reloaded.open_cards, doc.open_cards);
        assert_eq!(reloaded.finished, doc.finished);
    }
}
