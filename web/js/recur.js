// A repeating card's next occurrence, for a file opened without a key (local.js): with a
// server, the server makes it (write-model/src/repeat.rs `next_deadline` and
// command/task/recur.rs), and this module ports both so a file behaves the same. It owns the
// date arithmetic of a rule (`{every, unit, from}`, the values rules.js accepts), the
// occurrence's shape (what it copies, what it resets, where it goes) and the check that a
// rule from the deadline has one. Pure: it reads the cards held and answers new ones; the
// caller writes them.
//
// Months and years count from an anchor day, not from the last (possibly clamped) deadline:
// 31 January + 1 month is 28 February, + 2 months 31 March again. A card keeps that anchor
// (`repeatAnchor`, which the server keeps in its stored JSON and never shows) only while its
// deadline is clamped away from it; a deadline or rule set by hand drops it.

import { ApiError, newId, readable } from './api.js';
import { REPEAT_EVERY, REPEAT_FROM, REPEAT_UNITS } from './rules.js';

// Civil dates as days since 1970-01-01 (proleptic Gregorian), as jiff counts them; the
// server's dates run from year -9999 to 9999.
const MAX_YEAR = 9999;
const leap = (y) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
const monthDays = (y, m) => [31, leap(y) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1];

/** `YYYY-MM-DD` as {y, m, d}, or null when it is not a date (the server reads it so too). */
function parse(s) {
  const match = typeof s === 'string' && /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!match) return null;
  const [y, m, d] = match.slice(1).map(Number);
  return m >= 1 && m <= 12 && d >= 1 && d <= monthDays(y, m) ? { y, m, d } : null;
}

const pad = (n, width) => String(n).padStart(width, '0');
const show = ({ y, m, d }) => `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}`;

