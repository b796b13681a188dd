// One board: its lists side by side, cards in position order, and the project's and lists'
// own actions. Redrawn from the store on every change; what a person is typing survives a
// redraw (drafts are kept by field, and focus returns to the same field).

import { h, confirmDialog, promptDialog, showError, mount } from './ui.js';

const PRIORITY = { 1: 'P1', 2: 'P2', 3: 'P3' };

export function createBoard(ctx) {
  const { store } = ctx;
  const drafts = new Map(); // focus key -> text typed and not yet saved

  /** A text input whose content survives redraws and failed writes. */
  function draftInput(key, attrs) {
    const input = h('input', { type: 'text', ...attrs, 'data-focus': key, props: { value: drafts.get(key) || '' } });
    input.addEventListener('input', () => drafts.set(key, input.value));
    return input;
  }

  async function run(action) {
    try {
      return await action();
    } catch (err) {
      showError(err);
      return undefined;
    }
  }

  function projectActions(project) {
    const archived = project.archivedAt !== null;
    const pinned = project.pinnedAt !== null;
    return h('div', { class: 'board-actions' },
      h('button', { type: 'button', text: 'Rename', on: { click: async () => {
        const name = await promptDialog('Board name', project.name);
        if (name) run(() => ctx.ops.updateProject(project.id, { name: { before: project.name, after: name } }));
      } } }),
      h('button', { type: 'button', text: project.folder ? `Folder: ${project.folder}` : 'Set folder', on: { click: async () => {
        const folder = await promptDialog('Folder (empty for none)', project.folder || '', { required: false });
        if (folder !== null) run(() => ctx.ops.updateProject(project.id, { folder: { before: project.folder, after: folder || null } }));
      } } }),
      h('button', { type: 'button', text: pinned ? 'Unpin' : 'Pin', 'aria-pressed': String(pinned), on: { click: () =>
        run(() => ctx.ops.updateProject(project.id, { pinnedAt: pinned ? null : Date.now() })) } }),
      h('button', { type: 'button', text: archived ? 'Unarchive' : 'Archive', on: { click: () =>
        run(() => ctx.ops.updateProject(project.id, { archivedAt: archived ? null : Date.now() })) } }),
      h('button', { type: 'button', class: 'danger', text: 'Delete', on: { click: async () => {
        if (await confirmDialog(`Delete the board “${project.name}” with all its lists and cards? It goes to the recycle bin.`)) {
          await run(async () => {
            await ctx.ops.deleteProject(project.id);
            location.hash = '#/';
          });
        }
      } } }));
  }

  function cardTile(task) {
    const done = task.completedAt !== null;
    const parent = task.parentId ? store.tasks.get(task.parentId) : null;
    const subtasks = store.subtasksOf(task.id);
    const checked = task.checklist.filter((k) => k.done).length;
    const meta = [
      PRIORITY[task.priority] && h('span', { class: ['pill', `priority-${task.priority}`], text: PRIORITY[task.priority], title: `Priority ${task.priority}` }),
      task.effort && h('span', { class: 'pill', text: task.effort }),
      (task.deadline || task.deadlineTime) && h('span', { class: 'pill due', text: `Due ${[task.deadline, task.deadlineTime].filter(Boolean).join(' ')}` }),
      task.checklist.length > 0 && h('span', { class: 'pill', text: `☑ ${checked}/${task.checklist.length}`, title: 'Checklist' }),
      subtasks.length > 0 && h('span', { class: 'pill', text: `↳ ${subtasks.filter((s) => s.completedAt !== null).length}/${subtasks.length}`, title: 'Subtasks' }),
      task.comments.length > 0 && h('span', { class: 'pill', text: `${task.comments.length} comment${task.comments.length > 1 ? 's' : ''}` }),
      task.location && h('span', { class: 'pill', text: task.location, title: 'Location' }),
      done && h('span', { class: 'pill done', text: 'Done' }),
    ].filter(Boolean);
    const tile = h('article', {
      class: ['card', done && 'completed', parent && 'subtask'],
      tabindex: 0,
      draggable: 'true',
      'data-id': task.id,
      'data-focus': `card:${task.id}`,
      'aria-label': `${task.title}${done ? ' (done)' : ''}. Enter opens it; Alt and arrow keys move it.`,
    },
    parent && h('div', { class: 'parent-ref', text: `↳ ${parent.title}` }),
    h('div', { class: 'card-title', text: task.title }),
    task.tags.length > 0 && h('ul', { class: 'tags', 'aria-label': 'Tags' }, task.tags.map((t) => h('li', { text: t }))),
    meta.length > 0 && h('div', { class: 'card-meta' }, meta));
    tile.addEventListener('click', () => ctx.openCard(task.id));
    tile.addEventListener('keydown', (event) => {
      if (ctx.moves.cardKey(event, task)) return;
      if (event.key === 'Enter' || event.key === ' ') {
        event.preventDefault();
        ctx.openCard(task.id);
      }
    });
    return tile;
  }

  function addCardForm(column) {
    const key = `add:${column.id}`;
    const input = draftInput(key, { placeholder: 'Add a card…', 'aria-label': `New card in ${column.name}`, maxlength: 250 });
    const form = h('form', { class: 'add-card' }, input, h('button', { type: 'submit', text: 'Add', class: 'small' }));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const title = input.value.trim();
      if (!title) return;
      const created = await run(() => ctx.ops.createTask({ columnId: column.id, title }));
      if (created) {
        drafts.delete(key);
        input.value = '';
      }
    });
    return form;
  }

  function columnView(column) {
    const tasks = store.tasksOf(column.id);
    const head = h('header', { class: 'column-head', draggable: 'true', 'data-id': column.id },
      h('button', { type: 'button', class: 'column-name', 'data-focus': `column:${column.id}`,
        title: 'Rename (Alt+←/→ moves the list)', text: column.name,
        on: {
          click: async () => {
            const name = await promptDialog('List name', column.name);
            if (name) run(() => ctx.ops.updateColumn(column.id, { name: { before: column.name, after: name } }));
          },
          keydown: (event) => ctx.moves.columnKey(event, column),
        } }),
      h('span', { class: 'count', text: String(tasks.length), 'aria-label': `${tasks.length} cards` }),
      h('button', { type: 'button', class: 'small quiet', title: 'Archive list', 'aria-label': `Archive ${column.name}`, text: 'Archive',
        on: { click: () => run(() => ctx.ops.updateColumn(column.id, { archivedAt: Date.now() })) } }),
      h('button', { type: 'button', class: 'icon-button', title: 'Delete list', 'aria-label': `Delete ${column.name}`, text: '×',
        on: { click: async () => {
          if (await confirmDialog(`Delete the list “${column.name}” and its ${tasks.length} cards? It goes to the recycle bin.`)) {
            run(() => ctx.ops.deleteColumn(column.id));
          }
        } } }));
    return h('section', { class: 'column', 'data-id': column.id, 'aria-label': column.name },
      head,
      addCardForm(column),
      h('div', { class: 'card-list', 'data-column': column.id }, tasks.map(cardTile)));
  }

  function addColumnForm(project) {
    const key = `add-column:${project.id}`;
    const input = draftInput(key, { placeholder: 'Add a list…', 'aria-label': 'New list name', maxlength: 40 });
    const form = h('form', { class: 'add-column' }, input, h('button', { type: 'submit', text: 'Add list' }));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const name = input.value.trim();
      if (!name) return;
      const last = store.columnsOf(project.id).at(-1);
      const created = await run(() => ctx.ops.createColumn({ projectId: project.id, name, position: last ? last.position + 1 : 0 }));
      if (created) {
        drafts.delete(key);
        input.value = '';
      }
    });
    return form;
  }

  function archivedColumns(project) {
    const archived = store.columnsOf(project.id, { archived: true });
    if (!archived.length) return null;
    return h('details', { class: 'archived-lists' },
      h('summary', { text: `Archived lists (${archived.length})` }),
      h('ul', {}, archived.map((c) => h('li', {},
        h('span', { text: c.name }),
        h('button', { type: 'button', class: 'small', text: 'Unarchive',
          on: { click: () => run(() => ctx.ops.updateColumn(c.id, { archivedAt: null })) } })))));
  }

  function empty(message) {
    return h('div', { class: 'empty' }, h('p', { text: message }));
  }

  /** Draws the board into `root`, keeping focus and what was being typed. */
  function render(root, projectId) {
    const focused = document.activeElement?.closest?.('[data-focus]')?.dataset.focus;
    const selection = document.activeElement && 'selectionStart' in document.activeElement
      ? [document.activeElement.selectionStart, document.activeElement.selectionEnd] : null;
    const scroll = root.querySelector('.columns')?.scrollLeft || 0;

    const project = projectId && store.projects.get(projectId);
    if (!project) {
      mount(root, empty(store.projects.size
        ? 'Choose a board in the list.'
        : 'No boards yet. Create one in the list of boards.'));
      return;
    }
    const columns = store.columnsOf(project.id);
    mount(root,
      h('div', { class: 'board-head' },
        h('h1', { id: 'board-title', text: project.name }),
        project.archivedAt !== null && h('span', { class: 'badge', text: 'Archived' }),
        projectActions(project)),
      h('div', { class: 'columns' }, columns.map(columnView), h('div', { class: 'column add-column-slot' }, addColumnForm(project))),
      archivedColumns(project));

    const row = root.querySelector('.columns');
    if (row) row.scrollLeft = scroll;
    if (focused) {
      const again = root.querySelector(`[data-focus="${CSS.escape(focused)}"]`);
      if (again) {
        again.focus({ preventScroll: true });
        if (selection && 'setSelectionRange' in again) {
          try {
            again.setSelectionRange(selection[0], selection[1]);
          } catch {
            // not a text field
          }
        }
      }
    }
  }

  return { render };
}
