// Dragging a card between the calendar's days with a mouse or a pen (pointer events): the
// day under the pointer is marked, and the drop hands the card and that day to the calendar,
// which writes the new deadline. A touch is left to scroll the page (a phone shows the
// agenda, where a card's dialog changes its deadline); Escape cancels a drag.

const THRESHOLD = 6; // px the pointer travels before a press becomes a drag

export function wireCalendarDrag(root, { drop, done }) {
  const state = { dragging: false };
  let press = null; // {id, from, x, y, card, pointerId}
  let over = null; // the day cell marked as the drop target

  const mark = (cell) => {
    if (over === cell) return;
    over?.classList.remove('cal-drop');
    over = cell;
    over?.classList.add('cal-drop');
  };

  function end(commit) {
    const was = press;
    press = null;
    if (!was) return;
    was.card.classList.remove('cal-dragging');
    root.classList.remove('cal-dragging-on');
    const target = over;
    mark(null);
    if (!state.dragging) return;
    state.dragging = false;
    // The click that follows the drop's pointerup must not open the card.
    const swallow = (event) => {
      event.stopPropagation();
      event.preventDefault();
    };
    window.addEventListener('click', swallow, { capture: true, once: true });
    setTimeout(() => window.removeEventListener('click', swallow, { capture: true }), 0);
    if (commit && target && target.dataset.day !== was.from) drop(was.id, target.dataset.day);
    done();
  }

  root.addEventListener('pointerdown', (event) => {
    const card = event.target.closest?.('.cal-grid .cal-card');
    if (!card || event.button !== 0 || event.pointerType === 'touch') return;
    press = { id: card.dataset.id, from: card.closest('td.cal-day').dataset.day, x: event.clientX, y: event.clientY, card };
  });
  window.addEventListener('pointermove', (event) => {
    if (!press) return;
    if (!state.dragging) {
      if (Math.hypot(event.clientX - press.x, event.clientY - press.y) < THRESHOLD) return;
      state.dragging = true;
      press.card.classList.add('cal-dragging');
      root.classList.add('cal-dragging-on');
    }
    event.preventDefault();
    mark(document.elementFromPoint(event.clientX, event.clientY)?.closest?.('.cal-grid td.cal-day') || null);
  });
  window.addEventListener('pointerup', () => end(true));
  window.addEventListener('pointercancel', () => end(false));
  window.addEventListener('keydown', (event) => {
    if (press && event.key === 'Escape') {
      event.preventDefault();
      end(false);
    }
  }, true);
  return state;
}