/** Days since 1970-01-01 (Howard Hinnant's days_from_civil). */
function toDays({ y, m, d }) {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

function fromDays(z) {
  const zz = z + 719468;
  const era = Math.floor(zz / 146097);
  const doe = zz - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return { y: yoe + era * 400 + (m <= 2 ? 1 : 0), m, d };
}

/** A date in the server's range, else null. */
const inRange = (date) => (Math.abs(date.y) <= MAX_YEAR ? date : null);
const addDays = (date, n) => inRange(fromDays(toDays(date) + n));
/** `date` + `n` months, its day clamped to the month's end (as jiff adds months). */
function addMonths(date, n) {
  const total = date.y * 12 + (date.m - 1) + n;
  const y = Math.floor(total / 12);
  const m = total - y * 12 + 1;
  return inRange({ y, m, d: Math.min(date.d, monthDays(y, m)) });
}
const cmp = (a, b) => toDays(a) - toDays(b);

/** The months one step of `rule` spans, or null when it counts days. */
const stepMonths = (rule) => (rule.unit === 'month' ? rule.every : rule.unit === 'year' ? 12 * rule.every : null);
const stepDays = (rule) => (rule.unit === 'week' ? 7 * rule.every : rule.every);

/** `base` moved on by `k` steps of `rule` (a month's end clamped), null past year 9999. */
function step(rule, base, k) {
  const months = stepMonths(rule);
  return months === null ? addDays(base, stepDays(rule) * k) : addMonths(base, months * k);
}

/**
 * The deadline of the card that follows one with `rule`, finished on the day `completed`
 * (all dates `YYYY-MM-DD`). `deadline` is the card's and `anchor` the day its rhythm counts
 * from when that differs. From the deadline: the first day of the rhythm after both the
 * deadline and the day of completion (a card finished late never starts overdue; one
 * finished early moves on one step). From completion: one step after the day of completion.
 * Answers `{deadline, anchor}` (anchor null unless kept), or null past year 9999.
 */
export function nextDeadline(rule, deadline, anchor, completed) {
  const done = parse(completed);
  const due = parse(deadline);
  // A rule from the deadline on a card without one (refused on writes) counts from
  // completion rather than failing the completion.
  const anchored = rule.from === 'deadline' && due !== null;
  const base = anchored ? (parse(anchor) ?? due) : done;
  const after = anchored && cmp(due, done) > 0 ? due : done;
  // The least k whose date passes `after`: estimated, then stepped up (a step or two).
  const months = stepMonths(rule);
  let k = months === null
    ? Math.max(1, Math.trunc((toDays(after) - toDays(base)) / stepDays(rule)))
    : Math.max(1, Math.trunc(((after.y - base.y) * 12 + after.m - base.m) / months));
  let date = step(rule, base, k);
  while (date && cmp(date, after) <= 0) date = step(rule, base, ++k);
  if (!date) return null;
  // Only a month's end can be clamped: keep the anchor while the day differs from it (a
  // rule from completion counts from each completion anew).
  const kept = anchored && months !== null && base.d > 28 && base.d !== date.d;
  return { deadline: show(date), anchor: kept ? show(base) : null };
}

/** The server's 422 for a value a field does not take, as the page says it. */
function refusal(field, message) {
  const body = { ok: false, error: message, code: 'invalid_value', field };
  return new ApiError(422, body, readable(422, body));
}

/** Whether `repeat` is a rule this module can count (the values rules.js accepts). */
const isRule = (r) => Boolean(r) && Number.isInteger(r.every) && r.every >= REPEAT_EVERY.min
  && r.every <= REPEAT_EVERY.max && REPEAT_UNITS.includes(r.unit) && REPEAT_FROM.includes(r.from);

/**
 * Refuses a card whose `repeat` counts from a deadline it does not have, as the server
 * answers 422: naming `deadline` when the write cleared the deadline of such a card,
 * `repeat` otherwise.
 */
export function checkRepeat(task, clearedDeadline) {
  if (!(task.repeat && task.repeat.from === 'deadline' && !task.deadline)) return;
  const [field, message] = clearedDeadline
    ? ['deadline', 'a card that repeats from its deadline keeps a deadline: clear `repeat` or set its `from` to `completion` first']
    : ['repeat', '`repeat` from the deadline needs a deadline on the card (or `from: completion`)'];
  throw refusal(field, message);
}

/** The UTC day a completion stamp (ms) falls on (a deadline has no time zone), or null. */
function dayOf(ms) {
  const at = new Date(ms);
  return Number.isFinite(ms) && !Number.isNaN(at.getTime()) ? at.toISOString().slice(0, 10) : null;
}

/** A copy of `t`, open, with fresh ids for it, its tags and its checklist items. */
const openCopy = (t, parentId) => ({
  ...t,
  id: newId('t_'),
  parentId,
  completedAt: null,
  cancelledAt: null,
  tags: [...(t.tags || [])],
  tagIds: (t.tags || []).map(() => newId('g_')),
  checklist: (t.checklist || []).map((item) => ({ ...item, id: newId('k_'), done: false })),
  comments: [],
});

/**
 * What completing `finished` makes (the card as just completed, `completedAt` set; `tasks`
 * the cards held by id, the finished one's old self included): the occurrence first, then
 * its subtasks' copies, each to be written in that order; null when it does not repeat.
 * `now` stands for the day of completion when its stamp is not a date. Throws the server's
 * 422 (naming `repeat`) when the next deadline would pass the year 9999, before anything
 * is written.
 *
 * The occurrence copies title, description, priority, effort, location, tags, deadline
 * time, `repeat` and parent, and the checklist with every item open; no comments. It goes
 * right after the finished card in its list. Each subtask of the finished card (finished or
 * not) is copied, open, under it, right after the subtask it copies, its deadline moved by as
 * many days as the card's (kept as it was when the card had none).
 */
export function nextOccurrence(finished, tasks, now = Date.now()) {
  if (!isRule(finished.repeat) || finished.completedAt === null || finished.completedAt === undefined) return null;
  const completed = dayOf(finished.completedAt) ?? dayOf(now);
  const next = nextDeadline(finished.repeat, finished.deadline, finished.repeatAnchor, completed);
  if (!next) {
    throw refusal('repeat', 'the next deadline would fall after the year 9999');
  }
  // The cards as they will stand, so each position sees the ones made before it.
  const held = new Map(tasks);
  held.set(finished.id, finished);
  const rightAfter = (t) => {
    let following = null;
    for (const o of held.values()) {
      if (o.columnId === t.columnId && o.id !== t.id && o.position > t.position && (following === null || o.position < following)) {
        following = o.position;
      }
    }
    return following === null ? t.position + 1 : t.position + (following - t.position) / 2;
  };
  const made = [];
  const put = (card) => {
    held.set(card.id, card);
    made.push(card);
  };

  const { repeatAnchor: _, ...rest } = finished;
  const card = { ...openCopy(rest, finished.parentId ?? null), position: rightAfter(finished), deadline: next.deadline };
  if (next.anchor) card.repeatAnchor = next.anchor;
  put(card);
  // The days the card's deadline moved, for its subtasks' deadlines.
  const due = parse(finished.deadline);
  const moved = due ? toDays(parse(next.deadline)) - toDays(due) : null;
  const subtasks = [...tasks.values()].filter((t) => t.parentId === finished.id);
  for (const sub of subtasks) {
    const copy = { ...openCopy(sub, card.id), position: rightAfter(sub) };
    const from = parse(sub.deadline);
    const shifted = moved !== null && from ? addDays(from, moved) : null;
    if (shifted) {
      copy.deadline = show(shifted);
      delete copy.repeatAnchor;
    }
    put(copy);
  }
  return made;
}
