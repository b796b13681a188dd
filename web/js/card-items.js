// The lists inside a card: tags, checklist (with reorder), subtasks (add, complete, lift)
// and comments. The "add" fields sit outside the redrawn lists, so typing survives updates,
// and they keep their text when a write fails.

import { h, confirmDialog, showError, formatTime, mount } from './ui.js';

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

  /** A one-line form that calls `add(text)` and clears only after it succeeded. */
  function addForm(label, add, { multiline = false, maxlength } = {}) {
    const input = multiline
      ? h('textarea', { rows: 2, 'aria-label': label, placeholder: label, maxlength })
      : h('input', { type: 'text', 'aria-label': label, placeholder: label, maxlength });
    const form = h('div', { class: 'add-item' }, input, h('button', { type: 'button', class: 'small', text: 'Add' }));
    const submit = async () => {
      const text = input.value.trim();
      if (!text) return;
      if (await run(() => add(text))) input.value = '';
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

  // Tags.
  const tagList = h('ul', { class: 'tags editable', 'aria-label': 'Tags' });
  const tags = h('section', { class: 'tags-section' }, h('h3', { text: 'Tags' }), tagList,
    addForm('Add a tag', (text) => ctx.ops.addTag(current(), text), { maxlength: 40 }));
  function drawTags(task) {
    mount(tagList, ...task.tags.map((tag, i) => h('li', {}, tag,
      h('button', { type: 'button', class: 'icon-button', 'aria-label': `Remove tag ${tag}`, text: '×',
        on: { click: () => run(() => ctx.ops.removeTag(current(), i)) } }))));
  }

  // Checklist.
  const checkList = h('ul', { class: 'checklist' });
  const checklist = h('section', {}, h('h3', { text: 'Checklist' }), checkList,
    addForm('Add an item', (text) => ctx.ops.addChecklist(current(), text), { maxlength: 500 }));
  function reorder(task, from, to) {
    const ids = task.checklist.map((k) => k.id);
    const [moved] = ids.splice(from, 1);
    ids.splice(to, 0, moved);
    return run(() => ctx.ops.orderChecklist(task, ids));
  }
  function drawChecklist(task) {
    const items = [...task.checklist].sort((a, b) => a.position - b.position);
    mount(checkList, ...items.map((item, i) => {
      const box = h('input', { type: 'checkbox', 'aria-label': `Done: ${item.text}`, props: { checked: item.done } });
      box.addEventListener('change', () => run(() => ctx.ops.updateChecklist(current(), item.id, { done: box.checked })));
      const text = h('input', { type: 'text', class: 'item-text', maxlength: 500, 'aria-label': 'Checklist item', value: item.text });
      text.addEventListener('change', () => {
        if (text.value.trim()) run(() => ctx.ops.updateChecklist(current(), item.id, { text: text.value.trim() }));
      });
      return h('li', { class: item.done ? 'done' : null }, box, text,
        h('button', { type: 'button', class: 'icon-button', 'aria-label': `Move ${item.text} up`, text: '↑', disabled: i === 0,
          on: { click: () => reorder(current(), i, i - 1) } }),
        h('button', { type: 'button', class: 'icon-button', 'aria-label': `Move ${item.text} down`, text: '↓', disabled: i === items.length - 1,
          on: { click: () => reorder(current(), i, i + 1) } }),
        h('button', { type: 'button', class: 'icon-button', 'aria-label': `Delete ${item.text}`, text: '×',
          on: { click: () => run(() => ctx.ops.deleteChecklist(current(), item.id)) } }));
    }));
  }

  // Subtasks.
  const subList = h('ul', { class: 'subtasks' });
  const subAdd = addForm('Add a subtask', (title) => {
    const task = current();
    return ctx.ops.createTask({ columnId: task.columnId, title, parentId: task.id });
  }, { maxlength: 250 });
  const subHint = h('p', { class: 'muted small-print', text: 'Finished subtasks show when the filter includes finished cards.' });
  const subtasks = h('section', {}, h('h3', { text: 'Subtasks' }), subList, subHint, subAdd);
  function drawSubtasks(task) {
    const isSubtask = task.parentId !== null;
    subtasks.hidden = isSubtask;
    subHint.hidden = store.completed !== 'none';
    mount(subList, ...store.subtasksOf(task.id).map((sub) => {
      const box = h('input', { type: 'checkbox', 'aria-label': `Complete ${sub.title}`, props: { checked: sub.completedAt !== null } });
      box.addEventListener('change', () => run(() => ctx.ops.updateTask(sub.id, { completedAt: box.checked ? Date.now() : null })));
      return h('li', { class: sub.completedAt !== null ? 'done' : null }, box,
        h('button', { type: 'button', class: 'link', text: sub.title, on: { click: () => ctx.openCard(sub.id) } }),
        h('button', { type: 'button', class: 'small', text: 'Lift', title: 'Make it a card of its own',
          on: { click: () => run(() => ctx.ops.updateTask(sub.id, { parentId: null })) } }));
    }));
  }

  // Comments.
  const commentList = h('ul', { class: 'comments' });
  const comments = h('section', {}, h('h3', { text: 'Comments' }), commentList,
    addForm('Write a comment (Ctrl+Enter to add)', (text) => ctx.ops.addComment(current(), text), { multiline: true, maxlength: 16384 }));
  function drawComments(task) {
    mount(commentList, ...task.comments.map((c) => h('li', {},
      h('p', { class: 'comment-text', text: c.text }),
      h('div', { class: 'comment-meta' },
        h('time', { text: formatTime(c.createdAt) }),
        h('button', { type: 'button', class: 'small', text: 'Delete', on: { click: async () => {
          if (await confirmDialog('Delete this comment for good?')) run(() => ctx.ops.deleteComment(current(), c.id));
        } } })))));
  }

  return {
    tags,
    checklist,
    subtasks,
    comments,
    refresh() {
      const task = current();
      if (!task) return;
      // Redraw lists only when nothing inside them has focus, so an item being edited stays.
      const inside = (el) => el.contains(document.activeElement);
      drawTags(task);
      if (!inside(checkList)) drawChecklist(task);
      drawSubtasks(task);
      drawComments(task);
    },
  };
}
