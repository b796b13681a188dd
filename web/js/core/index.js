// The sync core: Workboard's client-side protocol in one place, with nothing of the page in
// it (no DOM, no window). It reads the account, follows `/changes` as the change socket
// nudges, and sends every write through an ordered outbox with an Idempotency-Key, showing
// queued writes at once and taking them back when the server refuses them. The web client
// and scripts under Node use the same module, passing their own fetch, WebSocket, timers
// and outbox storage.
//
//   import { createSyncClient } from './web/js/core/index.js';
//   const client = createSyncClient({ baseUrl: 'http://127.0.0.1:8080', key: 'wb_...' });
//   await client.start();                       // the first read; then it follows
//   const id = await client.createTask({ columnId, title: 'Water the plants' });
//   client.on('conflict', (c) => client.resolve(c, 'mine'));
//   await client.settled();                     // everything queued has been answered

import { createFollower } from './follow.js';
import { createHttp } from './http.js';
import { newId, newKey } from './ids.js';
import { OPS, guard, overlay, afterOf } from './ops.js';
import { createOutbox, memoryStorage } from './outbox.js';
import { createReplica, loadDocument, toDocument } from './replica.js';

export { SyncError } from './http.js';
export { backoffDelay } from './backoff.js';
export { newId, newKey } from './ids.js';
export { memoryStorage } from './outbox.js';
export { applyChanges, applyCutoff, changesPath, createReplica, toDocument } from './replica.js';

/**
 * @typedef {object} SyncOptions
 * @property {string} baseUrl  the server (`http://host:port`, no `/api/v1`); a page passes `location.origin`
 * @property {string} key      a bearer key
 * @property {typeof fetch} [fetch]       default: the global one
 * @property {any} [WebSocket]            a WebSocket constructor; default the global one; none: poll
 * @property {import('./outbox.js').OutboxStorage} [storage]  default: in memory
 * @property {{setTimeout: Function, clearTimeout: Function}} [timers]
 * @property {import('./replica.js').Completed} [completed]  which finished cards to hold (default `all`)
 * @property {import('./backoff.js').Backoff} [backoff]  for reconnects and resends
 * @property {number} [pollInterval]  ms between polls when there is no WebSocket (default 5000)
 * @property {{now: number, projects: any[]}} [snapshot]  the account as `snapshot()` gave it
 *   last time (kept by the caller): shown at once, offline too, and followed from its `now`
 *
 * @typedef {object} Conflict  a guarded write found another value; nothing of it landed
 * @property {import('./ops.js').Entry} entry
 * @property {string} op       e.g. `updateTask`
 * @property {string} id       the record's id
 * @property {string} field
 * @property {any} before      the value the user saw
 * @property {any} mine        the value the user set
 * @property {any} theirs      the value the server holds now
 * @property {import('./http.js').SyncError} error
 *
 * @typedef {object} Status
 * @property {import('./follow.js').FollowState} state
 * @property {number} pending   entries waiting in the outbox
 * @property {boolean} replaying  the outbox is sending while connected
 */

