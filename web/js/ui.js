// Small DOM helpers shared by the screens: an element builder, messages, and the modal
// questions (confirm, a text prompt, and the conflict choice of a guarded write).

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

/** A message at the bottom of the screen; errors stay until dismissed. */
export function toast(message, { kind = 'info', timeout } = {}) {
  const box = document.getElementById('toasts');
  const close = h('button', { type: 'button', class: 'icon-button', 'aria-label': 'Dismiss', text: '×' });
  const item = h('div', { class: ['toast', `toast-${kind}`] }, h('span', { text: message }), close);
  close.addEventListener('click', () => item.remove());
  box.append(item);
  const ms = timeout ?? (kind === 'error' ? 12000 : 4000);
  if (ms) setTimeout(() => item.remove(), ms);
  return item;
}

export function showError(err) {
  toast(err && err.message ? err.message : String(err), { kind: 'error' });
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
export function confirmDialog(message, confirmLabel = 'Delete') {
  return ask((done) =>
    h('form', { method: 'dialog', class: 'ask', on: { submit: (e) => { e.preventDefault(); done(true); } } },
      h('p', { text: message }),
      h('div', { class: 'actions' },
        h('button', { type: 'button', on: { click: () => done(false) }, text: 'Cancel' }),
        h('button', { type: 'submit', class: 'danger', text: confirmLabel, autofocus: true }))),
  ).then((v) => v === true);
}

/** One line of text; resolves the trimmed text, or null when cancelled. */
export function promptDialog(label, value = '', { submitLabel = 'Save', required = true, maxlength = 40 } = {}) {
  return ask((done) => {
    const input = h('input', { type: 'text', required, maxlength, 'aria-label': label, props: { value } });
    return h('form', { class: 'ask', on: { submit: (e) => { e.preventDefault(); done(input.value.trim()); } } },
      h('label', { text: label }, input),
      h('div', { class: 'actions' },
        h('button', { type: 'button', on: { click: () => done(null) }, text: 'Cancel' }),
        h('button', { type: 'submit', text: submitLabel })));
  });
}

function shown(value) {
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
          h('pre', { class: 'conflict-current', text: shown(theirs) })),
        h('section', {},
          h('h3', { text: 'Yours' }),
          h('pre', { class: 'conflict-mine', text: shown(mine) }))),
      h('div', { class: 'actions' },
        h('button', { type: 'button', on: { click: () => done(null) }, text: 'Keep editing' }),
        h('button', { type: 'button', on: { click: () => done('theirs') }, text: 'Use theirs' }),
        h('button', { type: 'button', class: 'primary', on: { click: () => done('mine') }, text: 'Save mine' }))),
  );
}

export function formatTime(ms) {
  return ms ? new Date(ms).toLocaleString() : '';
}
