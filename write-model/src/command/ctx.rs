//! What an executing command may touch: the connection, the account's stamp and revision,
//! the change set it is building, the before-images undo needs, and the storage it grows.

use std::sync::Arc;

use ahash::AHashMap;

use crate::change::{ChangeSet, Effect, KeyChange, RecordChange};
use crate::clock::{Clocks, StampClock};
use crate::error::WriteError;
use crate::ledger::{Counters, Kept, Ledger};
use crate::limits::Limits;
use crate::records::{Kind, OfKind, Project, Record, Task};
use crate::store::{self, Row, Tx};
use crate::tops::{self, Least, TopKey, TopsUpdate};

/// The most records a request may touch and still hand its cards to the ledger.
const KEEP_CARDS_UP_TO: usize = 64;

/// A record as it stood before this request first wrote it (`None`: it did not exist).
pub type Before = Option<(Record, Option<String>)>;

/// What a command that ran to its end leaves: its effects, the in-flight stamp to settle
/// once they are applied, and the account's counters and projects and columns to keep once
/// its writes stand.
pub struct Finished {
    pub effects: Vec<Effect>,
    pub settle: Option<(Arc<StampClock>, i64)>,
    pub counters: Option<Counters>,
    pub records: Vec<Kept>,
    /// The number of the undo step it stored under its key.
    pub step: Option<i64>,
    /// The least positions it read, and how it moved its records (for the ledger).
    pub tops: TopsUpdate,
}

/// What a request knows of one record it read or wrote.
struct Touched {
    before: Before,
    /// Its JSON as stored before this request, moved here from its row by the request's
    /// first write of it (for its undo step).
    before_body: Option<String>,
    /// Its row as it stands now (`None`: no row), so a write knows what it replaces without
    /// reading it again.
    row: Option<Row>,
    /// Where its change sits in `changes`: a large request (an import) stays linear.
    change: Option<usize>,
}

/// The environment a command executes in.
pub struct Ctx<'c> {
    pub store: &'c dyn Tx,
    pub account: String,
    pub limits: &'c Limits,
    clocks: &'c Clocks,
    ledger: &'c mut Ledger,
    /// The account's counters as this request moves them; kept only if it succeeds.
    counters: Option<Counters>,
    clock: Option<Arc<StampClock>>,
    stamp_rev: Option<(i64, i64)>,
    changes: Vec<RecordChange>,
    keys: Vec<KeyChange>,
    names_changed: bool,
    /// Every record this request read or wrote, by id.
    touched: AHashMap<String, Touched>,
    /// Whether rows keep their stored JSON: only a request that records an undo step needs it.
    keep_bodies: bool,
    storage_delta: i64,
    /// What this request's deletes added to `storage_delta` (the deletion stamps on the
    /// records they bin): a delete works at the limit, so this part never counts against it.
    deletes_added: i64,
    bin_entries: Vec<String>,
    step: Option<i64>,
    /// The least positions this request read from the ledger or the store, as they stood
    /// before it wrote under them.
    tops_read: Vec<(TopKey, Least)>,
}

impl<'c> Ctx<'c> {
    pub fn new(
        store: &'c dyn Tx,
        account: String,
        limits: &'c Limits,
        clocks: &'c Clocks,
        ledger: &'c mut Ledger,
    ) -> Self {
        Ctx {
            store,
            account,
            limits,
            clocks,
            ledger,
            counters: None,
            clock: None,
            stamp_rev: None,
            changes: Vec::new(),
            keys: Vec::new(),
            names_changed: false,
            touched: AHashMap::new(),
            keep_bodies: false,
            storage_delta: 0,
            deletes_added: 0,
            bin_entries: Vec::new(),
            step: None,
            tops_read: Vec::new(),
        }
    }

    /// Keeps each touched record's stored JSON, for the request's undo step.
    pub fn keep_bodies(&mut self) {
        self.keep_bodies = true;
    }

