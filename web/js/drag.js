// Drag and drop with pointer events, for a mouse and for a finger alike. A mouse drag
// starts after a few pixels of movement; a touch drag after a long press (so a swipe still
// scrolls). A card dropped on a list's header goes to its top; anywhere else in the list
// (its cards, its empty area, its add field) it goes where the pointer is, or to the end.
// A list is moved by dragging its header. A press that does not become a drag opens the
// card, even when a change from elsewhere moved things under the pointer meanwhile. It opens
// on the click that ends the tap, not on the release before it: the click is the last event
// of the gesture, so nothing of the tap can reach a control of the card that just opened.

const MOUSE_SLOP = 5;
const TOUCH_SLOP = 8;
const LONG_PRESS_MS = 400;
const EDGE = 48; // px from an edge of a scroller where dragging scrolls it

function clearMarks(root) {
  for (const el of root.querySelectorAll('.drop-before, .drop-after, .drop-target')) {
    el.classList.remove('drop-before', 'drop-after', 'drop-target');
  }
}

/** Index at which a dragged item lands among `items`, by the pointer's coordinate. */
function dropIndex(items, coordinate, axis) {
  for (let i = 0; i < items.length; i += 1) {
    const box = items[i].getBoundingClientRect();
    const middle = axis === 'y' ? box.top + box.height / 2 : box.left + box.width / 2;
    if (coordinate < middle) return i;
  }
  return items.length;
}

