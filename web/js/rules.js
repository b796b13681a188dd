// The rules the page enforces, in one place: the limits (under the server's own names, as
// the discovery document `GET /api/v1` lists them in `limits`), the values a field accepts
// (priorities, efforts, a repeat's units and range), and the words the page uses for fields,
// priorities and efforts. No other module keeps a copy of any of them.
//
// The limits start equal to the interface's defaults (the specification's Limits table), so
// a file opened without a server, or a page that opens offline, enforces what a server does
// unless told otherwise; once the page has read a server's discovery document, that
// server's limits replace them (a server started with `--limit-tags-per-task 3` has the page
// refuse a fourth tag). Text fields drawn before then carry `data-limit` and are brought up
// to date; anything else that shows a limit listens with `onLimits`. The sync core
// (`core/`) does not read this module: it stays free of the page.

import { ApiError } from './api.js';

/** The limits the page enforces, with the interface's defaults. */
const DEFAULTS = Object.freeze({
  'title-chars': 250,
  'name-chars': 40,
  'folder-chars': 40,
  'tag-chars': 40,
  'location-chars': 200,
  'column-description-chars': 2000,
  'comment-chars': 16384,
  'checklist-item-chars': 500,
  'tags-per-task': 5,
  'checklist-items-per-task': 100,
  'comments-per-task': 200,
  'undo-steps': 20,
  'recoverable-deletions': 20,
  'finished-window-days': 30,
});

let limits = { ...DEFAULTS };
const listeners = new Set();

/** A limit by its server name (`title-chars`, `tags-per-task`, ...). */
export function limit(name) {
  if (!(name in limits)) throw new Error(`no limit named ${name}`);
  return limits[name];
}

/**
 * The attributes of a text field bound by a character limit, to spread into `h()`: its
 * `maxlength`, and `data-limit` so that a limit read later reaches a field already drawn.
 */
export const lengthOf = (name) => ({ maxlength: limit(name), 'data-limit': name });

/** `text` cut to a character limit, counting characters as the server does (code points). */
export function clip(text, name) {
  const chars = Array.from(String(text));
  return chars.length > limit(name) ? chars.slice(0, limit(name)).join('') : String(text);
}

/** Calls `fn()` whenever the limits change; returns a function that stops it. */
export function onLimits(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

function replace(next) {
  const changed = Object.keys(DEFAULTS).some((name) => next[name] !== limits[name]);
  limits = next;
  if (!changed) return;
  if (typeof document !== 'undefined') {
    for (const el of document.querySelectorAll('[data-limit]')) {
      if (el.dataset.limit in limits) el.maxLength = limits[el.dataset.limit];
    }
  }
  for (const fn of listeners) fn();
}

/**
 * Takes the limits a server states: `doc` is its discovery document (`GET /api/v1`). A
 * limit it does not state (an older server), or states as anything but a whole number of
 * at least 0, keeps its default.
 */
export function adoptServerLimits(doc) {
  const stated = doc && typeof doc.limits === 'object' && doc.limits ? doc.limits : {};
  const next = { ...DEFAULTS };
  for (const name of Object.keys(DEFAULTS)) {
    if (Number.isSafeInteger(stated[name]) && stated[name] >= 0) next[name] = stated[name];
  }
  replace(next);
}

/** Back to the interface's defaults (the page left the server for a file, or signed out). */
export function resetLimits() {
  replace({ ...DEFAULTS });
}

const HOLDS = {
  tags: ['tags-per-task', 'tags'],
  checklist: ['checklist-items-per-task', 'checklist items'],
  comments: ['comments-per-task', 'comments'],
};

/**
 * Refuses one more tag, checklist item or comment (`list`: `tags`, `checklist` or
 * `comments`) on a card that holds as many as the limit allows, as the server would (a 422,
 * as the page says it), before anything is sent or shown.
 */
export function checkRoom(task, list) {
  const [name, what] = HOLDS[list];
  if ((task[list]?.length ?? 0) < limit(name)) return;
  const message = `a card holds at most ${limit(name)} ${what}`;
  throw new ApiError(422, { error: message }, `Not saved: ${message}`);
}

// Accepted values. The server answers 422 for anything else (a priority out of range is
// clamped); the page offers only these.

/** Priorities, 1 the highest; a card is created with the default. */
export const PRIORITIES = Object.freeze([1, 2, 3, 4]);
export const DEFAULT_PRIORITY = 4;
/** Efforts; a card may have none (null). */
export const EFFORTS = Object.freeze(['easy', 'medium', 'hard']);
/** A repeat's units, its `every` range and what it counts from. */
export const REPEAT_UNITS = Object.freeze(['day', 'week', 'month', 'year']);
export const REPEAT_EVERY = Object.freeze({ min: 1, max: 365 });
export const REPEAT_FROM = Object.freeze(['deadline', 'completion']);

// Words.

const FIELD_LABELS = {
  title: 'Title', description: 'Description', priority: 'Priority', effort: 'Effort', deadline: 'Due day',
  deadlineTime: 'Due time', location: 'Location', repeat: 'Repeat', tags: 'Tags', parentId: 'Parent',
  name: 'Name', folder: 'Folder', pinnedAt: 'Pin', archivedAt: 'Archive', completedAt: 'Completion',
  position: 'Position', columnId: 'List', text: 'Text', done: 'Done',
};
const EFFORT_LABELS = { easy: 'Easy', medium: 'Medium', hard: 'Hard' };

/** A field's name as the page says it (`deadline` -> "Due day"); an unknown one as it is. */
export const fieldLabel = (field) => FIELD_LABELS[field] || field;

/** A priority as a choice in a list: "P1 (highest)", "P2", "P3", "P4 (normal)". */
export const priorityChoice = (p) => `P${p}${p === PRIORITIES[0] ? ' (highest)' : p === DEFAULT_PRIORITY ? ' (normal)' : ''}`;

/** A priority as a card's mark ("P1"), or null for the default, which is not marked. */
export const priorityMark = (p) => (PRIORITIES.includes(p) && p !== DEFAULT_PRIORITY ? `P${p}` : null);

/** An effort as the page says it ("Easy"); an unknown one as it is. */
export const effortLabel = (effort) => EFFORT_LABELS[effort] || effort;

/** The finished-cards window in words: "Finished in the last 30 days". */
export function finishedWindowWords() {
  const days = limit('finished-window-days');
  return `Finished in the last ${days === 1 ? 'day' : `${days} days`}`;
}
