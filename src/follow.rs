//! The follower: on a store other nodes share (PostgreSQL), one thread per node hears what
//! the others commit and brings this node up to it.
//! - A change another node announces is noted, the account's document (if in memory here)
//!   catches up from the change log, and the account's live sockets get their nudge.
//! - A key issued or revoked elsewhere reaches the key cache (and a revoked key's sockets
//!   close).
//! - The *horizon* moves: a moment of the store's clock before which every commit is applied
//!   here, so a read's `now` never runs ahead of what this node can see (see
//!   `write_model::clock`). Each round reads the store's clock, waits for the writers'
//!   transactions open at that moment to end, then sends itself a ping through the store:
//!   once the ping comes back, every announcement committed before it has been heard and
//!   handled, and the horizon moves to the clock read.
//! - A lost connection is made again, and what was missed meanwhile is healed by comparing
//!   each document's revision with the store's, and by reloading the keys. The horizon
//!   stands still until then, so reads stay correct, only older in their `now`. The healed
//!   accounts' sockets get their nudge, so clients catch up without waiting for the next
//!   write.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use read_model::ReadModel;
use write_model::store::shared::{Feed, Notice, SharedStore};
use write_model::{Clocks, KeyChange, WriteError};

use crate::auth::KeyCache;
use crate::live::Hub;

/// How long the follower waits between horizon rounds, taking announcements as they come.
const ROUND: Duration = Duration::from_millis(10);
/// The longest pause between two looks at a writer's transaction the horizon waits for.
const MAX_PAUSE: Duration = Duration::from_millis(20);
/// How long a ping may take to come back before the connection is deemed lost.
const PING_DEADLINE: Duration = Duration::from_secs(5);
/// How many times a heal reads the live keys while revocations keep coming.
const KEY_READS: usize = 5;
/// How long a writer's transaction open at a round's start may hold the horizon back before
/// the round gives up and starts over (the horizon simply waits longer).
const OPEN_WRITES_DEADLINE: Duration = Duration::from_secs(5);

/// What the follower brings up to date.
pub struct Follower {
    pub store: Arc<dyn SharedStore>,
    pub read: Arc<ReadModel>,
    pub keys: Arc<KeyCache>,
    pub hub: Arc<Hub>,
    pub clocks: Arc<Clocks>,
}

/// The follower's thread; dropping the handle's `stop` ends it within a round.
pub struct Following {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Following {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Follower {
    /// Starts following on a thread of its own.
    pub fn start(self) -> std::io::Result<Following> {
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let thread = std::thread::Builder::new()
            .name("workboard-follower".into())
            .spawn(move || self.run(&stopping))?;
        Ok(Following {
            stop,
            thread: Some(thread),
        })
    }

    fn run(self, stop: &AtomicBool) {
        let mut backoff = Duration::from_millis(50);
        // Whether the feed was heard before: only then can a socket have missed a change
        // while it was away.
        let mut listened = false;
        while !stop.load(Ordering::Relaxed) {
            match self.store.listen() {
                Ok(mut feed) => {
                    backoff = Duration::from_millis(50);
                    let again = std::mem::replace(&mut listened, true);
                    match self.follow(&mut *feed, stop, again) {
                        Ok(()) => return,
                        Err(e) => {
                            tracing::warn!(error = %e, "lost the other nodes' feed; listening again")
                        }
                    }
                }
                Err(e) => tracing::warn!(error = %e, "cannot hear the other nodes yet"),
            }
            std::thread::sleep(backoff);
            backoff = (backoff * 2).min(Duration::from_secs(2));
        }
    }

    /// Follows on one connection until `stop`, or until the connection fails; `again` when
    /// it replaces a lost one.
    fn follow(
        &self,
        feed: &mut dyn Feed,
        stop: &AtomicBool,
        again: bool,
    ) -> Result<(), WriteError> {
        self.heal(feed, again)?;
        let mut ping = 0u64;
        while !stop.load(Ordering::Relaxed) {
            let (clock, open) = feed.clock_and_open_writes()?;
            let waiting = Instant::now();
            let mut pause = Duration::from_millis(1);
            while feed.any_open(&open)? {
                if waiting.elapsed() > OPEN_WRITES_DEADLINE {
                    break;
                }
                // Most groups commit within a few milliseconds; a long one (an import) is
                // asked after less often.
                self.take(feed, pause)?;
                pause = (pause * 2).min(MAX_PAUSE);
            }
            if waiting.elapsed() > OPEN_WRITES_DEADLINE {
                continue;
            }
            ping += 1;
            feed.ping(ping)?;
            let sent = Instant::now();
            loop {
                match feed.next(PING_DEADLINE)? {
                    Some(Notice::Ping(n)) if n == ping => break,
                    Some(notice) => self.handle(notice),
                    None => {}
                }
                if sent.elapsed() > PING_DEADLINE {
                    return Err(WriteError::Unavailable(
                        "the feed's ping did not come back".into(),
                    ));
                }
            }
            self.clocks.advance_horizon(clock);
            self.take(feed, ROUND)?;
        }
        Ok(())
    }

