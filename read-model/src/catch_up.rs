//! Catching up with the other nodes of a shared store (PostgreSQL). Another node's commits
//! reach this node's documents in two ways, both through the store's change log:
//! - the follower (the binary's `follow` module) hears each commit announced, notes it with
//!   [`ReadModel::announced`] and catches the document up at once; a read that comes in
//!   between finds the document [`ReadModel::is_behind`] and catches it up first;
//! - a read learns the account's committed revision from the store before it answers, and
//!   catches up first when the document is behind it ([`ReadModel::catch_up_to`]): the
//!   follower hears of a commit milliseconds after the writing node acknowledged it, too
//!   late for a client that wrote there and reads here at once;
//! - this node's writer, locking an account another node wrote since, commits a revision
//!   past the document's: [`ReadModel::apply`] fills the gap before applying it.
//!
//! Documents apply change sets strictly in revision order, so a document is always some
//! prefix of the account's history, and the account's clock learns of each remote commit
//! as it is applied (see `domain::clock`). A document the log no longer reaches back
//! for is loaded whole again.

use domain::storage::Backlog;

use crate::doc::AccountDoc;
use crate::{ReadError, ReadModel};

impl ReadModel {
    /// Whether other nodes write this store too.
    pub fn is_shared(&self) -> bool {
        self.shared
    }

    /// Another node announced revision `rev` of the account. Answers whether the account's
    /// document is in memory here and behind it: the caller then catches it up.
    pub fn announced(&self, account: &str, rev: i64) -> bool {
        // The map's lock orders this against a load: a document loaded after this looks
        // finds the revision in the store; one loaded before is found here.
        let Some(slot) = self.accounts.read().get(account).cloned() else {
            return false;
        };
        slot.announced
            .fetch_max(rev, std::sync::atomic::Ordering::AcqRel);
        slot.doc.read().rev < rev
    }

    /// The accounts whose documents are in memory.
    pub fn loaded_accounts(&self) -> Vec<String> {
        self.accounts.read().keys().cloned().collect()
    }

    /// Whether the account's document is in memory but behind a revision another node
    /// announced: a read catches it up first ([`ReadModel::catch_up`]).
    pub fn is_behind(&self, account: &str) -> bool {
        let Some(slot) = self.accounts.read().get(account).cloned() else {
            return false;
        };
        slot.announced.load(std::sync::atomic::Ordering::Acquire) > slot.doc.read().rev
    }

    /// Brings the account's document, if in memory, up to what the store has committed
    /// (it blocks on the store).
    pub fn catch_up(&self, account: &str) -> Result<(), ReadError> {
        self.catch_up_past(account, i64::MAX)
    }

    /// Brings the account's document, if in memory, up to revision `rev`, the account's
    /// committed revision the store answered just before (it blocks on the store when the
    /// document is behind): a read on a shared store that asks this first shows every write
    /// acknowledged before it arrived, whichever node took it, without waiting for the
    /// follower to hear of it (contract: Consistency, read-your-writes). A current document
    /// costs nothing more; the log is read only when the document is behind.
    pub fn catch_up_to(&self, account: &str, rev: i64) -> Result<(), ReadError> {
        if !self.shared {
            return Ok(());
        }
        let Some(slot) = self.accounts.read().get(account).cloned() else {
            // Not in memory: it loads from the store, as it is now, before the read.
            return Ok(());
        };
        if slot.doc.read().rev >= rev {
            return Ok(());
        }
        // Noted as an announcement is, so other reads meanwhile catch up too.
        slot.announced
            .fetch_max(rev, std::sync::atomic::Ordering::AcqRel);
        self.catch_up_past(account, rev)
    }

    /// [`ReadModel::catch_up`], unless the document reached `rev` by the time its lock is
    /// held (the follower, the writer or another read caught it up meanwhile). Change sets
    /// are applied under the document's write lock, after the revision it holds then, so two
    /// catching up at once never apply one twice.
    fn catch_up_past(&self, account: &str, rev: i64) -> Result<(), ReadError> {
        let Some(slot) = self.accounts.read().get(account).cloned() else {
            return Ok(());
        };
        let mut doc = slot.write();
        if doc.rev >= rev {
            return Ok(());
        }
        let result = self.fill_gap(account, &mut doc, i64::MAX);
        drop(doc);
        match result {
            Ok(names_changed) => {
                if names_changed {
                    self.publish_names();
                }
                Ok(())
            }
            Err(e) => {
                // The document cannot be trusted to follow on: it loads anew on next use.
                self.accounts.write().remove(account);
                Err(e)
            }
        }
    }

    /// Applies the account's committed change sets after the document's revision, up to
    /// `upto`, from the change log; loads the document whole when the log no longer
    /// reaches back. Answers whether any project name moved (names still to publish).
    pub(crate) fn fill_gap(
        &self,
        account: &str,
        doc: &mut AccountDoc,
        upto: i64,
    ) -> Result<bool, ReadError> {
        let mut names_changed = false;
        match self.store.backlog(account, doc.rev)? {
            Backlog::Changes(sets) => {
                for mut cs in sets.into_iter().filter(|cs| cs.rev <= upto) {
                    let records = std::mem::take(&mut cs.records);
                    names_changed |= self.follow_names(account, cs.names_changed, &records);
                    doc.apply(cs.rev, cs.stamp, records);
                    self.clocks.get(account, || cs.stamp).applied(cs.stamp);
                }
            }
            Backlog::Gone => {
                *doc = self.load_doc(account)?;
                self.clocks
                    .get(account, || doc.max_stamp)
                    .applied(doc.max_stamp);
            }
        }
        Ok(names_changed)
    }
}
