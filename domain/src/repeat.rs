//! Recurring cards: a card's `repeat` rule (`{every, unit, from}`) and the date arithmetic
//! of its next deadline. Pure: no store and no clock. The completion command
//! (`command/task/recur.rs`) asks [`next_deadline`] for the date and makes the card.
//!
//! Months and years are counted from an anchor day, not from the last (possibly clamped)
//! deadline: 31 January + 1 month is the last day of February, and + 2 months is 31 March
//! again, not 28 March. A card keeps that anchor (`repeatAnchor` in its stored JSON, never
//! shown) only while its deadline is clamped away from it.

use jiff::Span;
use jiff::civil::Date;
use serde::{Deserialize, Serialize};

use crate::error::WriteError;
use crate::field::{FieldValue, Kept, Member, Shape};
use crate::limits::Limits;

/// The largest `every`: a rule repeats at least once a year's worth of its unit.
pub const MAX_EVERY: i64 = 365;

/// What a repeat counts in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    Day,
    Week,
    Month,
    Year,
}

/// What the next deadline counts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Basis {
    /// The last deadline: a missed week does not shift the rhythm.
    Deadline,
    /// The day the card was finished.
    Completion,
}

/// A card's rule of recurrence, as stored and as reads show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Repeat {
    /// 1 to [`MAX_EVERY`].
    pub every: u16,
    pub unit: Unit,
    pub from: Basis,
}

/// What a request sends for `repeat` before it is checked: a JSON object (serde would take
/// a struct from an array of its members too).
pub type RawRepeat = serde_json::Map<String, serde_json::Value>;

/// The members of a `repeat` object, read by name.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Members {
    every: i64,
    unit: Unit,
    from: Basis,
}

impl Repeat {
    /// Checks what a request sent for the field named `field`.
    pub fn check(field: &str, raw: RawRepeat) -> Result<Repeat, WriteError> {
        let raw: Members = serde_json::from_value(serde_json::Value::Object(raw)).map_err(|e| {
            WriteError::invalid(
                field,
                format!("`{field}` must be {{every, unit, from}}: {e}"),
            )
        })?;
        if !(1..=MAX_EVERY).contains(&raw.every) {
            return Err(WriteError::invalid(
                field,
                format!("`{field}.every` must be a whole number from 1 to {MAX_EVERY}"),
            ));
        }
        Ok(Repeat {
            every: raw.every as u16,
            unit: raw.unit,
            from: raw.from,
        })
    }

    /// The months one step spans (`None`: the unit counts days).
    fn months(self) -> Option<i64> {
        match self.unit {
            Unit::Month => Some(i64::from(self.every)),
            Unit::Year => Some(12 * i64::from(self.every)),
            Unit::Day | Unit::Week => None,
        }
    }

    /// The days one step spans, for day and week rules.
    fn days(self) -> i64 {
        match self.unit {
            Unit::Week => 7 * i64::from(self.every),
            _ => i64::from(self.every),
        }
    }

    /// `base` moved on by `k` steps (a month's end clamped), `None` past year 9999.
    fn step(self, base: Date, k: i64) -> Option<Date> {
        let span = match self.months() {
            Some(m) => Span::new().try_months(m.checked_mul(k)?).ok()?,
            None => Span::new().try_days(self.days().checked_mul(k)?).ok()?,
        };
        base.checked_add(span).ok()
    }
}

/// `repeat` as a field of the card table: an object of three members, read back as sent.
impl FieldValue for Repeat {
    type Raw = RawRepeat;
    type Stored = Repeat;
    const SHAPE: Shape = Shape::Object(&[
        Member {
            name: "every",
            shape: Shape::Integer {
                min: 1,
                max: MAX_EVERY,
            },
        },
        Member {
            name: "unit",
            shape: Shape::Choice(&["day", "week", "month", "year"]),
        },
        Member {
            name: "from",
            shape: Shape::Choice(&["deadline", "completion"]),
        },
    ]);

    fn parse(field: &'static str, raw: RawRepeat, _: &Limits) -> Result<Self, WriteError> {
        Repeat::check(field, raw)
    }