    /// The stamp and new revision of this request, taken on the first change it makes. A
    /// request that changes nothing never calls this, so it stamps nothing.
    pub fn stamp(&mut self) -> Result<(i64, i64), WriteError> {
        if let Some(sr) = self.stamp_rev {
            return Ok(sr);
        }
        let mut counters = self.counters()?;
        let clock = self.clocks.get(&self.account, || counters.last_stamp);
        let stamp = clock.begin_at_least(self.ledger.least_stamp(&self.account));
        self.clock = Some(clock);
        counters.rev += 1;
        counters.last_stamp = counters.last_stamp.max(stamp);
        self.counters = Some(counters);
        self.stamp_rev = Some((stamp, counters.rev));
        Ok((stamp, counters.rev))
    }

    /// The account's counters as this request has moved them so far.
    fn counters(&mut self) -> Result<Counters, WriteError> {
        match self.counters {
            Some(c) => Ok(c),
            None => {
                let c = self.ledger.get(self.store, &self.account)?;
                self.counters = Some(c);
                Ok(c)
            }
        }
    }

    /// A record of type `T` as it stands now in this request (its own writes included), with
    /// its place in the bin if deleted; `None` when missing or of another kind. Read from the
    /// store once per request, so a command and the writes it makes share one read.
    pub fn get<T: OfKind>(&mut self, id: &str) -> Result<Option<store::Stored<T>>, WriteError> {
        self.capture(id)?;
        let touched = &self.touched[id];
        let (record, bin) = match touched.change.map(|at| &self.changes[at]) {
            Some(RecordChange::Live(r)) => (r.clone(), None),
            Some(RecordChange::Binned {
                record,
                entry,
                deleted_at,
            }) => (record.clone(), Some((entry.clone(), *deleted_at))),
            Some(RecordChange::Destroyed { .. }) => return Ok(None),
            None => match &touched.before {
                Some((record, _)) => (
                    record.clone(),
                    touched.row.as_ref().and_then(|r| r.bin.clone()),
                ),
                None => return Ok(None),
            },
        };
        Ok(T::from_record(record).map(|value| {
            let (bin_entry, deleted_at) = bin.unzip();
            store::Stored {
                value,
                bin_entry,
                deleted_at,
            }
        }))
    }

    /// A live (not deleted) record of type `T`, or `NotFound`.
    pub fn get_live<T: OfKind>(&mut self, id: &str) -> Result<T, WriteError> {
        match self.get::<T>(id)? {
            Some(s) if s.bin_entry.is_none() => Ok(s.value),
            _ => Err(WriteError::NotFound),
        }
    }

    /// The least position among the live records of `kind` under `parent`, as this request
    /// sees it: what the ledger knows, unless this request has written a record there, in
    /// which case the store, which sees its writes (see [`crate::tops`]).
    pub fn least_position(
        &mut self,
        kind: Kind,
        parent: Option<&str>,
    ) -> Result<Least, WriteError> {
        let key = tops::key(kind, parent);
        let wrote_here = self.changes_with_befores().any(|(change, before)| {
            let was = matches!(before, Some((record, None)) if tops::is_under(record, &key));
            let now = matches!(change, RecordChange::Live(record) if tops::is_under(record, &key));
            was || now
        });
        if wrote_here {
            return self.store.min_position(&self.account, kind, parent);
        }
        if let Some((_, least)) = self.tops_read.iter().find(|(k, _)| *k == key) {
            return Ok(*least);
        }
        let least = match self.ledger.least_position(&self.account, &key) {
            Some(least) => least,
            None => self.store.min_position(&self.account, kind, parent)?,
        };
        self.tops_read.push((key, least));
        Ok(least)
    }

