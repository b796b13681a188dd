// The card editor. Each field saves as a guarded write `{before, after}` where `before` is
// the value this page last saw; a 409 opens the conflict choice instead of overwriting
// another device's edit. The editor is built once per opening and then patched (no button
// is ever replaced under a click), and unsaved text is kept per card (drafts.js), so closing
// the editor (Esc, Close, a click outside), a change from elsewhere or a failed write never
// loses what was typed.

import { h, conflictDialog, confirmDialog, showError, mount, setText } from './ui.js';
import { renderMarkdown } from './markdown.js';
import { itemSections } from './card-items.js';
import { drafts } from './drafts.js';
import { createTransfer } from './transfer.js';
import { repeatField, sameRepeat } from './repeat.js';
import { EFFORTS, PRIORITIES, effortLabel, fieldLabel, lengthOf, priorityChoice } from './rules.js';

/** The card's own fields the editor writes, each a guarded write of its own. */
const FIELDS = ['title', 'description', 'priority', 'effort', 'deadline', 'deadlineTime', 'location', 'repeat'];

/** The Position picker's label of place `i` in a list whose bottom place is `last`. */
const placeText = (i, last) => (i === 0 ? '1 (top)' : i === last ? `${i + 1} (bottom)` : String(i + 1));

export function createCardEditor(ctx) {
  const { store } = ctx;
  const dialog = document.getElementById('card-dialog');
  const states = new Map(); // task id -> { base: {field: value}, dirty: {field: value}, editing }
  let open = null; // { id, last, els, sections, rendered }
  let settling = null; // the timer that lets the dialog take touches again after a tap opened it
  const transfer = createTransfer(ctx);

  /** Move or Copy to a board and list (transfer.js); a card moved off this board closes. */
  function transferCard(kind) {
    const t = current();
    const land = ctx.nav.landAfter(t);
    return transfer.open(kind, t, { onMoved: (crossing) => {
      if (!crossing) return;
      dialog.close();
      // The card's tile left this board before the reply (the page shows a write at once),
      // so the focus has nowhere to go back to: it must not stay in the closed dialog.
      if (dialog.contains(document.activeElement)) document.activeElement.blur();
      land();
    } });
  }

  function draftOf(id) {
    if (!states.has(id)) states.set(id, { base: {}, dirty: drafts.get(`fields:${id}`, null) || {}, editing: false });
    return states.get(id);
  }
  const keep = (id) => {
    const d = draftOf(id);
    drafts.set(`fields:${id}`, Object.keys(d.dirty).length ? { ...d.dirty } : undefined);
  };

  const current = () => (open && (store.tasks.get(open.id) || open.last)) || null;

  /** Text of an input for a field value, and back. */
  const shown = (v) => (v === null || v === undefined ? '' : String(v));
  const parsed = (field, text) => {
    if (field === 'priority') return Number(text);
    if (field === 'effort' || field === 'deadline' || field === 'deadlineTime') return text === '' ? null : text;
    return text;
  };

  const inflight = new Map(); // "taskId:field" -> value being written

  /** `shownAt`: the control that says a refusal of this field itself (else a toast). */
  async function save(field, value, { retry = false, shownAt = null } = {}) {
    const task = current();
    const d = draftOf(task.id);
    d.dirty[field] = value;
    keep(task.id);
    if (field === 'title' && !String(value).trim()) {
      // Said once, beside the field, instead of a refused write per Enter and blur.
      open.els.titleError.textContent = 'A card needs a title; the old one stays until you type a new one.';
      return false;
    }
    if (field === 'title') open.els.titleError.textContent = '';
    const before = field in d.base ? d.base[field] : task[field];
    if (before === value || (field === 'repeat' && sameRepeat(before, value))) {
      delete d.dirty[field];
      keep(task.id);
      refresh();
      return true;
    }
    // Enter and then blur both ask to save the same value; write it once.
    const slot = `${task.id}:${field}`;
    if (!retry && inflight.has(slot) && inflight.get(slot) === value) return false;
    inflight.set(slot, value);
    try {
      const reply = await ctx.ops.updateTask(task.id, { [field]: { before, after: value } });
      if (reply && reply.task && open && open.id === task.id) open.last = reply.task;
      const after = reply && reply.task ? reply.task[field] : value;
      d.base[field] = after;
      delete d.dirty[field];
      keep(task.id);
      ctx.actions.recordEdit(task, field, before, after);
      shownAt?.error(null);
      refresh();
      return true;
    } catch (err) {
      if (err.isConflict) return resolve(field, value, err.body);
      if (shownAt && err.status === 422) shownAt.error(err);
      else showError(err);
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
    const choice = await conflictDialog(fieldLabel(body.field), body.field === field ? mine : undefined, body.current);
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
      keep(task.id);
      // Show theirs now; the change feed brings the whole card (with its new rev) next.
      const held = store.tasks.get(task.id);
      if (held) store.tasks.set(task.id, { ...held, [field]: body.current });
      if (open) open.last = { ...open.last, [field]: body.current };
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
      keep(open.id);
    });
    el.addEventListener('change', () => save(field, parsed(field, el.value)));
    return el;
  }

  /** The List and Position pickers: the way to move a card without dragging it. */
  async function moveTo(columnId, index) {
    const t = current();
    try {
      await ctx.moves.moveCard(t, columnId, index);
    } finally {
      refresh();
    }
  }

  function build() {
    const els = {
      title: fieldInput('title', h('input', { type: 'text', class: 'title-input', ...lengthOf('title-chars'), 'aria-label': 'Title', id: 'card-dialog-title', 'aria-describedby': 'card-title-error' })),
      titleError: h('p', { class: 'error field-error', id: 'card-title-error', role: 'status' }),
      priority: fieldInput('priority', h('select', { 'aria-label': 'Priority' },
        PRIORITIES.map((p) => h('option', { value: p, text: priorityChoice(p) })))),
      effort: fieldInput('effort', h('select', { 'aria-label': 'Effort' },
        h('option', { value: '', text: '—' }), EFFORTS.map((e) => h('option', { value: e, text: effortLabel(e) })))),
      deadline: fieldInput('deadline', h('input', { type: 'date', 'aria-label': 'Deadline day' })),
      deadlineTime: fieldInput('deadlineTime', h('input', { type: 'time', 'aria-label': 'Deadline time' })),
      location: fieldInput('location', h('input', { type: 'text', ...lengthOf('location-chars'), 'aria-label': 'Location', placeholder: 'Where' })),
      repeat: repeatField({ save: (value) => save('repeat', value, { shownAt: open.els.repeat }), task: () => current() }),
      column: h('select', { 'aria-label': 'List' }),
      place: h('select', { 'aria-label': 'Position in the list' }),
      description: h('textarea', { class: 'description-input', rows: 10, 'aria-label': 'Description (Markdown)', 'data-field': 'description' }),
      rendered: h('div', { class: 'markdown', 'aria-label': 'Description' }),
      status: h('p', { class: 'card-status' }),
      complete: h('button', { type: 'button', class: 'primary' }),
      unsavedText: h('span'),
      saveNow: h('button', { type: 'button', class: 'small', text: 'Save now' }),
      edit: h('button', { type: 'button', text: 'Edit description' }),
      saveDescription: h('button', { type: 'button', class: 'primary', text: 'Save description' }),
      discard: h('button', { type: 'button', text: 'Discard' }),
      close: h('button', { type: 'button', class: 'icon-button', 'aria-label': 'Close', text: '×', 'data-keep': '', on: { click: () => dialog.close() } }),
    };
    els.unsaved = h('p', { class: 'unsaved-note', role: 'status' }, els.unsavedText, els.saveNow);
    els.description.addEventListener('input', () => {
      draftOf(open.id).dirty.description = els.description.value;
      keep(open.id);
    });
    els.description.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        saveDescription();
      }
    });
    els.edit.addEventListener('click', () => {
      draftOf(open.id).editing = true;
      refresh();
      els.description.focus();
    });
    els.saveDescription.addEventListener('click', saveDescription);
    els.discard.addEventListener('click', () => {
      const d = draftOf(open.id);
      delete d.dirty.description;
      keep(open.id);
      d.editing = false;
      refresh();
    });
    els.saveNow.addEventListener('click', () => {
      const d = draftOf(open.id);
      for (const f of Object.keys(d.dirty)) save(f, d.dirty[f]);
    });
    // A new list puts the card at its end; the position picker places it anywhere.
    els.column.addEventListener('change', () => moveTo(els.column.value, Infinity));
    els.place.addEventListener('change', () => moveTo(current().columnId, Number(els.place.value)));
    // Every place is offered once the picker is about to be used (focus comes before a
    // pointer opens it, and before a key changes it).
    const fillPlaces = () => {
      const places = open && open.places;
      if (!places || places.full) return;
      places.full = true;
      const value = els.place.value;
      const all = document.createDocumentFragment();
      for (let i = 0; i <= places.last; i += 1) all.append(new Option(placeText(i, places.last), String(i)));
      els.place.replaceChildren(all);
      els.place.value = value;
    };
    els.place.addEventListener('focus', fillPlaces);
    els.place.addEventListener('pointerdown', fillPlaces);
    els.complete.addEventListener('click', async () => {
      const t = current();
      try {
        if (t.completedAt === null) {
          const land = ctx.nav.landAfter(t);
          await ctx.actions.complete(t);
          // The card may leave the board; the toast offers Undo, and the focus goes to the
          // card, or the next one in its list.
          dialog.close();
          land();
          return;
        }
        await ctx.actions.reopen(t);
      } catch (err) {
        showError(err);
      }
      refresh();
    });
    const sections = itemSections(ctx, () => current(), refresh);

    const row = (label, control) => h('label', { class: 'field' }, h('span', { text: label }), control);
    // The side fields come first in the page's order: a phone shows them first, and a wide
    // screen puts them in the right-hand column.
    mount(dialog, h('form', { class: 'card-editor', method: 'dialog', on: { submit: (e) => e.preventDefault() } },
      h('header', { class: 'editor-head' }, els.title, els.close),
      els.titleError,
      els.status,
      h('div', { class: 'editor-body' },
        h('div', { class: 'editor-side' },
          h('div', { class: 'side-fields' },
            row('List', els.column), row('Position', els.place), row('Priority', els.priority), row('Effort', els.effort),
            row('Deadline day', els.deadline), row('Deadline time', els.deadlineTime), row('Location', els.location), els.repeat.el),
          h('div', { class: 'actions transfer-actions' },
            h('button', { type: 'button', text: 'Move…', title: 'Move to another board or list', on: { click: () => transferCard('move') } }),
            h('button', { type: 'button', text: 'Copy…', title: 'Copy to this or another board', on: { click: () => transferCard('copy') } })),
          sections.tags),
        h('div', { class: 'editor-main' },
          h('section', { class: 'description' },
            h('h3', { text: 'Description' }), els.rendered, els.description,
            h('div', { class: 'actions' }, els.edit, els.saveDescription, els.discard)),
          sections.checklist, sections.subtasks, sections.comments)),
      els.unsaved,
      h('footer', { class: 'actions' },
        h('button', { type: 'button', class: 'danger', text: 'Delete card', on: { click: remove } }),
        els.complete,
        h('button', { type: 'button', text: 'Close', 'data-keep': '', on: { click: () => dialog.close() } }))));
    return { els, sections, rendered: null, columnsSig: null, placeSig: null, fillPlaces };
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
      const land = ctx.nav.landAfter(t);
      await ctx.actions.deleteCard(t);
      states.delete(t.id);
      drafts.delete(`fields:${t.id}`);
      dialog.close();
      land();
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
    for (const field of FIELDS) {
      if (!(field in d.dirty)) d.base[field] = task[field];
    }
    for (const field of ['title', 'priority', 'effort', 'deadline', 'deadlineTime', 'location']) {
      const el = els[field];
      const value = field in d.dirty ? d.dirty[field] : task[field];
      if (document.activeElement !== el || !(field in d.dirty)) {
        if (el.value !== shown(value)) el.value = shown(value);
      }
      el.classList.toggle('unsaved', field in d.dirty);
    }
    els.repeat.update('repeat' in d.dirty ? d.dirty.repeat : task.repeat);

    const columns = store.columnsOf(task.projectId);
    const columnsSig = JSON.stringify(columns.map((c) => [c.id, c.name]));
    if (open.columnsSig !== columnsSig) {
      open.columnsSig = columnsSig;
      mount(els.column, columns.map((c) => h('option', { value: c.id, text: c.name })));
    }
    if (els.column.value !== task.columnId) els.column.value = task.columnId;
    const here = ctx.board.shownIn(task.columnId);
    const at = here.findIndex((t) => t.id === task.id);
    const last = here.length - (at >= 0 ? 1 : 0); // the index of the bottom place
    const placeSig = `${task.columnId}:${last}:${at}`;
    if (open.placeSig !== placeSig) {
      // A long list offers only the card's own place until the picker is used (fillPlaces):
      // it would otherwise build hundreds of options on every opening and every change.
      open.placeSig = placeSig;
      open.places = { last, full: false };
      const index = at >= 0 ? at : last;
      mount(els.place, new Option(placeText(index, last), String(index)));
      els.place.value = String(index);
      if (last < 50) open.fillPlaces();
    }

    const editing = d.editing || 'description' in d.dirty;
    els.rendered.hidden = editing;
    els.description.hidden = !editing;
    els.edit.hidden = editing;
    els.saveDescription.hidden = !editing;
    els.discard.hidden = !editing;
    if (editing && document.activeElement !== els.description) {
      const text = 'description' in d.dirty ? d.dirty.description : task.description;
      if (els.description.value !== text) els.description.value = text;
    }
    if (!editing && open.rendered !== task.description) {
      open.rendered = task.description;
      els.rendered.innerHTML = task.description ? renderMarkdown(task.description) : '<p class="muted">No description.</p>';
    }

    const done = task.completedAt !== null;
    setText(els.complete, done ? 'Reopen' : 'Mark complete');
    setText(els.status, [
      done ? `Completed ${new Date(task.completedAt).toLocaleString()}` : 'Open',
      task.parentId && store.tasks.get(task.parentId) ? `Subtask of “${store.tasks.get(task.parentId).title}”` : '',
      store.tasks.has(task.id) ? '' : 'This card is no longer on the board (deleted elsewhere?).',
      ctx.readOnly(task.projectId) ? 'Its board is archived: restore the board to change it.' : '',
    ].filter(Boolean).join(' · '));
    const unsaved = Object.keys(d.dirty).filter((f) => f !== 'description' || !editing);
    setText(els.unsavedText, unsaved.length ? `Not saved yet: ${unsaved.map(fieldLabel).join(', ')}. ` : '');
    els.unsaved.hidden = !unsaved.length;
    open.sections.refresh();
    lock(ctx.readOnly(task.projectId));
  }

  /** On an archived board the card can be read, not changed: every control but Close is off. */
  function lock(readOnly) {
    dialog.classList.toggle('read-only', readOnly);
    if (readOnly) {
      for (const el of dialog.querySelectorAll('input, select, textarea, button:not([data-keep])')) {
        if (!el.disabled) {
          el.disabled = true;
          el.dataset.locked = '';
        }
      }
    } else {
      for (const el of dialog.querySelectorAll('[data-locked]')) {
        el.disabled = false;
        delete el.dataset.locked;
      }
    }
  }

  // A click on the backdrop (outside the editor's box) closes it, as Esc and Close do;
  // what was typed stays as a draft. A press that began inside (selecting text) does not.
  let pressedOutside = false;
  dialog.addEventListener('pointerdown', (event) => {
    pressedOutside = event.target === dialog;
  });
  dialog.addEventListener('click', (event) => {
    if (event.target === dialog && pressedOutside) dialog.close();
    pressedOutside = false;
  });
  // A mouse double-click on a tile: its first click opens the card, and the second press of
  // the same double-click lands on the dialog (a select would open, a checkbox flip, the
  // backdrop close it). The browser counts that press on from the first (`detail` 2), while
  // a press begun in the dialog counts from 1: so the one is dropped, never the person's own.
  let clickOpened = false;
  for (const type of ['mousedown', 'mouseup', 'click', 'dblclick']) {
    dialog.addEventListener(type, (event) => {
      if (type === 'mousedown' && event.detail === 1) clickOpened = false;
      if (clickOpened && event.detail >= 2) {
        event.preventDefault();
        event.stopImmediatePropagation();
      }
    }, true);
  }
  dialog.addEventListener('close', () => {
    open = null;
    delete dialog.dataset.cardId;
    clickOpened = false;
    ctx.render();
  });
  store.subscribe(() => refresh());

  return {
    /**
     * Opens a card. `pointer` is the kind of pointer that tapped it: a finger (or a pen)
     * gets the focus on Close, not in the title, so that a tap never raises a phone's
     * keyboard; and for a moment the dialog takes no touch, so that a second tap (a double
     * tap) does not land on whatever control opened under it; a mouse's double-click is
     * taken apart by its click count instead (above).
     */
    open(id, { pointer } = {}) {
      const task = store.tasks.get(id);
      if (!task) return;
      open = { id, last: task };
      // Which card is open, for the "not sent yet" mark (offline.js).
      dialog.dataset.cardId = id;
      Object.assign(open, build());
      const touch = Boolean(pointer) && pointer !== 'mouse';
      // On an archived board the title cannot take the focus (it is off): Close takes it.
      const onClose = touch || ctx.readOnly(task.projectId);
      // showModal() focuses the first control it finds (the title) unless one says otherwise.
      open.els.close.autofocus = onClose;
      clickOpened = pointer === 'mouse';
      if (!dialog.open) dialog.showModal();
      refresh();
      (onClose ? open.els.close : open.els.title).focus();
      if (touch) {
        dialog.classList.add('settling');
        clearTimeout(settling);
        settling = setTimeout(() => dialog.classList.remove('settling'), 400);
      }
    },
    get openId() {
      return open ? open.id : null;
    },
  };
}