export function createDrag(ctx) {
  const { store } = ctx;
  let press = null; // {kind, id, el, pointerId, type, x, y, started, timer, ghost, target, lastX, lastY}
  // A drag, or a press that opened its card, is done: the click the browser sends after
  // it must not act again (open the card twice, or rename the list dragged by its name).
  let swallow = false;
  const swallowClick = () => {
    swallow = true;
    setTimeout(() => { swallow = false; });
  };
  let scrollFrame = 0;
  // A press released without dragging: {id, type, timer}. The click that follows opens it.
  let tapped = null;
  const openTapped = () => {
    const t = tapped;
    tapped = null;
    clearTimeout(t.timer);
    ctx.openCard(t.id, { pointer: t.type });
  };

  /** Where a card would land under (x, y): {columnId, index, list, mark} or null. */
  function cardTarget(board, x, y) {
    const el = document.elementFromPoint(x, y);
    const column = el?.closest?.('.column[data-id]');
    if (!column || !board.contains(column)) return null;
    const list = column.querySelector('.card-list');
    const cards = [...list.querySelectorAll('.card:not(.dragging)')];
    if (el.closest('.column-head')) return { columnId: column.dataset.id, index: 0, column, cards, top: true };
    const inList = el.closest('.card-list');
    if (!inList) return { columnId: column.dataset.id, index: cards.length, column, cards, end: true };
    const index = dropIndex(cards, y, 'y');
    // A long list draws only some of its cards: the drop is placed by its neighbours' ids.
    return { columnId: column.dataset.id, index, column, cards, before: cards[index]?.dataset.id, after: cards[index - 1]?.dataset.id };
  }

  /** Where among the cards a list shows (without the dragged one) a card target lands. */
  function shownIndex(target, movingId) {
    if (target.top) return 0;
    if (target.end) return Infinity;
    const others = ctx.board.shownIn(target.columnId).filter((t) => t.id !== movingId);
    if (target.before) {
      const at = others.findIndex((t) => t.id === target.before);
      if (at >= 0) return at;
    }
    if (target.after) {
      const at = others.findIndex((t) => t.id === target.after);
      if (at >= 0) return at + 1;
    }
    return target.index;
  }

  function columnTarget(board, x) {
    const row = board.querySelector('.columns');
    if (!row) return null;
    const cols = [...row.querySelectorAll('.column[data-id]:not(.dragging)')];
    return { index: dropIndex(cols, x, 'x'), cols };
  }

  function mark(board, target) {
    clearMarks(board);
    if (!target) return;
    if (press.kind === 'card') {
      target.column.classList.add('drop-target');
      const { cards, index } = target;
      if (index < cards.length) cards[index].classList.add('drop-before');
      else if (cards.length) cards[cards.length - 1].classList.add('drop-after');
    } else {
      const { cols, index } = target;
      if (index < cols.length) cols[index].classList.add('drop-before');
      else if (cols.length) cols[cols.length - 1].classList.add('drop-after');
    }
  }

  function start(board) {
    press.started = true;
    clearTimeout(press.timer);
    const source = press.kind === 'card' ? press.el : press.el.closest('.column');
    const box = source.getBoundingClientRect();
    const ghost = source.cloneNode(true);
    ghost.removeAttribute('id');
    for (const el of ghost.querySelectorAll('[id]')) el.removeAttribute('id');
    ghost.classList.add('drag-ghost');
    ghost.setAttribute('aria-hidden', 'true');
    ghost.style.width = `${box.width}px`;
    ghost.style.height = press.kind === 'card' ? `${box.height}px` : `${Math.min(box.height, 240)}px`;
    press.offset = { x: press.x - box.left, y: press.y - box.top };
    press.ghost = ghost;
    document.body.append(ghost);
    source.classList.add('dragging');
    document.body.classList.add('is-dragging');
    if (press.type !== 'mouse' && navigator.vibrate) navigator.vibrate(15);
    ctx.announce?.(press.kind === 'card' ? 'Dragging the card. Drop it on a list.' : 'Dragging the list.');
  }

  function follow(board, x, y) {
    press.lastX = x;
    press.lastY = y;
    press.ghost.style.transform = `translate(${x - press.offset.x}px, ${y - press.offset.y}px)`;
    press.target = press.kind === 'card' ? cardTarget(board, x, y) : columnTarget(board, x);
    mark(board, press.target);
  }

  /** While dragging near an edge of the lists' row or of a list, scroll it. */
  function autoScroll(board) {
    cancelAnimationFrame(scrollFrame);
    const step = () => {
      if (!press || !press.started) return;
      const x = press.lastX;
      const y = press.lastY;
      let moved = false;
      const row = board.querySelector('.columns');
      if (row) {
        const box = row.getBoundingClientRect();
        const dx = x < box.left + EDGE ? -12 : x > box.right - EDGE ? 12 : 0;
        if (dx && row.scrollLeft + dx >= 0 && row.scrollLeft + dx <= row.scrollWidth - row.clientWidth) {
          row.scrollLeft += dx;
          moved = true;
        }
      }
      const list = document.elementFromPoint(x, y)?.closest?.('.card-list');
      if (list && press.kind === 'card') {
        const box = list.getBoundingClientRect();
        const dy = y < box.top + EDGE / 2 ? -10 : y > box.bottom - EDGE / 2 ? 10 : 0;
        if (dy) {
          const before = list.scrollTop;
          list.scrollTop += dy;
          moved ||= list.scrollTop !== before;
        }
      }
      if (moved) follow(board, x, y);
      scrollFrame = requestAnimationFrame(step);
    };
    scrollFrame = requestAnimationFrame(step);
  }

  function finish(board, drop) {
    const p = press;
    press = null;
    cancelAnimationFrame(scrollFrame);
    clearTimeout(p.timer);
    clearMarks(board);
    p.ghost?.remove();
    for (const el of board.querySelectorAll('.dragging')) el.classList.remove('dragging');
    document.body.classList.remove('is-dragging');
    if (p.started) swallowClick();
    if (drop && p.started && p.target) {
      if (p.kind === 'card') {
        const task = store.tasks.get(p.id);
        if (task) ctx.moves.moveCard(task, p.target.columnId, shownIndex(p.target, task.id));
      } else {
        const column = store.columns.get(p.id);
        if (column) ctx.moves.moveColumn(column, p.target.index);
      }
    }
    // A drag held the board as it was; a press that never became one changed nothing.
    if (p.started) ctx.render();
  }

  function wire(board) {
    board.addEventListener('pointerdown', (event) => {
      if (event.pointerType === 'mouse' && event.button !== 0) return;
      // A second finger does not start another drag; a mouse press left over from a release
      // the page never saw (outside the window) is dropped.
      if (press && press.type !== 'mouse') return;
      if (press) finish(board, false);
      if (tapped) {
        clearTimeout(tapped.timer);
        tapped = null;
      }
      const interactive = event.target.closest('button, a, input, select, textarea, summary, .menu');
      const card = event.target.closest('.card');
      const head = event.target.closest('.column-head');
      // A list's name button drags the list too; its other buttons and every control do not.
      if (card && interactive && card.contains(interactive)) return;
      if (!card && (!head || (interactive && !interactive.classList.contains('column-name')))) return;
      // An archived board is read-only: a press on a card still opens it, nothing drags.
      const still = board.classList.contains('read-only');
      if (still && !card) return;
      press = {
        still,
        kind: card ? 'card' : 'column',
        id: card ? card.dataset.id : head.dataset.id,
        el: card || head,
        pointerId: event.pointerId,
        type: event.pointerType,
        x: event.clientX,
        y: event.clientY,
        started: false,
        timer: null,
      };
      if (event.pointerType !== 'mouse') {
        const held = press;
        held.timer = setTimeout(() => {
          if (press === held && !held.started && !held.still) {
            start(board);
            follow(board, held.x, held.y);
            autoScroll(board);
          }
        }, LONG_PRESS_MS);
        press.el.classList.add('pressing');
      }
    });

    document.addEventListener('pointermove', (event) => {
      if (!press || event.pointerId !== press.pointerId) return;
      const distance = Math.hypot(event.clientX - press.x, event.clientY - press.y);
      if (!press.started) {
        if (press.type === 'mouse') {
          if (distance < MOUSE_SLOP) return;
          if (press.still) {
            finish(board, false);
            return;
          }
          start(board);
          autoScroll(board);
        } else {
          // A finger that moves before the long press ends is scrolling: let it.
          if (distance > TOUCH_SLOP) {
            press.el.classList.remove('pressing');
            clearTimeout(press.timer);
            press = null;
          }
          return;
        }
      }
      event.preventDefault();
      follow(board, event.clientX, event.clientY);
    });

    document.addEventListener('pointerup', (event) => {
      if (!press || event.pointerId !== press.pointerId) return;
      press.el.classList.remove('pressing');
      if (press.started) {
        finish(board, true);
        return;
      }
      // A press that never became a drag: the click that ends it opens the card it began
      // on, even if a change from elsewhere has moved another card under the pointer since.
      // Should the browser send no click (the pressed tile was redrawn away), it opens anyway.
      const { kind, id, type } = press;
      finish(board, false);
      if (kind === 'card') tapped = { id, type, timer: setTimeout(() => tapped && openTapped(), 800) };
    });

    // The tap's click, wherever the browser sends it (the common ancestor of the press and
    // the release may lie outside the board): it opens the card and does nothing else.
    document.addEventListener('click', (event) => {
      if (!tapped) return;
      event.stopPropagation();
      event.preventDefault();
      openTapped();
    }, true);

    document.addEventListener('pointercancel', (event) => {
      if (press && event.pointerId === press.pointerId) {
        press.el.classList.remove('pressing');
        finish(board, false);
      }
    });

    // Once a touch drag has begun, the finger moves the card, not the page.
    document.addEventListener('touchmove', (event) => {
      if (press && press.started) event.preventDefault();
    }, { passive: false });
    // A long press would open the browser's menu; a pending drag has the finger now.
    board.addEventListener('contextmenu', (event) => {
      if (press && press.type !== 'mouse') event.preventDefault();
    });

    // Leaving the window mid-drag (another app, a tab switch) puts the card back.
    window.addEventListener('blur', () => {
      if (press) finish(board, false);
    });

    document.addEventListener('keydown', (event) => {
      if (press && press.started && event.key === 'Escape') {
        event.preventDefault();
        finish(board, false);
      }
    });

    // Clicks: a drag's own click is swallowed; keyboard and assistive "clicks" (no pointer
    // press before them) open the card.
    board.addEventListener('click', (event) => {
      if (swallow) {
        event.stopPropagation();
        event.preventDefault();
        return;
      }
      const toggle = event.target.closest('[data-toggle-subtasks]');
      if (toggle) {
        ctx.board.toggleSubtasks(toggle.dataset.toggleSubtasks);
        return;
      }
      const open = event.target.closest('[data-open]');
      if (open) {
        ctx.openCard(open.dataset.open);
        return;
      }
      const card = event.target.closest('.card');
      if (card && !event.target.closest('button, a, input') && event.detail === 0) ctx.openCard(card.dataset.id);
    }, true);
  }

  return {
    wire,
    get dragging() {
      return Boolean(press && press.started);
    },
  };
}
