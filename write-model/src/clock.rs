//! Stamps that never go back within an account, and the `now` a read may promise.
//!
//! The writer picks each request's stamp as `max(clock, floor)` and marks it in flight until
//! the read model has applied it. A reader takes `now` as the oldest in-flight stamp, or else
//! `max(clock, last_applied + 1)`, and raises the floor to it; so a client that sends `now`
//! back as `since` misses nothing (contract: Consistency).

use std::sync::Arc;
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
        let mut s = self.state.lock();
        let stamp = wall_ms().max(s.floor);
        s.floor = stamp;
        s.in_flight.push(stamp);
        stamp
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

    /// The `now` of a read: never ahead of what the read can see.
    pub fn read_now(&self) -> i64 {
        let mut s = self.state.lock();
        if let Some(&oldest) = s.in_flight.iter().min() {
            return oldest;
        }
        let now = wall_ms().max(s.last_applied + 1);
        s.floor = s.floor.max(now);
        now
    }
}

/// The clocks of every account, shared by the writer and the readers.
#[derive(Debug, Default)]
pub struct Clocks {
    by_account: RwLock<AHashMap<String, Arc<StampClock>>>,
}

impl Clocks {
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
        assert_eq!(c.read_now(), s, "now stops at a write not yet visible");
        c.finish(s, true);
        let now = c.read_now();
        assert!(now > s);
        assert!(
            c.begin() >= now,
            "a write after a read is stamped at or after its now"
        );
    }
}
