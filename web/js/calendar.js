// The calendar: a month of the cards that have a deadline day, of one board or of every
// board (`#/calendar` or `#/calendar/<board>`, `?month=YYYY-MM&done=…` in the address), as a
// grid of weeks, or on a narrow screen as an agenda (the days that have cards, in order).
// Cards read as on the board (due.js: overdue, today, soon; finished ones marked finished);
// finished cards follow the same window as the board's (`done`: the server's window by default,
// `none`, `all`). A card opens in the card dialog; dragging it to another day, or Alt+arrows
// on it, moves its deadline by the same guarded write as the card dialog's (undoable).
// Also here: the `?card=<id>` of a board's address (the calendar feed's links).

import { h, mount, named, showError, toast } from './ui.js';
import { dueState } from './due.js';
import { finishedShown } from './filters.js';
import { finishedWindowWords } from './rules.js';
import { wireCalendarDrag } from './calendar-drag.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const DONE = { recent: finishedWindowWords, none: () => 'Finished cards hidden', all: () => 'All finished cards' };
const NARROW = '(max-width: 760px)';

const pad = (n) => String(n).padStart(2, '0');
/** A local date as `YYYY-MM-DD`. */
export const dayKey = (date) => `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
const localDay = (key) => {
  const [y, m, d] = key.split('-').map(Number);
  return new Date(y, m - 1, d);
};
/** The day `n` days after `key` (calendar days, so DST-safe). */
export function addDays(key, n) {
  const d = localDay(key);
  return dayKey(new Date(d.getFullYear(), d.getMonth(), d.getDate() + n));
}
const longDay = new Intl.DateTimeFormat(undefined, { weekday: 'long', day: 'numeric', month: 'long', year: 'numeric' });
const monthName = new Intl.DateTimeFormat(undefined, { month: 'long', year: 'numeric' });
const weekdayName = new Intl.DateTimeFormat(undefined, { weekday: 'short' });
const weekdayLong = new Intl.DateTimeFormat(undefined, { weekday: 'long' });

/** The calendar the address names, or null when it names something else. */
export function calendarRoute(hash = location.hash) {
  const match = /^#\/calendar(?:\/([^/?]+))?\/?(?:\?(.*))?$/.exec(hash);
  if (!match) return null;
  const params = new URLSearchParams(match[2] || '');
  const month = /^\d{4}-\d{2}$/.test(params.get('month') || '') ? params.get('month') : null;
  const done = Object.hasOwn(DONE, params.get('done') || '') ? params.get('done') : 'recent';
  return { projectId: match[1] ? decodeURIComponent(match[1]) : null, month, done };
}

/** The address of a calendar (every board when `projectId` is null). */
export function calendarHref({ projectId = null, month = null, done = 'recent' } = {}) {
  const params = new URLSearchParams();
  if (month) params.set('month', month);
  if (done && done !== 'recent') params.set('done', done);
  const query = params.toString();
  return `#/calendar${projectId ? `/${encodeURIComponent(projectId)}` : ''}${query ? `?${query}` : ''}`;
}

