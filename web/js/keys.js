// The keys view: the account's keys with their access and expiry (`GET /keys`), issuing a
// key (read-only by default, with an optional expiry; shown once), and revoking one.

import { h, showError, toast, formatTime, mount } from './ui.js';

function expiry(key) {
  if (key.expiresAt === null || key.expiresAt === undefined) return 'never expires';
  return key.expiresAt <= Date.now()
    ? `expired ${formatTime(key.expiresAt)}`
    : `expires ${formatTime(key.expiresAt)}`;
}

export function createKeys(ctx) {
  const dialog = document.getElementById('keys-dialog');
  const list = h('ul', { class: 'keys-list' });
  const issued = h('div', { class: 'key-issued', hidden: true });
  const label = h('input', { id: 'key-label', type: 'text', maxlength: '40', placeholder: 'Script or device' });
  const access = h('select', { id: 'key-access' },
    h('option', { value: 'read', text: 'Read only' }),
    h('option', { value: 'full', text: 'Full' }));
  const expires = h('input', { id: 'key-expires', type: 'datetime-local' });
  const error = h('p', { class: 'error', role: 'alert' });

  async function draw() {
    let keys;
    try {
      keys = await ctx.ops.keys();
    } catch (err) {
      showError(err);
      return;
    }
    mount(list, ...keys.map((key) => h('li', { 'data-key': key.id },
      h('span', { class: 'key-name', text: key.label || key.prefix }),
      h('code', { class: 'muted', text: `${key.prefix}…` }),
      h('span', { class: ['pill', `access-${key.access}`], text: key.access === 'read' ? 'read only' : 'full' }),
      h('span', { class: 'muted key-expiry', text: expiry(key) }),
      key.current && h('span', { class: 'pill', text: 'this browser' }),
      !key.current && h('button', { type: 'button', class: 'small', text: 'Revoke', on: { click: async (event) => {
        event.currentTarget.disabled = true;
        try {
          await ctx.ops.revokeKey(key.id);
          toast(`Revoked ${key.label || key.prefix}.`);
        } catch (err) {
          showError(err);
        }
        draw();
      } } }))));
  }

  async function issue(event) {
    event.preventDefault();
    error.textContent = '';
    const body = { access: access.value };
    if (label.value.trim()) body.label = label.value.trim();
    if (expires.value) body.expiresAt = new Date(expires.value).getTime();
    try {
      const made = await ctx.ops.issueKey(body);
      mount(issued,
        h('p', { text: 'The new key, shown this once: copy it now.' }),
        h('input', { id: 'key-new', type: 'text', readonly: true, value: made.key, on: { focus: (e) => e.target.select() } }));
      issued.hidden = false;
      label.value = '';
      expires.value = '';
      draw();
    } catch (err) {
      error.textContent = err.message;
    }
  }

  mount(dialog, h('div', { class: 'keys' },
    h('header', { class: 'dialog-head' },
      h('h2', { id: 'keys-title', text: 'Keys' }),
      h('button', { type: 'button', class: 'icon-button', 'aria-label': 'Close', text: '×', on: { click: () => dialog.close() } })),
    h('p', { class: 'muted', text: 'One key per device or script. A read-only key can read and follow changes, never write; an expired key stops working at its moment.' }),
    list,
    h('form', { class: 'key-form', on: { submit: issue } },
      h('label', { for: 'key-label', text: 'Label' }), label,
      h('label', { for: 'key-access', text: 'Access' }), access,
      h('label', { for: 'key-expires', text: 'Expires (optional)' }), expires,
      h('button', { type: 'submit', id: 'key-issue', text: 'Issue key' }),
      error),
    issued));

  return {
    async show() {
      mount(list);
      issued.hidden = true;
      error.textContent = '';
      dialog.showModal();
      await draw();
    },
  };
}
