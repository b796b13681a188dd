//! The daily allowance of each key: requests of any method and writes, counted in memory
//! and saved every few seconds (no write per request), reset at midnight in New York.
//!
//! A save adds what this node counted since the last one to the stored counters, so nodes
//! sharing a store add up their counts; after a save, a node on a shared store reads the
//! totals back and counts on from them. A key spread over nodes can so overshoot its
//! allowance by at most what the other nodes let through in one save interval each.

use std::sync::LazyLock;

use ahash::AHashMap;
use jiff::Timestamp;
use jiff::tz::TimeZone;
use parking_lot::Mutex;
use write_model::store::AllowanceRow;

static NEW_YORK: LazyLock<TimeZone> = LazyLock::new(|| {
    TimeZone::get("America/New_York").expect("the bundled tz database has New York")
});

/// The next midnight in America/New_York after `now_ms`, in ms. A day there is 23, 24 or
/// 25 hours long; the calendar arithmetic happens in the zone, not in UTC.
pub fn next_reset(now_ms: i64) -> i64 {
    let now = Timestamp::from_millisecond(now_ms).unwrap_or(Timestamp::UNIX_EPOCH);
    let today = now.to_zoned(NEW_YORK.clone()).date();
    today
        .tomorrow()
        .and_then(|d| d.to_zoned(NEW_YORK.clone()))
        .map(|z| z.timestamp().as_millisecond())
        .unwrap_or(now_ms + 86_400_000)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Counter {
    resets_at: i64,
    /// Today's totals as this node knows them: the store's at the last save, and what
    /// this node counted since.
    reads: u64,
    writes: u64,
    /// What this node counted since its last save.
    unsaved_reads: u64,
    unsaved_writes: u64,
}

impl Counter {
    fn fresh(now_ms: i64) -> Counter {
        Counter {
            resets_at: next_reset(now_ms),
            reads: 0,
            writes: 0,
            unsaved_reads: 0,
            unsaved_writes: 0,
        }
    }

    fn dirty(&self) -> bool {
        self.unsaved_reads > 0 || self.unsaved_writes > 0
    }
}

/// What a key may still do today.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Standing {
    pub reads_used: u64,
    pub writes_used: u64,
    pub resets_at: i64,
}

pub enum Verdict {
    /// Counted; `remaining` requests are left today.
    Allowed { remaining: u64, resets_at: i64 },
    /// The allowance is spent until `resets_at` (`writes`: the write allowance, else the
    /// read allowance); nothing was counted.
    Spent { resets_at: i64, writes: bool },
}

pub struct Allowances {
    reads_per_day: u64,
    writes_per_day: u64,
    counters: Mutex<AHashMap<String, Counter>>,
    last_used: Mutex<AHashMap<String, i64>>,
}

impl Allowances {
    pub fn new(reads_per_day: u64, writes_per_day: u64, saved: Vec<AllowanceRow>) -> Self {
        let counters = saved
            .into_iter()
            .map(|r| {
                (
                    r.key_id,
                    Counter {
                        resets_at: r.resets_at,
                        reads: r.reads,
                        writes: r.writes,
                        unsaved_reads: 0,
                        unsaved_writes: 0,
                    },
                )
            })
            .collect();
        Allowances {
            reads_per_day,
            writes_per_day,
            counters: Mutex::new(counters),
            last_used: Mutex::default(),
        }
    }

    pub fn reads_per_day(&self) -> u64 {
        self.reads_per_day
    }

    pub fn writes_per_day(&self) -> u64 {
        self.writes_per_day
    }

