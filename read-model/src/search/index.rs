//! One account's card index: tantivy, in its own folder under the data folder (or in memory
//! when the read model has no folder), and how it is kept current.
//!
//! The writer thread does almost nothing for it: applying a change set, the account's
//! document notes the ids of the cards it touched, from its load on
//! ([`AccountDoc::take_search_work`]). A
//! search first brings the index current: it takes those ids and the cards as the document
//! holds them now, under one short lock, then indexes and commits outside it. So a card is
//! findable once its write is acknowledged, and a write never waits on the index.
//!
//! Each commit records the revision it reflects. An index that is missing, unreadable, of an
//! older layout, or behind the document is rebuilt from the document, which is the store's
//! state; so is one whose folder vanished while it was open.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ahash::AHashSet;
use domain::records::Task;
use parking_lot::{Mutex, RwLock};
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, Searcher, TantivyDocument};

use super::fields::{Fields, register};
use crate::doc::AccountDoc;

/// Bump when the schema or the analyzers change: an index of another layout is rebuilt.
const LAYOUT: u32 = 1;
/// How many cards a full build puts in one segment before it commits (see
/// `AccountIndex::apply`). Measured on the largest account (42,000 cards), the memory
/// check's peak and the first search's time (the build): one segment per arena, 141 MiB and
/// 0.3 s; 2,048 cards, 129 MiB and 0.9 s; 1,024 cards, 127 MiB and 1.4 s. The build runs
/// once per account, when no index on disk can serve; searches on the one segment it leaves
/// took 20-25% less time than on the several the old build left.
pub(super) const FULL_BUILD_SEGMENT_CARDS: usize = 2048;
/// The indexing arena of one commit (tantivy's minimum); pages are taken as they fill.
const WRITER_BUDGET: usize = 15_000_000;

/// What the index lacks, taken from the document under its lock.
pub(crate) enum Work {
    /// Nothing: the index reflects the document.
    Current,
    /// These cards changed since the index's revision: each as it is now, or gone.
    Changes {
        cards: Vec<(String, Option<Arc<Task>>)>,
        rev: i64,
    },
    /// Every live card, to index from nothing.
    Full { cards: Vec<Arc<Task>>, rev: i64 },
}

/// Where the document keeps track of what its index lacks.
#[derive(Debug, Default)]
pub(crate) struct Pending {
    /// Cards changed since `base` (from the document's load on): a search after a restart
    /// brings an index left on disk current with these alone. `None` for a document not
    /// loaded from the store.
    cards: Option<AHashSet<String>>,
    base: i64,
}

impl Pending {
    /// Tracking from revision `rev` on: an index on disk at `rev` lacks only what follows.
    pub(crate) fn from(rev: i64) -> Pending {
        Pending {
            cards: Some(AHashSet::new()),
            base: rev,
        }
    }

    /// Notes a changed card (on the writer thread, inside the document's apply).
    pub(crate) fn touch(&mut self, id: &str) {
        if let Some(cards) = &mut self.cards
            && !cards.contains(id)
        {
            cards.insert(id.to_owned());
        }
    }

    /// Whether cards changed that an open index lacks.
    pub(crate) fn any(&self) -> bool {
        self.cards.as_ref().is_some_and(|c| !c.is_empty())
    }
}

impl AccountDoc {
    /// Whether an index that reflects revision `indexed` lacks nothing: a read, so searches
    /// of a current index never take the document's write lock.
    pub(crate) fn search_is_current(&self, indexed: i64) -> bool {
        match &self.search.cards {
            Some(cards) => cards.is_empty() && indexed == self.search.base,
            None => false,
        }
    }

    /// What an index that reflects revision `indexed` lacks (everything when `full`), and
    /// from now on notes changes for it. Takes the document's write lock briefly: ids and
    /// shared cards only, never their text.
    pub(crate) fn take_search_work(&mut self, indexed: i64, full: bool) -> Work {
        let rev = self.rev;
        let noted = self.search.cards.replace(AHashSet::new());
        let incremental = !full
            && match &noted {
                Some(_) => indexed == self.search.base,
                None => indexed == rev,
            };
        self.search.base = rev;
        if !incremental {
            return Work::Full {
                cards: self.tasks.values().cloned().collect(),
                rev,
            };
        }
        let noted = noted.unwrap_or_default();
        if noted.is_empty() {
            return Work::Current;
        }
        let cards = noted
            .into_iter()
            .map(|id| {
                let card = self.tasks.get(id.as_str()).cloned();
                (id, card)
            })
            .collect();
        Work::Changes { cards, rev }
    }
}

