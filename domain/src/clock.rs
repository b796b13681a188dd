//! Stamps that never go back within an account, and the `now` a read may promise.
//!
//! The writer picks each request's stamp as `max(clock, floor)` and marks it in flight until
//! the read model has applied it. A reader takes `now` as the oldest in-flight stamp, or else
//! `max(clock, last_applied + 1)`, and raises the floor to it; so a client that sends `now`
//! back as `since` misses nothing (contract: Consistency).
//!
//! On a store several nodes share, a reader cannot raise the floor of another node's
//! writer, so the promise rests on two other facts instead:
//! - each commit stamps an account strictly after its previous commit, and at or after the
//!   store's clock once the account is locked ([`StampClock::begin_at_least`]);
//! - the node's *horizon*: a moment of the store's clock before which every commit has been
//!   applied here (the follower moves it; see the binary's `follow` module).
//!
//! A read's `now` is then `max(min(clock, horizon), last_applied + 1)`, and never past a
//! write of this node still in flight: every commit this node has not applied is stamped
//! at or after it.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use ahash::AHashMap;
use parking_lot::{Mutex, RwLock};

/// Wall-clock milliseconds since the Unix epoch.
pub fn wall_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

#[derive(Debug, Default)]
struct ClockState {
    floor: i64,
    last_applied: i64,
    in_flight: Vec<i64>,
}

/// One account's stamp clock.
#[derive(Debug, Default)]
pub struct StampClock {
    state: Mutex<ClockState>,
}

impl StampClock {
    fn starting_at(last_stamp: i64) -> Self {
        StampClock {
            state: Mutex::new(ClockState {
                floor: last_stamp,
                last_applied: last_stamp,
                in_flight: Vec::new(),
            }),
        }
    }

    /// The stamp of a write about to be applied; in flight until `finish`.
    pub fn begin(&self) -> i64 {
        self.begin_at_least(None)
    }

    /// [`StampClock::begin`], at or after `least` when given (on a shared store: after the
    /// account's last committed stamp, and at or after the store's clock).
    pub fn begin_at_least(&self, least: Option<i64>) -> i64 {
        let mut s = self.state.lock();
        let stamp = wall_ms().max(s.floor).max(least.unwrap_or(i64::MIN));
        s.floor = stamp;
        s.in_flight.push(stamp);
        stamp
    }

    /// A commit another node made, stamped `stamp`, is visible to readers here, with every
    /// commit of the account before it.
    pub fn applied(&self, stamp: i64) {
        let mut s = self.state.lock();
        s.last_applied = s.last_applied.max(stamp);
    }

    /// The write stamped `stamp` is visible to readers (`applied`) or was rolled back.
    pub fn finish(&self, stamp: i64, applied: bool) {
        let mut s = self.state.lock();
        if let Some(i) = s.in_flight.iter().position(|&x| x == stamp) {
            s.in_flight.swap_remove(i);
        }
        if applied {
            s.last_applied = s.last_applied.max(stamp);
        }
    }

    /// The `now` of a read: never ahead of what the read can see. `horizon` is the shared
    /// store's, if the store is shared.
    pub fn read_now(&self, horizon: Option<i64>) -> i64 {
        let mut s = self.state.lock();
        let oldest = s.in_flight.iter().min().copied();
        match horizon {
            None => {
                if let Some(oldest) = oldest {
                    return oldest;
                }
                let now = wall_ms().max(s.last_applied + 1);
                s.floor = s.floor.max(now);
                now
            }
            Some(horizon) => {
                let now = wall_ms().min(horizon).max(s.last_applied + 1);
                oldest.map_or(now, |oldest| oldest.min(now))
            }
        }
    }
}

/// The clocks of every account, shared by the writer and the readers.
#[derive(Debug, Default)]
pub struct Clocks {
    by_account: RwLock<AHashMap<String, Arc<StampClock>>>,
    /// On a shared store, the node's horizon (see the module's notes); `None` alone.
    horizon: Option<AtomicI64>,
}

impl Clocks {
    /// The clocks of a node on a store other nodes share: reads wait on the horizon, which
    /// starts at 0 until the follower first moves it.
    pub fn shared() -> Clocks {
        Clocks {
            by_account: RwLock::default(),
            horizon: Some(AtomicI64::new(0)),
        }
    }

    /// Moves the horizon forward to `at` (never back).
    pub fn advance_horizon(&self, at: i64) {
        if let Some(h) = &self.horizon {
            h.fetch_max(at, Ordering::AcqRel);
        }
    }

    /// The horizon, on a shared store.
    pub fn horizon(&self) -> Option<i64> {
        self.horizon.as_ref().map(|h| h.load(Ordering::Acquire))
    }

    /// The `now` of a read of the account; `last_stamp` seeds its clock on first use.
    pub fn read_now(&self, account: &str, last_stamp: impl FnOnce() -> i64) -> i64 {
        self.get(account, last_stamp).read_now(self.horizon())
    }

    /// The account's clock; `last_stamp` (read from the store) seeds it on first use.
    pub fn get(&self, account: &str, last_stamp: impl FnOnce() -> i64) -> Arc<StampClock> {
        if let Some(c) = self.by_account.read().get(account) {
            return c.clone();
        }
        let seed = last_stamp();
        self.by_account
            .write()
            .entry(account.to_owned())
            .or_insert_with(|| Arc::new(StampClock::starting_at(seed)))
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_never_go_back_and_now_waits_for_in_flight_writes() {
        let future = wall_ms() + 60_000;
        let c = StampClock::starting_at(future);
        let s = c.begin();
        assert!(
            s >= future,
            "a clock behind the stored stamps does not pull stamps back"
        );
        assert_eq!(c.read_now(None), s, "now stops at a write not yet visible");
        c.finish(s, true);
        let now = c.read_now(None);
        assert!(now > s);
        assert!(
            c.begin() >= now,
            "a write after a read is stamped at or after its now"
        );
    }

    #[test]
    fn on_a_shared_store_now_waits_for_the_horizon_but_not_behind_what_was_applied() {
        let c = StampClock::starting_at(1_000);
        let wall = wall_ms();
        assert_eq!(
            c.read_now(Some(0)),
            1_001,
            "no horizon yet: just after what was applied"
        );
        assert_eq!(c.read_now(Some(5_000)), 5_000, "up to the horizon");
        let later = c.read_now(Some(i64::MAX));
        assert!(later >= wall, "never past the clock");
        c.applied(wall + 60_000);
        assert_eq!(c.read_now(Some(0)), wall + 60_001);
        let s = c.begin_at_least(Some(wall + 120_000));
        assert_eq!(s, wall + 120_000);
        assert_eq!(
            c.read_now(Some(i64::MAX)),
            wall + 60_001,
            "a write in flight later than what was applied does not hold now back"
        );
    }
}
