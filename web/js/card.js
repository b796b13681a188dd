// The card editor. Each field saves as a guarded write `{before, after}` where `before` is
// the value this page last saw; a 409 opens the conflict choice instead of overwriting
// another device's edit. Unsaved text is kept per card, so closing the editor, a redraw or a
// failed write never loses what was typed.

import { h, conflictDialog, confirmDialog, showError, toast, mount } from './ui.js';
import { renderMarkdown } from './markdown.js';
import { itemSections } from './card-items.js';

const FIELDS = {
  title: 'Title',
  description: 'Description',
  priority: 'Priority',
  effort: 'Effort',
  deadline: 'Deadline day',
  deadlineTime: 'Deadline time',
  location: 'Location',
};

export function createCardEditor(ctx) {
  const { store } = ctx;
  const dialog = document.getElementById('card-dialog');
  const drafts = new Map(); // task id -> { base: {field: value}, dirty: {field: value}, editing }
  let open = null; // { id, last, els, sections }

  function draftOf(id) {
    if (!drafts.has(id)) drafts.set(id, { base: {}, dirty: {}, editing: false });
    return drafts.get(id);
  }

  const current = () => (open && (store.tasks.get(open.id) || open.last)) || null;

  /** Text of an input for a field value, and back. */
  const shown = (field, v) => (v === null || v === undefined ? '' : String(v));
  const parsed = (field, text) => {
    if (field === 'priority') return Number(text);
    if (field === 'effort' || field === 'deadline' || field === 'deadlineTime') return text === '' ? null : text;
    return text;
  };

  const inflight = new Map(); // "taskId:field" -> value being written

  async function save(field, value, { retry = false } = {}) {
    const task = current();
    const d = draftOf(task.id);
    d.dirty[field] = value;
    const before = field in d.base ? d.base[field] : task[field];
    if (before === value) {
      delete d.dirty[field];
      refresh();
      return true;
    }
    // Enter and then blur both ask to save the same value; write it once.
    const slot = `${task.id}:${field}`;
    if (!retry && inflight.has(slot) && inflight.get(slot) === value) return false;
    inflight.set(slot, value);
    try {
      const reply = await ctx.ops.updateTask(task.id, { [field]: { before, after: value } });
      if (reply && reply.task) open.last = reply.task;
      d.base[field] = reply && reply.task ? reply.task[field] : value;
      delete d.dirty[field];
      refresh();
      return true;
    } catch (err) {
      if (err.isConflict) return resolve(field, value, err.body);
      showError(err);
      refresh();
      return false;
    } finally {
      inflight.delete(slot);
    }
  }

  /** A 409: show both values and let the person choose. */
  async function resolve(field, mine, body) {
    const task = current();
    const d = draftOf(task.id);
    const choice = await conflictDialog(FIELDS[body.field] || body.field, body.field === field ? mine : undefined, body.current);
    if (body.field !== field) {
      // The server named another field of the same request; take its value and retry.
      d.base[body.field] = body.current;
      return save(field, mine, { retry: true });
    }
    if (choice === 'mine') {
      d.base[field] = body.current;
      return save(field, mine, { retry: true });
    }
    if (choice === 'theirs') {
      d.base[field] = body.current;
      delete d.dirty[field];
      // Show theirs now; the change feed brings the whole card (with its new rev) next.
      const held = store.tasks.get(task.id);
      if (held) store.tasks.set(task.id, { ...held, [field]: body.current });
      open.last = { ...open.last, [field]: body.current };
      if (field === 'description') d.editing = false;
    }
    refresh();
    return false;
  }

  function fieldInput(field, el) {
    el.dataset.field = field;
    if (el.tagName === 'INPUT' && el.type === 'text') {
      el.addEventListener('keydown', (event) => {
        if (event.key === 'Enter') {
          event.preventDefault();
          save(field, parsed(field, el.value));
        }
      });
    }
    el.addEventListener('input', () => {
      draftOf(open.id).dirty[field] = parsed(field, el.value);
    });
    el.addEventListener('change', () => save(field, parsed(field, el.value)));
    return el;
  }

  function build(task) {
    const els = {
      title: fieldInput('title', h('input', { type: 'text', class: 'title-input', maxlength: 250, 'aria-label': 'Title', id: 'card-dialog-title' })),
      priority: fieldInput('priority', h('select', { 'aria-label': 'Priority' },
        [1, 2, 3, 4].map((p) => h('option', { value: p, text: `P${p}${p === 1 ? ' (highest)' : p === 4 ? ' (normal)' : ''}` })))),
      effort: fieldInput('effort', h('select', { 'aria-label': 'Effort' },
        h('option', { value: '', text: '—' }), ['easy', 'medium', 'hard'].map((e) => h('option', { value: e, text: e })))),
      deadline: fieldInput('deadline', h('input', { type: 'date', 'aria-label': 'Deadline day' })),
      deadlineTime: fieldInput('deadlineTime', h('input', { type: 'time', 'aria-label': 'Deadline time' })),
      location: fieldInput('location', h('input', { type: 'text', maxlength: 200, 'aria-label': 'Location', placeholder: 'Where' })),
      column: h('select', { 'aria-label': 'List' }),
      description: h('textarea', { class: 'description-input', rows: 10, 'aria-label': 'Description (Markdown)', 'data-field': 'description' }),
      rendered: h('div', { class: 'markdown', 'aria-label': 'Description' }),
      status: h('p', { class: 'card-status' }),
      complete: h('button', { type: 'button', class: 'primary' }),
      unsaved: h('p', { class: 'unsaved-note', role: 'status' }),
      descButtons: h('div', { class: 'actions' }),
    };
    els.description.addEventListener('input', () => {
      draftOf(open.id).dirty.description = els.description.value;
    });
    els.description.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        saveDescription();
      }
    });
    els.column.addEventListener('change', async () => {
      const t = current();
      try {
        await ctx.moves.moveCard(t, els.column.value, 0);
      } finally {
        refresh();
      }
    });
    els.complete.addEventListener('click', async () => {
      const t = current();
      try {
        const reply = await ctx.ops.updateTask(t.id, { completedAt: t.completedAt === null ? Date.now() : null });
        if (reply && reply.task) open.last = reply.task;
      } catch (err) {
        showError(err);
      }
      refresh();
    });
    const sections = itemSections(ctx, () => current(), refresh);

    const row = (label, control) => h('label', { class: 'field' }, h('span', { text: label }), control);
    mount(dialog, h('form', { class: 'card-editor', method: 'dialog', on: { submit: (e) => e.preventDefault() } },
      h('header', { class: 'editor-head' }, els.title,
        h('button', { type: 'button', class: 'icon-button', 'aria-label': 'Close', text: '×', on: { click: () => dialog.close() } })),
      els.status,
      h('div', { class: 'editor-body' },
        h('div', { class: 'editor-main' },
          h('section', { class: 'description' },
            h('h3', { text: 'Description' }), els.rendered, els.description, els.descButtons),
          sections.checklist, sections.subtasks, sections.comments),
        h('aside', { class: 'editor-side' },
          row('List', els.column), row('Priority', els.priority), row('Effort', els.effort),
          row('Deadline day', els.deadline), row('Deadline time', els.deadlineTime), row('Location', els.location),
          sections.tags)),
      els.unsaved,
      h('footer', { class: 'actions' },
        h('button', { type: 'button', class: 'danger', text: 'Delete card', on: { click: remove } }),
        els.complete,
        h('button', { type: 'button', text: 'Close', on: { click: () => dialog.close() } }))));
    return { els, sections };
  }

  async function saveDescription() {
    const value = open.els.description.value;
    if (await save('description', value)) {
      draftOf(open.id).editing = false;
      refresh();
    }
  }

  async function remove() {
    const t = current();
    if (!(await confirmDialog(`Delete “${t.title}”${store.subtasksOf(t.id).length ? ' and its subtasks' : ''}? It goes to the recycle bin.`))) return;
    try {
      await ctx.ops.deleteTask(t.id);
      drafts.delete(t.id);
      dialog.close();
      toast('Card moved to the recycle bin. Undo brings it back.');
    } catch (err) {
      showError(err);
    }
  }

  /** Brings every part of the open editor up to date without touching what is being typed. */
  function refresh() {
    if (!open) return;
    const task = current();
    const d = draftOf(task.id);
    const { els } = open;
    for (const field of Object.keys(FIELDS)) {
      if (!(field in d.dirty)) d.base[field] = task[field];
    }
    for (const field of ['title', 'priority', 'effort', 'deadline', 'deadlineTime', 'location']) {
      const el = els[field];
      const value = field in d.dirty ? d.dirty[field] : task[field];
      if (document.activeElement !== el || !(field in d.dirty)) {
        if (el.value !== shown(field, value)) el.value = shown(field, value);
      }
      el.classList.toggle('unsaved', field in d.dirty);
    }
    mount(els.column, ...store.columnsOf(task.projectId).map((c) =>
      h('option', { value: c.id, text: c.name, selected: c.id === task.columnId })));
    els.column.value = task.columnId;

    const editing = d.editing || 'description' in d.dirty;
    els.rendered.hidden = editing;
    els.description.hidden = !editing;
    if (editing && document.activeElement !== els.description) {
      els.description.value = 'description' in d.dirty ? d.dirty.description : task.description;
    }
    if (!editing) {
      els.rendered.innerHTML = task.description ? renderMarkdown(task.description) : '<p class="muted">No description.</p>';
    }
    mount(els.descButtons, ...(editing
      ? [h('button', { type: 'button', class: 'primary', text: 'Save description', on: { click: saveDescription } }),
        h('button', { type: 'button', text: 'Discard', on: { click: () => { delete d.dirty.description; d.editing = false; refresh(); } } })]
      : [h('button', { type: 'button', text: 'Edit description', on: { click: () => {
        d.editing = true;
        refresh();
        els.description.focus();
      } } })]));

    const done = task.completedAt !== null;
    els.complete.textContent = done ? 'Reopen' : 'Mark complete';
    els.status.textContent = [
      done ? `Completed ${new Date(task.completedAt).toLocaleString()}` : 'Open',
      task.parentId && store.tasks.get(task.parentId) ? `Subtask of “${store.tasks.get(task.parentId).title}”` : '',
      store.tasks.has(task.id) || done ? '' : 'This card is no longer on the board (deleted elsewhere?).',
    ].filter(Boolean).join(' · ');
    const unsaved = Object.keys(d.dirty).filter((f) => f !== 'description' || !editing);
    mount(els.unsaved, ...(unsaved.length
      ? [`Not saved yet: ${unsaved.map((f) => FIELDS[f]).join(', ')}. `,
        h('button', { type: 'button', class: 'small', text: 'Save now', on: { click: () => {
          for (const f of unsaved) save(f, d.dirty[f]);
        } } })]
      : []));
    open.sections.refresh();
  }

  dialog.addEventListener('close', () => {
    open = null;
    ctx.render();
  });
  store.subscribe(() => refresh());

  return {
    open(id) {
      const task = store.tasks.get(id);
      if (!task) return;
      open = { id, last: task };
      Object.assign(open, build(task));
      if (!dialog.open) dialog.showModal();
      refresh();
      open.els.title.focus();
    },
    get openId() {
      return open ? open.id : null;
    },
  };
}
