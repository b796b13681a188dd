//! Workboard's read model: per-account documents kept current from the write model's change
//! records, so reads never ask the store on the hot path.
//!
//! - [`doc`] holds one account: live records by project, the recycle bin, and cached
//!   serialised fragments per project and view.
//! - [`shape`] serialises records into the contract's read shapes.
//! - [`names`] is the tantivy index behind `GET /projects?name=`.
//! - [`encoded`] keeps the compressed forms of cached fragments and joins a reply's parts
//!   in the encoding a client asked for; [`encoded_changes`] makes a compressed `/changes`
//!   reply from a plan taken under the document's lock, after the lock is let go.
//! - [`search`] is the card search: one tantivy index per account, kept from the same change
//!   records, brought current by the search that needs it ([`searching`]: the model's search
//!   reads).
//! - [`export`] writes the analytic exports (CSV, NDJSON) row by row as they are sent.
//! - [`calendar`] writes the calendar feed (iCalendar) of the cards that have a deadline.
//!
//! Documents load from the store on first use, through [`domain::storage::ReadStore`]: no
//! engine is linked here. The writer thread calls [`ReadModel::apply`] after each commit and
//! before any reply, which is what makes reads see acknowledged writes.

pub mod calendar;
mod catch_up;
pub mod changes;
mod chunks;
pub mod doc;
pub mod encoded;
pub mod encoded_changes;
pub mod export;
pub mod names;
mod order;
mod render;
mod runs;
pub mod search;
mod searching;
pub mod shape;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use ahash::AHashMap;
use bytes::Bytes;
use domain::clock::wall_ms;
use domain::records::{Kind, Record};
use domain::storage::{BinEntry, KeyRecord, ReadStore};
use domain::{Clocks, Effect, Limits, RecordChange};
use parking_lot::RwLock;

use crate::doc::AccountDoc;
use crate::encoded::{Chain, Encoding, Part, Piece};
use crate::names::NameIndex;

/// Which finished cards a read includes (specification: `completed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completed {
    /// Open cards only (the default of whole-account reads).
    None = 0,
    /// Open cards and those finished within the window.
    Recent = 1,
    /// Every card.
    All = 2,
}

impl Completed {
    pub fn parse(s: &str) -> Option<Completed> {
        match s {
            "none" => Some(Completed::None),
            "recent" => Some(Completed::Recent),
            "all" => Some(Completed::All),
            _ => None,
        }
    }
}