/** The card a board's address asks to open (`#/b/<board>?card=<id>`), and that address without it. */
export function cardFromRoute(hash = location.hash) {
  const match = /^(#\/b\/[^/?]+)\?(.*)$/.exec(hash);
  if (!match) return null;
  const params = new URLSearchParams(match[2]);
  const id = params.get('card');
  if (!id) return null;
  params.delete('card');
  const rest = params.toString();
  return { id, hash: `${match[1]}${rest ? `?${rest}` : ''}` };
}

export function createCalendar(ctx) {
  const { store } = ctx;
  let route = null;
  let focusDay = null; // the day that holds the grid's Tab stop
  let focusCard = null; // a card to give the focus on the next draw (moved by the keyboard)
  let wired = false;
  let shownHash = null;
  let focusDayNext = false; // the next draw gives the focus to focusDay's cell
  const narrow = window.matchMedia(NARROW);
  narrow.addEventListener('change', () => ctx.render());

  const go = (changes) => {
    location.hash = calendarHref({ ...route, ...changes });
  };
  const monthOf = (r) => r.month || dayKey(new Date()).slice(0, 7);

  /** The cards with a deadline day in [from, to], by day, as the board would show them. */
  function cardsByDay(r, from, to) {
    const now = new Date();
    const byDay = new Map();
    for (const task of store.tasks.values()) {
      if (!task.deadline || task.deadline < from || task.deadline > to) continue;
      if (r.projectId && task.projectId !== r.projectId) continue;
      const project = store.projects.get(task.projectId);
      const column = store.columns.get(task.columnId);
      if (!project || !column || column.archivedAt !== null) continue;
      if (!r.projectId && project.archivedAt !== null) continue;
      if (!finishedShown(task, r.done, now.getTime())) continue;
      if (!byDay.has(task.deadline)) byDay.set(task.deadline, []);
      byDay.get(task.deadline).push(task);
    }
    for (const list of byDay.values()) {
      list.sort((a, b) => (a.deadlineTime || '99').localeCompare(b.deadlineTime || '99') || a.title.localeCompare(b.title));
    }
    return byDay;
  }

  function cardButton(task, r, now) {
    const due = dueState(task, now);
    const finished = due?.kind === 'done';
    const board = !r.projectId ? store.projects.get(task.projectId)?.name : null;
    return h('button', {
      type: 'button',
      class: ['cal-card', `due-${due?.kind || 'later'}`],
      dataset: { id: task.id },
      title: `${task.title} · ${due?.title || ''}${board ? ` · ${board}` : ''}`,
      tabindex: narrow.matches ? null : '-1',
    },
    // Told by a word as well as colour, as on the board (the spoken text below says it whole).
    due?.kind === 'overdue' && h('span', { class: 'cal-flag', 'aria-hidden': 'true', text: 'Overdue' }),
    finished && h('span', { class: 'cal-flag', 'aria-hidden': 'true', text: '✓' }),
    task.deadlineTime && h('span', { class: 'cal-time', text: task.deadlineTime }),
    h('span', { class: 'cal-card-title', text: task.title }),
    h('span', { class: 'visually-hidden', text: `, ${finished ? `finished, ${due.spoken.toLowerCase()}` : due.spoken}${board ? `, board ${board}` : ''}` }));
  }

  function head(r) {
    const [y, m] = monthOf(r).split('-').map(Number);
    const shift = (n) => go({ month: dayKey(new Date(y, m - 1 + n, 1)).slice(0, 7) });
    const boards = store.projectList().filter((p) => p.archivedAt === null || p.id === r.projectId);
    return h('div', { class: 'cal-head' },
      h('h1', { id: 'calendar-title', tabindex: '-1', text: `Calendar · ${monthName.format(new Date(y, m - 1, 1))}` }),
      h('div', { class: 'cal-tools' },
        h('button', { type: 'button', id: 'cal-prev', class: 'icon-button', 'aria-label': 'Previous month', title: 'Previous month', text: '‹', on: { click: () => shift(-1) } }),
        h('button', { type: 'button', id: 'cal-today', on: { click: () => { focusDay = dayKey(new Date()); go({ month: null }); } } }, 'Today'),
        h('button', { type: 'button', id: 'cal-next', class: 'icon-button', 'aria-label': 'Next month', title: 'Next month', text: '›', on: { click: () => shift(1) } }),
        h('label', { class: 'visually-hidden', for: 'cal-scope', text: 'Boards shown' }),
        h('select', { id: 'cal-scope', on: { change: (e) => go({ projectId: e.target.value || null }) } },
          h('option', { value: '', text: 'Every board' }),
          boards.map((p) => h('option', { value: p.id, text: p.name, props: { selected: p.id === r.projectId } }))),
        h('label', { class: 'visually-hidden', for: 'cal-done', text: 'Finished cards' }),
        h('select', { id: 'cal-done', on: { change: (e) => go({ done: e.target.value }) } },
          Object.entries(DONE).map(([value, words]) => h('option', { value, text: words(), props: { selected: value === r.done } })))),
      h('p', { class: 'cal-hint muted', text: narrow.matches
        ? 'Tap a card to open it and change its deadline.'
        : 'Drag a card to another day to move its deadline; on a card, Alt + arrows move it by a day or a week.' }));
  }

  function grid(r, today, now) {
    const [y, m] = monthOf(r).split('-').map(Number);
    const first = new Date(y, m - 1, 1);
    const start = new Date(y, m - 1, 1 - ((first.getDay() + 6) % 7)); // the Monday on or before the 1st
    const last = new Date(y, m, 0);
    const weeks = Math.ceil(((last - start) / DAY_MS + 1) / 7);
    const from = dayKey(start);
    const month = monthOf(r);
    const to = addDays(from, weeks * 7 - 1);
    if (!focusDay || focusDay < from || focusDay > to) focusDay = today.slice(0, 7) === month ? today : `${month}-01`;
    const byDay = cardsByDay(r, from, to);
    const heads = Array.from({ length: 7 }, (_, i) => {
      const d = localDay(addDays(from, i));
      return h('th', { scope: 'col', abbr: weekdayLong.format(d), text: weekdayName.format(d) });
    });
    const rows = Array.from({ length: weeks }, (_, w) => h('tr', {}, Array.from({ length: 7 }, (_, i) => {
      const key = addDays(from, w * 7 + i);
      const cards = byDay.get(key) || [];
      const inMonth = key.slice(0, 7) === month;
      return h('td', {
        class: ['cal-day', !inMonth && 'cal-other', key === today && 'cal-today', key < today && 'cal-past'],
        dataset: { day: key },
        tabindex: key === focusDay ? '0' : '-1',
        'aria-current': key === today ? 'date' : null,
      },
      h('div', { class: 'cal-date' },
        h('span', { 'aria-hidden': 'true', text: String(localDay(key).getDate()) }),
        h('span', { class: 'visually-hidden', text: `${longDay.format(localDay(key))}${key === today ? ', today' : ''}, ${cards.length ? `${cards.length} card${cards.length === 1 ? '' : 's'}` : 'no cards'}` })),
      cards.length > 0 && h('ul', { class: 'cal-cards' }, cards.map((t) => h('li', {}, cardButton(t, r, now)))));
    })));
    return h('table', { class: 'cal-grid', role: 'grid', 'aria-labelledby': 'calendar-title' },
      h('thead', {}, h('tr', {}, heads)), h('tbody', {}, rows));
  }

  function agenda(r, today, now) {
    const month = monthOf(r);
    const byDay = cardsByDay(r, `${month}-01`, `${month}-31`);
    const days = [...byDay.keys()].sort();
    if (!days.length) return h('p', { class: 'cal-empty muted', text: 'No card has a deadline this month.' });
    return h('ol', { class: 'cal-agenda' }, days.map((key) => h('li', {
      class: ['cal-agenda-day', key === today && 'cal-today', key < today && 'cal-past'],
      dataset: { day: key },
      'aria-current': key === today ? 'date' : null,
    },
    h('h2', { class: 'cal-agenda-date', text: `${longDay.format(localDay(key))}${key === today ? ' · Today' : ''}` }),
    h('ul', { class: 'cal-cards' }, byDay.get(key).map((t) => h('li', {}, cardButton(t, r, now)))))));
  }

  /** Draws the calendar `r` into `root`, keeping the focus on the same day or card. */
  function render(root, r) {
    if (!wired) wire(root);
    if (drag.dragging) return;
    route = r;
    const active = document.activeElement;
    const had = root.contains(active) || !active || active === document.body;
    const was = active?.closest?.('.cal-card')?.dataset.id;
    const now = new Date();
    const today = dayKey(now);
    const project = r.projectId && store.projects.get(r.projectId);
    mount(root, head(r), project && h('p', { class: 'cal-scope muted' }, 'Board: ', h('a', { href: ctx.boardHref(project.id), text: project.name })),
      narrow.matches ? agenda(r, today, now) : grid(r, today, now));
    document.title = `Calendar · Workboard`;
    const entering = shownHash !== location.hash;
    shownHash = location.hash;
    if (focusDayNext) {
      focusDayNext = false;
      root.querySelector('td.cal-day[tabindex="0"]')?.focus();
      return;
    }
    if (!had) return;
    if (entering && (!active || active === document.body)) {
      // A calendar just opened (a link, a month's button): its heading takes the focus.
      root.querySelector('#calendar-title')?.focus();
      return;
    }
    const want = focusCard || was;
    focusCard = null;
    const card = want && root.querySelector(`.cal-card[data-id="${CSS.escape(want)}"]`);
    const day = root.querySelector('td.cal-day[tabindex="0"]');
    if (card) card.focus();
    else if (active?.matches?.('td.cal-day') && day) day.focus();
    else if (active?.id && !active.isConnected && root.querySelector(`#${CSS.escape(active.id)}`)) root.querySelector(`#${CSS.escape(active.id)}`).focus();
    else if (active && active !== document.body && !active.isConnected) (day || root.querySelector('#calendar-title'))?.focus();
  }

  /** Moves a card's deadline to `day`: the card dialog's guarded write, recorded for undo. */
  async function moveTo(id, day) {
    const task = store.tasks.get(id);
    if (!task || task.deadline === day) return;
    if (ctx.readOnly(task.projectId)) {
      toast('This board is archived: restore it to change its cards.', { kind: 'error' });
      return;
    }
    const before = task.deadline;
    try {
      const reply = await ctx.ops.updateTask(task.id, { deadline: { before, after: day } });
      const after = reply && reply.task ? reply.task.deadline : day;
      ctx.actions.recordEdit(task, 'deadline', before, after);
      toast(`${named(task.title)} is now due ${longDay.format(localDay(after))}. Undo takes it back (Ctrl+Z).`);
    } catch (err) {
      showError(err);
    }
  }

  function focusDayCell(root, key, { month = false } = {}) {
    focusDay = key;
    if (!root.querySelector(`td.cal-day[data-day="${key}"]`) || (month && key.slice(0, 7) !== monthOf(route))) {
      // Past the grid's weeks: that day's month, with the focus on the day once drawn.
      focusDayNext = true;
      go({ month: key.slice(0, 7) });
      return;
    }
    for (const td of root.querySelectorAll('td.cal-day')) td.tabIndex = td.dataset.day === key ? 0 : -1;
    root.querySelector(`td.cal-day[data-day="${key}"]`)?.focus();
  }

  const STEPS = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -7, ArrowDown: 7 };

  function keydown(root, event) {
    const card = event.target.closest?.('.cal-card');
    const cell = event.target.closest?.('td.cal-day');
    if (card && event.altKey && STEPS[event.key]) {
      // Alt+arrows on a card: its deadline a day or a week earlier or later.
      event.preventDefault();
      const task = store.tasks.get(card.dataset.id);
      if (!task) return;
      focusCard = task.id;
      const day = addDays(task.deadline, STEPS[event.key]);
      focusDay = day;
      if (!narrow.matches && !root.querySelector(`td.cal-day[data-day="${day}"]`)) go({ month: day.slice(0, 7) });
      moveTo(task.id, day);
      return;
    }
    if (event.altKey || event.ctrlKey || event.metaKey || !cell) return;
    if (card) {
      const cards = [...cell.querySelectorAll('.cal-card')];
      const at = cards.indexOf(card);
      if (event.key === 'ArrowDown' && cards[at + 1]) cards[at + 1].focus();
      else if (event.key === 'ArrowUp') (cards[at - 1] || cell).focus();
      else if (event.key === 'Escape') cell.focus();
      else if (event.key === 'ArrowLeft' || event.key === 'ArrowRight') focusDayCell(root, addDays(cell.dataset.day, STEPS[event.key]));
      else return;
      event.preventDefault();
      return;
    }
    if (event.target !== cell) return;
    const key = cell.dataset.day;
    const week = (localDay(key).getDay() + 6) % 7;
    if (STEPS[event.key]) focusDayCell(root, addDays(key, STEPS[event.key]));
    else if (event.key === 'Home') focusDayCell(root, addDays(key, -week));
    else if (event.key === 'End') focusDayCell(root, addDays(key, 6 - week));
    else if (event.key === 'PageUp' || event.key === 'PageDown') {
      const d = localDay(key);
      const to = new Date(d.getFullYear(), d.getMonth() + (event.key === 'PageUp' ? -1 : 1), 1);
      focusDayCell(root, dayKey(new Date(to.getFullYear(), to.getMonth(), Math.min(d.getDate(), new Date(to.getFullYear(), to.getMonth() + 1, 0).getDate()))), { month: true });
    } else if (event.key === 'Enter' || event.key === ' ') cell.querySelector('.cal-card')?.focus();
    else return;
    event.preventDefault();
  }

  let drag = { dragging: false };
  function wire(root) {
    wired = true;
    root.addEventListener('click', (event) => {
      const card = event.target.closest?.('.cal-card');
      if (card) ctx.openCard(card.dataset.id);
    });
    root.addEventListener('keydown', (event) => keydown(root, event));
    root.addEventListener('focusin', (event) => {
      const cell = event.target.closest?.('td.cal-day');
      if (cell && focusDay !== cell.dataset.day) {
        focusDay = cell.dataset.day;
        for (const td of root.querySelectorAll('td.cal-day')) td.tabIndex = td === cell ? 0 : -1;
      }
    });
    drag = wireCalendarDrag(root, { drop: (id, day) => moveTo(id, day), done: () => ctx.render() });
  }

  return { render, moveTo };
}
