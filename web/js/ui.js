// Small DOM helpers shared by the screens: an element builder, the one toast and the
// screen-reader announcements, disclosure menus, and the modal questions (confirm, a text
// prompt, and the conflict choice of a guarded write).

/**
 * `h('button', {class: 'x', on: {click}}, 'Label')`. Attributes go through setAttribute,
 * except `class`, `text`, `on`, `dataset` and boolean/DOM properties in `props`.
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'class') el.className = Array.isArray(value) ? value.filter(Boolean).join(' ') : value;
    else if (name === 'text') el.textContent = value;
    else if (name === 'on') for (const [ev, fn] of Object.entries(value)) el.addEventListener(ev, fn);
    else if (name === 'dataset') Object.assign(el.dataset, value);
    else if (name === 'props') Object.assign(el, value);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** Replaces an element's children; arrays are flattened and null or false skipped. */
export function mount(el, ...children) {
  el.replaceChildren(...children.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false));
}

/** Sets an element's text only when it differs, so a patch touches nothing that is the same. */
export function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}

/** Sets or removes an attribute only when it differs. */
export function setAttr(el, name, value) {
  if (value === null || value === undefined || value === false) {
    if (el.hasAttribute(name)) el.removeAttribute(name);
  } else if (el.getAttribute(name) !== String(value)) {
    el.setAttribute(name, String(value));
  }
}

// Screen-reader announcements: two visually hidden live regions (polite and assertive).
// The text is set in the next frame so that the same sentence twice is announced twice.
export function announce(text, { urgent = false } = {}) {
  const region = document.getElementById(urgent ? 'announce-urgent' : 'announce');
  if (!region) return;
  region.textContent = '';
  requestAnimationFrame(() => {
    region.textContent = text;
  });
}

// One toast at a time: a new message replaces the shown one. The same error again only
// restarts its timer, so one failure is shown (and announced) once.
let shown = null; // {el, message, kind, timer, remaining, started}

/** The open modal dialog on top, if any: the one thing a key or a click may reach. */
export function topModal() {
  return [...document.querySelectorAll('dialog[open]')].filter((d) => d.matches(':modal')).at(-1) || null;
}

// A modal dialog makes the rest of the page inert, so the toasts' box goes into the topmost
// open one (a tag deleted in the card offers its Undo there) and back out when it closes.
// The box is held here: a dialog that redraws its content takes it out of the page.
let toastBox = null;
function placeToasts() {
  toastBox ||= document.getElementById('toasts');
  const host = topModal() || document.body;
  if (toastBox && toastBox.parentElement !== host) host.append(toastBox);
  return toastBox;
}
document.addEventListener('close', () => placeToasts(), true);

function hideToast() {
  if (!shown) return;
  clearTimeout(shown.timer);
  shown.el.remove();
  shown = null;
}

function arm(state, ms) {
  clearTimeout(state.timer);
  state.remaining = ms;
  state.started = Date.now();
  if (ms) state.timer = setTimeout(() => { if (shown === state) hideToast(); }, ms);
}

/**
 * A message at the bottom of the screen. `actions` are buttons ({label, run}); a toast
 * with actions stays longer, and pauses while the pointer or focus is on it.
 */
export function toast(message, { kind = 'info', actions = [], timeout } = {}) {
  const ms = timeout ?? (kind === 'error' ? 12000 : actions.length ? 10000 : 5000);
  if (shown && shown.message === message && shown.kind === kind && !actions.length) {
    arm(shown, ms);
    return shown.el;
  }
  hideToast();
  const close = h('button', { type: 'button', class: 'icon-button', 'aria-label': 'Dismiss', text: '×', on: { click: hideToast } });
  const buttons = actions.map((a) => h('button', { type: 'button', class: 'toast-action', text: a.label, on: { click: () => {
    hideToast();
    a.run();
  } } }));
  const el = h('div', { class: ['toast', `toast-${kind}`] }, h('span', { class: 'toast-text', text: message }), buttons, close);
  const state = { el, message, kind, timer: null, remaining: ms, started: Date.now() };
  const pause = () => {
    clearTimeout(state.timer);
    state.remaining = Math.max(2000, state.remaining - (Date.now() - state.started));
  };
  const resume = () => {
    if (!el.matches(':hover') && !el.contains(document.activeElement)) arm(state, state.remaining);
  };
  el.addEventListener('pointerenter', pause);
  el.addEventListener('pointerleave', resume);
  el.addEventListener('focusin', pause);
  el.addEventListener('focusout', () => setTimeout(resume));
  placeToasts().append(el);
  shown = state;
  arm(state, ms);
  announce(actions.length ? `${message} ${actions.map((a) => a.label).join(', ')} available.` : message, { urgent: kind === 'error' });
  return el;
}

/** Clears the toast (switching boards: an old error does not belong to the new board). */
export function clearToast() {
  hideToast();
}

export function showError(err) {
  toast(err && err.message ? err.message : String(err), { kind: 'error' });
}

// Open disclosure panels; one document listener closes them on a click elsewhere.
const openPanels = new Map(); // panel -> close()
document.addEventListener('click', (event) => {
  for (const [panel, close] of [...openPanels]) {
    if (!panel.isConnected || !panel.contains(event.target)) close(event.target);
  }
});