/** @param {SyncOptions} options */
export function createSyncClient(options) {
  const {
    baseUrl, key, fetch: fetchImpl = globalThis.fetch, WebSocket: Socket = globalThis.WebSocket,
    storage = memoryStorage(), completed = 'all', backoff, pollInterval, snapshot,
    timers = { setTimeout: (fn, ms) => setTimeout(fn, ms), clearTimeout: (t) => clearTimeout(t) },
  } = options;
  const http = createHttp({ baseUrl, key, fetch: fetchImpl });
  const replica = createReplica({ completed });
  if (snapshot) loadDocument(replica, snapshot);
  const listeners = new Map();
  let view = null;
  let state = 'stopped';
  let lastStatus = '';
  let changeQueued = false;

  function emit(type, payload) {
    for (const fn of listeners.get(type) || []) fn(payload);
  }

  /** The view is recomputed lazily, and listeners hear once per turn however much changed. */
  function changed() {
    view = null;
    status();
    if (changeQueued) return;
    changeQueued = true;
    queueMicrotask(() => {
      changeQueued = false;
      emit('change');
    });
  }

  function status(detail) {
    const s = { state, pending: outbox.entries.length, replaying: outbox.entries.length > 0 && (state === 'live' || state === 'polling') };
    const text = JSON.stringify(s);
    if (text === lastStatus && !detail) return;
    lastStatus = text;
    emit('status', detail ? { ...s, detail } : s);
  }

  const outbox = createOutbox({
    http,
    storage,
    timers,
    backoff,
    on: {
      changed,
      applied(entry, reply) {
        OPS[entry.op].confirm(replica, entry.args, reply.data);
        changed();
        emit('applied', { entry, replayed: reply.replayed, status: reply.status, data: reply.data });
        // The reply carries the record; the change feed brings what it touched besides
        // (a parent's subtasks completed, the project's `updatedAt`).
        if (!outbox.entries.length) follower.pull().catch(() => {});
      },
      conflict(entry, error) {
        changed();
        const sent = entry.request.body?.[error.body.field];
        emit('conflict', {
          entry, op: entry.op, id: entry.args.id ?? entry.args.itemId ?? entry.args.taskId, field: error.body.field,
          before: sent && typeof sent === 'object' && 'before' in sent ? sent.before : undefined,
          mine: afterOf(sent), theirs: error.body.current, error,
        });
      },
      refused(entry, error) {
        changed();
        emit('error', { entry, op: entry.op, error });
      },
      auth(error) {
        status();
        refused(error);
      },
      waiting(error, delay) {
        status({ error, retryIn: delay });
      },
    },
  });

  const follower = createFollower({
    http,
    replica,
    WebSocket: Socket,
    timers,
    backoff,
    pollInterval,
    on: {
      changed,
      status(next, detail) {
        state = next;
        status(detail);
      },
      auth(error) {
        outbox.stop();
        refused(error);
      },
      live: () => outbox.kick(),
    },
  });

  /** The key was refused (by the outbox or the follower): said once until `resume()`. */
  let keyRefused = false;
  function refused(error) {
    if (keyRefused) return;
    keyRefused = true;
    emit('auth', { error });
  }

  /** Queues one write and shows it at once. @returns {Promise<void>} once storage keeps it */
  function queue(op, args) {
    return outbox.push({ key: newKey(), op, args, request: OPS[op].request(args), queuedAt: Date.now() });
  }

  const current = () => (view ||= overlay(replica, outbox.entries));
  const seen = (map, id, options) => (options?.guarded === false ? null : current()[map].get(id));
  const itemOf = (taskId, itemId) => current().tasks.get(taskId)?.checklist.find((k) => k.id === itemId);

  const client = {
    /** Listens to `change`, `status`, `conflict`, `error` (a refused write), `auth` (the key
     * was refused: the outbox is kept and stopped) or `applied`. @returns {() => void} */
    on(type, fn) {
      if (!listeners.has(type)) listeners.set(type, new Set());
      listeners.get(type).add(fn);
      return () => listeners.get(type).delete(fn);
    },

    /** Loads the kept outbox, reads the account (if the server answers) and starts following
     * and sending. Resolves once both have been tried; a server out of reach is not an error. */
    async start() {
      await outbox.open();
      follower.start();
      try {
        await follower.pull();
      } catch (err) {
        if (err.status === 401) throw err;
      }
      outbox.kick();
    },
    stop() {
      follower.stop();
      outbox.stop();
    },
    /** The network is back: reconnect and resend now rather than after the backoff. */
    online() {
      follower.online();
      outbox.kick();
    },
    /** Starts sending again after an `auth` event. */
    resume() {
      keyRefused = false;
      follower.start();
      outbox.resume();
    },
    /** Catches up with `/changes` now. */
    pull: () => follower.pull(),
    /** Resolves once the outbox is empty (or stopped) and a catch-up after it has landed. */
    async settled() {
      for (;;) {
        await outbox.idle();
        await follower.pull();
        if (!outbox.entries.length || outbox.authStopped || state === 'stopped') return;
      }
    },

    /** What to show: the confirmed account with every queued write on top. */
    get view() {
      return current();
    },
    /** The view as a whole-account document (sorted by position). */
    document: () => toDocument(current(), replica.now),
    /** The server's account as last confirmed, queued writes left out. */
    get confirmed() {
      return replica;
    },
    /** The confirmed account as a document to keep and pass back as `snapshot` next time. */
    snapshot: () => toDocument(replica, replica.now),
    get pending() {
      return outbox.entries.length;
    },
    get entries() {
      return outbox.entries;
    },
    /** Whether a queued write touches the record with this id. */
    isPending(id) {
      return outbox.entries.some((e) => JSON.stringify(e.args).includes(`"${id}"`));
    },
    get status() {
      return JSON.parse(lastStatus || '{"state":"stopped","pending":0,"replaying":false}');
    },

    // Writes. Each returns once the outbox keeps it; creates give the id they named.

    async createProject({ columns = [], ...fields }) {
      const id = fields.id || newId('b_');
      const cols = columns.map((c) => (typeof c === 'string' ? { id: newId('c_'), name: c } : { id: newId('c_'), ...c }));
      await queue('createProject', { body: { ...fields, id, columns: cols } });
      return { id, columnIds: cols.map((c) => c.id) };
    },
    updateProject: (id, fields, o) => queue('updateProject', { id, body: guard(seen('projects', id, o), fields) }),
    deleteProject: (id) => queue('deleteProject', { id }),

    async createColumn(fields) {
      const id = fields.id || newId('c_');
      await queue('createColumn', { body: { ...fields, id } });
      return id;
    },
    updateColumn: (id, fields, o) => queue('updateColumn', { id, body: guard(seen('columns', id, o), fields) }),
    deleteColumn: (id) => queue('deleteColumn', { id }),

    async createTask(fields) {
      const id = fields.id || newId('t_');
      await queue('createTask', { body: { ...fields, id } });
      return id;
    },
    /** Sets fields of a card, each guarded with the value the view shows now (`{guarded:
     * false}` sends them bare). */
    updateTask: (id, fields, o) => queue('updateTask', { id, body: guard(seen('tasks', id, o), fields) }),
    /** Moves a card: `position`, and `columnId` when it changes lists. */
    moveTask: (id, { columnId, position }) => client.updateTask(id, { ...(columnId ? { columnId } : {}), position }),
    completeTask: (id, done = true) => client.updateTask(id, { completedAt: done ? Date.now() : null }),
    deleteTask: (id) => queue('deleteTask', { id }),

    async addTag(taskId, text) {
      const id = newId('g_');
      await queue('addTag', { taskId, body: { id, text } });
      return id;
    },
    removeTag: (taskId, tagId) => queue('removeTag', { taskId, tagId }),
    async addComment(taskId, text) {
      const id = newId('m_');
      await queue('addComment', { taskId, body: { id, text }, at: Date.now() });
      return id;
    },
    deleteComment: (taskId, commentId) => queue('deleteComment', { taskId, commentId }),
    /** @param {string} taskId @param {string} text @param {{done?: boolean, position?: number}} [at] */
    async addChecklistItem(taskId, text, { done, position } = {}) {
      const id = newId('k_');
      const body = { id, text, ...(done === undefined ? {} : { done }), ...(position === undefined ? {} : { position }) };
      await queue('addChecklist', { taskId, body });
      return id;
    },
    updateChecklistItem: (taskId, itemId, fields, o) =>
      queue('updateChecklist', { taskId, itemId, body: guard(o?.guarded === false ? null : itemOf(taskId, itemId), fields) }),
    deleteChecklistItem: (taskId, itemId) => queue('deleteChecklist', { taskId, itemId }),
    /** Puts a card's checklist in the order of `ids` (every item's id). */
    orderChecklist: (taskId, ids) => queue('orderChecklist', { taskId, body: { ids } }),
    /** Renumbers cards in place: `[{id, position}]`, no list changes. */
    setPositions: (positions) => queue('setPositions', { body: { positions } }),

    /** Settles a conflict: `mine` sends the user's value again, guarded with the value the
     * server holds now; `theirs` keeps the server's (the view shows it already). */
    async resolve(conflict, choice) {
      if (choice !== 'mine') return;
      const { entry, field, theirs } = conflict;
      const body = { ...entry.request.body, [field]: { before: theirs, after: conflict.mine } };
      await queue(entry.op, { ...entry.args, body });
    },
  };
  return client;
}

export { OPS, overlay, alreadyApplied, guard } from './ops.js';
export { createHttp };
