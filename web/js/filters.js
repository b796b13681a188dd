// The filter bar and what it means: the route (`#/b/<board>?q=…&tag=…`) holds the active
// filters, so they survive a reload; a card matches by text (title and description,
// matched here in the page), tag, priority, effort and due date; the finished-cards window
// decides which finished cards show (by default those finished in the server's window, 30
// days unless it says otherwise, in their list, marked as finished). Active filters show as
// chips that remove themselves.

import { h, mount, disclosure, setText } from './ui.js';
import { dueMatches } from './due.js';
import { EFFORTS, PRIORITIES, effortLabel, finishedWindowWords, limit, onLimits, priorityChoice } from './rules.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const KEYS = ['q', 'tag', 'priority', 'effort', 'due', 'done'];
const DUE = { overdue: 'Overdue', week: 'Due this week', none: 'No due date' };
// `recent` is the default (no `done` in the address), so a card finished today stays where
// the person left it; `none` hides every finished card.
const DONE = { recent: finishedWindowWords, none: () => 'Finished cards hidden', all: () => '+ all finished' };
const DONE_DEFAULT = 'recent';

/** The board and filters the address names. */
export function parseRoute(hash = location.hash) {
  const match = /^#\/b\/([^/?]+)(?:\?(.*))?$/.exec(hash);
  const params = new URLSearchParams(match ? match[2] || '' : '');
  const filters = {};
  for (const key of KEYS) {
    const value = params.get(key);
    if (value) filters[key] = value;
  }
  if (filters.done && (!Object.hasOwn(DONE, filters.done) || filters.done === DONE_DEFAULT)) delete filters.done;
  return { projectId: match ? decodeURIComponent(match[1]) : null, filters };
}

/** The address of a board with filters (empty ones left out). */
export function routeHref(projectId, filters = {}) {
  const params = new URLSearchParams();
  for (const key of KEYS) if (filters[key] && !(key === 'done' && filters[key] === DONE_DEFAULT)) params.set(key, filters[key]);
  const query = params.toString();
  return `#/b/${encodeURIComponent(projectId)}${query ? `?${query}` : ''}`;
}

/** Lower case without accents, so "cafe" finds "Café". */
const fold = (text) => String(text || '').normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();

/** Filters that narrow the cards (the finished window does not count: it is a view). */
export function narrowing(filters) {
  return ['q', 'tag', 'priority', 'effort', 'due'].some((k) => filters[k]);
}

/** Whether a finished card shows under the window (`none`, `recent`, `all`; unset is `recent`). */
export function finishedShown(task, done = DONE_DEFAULT, now = Date.now()) {
  if (task.completedAt === null || task.completedAt === undefined) return true;
  if (done === 'all') return true;
  return (done || DONE_DEFAULT) === 'recent' && task.completedAt >= now - limit('finished-window-days') * DAY_MS;
}

/** A matcher for the narrowing filters; built once per draw. */
export function matcher(filters, now = new Date()) {
  const words = fold(filters.q).split(/\s+/).filter(Boolean);
  const tag = filters.tag ? fold(filters.tag) : null;
  return (task) => {
    if (words.length) {
      const text = `${fold(task.title)}\n${fold(task.description)}`;
      if (!words.every((w) => text.includes(w))) return false;
    }
    if (tag && !task.tags.some((t) => fold(t) === tag)) return false;
    if (filters.priority && String(task.priority) !== filters.priority) return false;
    if (filters.effort && (filters.effort === 'none' ? task.effort !== null : task.effort !== filters.effort)) return false;
    if (filters.due && !dueMatches(task, filters.due, now)) return false;
    return true;
  };
}

function chipText(key, value) {
  switch (key) {
    case 'q': return `Text: “${value}”`;
    case 'tag': return `Tag: ${value}`;
    case 'priority': return `Priority: P${value}`;
    case 'effort': return `Effort: ${value === 'none' ? 'not set' : effortLabel(value)}`;
    case 'due': return DUE[value] || value;
    case 'done': return DONE[value]?.() || value;
    default: return value;
  }
}

/**
 * The bar above the lists. `onChange(filters)` gets the new filters; the page writes them
 * into the address and draws again.
 */
