// The lists inside a card: tags, checklist (reordered by dragging, arrows or Alt+Up/Down,
// shown at once and put back if refused), subtasks (add, complete, lift)
// and comments. Each list is patched by item id, so an item being edited or clicked stays
// put. Each "add" box keeps its unsent text per card (drafts.js) until it is sent or
// cleared, through a failed write, Esc, Close or a reload.

import { h, confirmDialog, showError, formatTime, setText } from './ui.js';
import { reconcile } from './keyed.js';
import { drafts } from './drafts.js';
import { tagClass } from './tags.js';
import { lengthOf } from './rules.js';

export function itemSections(ctx, current, refreshAll) {
  const { store } = ctx;

  async function run(action) {
    try {
      await action();
      return true;
    } catch (err) {
      showError(err);
      return false;
    } finally {
      refreshAll();
    }
  }

  const boxes = []; // [{input, name}]: the add boxes, filled from the open card's drafts

  /**
   * A one-line form that calls `add(text)` and clears only after it succeeded; `limit` names
   * the character limit of its text (rules.js).
   */
  function addForm(name, label, add, { multiline = false, limit } = {}) {
    const input = multiline
      ? h('textarea', { rows: 2, 'aria-label': label, placeholder: label, ...lengthOf(limit) })
      : h('input', { type: 'text', 'aria-label': label, placeholder: label, ...lengthOf(limit) });
    const key = () => `${name}:${current().id}`;
    input.addEventListener('input', () => drafts.set(key(), input.value));
    boxes.push({ input, key });
    const form = h('div', { class: 'add-item' }, input, h('button', { type: 'button', class: 'small', text: 'Add' }));
    const submit = async () => {
      const text = input.value.trim();
      if (!text) return;
      const sentFrom = key();
      if (await run(() => add(text))) {
        // Cleared only if it still holds what was sent: the next entry may be typed while
        // this one's reply is on its way (the item shows at once).
        if (drafts.get(sentFrom).trim() === text) drafts.delete(sentFrom);
        if (key() === sentFrom && input.value.trim() === text) input.value = '';
      }
      // Back to this field for the next entry, unless the user has moved on to another one
      // while the write was under way (their typing must not land here).
      const now = document.activeElement;
      if (!now || now === document.body || form.contains(now)) input.focus();
    };
    form.querySelector('button').addEventListener('click', submit);
    input.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && (!multiline || event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        submit();
      }
    });
    return form;
  }

  /**
   * Deletes an item of a list (its `li`) with `remove()`; the focus, lost with the deleted
   * button, goes to the delete button of the item that takes its place (or the one before),
   * else to the list's Add button: never to a text field, never to the page.
   */
  async function removeFrom(li, remove) {
    const list = li.parentElement;
    const section = li.closest('section');
    const next = li.nextElementSibling || li.previousElementSibling;
    await run(remove);
    const now = document.activeElement;
    if (now && now !== document.body && now.isConnected) return;
    const target = (next?.isConnected && next.querySelector('.item-delete')) || section?.querySelector('.add-item button');
    (target || list).focus();
  }

  // Tags.
  const tagList = h('ul', { class: 'tags editable', 'aria-label': 'Tags' });
  const tags = h('section', { class: 'tags-section' }, h('h3', { text: 'Tags' }), tagList,
    addForm('tag', 'Add a tag', (text) => ctx.actions.addTag(current(), text), { limit: 'tag-chars' }));
  function drawTags(task) {
    reconcile(tagList, task.tags.map((text, i) => ({ text, id: task.tagIds?.[i] || text })), {
      key: (t) => t.id,
      create: (t) => {
        const li = h('li', { class: tagClass(t.text) }, h('span', { text: t.text }),
          h('button', { type: 'button', class: 'icon-button item-delete', 'aria-label': `Remove tag ${t.text}`, text: '×',
            on: { click: () => removeFrom(li, () => ctx.actions.removeTag(current(), current().tags.indexOf(t.text))) } }));
        return li;
      },
      update: () => {},
    });
  }

  // Checklist.
  const checkList = h('ul', { class: 'checklist' });
  const checklist = h('section', { class: 'checklist-section' }, h('h3', { text: 'Checklist' }), checkList,
    addForm('item', 'Add an item', (text) => ctx.actions.addChecklistItem(current(), text), { limit: 'checklist-item-chars' }));
  /**
   * Moves the item at `from` to `to` (an index among the others): shown at once, sent, and
   * put back as it was if the server refuses. The control that had the focus keeps it (or,
   * an arrow that is now off, the other arrow), so Alt+Up pressed twice moves twice.
   */
  async function reorder(task, from, to) {
    const sorted = [...task.checklist].sort((a, b) => a.position - b.position);
    if (from < 0 || to < 0 || to >= sorted.length || to === from) return;
    const ids = sorted.map((k) => k.id);
    const [moved] = ids.splice(from, 1);
    ids.splice(to, 0, moved);
    const focused = document.activeElement;
    const held = store.tasks.get(task.id);
    const show = (checklist) => {
      const now = store.tasks.get(task.id);
      if (now) store.tasks.set(task.id, { ...now, checklist });
      store.changed();
    };
    if (held) show(held.checklist.map((k) => ({ ...k, position: ids.indexOf(k.id) })));
    const regain = () => {
      if (!focused?.isConnected || document.activeElement === focused) return;
      const li = focused.closest('li');
      const target = focused.disabled && li?.parts ? [li.parts.up, li.parts.down].find((b) => !b.disabled) : focused;
      target?.focus();
    };
    regain();
    if (!(await run(() => ctx.actions.orderChecklist(task, ids))) && held) show(held.checklist);
    regain();
  }

  // Dragging an item by its grip (a mouse, a pen or a finger: the grip never scrolls the
  // page) shows a line where it will land; the arrows and Alt+Up/Down do the same by keys.
  function grip(li) {
    const el = h('span', { class: 'item-grip', 'aria-hidden': 'true', text: '⠿', title: 'Drag to reorder' });
    let drag = null; // {pointerId, y, from, to}
    const others = () => [...checkList.children].filter((x) => x !== li);
    const clear = () => {
      for (const x of checkList.querySelectorAll('.drop-before, .drop-after')) x.classList.remove('drop-before', 'drop-after');
      li.classList.remove('dragging');
      li.style.transform = '';
    };
    el.addEventListener('pointerdown', (event) => {
      if ((event.pointerType === 'mouse' && event.button !== 0) || ctx.readOnly(current().projectId)) return;
      event.preventDefault();
      el.setPointerCapture(event.pointerId);
      const from = [...checkList.children].indexOf(li);
      drag = { pointerId: event.pointerId, y: event.clientY, from, to: from };
      li.classList.add('dragging');
    });
    el.addEventListener('pointermove', (event) => {
      if (!drag || event.pointerId !== drag.pointerId) return;
      li.style.transform = `translateY(${event.clientY - drag.y}px)`;
      const rest = others();
      let at = rest.findIndex((x) => {
        const box = x.getBoundingClientRect();
        return event.clientY < box.top + box.height / 2;
      });
      if (at < 0) at = rest.length;
      drag.to = at;
      for (const x of checkList.querySelectorAll('.drop-before, .drop-after')) x.classList.remove('drop-before', 'drop-after');
      if (at !== drag.from) (at < rest.length ? rest[at] : rest.at(-1))?.classList.add(at < rest.length ? 'drop-before' : 'drop-after');
    });
    el.addEventListener('pointerup', (event) => {
      if (!drag || event.pointerId !== drag.pointerId) return;
      const { from, to } = drag;
      drag = null;
      clear();
      reorder(current(), from, to);
    });
    el.addEventListener('pointercancel', () => {
      drag = null;
      clear();
    });
    return el;
  }

  function createItem(item) {
    const box = h('input', { type: 'checkbox' });
    const held = () => current().checklist.find((k) => k.id === item.id) || item;
    box.addEventListener('change', () => run(() => ctx.actions.updateChecklistItem(current(), held(), { done: box.checked })));
    const text = h('input', { type: 'text', class: 'item-text', ...lengthOf('checklist-item-chars'), 'aria-label': 'Checklist item' });
    text.addEventListener('change', () => {
      if (text.value.trim()) run(() => ctx.actions.updateChecklistItem(current(), held(), { text: text.value.trim() }));
    });
    const index = () => [...checkList.children].indexOf(li);
    const up = h('button', { type: 'button', class: 'icon-button', text: '↑', on: { click: () => reorder(current(), index(), index() - 1) } });
    const down = h('button', { type: 'button', class: 'icon-button', text: '↓', on: { click: () => reorder(current(), index(), index() + 1) } });
    // Apart from the arrows (a slip onto it would delete), and undoable from its toast.
    const remove = h('button', { type: 'button', class: 'icon-button item-delete', text: '×',
      on: { click: () => removeFrom(li, () => ctx.actions.removeChecklistItem(current(), held())) } });
    const li = h('li', {}, box, text, up, down, remove);
    li.prepend(grip(li));
    li.parts = { box, text, up, down, remove };
    li.addEventListener('keydown', (event) => {
      if (!event.altKey || (event.key !== 'ArrowUp' && event.key !== 'ArrowDown')) return;
      event.preventDefault();
      event.stopPropagation();
      if (!ctx.readOnly(current().projectId)) reorder(current(), index(), index() + (event.key === 'ArrowUp' ? -1 : 1));
    });
    return li;
  }
  function drawChecklist(task) {
    const items = [...task.checklist].sort((a, b) => a.position - b.position);
    reconcile(checkList, items.map((item, i) => ({ item, i, last: i === items.length - 1 })), {
      key: ({ item }) => item.id,
      create: ({ item }) => createItem(item),
      update: (li, { item, i, last }) => {
        const { box, text, up, down, remove } = li.parts;
        li.classList.toggle('done', item.done);
        box.checked = item.done;
        box.setAttribute('aria-label', `Done: ${item.text}`);
        // What is being typed in an item stays until it is saved.
        if (document.activeElement !== text && text.value !== item.text) text.value = item.text;
        text.setAttribute('value', item.text);
        up.disabled = i === 0;
        down.disabled = last;
        up.setAttribute('aria-label', `Move ${item.text} up`);
        down.setAttribute('aria-label', `Move ${item.text} down`);
        remove.setAttribute('aria-label', `Delete ${item.text}`);
      },
    });
  }

  // Subtasks: all of them, finished ones included (the count reads "1/3").
  const subList = h('ul', { class: 'subtasks' });
  const subCount = h('span', { class: 'count' });
  const subAdd = addForm('subtask', 'Add a subtask', async (title) => {
    const parent = current();
    // Right below its parent (and the subtasks already there), not at the top of the list.
    const position = await ctx.moves.belowParent(parent);
    return ctx.actions.createCard(store.columns.get(parent.columnId) || { id: parent.columnId, name: 'its list' },
      { title, parentId: parent.id, position });
  }, { limit: 'title-chars' });
  const subtasks = h('section', { class: 'subtasks-section' }, h('h3', {}, 'Subtasks ', subCount), subList, subAdd);
  function drawSubtasks(task) {
    subtasks.hidden = task.parentId !== null;
    const subs = store.subtasksOf(task.id);
    const finished = subs.filter((s) => s.completedAt !== null).length;
    setText(subCount, subs.length ? `${finished}/${subs.length}` : '');
    reconcile(subList, subs, {
      key: (s) => s.id,
      create: (sub) => {
        const box = h('input', { type: 'checkbox' });
        box.addEventListener('change', () => {
          const now = store.tasks.get(sub.id);
          run(() => (box.checked ? ctx.actions.complete(now) : ctx.actions.reopen(now)));
        });
        const link = h('button', { type: 'button', class: 'link', on: { click: () => ctx.openCard(sub.id) } });
        const li = h('li', {}, box, link,
          h('button', { type: 'button', class: 'small', text: 'Lift', title: 'Make it a card of its own',
            on: { click: () => run(() => ctx.actions.lift(store.tasks.get(sub.id) || sub)) } }));
        li.parts = { box, link };
        return li;
      },
      update: (li, sub) => {
        const done = sub.completedAt !== null;
        li.classList.toggle('done', done);
        li.parts.box.checked = done;
        li.parts.box.setAttribute('aria-label', `${done ? 'Reopen' : 'Complete'} ${sub.title}`);
        setText(li.parts.link, sub.title);
      },
    });
  }

  // Comments.
  const commentList = h('ul', { class: 'comments' });
  const comments = h('section', { class: 'comments-section' }, h('h3', { text: 'Comments' }), commentList,
    addForm('comment', 'Write a comment (Ctrl+Enter to add)', (text) => ctx.actions.addComment(current(), text), { multiline: true, limit: 'comment-chars' }));
  function drawComments(task) {
    reconcile(commentList, task.comments, {
      key: (c) => c.id,
      create: (c) => h('li', {},
        h('p', { class: 'comment-text', text: c.text }),
        h('div', { class: 'comment-meta' },
          h('time', { text: formatTime(c.createdAt) }),
          h('button', { type: 'button', class: 'small', text: 'Delete', on: { click: async () => {
            if (await confirmDialog('Delete this comment?')) run(() => ctx.actions.deleteComment(current(), c));
          } } }))),
      update: () => {},
    });
  }

  let filledFor = null;
  return {
    tags,
    checklist,
    subtasks,
    comments,
    refresh() {
      const task = current();
      if (!task) return;
      if (filledFor !== task.id) {
        filledFor = task.id;
        for (const { input, key } of boxes) input.value = drafts.get(key());
      }
      drawTags(task);
      drawChecklist(task);
      drawSubtasks(task);
      drawComments(task);
    },
  };
}
