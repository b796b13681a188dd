// Following the server: the first read, then `/changes` with `since`, `holding` and
// `manifest=changed` whenever the change socket nudges (and on every (re)connection, to catch
// up on what was missed while away). The socket is opened with a single-use ticket and
// reconnects with backoff; a close with 4401 means the key was revoked. Where no WebSocket
// is to be had, the follower polls `/changes` instead (the reply is `{unchanged}` while
// nothing moved, so an idle poll is cheap).

import { backoffDelay } from './backoff.js';
import { SyncError } from './http.js';
import * as R from './replica.js';

/**
 * @typedef {'connecting'|'live'|'polling'|'offline'|'stopped'} FollowState
 */

/**
 * @param {object} o
 * @param {ReturnType<import('./http.js').createHttp>} o.http
 * @param {import('./replica.js').Replica} o.replica
 * @param {any} [o.WebSocket] a WebSocket constructor (the browser's, Node's); none: poll
 * @param {{setTimeout: Function, clearTimeout: Function}} o.timers
 * @param {import('./backoff.js').Backoff} [o.backoff]
 * @param {number} [o.pollInterval] ms between polls without a socket
 * @param {number} [o.pullRetry] ms before a failed catch-up is tried again
 * @param {object} o.on  callbacks: changed(), status(state, detail), auth(err), live()
 */
export function createFollower({ http, replica, WebSocket: Socket, timers, backoff, pollInterval = 5000, pullRetry = 3000, on }) {
  let socket = null;
  let stopped = true;
  let attempt = 0;
  let retryTimer = null;
  let pullTimer = null;
  let pollTimer = null;
  let pulling = null;
  let again = false;
  let pollFailed = false;

  const clear = (t) => t && timers.clearTimeout(t);

  /** The first read: the whole account, and the `now` to follow from. */
  async function readAll() {
    const doc = await http.get(`/projects?completed=${replica.completed}`);
    R.loadDocument(replica, doc);
  }

  /** One read at a time; a nudge during a read causes exactly one more. */
  function pull() {
    if (pulling) {
      again = true;
      return pulling;
    }
    pulling = (async () => {
      try {
        do {
          again = false;
          // Nothing read yet (no first read, no snapshot given): the whole account.
          if (!replica.now) {
            await readAll();
          } else {
            const reply = await http.get(R.changesPath({ now: replica.now, completed: replica.completed, holding: R.holding(replica) }));
            if (!R.applyChanges(replica, reply)) continue;
          }
          on.changed();
        } while (again && !stopped);
      } finally {
        pulling = null;
      }
    })();
    return pulling;
  }

  /** A failed catch-up is tried again after a while; a refused key ends following. */
  function quietPull() {
    clear(pullTimer);
    pullTimer = null;
    return pull().catch((err) => {
      if (err.status === 401) authFailed(err);
      else if (!stopped) pullTimer = timers.setTimeout(quietPull, pullRetry);
    });
  }

  function authFailed(err) {
    stop();
    on.auth(err);
  }

  function poll() {
    clear(pollTimer);
    pollTimer = null;
    if (stopped) return;
    pull()
      .then(() => {
        on.status('polling');
        // Back after a failure: the outbox need not wait out its own backoff.
        if (pollFailed) on.live();
        pollFailed = false;
      }, (err) => {
        if (err.status === 401) return authFailed(err);
        pollFailed = true;
        on.status('offline', { error: err, retryIn: pollInterval });
      })
      .finally(() => {
        if (!stopped) pollTimer = timers.setTimeout(poll, pollInterval);
      });
  }

  function socketUrl(ticket) {
    return `${http.baseUrl.replace(/^http/, 'ws')}/api/v1/live?ticket=${encodeURIComponent(ticket)}`;
  }

  async function connect() {
    clear(retryTimer);
    retryTimer = null;
    if (stopped) return;
    on.status('connecting');
    let ticket;
    try {
      ticket = (await http.post('/live/ticket')).ticket;
    } catch (err) {
      if (err.status === 401) return authFailed(err);
      return retry(err);
    }
    if (stopped) return;
    const ws = new Socket(socketUrl(ticket));
    socket = ws;
    ws.addEventListener('open', () => {
      if (socket !== ws) return;
      attempt = 0;
      on.status('live');
      on.live();
      quietPull();
    });
    ws.addEventListener('message', (event) => {
      let msg = null;
      try {
        msg = JSON.parse(event.data);
      } catch {
        return;
      }
      if (msg && msg.type === 'changed') quietPull();
    });
    ws.addEventListener('close', (event) => {
      if (socket !== ws) return;
      socket = null;
      if (stopped) return;
      if (event.code === 4401) {
        return authFailed(new SyncError(401, { code: 'revoked' }, 'This key was revoked on another device.'));
      }
      retry(null);
    });
    // An error is followed by a close, which decides.
    ws.addEventListener('error', () => {});
  }

  /** Waits 1 s, 2 s, 4 s … up to the ceiling (with jitter) before the next try. */
  function retry(err) {
    if (stopped || retryTimer) return;
    const delay = backoffDelay(attempt, backoff);
    attempt += 1;
    on.status('offline', { error: err, retryIn: delay });
    retryTimer = timers.setTimeout(connect, delay);
  }

  function stop() {
    stopped = true;
    for (const t of [retryTimer, pullTimer, pollTimer]) clear(t);
    retryTimer = pullTimer = pollTimer = null;
    if (socket) {
      const ws = socket;
      socket = null;
      ws.close();
    }
    on.status('stopped');
  }

  return {
    pull,
    get connected() {
      return Boolean(socket) && socket.readyState === 1;
    },
    start() {
      if (!stopped) return;
      stopped = false;
      attempt = 0;
      if (Socket) connect();
      else poll();
    },
    stop,
    /** The network is back (a browser's `online`, a page shown again): catch up or reconnect now. */
    online() {
      if (stopped) return;
      if (!Socket) return poll();
      if (socket) return quietPull();
      attempt = 0;
      connect();
    },
  };
}
