//! The collector of a search: every hit counted, and the best `limit` after the cursor kept
//! in the reply's order (score, then `updatedAt`, then the id's order key, all highest
//! first). While collecting, only scores are kept, and a hit that scores below the page's
//! current floor is dropped at once; the tie-breaks' fast fields are read once, at the end,
//! for the few hits that can still make the page.

use std::cmp::{Ordering, Reverse};
use std::sync::Arc;

use tantivy::collector::{Collector, SegmentCollector};
use tantivy::columnar::ColumnValues;
use tantivy::{DocAddress, DocId, Score, SegmentOrdinal, SegmentReader};

/// A hit's place in the order; higher is better.
#[derive(Debug, Clone, Copy)]
pub struct Key {
    pub score: Score,
    pub updated: i64,
    pub key: u64,
}

impl Ord for Key {
    fn cmp(&self, other: &Self) -> Ordering {
        self.score
            .total_cmp(&other.score)
            .then(self.updated.cmp(&other.updated))
            .then(self.key.cmp(&other.key))
    }
}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Key {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Key {}

/// Counts every hit and keeps the best `limit` that rank below `after`.
pub struct Ranked {
    pub limit: usize,
    pub after: Option<Key>,
}

/// Every hit counted, and the page best first.
pub type Page = (usize, Vec<(Key, DocAddress)>);

impl Collector for Ranked {
    type Fruit = Page;
    type Child = SegmentRanked;

    fn for_segment(
        &self,
        ord: SegmentOrdinal,
        reader: &SegmentReader,
    ) -> tantivy::Result<SegmentRanked> {
        let fast = reader.fast_fields();
        Ok(SegmentRanked {
            ord,
            limit: self.limit,
            after: self.after,
            updated: fast.i64("updated")?.first_or_default_col(0),
            key: fast.u64("key")?.first_or_default_col(0),
            count: 0,
            candidates: Vec::with_capacity(4 * self.limit.max(64)),
            floor: Score::NEG_INFINITY,
            prune_at: 3 * self.limit.max(64),
        })
    }

    fn requires_scoring(&self) -> bool {
        true
    }

    fn merge_fruits(&self, fruits: Vec<Page>) -> tantivy::Result<Page> {
        let count = fruits.iter().map(|(c, _)| c).sum();
        let mut all: Vec<(Key, DocAddress)> = fruits.into_iter().flat_map(|(_, top)| top).collect();
        all.sort_by_key(|(key, _)| Reverse(*key));
        all.truncate(self.limit);
        Ok((count, all))
    }
}

pub struct SegmentRanked {
    ord: SegmentOrdinal,
    limit: usize,
    after: Option<Key>,
    updated: Arc<dyn ColumnValues<i64>>,
    key: Arc<dyn ColumnValues<u64>>,
    count: usize,
    /// Hits that may make the page: every one scoring at least `floor`.
    candidates: Vec<(Score, DocId)>,
    /// The `limit`-th best score so far: a lower one cannot make the page.
    floor: Score,
    /// How many candidates trigger the next prune.
    prune_at: usize,
}

impl SegmentRanked {
    fn key_of(&self, doc: DocId, score: Score) -> Key {
        Key {
            score,
            updated: self.updated.get_val(doc),
            key: self.key.get_val(doc),
        }
    }

    /// Keeps the hits scoring at least the `limit`-th best, ties included.
    fn prune(&mut self) {
        let at = self.limit - 1;
        let (_, kth, _) = self
            .candidates
            .select_nth_unstable_by(at, |a, b| b.0.total_cmp(&a.0));
        self.floor = kth.0;
        let floor = self.floor;
        self.candidates.retain(|(score, _)| *score >= floor);
    }
}

impl SegmentCollector for SegmentRanked {
    type Fruit = Page;

    fn collect(&mut self, doc: DocId, score: Score) {
        self.count += 1;
        if score < self.floor {
            return;
        }
        if let Some(after) = self.after {
            // Hits above the cursor were on earlier pages; at its score, the tie-breaks say.
            if score > after.score || (score == after.score && self.key_of(doc, score) >= after) {
                return;
            }
        }
        self.candidates.push((score, doc));
        if self.candidates.len() >= self.prune_at {
            self.prune();
            // Many hits tied at the floor stay; wait for as many again before the next prune.
            self.prune_at = (2 * self.candidates.len()).max(self.prune_at);
        }
    }

    fn harvest(self) -> Page {
        let ord = self.ord;
        let mut top: Vec<(Key, DocAddress)> = (self.candidates.iter())
            .copied()
            .map(|(score, doc)| (self.key_of(doc, score), DocAddress::new(ord, doc)))
            .collect();
        // Ties can leave many candidates: pick the page's hits first, then order only them.
        if top.len() > self.limit {
            top.select_nth_unstable_by_key(self.limit - 1, |(key, _)| Reverse(*key));
            top.truncate(self.limit);
        }
        top.sort_unstable_by_key(|(key, _)| Reverse(*key));
        (self.count, top)
    }
}
