// The page's account on the sync core (core/index.js): every write goes through the core's
// outbox, kept in IndexedDB (kept.js), so it shows at once, survives a reload and is sent
// (in order, each with its own Idempotency-Key) whenever the server can be reached; the
// core follows `/changes` and its view (what the server confirmed, with the queued writes on
// top) is mirrored into the page's store, which the screens draw from. The last confirmed
// account is kept too, so a page opened without a network shows the boards as they were.
//
// The operations keep the shape the screens call (local.js offers the same on a file). While
// the server answers, a write resolves with its reply and rejects with its refusal (an
// ApiError, a 409 conflict included), as before: the screens handle them where they were
// made. Once the server cannot be reached, a write resolves as soon as it is queued and
// kept, and its refusal or conflict arrives later as an event (the hooks below), since the
// reply may come minutes later, after a reload.

import { createSyncClient } from './core/index.js';
import { ApiError, readable } from './api.js';
import { keptFor } from './kept.js';

/** Ids an entry touches, for the pending marks: the record, its card, what it creates. */
function touched(entry) {
  const { args } = entry;
  const ids = [args.id, args.taskId, args.body?.id, args.itemId, args.commentId, args.tagId];
  for (const p of args.body?.positions || []) ids.push(p.id);
  for (const c of args.body?.columns || []) ids.push(c.id);
  return ids.filter((id) => typeof id === 'string');
}

/**
 * Starts the account of `key`: what was kept is shown at once, then the server is read
 * (if it can be reached) and followed. Rejects only when the server refuses the key and
 * nothing is waiting to be sent.
 * @param {string} key
 * @param {ReturnType<import('./store.js').createStore>} store
 * @param {object} hooks  onStatus(status), onConflict(conflict), onRefused({entry, error,
 *   subject}), onAuth({error, pending})
 */
