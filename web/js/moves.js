// Where cards and lists go when moved (by drag and drop, the keyboard or the card's Move
// fields): one `position` between the new neighbours, and `columnId` when a card crosses
// lists. The bulk route is used only to spread a list's positions out when two neighbours
// sit too close to split.

import { between } from './store.js';
import { showError } from './ui.js';

export function createMoves(ctx) {
  const { store } = ctx;

  /** A position strictly between `prev` and `next` of a list, spreading the list if needed. */
  async function slot(columnId, prev, next, movingId) {
    let position = between(prev, next);
    const crowded = (prev && position <= prev.position) || (next && position >= next.position);
    if (!crowded) return position;
    await ctx.ops.renumber(store.tasksOf(columnId).filter((t) => t.id !== movingId));
    const fresh = (t) => (t ? store.tasks.get(t.id) : undefined);
    position = between(fresh(prev), fresh(next));
    return position;
  }

  /** Moves a card between two neighbours of `columnId` (either may be missing). */
  async function moveBetween(task, columnId, prev, next) {
    if (prev?.id === task.id || next?.id === task.id) return;
    const position = await slot(columnId, prev, next, task.id);
    const fields = { position };
    if (columnId !== task.columnId) fields.columnId = columnId;
    const before = store.tasks.get(task.id);
    // Shown at once; the write's reply (or its failure) settles it.
    store.tasks.set(task.id, { ...before, ...fields });
    store.changed();
    try {
      await ctx.actions.moveCard(before, fields);
    } catch (err) {
      if (store.tasks.get(task.id)?.position === position) store.tasks.set(task.id, before);
      store.changed();
      showError(err);
    }
  }

  /** Moves a card to `index` among the cards `columnId` shows (without the card itself). */
  function moveCard(task, columnId, index) {
    const others = ctx.board.shownIn(columnId).filter((t) => t.id !== task.id);
    const at = Math.max(0, Math.min(index, others.length));
    return moveBetween(task, columnId, others[at - 1], others[at]);
  }

  /** The position of a new subtask: right below its parent and the subtasks already there. */
  async function belowParent(parent) {
    const list = store.tasksOf(parent.columnId);
    let at = list.findIndex((t) => t.id === parent.id) + 1;
    while (at < list.length && list[at].parentId === parent.id) at += 1;
    return slot(parent.columnId, list[at - 1], list[at], null);
  }

  async function moveColumn(column, index) {
    const others = store.columnsOf(column.projectId).filter((c) => c.id !== column.id);
    const position = between(others[index - 1], others[index]);
    const before = store.columns.get(column.id);
    store.columns.set(column.id, { ...before, position });
    store.changed();
    try {
      await ctx.actions.updateColumn(before, { position });
    } catch (err) {
      store.columns.set(column.id, before);
      store.changed();
      showError(err);
    }
  }

  /** Alt+arrows on a focused card: up and down within its list, left and right across. */
  function cardKey(event, task) {
    if (!event.altKey || !event.key.startsWith('Arrow')) return false;
    event.preventDefault();
    if (ctx.readOnly(task.projectId)) return true; // an archived board moves nothing
    const list = ctx.board.shownIn(task.columnId);
    const index = list.findIndex((t) => t.id === task.id);
    if (event.key === 'ArrowUp' && index > 0) moveCard(task, task.columnId, index - 1);
    else if (event.key === 'ArrowDown' && index < list.length - 1) moveCard(task, task.columnId, index + 1);
    else if (event.key === 'ArrowLeft' || event.key === 'ArrowRight') {
      const columns = store.columnsOf(task.projectId);
      const at = columns.findIndex((c) => c.id === task.columnId);
      const next = columns[at + (event.key === 'ArrowLeft' ? -1 : 1)];
      if (next) moveCard(task, next.id, 0);
    }
    return true;
  }

  /** Alt+Left/Right on a list's name moves the list. */
  function columnKey(event, column) {
    if (!event.altKey || (event.key !== 'ArrowLeft' && event.key !== 'ArrowRight')) return false;
    event.preventDefault();
    if (ctx.readOnly(column.projectId)) return true;
    const columns = store.columnsOf(column.projectId);
    const index = columns.findIndex((c) => c.id === column.id);
    const to = index + (event.key === 'ArrowLeft' ? -1 : 1);
    if (to >= 0 && to < columns.length) moveColumn(column, to);
    return true;
  }

  return { moveCard, moveBetween, moveColumn, belowParent, cardKey, columnKey };
}
