// Moving cards and lists, by drag and drop or by keyboard. A move writes one `position`
// between the new neighbours (and `columnId` when it crosses lists); the bulk route is used
// only to spread positions out when two neighbours sit too close to split.

import { between } from './store.js';
import { showError } from './ui.js';

const CARD = 'application/x-workboard-card';
const COLUMN = 'application/x-workboard-column';

/** Index at which a dragged item lands among `items`, by the pointer's coordinate. */
function dropIndex(items, coordinate, axis) {
  for (let i = 0; i < items.length; i += 1) {
    const box = items[i].getBoundingClientRect();
    const middle = axis === 'y' ? box.top + box.height / 2 : box.left + box.width / 2;
    if (coordinate < middle) return i;
  }
  return items.length;
}

function clearMarks(root) {
  for (const el of root.querySelectorAll('.drop-before, .drop-after, .drop-into')) {
    el.classList.remove('drop-before', 'drop-after', 'drop-into');
  }
}

export function createMoves(ctx) {
  const { store } = ctx;
  let dragging = null; // {kind, id}

  /** Moves a card to `index` among the other cards shown in `columnId`. */
  async function moveCard(task, columnId, index) {
    let others = store.tasksOf(columnId).filter((t) => t.id !== task.id);
    let position = between(others[index - 1], others[index]);
    const crowded = (index > 0 && position <= others[index - 1].position) ||
      (index < others.length && position >= others[index].position);
    if (crowded) {
      await ctx.ops.renumber(others);
      others = store.tasksOf(columnId).filter((t) => t.id !== task.id);
      position = between(others[index - 1], others[index]);
    }
    const fields = { position };
    if (columnId !== task.columnId) fields.columnId = columnId;
    const before = store.tasks.get(task.id);
    store.tasks.set(task.id, { ...before, ...fields });
    store.changed();
    try {
      await ctx.ops.updateTask(task.id, fields);
    } catch (err) {
      if (store.tasks.get(task.id)?.rev === before.rev) store.tasks.set(task.id, before);
      store.changed();
      showError(err);
    }
  }

  async function moveColumn(column, index) {
    const others = store.columnsOf(column.projectId).filter((c) => c.id !== column.id);
    const position = between(others[index - 1], others[index]);
    const before = store.columns.get(column.id);
    store.columns.set(column.id, { ...before, position });
    store.changed();
    try {
      await ctx.ops.updateColumn(column.id, { position });
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
    const list = store.tasksOf(task.columnId);
    const index = list.findIndex((t) => t.id === task.id);
    if (event.key === 'ArrowUp' && index > 0) moveCard(task, task.columnId, index - 1);
    else if (event.key === 'ArrowDown' && index < list.length - 1) moveCard(task, task.columnId, index + 1);
    else {
      const columns = store.columnsOf(task.projectId);
      const at = columns.findIndex((c) => c.id === task.columnId);
      const next = columns[at + (event.key === 'ArrowLeft' ? -1 : event.key === 'ArrowRight' ? 1 : 0)];
      if (next && next.id !== task.columnId) moveCard(task, next.id, 0);
    }
    return true;
  }

  /** Alt+Left/Right on a list's handle moves the list. */
  function columnKey(event, column) {
    if (!event.altKey || (event.key !== 'ArrowLeft' && event.key !== 'ArrowRight')) return false;
    event.preventDefault();
    const columns = store.columnsOf(column.projectId);
    const index = columns.findIndex((c) => c.id === column.id);
    const to = index + (event.key === 'ArrowLeft' ? -1 : 1);
    if (to >= 0 && to < columns.length) moveColumn(column, to);
    return true;
  }

  /** Wires drag and drop on a freshly drawn board. */
  function wire(boardEl) {
    boardEl.addEventListener('dragstart', (event) => {
      const card = event.target.closest?.('.card');
      const handle = event.target.closest?.('.column-head');
      if (card) {
        dragging = { kind: 'card', id: card.dataset.id };
        event.dataTransfer.setData(CARD, card.dataset.id);
        card.classList.add('dragging');
      } else if (handle) {
        dragging = { kind: 'column', id: handle.dataset.id };
        event.dataTransfer.setData(COLUMN, handle.dataset.id);
        handle.closest('.column').classList.add('dragging');
      } else {
        return;
      }
      event.dataTransfer.effectAllowed = 'move';
    });

    boardEl.addEventListener('dragover', (event) => {
      if (!dragging) return;
      clearMarks(boardEl);
      if (dragging.kind === 'card') {
        const list = event.target.closest?.('.card-list');
        if (!list) return;
        event.preventDefault();
        event.dataTransfer.dropEffect = 'move';
        const cards = [...list.querySelectorAll('.card:not(.dragging)')];
        const index = dropIndex(cards, event.clientY, 'y');
        if (index < cards.length) cards[index].classList.add('drop-before');
        else if (cards.length) cards[cards.length - 1].classList.add('drop-after');
        else list.classList.add('drop-into');
      } else {
        const row = event.target.closest?.('.columns');
        if (!row) return;
        event.preventDefault();
        const cols = [...row.querySelectorAll('.column[data-id]:not(.dragging)')];
        const index = dropIndex(cols, event.clientX, 'x');
        if (index < cols.length) cols[index].classList.add('drop-before');
        else if (cols.length) cols[cols.length - 1].classList.add('drop-after');
      }
    });

    boardEl.addEventListener('drop', (event) => {
      if (!dragging) return;
      event.preventDefault();
      clearMarks(boardEl);
      const { kind, id } = dragging;
      if (kind === 'card') {
        const list = event.target.closest?.('.card-list');
        const task = store.tasks.get(id);
        if (!list || !task) return;
        const cards = [...list.querySelectorAll('.card:not(.dragging)')];
        moveCard(task, list.dataset.column, dropIndex(cards, event.clientY, 'y'));
      } else {
        const row = event.target.closest?.('.columns');
        const column = store.columns.get(id);
        if (!row || !column) return;
        const cols = [...row.querySelectorAll('.column[data-id]:not(.dragging)')];
        moveColumn(column, dropIndex(cols, event.clientX, 'x'));
      }
    });

    boardEl.addEventListener('dragend', () => {
      dragging = null;
      clearMarks(boardEl);
      for (const el of boardEl.querySelectorAll('.dragging')) el.classList.remove('dragging');
      ctx.render();
    });
  }

  return {
    moveCard,
    moveColumn,
    cardKey,
    columnKey,
    wire,
    get dragging() {
      return dragging !== null;
    },
  };
}