    /// What the ledger learns of least positions from this request: what it read, and
    /// where each record it wrote stood live before and stands live now.
    fn tops_update(&mut self) -> TopsUpdate {
        let read = std::mem::take(&mut self.tops_read);
        if read.is_empty() && !self.ledger.holds_tops(&self.account) {
            return TopsUpdate::default();
        }
        let moved = self
            .changes_with_befores()
            .map(|(change, before)| {
                let was = match before {
                    Some((record, None)) => Some(tops::place_of(record)),
                    _ => None,
                };
                let now = match change {
                    RecordChange::Live(record) => Some(tops::place_of(record)),
                    _ => None,
                };
                (was, now)
            })
            .collect();
        TopsUpdate { read, moved }
    }

    /// The account's revision as this request leaves it.
    pub fn rev(&mut self) -> Result<i64, WriteError> {
        Ok(self.counters()?.rev)
    }

    /// Writes `record` over its current row, booking the bytes it grew or freed.
    fn put(&mut self, record: &Record, bin: Option<(&str, i64)>) -> Result<(), WriteError> {
        let id = record.id();
        self.capture(id)?;
        let touched = self.touched.get_mut(id).expect("just captured");
        let mut row = self
            .store
            .put(&self.account, record, bin, touched.row.as_ref())?;
        if !self.keep_bodies {
            row.body = None;
        }
        self.storage_delta += row.stored_len() - touched.row.as_ref().map_or(0, Row::stored_len);
        if let Some(replaced) = touched.row.replace(row)
            && let Some(body) = replaced.body
            && touched.before.is_some()
            && touched.before_body.is_none()
        {
            // The first write replaces the row as it stood: its JSON is the step's "before".
            touched.before_body = Some(body);
        }
        Ok(())
    }

    /// Stores a live record and records the change (a later write of the same record in
    /// this request replaces the earlier one).
    pub fn put_live(&mut self, record: Record) -> Result<(), WriteError> {
        self.put(&record, None)?;
        self.push(RecordChange::Live(record));
        Ok(())
    }

    /// Stores a live task, keeping the index of its checklist items, tags and comments.
    pub fn put_task(&mut self, old: Option<&Task>, task: Task) -> Result<(), WriteError> {
        self.store.index_items(&self.account, old, &task)?;
        self.put_live(Record::Task(task))
    }

    /// Stores a record as deleted under bin entry `entry`.
    pub fn put_binned(
        &mut self,
        record: Record,
        entry: &str,
        deleted_at: i64,
    ) -> Result<(), WriteError> {
        self.put(&record, Some((entry, deleted_at)))?;
        if !self.bin_entries.iter().any(|e| e == entry) {
            self.bin_entries.push(entry.to_owned());
        }
        self.push(RecordChange::Binned {
            record,
            entry: entry.to_owned(),
            deleted_at,
        });
        Ok(())
    }

    /// Destroys a record for good (no bin slot), freeing its bytes.
    pub fn destroy(&mut self, kind: Kind, id: &str) -> Result<(), WriteError> {
        if let Some(row) = self.capture(id)?.row.take() {
            self.store.destroy(&self.account, id)?;
            self.storage_delta -= row.stored_len();
        }
        if kind == Kind::Task {
            self.store.drop_items(&self.account, id)?;
        }
        self.push(RecordChange::Destroyed {
            kind,
            id: id.to_owned(),
        });
        Ok(())
    }

    /// Notes that `id` was just generated for a new record: it has no row, so its first
    /// write reads nothing before it (on PostgreSQL, a round trip saved per create). Should
    /// an id ever collide, the insert fails on the store's key instead of writing over.
    pub fn fresh(&mut self, id: &str) {
        self.touched.entry(id.to_owned()).or_insert(Touched {
            before: None,
            before_body: None,
            row: None,
            change: None,
        });
    }

