// The list of boards: pinned ones first (newest pinned first), then by folder, archived ones
// apart at the end; and the form that creates a board. Drawn again only when what it shows
// changes (not on every card change), so a click on a board is never lost to a redraw.

import { h, showError, mount } from './ui.js';
import { photoOf } from './board.js';
import { lengthOf } from './rules.js';

const COLLAPSED = 'workboard.sidebar.collapsed';

/**
 * The header's button that folds the list of boards away at desktop width, so a board's
 * lists get the room; the choice is kept in this browser. (At phone width the list is a
 * drawer opened with ☰ instead, and this button is not shown.)
 */
export function wireSidebarCollapse(button, sidebar) {
  const apply = (collapsed) => {
    sidebar.classList.toggle('collapsed', collapsed);
    button.setAttribute('aria-expanded', String(!collapsed));
    button.textContent = collapsed ? '⇥' : '⇤';
    button.title = collapsed ? 'Show the list of boards' : 'Hide the list of boards';
  };
  let stored = null;
  try {
    stored = localStorage.getItem(COLLAPSED);
  } catch {
    // Storage refused (a private window's quota): the list starts shown.
  }
  apply(stored === '1');
  button.addEventListener('click', () => {
    const collapsed = !sidebar.classList.contains('collapsed');
    apply(collapsed);
    try {
      if (collapsed) localStorage.setItem(COLLAPSED, '1');
      else localStorage.removeItem(COLLAPSED);
    } catch {
      // Not kept; it still applies to this page.
    }
  });
}

export function createSidebar(ctx) {
  const { store } = ctx;
  let draft = '';
  const toggled = new Map(); // group title -> open, as the person last left it

  let signature = null;

  function link(project, current) {
    return h('li', {},
      h('a', {
        href: ctx.boardHref(project.id),
        class: ['project-link', project.id === current && 'current'],
        'aria-current': project.id === current ? 'page' : null,
      }, photoOf(project) && h('img', { class: 'project-photo', alt: '', src: photoOf(project) }), project.name));
  }

  function group(title, projects, current, open = true) {
    if (!projects.length) return null;
    const list = h('ul', { class: 'project-list' }, projects.map((p) => link(p, current)));
    const shown = toggled.has(title) ? toggled.get(title) : open;
    const details = h('details', { class: 'project-group', open: shown }, h('summary', { text: title }), list);
    details.addEventListener('toggle', () => toggled.set(title, details.open));
    return details;
  }

  function createForm() {
    const input = h('input', {
      type: 'text', placeholder: 'New board name', 'aria-label': 'New board name', ...lengthOf('name-chars'),
      'data-focus': 'new-board', props: { value: draft },
    });
    input.addEventListener('input', () => {
      draft = input.value;
    });
    const form = h('form', { class: 'new-board' }, input, h('button', { type: 'submit', text: 'Create' }));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const name = input.value.trim();
      if (!name) return;
      try {
        const project = await ctx.ops.createProject({ name });
        draft = '';
        input.value = '';
        location.hash = `#/b/${encodeURIComponent(project.id)}`;
      } catch (err) {
        showError(err);
      }
    });
    return form;
  }

  function render(root, current) {
    const focused = document.activeElement?.dataset?.focus === 'new-board';
    const all = store.projectList();
    const live = all.filter((p) => p.archivedAt === null);
    const pinned = live.filter((p) => p.pinnedAt !== null).sort((a, b) => b.pinnedAt - a.pinnedAt);
    const folders = new Map();
    for (const p of live.filter((q) => q.pinnedAt === null)) {
      const key = p.folder || '';
      if (!folders.has(key)) folders.set(key, []);
      folders.get(key).push(p);
    }
    const names = [...folders.keys()].sort((a, b) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b)));
    const next = JSON.stringify([current, ctx.boardHref(''), all.map((p) => [p.id, p.name, p.folder, p.pinnedAt, p.archivedAt, p.position, p.photo])]);
    if (next === signature && root.childElementCount) return;
    signature = next;
    mount(root,
      h('div', { class: 'sidebar-head' },
        h('h2', { class: 'sidebar-title', text: 'Boards' }),
        // Only shown at phone width, where the list covers the page and its menu button.
        h('button', { type: 'button', class: 'icon-button sidebar-close', 'aria-label': 'Close the list of boards', text: '×',
          on: { click: () => document.getElementById('menu-toggle').click() } })),
      createForm(),
      group('Pinned', pinned, current),
      names.map((name) => group(name || 'No folder', folders.get(name), current)),
      group('Archived', all.filter((p) => p.archivedAt !== null), current, false));
    if (focused) root.querySelector('[data-focus="new-board"]')?.focus();
  }

  return { render };
}
