// Moving and copying a card to another board (or another list of its own), as Trello's
// "Move" and "Copy" do: a small dialog over the card picks the board, the list and the top
// or bottom of it; a copy can keep or leave the checklist and the tags. Each is one step of
// the page's undo log (undo-log.js): Ctrl+Z, the header's Undo or the toast's Undo moves the
// card back, or puts the copy in the recycle bin.
//
// Subtasks (the server keeps a subtask in its parent's project and refuses a move that
// would split them, 422 on `columnId`): a card moved to another board takes its subtasks
// along, into the same list right below it. That is three kinds of write (each subtask
// leaves its parent as it crosses, the card crosses, each subtask is made its subtask
// again), each guarded by what this page last saw; if one is refused, the ones already made
// are taken back in reverse order and nothing has moved. A subtask moved on its own to
// another board becomes a card of its own there. A copy is always a card of its own,
// without subtasks or comments (a comment copied would be dated now, not when written).

import { h, mount, named, showError, toast } from './ui.js';
import { lengthOf } from './rules.js';

const g = (before, after) => ({ before, after });

export function createTransfer(ctx) {
  const { store } = ctx;
  const dialog = h('dialog', { id: 'transfer-dialog', class: 'ask-dialog transfer-dialog', 'aria-labelledby': 'transfer-title' });
  document.body.append(dialog);

  const boardName = (projectId) => store.projects.get(projectId)?.name || 'a board';
  const where = (columnId) => {
    const column = store.columns.get(columnId);
    return column ? `${boardName(column.projectId)} › ${column.name}` : 'another list';
  };

  /** The positions a card (and `count` cards right below it) take at the top or bottom of a list. */
  function places(columnId, end, count, movingIds) {
    const list = store.tasksOf(columnId).filter((t) => !movingIds.has(t.id));
    if (!list.length) return Array.from({ length: count }, (_, i) => (i + 1) * 1024);
    if (end === 'top') {
      const first = list[0].position;
      return Array.from({ length: count }, (_, i) => first - (count - i) * 1024);
    }
    const last = list.at(-1).position;
    return Array.from({ length: count }, (_, i) => last + (i + 1) * 1024);
  }

  /**
   * Runs `steps` ({run, back}) in order; if one fails, takes back those that landed
   * (newest first) and throws the failure.
   */
  async function inOrder(steps) {
    const landed = [];
    for (const step of steps) {
      try {
        await step.run();
      } catch (err) {
        for (const done of landed.reverse()) {
          try {
            await done.back();
          } catch {
            // Changed since on another device: what can be taken back is.
          }
        }
        throw err;
      }
      landed.push(step);
    }
  }

  /** The writes that take `card` (and `subs`) from where `from` says to where `to` says. */
  function relocation(card, subs, from, to) {
    const update = (id, fields) => ctx.ops.updateTask(id, fields);
    const crossing = store.columns.get(from.columnId)?.projectId !== store.columns.get(to.columnId)?.projectId;
    const steps = [];
    if (crossing) {
      subs.forEach((s, i) => steps.push({
        run: () => update(s.id, { columnId: g(from.subs[i].columnId, to.subs[i].columnId), position: to.subs[i].position, parentId: g(card.id, null) }),
        back: () => update(s.id, { columnId: g(to.subs[i].columnId, from.subs[i].columnId), position: from.subs[i].position, parentId: g(null, card.id) }),
      }));
    }
    const cardFields = (a, b) => {
      const fields = { columnId: g(a.columnId, b.columnId), position: b.position };
      // A subtask moved on its own to another board leaves its parent (the server asks so).
      if (crossing && card.parentId) fields.parentId = g(a.parentId, b.parentId);
      return fields;
    };
    steps.push({ run: () => update(card.id, cardFields(from, to)), back: () => update(card.id, cardFields(to, from)) });
    if (crossing) {
      for (const s of subs) {
        steps.push({ run: () => update(s.id, { parentId: g(null, card.id) }), back: () => update(s.id, { parentId: g(card.id, null) }) });
      }
    }
    return steps;
  }

  async function move(task, columnId, end) {
    const crossing = store.columns.get(columnId)?.projectId !== task.projectId;
    const subs = crossing && !task.parentId ? store.subtasksOf(task.id) : [];
    const moving = new Set([task.id, ...subs.map((s) => s.id)]);
    const [position, ...subPositions] = places(columnId, end, 1 + subs.length, moving);
    const from = { columnId: task.columnId, position: task.position, parentId: task.parentId, subs: subs.map((s) => ({ columnId: s.columnId, position: s.position })) };
    const to = { columnId, position, parentId: crossing ? null : task.parentId, subs: subPositions.map((p) => ({ columnId, position: p })) };
    await inOrder(relocation(task, subs, from, to));
    const along = subs.length ? ` with its ${subs.length === 1 ? 'subtask' : `${subs.length} subtasks`}` : '';
    const label = `Moved ${named(task.title)}${along} to ${where(columnId)}`;
    const entry = ctx.undoLog.record({
      id: task.id,
      subject: named(task.title),
      label,
      reverse: async () => {
        await inOrder(relocation(task, subs, to, from));
        return `Moved ${named(store.tasks.get(task.id)?.title || task.title)} back to ${where(task.columnId)}`;
      },
    });
    return { entry, label, crossing };
  }

  async function copy(task, columnId, end, { title, checklist, tags }) {
    const [position] = places(columnId, end, 1, new Set());
    const fields = {
      columnId, title, position, description: task.description, priority: task.priority, effort: task.effort,
      deadline: task.deadline, deadlineTime: task.deadlineTime, location: task.location,
    };
    if (tags && task.tags.length) fields.tags = [...task.tags];
    let made = await ctx.ops.createTask(fields);
    try {
      if (checklist) {
        for (const item of [...task.checklist].sort((a, b) => a.position - b.position)) {
          const reply = await ctx.ops.addChecklist(store.tasks.get(made.id) || made, item.text, { done: item.done });
          if (reply?.task) made = reply.task;
        }
      }
    } catch (err) {
      // A copy with half its checklist is not what was asked for.
      await ctx.ops.deleteTask(made.id).catch(() => {});
      throw err;
    }
    const label = `Copied ${named(task.title)} to ${where(columnId)}`;
    const entry = ctx.undoLog.record({
      id: made.id,
      subject: named(title),
      label,
      binned: { kind: 'task', label: title },
      reverse: async () => {
        await ctx.ops.deleteTask(made.id);
        return `Took back the copy ${named(title)} (it is in the recycle bin)`;
      },
    });
    return { entry, label, made };
  }

  /** The dialog for `kind` ('move' or 'copy') of `task`; resolves once it is closed. */
  function open(kind, task, { onMoved } = {}) {
    const copying = kind === 'copy';
    const boards = store.projectList().filter((p) => p.archivedAt === null);
    const board = h('select', { 'aria-label': 'Board' }, boards.map((p) => h('option', { value: p.id, text: p.id === task.projectId ? `${p.name} (this board)` : p.name })));
    const list = h('select', { 'aria-label': 'List' });
    const end = h('select', { 'aria-label': 'Position' },
      h('option', { value: 'top', text: 'Top of the list' }), h('option', { value: 'bottom', text: 'Bottom of the list' }));
    const title = h('input', { type: 'text', ...lengthOf('title-chars'), 'aria-label': 'Title of the copy', props: { value: task.title } });
    const keepChecklist = h('input', { type: 'checkbox', props: { checked: true } });
    const keepTags = h('input', { type: 'checkbox', props: { checked: true } });
    const note = h('p', { class: 'hint transfer-note', role: 'status' });
    const error = h('p', { class: 'error', role: 'alert' });
    const submit = h('button', { type: 'submit', class: 'primary', text: copying ? 'Copy card' : 'Move card' });
    const subs = store.subtasksOf(task.id);

    function fillLists() {
      const columns = store.columnsOf(board.value);
      mount(list, columns.map((c) => h('option', { value: c.id, text: c.name })));
      if (board.value === task.projectId) list.value = task.columnId;
      const here = board.value === task.projectId;
      const parent = task.parentId && store.tasks.get(task.parentId);
      note.textContent = copying
        ? [subs.length ? 'The copy has no subtasks; they stay with this card.' : '', task.comments.length ? 'Comments are not copied.' : ''].filter(Boolean).join(' ')
        : !here && subs.length ? `Its ${subs.length === 1 ? 'subtask moves' : `${subs.length} subtasks move`} with it, right below it.`
          : !here && parent ? `It leaves its parent ${named(parent.title)} and becomes a card of its own there.` : '';
      submit.disabled = !columns.length;
      error.textContent = columns.length ? '' : 'That board has no list to put the card in.';
    }
    board.value = task.projectId;
    end.value = 'bottom';
    board.addEventListener('change', fillLists);
    fillLists();

    const field = (label, control) => h('label', { class: 'field' }, h('span', { text: label }), control);
    const check = (control, text) => h('label', { class: 'check' }, control, h('span', { text }));
    const form = h('form', { class: 'ask transfer' },
      h('h2', { id: 'transfer-title', text: copying ? `Copy ${named(task.title)}` : `Move ${named(task.title)}` }),
      copying && field('Title', title),
      field('Board', board), field('List', list), field('Position', end),
      copying && h('fieldset', { class: 'keep' }, h('legend', { text: 'Keep' }),
        check(keepChecklist, `Checklist (${task.checklist.length})`), check(keepTags, `Tags (${task.tags.length})`)),
      note, error,
      h('div', { class: 'actions' }, h('button', { type: 'button', text: 'Cancel', on: { click: () => dialog.close() } }), submit));
    let busy = false;
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      if (busy || !list.value) return;
      const now = store.tasks.get(task.id) || task;
      const name = title.value.trim();
      if (copying && !name) {
        error.textContent = 'The copy needs a title.';
        return title.focus();
      }
      busy = true;
      submit.disabled = true;
      try {
        if (copying) {
          const { entry, label, made } = await copy(now, list.value, end.value, { title: name, checklist: keepChecklist.checked, tags: keepTags.checked });
          dialog.close();
          toast(`${label}.`, { actions: [{ label: 'Undo', run: () => ctx.undoLog.takeBack(entry) },
            { label: 'Open the copy', run: () => ctx.openAt(made.projectId, made) }] });
        } else if (list.value === now.columnId && store.tasksOf(list.value).at(end.value === 'top' ? 0 : -1)?.id === now.id) {
          dialog.close(); // already there: nothing to write
        } else {
          const { entry, label, crossing } = await move(now, list.value, end.value);
          dialog.close();
          onMoved?.(crossing);
          toast(`${label}.`, { actions: [{ label: 'Undo', run: () => ctx.undoLog.takeBack(entry) },
            crossing && { label: 'Go to it', run: () => ctx.openAt(store.tasks.get(now.id)?.projectId || board.value, store.tasks.get(now.id) || now) }].filter(Boolean) });
        }
      } catch (err) {
        error.textContent = err.status === 409
          ? `${named(now.title)} was changed on another device meanwhile; nothing was ${copying ? 'copied' : 'moved'}. Close this and look again.`
          : err.message;
        if (err.status !== 409 && err.status !== 422) showError(err);
      } finally {
        busy = false;
        submit.disabled = false;
      }
    });
    mount(dialog, form);
    return new Promise((resolve) => {
      dialog.addEventListener('close', () => resolve(), { once: true });
      dialog.showModal();
      // The board first (a tap never raises a phone's keyboard); the copy's title is a Tab back.
      board.focus();
    });
  }

  return { open };
}