    /// Handles every announcement that comes within `wait`.
    fn take(&self, feed: &mut dyn Feed, wait: Duration) -> Result<(), WriteError> {
        let deadline = Instant::now() + wait;
        while let Some(notice) = feed.next(deadline.saturating_duration_since(Instant::now()))? {
            self.handle(notice);
            if Instant::now() >= deadline {
                break;
            }
        }
        Ok(())
    }

    fn handle(&self, notice: Notice) {
        match notice {
            Notice::Changed {
                account,
                rev,
                stamp,
            } => {
                if self.read.announced(&account, rev)
                    && let Err(e) = self.read.catch_up(&account)
                {
                    tracing::warn!(error = %e, %account, "a document could not catch up; it loads anew on next use");
                }
                self.hub.notify(&account, stamp);
            }
            Notice::Key(change) => {
                self.keys.apply(&change);
                if let KeyChange::Revoked { id, .. } = &change {
                    self.hub.revoke(id);
                }
            }
            Notice::Ping(_) => {}
        }
    }

    /// Brings everything up to the store after (re)connecting: what was announced while
    /// this node was not listening is not announced again. After a lost connection
    /// (`again`), the sockets of the accounts healed get their nudge.
    fn heal(&self, feed: &mut dyn Feed, again: bool) -> Result<(), WriteError> {
        let loaded = self.read.loaded_accounts();
        let revs = feed.revs(&loaded)?;
        let mut healed = Vec::new();
        for (account, rev) in revs {
            if self.read.announced(&account, rev) {
                if let Err(e) = self.read.catch_up(&account) {
                    tracing::warn!(error = %e, %account, "a document could not catch up; it loads anew on next use");
                }
                healed.push(account);
            }
        }
        if again {
            // A read may have caught a document up while the feed was away (it asks the
            // store, not the feed): its sockets are nudged by their last nudge too.
            self.nudge_healed(&healed, &unknown_since(&self.hub.accounts(), &healed));
        }
        // A revocation applied while the live keys were read may be of a key they still
        // hold: they are read again rather than put back.
        for _ in 0..KEY_READS {
            let revocations = self.keys.revocations();
            if let Some(dropped) = self.keys.replace_all(self.store.live_keys()?, revocations) {
                for gone in dropped {
                    self.hub.revoke(&gone);
                }
                return Ok(());
            }
        }
        tracing::warn!(
            "the keys kept being revoked while they were read; the cache keeps what it had"
        );
        Ok(())
    }
}

impl Follower {
    /// Nudges the sockets of the accounts whose documents caught up (`healed`), and of
    /// the other accounts with sockets here (`unknown`: no document here, or one a read
    /// caught up) whose last change in the store is later than their last nudge on this
    /// node.
    fn nudge_healed(&self, healed: &[String], unknown: &[String]) {
        let mut nudged = 0;
        for (account, known) in healed
            .iter()
            .map(|a| (a, true))
            .chain(unknown.iter().map(|a| (a, false)))
        {
            let Ok(stamp) = self.store.last_stamp(account) else {
                continue;
            };
            if stamp > 0 && (known || stamp > self.hub.last_nudge(account)) {
                self.hub.notify(account, stamp);
                nudged += 1;
            }
        }
        if nudged > 0 {
            tracing::info!(
                accounts = nudged,
                "the feed came back; the sockets of the accounts healed nudged"
            );
        }
    }
}

/// The accounts with sockets here that were not `healed`: their documents are not in
/// memory (dropped while idle), or are but were caught up by a read (which asks the store,
/// not the feed). Whether they changed while the feed was away is told by their last nudge.
fn unknown_since(with_sockets: &[String], healed: &[String]) -> Vec<String> {
    let healed: std::collections::HashSet<&String> = healed.iter().collect();
    with_sockets
        .iter()
        .filter(|a| !healed.contains(a))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn accounts_with_sockets_but_no_document_are_nudged_on_a_heal() {
        let s = |v: &[&str]| v.iter().map(|a| a.to_string()).collect::<Vec<_>>();
        assert_eq!(
            super::unknown_since(&s(&["a_1", "a_2", "a_3"]), &s(&["a_2"])),
            s(&["a_1", "a_3"])
        );
        assert!(super::unknown_since(&s(&[]), &s(&["a_2"])).is_empty());
    }
}
