#!/usr/bin/env node
// A Workboard sync client in one script: connect, read, write through the outbox, follow
// another device's change, and settle a conflict. Run it against a server:
//
//   WORKBOARD_URL=http://127.0.0.1:8080 WORKBOARD_KEY=wb_... node examples/sync-client.mjs
//
// It makes a board named "Sync example", works on it and deletes it at the end. Node 22 has
// a WebSocket of its own, so the client follows the change socket; on Node 20 add
// `--experimental-websocket`, or the client polls `/changes` instead.

import { tmpdir } from 'node:os';
import path from 'node:path';

import { createSyncClient } from '../web/js/core/index.js';
import { jsonFileStorage } from './json-file-storage.mjs';

const baseUrl = process.env.WORKBOARD_URL || 'http://127.0.0.1:8080';
const key = process.env.WORKBOARD_KEY;
if (!key) {
  console.error('Set WORKBOARD_KEY to a key of the account (and WORKBOARD_URL to the server).');
  process.exit(2);
}

// Queued writes are kept in a file, so a script stopped mid-way sends them on its next run.
const storage = jsonFileStorage(process.env.WORKBOARD_OUTBOX || path.join(tmpdir(), 'workboard-example-outbox.json'));
const client = createSyncClient({ baseUrl, key, storage, pollInterval: 1000 });
client.on('error', ({ op, error }) => console.log(`refused: ${op}: ${error.message}`));
client.on('auth', ({ error }) => {
  console.error(`the key was refused (${error.status}); queued writes are kept in the outbox file`);
  process.exit(1);
});

/** Resolves when `check()` holds for the client's view (after any change). */
const until = (check) => new Promise((resolve) => {
  if (check()) return resolve();
  const off = client.on('change', () => check() && (off(), resolve()));
});

// 1. Connect and read: the whole account, then the client follows its changes.
await client.start();
console.log(`read: ${client.view.projects.size} boards, ${client.view.tasks.size} cards`);

// 2. Write: ids are named here, so a card can be edited before the server has seen it.
const { id: board, columnIds: [todo, done] } = await client.createProject({ name: 'Sync example', columns: ['To do', 'Done'] });
const card = await client.createTask({ columnId: todo, title: 'Water the plants' });
await client.updateTask(card, { priority: 1 });
await client.moveTask(card, { columnId: done, position: 1 });
await client.settled();
console.log(`created: ${client.view.tasks.get(card).title} (priority ${client.view.tasks.get(card).priority}), ${client.pending} pending`);

// 3. Follow: another device renames the card; the socket nudges, the client catches up.
const other = (method, route, body) => fetch(`${baseUrl}/api/v1${route}`, {
  method, headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body),
}).then((res) => res.json());
await other('PATCH', `/tasks/${card}`, { title: 'Water the garden' });
await until(() => client.view.tasks.get(card)?.title === 'Water the garden');
console.log(`followed: the other device's title arrived (${client.status.state})`);

// 4. A conflict: edit while stopped (as if offline), the other device edits the same field,
// reconnect. The edit is guarded with the title this client saw, so it does not overwrite.
client.stop();
await client.updateTask(card, { title: 'Water the roses' });
console.log(`offline: shown at once as "${client.view.tasks.get(card).title}", ${client.pending} pending`);
await other('PATCH', `/tasks/${card}`, { title: 'Water the lawn' });
const conflict = new Promise((resolve) => client.on('conflict', resolve));
await client.start();
const c = await conflict;
console.log(`conflict on ${c.field}: you saw "${c.before}", wrote "${c.mine}", the server has "${c.theirs}"`);
await client.resolve(c, 'mine'); // or leave it: the view already shows theirs
await client.settled();
const saved = await other('GET', `/tasks/${card}`);
console.log(`resolved: the server now holds "${saved.task.title}"`);

// Tidy up and stop.
await client.deleteProject(board);
await client.settled();
client.stop();
console.log('done');
