// One card on the board: its title, tags and pills (priority, effort, due date, checklist,
// subtasks, comments, location). A tile is made once per card and patched in place: its
// inside is redrawn only when what it shows has changed, so a press on it survives any
// change elsewhere.

import { h, mount, setAttr } from './ui.js';
import { dueState } from './due.js';
import { tagClass } from './tags.js';
import { repeatWords } from './repeat.js';
import { effortLabel, priorityMark } from './rules.js';

// A board has few distinct tags and many tiles: each tag's class is worked out once.
const tagClasses = new Map();
const classOf = (text) => {
  let name = tagClasses.get(text);
  if (name === undefined) {
    if (tagClasses.size > 5000) tagClasses.clear();
    name = tagClass(text);
    tagClasses.set(text, name);
  }
  return name;
};

export function createTile(task) {
  // Not a Tab stop of its own: the list's one stop is given out by nav.js (roving tabindex).
  return h('article', { class: 'card', tabindex: -1, 'data-id': task.id });
}

/**
 * Brings a tile up to date. `view`: {parent, subtasks, expanded, columnName(id), now}.
 */
export function updateTile(tile, task, view) {
  const { parent, subtasks, expanded, now } = view;
  const due = dueState(task, now);
  // The store replaces a card's record whenever it changes, and dueState gives the same
  // object while the label reads the same: a tile whose inputs are all the same objects as
  // last time is up to date, and a draw of 5,000 cards touches only those that changed.
  const last = tile.__drawn;
  if (last && last.task === task && last.parent === parent && last.due === due && !expanded && !last.expanded
    && last.subtasks.length === subtasks.length && last.subtasks.every((s, i) => s === subtasks[i])) return;
  tile.__drawn = { task, parent, due, expanded, subtasks };
  const done = task.completedAt !== null;
  const described = Boolean(task.description && task.description.trim());
  const finishedSubs = subtasks.filter((s) => s.completedAt !== null).length;
  const peek = expanded && subtasks.length
    ? subtasks.map((s) => [s.id, s.title, s.completedAt !== null, s.columnId === task.columnId ? '' : view.columnName(s.columnId)])
    : null;
  const signature = JSON.stringify([
    task.title, task.tags, task.priority, task.effort, due, task.checklist.map((k) => k.done), subtasks.length, finishedSubs,
    task.comments.length, task.location, done, described, parent ? parent.title : null, peek, task.repeat,
  ]);
  tile.classList.toggle('completed', done);
  tile.classList.toggle('subtask', Boolean(parent));
  for (const kind of ['overdue', 'today', 'soon']) tile.classList.toggle(`due-${kind}`, due?.kind === kind);
  const label = [
    task.title,
    done ? 'finished' : '',
    parent ? `subtask of ${parent.title}` : '',
    due ? due.spoken : '',
    priorityMark(task.priority) ? `priority ${task.priority}` : '',
    described ? 'has a description' : '',
    task.repeat ? repeatWords(task.repeat).replace('R', 'r') : '',
  ].filter(Boolean).join('. ');
  setAttr(tile, 'aria-label', `${label}. Enter opens it; Alt and arrow keys move it.`);
  if (tile.dataset.signature === signature) return;
  tile.dataset.signature = signature;

  const checked = task.checklist.filter((k) => k.done).length;
  const meta = [
    priorityMark(task.priority) && h('span', { class: ['pill', `priority-${task.priority}`], text: priorityMark(task.priority), title: `Priority ${task.priority}` }),
    task.effort && h('span', { class: 'pill', text: effortLabel(task.effort), title: 'Effort' }),
    due && h('span', { class: ['pill', 'due', `due-${due.kind}`], title: due.title }, h('span', { class: 'visually-hidden', text: 'Due: ' }), due.label),
    task.checklist.length > 0 && h('span', { class: 'pill', text: `☑ ${checked}/${task.checklist.length}`, title: 'Checklist' }),
    subtasks.length > 0 && h('button', {
      type: 'button', class: 'pill subtasks-toggle', tabindex: -1, 'aria-expanded': String(Boolean(expanded)),
      title: expanded ? 'Hide the subtasks' : 'Show the subtasks together',
      // The name holds the visible "1/3" (so that a speech user can say what they see) and
      // the words a screen reader speaks more plainly than a fraction.
      'aria-label': `Subtasks ${finishedSubs}/${subtasks.length} (${finishedSubs} of ${subtasks.length} done). ${expanded ? 'Hide' : 'Show'} them`,
      'data-toggle-subtasks': task.id, text: `↳ ${finishedSubs}/${subtasks.length}`,
    }),
    task.comments.length > 0 && h('span', { class: 'pill', text: `${task.comments.length} comment${task.comments.length > 1 ? 's' : ''}` }),
    task.location && h('span', { class: 'pill', text: task.location, title: 'Location' }),
    described && h('span', { class: 'pill has-description', title: 'This card has a description' },
      h('span', { 'aria-hidden': 'true', text: '≡' }), h('span', { class: 'visually-hidden', text: 'Has a description' })),
    task.repeat && h('span', { class: 'pill repeat-mark', title: repeatWords(task.repeat) },
      h('span', { 'aria-hidden': 'true', text: '↻' }), h('span', { class: 'visually-hidden', text: repeatWords(task.repeat) })),
    done && h('span', { class: 'pill done', text: 'Done' }),
  ].filter(Boolean);
  mount(tile,
    parent && h('div', { class: 'parent-ref', text: `↳ ${parent.title}` }),
    // A finished card stays in its list, struck through and dimmed, with a check that is
    // also said (the tile's accessible name starts with its title, then "finished").
    done
      ? h('div', { class: 'card-title-row' },
        h('span', { class: 'done-mark', 'aria-hidden': 'true', text: '✓' }),
        h('span', { class: 'visually-hidden', text: 'Finished: ' }),
        h('div', { class: 'card-title', text: task.title }))
      : h('div', { class: 'card-title', text: task.title }),
    task.tags.length > 0 && h('ul', { class: 'tags', 'aria-label': 'Tags' }, task.tags.map((t) => h('li', { class: classOf(t), text: t }))),
    meta.length > 0 && h('div', { class: 'card-meta' }, meta),
    peek && h('ul', { class: 'subtask-peek', 'aria-label': `Subtasks of ${task.title}` }, peek.map(([id, title, finished, list]) =>
      h('li', { class: finished ? 'done' : null },
        h('button', { type: 'button', class: 'link', tabindex: -1, 'data-open': id },
          h('span', { class: 'peek-mark', 'aria-hidden': 'true', text: finished ? '✓' : '○' }),
          h('span', { class: 'visually-hidden', text: finished ? 'Done: ' : 'Open: ' }),
          title),
        list && h('span', { class: 'muted peek-list', text: `in ${list}` })))));
}
