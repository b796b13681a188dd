// What the page says about sync: the header's state (live, offline with N pending, sending,
// key refused), the conflict choice for a queued edit another device overtook, a toast
// naming an edit the server refused, the quiet "not sent yet" marks on what is waiting, and
// the service worker that lets the page open without a network (sw.js).

import { readable } from './api.js';
import { conflictDialog, named, toast } from './ui.js';
import { drafts } from './drafts.js';
import { fieldLabel } from './rules.js';

const WHAT = {
  createProject: 'Adding the board', updateProject: 'A change to the board', deleteProject: 'Deleting the board',
  createColumn: 'Adding the list', updateColumn: 'A change to the list', deleteColumn: 'Deleting the list',
  createTask: 'Adding the card', updateTask: 'A change to the card', deleteTask: 'Deleting the card',
  addTag: 'A tag on', removeTag: 'Removing a tag from', addComment: 'A comment on', deleteComment: 'Deleting a comment on',
  addChecklist: 'A checklist item on', updateChecklist: 'A checklist change on', deleteChecklist: 'Deleting a checklist item on',
  orderChecklist: 'The checklist order of', setPositions: 'The order of cards',
};

const $ = (id) => document.getElementById(id);

/** The header's words and state for the core's status (`{state, pending, refused}`) and
 * whether the browser says it has a network (an open socket may outlive the network for a
 * while, so the browser's word counts too). Sending: edits are waiting and the server is
 * being reached (connected, or connecting with a network). */
export function statusText({ state, pending, refused }, online = true) {
  const n = `${pending} pending`;
  if (refused) return [pending ? `Key refused · ${n}, kept here` : 'Key refused', 'refused'];
  if (state === 'stopped') return ['', 'off'];
  if (!online || state === 'offline') return [pending ? `Offline · ${n}` : 'Offline', 'offline'];
  if (pending) return [`Sending ${n}…`, 'replaying'];
  if (state === 'connecting') return ['Connecting…', 'connecting'];
  return ['Live', 'live'];
}

let last = null;
const again = () => last && showStatus(last);
window.addEventListener('online', again);
window.addEventListener('offline', again);

export function showStatus(status) {
  last = status;
  const [text, state] = statusText(status, navigator.onLine !== false);
  const el = $('live-status');
  el.textContent = text;
  el.dataset.state = state;
  el.dataset.pending = String(status.pending || 0);
  el.title = state === 'offline' && status.pending
    ? 'These edits are kept in this browser and sent when the server can be reached.'
    : '';
}

/** One conflict choice at a time: several queued edits may come back overtaken. */
let choosing = Promise.resolve();
export function onConflict(coreOf) {
  return (c) => {
    choosing = choosing.then(async () => {
      const label = fieldLabel(c.field);
      const choice = await conflictDialog(label, c.mine, c.theirs);
      if (choice === 'mine') {
        await coreOf().resolve(c, 'mine');
      } else if (choice === null && c.op === 'updateTask' && typeof c.mine === 'string') {
        // "Keep editing": what was typed waits in the card's draft, not lost.
        const key = `fields:${c.id}`;
        drafts.set(key, { ...(drafts.get(key, null) || {}), [c.field]: c.mine });
      }
    }).catch(() => {});
  };
}

/** A queued edit the server refused: said in words, with what it was about. */
export function onRefused({ entry, error, subject }) {
  const what = WHAT[entry.op] || 'An edit';
  const about = subject ? ` ${named(subject)}` : '';
  toast(`Not saved: ${what}${about}. ${readable(error.status, error.body)}`, { kind: 'error' });
}

/** A write sent while the server seemed reachable was not taken (no reply, or the server
 * busy or read-only for a while): it is kept and sent again, and said. */
export function onUnreachable(pending, error) {
  const edits = pending === 1 ? 'Your edit is' : `Your ${pending} edits are`;
  toast(!error || error.status === 0
    ? `The server could not be reached. ${edits} kept in this browser and sent once it answers; nothing you typed was lost.`
    : `${readable(error.status, error.body)} ${edits} kept in this browser and sent again shortly.`, { kind: 'error' });
}

/** The key was refused (revoked or expired, perhaps while offline): the edits stay. */
export function onAuth({ pending }) {
  toast(pending
    ? `The key is unknown, revoked or expired. Your ${pending} unsent edit${pending === 1 ? ' is' : 's are'} kept in this browser; nothing was sent or lost.`
    : 'The key is unknown, revoked or expired. Paste a valid key to continue.', { kind: 'error', timeout: 60000 });
}

/** Marks tiles (and the open card) with a write waiting; cheap enough to run per draw. */
export function markPending(ids) {
  for (const el of document.querySelectorAll('[data-pending]:not(#live-status)')) {
    if (!ids.has(el.dataset.id || el.dataset.cardId)) delete el.dataset.pending;
  }
  for (const id of ids) {
    for (const el of document.querySelectorAll(`.card[data-id="${CSS.escape(id)}"]`)) el.dataset.pending = '';
  }
  const dialog = $('card-dialog');
  if (dialog.dataset.cardId) {
    if (ids.has(dialog.dataset.cardId)) dialog.dataset.pending = '';
    else delete dialog.dataset.pending;
    // The open card's items (tags, checklist, subtasks, comments) are keyed by their ids.
    for (const li of dialog.querySelectorAll('li')) {
      if (ids.has(li.__key)) li.dataset.pending = '';
      else delete li.dataset.pending;
    }
  }
}

/** The service worker keeps the page's own files so that it opens offline. The files this
 * visit loaded (modules included, which the worker may not have seen on the very first
 * visit) are added to its cache once it runs. */
export async function installWorker() {
  if (!('serviceWorker' in navigator) || !window.caches) return;
  try {
    await navigator.serviceWorker.register('/sw.js', { scope: '/' });
    await navigator.serviceWorker.ready;
    const own = performance.getEntriesByType('resource')
      .map((e) => new URL(e.name))
      .filter((u) => u.origin === location.origin && u.pathname.startsWith('/assets/'))
      .map((u) => u.pathname);
    const cache = await caches.open('workboard-shell');
    await cache.addAll([...new Set(['/', ...own])]);
  } catch {
    // No worker (an old server, a private window): the page works online as before.
  }
}