#[derive(Debug, thiserror::Error)]
#[error("the search index: {0}")]
pub struct IndexError(String);

impl From<tantivy::TantivyError> for IndexError {
    fn from(e: tantivy::TantivyError) -> Self {
        IndexError(e.to_string())
    }
}

impl From<std::io::Error> for IndexError {
    fn from(e: std::io::Error) -> Self {
        IndexError(e.to_string())
    }
}

/// An open index and the revision it reflects.
struct Open {
    index: Index,
    reader: IndexReader,
    rev: i64,
}

/// One account's index, opened on its first search.
pub struct AccountIndex {
    dir: Option<PathBuf>,
    fields: Fields,
    /// Held while the index is brought current, so one search does it and the others wait.
    open: Mutex<Option<Open>>,
    /// The latest searcher and the revision it reflects: searches of a current index take
    /// it without waiting on `open`.
    ready: RwLock<Option<(i64, Searcher)>>,
}

impl AccountIndex {
    pub fn new(dir: Option<PathBuf>) -> Self {
        AccountIndex {
            dir,
            fields: Fields::schema().1,
            open: Mutex::new(None),
            ready: RwLock::new(None),
        }
    }

    pub fn fields(&self) -> &Fields {
        &self.fields
    }

    /// Whether a search has opened the index.
    pub fn is_open(&self) -> bool {
        self.ready.read().is_some()
    }

    /// Whether a search would find the index current with `doc`, and so never wait.
    pub fn is_current(&self, doc: &RwLock<AccountDoc>) -> bool {
        (self.ready.read().as_ref()).is_some_and(|(rev, _)| doc.read().search_is_current(*rev))
    }

    /// Forgets the open index, so the next search opens it anew from scratch.
    pub fn reset(&self) {
        let mut open = self.open.lock();
        *self.ready.write() = None;
        if let Some(dir) = &self.dir {
            let _ = std::fs::remove_dir_all(dir);
        }
        *open = None;
    }

    /// A searcher over the index brought current with `doc`. A failure to open, index or
    /// commit drops the index and builds it anew from the document, once.
    pub fn searcher(&self, doc: &RwLock<AccountDoc>) -> Result<Searcher, IndexError> {
        if let Some((rev, searcher)) = &*self.ready.read()
            && doc.read().search_is_current(*rev)
        {
            return Ok(searcher.clone());
        }
        self.bring_current(doc)
    }

    /// The slow path of [`Self::searcher`]: opens the index and indexes what it lacks.
    fn bring_current(&self, doc: &RwLock<AccountDoc>) -> Result<Searcher, IndexError> {
        let mut open = self.open.lock();
        let mut failure = None;
        for fresh in [false, true] {
            if open.is_none() || fresh {
                *open = None;
                match self.open_index(fresh) {
                    Ok(o) => *open = Some(o),
                    Err(e) => {
                        failure = Some(e);
                        continue;
                    }
                }
            }
            let current = open.as_mut().expect("opened above");
            let work = if !fresh && doc.read().search_is_current(current.rev) {
                Work::Current
            } else {
                doc.write().take_search_work(current.rev, fresh)
            };
            match self.apply(current, work) {
                Ok(()) => {
                    let searcher = current.reader.searcher();
                    *self.ready.write() = Some((current.rev, searcher.clone()));
                    return Ok(searcher);
                }
                Err(e) => {
                    tracing::warn!(error = %e, "the search index failed; rebuilding it");
                    failure = Some(e);
                }
            }
        }
        *self.ready.write() = None;
        *open = None;
        Err(failure.unwrap_or_else(|| IndexError("unknown failure".into())))
    }

