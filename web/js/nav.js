// The keyboard on the board: one Tab stop per list (a roving tabindex over its cards), arrow
// keys between cards and lists, Enter to open, Alt+arrows to move (moves.js), and the
// page's shortcuts (`n` adds a card, `/` filters, `?` lists the shortcuts).

import { h, mount } from './ui.js';

const SHORTCUTS = [
  ['Tab', 'Next list, or the next control'],
  ['↑ ↓', 'Previous or next card in the list'],
  ['← →', 'The card beside it, in the list to the left or right'],
  ['Home End', 'First or last card of the list'],
  ['Enter', 'Open the card'],
  ['Alt + ↑ ↓ ← →', 'Move the card up, down, or to the list beside'],
  ['Alt + ← →', 'On a list’s name: move the list'],
  ['Alt + ↑ ↓', 'In a card’s checklist item: move the item'],
  ['Alt + ← → ↑ ↓', 'In the calendar: a card’s deadline a day or a week earlier or later'],
  ['PageUp PageDown', 'In the calendar: the same day of the previous or next month'],
  ['n', 'Add a card to this list'],
  ['/', 'Filter the cards'],
  ['Ctrl + Z', 'Undo this page’s last change'],
  ['Esc', 'Close the topmost dialog or menu (typed text is kept)'],
  ['?', 'This list of shortcuts'],
];

const typingIn = (el) => Boolean(el?.closest?.('input, textarea, select, [contenteditable]'));

