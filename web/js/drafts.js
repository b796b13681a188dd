// Text typed and not yet sent, by box ("comment:t_1", "add:c_2", a card's unsaved fields):
// kept in this tab's session storage, so closing a card, a redraw, a failed write or a
// reload never loses it. A draft goes when it is sent or cleared.

const STORE = 'workboard.drafts';

function load() {
  try {
    return new Map(Object.entries(JSON.parse(sessionStorage.getItem(STORE) || '{}')));
  } catch {
    return new Map();
  }
}

const held = load();
let timer = null;

function flush() {
  clearTimeout(timer);
  timer = null;
  try {
    sessionStorage.setItem(STORE, JSON.stringify(Object.fromEntries(held)));
  } catch {
    // Over the quota: the drafts stay in memory for this page.
  }
}

// Keystrokes are written a moment after typing stops; a reload or a closed tab inside that
// moment writes them at once, so the last words typed are kept too.
function save() {
  clearTimeout(timer);
  timer = setTimeout(flush, 200);
}
addEventListener('pagehide', () => {
  if (timer !== null) flush();
});

export const drafts = {
  get(key, fallback = '') {
    return held.has(key) ? held.get(key) : fallback;
  },
  has(key) {
    return held.has(key);
  },
  /** An empty string (or undefined) clears the draft. */
  set(key, value) {
    if (value === '' || value === undefined) held.delete(key);
    else held.set(key, value);
    save();
  },
  delete(key) {
    held.delete(key);
    save();
  },
  /** Leaving the account (signing out, closing a file) leaves no text behind. */
  clear() {
    held.clear();
    save();
  },
};

/**
 * Binds a text box to a draft: it shows the draft, and every keystroke is kept. Returns
 * the box. `clear()` after a successful send: `drafts.delete(key)` and empty the box.
 */
export function draftBox(box, key) {
  box.value = drafts.get(key);
  box.addEventListener('input', () => drafts.set(key, box.value));
  return box;
}
