//! A project's live cards in `(position, id)` order, where a card's index is its `order`.
//!
//! Kept in runs of at most [`RUN`] entries: adding or removing a card moves at most one run's
//! entries, and a card's index is a search plus the lengths of the runs before it. One sorted
//! vector moved every later entry on each insert: a card created at the top of a project of
//! 40,000 moved 1.3 MB.
//!
//! An entry holds the card's id as the document's cards map keys it (one allocation shared
//! with the map and the stamp index, see `doc`), not a copy.

use std::cmp::Ordering;
use std::sync::Arc;

/// The most entries one run holds; a run that grows past it splits in two.
const RUN: usize = 512;

type Entry = (f64, Arc<str>);

#[derive(Debug, Default)]
pub(crate) struct TaskOrder {
    /// Sorted within and across runs; no run is empty.
    runs: Vec<Vec<Entry>>,
}

fn cmp(entry: &Entry, position: f64, id: &str) -> Ordering {
    entry
        .0
        .total_cmp(&position)
        .then_with(|| (*entry.1).cmp(id))
}

impl TaskOrder {
    /// Builds the order from entries in any order (a document being loaded).
    pub(crate) fn from_unsorted(mut entries: Vec<Entry>) -> Self {
        entries.sort_by(|a, b| cmp(a, b.0, &b.1));
        let mut runs = Vec::with_capacity(entries.len().div_ceil(RUN));
        let mut rest = entries.into_iter().peekable();
        while rest.peek().is_some() {
            runs.push(rest.by_ref().take(RUN).collect());
        }
        TaskOrder { runs }
    }

    /// The run that holds, or would hold, `(position, id)`.
    fn run_of(&self, position: f64, id: &str) -> usize {
        let first_not_before = self.runs.partition_point(|run| {
            run.last()
                .is_some_and(|last| cmp(last, position, id) == Ordering::Less)
        });
        first_not_before.min(self.runs.len().saturating_sub(1))
    }

    /// The index of `(position, id)` among all entries, if it is there.
    pub(crate) fn index_of(&self, position: f64, id: &str) -> Option<usize> {
        let r = self.run_of(position, id);
        let run = self.runs.get(r)?;
        let at = run.binary_search_by(|e| cmp(e, position, id)).ok()?;
        Some(self.runs[..r].iter().map(Vec::len).sum::<usize>() + at)
    }

    /// Adds `(position, id)`, sharing `id`'s allocation.
    pub(crate) fn insert(&mut self, position: f64, id: &Arc<str>) {
        if self.runs.is_empty() {
            self.runs.push(Vec::new());
        }
        let r = self.run_of(position, id);
        let run = &mut self.runs[r];
        if let Err(at) = run.binary_search_by(|e| cmp(e, position, id)) {
            run.insert(at, (position, id.clone()));
            if run.len() > RUN {
                let upper = run.split_off(run.len() / 2);
                self.runs.insert(r + 1, upper);
            }
        }
    }

    pub(crate) fn remove(&mut self, position: f64, id: &str) {
        let r = self.run_of(position, id);
        let Some(run) = self.runs.get_mut(r) else {
            return;
        };
        if let Ok(at) = run.binary_search_by(|e| cmp(e, position, id)) {
            run.remove(at);
            if run.is_empty() {
                self.runs.remove(r);
            }
        }
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.runs.iter().map(Vec::len).sum()
    }

    /// Every entry, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Entry> + '_ {
        self.runs.iter().flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// After thousands of random inserts and removals (few distinct positions, so ties fall
    /// to the id), every entry's index is its index in a plain sorted vector, and the runs
    /// stay bounded and non-empty.
    #[test]
    fn indexes_match_a_sorted_vector_through_inserts_and_removals() {
        let mut order = TaskOrder::default();
        let mut plain: Vec<Entry> = Vec::new();
        let mut next = crate::doc::tests::seeded(0x2545_f491_4f6c_dd1d);
        for _ in 0..20_000 {
            let position = next(16) as f64 - 8.0;
            let id: Arc<str> = format!("t_{}", next(3_000)).into();
            let found = plain.binary_search_by(|e| cmp(e, position, &id));
            if next(3) == 0 {
                order.remove(position, &id);
                if let Ok(at) = found {
                    plain.remove(at);
                }
            } else {
                order.insert(position, &id);
                if let Err(at) = found {
                    plain.insert(at, (position, id));
                }
            }
        }
        assert!(plain.len() > 2 * RUN, "the test spans several runs");
        assert_eq!(order.len(), plain.len());
        assert!(order.runs.iter().all(|r| !r.is_empty() && r.len() <= RUN));
        assert!(order.iter().eq(plain.iter()));
        for (i, (position, id)) in plain.iter().enumerate() {
            assert_eq!(order.index_of(*position, id), Some(i), "{id} at {position}");
        }
        assert_eq!(order.index_of(100.0, "t_absent"), None);
        let rebuilt = TaskOrder::from_unsorted(plain.iter().rev().cloned().collect());
        assert!(rebuilt.iter().eq(plain.iter()));
    }
}