export function createNav(ctx) {
  const stops = new Map(); // column id -> id of the card that holds the list's Tab stop
  let follow = null; // a card moved by the keyboard: the focus goes with it to its new place
  let landing = null; // {ids, columnId}: where the focus goes on the next draw if it was lost
  const helpDialog = document.getElementById('help-dialog');

  function setStop(card) {
    const list = card.closest('.card-list');
    if (!list) return;
    stops.set(list.dataset.column, card.dataset.id);
    for (const other of list.querySelectorAll('.card[tabindex="0"]')) if (other !== card) other.tabIndex = -1;
    card.tabIndex = 0;
  }

  function focusCard(card) {
    if (!card) return;
    setStop(card);
    card.focus();
    card.scrollIntoView({ block: 'nearest', inline: 'nearest' });
  }

  /** After each draw: every list has exactly one card in the Tab order. */
  function afterRender(columnsEl) {
    if (landing) {
      // Once, on the draw after the action: the first of the cards still shown, else the
      // list's name, else the board's heading.
      const { ids, columnId } = landing;
      landing = null;
      const now = document.activeElement;
      if (!now || now === document.body || !now.isConnected) {
        const card = ids.map((id) => id && columnsEl.querySelector(`.card[data-id="${CSS.escape(id)}"]`)).find(Boolean);
        if (card) focusCard(card);
        else (columnsEl.querySelector(`.column[data-id="${CSS.escape(columnId)}"] .column-name`) || document.getElementById('board-title'))?.focus();
      }
    }
    if (follow) {
      const card = columnsEl.querySelector(`.card[data-id="${CSS.escape(follow)}"]`);
      const lost = !document.activeElement || document.activeElement === document.body;
      if (card && (lost || document.activeElement === card)) {
        follow = null;
        if (document.activeElement !== card) focusCard(card);
      }
    }
    for (const list of columnsEl.querySelectorAll('.card-list')) {
      const cards = list.querySelectorAll('.card');
      if (!cards.length) continue;
      const focused = list.contains(document.activeElement) ? document.activeElement.closest('.card') : null;
      const want = focused ? focused.dataset.id : stops.get(list.dataset.column);
      const stop = [...cards].find((c) => c.dataset.id === want) || cards[0];
      for (const card of cards) {
        const index = card === stop ? 0 : -1;
        if (card.tabIndex !== index) card.tabIndex = index;
      }
    }
  }

  function cardKey(event, card) {
    const task = ctx.store.tasks.get(card.dataset.id);
    if (!task) return;
    if (ctx.moves.cardKey(event, task)) {
      // Moving into another list makes the card a new element there; keep the focus on it.
      follow = task.id;
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const list = card.closest('.card-list');
    const cards = [...list.querySelectorAll('.card')];
    const index = cards.indexOf(card);
    switch (event.key) {
      case 'ArrowDown': focusCard(cards[index + 1]); break;
      case 'ArrowUp': focusCard(cards[index - 1]); break;
      case 'Home': focusCard(cards[0]); break;
      case 'End': focusCard(cards.at(-1)); break;
      case 'ArrowLeft':
      case 'ArrowRight': {
        const columns = [...card.closest('.columns').querySelectorAll('.column[data-id]')];
        const step = event.key === 'ArrowLeft' ? -1 : 1;
        for (let at = columns.indexOf(card.closest('.column')) + step; at >= 0 && at < columns.length; at += step) {
          const there = [...columns[at].querySelectorAll('.card-list .card')];
          if (there.length) {
            focusCard(there[Math.min(index, there.length - 1)]);
            break;
          }
        }
        break;
      }
      case 'Enter':
      case ' ':
        ctx.openCard(task.id);
        break;
      default:
        return;
    }
    event.preventDefault();
  }

  function showHelp() {
    mount(helpDialog, h('div', { class: 'help' },
      h('header', { class: 'dialog-head' },
        h('h2', { id: 'help-title', text: 'Keyboard shortcuts' }),
        h('button', { type: 'button', class: 'icon-button', 'aria-label': 'Close', text: '×', on: { click: () => helpDialog.close() } })),
      h('dl', { class: 'shortcuts' }, SHORTCUTS.map(([keys, what]) => [
        h('dt', {}, keys.split(' ').map((k) => (k === '+' ? ' + ' : h('kbd', { text: k })))),
        h('dd', { text: what })]))));
    helpDialog.showModal();
  }

  function wire(board) {
    // The skip link goes to the first list's cards; following "#board" would also change
    // the address, which names the board and its filters.
    document.getElementById('skip-link').addEventListener('click', (event) => {
      event.preventDefault();
      const stop = board.querySelector('.card[tabindex="0"]') || board.querySelector('.add-card input') || board;
      stop.focus();
    });
    board.addEventListener('keydown', (event) => {
      const card = event.target.closest?.('.card');
      if (card && event.target === card) cardKey(event, card);
    });
    board.addEventListener('focusin', (event) => {
      const card = event.target.closest?.('.card');
      if (card && event.target === card) setStop(card);
    });

    document.addEventListener('keydown', (event) => {
      if (!ctx.active() || event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
      if (document.querySelector('dialog[open]') || typingIn(event.target)) return;
      if (event.key === '?') {
        event.preventDefault();
        showHelp();
      } else if (event.key === '/') {
        event.preventDefault();
        ctx.filterBar.focus();
      } else if (event.key === 'n' || event.key === 'N') {
        const column = event.target.closest?.('.column[data-id]') || board.querySelector('.column[data-id]');
        const field = column && ctx.board.addField(column.dataset.id);
        if (field) {
          event.preventDefault();
          field.focus();
        }
      }
    });
  }

  /**
   * For an action that may take a card out of sight (completing or deleting it in its
   * dialog): notes its neighbours now, and returns what to call once the action is done and
   * the dialog closed, so that the next draw gives the focus to the card if it is still
   * shown, else to the one after it in its list, else the one before.
   */
  function landAfter(task) {
    const list = ctx.board.shownIn(task.columnId);
    const at = list.findIndex((t) => t.id === task.id);
    const ids = [task.id, at >= 0 ? list[at + 1]?.id : null, at > 0 ? list[at - 1].id : null];
    return () => {
      landing = { ids, columnId: task.columnId };
      ctx.render();
    };
  }

  return { wire, afterRender, showHelp, landAfter };
}
