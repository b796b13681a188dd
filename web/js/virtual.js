// A long list drawn in a window: of a list's cards only those in and near its visible part
// are elements (plus the focused, pressed or dragged one wherever it is), and a spacer
// stands for each run of cards left out, as tall as they are (measured once drawn, guessed
// until then), so the scroll bar, scrolling and scroll position behave as if all were
// there. A list of fewer than VIRTUAL_FROM cards is drawn whole. The keyboard still reaches
// every card: the arrow keys, Home and End on a card of a windowed board go by the list's
// cards, not its elements, drawing the one they go to (keys).

import { reconcile } from './keyed.js';
import { setAttr } from './ui.js';

const VIRTUAL_FROM = 40;
const OVERSCAN = 600; // px drawn above and below the visible part
const MAX_DRAWN = 160; // cards drawn around the visible part, whatever the guesses say
let guess = 72; // px of a card never measured: the mean of those measured so far
let measuredCount = 0;
let measuredSum = 0;

const pending = new Set(); // lists drawn since the last settle()

// Lists out of sight sideways (most of them on a phone) draw only one screen of cards; the
// overscan is drawn once a list comes near the screen.
const nearby = typeof IntersectionObserver === 'function'
  ? new IntersectionObserver((entries) => {
    for (const entry of entries) {
      // A list taken out of the page (another board shown) is let go.
      if (!entry.target.isConnected) {
        nearby.unobserve(entry.target);
        continue;
      }
      const state = entry.target.__window;
      if (!state || state.near === entry.isIntersecting) continue;
      // The first report after a guess (nearGuess) draws only if the guess was short.
      const was = state.near;
      state.near = entry.isIntersecting;
      if (state.near && was !== true) schedule(entry.target, state);
    }
  }, { rootMargin: '0px 40% 0px 40%' })
  : null;

// Lists to draw again in the next frame (scrolled, or come near the screen): one frame
// draws them all and then measures them all, so that a layout is made once, not per list.
const scheduled = new Set();
let frame = 0;

/** Draws a windowed list again in the next frame, for where it is scrolled now. */
function schedule(list, state) {
  if (!state.virtual || !state.options) return;
  scheduled.add(list);
  if (frame) return;
  frame = requestAnimationFrame(() => {
    frame = 0;
    const lists = [...scheduled].filter((l) => l.isConnected && l.__window.virtual);
    scheduled.clear();
    for (const l of lists) {
      l.__window.top = l.scrollTop;
      l.__window.height = l.clientHeight;
    }
    for (const l of lists) paint(l, l.__window);
    settle();
    // The board's own after-draw (its Tab stops) covers every list at once.
    if (lists.length) lists[0].__window.options.onScrollDrawn?.();
  });
}

function stateOf(list) {
  if (!list.__window) {
    const state = { cards: [], options: null, heights: new Map(), top: 0, height: 0, virtual: false, range: null, near: nearby ? null : true };
    list.__window = state;
    list.addEventListener('scroll', () => schedule(list, state), { passive: true });
    nearby?.observe(list);
  }
  return list.__window;
}

/** Where each card starts in the list (px, with the gap after it): tops[i], and tops[n]. */
function topsOf(state, gap) {
  const { cards, heights } = state;
  const tops = new Float64Array(cards.length + 1);
  let y = 0;
  for (let i = 0; i < cards.length; i += 1) {
    tops[i] = y;
    y += (heights.get(cards[i].id) ?? guess) + gap;
  }
  tops[cards.length] = y;
  return tops;
}

/** The first and last (exclusive) cards to draw for the list's visible part. */
function rangeOf(state, tops) {
  const n = state.cards.length;
  const view = state.height || window.innerHeight;
  const over = state.near ? OVERSCAN : 0;
  const from = state.top - over;
  const to = state.top + view + over;
  // The first card whose bottom is below `from`, by halving.
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (tops[mid + 1] <= from) lo = mid + 1;
    else hi = mid;
  }
  const start = Math.min(lo, Math.max(0, n - 1));
  let end = start;
  while (end < n && tops[end] < to && end - start < MAX_DRAWN) end += 1;
  return [start, Math.max(end, Math.min(n, start + 1))];
}

/** What the list holds: its drawn cards, with a spacer item for each run left out. */
function itemsOf(list, state) {
  const { cards } = state;
  if (!state.virtual) return cards;
  const gap = state.gap;
  const tops = topsOf(state, gap);
  const [start, end] = rangeOf(state, tops);
  state.range = [start, end];
  state.places = new Map(); // drawn card id -> its place in the list
  // Cards drawn wherever they are: the focused one, one pressed or dragged, and those named.
  const keep = new Set(state.options.pinned || []);
  const active = document.activeElement;
  if (active && list.contains(active)) keep.add(active.closest('.card')?.dataset.id);
  for (const el of list.querySelectorAll('.card.dragging, .card.pressing')) keep.add(el.dataset.id);
  if (state.reveal) keep.add(state.reveal);
  const drawn = [];
  if (keep.size > 0) {
    cards.forEach((card, i) => {
      if (keep.has(card.id) && (i < start || i >= end)) drawn.push(i);
    });
  }
  for (let i = start; i < end; i += 1) drawn.push(i);
  drawn.sort((a, b) => a - b);
  // A spacer stands for the cards between two drawn ones: their height and gaps, less the
  // spacer's own gap.
  const items = [];
  let next = 0; // the first card not yet drawn or spaced
  let gaps = 0;
  for (const i of drawn) {
    if (i > next) items.push({ spacer: true, key: `gap:${gaps++}`, height: tops[i] - tops[next] - gap });
    items.push(cards[i]);
    state.places.set(cards[i].id, i);
    next = i + 1;
  }
  if (next < cards.length) items.push({ spacer: true, key: `gap:${gaps}`, height: tops[cards.length] - tops[next] - gap });
  return items;
}