export function createFilterBar({ onChange }) {
  let filters = {};
  let typing = null;

  const text = h('input', {
    type: 'search', id: 'filter-text', class: 'filter-text', placeholder: 'Filter cards…',
    'aria-label': 'Filter cards by text in the title or description', 'aria-keyshortcuts': '/',
  });
  const tag = h('select', { id: 'filter-tag', 'aria-label': 'Filter by tag' });
  const priority = h('select', { id: 'filter-priority', 'aria-label': 'Filter by priority' },
    h('option', { value: '', text: 'Any priority' }),
    PRIORITIES.map((p) => h('option', { value: String(p), text: priorityChoice(p) })));
  const effort = h('select', { id: 'filter-effort', 'aria-label': 'Filter by effort' },
    h('option', { value: '', text: 'Any effort' }),
    EFFORTS.map((v) => h('option', { value: v, text: effortLabel(v) })),
    h('option', { value: 'none', text: 'Effort not set' }));
  const due = h('select', { id: 'filter-due', 'aria-label': 'Filter by due date' },
    h('option', { value: '', text: 'Any due date' }),
    Object.entries(DUE).map(([v, t]) => h('option', { value: v, text: t, title: v === 'week' ? 'Due today or in the next 6 days' : null })));
  const done = h('select', { id: 'completed-filter', 'aria-label': 'Finished cards', title: 'Finished cards' },
    Object.entries(DONE).map(([v, words]) => h('option', { value: v, text: words() })));
  // The window's words follow the server's limit, read after the bar was made.
  onLimits(() => setText(done.querySelector(`option[value="${DONE_DEFAULT}"]`), DONE[DONE_DEFAULT]()));
  const chips = h('ul', { class: 'chips', 'aria-label': 'Active filters' });
  const toggle = h('button', { type: 'button', class: 'filter-toggle', 'aria-controls': 'filter-controls', 'aria-expanded': 'false', text: 'Filter' });
  const controls = h('div', { id: 'filter-controls', class: 'filter-controls' }, text, tag, priority, effort, due, done);
  const el = h('div', { class: 'filter-bar', role: 'search', 'aria-label': 'Filter the board' }, controls, chips);
  const panel = disclosure(toggle, controls);

  const set = (key, value) => {
    const next = { ...filters };
    if (value) next[key] = value;
    else delete next[key];
    filters = next;
    onChange(next);
  };
  text.addEventListener('input', () => {
    clearTimeout(typing);
    typing = setTimeout(() => set('q', text.value.trim()), 150);
  });
  text.addEventListener('keydown', (event) => {
    if (event.key === 'Enter') {
      clearTimeout(typing);
      set('q', text.value.trim());
    }
  });
  for (const [key, select] of [['tag', tag], ['priority', priority], ['effort', effort], ['due', due]]) {
    select.addEventListener('change', () => set(key, select.value));
  }
  done.addEventListener('change', () => set('done', done.value === DONE_DEFAULT ? '' : done.value));

  /** Shows `next` filters; `tags` are the board's tags to offer. */
  function update(next, tags) {
    filters = next;
    if (document.activeElement !== text && text.value !== (next.q || '')) text.value = next.q || '';
    const options = ['', ...tags];
    if (next.tag && !tags.includes(next.tag)) options.push(next.tag);
    const signature = options.join('\u0000');
    if (tag.dataset.options !== signature) {
      tag.dataset.options = signature;
      mount(tag, options.map((t) => h('option', { value: t, text: t || (tags.length ? 'Any tag' : 'No tags on this board') })));
    }
    tag.value = next.tag || '';
    priority.value = next.priority || '';
    effort.value = next.effort || '';
    due.value = next.due || '';
    done.value = next.done || DONE_DEFAULT;

    const active = KEYS.filter((k) => next[k]);
    toggle.textContent = active.length ? `Filter (${active.length})` : 'Filter';
    mount(chips, active.map((key) => h('li', { class: 'chip' },
      h('span', { text: chipText(key, next[key]) }),
      h('button', { type: 'button', class: 'icon-button', 'aria-label': `Remove filter ${chipText(key, next[key])}`, text: '×',
        on: { click: () => set(key, '') } }))),
    active.length > 1 && h('li', {}, h('button', { type: 'button', class: 'small quiet', text: 'Clear all',
      on: { click: () => { filters = {}; onChange({}); } } })));
    chips.hidden = !active.length;
  }

  return { el, toggle, update, focus: () => { panel.open(); text.focus(); } };
}
