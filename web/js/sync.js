// Live updates: the change socket (opened with a single-use ticket) nudges, and each nudge
// reads `/changes` with `since`, `holding` and `manifest=changed`. The socket reconnects
// with backoff, and every (re)connection catches up on what was missed while away.
// The query and the backoff are the sync core's (core/), which this page will move onto.

import { backoffDelay } from './core/backoff.js';
import { changesPath } from './core/replica.js';

export function createSync(client, store, { onStatus = () => {}, onFatal = () => {} } = {}) {
  let socket = null;
  let stopped = true;
  let attempt = 0;
  let retryTimer = null;
  let pulling = null;
  let again = false;

  /** One `/changes` read at a time; nudges during a read cause exactly one more. */
  async function pull() {
    if (pulling) {
      again = true;
      return pulling;
    }
    pulling = (async () => {
      try {
        do {
          again = false;
          const reply = await client.get(changesPath({ now: store.now, completed: store.completed, holding: store.holding() }));
          store.applyChanges(reply);
        } while (again && !stopped);
      } finally {
        pulling = null;
      }
    })();
    return pulling;
  }

  /** A failed catch-up waits for the next nudge or reconnection; a refused key ends sync. */
  let pullRetry = null;
  function quietPull() {
    clearTimeout(pullRetry);
    pullRetry = null;
    pull().catch((err) => {
      if (err.status === 401) {
        stopped = true;
        onFatal(err);
      } else if (!stopped) {
        pullRetry = setTimeout(quietPull, 3000);
      }
    });
  }

  function status(text, state) {
    onStatus(text, state);
  }

  async function connect() {
    clearTimeout(retryTimer);
    retryTimer = null;
    if (stopped) return;
    status('Connecting…', 'connecting');
    let ticket;
    try {
      ticket = (await client.post('/live/ticket')).ticket;
    } catch (err) {
      if (err.status === 401) {
        stopped = true;
        status('Key refused', 'offline');
        onFatal(err);
        return;
      }
      return retry();
    }
    if (stopped) return;
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    const ws = new WebSocket(`${scheme}://${location.host}/api/v1/live?ticket=${encodeURIComponent(ticket)}`);
    socket = ws;
    ws.addEventListener('open', () => {
      attempt = 0;
      status('Live', 'live');
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
        stopped = true;
        status('Key revoked', 'offline');
        onFatal(new Error('This key was revoked on another device.'));
        return;
      }
      retry();
    });
  }

  /** Waits 1 s, 2 s, 4 s … up to 30 s (with jitter) before the next try. */
  function retry() {
    if (stopped || retryTimer) return;
    const delay = backoffDelay(attempt);
    attempt += 1;
    status(navigator.onLine === false ? 'Offline' : `Reconnecting in ${Math.round(delay / 1000)} s`, 'offline');
    retryTimer = setTimeout(connect, delay);
  }

  const online = () => {
    if (stopped) return;
    if (socket) {
      quietPull();
    } else {
      attempt = 0;
      connect();
    }
  };
  const visible = () => {
    if (document.visibilityState === 'visible' && !stopped) {
      if (socket) quietPull();
      else online();
    }
  };

  return {
    pull,
    start() {
      if (!stopped) return;
      stopped = false;
      attempt = 0;
      window.addEventListener('online', online);
      document.addEventListener('visibilitychange', visible);
      connect();
    },
    stop() {
      stopped = true;
      clearTimeout(retryTimer);
      clearTimeout(pullRetry);
      retryTimer = null;
      window.removeEventListener('online', online);
      document.removeEventListener('visibilitychange', visible);
      if (socket) {
        const ws = socket;
        socket = null;
        ws.close();
      }
      status('', 'off');
    },
  };
}