    /// What the request knows of a record, first reading how it stood before the request
    /// (a record the ledger keeps is taken out of it, see [`Ledger::take_record`]).
    fn capture(&mut self, id: &str) -> Result<&mut Touched, WriteError> {
        if !self.touched.contains_key(id) {
            let found = match self.ledger.take_record(&self.account, id) {
                Some(kept) => Some(kept),
                None => self.store.get_row(&self.account, id)?,
            };
            let (before, row) = match found {
                Some((record, mut row)) => {
                    let entry = row.bin_entry().map(str::to_owned);
                    if !self.keep_bodies {
                        row.body = None;
                    }
                    (Some((record, entry)), Some(row))
                }
                None => (None, None),
            };
            let touched = Touched {
                before,
                before_body: None,
                row,
                change: None,
            };
            self.touched.insert(id.to_owned(), touched);
        }
        Ok(self.touched.get_mut(id).expect("just captured"))
    }

    /// What each record held before this request, and its change.
    pub fn changes_with_befores(&self) -> impl Iterator<Item = (&RecordChange, &Before)> {
        self.changes.iter().map(|c| {
            let touched = self.touched.get(c.id());
            (c, touched.map_or(&None, |t| &t.before))
        })
    }

    /// A record's JSON as stored before this request wrote it, and as this request left it
    /// (`None`: it had, or has, no row).
    pub fn stored_bodies(&self, id: &str) -> (Option<&str>, Option<&str>) {
        match self.touched.get(id) {
            Some(t) => (
                t.before_body.as_deref(),
                t.row.as_ref().and_then(|row| row.body.as_deref()),
            ),
            None => (None, None),
        }
    }

    /// The bin entries this request made.
    pub fn bin_entries(&self) -> &[String] {
        &self.bin_entries
    }

    /// Whether this request changed anything.
    pub fn changed(&self) -> bool {
        self.stamp_rev.is_some()
    }

    /// Runs a delete (DELETE of a card, column or project, or `cancelledAt` set on a live
    /// card): the bytes it adds, the deletion stamps on the records it bins, do not count
    /// against the limit, so deletes still work on a full account. A create that lands
    /// deleted, or a restore, is not a delete: its bytes count.
    pub fn deleting<T>(
        &mut self,
        delete: impl FnOnce(&mut Self) -> Result<T, WriteError>,
    ) -> Result<T, WriteError> {
        let before = self.storage_delta;
        let done = delete(self)?;
        // What a delete frees (the bin window destroying an entry) stays freed; only what
        // it adds is let through.
        self.deletes_added += (self.storage_delta - before).max(0);
        Ok(done)
    }

    /// Refuses, before any write, a request that adds at least `least` more bytes when they
    /// cannot fit: an import or a batch too large for the room left is turned away before
    /// the writer does its work. [`Ctx::settle_storage`] stays the exact check.
    pub fn expect_room(&mut self, least: i64) -> Result<(), WriteError> {
        if least <= 0 {
            return Ok(());
        }
        let used = self.counters()?.stored_bytes;
        let growth = self.storage_delta - self.deletes_added;
        if used + growth + least > self.limits.storage_bytes as i64 {
            return Err(WriteError::StorageFull);
        }
        Ok(())
    }

    /// Books the bytes this request added or freed. A request may pass the limit only when
    /// its net growth is zero or less, its deletes' stamps aside (see [`Ctx::deleting`]);
    /// one that would grow the account past it is refused (and its writes rolled back).
    pub fn settle_storage(&mut self) -> Result<(), WriteError> {
        if self.storage_delta == 0 {
            return Ok(());
        }
        let mut counters = self.counters()?;
        let used = counters.stored_bytes;
        let growth = self.storage_delta - self.deletes_added;
        if growth > 0 && used + growth > self.limits.storage_bytes as i64 {
            return Err(WriteError::StorageFull);
        }
        counters.stored_bytes = (used + self.storage_delta).max(0);
        self.counters = Some(counters);
        self.storage_delta = 0;
        self.deletes_added = 0;
        Ok(())
    }

    fn push(&mut self, change: RecordChange) {
        let next = self.changes.len();
        let touched = self
            .touched
            .get_mut(change.id())
            .expect("a record is captured before it changes");
        match touched.change {
            Some(at) => self.changes[at] = change,
            None => {
                touched.change = Some(next);
                self.changes.push(change);
            }
        }
    }

