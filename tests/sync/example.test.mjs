// The README's example script runs as written against a real server: once as Node runs it
// here, and once with a WebSocket (Node 22's own, or Node 20's behind its flag), so that both
// the socket and the polling paths of the sync core are exercised by a separate process.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'node:test';
import { promisify } from 'node:util';

import { apiClient } from './helpers.mjs';
import { ROOT, startServer } from './server.mjs';

const run = promisify(execFile);

for (const [name, flags, state] of [
  ['without a WebSocket (polling)', ['--no-experimental-websocket'], 'polling'],
  ['with a WebSocket (the change socket)', ['--experimental-websocket'], 'live'],
]) {
  test(`examples/sync-client.mjs runs as written, ${name}`, async (t) => {
    const server = await startServer(t);
    const dir = await mkdtemp(path.join(tmpdir(), 'workboard-example-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const outbox = path.join(dir, 'outbox.json');
    const { stdout } = await run(process.execPath, [...flags, 'examples/sync-client.mjs'], {
      cwd: ROOT,
      env: { ...process.env, WORKBOARD_URL: server.url, WORKBOARD_KEY: server.key, WORKBOARD_OUTBOX: outbox },
      timeout: 60000,
    });
    assert.deepEqual(stdout.trim().split('\n'), [
      'read: 0 boards, 0 cards',
      'created: Water the plants (priority 1), 0 pending',
      `followed: the other device's title arrived (${state})`,
      'offline: shown at once as "Water the roses", 1 pending',
      'conflict on title: you saw "Water the garden", wrote "Water the roses", the server has "Water the lawn"',
      'resolved: the server now holds "Water the roses"',
      'done',
    ]);
    assert.deepEqual(JSON.parse(await readFile(outbox, 'utf8')), [], 'the outbox file is left empty');
    const { projects } = await apiClient(server.url, server.key).get('/projects');
    assert.deepEqual(projects, [], 'the example deleted its board');
  });
}
