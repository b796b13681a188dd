//! The calendar feed (`GET /calendar.ics`): an account's cards that have a deadline day, as
//! an iCalendar document (RFC 5545) built with the `icalendar` crate.
//!
//! Each card is one `VEVENT`: an all-day event on its deadline day, or a timed one when it
//! also has a time of day, in floating local time (a deadline has no time zone, so it is
//! the same wall-clock moment wherever the calendar is read). `UID` is the card's id, so a
//! calendar app follows a card across edits; `DTSTAMP` and `LAST-MODIFIED` are its stamp, so
//! the same account revision always gives the same bytes. Cards on an archived board or in
//! an archived list are put away, and are left out. A card repeating from its deadline
//! carries its rhythm as an `RRULE`; one repeating from completion cannot know its next
//! date, and carries none.
//!
//! The cards are taken under the document's lock as shared pointers (a write replaces a
//! card, never changes it in place); the document is written after the lock is let go.

use std::sync::Arc;

use bytes::Bytes;
use chrono::{DateTime, Datelike, Duration, NaiveDate, NaiveTime, Utc};
use domain::records::Task;
use domain::repeat::{Basis, Unit};
use icalendar::{Alarm, Calendar, Component, Event, EventLike, Property};

use crate::changes::{cutoff, in_window};
use crate::doc::AccountDoc;
use crate::{Completed, ReadError, ReadModel};

/// The most minutes an alarm may ring before its deadline: a week.
pub const MAX_ALARM_MINUTES: u32 = 7 * 24 * 60;

/// What a feed shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeedRequest {
    /// One board's cards only.
    pub project: Option<String>,
    /// Which finished cards are shown too.
    pub view: Completed,
    /// A reminder this many minutes before each deadline.
    pub alarm_minutes: Option<u32>,
    /// Where the web client answers (`https://host/`), for each event's link to its card;
    /// no link when unknown.
    pub web_base: Option<String>,
}

/// One card of the feed, with the names of its board and list.
struct Entry {
    task: Arc<Task>,
    board: String,
    list: String,
}

impl ReadModel {
    /// The account's calendar feed, as `request` asks.
    pub fn calendar(&self, account: &str, request: &FeedRequest) -> Result<Bytes, ReadError> {
        let now = self.now(account);
        let cutoff = cutoff(request.view, now, self.window_ms);
        let slot = self.doc(account)?;
        let entries = take(&slot.read(), request, cutoff);
        Ok(Bytes::from(render(&entries, request).to_string()))
    }
}

/// The cards the feed shows, in the board's order (boards, then cards by position).
fn take(doc: &AccountDoc, request: &FeedRequest, cutoff: i64) -> Vec<Entry> {
    let mut entries = Vec::new();
    for project_id in doc.project_ids() {
        if request.project.as_deref().is_some_and(|p| p != project_id) {
            continue;
        }
        let entry = &doc.projects[project_id];
        if entry.project.archived_at.is_some() {
            continue;
        }
        for (_, id) in entry.tasks.iter() {
            let Some(task) = doc.tasks.get(id) else {
                continue;
            };
            if task.deadline.is_none() || !in_window(task, request.view, cutoff) {
                continue;
            }
            let Some(column) = doc.columns.get(&task.column_id) else {
                continue;
            };
            if column.archived_at.is_some() {
                continue;
            }
            entries.push(Entry {
                task: task.clone(),
                board: entry.project.name.clone(),
                list: column.name.clone(),
            });
        }
    }
    entries
}

/// The iCalendar document of `entries`.
fn render(entries: &[Entry], request: &FeedRequest) -> Calendar {
    let mut calendar = Calendar::empty();
    calendar
        .append_property(Property::new("VERSION", "2.0"))
        .append_property(Property::new("PRODID", "-//Workboard//Calendar feed//EN"))
        .append_property(Property::new("CALSCALE", "GREGORIAN"))
        .append_property(Property::new("METHOD", "PUBLISH"));
    let name = match (&request.project, entries.first()) {
        (Some(_), Some(e)) => format!("Workboard: {}", e.board),
        _ => "Workboard".to_owned(),
    };
    calendar.name(&name);
    // Calendar apps poll a subscription; an hour is what most of them take by default.
    calendar.ttl(&Duration::hours(1));
    for entry in entries {
        if let Some(event) = event(entry, request) {
            calendar.push(event);
        }
    }
    calendar
}

