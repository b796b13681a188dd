// One board: its lists side by side, cards in position order (narrowed by the filter bar),
// and the board's and lists' own actions. The board is built once and patched on every
// change, keyed by list and card id (keyed.js), so a list keeps its scroll position, the
// focused element its focus, and a click in progress completes. A tile is drawn again only
// when its card changed (tile.js), and a long list only draws the cards near its visible
// part (virtual.js), so a change costs about the same on a board of 50 cards or 5,000.

import { h, confirmDialog, promptDialog, showError, mount, setText, setAttr, disclosure, announce } from './ui.js';
import { lengthOf, limit } from './rules.js';
import { reconcile } from './keyed.js';
import { createTile, updateTile } from './tile.js';
import { drawCards, settle, windowKey } from './virtual.js';
import { finishedShown, matcher, narrowing } from './filters.js';
import { draftBox, drafts } from './drafts.js';
import { dueState } from './due.js';

/** A board's photo if it is an image data URL of a type the interface takes, else null. */
export function photoOf(project) {
  const photo = project && project.photo;
  return typeof photo === 'string' && /^data:image\/(png|jpeg|webp);base64,/.test(photo) ? photo : null;
}

const NO_CARDS = [];

export function createBoard(ctx) {
  const { store } = ctx;
  let view = null; // the board being shown: its elements, and what each list shows
  const expanded = new Set(); // parents whose subtasks are shown together on their tile

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
    const restore = h('button', { type: 'button', text: archived ? 'Restore' : 'Archive', on: { click: () =>
      run(() => ctx.actions.updateProject(project, { archivedAt: archived ? null : Date.now() })) } });
    const remove = h('button', { type: 'button', class: 'danger', text: 'Delete', on: { click: async () => {
      if (await confirmDialog(`Delete the board “${project.name}” with all its lists and cards? It goes to the recycle bin.`)) {
        await run(async () => {
          await ctx.actions.deleteProject(project);
          location.hash = '#/';
        });
      }
    } } });
    // An archived board is read-only until restored: restoring and deleting are all it offers.
    if (archived) return [restore, remove];
    return [
      h('button', { type: 'button', text: 'Rename', on: { click: async () => {
        const name = await promptDialog('Board name', project.name, { maxlength: limit('name-chars') });
        if (name) run(() => ctx.actions.updateProject(project, { name }));
      } } }),
      h('button', { type: 'button', text: project.folder ? `Folder: ${project.folder}` : 'Set folder', on: { click: async () => {
        const folder = await promptDialog('Folder (empty for none)', project.folder || '', { required: false, maxlength: limit('folder-chars') });
        if (folder !== null) run(() => ctx.actions.updateProject(project, { folder: folder || null }));
      } } }),
      h('button', { type: 'button', text: pinned ? 'Unpin' : 'Pin', 'aria-pressed': String(pinned), on: { click: () =>
        run(() => ctx.actions.updateProject(project, { pinnedAt: pinned ? null : Date.now() })) } }),
      restore,
      remove,
    ];
  }

  function addCardForm(column) {
    const key = `add:${column.id}`;
    const input = draftBox(h('input', { type: 'text', placeholder: 'Add a card…', 'aria-label': `New card in ${column.name}`, ...lengthOf('title-chars'), 'aria-keyshortcuts': 'n' }), key);
    // Enter adds; the button is for pointers, so it is no Tab stop of its own.
    const form = h('form', { class: 'add-card' }, input, h('button', { type: 'submit', text: 'Add', class: 'small', tabindex: -1 }));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const title = input.value.trim();
      if (!title) return;
      const created = await run(() => ctx.actions.createCard(store.columns.get(column.id), { title }));
      if (created) {
        drafts.delete(key);
        input.value = '';
      }
    });
    return form;
  }

  function createColumn(column) {
    const name = h('button', { type: 'button', class: 'column-name', id: `list-${column.id}`,
      title: 'Rename (Alt+←/→ moves the list)',
      on: {
        click: async () => {
          const current = store.columns.get(column.id);
          if (ctx.readOnly(current.projectId)) return;
          const next = await promptDialog('List name', current.name, { maxlength: limit('name-chars') });
          if (next) run(() => ctx.actions.updateColumn(current, { name: next }));
        },
        keydown: (event) => ctx.moves.columnKey(event, store.columns.get(column.id)),
      } });
    const count = h('span', { class: 'count' });
    const menuButton = h('button', { type: 'button', class: 'icon-button list-menu-toggle', 'aria-haspopup': 'true', 'aria-expanded': 'false', text: '⋯' });
    const menu = h('div', { class: 'menu list-menu' },
      h('button', { type: 'button', text: 'Edit list description', on: { click: async () => {
        const current = store.columns.get(column.id);
        const next = await promptDialog('List description (empty for none)', current.description || '', { required: false, maxlength: limit('column-description-chars') });
        if (next !== null && next !== (current.description || '')) run(() => ctx.actions.updateColumn(current, { description: next }));
      } } }),
      h('button', { type: 'button', text: 'Archive list', on: { click: () => run(() => ctx.actions.archiveColumn(store.columns.get(column.id))) } }),
      h('button', { type: 'button', class: 'danger', text: 'Delete list', on: { click: async () => {
        const current = store.columns.get(column.id);
        const cards = store.tasksOf(column.id).length;
        if (await confirmDialog(`Delete the list “${current.name}” and its ${cards} cards? It goes to the recycle bin.`)) {
          run(() => ctx.actions.deleteColumn(current));
        }
      } } }));
    disclosure(menuButton, menu);
    const head = h('header', { class: 'column-head', 'data-id': column.id }, name, count, menuButton, menu);
    // The list's own description (what belongs here, a policy), under its name.
    const description = h('p', { class: 'column-description', id: `list-description-${column.id}`, hidden: true });
    const list = h('div', { class: 'card-list', 'data-column': column.id });
    const empty = h('p', { class: 'list-empty', text: 'No cards yet. Add one above, or drop a card here.' });
    list.append(empty);
    const section = h('section', { class: 'column', 'data-id': column.id, 'aria-labelledby': `list-${column.id}` },
      head, description, addCardForm(column), list);
    section.parts = { name, count, menuButton, list, empty, description, input: section.querySelector('.add-card input') };
    return section;
  }

  function updateColumn(section, { column, shown, total, index }, context) {
    const { parts } = section;
    setText(parts.name, column.name);
    const about = (column.description || '').trim();
    setText(parts.description, about);
    parts.description.hidden = !about;
    setAttr(section, 'aria-describedby', about ? parts.description.id : null);
    setAttr(parts.menuButton, 'aria-label', `Actions of the list ${column.name}`);
    setAttr(parts.input, 'aria-label', `New card in ${column.name}`);
    // Cards the filters hide (the finished-cards window included) are counted, so a list
    // never looks emptier than it is without saying why.
    const hidden = total - shown.length;
    setText(parts.count, hidden ? `${shown.length} · ${hidden} hidden` : String(shown.length));
    setAttr(parts.count, 'aria-label', hidden
      ? `${shown.length} card${shown.length === 1 ? '' : 's'} shown, ${hidden} hidden by the filters`
      : `${shown.length} card${shown.length === 1 ? '' : 's'}`);
    parts.empty.hidden = shown.length > 0;
    parts.empty.textContent = total ? 'No card here matches the filters.' : 'No cards yet. Add one above, or drop a card here.';
    // A long list draws only the cards in and near its visible part (virtual.js).
    drawCards(parts.list, shown, {
      key: (t) => t.id,
      create: createTile,
      update: (tile, task) => updateTile(tile, task, {
        parent: task.parentId ? store.tasks.get(task.parentId) : null,
        subtasks: context.subtasks.get(task.id) || NO_CARDS,
        expanded: expanded.has(task.id),
        columnName: (id) => store.columns.get(id)?.name || 'another list',
        now: context.now,
      }),
      anchor: parts.empty,
      pinned: context.pinned,
      place: index,
      // Cards drawn by scrolling take part in the lists' Tab stops too.
      onScrollDrawn: () => view && ctx.nav.afterRender(view.columns),
    });
  }

  function addColumnForm(project) {
    const key = `add-column:${project.id}`;
    const input = draftBox(h('input', { type: 'text', placeholder: 'Add a list…', 'aria-label': 'New list name', ...lengthOf('name-chars') }), key);
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
    if (!archived.length) return [];
    return [h('summary', { text: `Archived lists (${archived.length})` }),
      h('ul', {}, archived.map((c) => h('li', {},
        h('span', { text: c.name }),
        h('button', { type: 'button', class: 'small', text: 'Unarchive',
          on: { click: () => run(() => ctx.actions.updateColumn(c, { archivedAt: null })) } }))))];
  }

  /** The board's frame, made once per board shown. */
  function build(root, project) {
    // Focusable from script: choosing a board puts the focus here (not on the page).
    const title = h('h1', { id: 'board-title', tabindex: -1 });
    // The board's photo beside its name (decorative: the name says which board it is).
    const photo = h('img', { class: 'board-photo', alt: '', hidden: true });
    const badge = h('span', { class: 'badge', text: 'Archived' });
    const actions = h('div', { class: 'board-actions menu-panel', id: 'board-actions' });
    const actionsToggle = h('button', { type: 'button', class: 'board-actions-toggle icon-button', 'aria-controls': 'board-actions',
      'aria-expanded': 'false', 'aria-label': 'Board actions', text: '⋯' });
    disclosure(actionsToggle, actions);
    const notice = h('p', { class: 'filter-notice', role: 'status' });
    // An archived board says so above its lists, with the way back.
    const banner = h('div', { class: 'archived-banner', role: 'status', hidden: true },
      h('span', { text: 'This board is archived, so it is read-only: nothing on it can be added, moved or changed. ' }),
      h('button', { type: 'button', text: 'Restore the board', on: { click: () => {
        const current = store.projects.get(project.id);
        if (current) run(() => ctx.actions.updateProject(current, { archivedAt: null }));
      } } }));
    const columns = h('div', { class: 'columns' });
    const noLists = h('p', { class: 'hint', text: 'This board has no lists yet. Name the first one here, for example “To do”, and press Enter.' });
    const slot = h('div', { class: 'column add-column-slot' }, noLists, addColumnForm(project));
    columns.append(slot);
    const archived = h('details', { class: 'archived-lists' });
    mount(root,
      h('div', { class: 'board-head' }, photo, title, badge, ctx.filterBar.toggle, actionsToggle, actions),
      banner, ctx.filterBar.el, notice, columns, archived);
    return { projectId: project.id, root, photo, title, badge, banner, actions, notice, columns, slot, noLists, archived, signatures: {}, shown: new Map() };
  }

  /** Draws the board into `root`, patching what is there. */
  function render(root, projectId, filters) {
    const project = projectId && store.projects.get(projectId);
    if (!project) {
      view = null;
      root.classList.remove('read-only');
      const empty = store.projects.size
        ? h('div', { class: 'empty' }, h('p', { text: 'Choose a board in the list of boards.' }))
        : h('div', { class: 'empty' },
          h('h2', { text: 'No boards yet.' }),
          h('p', { text: 'Create your first board: type its name under “Boards” and press Enter. On a phone, open the list of boards with ☰.' }));
      mount(root, empty);
      return;
    }
    const fresh = !view || view.projectId !== project.id || !root.contains(view.columns);
    if (fresh) view = build(root, project);
    if (!root.__windowKeys) {
      // Before nav.js's own keys (a listener of the board's): a windowed list's neighbours
      // are its cards, not its elements.
      root.__windowKeys = true;
      root.addEventListener('keydown', (event) => {
        const card = event.target.closest?.('.card');
        if (card && event.target === card && view) windowKey(event, card, view.columns);
      }, true);
    }

    setText(view.title, project.name);
    const photo = photoOf(project);
    if (photo) setAttr(view.photo, 'src', photo);
    else view.photo.removeAttribute('src');
    view.photo.hidden = !photo;
    view.badge.hidden = project.archivedAt === null;
    view.banner.hidden = project.archivedAt === null;
    root.classList.toggle('read-only', project.archivedAt !== null);
    const actionsSig = JSON.stringify([project.name, project.folder, project.pinnedAt !== null, project.archivedAt !== null]);
    if (view.signatures.actions !== actionsSig) {
      view.signatures.actions = actionsSig;
      mount(view.actions, projectActions(project));
    }

    const columns = store.columnsOf(project.id);
    const byColumn = store.tasksByColumn(project.id);
    const subtasks = new Map();
    const tags = new Set();
    for (const list of byColumn.values()) {
      for (const t of list) {
        for (const tag of t.tags) tags.add(tag);
        if (!t.parentId) continue;
        if (!subtasks.has(t.parentId)) subtasks.set(t.parentId, []);
        subtasks.get(t.parentId).push(t);
      }
    }
    ctx.filterBar.update(filters, [...tags].sort((a, b) => a.localeCompare(b)));

    // The focused card stays drawn wherever it goes (a keyboard move into a long list).
    const focused = document.activeElement?.closest?.('.card[data-id]')?.dataset.id;
    const now = new Date();
    const matches = matcher(filters, now);
    const narrowed = narrowing(filters);
    let anyShown = false;
    let anyHeld = false;
    const lists = columns.map((column, index) => {
      const held = byColumn.get(column.id) || [];
      const all = held.filter((t) => finishedShown(t, filters.done, now.getTime()));
      const shown = narrowed ? all.filter(matches) : all;
      anyShown ||= shown.length > 0;
      anyHeld ||= all.length > 0;
      return { column, shown, total: held.length, index };
    });
    view.shown = new Map(lists.map((l) => [l.column.id, l.shown]));
    const context = { subtasks, now, narrowed, pinned: focused ? [focused] : [] };
    reconcile(view.columns, lists, {
      key: (l) => l.column.id,
      create: (l) => createColumn(l.column),
      update: (section, l) => updateColumn(section, l, context),
      anchor: view.slot,
    });
    settle();
    view.noLists.hidden = columns.length > 0;
    mount(view.notice, ...(narrowed && anyHeld && !anyShown
      ? ['No cards match the filters. ', h('button', { type: 'button', class: 'small', text: 'Clear filters', on: { click: () => ctx.setFilters({}) } })]
      : []));

    const archivedSig = JSON.stringify(store.columnsOf(project.id, { archived: true }).map((c) => [c.id, c.name]));
    if (view.signatures.archived !== archivedSig) {
      view.signatures.archived = archivedSig;
      mount(view.archived, archivedColumns(project));
      view.archived.hidden = !view.archived.childElementCount;
    }
    ctx.nav.afterRender(view.columns);
    if (fresh) summarise(project, lists, now);
  }

  /** Tells a screen reader what needs attention when a board opens. */
  function summarise(project, lists, now) {
    const counts = { overdue: 0, today: 0, soon: 0 };
    for (const { shown } of lists) {
      for (const t of shown) {
        const kind = dueState(t, now)?.kind;
        if (kind in counts) counts[kind] += 1;
      }
    }
    const parts = [
      counts.overdue && `${counts.overdue} overdue`,
      counts.today && `${counts.today} due today`,
      counts.soon && `${counts.soon} due in the next 2 days`,
    ].filter(Boolean);
    announce(`Board ${project.name}${parts.length ? `: ${parts.join(', ')}` : ''}.`);
  }

  return {
    render,
    /** The cards a list shows now (after filters), for moves and keyboard navigation. */
    shownIn(columnId) {
      return (view && view.shown.get(columnId)) || [];
    },
    toggleSubtasks(taskId) {
      if (expanded.has(taskId)) expanded.delete(taskId);
      else expanded.add(taskId);
      ctx.render();
    },
    /** The add field of a list, for the `n` shortcut. */
    addField(columnId) {
      return view ? view.columns.querySelector(`.column[data-id="${CSS.escape(columnId)}"] .add-card input`) : null;
    },
  };
}