export async function startSynced(key, store, client, hooks) {
  const kept = await keptFor(key);
  const snapshot = await kept.loadSnapshot();
  const core = createSyncClient({
    baseUrl: location.origin,
    key,
    storage: kept.outbox,
    snapshot: snapshot || undefined,
  });

  /** Names of records gone from the view, for a refusal that comes after (deleted elsewhere). */
  const goneNames = new Map();

  /** The core's view into the store: only records that are not the same object are set. */
  function mirror() {
    const view = core.view;
    let moved = false;
    for (const name of ['projects', 'columns', 'tasks']) {
      const from = view[name];
      const to = store[name];
      for (const id of [...to.keys()]) {
        if (!from.has(id)) {
          const gone = to.get(id);
          goneNames.set(id, gone.title ?? gone.name);
          to.delete(id);
          moved = true;
        }
      }
      for (const [id, rec] of from) {
        const held = to.get(id);
        // The same record again (a reply, then the change feed) is not drawn again.
        if (held !== rec && !(held && JSON.stringify(held) === JSON.stringify(rec))) {
          to.set(id, rec);
          moved = true;
        }
      }
    }
    store.now = core.confirmed.now;
    if (moved) store.changed();
  }

  let snapshotTimer = null;
  const keepSnapshot = () => {
    clearTimeout(snapshotTimer);
    snapshotTimer = null;
    if (core.confirmed.now) kept.saveSnapshot(core.snapshot());
  };
  const keepSoon = () => {
    if (!snapshotTimer) snapshotTimer = setTimeout(keepSnapshot, 1000);
  };

  /** Writes whose maker waits for the reply: entry key -> {resolve, reject}. */
  const waiters = new Map();
  const release = () => {
    for (const w of waiters.values()) w.resolve();
    waiters.clear();
  };
  const answered = (entry, fn) => {
    const w = waiters.get(entry.key);
    if (!w) return false;
    waiters.delete(entry.key);
    fn(w);
    return true;
  };
  const apiError = (error) => new ApiError(error.status, error.body, readable(error.status, error.body));

  /** Replies wanted after their write was let go (one queued offline): entry key -> fn(data),
   * called with the reply's data, or with nothing when the write was refused. */
  const listeners = new Map();
  const heard = (entry, data = null) => {
    listeners.get(entry.key)?.(data);
    listeners.delete(entry.key);
    return false;
  };

  let pendingIds = new Set();
  let authRefused = false;
  const offs = [
    core.on('change', () => {
      pendingIds = new Set(core.entries.flatMap(touched));
      mirror();
      keepSoon();
    }),
    core.on('status', (s) => {
      // The server out of reach: what waits for a reply is kept, and its maker goes on.
      if (s.detail?.error || s.state === 'offline') {
        if (waiters.size && hooks.onUnreachable) hooks.onUnreachable(s.pending, s.detail?.error);
        release();
      }
      hooks.onStatus({ ...s, refused: authRefused });
    }),
    core.on('applied', ({ entry, data }) => {
      heard(entry, data);
      answered(entry, (w) => w.resolve());
    }),
    core.on('conflict', (c) => heard(c.entry) || answered(c.entry, (w) => w.reject(apiError(c.error))) || hooks.onConflict(c)),
    core.on('error', ({ entry, error }) => heard(entry) || answered(entry, (w) => w.reject(apiError(error)))
      || hooks.onRefused({ entry, error, subject: subjectOf(entry) })),
    core.on('auth', ({ error }) => {
      release();
      authRefused = true;
      hooks.onStatus({ ...core.status, pending: core.pending, refused: true });
      hooks.onAuth({ error, pending: core.pending });
    }),
  ];

  /** Words for what an entry was about: the card's (or list's, board's) name. */
  function subjectOf(entry) {
    const { args } = entry;
    const view = core.view;
    const id = args.taskId ?? args.id;
    const task = view.tasks.get(id) || core.confirmed.tasks.get(id);
    if (task) return task.title;
    const named = view.columns.get(id) || view.projects.get(id);
    if (named) return named.name;
    if (goneNames.has(id)) return goneNames.get(id);
    return args.body?.title || args.body?.name || args.body?.text || '';
  }

  mirror();
  try {
    await core.start();
  } catch (err) {
    if (!(err.status === 401 && core.pending)) {
      core.stop();
      for (const off of offs) off();
      throw err;
    }
    // A key refused with writes waiting: they are kept (with the account), and it is said.
    authRefused = true;
    hooks.onStatus({ ...core.status, pending: core.pending, refused: true });
    hooks.onAuth({ error: err, pending: core.pending });
  }
  mirror();
  keepSnapshot();

  const online = () => core.online();
  const visible = () => {
    if (document.visibilityState === 'visible') core.online();
    else keepSnapshot();
  };
  window.addEventListener('online', online);
  document.addEventListener('visibilitychange', visible);
  window.addEventListener('pagehide', keepSnapshot);

  const view = () => core.view;
  const taskReply = (id) => ({ task: view().tasks.get(id) });

  /** Queues a write (`start` calls the core, which queues at once) and waits for its reply
   * while the server can be reached; else, once it is kept. A create (`wait: false`) never
   * waits: its id is named here, so what follows can use it at once, and an add box is free
   * for the next entry while the reply is on its way; a refusal is said in a toast. */
  async function send(start, { wait = true, onReply } = {}) {
    const queued = start();
    const entry = core.entries.at(-1);
    if (onReply && entry) listeners.set(entry.key, onReply);
    const result = await queued;
    if (!wait) return result;
    const reachable = navigator.onLine !== false && !authRefused
      && ['live', 'polling', 'connecting'].includes(core.status.state);
    if (!entry || !reachable || !core.entries.includes(entry)) return result;
    await new Promise((resolve, reject) => waiters.set(entry.key, { resolve, reject }));
    return result;
  }
  let afterWrite = () => core.pull();
  const enc = encodeURIComponent;
  // Writes whose caller wrote its own guards (`{before, after}`) or meant them bare: the
  // core sends the body as given.
  const bare = { guarded: false };

  return {
    core,
    kind: 'remote',
    /** Ids with a write waiting in the outbox. */
    pendingIds: () => pendingIds,
    get pending() {
      return core.pending;
    },
    /** The core's status, and whether the server refused the key. */
    get status() {
      return { ...core.status, pending: core.pending, refused: authRefused };
    },
    set afterWrite(fn) {
      afterWrite = fn;
    },
    pull: () => core.pull(),
    close() {
      keepSnapshot();
      core.stop();
      for (const off of offs) off();
      window.removeEventListener('online', online);
      document.removeEventListener('visibilitychange', visible);
      window.removeEventListener('pagehide', keepSnapshot);
    },
    /** "Forget key": the outbox and the snapshot leave this browser. */
    forget: () => kept.forget(),

    async createProject(fields) {
      const { id } = await send(() => core.createProject(fields), { wait: false });
      return view().projects.get(id) || { id, ...fields };
    },
    updateProject: (id, fields) => send(() => core.updateProject(id, fields, bare)),
    deleteProject: (id) => send(() => core.deleteProject(id)),

    async createColumn(fields) {
      const id = await send(() => core.createColumn(fields), { wait: false });
      return view().columns.get(id) || { id, ...fields };
    },
    updateColumn: (id, fields) => send(() => core.updateColumn(id, fields, bare)),
    deleteColumn: (id) => send(() => core.deleteColumn(id)),

    async createTask(fields) {
      const id = await send(() => core.createTask(fields), { wait: false });
      return view().tasks.get(id) || { id, ...fields };
    },
    /** Also answers the reply's `next` (the occurrence a repeating card's completion made),
     * and `replied`, the reply's data once it comes (later, when the write was queued offline). */
    async updateTask(id, fields) {
      let data = null;
      let resolve;
      const replied = new Promise((r) => { resolve = r; });
      await send(() => core.updateTask(id, fields, bare), { onReply: (d) => { data = d; resolve(d); } });
      return { ...taskReply(id), next: data?.next ?? null, replied };
    },
    deleteTask: (id) => send(() => core.deleteTask(id)),

    async addTag(t, text) {
      await send(() => core.addTag(t.id, text));
      return taskReply(t.id);
    },
    async removeTag(t, index) {
      const tagId = t.tagIds[index];
      // A tag added with a card still being created has no id of its own yet.
      if (!tagId) throw Object.assign(new Error('That tag is still being saved; try again in a moment.'), { status: 0 });
      await send(() => core.removeTag(t.id, tagId));
    },
    async addComment(t, text) {
      await send(() => core.addComment(t.id, text));
      return taskReply(t.id);
    },
    deleteComment: (t, commentId) => send(() => core.deleteComment(t.id, commentId)),
    async addChecklist(t, text, at = {}) {
      await send(() => core.addChecklistItem(t.id, text, at));
      return taskReply(t.id);
    },
    updateChecklist: (t, itemId, fields) => send(() => core.updateChecklistItem(t.id, itemId, fields, bare)),
    deleteChecklist: (t, itemId) => send(() => core.deleteChecklistItem(t.id, itemId)),
    async orderChecklist(t, ids) {
      await send(() => core.orderChecklist(t.id, ids));
      return taskReply(t.id);
    },
    renumber: (cards) => send(() => core.setPositions(cards.map((c, i) => ({ id: c.id, position: (i + 1) * 1024 })))),

    /** Brings a deleted card back (with the subtasks deleted with it): shown once sent. */
    async restoreTask(t) {
      await send(() => core.updateTask(t.id, { cancelledAt: null }, bare));
    },

    // What needs the server itself: the server's undo and the recycle bin act on what the
    // server holds, so they wait for the queued writes to land first.

    async undo() {
      await needsSent();
      const reply = await client.post('/undo');
      if (reply.undone) await afterWrite();
      return reply;
    },
    async bin() {
      return (await client.get('/bin')).entries;
    },
    async restore(entryId) {
      await needsSent();
      await client.post(`/bin/${enc(entryId)}/restore`);
      await afterWrite();
    },
    usage: () => client.get('/usage'),
    keys: async () => (await client.get('/keys')).keys,
    issueKey: (body) => client.post('/keys', body),
    revokeKey: (id) => client.del(`/keys/${enc(id)}`),
    exportFile: () => client.download('/export'),
  };

  async function needsSent() {
    if (!core.pending) return;
    if (core.status.state !== 'live' && core.status.state !== 'polling') {
      throw Object.assign(new Error(`This needs the server, and ${core.pending} edit${core.pending === 1 ? ' is' : 's are'} still waiting to be sent. Try again once online.`), { status: 0 });
    }
    await core.settled();
  }
}