    /// Counts one request of `key_id` unless its allowance is spent.
    pub fn admit(&self, key_id: &str, is_write: bool, now_ms: i64) -> Verdict {
        // Hot path: a known key costs no allocation, only the first request of a key does.
        let mut last_used = self.last_used.lock();
        match last_used.get_mut(key_id) {
            Some(at) => *at = now_ms,
            None => {
                last_used.insert(key_id.to_owned(), now_ms);
            }
        }
        drop(last_used);
        let mut counters = self.counters.lock();
        if !counters.contains_key(key_id) {
            counters.insert(key_id.to_owned(), Counter::fresh(now_ms));
        }
        let c = counters.get_mut(key_id).expect("inserted above");
        if now_ms >= c.resets_at {
            *c = Counter::fresh(now_ms);
        }
        if c.reads >= self.reads_per_day || (is_write && c.writes >= self.writes_per_day) {
            return Verdict::Spent {
                resets_at: c.resets_at,
                writes: c.reads < self.reads_per_day,
            };
        }
        c.reads += 1;
        c.writes += u64::from(is_write);
        c.unsaved_reads += 1;
        c.unsaved_writes += u64::from(is_write);
        Verdict::Allowed {
            remaining: self.reads_per_day - c.reads,
            resets_at: c.resets_at,
        }
    }

    /// Takes back the write a request was counted as when it wrote nothing after all (an
    /// idempotency key's remembered reply): it stays counted as a read.
    pub fn refund_write(&self, key_id: &str) {
        if let Some(c) = self.counters.lock().get_mut(key_id) {
            c.writes = c.writes.saturating_sub(1);
            c.unsaved_writes = c.unsaved_writes.saturating_sub(1);
        }
    }

    pub fn standing(&self, key_id: &str, now_ms: i64) -> Standing {
        match self.counters.lock().get(key_id) {
            Some(c) if now_ms < c.resets_at => Standing {
                reads_used: c.reads,
                writes_used: c.writes,
                resets_at: c.resets_at,
            },
            _ => Standing {
                reads_used: 0,
                writes_used: 0,
                resets_at: next_reset(now_ms),
            },
        }
    }

    /// When a key was last used, if since the last save.
    pub fn last_used(&self, key_id: &str) -> Option<i64> {
        self.last_used.lock().get(key_id).copied()
    }

    /// What each key counted since the last save (to add to the stored counters), and every
    /// key's last use; marks them saved.
    pub fn take_unsaved(&self) -> (Vec<AllowanceRow>, Vec<(String, i64)>) {
        let rows = self
            .counters
            .lock()
            .iter_mut()
            .filter(|(_, c)| c.dirty())
            .map(|(k, c)| {
                let row = AllowanceRow {
                    key_id: k.clone(),
                    resets_at: c.resets_at,
                    reads: c.unsaved_reads,
                    writes: c.unsaved_writes,
                };
                c.unsaved_reads = 0;
                c.unsaved_writes = 0;
                row
            })
            .collect();
        let used = self.last_used.lock().drain().collect();
        (rows, used)
    }

    /// Puts back what a failed save took.
    pub fn restore_unsaved(&self, rows: Vec<AllowanceRow>, used: Vec<(String, i64)>) {
        let mut last = self.last_used.lock();
        for (k, t) in used {
            let slot = last.entry(k).or_insert(t);
            *slot = (*slot).max(t);
        }
        drop(last);
        let mut counters = self.counters.lock();
        for row in rows {
            if let Some(c) = counters.get_mut(&row.key_id)
                && c.resets_at == row.resets_at
            {
                c.unsaved_reads += row.reads;
                c.unsaved_writes += row.writes;
            }
        }
    }

