// The outbox: every write waits here, in order, until the server has answered it. Each entry
// carries its own Idempotency-Key, made when it was queued and sent again on every retry, so
// a reply lost after the server committed is answered from the server's memory instead of
// applied twice. One entry is in flight at a time, so the server applies them in the order
// the user made them. What happens to an entry depends only on its reply:
//   2xx (fresh or replayed)     leaves; `applied`
//   409 naming a field          leaves; `conflict` with both values (unless it had landed)
//   401                          everything stays; the outbox stops; `auth`
//   other 4xx                    leaves; `refused`
//   no reply, 5xx, 408, 429, 409 `idempotency_key_in_flight` (the same key still running)
//                                stays; retried after a backoff

import { backoffDelay } from './backoff.js';
import { alreadyApplied } from './ops.js';

/**
 * Where the outbox keeps its entries between runs. `load` gives back what `save` stored
 * last (or [] the first time); `save` replaces it whole and resolves once it is kept.
 * @typedef {object} OutboxStorage
 * @property {() => Promise<import('./ops.js').Entry[]>} load
 * @property {(entries: import('./ops.js').Entry[]) => Promise<void>} save
 */

/** Entries kept in memory only: they last as long as the process. @returns {OutboxStorage} */
export function memoryStorage() {
  let kept = [];
  return {
    load: async () => structuredClone(kept),
    save: async (entries) => {
      kept = structuredClone(entries);
    },
  };
}

const RETRIED = new Set([0, 408, 429]);
/** Worth sending again: no reply, the server busy or out of allowance, or this entry's key
 * still running on the server (a retry that overtook its first try). */
const retried = (err) => RETRIED.has(err.status) || err.status >= 500 ||
  (err.status === 409 && (err.body.code === 'idempotency_key_in_flight' || typeof err.body.field !== 'string'));

/**
 * @param {object} o
 * @param {ReturnType<import('./http.js').createHttp>} o.http
 * @param {OutboxStorage} o.storage
 * @param {{setTimeout: Function, clearTimeout: Function}} o.timers
 * @param {import('./backoff.js').Backoff} [o.backoff]
 * @param {object} o.on  callbacks: changed(), applied(entry, reply), conflict(entry, err),
 *   refused(entry, err), auth(err), waiting(err, delay)
 */
export function createOutbox({ http, storage, timers, backoff, on }) {
  /** @type {import('./ops.js').Entry[]} */
  let entries = [];
  let running = false;
  let stopped = true;
  let authStopped = false;
  let attempt = 0;
  let timer = null;
  let saving = Promise.resolve();
  const idle = new Set();

  // Saves run one after another, each with the list as it is when it starts.
  const save = () => (saving = saving.then(() => storage.save(entries)).catch(() => {}));

  function settleIdle() {
    if (entries.length && !authStopped && !stopped) return;
    for (const resolve of idle) resolve();
    idle.clear();
  }

  async function remove(entry) {
    entries = entries.filter((e) => e !== entry);
    await save();
    on.changed();
  }

  async function run() {
    if (running || stopped || authStopped) return;
    running = true;
    try {
      while (entries.length && !stopped && !authStopped) {
        const entry = entries[0];
        const { method, path, body } = entry.request;
        try {
          const reply = await http.request(method, path, body, { idempotencyKey: entry.key });
          attempt = 0;
          await remove(entry);
          on.applied(entry, reply);
        } catch (err) {
          if (err.status === undefined) throw err;
          if (err.status === 401) {
            authStopped = true;
            on.auth(err);
          } else if (retried(err)) {
            const delay = backoffDelay(attempt, backoff);
            attempt += 1;
            on.waiting(err, delay);
            if (timer) timers.clearTimeout(timer);
            timer = timers.setTimeout(() => {
              timer = null;
              run();
            }, delay);
            return;
          } else {
            attempt = 0;
            // Decided before the entry leaves, so that its change never flickers away.
            const landed = await alreadyApplied(entry, err, http);
            await remove(entry);
            if (landed) on.applied(entry, { status: err.status, data: null, replayed: false });
            else if (err.isConflict) on.conflict(entry, err);
            else on.refused(entry, err);
          }
        }
      }
    } finally {
      running = false;
      settleIdle();
    }
  }

  function kick() {
    if (timer) {
      timers.clearTimeout(timer);
      timer = null;
    }
    attempt = 0;
    run();
  }

  return {
    /** Loads what storage kept (entries queued before a reload or a crash). */
    async open() {
      entries = await storage.load();
      stopped = false;
      on.changed();
    },
    /** The entries waiting, oldest first (read only). */
    get entries() {
      return entries;
    },
    /** Whether a 401 stopped the outbox (its entries are kept). */
    get authStopped() {
      return authStopped;
    },
    /** Queues an entry; resolves once storage keeps it, and starts sending if idle. */
    async push(entry) {
      entries.push(entry);
      on.changed();
      await save();
      if (!timer) run();
    },
    /** Sends now, without waiting out a backoff (the network came back). */
    kick,
    /** Starts again after a 401, once the key is good again. */
    resume() {
      authStopped = false;
      stopped = false;
      kick();
    },
    stop() {
      stopped = true;
      if (timer) timers.clearTimeout(timer);
      timer = null;
      settleIdle();
    },
    /** Resolves when the outbox is empty (or stopped, or stopped by a 401). */
    idle() {
      return new Promise((resolve) => {
        idle.add(resolve);
        settleIdle();
      });
    },
    /** Resolves once every save so far is kept. */
    flushed: () => saving,
  };
}
