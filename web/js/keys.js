// The keys view: the account's keys with their access and expiry (`GET /keys`), issuing a
// key (read-only by default, with an optional expiry; shown once), and revoking one. A
// calendar key (it reads the calendar feed and nothing else) is shown with the feed's URL to
// copy into a calendar app, since calendar apps cannot send a key in a header.

import { h, showError, toast, formatTime, mount, announce } from './ui.js';
import { lengthOf } from './rules.js';

const ACCESS = { full: 'full', read: 'read only', calendar: 'calendar feed' };

/** The calendar feed's URL with `key` in it, on the server this page came from. */
export function feedUrl(key) {
  return `${location.origin}/api/v1/calendar.ics?key=${encodeURIComponent(key)}`;
}

/** Puts `text` on the clipboard; false when the page may not (an insecure origin). */
async function copy(text, input) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // Without the clipboard API (plain http on another host), the selected text and the
    // old command still copy.
    input.focus();
    input.select();
    return document.execCommand?.('copy') ?? false;
  }
}

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
  const label = h('input', { id: 'key-label', type: 'text', ...lengthOf('name-chars'), placeholder: 'Script or device' });
  const access = h('select', { id: 'key-access' },
    h('option', { value: 'read', text: 'Read only' }),
    h('option', { value: 'full', text: 'Full' }),
    h('option', { value: 'calendar', text: 'Calendar feed only' }));
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
      h('span', { class: ['pill', `access-${key.access}`], text: ACCESS[key.access] || key.access }),
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
      showIssued(await ctx.ops.issueKey(body));
      label.value = '';
      expires.value = '';
      draw();
    } catch (err) {
      error.textContent = err.message;
    }
  }

  /** The key just issued, shown this once; a calendar key with its feed's URL to copy. */
  function showIssued(made) {
    const key = h('input', { id: 'key-new', type: 'text', readonly: true, value: made.key, 'aria-label': 'The new key', on: { focus: (e) => e.target.select() } });
    if (made.access !== 'calendar') {
      mount(issued, h('p', { text: 'The new key, shown this once: copy it now.' }), key);
    } else {
      const url = h('input', { id: 'feed-url', type: 'text', readonly: true, value: feedUrl(made.key), 'aria-label': 'Calendar feed URL', on: { focus: (e) => e.target.select() } });
      const copied = h('span', { class: 'muted', role: 'status' });
      mount(issued,
        h('p', { text: 'Your calendar feed, shown this once: copy its address now. It holds a calendar key, which reads your deadlines and nothing else.' }),
        h('div', { class: 'feed-url' }, url,
          h('button', { type: 'button', id: 'feed-copy', class: 'small', text: 'Copy', on: { click: async () => {
            const done = await copy(url.value, url);
            copied.textContent = done ? 'Copied.' : 'Select the address and copy it.';
            if (done) announce('Feed address copied');
          } } }),
          copied),
        h('p', { class: 'muted feed-how', text: 'To subscribe, paste it into Google Calendar (Other calendars, +, From URL), Apple Calendar (File, New Calendar Subscription) or Thunderbird (New Calendar, On the Network). Add &alarm=30 to its end for a reminder 30 minutes before each deadline. Revoke the key to end the subscription.' }),
        h('details', {}, h('summary', { text: 'The key alone' }), key));
    }
    issued.hidden = false;
  }

  async function issueCalendar(event) {
    event.currentTarget.disabled = true;
    const button = event.currentTarget;
    try {
      showIssued(await ctx.ops.issueKey({ access: 'calendar', label: 'Calendar feed' }));
      draw();
    } catch (err) {
      error.textContent = err.message;
    } finally {
      button.disabled = false;
    }
  }

  mount(dialog, h('div', { class: 'keys' },
    h('header', { class: 'dialog-head' },
      h('h2', { id: 'keys-title', text: 'Keys' }),
      h('button', { type: 'button', class: 'icon-button', 'aria-label': 'Close', text: '×', on: { click: () => dialog.close() } })),
    h('p', { class: 'muted', text: 'One key per device or script. A read-only key can read and follow changes, never write; an expired key stops working at its moment.' }),
    list,
    h('section', { class: 'calendar-feed', 'aria-labelledby': 'calendar-feed-title' },
      h('h3', { id: 'calendar-feed-title', text: 'Calendar feed' }),
      h('p', { class: 'muted', text: 'See your cards\' deadlines in a calendar app: a calendar key goes in the feed\'s address, and reaches nothing else.' }),
      h('button', { type: 'button', id: 'calendar-issue', text: 'Issue a calendar key', on: { click: issueCalendar } })),
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