// Escape closes the topmost thing: an open panel that is on top (and gives the focus back
// to its button if it was inside). A panel is not on top when a modal dialog opened over it,
// nor when its button is not shown (on a wide screen the filters are always out, so "open"
// means nothing there): then Escape is left to the dialog, which closes itself.
const onTop = (panel) => {
  if (!panel.isConnected || !panel.classList.contains('open')) return false;
  if (panel.button && !panel.button.getClientRects().length) return false;
  const modal = topModal();
  return !modal || modal.contains(panel);
};
document.addEventListener('keydown', (event) => {
  if (event.key !== 'Escape' || !openPanels.size) return;
  const shown = [...openPanels].filter(([panel]) => onTop(panel));
  // A panel no longer in the page (its board was left) is forgotten.
  for (const [panel, close] of [...openPanels]) if (!panel.isConnected) close(null);
  if (!shown.length) return;
  event.preventDefault();
  for (const [panel, close] of shown) {
    const inside = panel.contains(document.activeElement);
    close(null);
    if (inside) panel.button?.focus();
  }
});

/**
 * A button that opens and closes a panel (a menu on a phone, say): aria-expanded follows,
 * and Escape, a choice in it or a click elsewhere closes it.
 */
export function disclosure(button, panel) {
  const set = (open) => {
    panel.classList.toggle('open', open);
    button.setAttribute('aria-expanded', String(open));
    if (open) openPanels.set(panel, (target) => { if (!target || (target !== button && !button.contains(target))) set(false); });
    else openPanels.delete(panel);
  };
  panel.button = button;
  button.addEventListener('click', () => set(!panel.classList.contains('open')));
  // A choice made in the menu closes it.
  panel.addEventListener('click', (event) => {
    if (event.target.closest('button, a') && panel.classList.contains('open')) set(false);
  });
  return { close: () => set(false), open: () => set(true) };
}

function ask(build) {
  const dialog = document.getElementById('ask-dialog');
  return new Promise((resolve) => {
    let result = null;
    const done = (value) => {
      result = value;
      dialog.close();
    };
    mount(dialog, build(done));
    dialog.addEventListener('close', () => resolve(result), { once: true });
    dialog.showModal();
  });
}

/** Yes or no; resolves `true` only on the confirming button. */
export function confirmDialog(message, confirmLabel = 'Delete', { danger = true } = {}) {
  return ask((done) =>
    h('form', { method: 'dialog', class: 'ask', on: { submit: (e) => { e.preventDefault(); done(true); } } },
      h('p', { text: message }),
      h('div', { class: 'actions' },
        h('button', { type: 'button', on: { click: () => done(false) }, text: 'Cancel' }),
        h('button', { type: 'submit', class: danger ? 'danger' : 'primary', text: confirmLabel, autofocus: true }))),
  ).then((v) => v === true);
}

/**
 * One line of text; resolves the trimmed text, or null when cancelled. `maxlength`: the
 * field's character limit (the caller's, from rules.js).
 */
export function promptDialog(label, value = '', { submitLabel = 'Save', required = true, maxlength } = {}) {
  return ask((done) => {
    const input = h('input', { type: 'text', required, maxlength, 'aria-label': label, props: { value } });
    return h('form', { class: 'ask', on: { submit: (e) => { e.preventDefault(); done(input.value.trim()); } } },
      h('label', { text: label }, input),
      h('div', { class: 'actions' },
        h('button', { type: 'button', on: { click: () => done(null) }, text: 'Cancel' }),
        h('button', { type: 'submit', text: submitLabel })));
  });
}

function shownValue(value) {
  if (value === null || value === undefined || value === '') return '(empty)';
  if (Array.isArray(value)) return value.length ? value.join(', ') : '(none)';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/**
 * A guarded write found the field moved on another device. Shows both values and
 * resolves `'mine'` (write mine over theirs), `'theirs'` (take theirs) or null (keep
 * editing, nothing decided).
 */
export function conflictDialog(field, mine, theirs) {
  return ask((done) =>
    h('form', { class: 'ask conflict', on: { submit: (e) => e.preventDefault() } },
      h('h2', { text: 'Changed on another device' }),
      h('p', { text: `“${field}” was changed somewhere else while you were editing it.` }),
      h('div', { class: 'conflict-values' },
        h('section', {},
          h('h3', { text: 'Now saved' }),
          h('pre', { class: 'conflict-current', text: shownValue(theirs) })),
        h('section', {},
          h('h3', { text: 'Yours' }),
          h('pre', { class: 'conflict-mine', text: shownValue(mine) }))),
      h('div', { class: 'actions' },
        h('button', { type: 'button', on: { click: () => done(null) }, text: 'Keep editing' }),
        h('button', { type: 'button', on: { click: () => done('theirs') }, text: 'Use theirs' }),
        h('button', { type: 'button', class: 'primary', on: { click: () => done('mine') }, text: 'Save mine' }))),
  );
}

export function formatTime(ms) {
  return ms ? new Date(ms).toLocaleString() : '';
}

/** A card's title in quotes for a sentence, shortened so a toast stays one line or two. */
export function named(title) {
  const t = String(title || '').trim();
  return `‘${t.length > 60 ? `${t.slice(0, 57)}…` : t}’`;
}