    /// Opens the index in its folder as it was left, or makes an empty one (`fresh`, or
    /// when what is there cannot serve).
    fn open_index(&self, fresh: bool) -> Result<Open, IndexError> {
        let (schema, _) = Fields::schema();
        let Some(dir) = &self.dir else {
            return Self::reading(Index::create_in_ram(schema), -1);
        };
        if !fresh && let Some(open) = self.existing(dir, &schema) {
            return Ok(open);
        }
        match std::fs::remove_dir_all(dir) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.into()),
            _ => {}
        }
        std::fs::create_dir_all(dir)?;
        Self::reading(Index::create_in_dir(dir, schema)?, -1)
    }

    /// The index left in `dir`, if it is whole, of this layout, and says what it reflects.
    fn existing(&self, dir: &Path, schema: &tantivy::schema::Schema) -> Option<Open> {
        if !dir.join("meta.json").exists() {
            return None;
        }
        let index = Index::open_in_dir(dir).ok()?;
        if index.schema() != *schema {
            return None;
        }
        let payload = index.load_metas().ok()?.payload?;
        let rev = payload
            .strip_prefix(&format!("workboard layout {LAYOUT} rev "))?
            .parse()
            .ok()?;
        Self::reading(index, rev).ok()
    }

    fn reading(index: Index, rev: i64) -> Result<Open, IndexError> {
        register(&index);
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        Ok(Open { index, reader, rev })
    }

    /// Indexes what the document said the index lacks, and commits it with its revision.
    fn apply(&self, open: &mut Open, work: Work) -> Result<(), IndexError> {
        let f = &self.fields;
        let (writer, rev) = match work {
            Work::Current => return Ok(()),
            Work::Changes { cards, rev } => {
                let writer = writer(&open.index)?;
                for (id, card) in cards {
                    writer.delete_term(f.id_term(&id));
                    if let Some(card) = card {
                        writer.add_document(Queued::of(f.document(&card)))?;
                    }
                }
                (writer, rev)
            }
            Work::Full { cards, rev } => {
                // A large account is built in segments of a bounded number of cards, each
                // committed as it fills, which frees its arena (otherwise it grows to the
                // whole budget), and then merged into one in a single pass (merging as they
                // come would rewrite the same cards again and again, each pass holding its
                // own buffers). These commits carry no revision, so an index left half
                // built by a crash is rebuilt when next opened.
                let mut writer = writer(&open.index)?;
                writer.set_merge_policy(Box::new(tantivy::merge_policy::NoMergePolicy));
                writer.delete_all_documents()?;
                for (n, card) in cards.iter().enumerate() {
                    writer.add_document(Queued::of(f.document(card)))?;
                    if (n + 1) % FULL_BUILD_SEGMENT_CARDS == 0 {
                        writer.commit()?;
                    }
                }
                writer.commit()?;
                let segments = open.index.searchable_segment_ids()?;
                if segments.len() > 1 {
                    writer.merge(&segments).wait()?;
                }
                (writer, rev)
            }
        };
        let mut writer = writer;
        let mut commit = writer.prepare_commit()?;
        commit.set_payload(&format!("workboard layout {LAYOUT} rev {rev}"));
        commit.commit()?;
        // Merges run now, on this search's thread, and end before the next commit starts.
        writer.wait_merging_threads()?;
        open.reader.reload()?;
        open.rev = rev;
        Ok(())
    }
}

/// A card's document as the writer queues it: boxed, because the writer's queue is made
/// whole, 10,000 slots each as wide as four queued documents, when the writer opens and again
/// at every commit (the old one lives until its thread has indexed what it holds). Unboxed,
/// a slot holds four 56-byte operations and each queue takes 2.4 MB, two of them at once
/// during each commit of a full build; boxed, 0.8 MB.
struct Queued(Box<TantivyDocument>);

impl Queued {
    fn of(document: TantivyDocument) -> Queued {
        Queued(Box::new(document))
    }
}

impl tantivy::Document for Queued {
    type Value<'a>
        = <TantivyDocument as tantivy::Document>::Value<'a>
    where
        Self: 'a;
    type FieldsValuesIter<'a>
        = <TantivyDocument as tantivy::Document>::FieldsValuesIter<'a>
    where
        Self: 'a;

    fn iter_fields_and_values(&self) -> Self::FieldsValuesIter<'_> {
        self.0.iter_fields_and_values()
    }

    fn into_tantivy_document(self) -> TantivyDocument {
        *self.0
    }
}

/// A writer of one indexing thread and one merging thread: an account's index is small, and
/// each thread costs memory while the writer lives.
fn writer(index: &Index) -> Result<IndexWriter<Queued>, IndexError> {
    let options = tantivy::indexer::IndexWriterOptions::builder()
        .memory_budget_per_thread(WRITER_BUDGET)
        .num_worker_threads(1)
        .num_merge_threads(1)
        .build();
    Ok(index.writer_with_options(options)?)
}