    /// Takes the stored totals (every node's counts added up) as read after a save, plus
    /// what this node counted since.
    pub fn refresh(&self, saved: Vec<AllowanceRow>) {
        let mut counters = self.counters.lock();
        for row in saved {
            let Some(c) = counters.get_mut(&row.key_id) else {
                continue;
            };
            if row.resets_at == c.resets_at {
                c.reads = row.reads + c.unsaved_reads;
                c.writes = row.writes + c.unsaved_writes;
            } else if row.resets_at > c.resets_at {
                // Another node is counting a later day already.
                *c = Counter {
                    resets_at: row.resets_at,
                    reads: row.reads,
                    writes: row.writes,
                    unsaved_reads: 0,
                    unsaved_writes: 0,
                };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(s: &str) -> i64 {
        s.parse::<Timestamp>().unwrap().as_millisecond()
    }

    #[test]
    fn resets_at_new_york_midnight_in_winter_and_summer() {
        // 23:59 New York (EST, UTC-5) is 04:59Z; midnight is 05:00Z.
        assert_eq!(
            next_reset(ms("2026-01-15T04:59:00Z")),
            ms("2026-01-15T05:00:00Z")
        );
        assert_eq!(
            next_reset(ms("2026-01-15T05:00:00Z")),
            ms("2026-01-16T05:00:00Z")
        );
        // In summer (EDT, UTC-4) midnight is 04:00Z.
        assert_eq!(
            next_reset(ms("2026-07-01T12:00:00Z")),
            ms("2026-07-02T04:00:00Z")
        );
    }

    #[test]
    fn daylight_saving_days_are_23_and_25_hours() {
        // 2026-03-08 springs forward: that day runs 05:00Z to 04:00Z next day (23 h).
        let start = ms("2026-03-08T05:00:00Z");
        assert_eq!(next_reset(start), ms("2026-03-09T04:00:00Z"));
        assert_eq!(next_reset(start) - start, 23 * 3_600_000);
        // 2026-11-01 falls back: 04:00Z to 05:00Z next day (25 h).
        let start = ms("2026-11-01T04:00:00Z");
        assert_eq!(next_reset(start), ms("2026-11-02T05:00:00Z"));
        assert_eq!(next_reset(start) - start, 25 * 3_600_000);
    }

    #[test]
    fn counts_reads_and_writes_and_refuses_when_spent() {
        let a = Allowances::new(3, 1, Vec::new());
        let now = ms("2026-01-15T12:00:00Z");
        assert!(matches!(
            a.admit("y_1", true, now),
            Verdict::Allowed { remaining: 2, .. }
        ));
        assert!(
            matches!(a.admit("y_1", true, now), Verdict::Spent { .. }),
            "writes spent"
        );
        assert!(matches!(
            a.admit("y_1", false, now),
            Verdict::Allowed { remaining: 1, .. }
        ));
        assert!(matches!(
            a.admit("y_1", false, now),
            Verdict::Allowed { remaining: 0, .. }
        ));
        assert!(matches!(a.admit("y_1", false, now), Verdict::Spent { .. }));
        assert!(
            matches!(a.admit("y_2", false, now), Verdict::Allowed { .. }),
            "per key"
        );
        let tomorrow = next_reset(now);
        assert!(matches!(
            a.admit("y_1", true, tomorrow),
            Verdict::Allowed { remaining: 2, .. }
        ));
    }

    #[test]
    fn saves_hand_over_what_was_counted_since_and_a_refresh_adds_the_other_nodes() {
        let a = Allowances::new(10, 10, Vec::new());
        let now = ms("2026-01-15T12:00:00Z");
        for _ in 0..3 {
            a.admit("y_1", false, now);
        }
        let (rows, _) = a.take_unsaved();
        assert_eq!((rows[0].reads, rows[0].writes), (3, 0));
        a.admit("y_1", true, now);
        // The store now holds this node's 3 and another node's 4.
        a.refresh(vec![AllowanceRow {
            key_id: "y_1".into(),
            resets_at: rows[0].resets_at,
            reads: 7,
            writes: 0,
        }]);
        assert_eq!(a.standing("y_1", now).reads_used, 8);
        let (rows, _) = a.take_unsaved();
        assert_eq!(
            (rows[0].reads, rows[0].writes),
            (1, 1),
            "only what came since"
        );
        a.restore_unsaved(rows, Vec::new());
        let (rows, _) = a.take_unsaved();
        assert_eq!(
            (rows[0].reads, rows[0].writes),
            (1, 1),
            "a failed save is retried"
        );
    }
}
