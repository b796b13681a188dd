// What this browser keeps of an account between visits, in IndexedDB (plain API, one
// database, one object store): the sync core's outbox (the writes not yet answered) and the
// last confirmed account (the core's snapshot), each under a name derived from the key, so
// that another key never sees them. Both survive a reload, a browser restart and a refused
// key; only "Forget key" removes them.

const DB = 'workboard';
const STORE = 'kept';

let opening = null;
function db() {
  opening ||= new Promise((resolve, reject) => {
    const req = indexedDB.open(DB, 1);
    req.onupgradeneeded = () => req.result.createObjectStore(STORE);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
  return opening;
}

async function run(mode, fn) {
  const tx = (await db()).transaction(STORE, mode);
  const req = fn(tx.objectStore(STORE));
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve(req?.result);
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error);
  });
}

const read = (name) => run('readonly', (s) => s.get(name));
const write = (name, value) => run('readwrite', (s) => s.put(value, name));
const remove = (name) => run('readwrite', (s) => s.delete(name));

/** A short name for a key's account: its SHA-256, so the key itself is not stored twice. */
async function nameOf(key) {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(key));
  return [...new Uint8Array(digest).slice(0, 12)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/** What is kept for one key: the outbox's storage (the core's OutboxStorage interface) and
 * the snapshot of the account. */
export async function keptFor(key) {
  const name = await nameOf(key);
  const outboxName = `outbox:${name}`;
  const snapshotName = `snapshot:${name}`;
  return {
    /** @type {import('./core/outbox.js').OutboxStorage} */
    outbox: {
      load: async () => (await read(outboxName)) || [],
      save: (entries) => write(outboxName, entries),
    },
    loadSnapshot: () => read(snapshotName).catch(() => null),
    saveSnapshot: (doc) => write(snapshotName, doc).catch(() => {}),
    /** "Forget key": nothing of this key stays in the browser. */
    async forget() {
      await remove(outboxName);
      await remove(snapshotName);
    },
  };
}