    /// The number the key's next undo step takes.
    pub fn next_undo_seq(&self, key_id: &str) -> Result<i64, WriteError> {
        self.ledger.next_undo_seq(self.store, key_id)
    }

    /// This request stored its undo step under `seq`.
    pub fn stepped(&mut self, seq: i64) {
        self.step = Some(seq);
    }

    /// Brings the key's stored history up to date before it is read or changed outside a
    /// step (see [`Ledger::settle_steps`]).
    pub fn settle_steps(&mut self, key_id: &str) -> Result<(), WriteError> {
        self.ledger.settle_steps(self.store, key_id)
    }

    pub fn names_changed(&mut self) {
        self.names_changed = true;
    }

    /// Locks another account than the request's for the rest of the transaction, on a
    /// store other nodes write too (the CLI revoking a key it found by id).
    pub fn lock_account(&mut self, account: &str) -> Result<(), WriteError> {
        self.ledger.lock(self.store, &[account])
    }

    pub fn key_change(&mut self, change: KeyChange) {
        self.keys.push(change);
    }

    /// Moves a project's `updatedAt` to this request's stamp: anything inside it changed.
    pub fn touch_project(&mut self, project_id: &str) -> Result<(), WriteError> {
        let (stamp, _) = self.stamp()?;
        let mut project = match self.get::<Project>(project_id)? {
            Some(s) if s.bin_entry.is_none() => s.value,
            _ => return Ok(()),
        };
        if project.updated_at != stamp {
            project.updated_at = stamp;
            self.put_live(Record::Project(project))?;
        }
        Ok(())
    }

    /// The records this request read or wrote, as it leaves them, moved out of it (a row
    /// without its JSON is not kept, nor is a record that is gone). A request that touched
    /// more than `KEEP_CARDS_UP_TO` records (an import, a bulk move) hands over no cards: the
    /// ledger would only drop them again, and copying them all would cost the request its
    /// memory.
    fn kept_records(&mut self) -> Vec<Kept> {
        let with_cards = self.touched.len() <= KEEP_CARDS_UP_TO;
        let mut kept = Vec::with_capacity(self.touched.len());
        for (id, touched) in std::mem::take(&mut self.touched) {
            let Some(row) = touched.row.filter(|row| row.body.is_some()) else {
                continue;
            };
            if !with_cards && row.kind() == Kind::Task {
                continue;
            }
            let record = match touched.change.map(|at| &self.changes[at]) {
                Some(RecordChange::Live(record) | RecordChange::Binned { record, .. }) => {
                    record.clone()
                }
                Some(RecordChange::Destroyed { .. }) => continue,
                None => match touched.before {
                    Some((record, _)) => record,
                    None => continue,
                },
            };
            kept.push((id, (record, row)));
        }
        kept
    }

    /// Ends the command: its effects, and the in-flight stamp to settle once they are applied.
    pub fn finish(mut self) -> Finished {
        let counters = self.counters;
        // Before the records are handed over: it reads what each stood at before.
        let tops = self.tops_update();
        let records = self.kept_records();
        let mut effects: Vec<Effect> = self.keys.into_iter().map(Effect::Key).collect();
        let mut settle = None;
        if let (Some((stamp, rev)), Some(clock)) = (self.stamp_rev, self.clock) {
            effects.push(Effect::Records(ChangeSet {
                account: self.account,
                rev,
                stamp,
                records: self.changes,
                names_changed: self.names_changed,
            }));
            settle = Some((clock, stamp));
        }
        Finished {
            effects,
            settle,
            counters,
            records,
            step: self.step,
            tops,
        }
    }

    /// Settles a stamp taken by a command that then failed (its writes rolled back).
    pub fn abandon(self) {
        if let (Some((stamp, _)), Some(clock)) = (self.stamp_rev, self.clock) {
            clock.finish(stamp, false);
        }
    }
}