/// A card's event; `None` for a deadline that is not a date (never stored, but not assumed).
fn event(entry: &Entry, request: &FeedRequest) -> Option<Event> {
    let task = &entry.task;
    let day = NaiveDate::parse_from_str(task.deadline.as_deref()?, "%Y-%m-%d").ok()?;
    let time =
        (task.deadline_time.as_deref()).and_then(|t| NaiveTime::parse_from_str(t, "%H:%M").ok());
    let stamp = DateTime::<Utc>::from_timestamp_millis(task.updated_at).unwrap_or_default();
    let mut event = Event::new();
    event
        .uid(&format!("{}@workboard", task.id))
        .timestamp(stamp)
        .last_modified(stamp)
        .summary(&task.title);
    match time {
        // A deadline is a moment: the event starts there and takes no time.
        Some(time) => event.starts(day.and_time(time)),
        // DTEND is exclusive: an all-day event ends the next day.
        None => event.starts(day).ends(day.succ_opt().unwrap_or(day)),
    };
    let link = (request.web_base.as_deref()).map(|base| card_link(base, task));
    let mut description = format!("Board: {}\nList: {}", entry.board, entry.list);
    if task.completed_at.is_some() {
        description.push_str("\nFinished");
    }
    if let Some(link) = &link {
        description.push('\n');
        description.push_str(link);
        event.url(link);
    }
    event.description(&description);
    if !task.location.is_empty() {
        event.location(&task.location);
    }
    if let Some(rule) = rrule(task, day) {
        event.add_property("RRULE", rule);
    }
    if let Some(minutes) = request.alarm_minutes {
        event.alarm(alarm(task, minutes, stamp));
    }
    Some(event.done())
}

/// The rhythm of a card repeating from its deadline day `day`, as an `RRULE` (RFC 5545,
/// 3.3.10) that gives the dates `domain::repeat` does: a month's end clamps (31 January,
/// 28 February, 31 March: `BYMONTHDAY=31,-1;BYSETPOS=1`, the day itself or else the month's
/// last), counted from the day the rhythm keeps while the deadline is clamped away from it.
fn rrule(task: &Task, day: NaiveDate) -> Option<String> {
    let rule = task.repeat.filter(|r| r.from == Basis::Deadline)?;
    let anchor = (task.repeat_anchor.as_deref())
        .and_then(|a| NaiveDate::parse_from_str(a, "%Y-%m-%d").ok())
        .unwrap_or(day);
    let every = rule.every;
    Some(match rule.unit {
        Unit::Day => format!("FREQ=DAILY;INTERVAL={every}"),
        Unit::Week => format!("FREQ=WEEKLY;INTERVAL={every}"),
        Unit::Month if anchor.day() > 28 => format!(
            "FREQ=MONTHLY;INTERVAL={every};BYMONTHDAY={},-1;BYSETPOS=1",
            anchor.day()
        ),
        Unit::Month => format!("FREQ=MONTHLY;INTERVAL={every}"),
        Unit::Year if (anchor.month(), anchor.day()) == (2, 29) => {
            format!("FREQ=YEARLY;INTERVAL={every};BYMONTH=2;BYMONTHDAY=29,-1;BYSETPOS=1")
        }
        Unit::Year => format!("FREQ=YEARLY;INTERVAL={every}"),
    })
}

/// A reminder `minutes` before the deadline, shown by the calendar app.
fn alarm(task: &Task, minutes: u32, stamp: DateTime<Utc>) -> Alarm {
    let mut alarm = Alarm::display(&task.title, -Duration::minutes(i64::from(minutes)));
    // The crate writes a duration in seconds (`-PT900S`); minutes read as what was asked.
    // It also gives every component a UID and a DTSTAMP when none is set: fixed ones keep
    // the same revision's feed the same bytes.
    alarm
        .append_property(Property::new("TRIGGER", format!("-PT{minutes}M")))
        .uid(&format!("{}-alarm@workboard", task.id))
        .timestamp(stamp);
    alarm.done()
}

/// The card in the web client: its board, with the card named for the client to open.
pub fn card_link(base: &str, task: &Task) -> String {
    format!(
        "{}/#/b/{}?card={}",
        base.trim_end_matches('/'),
        task.project_id,
        task.id
    )
}
