//! Compressed changes replies without compressing per request: per project and view, the
//! project's cards in the view as a changes reply lists them (`cards` and `taskIds`), kept
//! only in compressed form, made the first time a reply in that encoding sends them all,
//! and dropped with the project's fragments when anything in it changes. A reply joins
//! them with the parts it makes itself (the head, the cards of projects sent in part, the
//! bin's cards, `now`), which are small beside an account.
//!
//! A reply takes a project's [`Runs`] under the document's lock, with the cards listed
//! ([`Listed`]) when a run is not yet made in its encoding, and makes the run after the
//! lock is let go. Made late, a run still holds what the project held when its `Runs` was
//! taken: every write to a project's cards, columns or record replaces the project's slots
//! with empty ones (`ProjectEntry::invalidate` in `doc`; a project taken out drops its
//! entry), and [`AccountDoc::runs`] shares kept runs only among the slots present, so the
//! runs made after a write are new objects, and a run made from an older list is kept only
//! in a `Runs` no reply will be given again.

use std::sync::Arc;

use domain::records::Task;

use crate::Completed;
use crate::changes::{element, in_window};
use crate::doc::{AccountDoc, ProjectEntry};
use crate::encoded::{Encoding, Form, Packed};
use crate::shape::TaskView;

/// One project's cards in one view.
#[derive(Debug)]
pub(crate) struct Runs {
    /// How many cards the view holds in the project.
    pub(crate) count: usize,
    /// When a card would age out of the view (the 30-day view only).
    pub(crate) expires_at: i64,
    /// The cards as `TaskView`s joined by commas.
    pub(crate) cards: Arc<Packed>,
    /// Their ids as JSON strings joined by commas.
    pub(crate) ids: Arc<Packed>,
}

impl AccountDoc {
    /// The project's runs for `view` at `cutoff`, from the cache while they hold.
    pub(crate) fn runs(
        &self,
        entry: &ProjectEntry,
        view: Completed,
        now: i64,
        cutoff: i64,
        window_ms: i64,
    ) -> Arc<Runs> {
        let slot = view as usize;
        if let Some(r) = &entry.runs.lock()[slot]
            && now < r.expires_at
        {
            return r.clone();
        }
        let mut expires_at = i64::MAX;
        let mut count = 0;
        for task in self.sorted_tasks(entry) {
            if in_window(task, view, cutoff) {
                count += 1;
                if let (Completed::Recent, Some(done)) = (view, task.completed_at) {
                    expires_at = expires_at.min(done.saturating_add(window_ms));
                }
            }
        }
        let mut slots = entry.runs.lock();
        // The views nest (none within recent within all): another view holding as many of
        // the project's cards holds the same ones, and its runs serve this one too.
        let same = slots
            .iter()
            .flatten()
            .find(|r| r.count == count && now < r.expires_at);
        let (cards, ids) = match same {
            Some(r) => (r.cards.clone(), r.ids.clone()),
            None => Default::default(),
        };
        let runs = Arc::new(Runs {
            count,
            expires_at,
            cards,
            ids,
        });
        slots[slot] = Some(runs.clone());
        runs
    }

    /// The project's cards in the view with their orders: what its runs are made from,
    /// taken under the document's lock (pointers to the shared cards) to make them after.
    pub(crate) fn listed(&self, entry: &ProjectEntry, view: Completed, cutoff: i64) -> Listed {
        (entry.tasks.iter())
            .filter_map(|(_, id)| self.tasks.get(id))
            .enumerate()
            .filter(|(_, task)| in_window(task, view, cutoff))
            .map(|(order, task)| (task.clone(), order))
            .collect()
    }
}

/// A project's cards in a view with their orders, in its order (see [`AccountDoc::listed`]).
pub(crate) type Listed = Arc<[(Arc<Task>, usize)]>;

impl Runs {
    /// The compressed cards run in `encoding`: kept, or made from the cards listed when
    /// these runs were taken (`listed`, given when none was kept then).
    pub(crate) fn cards_form(
        &self,
        listed: Option<&[(Arc<Task>, usize)]>,
        encoding: Encoding,
    ) -> Option<Form> {
        let make = listed.map(|listed| {
            move || {
                run_of(listed, |out, first, (task, order)| {
                    element(
                        out,
                        first,
                        &TaskView {
                            task,
                            order: *order,
                        },
                    )
                })
            }
        });
        self.cards.form(encoding, make)
    }

    /// The compressed ids run in `encoding`, as [`Self::cards_form`].
    pub(crate) fn ids_form(
        &self,
        listed: Option<&[(Arc<Task>, usize)]>,
        encoding: Encoding,
    ) -> Option<Form> {
        let make = listed.map(|listed| {
            move || {
                run_of(listed, |out, first, (task, _)| {
                    element(out, first, &task.id)
                })
            }
        });
        self.ids.form(encoding, make)
    }
}

/// A run's elements, each written by `write` into one buffer.
fn run_of(
    listed: &[(Arc<Task>, usize)],
    write: impl Fn(&mut Vec<u8>, &mut bool, &(Arc<Task>, usize)),
) -> Vec<u8> {
    let mut out = Vec::new();
    let mut first = true;
    for entry in listed {
        write(&mut out, &mut first, entry);
    }
    out
}
