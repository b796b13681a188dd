// Due dates as a person reads them: a card's deadline day (and time) compared with today in
// this browser's time zone, told apart by words as well as colour (Overdue, Today, Tomorrow,
// In 2 days, a date). Finished cards are never flagged.

const DAY_MS = 24 * 60 * 60 * 1000;

/** The local midnight of a `YYYY-MM-DD` day. */
function localDay(text) {
  const [y, m, d] = text.split('-').map(Number);
  return new Date(y, m - 1, d);
}

const midnight = (date) => new Date(date.getFullYear(), date.getMonth(), date.getDate());

/** Whole days from `now`'s day to `deadline`'s (negative when past); DST-safe. */
function daysUntil(deadline, now = new Date()) {
  return Math.round((localDay(deadline) - midnight(now)) / DAY_MS);
}

const hhmm = (now) => `${String(now.getHours()).padStart(2, '0')}:${String(now.getMinutes()).padStart(2, '0')}`;

// One formatter per shape (building one is the costly part of `toLocaleDateString`), and
// each day's text kept once made: a board of 5,000 dated cards formats a few hundred days.
const formatters = new Map();
const texts = new Map();

function dateText(deadline, now, { long = false } = {}) {
  const otherYear = !long && Number(deadline.slice(0, 4)) !== now.getFullYear();
  const key = `${deadline}|${long ? 'l' : 's'}${otherYear ? 'y' : ''}`;
  let text = texts.get(key);
  if (text === undefined) {
    const shape = key.slice(key.indexOf('|') + 1);
    let format = formatters.get(shape);
    if (!format) {
      const options = long
        ? { weekday: 'long', day: 'numeric', month: 'long', year: 'numeric' }
        : { weekday: 'short', day: 'numeric', month: 'short' };
      if (otherYear) options.year = 'numeric';
      format = new Intl.DateTimeFormat(undefined, options);
      formatters.set(shape, format);
    }
    text = format.format(localDay(deadline));
    if (texts.size > 20000) texts.clear();
    texts.set(key, text);
  }
  return text;
}

// A card's reading depends only on its deadline, time and finished state, today's date and,
// for a time today, whether it has passed: kept per day, so a draw reuses the same object
// (a tile compares it by identity to know its label did not change).
let statesDay = -1;
const states = new Map();

/**
 * How a card's due date reads, or null when it has none:
 * `{kind, label, spoken, title}` where kind is `overdue`, `today`, `soon` (within 2 days),
 * `later`, `done` (finished: shown, never flagged) or `time` (a time and no day).
 */
export function dueState(task, now = new Date()) {
  const { deadline, deadlineTime: time } = task;
  if (!deadline && !time) return null;
  const today = midnight(now).getTime();
  if (today !== statesDay) {
    statesDay = today;
    states.clear();
  }
  const done = task.completedAt !== null && task.completedAt !== undefined;
  // Only a time on today's date moves within the day (it passes).
  const passed = time && deadline && !done && daysUntil(deadline, now) === 0 ? time < hhmm(now) : false;
  const key = `${deadline}|${time}|${done ? 1 : 0}|${passed ? 1 : 0}`;
  let state = states.get(key);
  if (state === undefined) {
    state = readState(deadline, time, done, now);
    states.set(key, state);
  }
  return state;
}

function readState(deadline, time, finished, now) {
  const at = time ? ` ${time}` : '';
  if (!deadline) {
    return { kind: 'time', label: `At ${time}`, spoken: `Due at ${time}, no day set`, title: `Due at ${time} (no day set)` };
  }
  const title = `Due ${dateText(deadline, now, { long: true })}${at}`;
  if (finished) {
    return { kind: 'done', label: `${dateText(deadline, now)}${at}`, spoken: `Was due ${dateText(deadline, now)}${at}`, title };
  }
  const days = daysUntil(deadline, now);
  if (days < 0 || (days === 0 && time && time < hhmm(now))) {
    const when = days === 0 ? `today${at}` : days === -1 ? 'yesterday' : days >= -6 ? `${-days} days ago` : dateText(deadline, now);
    return { kind: 'overdue', label: `Overdue · ${when}`, spoken: `Overdue: was due ${when}`, title };
  }
  if (days === 0) return { kind: 'today', label: `Today${at}`, spoken: `Due today${at}`, title };
  if (days === 1) return { kind: 'soon', label: `Tomorrow${at}`, spoken: `Due tomorrow${at}`, title };
  if (days === 2) return { kind: 'soon', label: `In 2 days${at}`, spoken: `Due in 2 days${at}`, title };
  if (days <= 6) return { kind: 'later', label: `In ${days} days`, spoken: `Due in ${days} days`, title };
  return { kind: 'later', label: dateText(deadline, now), spoken: `Due ${dateText(deadline, now)}`, title };
}

/** The due filter: `overdue`, `week` (today and the 6 days after) or `none` (no day). */
export function dueMatches(task, filter, now = new Date()) {
  if (!filter) return true;
  if (filter === 'none') return !task.deadline;
  if (!task.deadline) return false;
  if (filter === 'overdue') return dueState(task, now)?.kind === 'overdue';
  if (filter === 'week') {
    const days = daysUntil(task.deadline, now);
    return days >= 0 && days <= 6;
  }
  return true;
}

/** Milliseconds to the next minute: labels move at midnight and as a due time passes. */
export function msToNextMinute(now = new Date()) {
  return 60000 - (now.getSeconds() * 1000 + now.getMilliseconds()) + 50;
}