/// Why a read failed, with its cause kept as the type it came as (the text of every
/// variant is as it was when the cause was flattened to text).
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The store answered an error.
    #[error("the store could not be read: {0}")]
    Store(#[from] domain::WriteError),
    /// The index of project names failed.
    #[error("the store could not be read: {0}")]
    Names(#[source] tantivy::TantivyError),
    /// The task that was loading the document did not finish (it panicked or was
    /// cancelled); the cause is the runtime's error.
    #[error("the store could not be read: {0}")]
    Interrupted(#[source] Box<dyn std::error::Error + Send + Sync>),
    #[error(transparent)]
    Search(#[from] search::index::IndexError),
}

/// A loaded document and when it was last used, so idle ones can be dropped, with the
/// account's search index (opened by its first search).
struct Slot {
    doc: RwLock<AccountDoc>,
    last_used: AtomicI64,
    /// On a shared store, the latest revision another node announced for the account: a
    /// read waits until the document has caught up to it.
    announced: AtomicI64,
    search: search::AccountIndex,
}

impl std::ops::Deref for Slot {
    type Target = RwLock<AccountDoc>;
    fn deref(&self) -> &Self::Target {
        &self.doc
    }
}

type SharedDoc = Arc<Slot>;

pub struct ReadModel {
    store: Arc<dyn ReadStore>,
    clocks: Arc<Clocks>,
    window_ms: i64,
    accounts: RwLock<AHashMap<String, SharedDoc>>,
    names: NameIndex,
    /// Whether other nodes write the store too (see [`catch_up`]).
    shared: bool,
    /// Where each account's search index lives (`DIR/<account>`); in memory when `None`.
    search_dir: Option<PathBuf>,
}

impl ReadModel {
    /// A read model over `store`, with the name index built from it. Documents load from
    /// the store on first use.
    pub fn open(
        store: Arc<dyn ReadStore>,
        clocks: Arc<Clocks>,
        limits: &Limits,
    ) -> Result<Self, ReadError> {
        let names = NameIndex::new().map_err(ReadError::Names)?;
        // On a shared store each account's names are taken when its document loads (another
        // node may rename projects meanwhile), so nothing is read ahead.
        if !store.is_shared() {
            for p in store.project_names()? {
                names.put(&p.account, &p.id, &p.name);
            }
        }
        names.publish().map_err(ReadError::Names)?;
        Ok(ReadModel {
            shared: store.is_shared(),
            store,
            clocks,
            window_ms: limits.finished_window_ms(),
            accounts: RwLock::new(AHashMap::new()),
            names,
            search_dir: None,
        })
    }

    /// Keeps each account's search index in `dir/<account>` (the data folder's `search`),
    /// so it outlives a restart; without it, indexes are built in memory on first search.
    pub fn with_search_folder(mut self, dir: PathBuf) -> Self {
        self.search_dir = Some(dir);
        self
    }

    /// Applies a committed group's effects. Runs on the writer thread, before any reply.
    /// The records move into the documents: each change set is left with its account, rev
    /// and stamp (what the nudges need), and no records.
    pub fn apply(&self, effects: &mut [Effect]) {
        let mut names_changed = false;
        for effect in effects {
            let Effect::Records(cs) = effect else {
                continue;
            };
            let records = std::mem::take(&mut cs.records);
            let Some(slot) = self.accounts.read().get(&cs.account).cloned() else {
                names_changed |= self.follow_names(&cs.account, cs.names_changed, &records);
                continue;
            };
            let mut doc = slot.write();
            if self.shared && doc.rev < cs.rev - 1 {
                // Another node committed between this node's last change and this one.
                match self.fill_gap(&cs.account, &mut doc, cs.rev - 1) {
                    Ok(changed) => names_changed |= changed,
                    Err(e) => {
                        tracing::warn!(error = %e, account = %cs.account, "a document could not catch up; it loads anew on next use");
                        drop(doc);
                        self.accounts.write().remove(&cs.account);
                        continue;
                    }
                }
            }
            if doc.rev < cs.rev {
                names_changed |= self.follow_names(&cs.account, cs.names_changed, &records);
                doc.apply(cs.rev, cs.stamp, records);
            }
        }
        if names_changed {
            self.publish_names();
        }
    }

    /// Stages what a change set does to the account's project names; whether it did.
    fn follow_names(&self, account: &str, names_changed: bool, records: &[RecordChange]) -> bool {
        if !names_changed {
            return false;
        }
        for change in records {
            match change {
                RecordChange::Live(Record::Project(p)) => self.names.put(account, &p.id, &p.name),
                RecordChange::Binned {
                    record: Record::Project(p),
                    ..
                } => self.names.remove(account, &p.id),
                RecordChange::Destroyed {
                    kind: Kind::Project,
                    id,
                } => self.names.remove(account, id),
                _ => {}
            }
        }
        true
    }

    fn publish_names(&self) {
        if let Err(e) = self.names.publish() {
            tracing::error!(error = %e, "the name index could not publish");
        }
    }

    /// The account's document, loaded from the store on first use.
    fn doc(&self, account: &str) -> Result<SharedDoc, ReadError> {
        if let Some(doc) = self.accounts.read().get(account) {
            doc.last_used.store(wall_ms(), Ordering::Relaxed);
            return Ok(doc.clone());
        }
        // Loading under the map's write lock orders the load against the writer's apply:
        // a commit either lands in the snapshot or is applied to the document afterwards.
        let mut accounts = self.accounts.write();
        if let Some(doc) = accounts.get(account) {
            return Ok(doc.clone());
        }
        let doc = self.load_doc(account)?;
        // Account ids are `a_` and URL-safe characters; anything else never names a folder.
        let plain = account
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        let search_dir = (self.search_dir.as_ref())
            .filter(|_| plain && !account.is_empty())
            .map(|d| d.join(account));
        let doc = Arc::new(Slot {
            doc: RwLock::new(doc),
            last_used: AtomicI64::new(wall_ms()),
            announced: AtomicI64::new(0),
            search: search::AccountIndex::new(search_dir),
        });
        accounts.insert(account.to_owned(), doc.clone());
        Ok(doc)
    }

    /// The account's document as the store holds it now. On a shared store the account's
    /// project names are taken from it too: other nodes may have renamed projects while the
    /// document was not in memory here.
    fn load_doc(&self, account: &str) -> Result<AccountDoc, ReadError> {
        let mut doc = AccountDoc::default();
        let (rev, last_stamp) = self
            .store
            .load_account(account, &mut |row| doc.add_loaded(row))?
            .unwrap_or_default();
        doc.finish_load(rev, last_stamp);
        if self.shared {
            self.names.replace_account(
                account,
                doc.projects
                    .iter()
                    .map(|(id, entry)| (id.as_str(), entry.project.name.as_str())),
            );
            self.publish_names();
        }
        Ok(doc)
    }

    /// Drops the documents of accounts idle for `idle_ms`; they reload on next use. Safe
    /// against the writer: a commit applied to a dropped document is in the store already.
    pub fn evict_idle(&self, idle_ms: i64) -> usize {
        let now = wall_ms();
        let mut accounts = self.accounts.write();
        let before = accounts.len();
        // A slot a request still holds is in use, not idle: its search index stays with it.
        accounts.retain(|_, slot| {
            now - slot.last_used.load(Ordering::Relaxed) < idle_ms || Arc::strong_count(slot) > 1
        });
        before - accounts.len()
    }

    /// The analytic export of the account: every live card, one row each, written as the
    /// rows are pulled.
    pub fn export_rows(
        &self,
        account: &str,
        format: export::Format,
    ) -> Result<export::Rows, ReadError> {
        Ok(export::Rows::of(&self.doc(account)?.read(), format))
    }

    /// A weak entity tag for a read of the account: its revision, the live-card count of the
    /// view's window (which moves as finished cards age out, with no write), and the query.
    /// Taken before the body is read, so a body is never older than its tag.
    pub fn etag(&self, account: &str, view: Completed, query: &str) -> Result<String, ReadError> {
        use std::hash::{Hash, Hasher};
        let cutoff = changes::cutoff(view, wall_ms(), self.window_ms);
        let doc = self.doc(account)?;
        let doc = doc.read();
        let mut h = std::hash::DefaultHasher::new();
        query.hash(&mut h);
        Ok(format!(
            "W/\"{}-{}-{:x}\"",
            doc.rev,
            doc.live_cards(view, cutoff),
            h.finish()
        ))
    }

    /// The `now` of a read of this account: taken before the read, never ahead of it.
    pub fn now(&self, account: &str) -> i64 {
        self.clocks
            .read_now(account, || self.store.last_stamp(account).unwrap_or(0))
    }

    /// `GET /changes`: `{unchanged, now}` for an idle poll, else the full changes reply, in
    /// `encoding` when it is at least [`encoded::THRESHOLD`] bytes.
    pub fn changes(
        &self,
        account: &str,
        q: &changes::ChangesQuery,
        encoding: Encoding,
    ) -> Result<Body, ReadError> {
        let now = self.now(account);
        let cutoff = changes::cutoff(q.view, now, self.window_ms);
        let slot = self.doc(account)?;
        let plan = {
            let doc = slot.read();
            if doc.unchanged(q, cutoff) {
                return Ok(Body::Ready(vec![Bytes::from(format!(
                    "{{\"unchanged\":true,\"now\":{now}}}"
                ))]));
            }
            if encoding == Encoding::Identity {
                return Ok(Body::Parts(doc.changes(q, now, cutoff)));
            }
            doc.changes_plan(q, now, cutoff, self.window_ms, encoding, encoded::THRESHOLD)
        };
        // The lock is let go: the reply is serialised and compressed from what the plan took.
        Ok(match plan.finish() {
            encoded_changes::Finished::Encoded(encoded) => Body::Encoded(encoding, encoded),
            encoded_changes::Finished::Plain(parts) => Body::Parts(parts),
        })
    }

    /// The whole-account document as a chain of shared pieces: `{version, now, projects}`.
    /// With `name`, only the projects whose whole name matches, ignoring case.
    pub fn projects(
        &self,
        account: &str,
        view: Completed,
        name: Option<&str>,
    ) -> Result<Chain, ReadError> {
        let now = self.now(account);
        let hits = match name {
            Some(name) => Some(self.names.search(account, name).map_err(ReadError::Names)?),
            None => None,
        };
        let slot = self.doc(account)?;
        let ids = |doc: &AccountDoc| -> Vec<String> {
            doc.project_ids()
                .into_iter()
                .filter(|id| hits.as_ref().is_none_or(|h| h.iter().any(|h| h == id)))
                .map(str::to_owned)
                .collect()
        };
        let pieces = self.pieces(&slot, ids, view, now);
        Ok(envelope(now, pieces.into_iter()))
    }

    /// The fragments of the projects `ids` picks, in its order. The lock is held to pick
    /// them and take each cached fragment or the cut to render one; the rendering runs after
    /// it is let go, and what was rendered is kept only if no write came meanwhile.
    fn pieces(
        &self,
        slot: &Slot,
        ids: impl FnOnce(&AccountDoc) -> Vec<String>,
        view: Completed,
        now: i64,
    ) -> Vec<Arc<Piece>> {
        let (rev, taken) = {
            let doc = slot.read();
            let taken: Vec<(String, render::Fragmented)> = ids(&doc)
                .into_iter()
                .filter_map(|id| {
                    let f = doc.fragment_or_cut(&id, view, now, self.window_ms)?;
                    Some((id, f))
                })
                .collect();
            (doc.rev, taken)
        };
        let mut rendered = Vec::new();
        let pieces = taken
            .into_iter()
            .map(|(id, f)| match f {
                render::Fragmented::Cached(piece) => piece,
                render::Fragmented::Cut(cut) => {
                    let done = cut.render();
                    let piece = done.piece();
                    rendered.push((id, done));
                    piece
                }
            })
            .collect();
        if !rendered.is_empty() {
            let doc = slot.read();
            if doc.rev == rev {
                for (id, done) in rendered {
                    doc.keep_rendered(&id, done);
                }
            }
        }
        pieces
    }

    /// One project in the whole-account shape; `None` if it is not the account's.
    pub fn project(
        &self,
        account: &str,
        id: &str,
        view: Completed,
    ) -> Result<Option<Chain>, ReadError> {
        let now = self.now(account);
        let slot = self.doc(account)?;
        let one = |_: &AccountDoc| vec![id.to_owned()];
        Ok(self
            .pieces(&slot, one, view, now)
            .pop()
            .map(|f| envelope(now, std::iter::once(f))))
    }

    /// A project as read (columns and open cards), for write replies.
    pub fn project_json(&self, account: &str, id: &str) -> Result<Option<Bytes>, ReadError> {
        let now = self.now(account);
        let slot = self.doc(account)?;
        let one = |_: &AccountDoc| vec![id.to_owned()];
        Ok(self
            .pieces(&slot, one, Completed::None, now)
            .pop()
            .map(|p| p.contiguous()))
    }

    pub fn column_json(&self, account: &str, id: &str) -> Result<Option<Bytes>, ReadError> {
        let cut = self.doc(account)?.read().column_cut(id);
        Ok(cut.map(|(column, tasks)| render::column_json_of(&column, &tasks)))
    }

    /// Rendered after the lock is let go (a card may hold a quarter of a million characters).
    pub fn task_json(&self, account: &str, id: &str) -> Result<Option<Bytes>, ReadError> {
        let cut = self.doc(account)?.read().task_cut(id);
        Ok(cut.map(|(task, order)| render::task_json_of(&task, order)))
    }

    /// A live card as read, or a deleted one (for the reply of the write that deleted it).
    pub fn task_json_any(&self, account: &str, id: &str) -> Result<Option<Bytes>, ReadError> {
        let doc = self.doc(account)?;
        let doc = doc.read();
        Ok(doc.task_json(id).or_else(|| doc.binned_task_json(id)))
    }

    pub fn checklist_item_json(
        &self,
        account: &str,
        task_id: &str,
        item_id: &str,
    ) -> Result<Option<Bytes>, ReadError> {
        Ok(self
            .doc(account)?
            .read()
            .checklist_item_json(task_id, item_id))
    }

    /// The account's recycle bin, newest first. Rarely read, so it asks the store, which
    /// holds every acknowledged write (it blocks: callers on an async runtime move it off
    /// its workers).
    pub fn bin(&self, account: &str) -> Result<Vec<BinEntry>, ReadError> {
        Ok(self.store.list_bin(account)?)
    }

    /// The account's stored bytes and what a purge would free (from the store; it blocks).
    pub fn storage(&self, account: &str) -> Result<(u64, u64), ReadError> {
        Ok(self.store.storage(account)?)
    }

    /// The account's live keys (from the store; it blocks).
    pub fn keys(&self, account: &str) -> Result<Vec<KeyRecord>, ReadError> {
        Ok(self.store.list_keys(account)?)
    }

    /// How many account documents are in memory.
    pub fn loaded(&self) -> usize {
        self.accounts.read().len()
    }

    /// Whether the account's document is in memory, so a read of it never waits on the
    /// store.
    pub fn is_loaded(&self, account: &str) -> bool {
        self.accounts.read().contains_key(account)
    }

    /// Loads the account's document if it is not in memory (it blocks on the store).
    pub fn load(&self, account: &str) -> Result<(), ReadError> {
        self.doc(account).map(drop)
    }

    /// Whether the account has a live project `id`.
    pub fn has_project(&self, account: &str, id: &str) -> Result<bool, ReadError> {
        Ok(self.doc(account)?.read().has_project(id))
    }
}

/// A reply body: buffers ready to send, cached pieces (sent in any encoding without
/// compressing them again), or a changes reply or an export's rows written out as they are
/// sent.
pub enum Body {
    Ready(Vec<Bytes>),
    Pieces(Chain),
    Parts(changes::ChangesParts),
    /// Buffers already in an encoding (a compressed changes reply).
    Encoded(Encoding, Vec<Bytes>),
    /// An export's rows, written out as they are sent.
    Rows(export::Rows),
}

impl From<Vec<Bytes>> for Body {
    fn from(chunks: Vec<Bytes>) -> Self {
        Body::Ready(chunks)
    }
}

impl From<Chain> for Body {
    fn from(chain: Chain) -> Self {
        Body::Pieces(chain)
    }
}

/// `{"version":1,"now":N,"projects":[` fragments `]}` without copying the fragments: only
/// the head is made per request.
fn envelope(now: i64, fragments: impl Iterator<Item = Arc<Piece>>) -> Chain {
    let mut parts = vec![Part::Fresh(Bytes::from(format!(
        "{{\"version\":1,\"now\":{now},\"projects\":["
    )))];
    for (i, f) in fragments.enumerate() {
        if i > 0 {
            parts.push(Part::Cached(encoded::COMMA.clone()));
        }
        parts.push(Part::Cached(f));
    }
    parts.push(Part::Cached(encoded::CLOSE.clone()));
    Chain(parts)
}

#[cfg(test)]
mod read_error_tests {
    use super::ReadError;
    use domain::WriteError;
    use std::error::Error;

    #[test]
    fn a_store_error_stays_typed_and_reads_as_before() {
        let e = ReadError::from(WriteError::Internal("disk gone".into()));
        assert_eq!(
            e.to_string(),
            "the store could not be read: internal error: disk gone"
        );
        let cause = e.source().expect("the store error is the source");
        assert!(matches!(
            cause.downcast_ref::<WriteError>(),
            Some(WriteError::Internal(m)) if m == "disk gone"
        ));
    }
}