function paint(list, state) {
  const { options } = state;
  const items = itemsOf(list, state);
  reconcile(list, items, {
    key: (item) => (item.spacer ? item.key : options.key(item)),
    create: (item) => {
      if (!item.spacer) return options.create(item);
      const spacer = document.createElement('div');
      spacer.className = 'list-spacer';
      spacer.setAttribute('aria-hidden', 'true');
      spacer.style.flex = 'none';
      return spacer;
    },
    update: (node, item) => {
      if (!item.spacer) {
        options.update(node, item);
        // A screen reader says where a card is in the whole list, not among those drawn.
        const place = state.virtual ? state.places.get(options.key(item)) : undefined;
        setAttr(node, 'aria-posinset', place === undefined ? null : place + 1);
        setAttr(node, 'aria-setsize', place === undefined ? null : state.cards.length);
        return;
      }
      const height = `${Math.max(0, Math.round(item.height))}px`;
      if (node.style.height !== height) node.style.height = height;
    },
    anchor: options.anchor,
  });
  pending.add(list);
}

/**
 * Before the first report of whether a list is near the screen: the lists that fit in about
 * a screen and a half from the left are (a board opens scrolled to its first list), so the
 * first draw already holds what they show and no second one follows the load.
 */
function nearGuess(place) {
  return (place + 1) * 290 < window.innerWidth * 1.4;
}

/**
 * Draws `cards` into `list` (keyed, as reconcile does, before `options.anchor`), windowed
 * when the list is long. `options`: {key, create, update, anchor, pinned: ids drawn
 * wherever they are, place: the list's place on the board, onScrollDrawn()}. Call
 * settle() once every list of a draw is done.
 */
export function drawCards(list, cards, options) {
  const state = stateOf(list);
  if (state.near === null) state.near = nearGuess(options.place ?? 0);
  state.cards = cards;
  state.options = options;
  state.virtual = cards.length >= VIRTUAL_FROM;
  if (state.virtual && state.gap === undefined) state.gap = parseFloat(getComputedStyle(list).rowGap) || 0;
  if (!state.virtual) state.range = null;
  paint(list, state);
}

/**
 * After a draw: measures the cards just drawn (one layout for every list), and draws a
 * list again where the measured heights move its window (the guesses were off).
 */
export function settle() {
  const lists = [...pending].filter((list) => list.isConnected && list.__window?.virtual);
  pending.clear();
  const changed = [];
  for (const list of lists) {
    const state = list.__window;
    state.top = list.scrollTop;
    state.height = list.clientHeight;
    let moved = false;
    for (const node of list.children) {
      const id = node.classList.contains('card') ? node.dataset.id : null;
      if (!id) continue;
      const height = node.offsetHeight;
      if (!height) continue;
      const before = state.heights.get(id);
      if (before === height) continue;
      if (before === undefined) {
        measuredCount += 1;
        measuredSum += height;
      }
      state.heights.set(id, height);
      moved = true;
    }
    if (moved) changed.push(list);
  }
  if (measuredCount) guess = measuredSum / measuredCount;
  for (const list of changed) {
    const state = list.__window;
    const before = state.range;
    const after = rangeOf(state, topsOf(state, state.gap));
    if (!before || before[0] !== after[0] || before[1] !== after[1]) paint(list, state);
  }
  pending.clear();
}

/** Whether a list is drawn in a window (it is long). */
export function windowed(list) {
  return Boolean(list?.__window?.virtual);
}

/** Draws the card `id` of `list` if it is left out, and returns its element. */
export function reveal(list, id) {
  const state = list.__window;
  let node = list.querySelector(`.card[data-id="${CSS.escape(id)}"]`);
  if (node || !state) return node;
  state.reveal = id;
  paint(list, state);
  state.reveal = null;
  node = list.querySelector(`.card[data-id="${CSS.escape(id)}"]`);
  settle();
  return node;
}

/** The cards a list shows, drawn or not. */
export function cardsOf(list) {
  return list?.__window?.cards || [];
}

/**
 * The board's arrow keys, Home and End on a card, when some list is windowed: they go by
 * the lists' cards (as nav.js does by their elements), and draw the card they go to.
 * Returns true when it handled the key.
 */
export function windowKey(event, card, columnsEl) {
  if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return false;
  if (!['ArrowUp', 'ArrowDown', 'Home', 'End', 'ArrowLeft', 'ArrowRight'].includes(event.key)) return false;
  const lists = [...columnsEl.querySelectorAll('.column[data-id] .card-list')];
  if (!lists.some(windowed)) return false;
  const list = card.closest('.card-list');
  const cards = cardsOf(list);
  const index = cards.findIndex((t) => t.id === card.dataset.id);
  if (index < 0) return false;
  let to = null;
  let toList = list;
  if (event.key === 'ArrowUp') to = cards[index - 1];
  else if (event.key === 'ArrowDown') to = cards[index + 1];
  else if (event.key === 'Home') to = cards[0];
  else if (event.key === 'End') to = cards.at(-1);
  else {
    const step = event.key === 'ArrowLeft' ? -1 : 1;
    for (let at = lists.indexOf(list) + step; at >= 0 && at < lists.length; at += step) {
      const there = cardsOf(lists[at]);
      if (there.length) {
        to = there[Math.min(index, there.length - 1)];
        toList = lists[at];
        break;
      }
    }
  }
  event.preventDefault();
  event.stopPropagation();
  if (!to) return true;
  const node = reveal(toList, to.id);
  if (node) {
    node.focus({ preventScroll: true });
    node.scrollIntoView({ block: 'nearest', inline: 'nearest' });
  }
  return true;
}
