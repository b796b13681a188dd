// What the sync core's tests share: clients with short backoffs, the server's account as a
// document to compare with a client's, a fetch that loses replies after the server answered
// them, and a probe for whether the server replays Idempotency-Keys.

import { createSyncClient } from '../../web/js/core/index.js';
import { apiClient, eventually } from '../e2e/harness.mjs';

export { apiClient, eventually };

/** Short waits, so that an outage of a second is retried many times. */
export const FAST = { backoff: { base: 40, max: 400 }, pollInterval: 100 };

/** A client of `server` (its fetch and storage may be replaced), stopped when the test ends. */
export function client(t, server, options = {}) {
  const c = createSyncClient({ baseUrl: server.url, key: server.key, ...FAST, ...options });
  t.after(() => c.stop());
  return c;
}

/** A document with what the server computes when it answers left out (`order`, `now`),
 * records sorted by id inside their parent, so that two reads of one state compare equal. */
export function normal(doc) {
  const byId = (a, b) => (a.id < b.id ? -1 : 1);
  return (doc.projects || []).map(({ columns = [], ...p }) => ({
    ...p,
    columns: [...columns].sort(byId).map(({ tasks = [], ...c }) => ({
      ...c,
      tasks: [...tasks].sort(byId).map(({ order: _order, ...task }) => task),
    })),
  })).sort(byId);
}

/** The server's account, every finished card included. */
export async function serverDocument(server) {
  return apiClient(server.url, server.key).get('/projects?completed=all');
}

/**
 * A fetch that, when `lose(request)` says so, lets the request reach the server and then
 * throws as if the connection dropped before the reply: a write committed but not known to
 * be. `lost` counts those; `replayed` counts replies marked `Idempotent-Replayed`.
 */
export function lossyFetch(lose) {
  const f = async (url, init = {}) => {
    const res = await fetch(url, init);
    if (res.headers.get('idempotent-replayed') === 'true') f.replayed += 1;
    if (init.method && init.method !== 'GET' && res.status < 500 && (await lose({ url, init, res }))) {
      await res.arrayBuffer();
      f.lost += 1;
      throw new TypeError('fetch failed (the test dropped the reply)');
    }
    return res;
  };
  f.lost = 0;
  f.replayed = 0;
  return f;
}

/** Whether the server answers a retried write from its memory (`Idempotent-Replayed`). */
export async function honoursIdempotencyKey(server) {
  const headers = { Authorization: `Bearer ${server.key}`, 'Content-Type': 'application/json', 'Idempotency-Key': 'probe-1' };
  const send = () => fetch(`${server.url}/api/v1/undo`, { method: 'POST', headers, body: '{}' });
  await (await send()).arrayBuffer();
  const again = await send();
  await again.arrayBuffer();
  return again.headers.get('idempotent-replayed') === 'true';
}