    fn to_stored(&self) -> Repeat {
        *self
    }
}

/// In a CSV cell: its compact JSON (`{"every":1,"unit":"week","from":"deadline"}`).
impl Kept for Repeat {}

/// The next occurrence's deadline, and the anchor it keeps (see the module's note).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Next {
    pub deadline: Date,
    pub anchor: Option<Date>,
}

/// The deadline of the card that follows one with `rule`, finished on `completed`.
/// `deadline` is its deadline and `anchor` the day its rhythm counts from when that differs.
/// From the deadline: the first day of the rhythm after both the deadline and the day of
/// completion (a card finished late never starts overdue; one finished early moves on one
/// step). From completion: one step after the day of completion. `None` when the date would
/// pass year 9999.
pub fn next_deadline(
    rule: Repeat,
    deadline: Option<Date>,
    anchor: Option<Date>,
    completed: Date,
) -> Option<Next> {
    let (base, after, anchored) = match (rule.from, deadline) {
        (Basis::Deadline, Some(deadline)) => {
            (anchor.unwrap_or(deadline), deadline.max(completed), true)
        }
        // A rule from the deadline on a card without one (checked away on writes) counts
        // from completion rather than failing the completion.
        _ => (completed, completed, false),
    };
    // The least k whose date passes `after`: estimated, then stepped up (a step or two).
    let mut k = match rule.months() {
        Some(months) => {
            let apart = (i64::from(after.year()) - i64::from(base.year())) * 12
                + i64::from(after.month())
                - i64::from(base.month());
            (apart / months).max(1)
        }
        None => {
            let apart = after.since(base).ok()?.get_days();
            (i64::from(apart) / rule.days()).max(1)
        }
    };
    let mut date = rule.step(base, k)?;
    while date <= after {
        k += 1;
        date = rule.step(base, k)?;
    }
    // Only a month's end can be clamped: keep the anchor while the day differs from it (a
    // rule from completion counts from each completion anew).
    let anchor = (anchored && rule.months().is_some() && base.day() > 28).then_some(base);
    Some(Next {
        deadline: date,
        anchor: anchor.filter(|a| a.day() != date.day()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;

    fn rule(every: u16, unit: Unit, from: Basis) -> Repeat {
        Repeat { every, unit, from }
    }

    /// `-` is none.
    fn day(s: &str) -> Option<Date> {
        (s != "-").then(|| s.parse().unwrap())
    }

    /// One rule a line: `every unit from | deadline | anchor | finished on | next | anchor kept`.
    const TABLE: &str = "
        # Days and weeks, finished on the day.
        1 day deadline     | 2026-03-10 | -          | 2026-03-10 | 2026-03-11 | -
        3 day deadline     | 2026-12-30 | -          | 2026-12-30 | 2027-01-02 | -
        1 week deadline    | 2026-11-27 | -          | 2026-11-27 | 2026-12-04 | -
        2 week deadline    | 2026-11-27 | -          | 2026-11-20 | 2026-12-11 | -
        # Finished early: one step after the deadline, not the deadline again.
        1 week deadline    | 2026-11-27 | -          | 2026-11-25 | 2026-12-04 | -
        # Finished late: the first day of the rhythm after the day of completion.
        1 week deadline    | 2026-11-06 | -          | 2026-11-27 | 2026-12-04 | -
        1 week deadline    | 2026-11-06 | -          | 2026-11-26 | 2026-11-27 | -
        1 day deadline     | 2020-01-01 | -          | 2026-11-27 | 2026-11-28 | -
        1 month deadline   | 2026-01-15 | -          | 2026-04-20 | 2026-05-15 | -
        1 year deadline    | 2020-06-01 | -          | 2026-06-01 | 2027-06-01 | -
        # Month ends clamp, and the rhythm goes on from the anchor day.
        1 month deadline   | 2026-01-31 | -          | 2026-01-31 | 2026-02-28 | 2026-01-31
        1 month deadline   | 2026-02-28 | 2026-01-31 | 2026-02-28 | 2026-03-31 | -
        1 month deadline   | 2026-03-31 | -          | 2026-03-31 | 2026-04-30 | 2026-03-31
        1 month deadline   | 2026-04-30 | 2026-03-31 | 2026-05-02 | 2026-05-31 | -
        1 month deadline   | 2026-08-31 | -          | 2026-08-31 | 2026-09-30 | 2026-08-31
        3 month deadline   | 2025-11-30 | -          | 2025-11-30 | 2026-02-28 | 2025-11-30
        1 month deadline   | 2026-01-30 | -          | 2026-01-30 | 2026-02-28 | 2026-01-30
        1 month deadline   | 2026-12-15 | -          | 2026-12-15 | 2027-01-15 | -
        # Leap years: 31 January in one, and 29 February yearly.
        1 month deadline   | 2028-01-31 | -          | 2028-01-31 | 2028-02-29 | 2028-01-31
        1 year deadline    | 2028-02-29 | -          | 2028-02-29 | 2029-02-28 | 2028-02-29
        1 year deadline    | 2029-02-28 | 2028-02-29 | 2029-03-01 | 2030-02-28 | 2028-02-29
        1 year deadline    | 2031-02-28 | 2028-02-29 | 2031-02-28 | 2032-02-29 | -
        4 year deadline    | 2028-02-29 | -          | 2028-02-29 | 2032-02-29 | -
        # From completion: one step after the day it was finished, the deadline aside.
        1 week completion  | 2026-11-06 | -          | 2026-11-27 | 2026-12-04 | -
        10 day completion  | -          | -          | 2026-11-27 | 2026-12-07 | -
        1 month completion | 2026-01-01 | -          | 2026-01-31 | 2026-02-28 | -
        1 year completion  | -          | -          | 2028-02-29 | 2029-02-28 | -
        2 month completion | 2026-12-31 | -          | 2026-11-15 | 2027-01-15 | -
    ";

    #[test]
    fn the_next_deadline_follows_the_rule() {
        let rows = TABLE
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'));
        for row in rows {
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            let words: Vec<&str> = cells[0].split(' ').collect();
            let unit: Unit = serde_json::from_value(serde_json::json!(words[1])).unwrap();
            let from: Basis = serde_json::from_value(serde_json::json!(words[2])).unwrap();
            let rule = rule(words[0].parse().unwrap(), unit, from);
            let got = next_deadline(rule, day(cells[1]), day(cells[2]), day(cells[3]).unwrap());
            let want = Next {
                deadline: day(cells[4]).unwrap(),
                anchor: day(cells[5]),
            };
            assert_eq!(got, Some(want), "{row}");
        }
    }

    #[test]
    fn a_year_of_month_ends_keeps_its_rhythm() {
        let monthly = rule(1, Unit::Month, Basis::Deadline);
        let (mut due, mut anchor) = (date(2027, 1, 31), None);
        let mut seen = Vec::new();
        for _ in 0..12 {
            let next = next_deadline(monthly, Some(due), anchor, due).unwrap();
            (due, anchor) = (next.deadline, next.anchor);
            seen.push(due.day());
        }
        assert_eq!(seen, [28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31, 31]);
    }

    #[test]
    fn past_year_9999_there_is_no_next_date() {
        let yearly = rule(1, Unit::Year, Basis::Deadline);
        let last = date(9999, 6, 1);
        assert_eq!(next_deadline(yearly, Some(last), None, last), None);
    }

    #[test]
    fn every_is_checked_from_1_to_365() {
        let raw = |every: i64| match serde_json::json!({
            "every": every, "unit": "day", "from": "completion"
        }) {
            serde_json::Value::Object(map) => map,
            _ => unreachable!(),
        };
        assert!(Repeat::check("repeat", raw(1)).is_ok());
        assert!(Repeat::check("repeat", raw(365)).is_ok());
        for bad in [0, -1, 366, i64::MAX] {
            assert!(Repeat::check("repeat", raw(bad)).is_err(), "{bad}");
        }
    }
}
