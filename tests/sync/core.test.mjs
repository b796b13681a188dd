// The sync core's rules one at a time, against the real server: a conflict raises both
// values and takes the change back, a refused write is dropped with an error and the next
// one still lands, a refused key stops the outbox and keeps it; and the catch-up rules
// (the scoped manifest, the cutoff) on replies as the server shapes them.

import assert from 'node:assert/strict';
import test from 'node:test';

import { applyChanges, createReplica, memoryStorage, overlay } from '../../web/js/core/index.js';
import { apiClient, client, eventually } from './helpers.mjs';
import { startServer } from './server.mjs';

/** A client that hears of other devices' changes only when it asks. */
const deaf = { WebSocket: null, pollInterval: 3600000 };

test('a guarded edit that meets another device\'s value raises a conflict with both, and is taken back', async (t) => {
  const server = await startServer(t);
  const other = apiClient(server.url, server.key);
  const c = client(t, server, deaf);
  await c.start();
  const { columnIds: [col] } = await c.createProject({ name: 'Home', columns: ['To do'] });
  const id = await c.createTask({ columnId: col, title: 'Water the plants' });
  await c.settled();

  await other.patch(`/tasks/${id}`, { title: 'Water the garden' });
  const conflicts = [];
  c.on('conflict', (x) => conflicts.push(x));
  await c.updateTask(id, { title: 'Water the roses' });
  assert.equal(c.view.tasks.get(id).title, 'Water the roses', 'shown at once');
  await c.settled();

  assert.equal(conflicts.length, 1);
  const [x] = conflicts;
  assert.deepEqual([x.op, x.id, x.field, x.before, x.mine, x.theirs], ['updateTask', id, 'title', 'Water the plants', 'Water the roses', 'Water the garden']);
  assert.equal(c.view.tasks.get(id).title, 'Water the garden', 'the view shows what the server holds');
  assert.equal((await other.get(`/tasks/${id}`)).task.title, 'Water the garden', 'nothing was overwritten');

  await c.resolve(x, 'mine');
  await c.settled();
  assert.equal((await other.get(`/tasks/${id}`)).task.title, 'Water the roses', 'choosing mine sends it again');
  assert.equal(c.view.tasks.get(id).title, 'Water the roses');
});

test('a refused write leaves the outbox with an error event, its change taken back, and the next write lands', async (t) => {
  const server = await startServer(t);
  const c = client(t, server, deaf);
  await c.start();
  const { columnIds: [col] } = await c.createProject({ name: 'Home', columns: ['To do'] });
  const id = await c.createTask({ columnId: col, title: 'Call the plumber', deadline: '2026-03-01' });
  await c.settled();

  const errors = [];
  c.on('error', (e) => errors.push(e));
  await c.updateTask(id, { deadline: '2026-02-30' });
  await c.updateTask(id, { location: 'Kitchen' });
  assert.equal(c.view.tasks.get(id).deadline, '2026-02-30', 'shown at once');
  await c.settled();

  assert.equal(errors.length, 1);
  assert.equal(errors[0].error.status, 422);
  assert.equal(errors[0].error.body.field, 'deadline');
  const held = (await apiClient(server.url, server.key).get(`/tasks/${id}`)).task;
  assert.deepEqual([held.deadline, held.location], ['2026-03-01', 'Kitchen']);
  assert.deepEqual([c.view.tasks.get(id).deadline, c.view.tasks.get(id).location], ['2026-03-01', 'Kitchen']);
});

test('a revoked key stops the outbox and keeps its entries, with an auth event', async (t) => {
  const server = await startServer(t);
  const owner = apiClient(server.url, server.key);
  const issued = await owner.post('/keys', { label: 'phone' });
  const storage = memoryStorage();
  const c = client(t, { url: server.url, key: issued.key }, { ...deaf, storage });
  await c.start();
  const { columnIds: [col] } = await c.createProject({ name: 'Home', columns: ['To do'] });
  await c.settled();

  await owner.del(`/keys/${issued.id}`);
  const auth = [];
  c.on('auth', (e) => auth.push(e));
  const id = await c.createTask({ columnId: col, title: 'Written after the revoke' });
  await c.updateTask(id, { title: 'Still kept' });
  await eventually(() => auth.length === 1, { message: 'the auth event' });

  assert.equal(auth[0].error.status, 401);
  assert.equal(c.pending, 2, 'the outbox is kept');
  assert.deepEqual((await storage.load()).map((e) => e.op), ['createTask', 'updateTask'], 'and so is its storage');
  assert.equal(c.view.tasks.get(id).title, 'Still kept', 'the edits still show');
  const cards = (await owner.get('/projects?completed=all')).projects[0].columns[0].tasks;
  assert.deepEqual(cards, [], 'nothing was sent');

  // Following with the revoked key stops too, and says so once.
  const follower = client(t, { url: server.url, key: issued.key });
  const told = [];
  follower.on('auth', (e) => told.push(e));
  await assert.rejects(follower.start(), (err) => err.status === 401);
  await eventually(() => follower.status.state === 'stopped', { message: 'following to stop' });
  assert.equal(told.length, 1);
});

test('each entry is sent with its own Idempotency-Key, the same on every retry', async (t) => {
  const server = await startServer(t);
  const seen = [];
  let failNext = 2;
  const recording = async (url, init = {}) => {
    if (init.method && init.method !== 'GET' && !url.endsWith('/live/ticket')) {
      seen.push([init.method, new URL(url).pathname, init.headers['Idempotency-Key']]);
      // The first two sends of the first write never reach the server.
      if (failNext > 0) {
        failNext -= 1;
        throw new TypeError('fetch failed');
      }
    }
    return fetch(url, init);
  };
  const c = client(t, server, { ...deaf, fetch: recording });
  await c.start();
  const { columnIds: [col] } = await c.createProject({ name: 'Home', columns: ['To do'] });
  await c.createTask({ columnId: col, title: 'A' });
  await c.settled();

  assert.deepEqual(seen.map(([m, p]) => `${m} ${p}`), ['POST /api/v1/projects', 'POST /api/v1/projects', 'POST /api/v1/projects', 'POST /api/v1/tasks']);
  const keys = seen.map(([, , k]) => k);
  assert.ok(keys.every((k) => /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(k)), 'random UUIDs');
  assert.equal(new Set(keys.slice(0, 3)).size, 1, 'a retry sends the same key');
  assert.notEqual(keys[3], keys[0], 'another entry has another key');
});

test('catching up: a scoped manifest drops only its projects\' missing cards, and the cutoff drops cards finished before it', () => {
  const card = (id, projectId, completedAt = null) => ({ id, projectId, columnId: `c_${projectId}`, rev: 1, position: 0, completedAt, cancelledAt: null });
  const r = createReplica({ completed: 'recent' });
  for (const t of [card('t_a', 'b_1'), card('t_b', 'b_1'), card('t_c', 'b_2'), card('t_old', 'b_2', 100), card('t_new', 'b_2', 5000)]) r.tasks.set(t.id, t);
  applyChanges(r, {
    now: 9000, projects: [{ id: 'b_1', updatedAt: 8000 }], lists: [], cards: [], taskIds: ['t_a'], scoped: true, cutoff: 1000,
  });
  assert.deepEqual([...r.tasks.keys()].sort(), ['t_a', 't_c', 't_new'], 't_b left b_1\'s manifest; t_old finished before the cutoff');
  assert.equal(r.now, 9000);

  const all = createReplica({ completed: 'all' });
  all.tasks.set('t_old', card('t_old', 'b_2', 100));
  applyChanges(all, { now: 9500, projects: [], lists: [], cards: [], taskIds: ['t_old'], scoped: true, cutoff: 1000 });
  assert.ok(all.tasks.has('t_old'), 'with completed=all nothing ages out');
  assert.equal(applyChanges(all, { unchanged: true, now: 9999 }), false);
  assert.equal(all.now, 9999);
});

test('a queued write the change feed has already confirmed shows once', () => {
  const r = createReplica();
  const task = { id: 't_1', projectId: 'b_1', columnId: 'c_1', title: 'A', rev: 2, position: 0, completedAt: null, cancelledAt: null,
    tags: ['x'], tagIds: ['g_1'], checklist: [{ id: 'k_1', text: 'step', done: false, position: 0 }], comments: [{ id: 'm_1', text: 'hi', createdAt: 1 }] };
  r.projects.set('b_1', { id: 'b_1', name: 'P', position: 0, updatedAt: 1 });
  r.columns.set('c_1', { id: 'c_1', projectId: 'b_1', name: 'C', position: 0, updatedAt: 1 });
  r.tasks.set('t_1', task);
  const queued = [
    { op: 'createTask', args: { body: { id: 't_1', columnId: 'c_1', title: 'A (as sent)' } } },
    { op: 'addComment', args: { taskId: 't_1', body: { id: 'm_1', text: 'hi' }, at: 5 } },
    { op: 'addChecklist', args: { taskId: 't_1', body: { id: 'k_1', text: 'step' } } },
    { op: 'addTag', args: { taskId: 't_1', body: { id: 'g_2', text: 'X' } } },
  ];
  const view = overlay(r, queued);
  assert.equal(view.tasks.get('t_1'), task, 'the confirmed card as the server has it');
  assert.deepEqual(overlay(r, [{ op: 'addComment', args: { taskId: 't_1', body: { id: 'm_2', text: 'new' }, at: 5 } }])
    .tasks.get('t_1').comments.map((c) => c.id), ['m_1', 'm_2'], 'a comment not yet confirmed shows');
  assert.equal(r.tasks.get('t_1').comments.length, 1, 'the replica is never written by the view');
});

test('a busy server (503) and a key still running (409 idempotency_key_in_flight) are retried, not refused', async (t) => {
  const server = await startServer(t);
  const said = [
    [503, { ok: false, error: 'the writer is busy', code: 'overloaded' }],
    [409, { ok: false, error: 'the `Idempotency-Key` names a request still running', code: 'idempotency_key_in_flight' }],
  ];
  const keys = [];
  const busy = async (url, init = {}) => {
    if (init.method === 'PATCH') {
      keys.push(init.headers['Idempotency-Key']);
      const next = said.shift();
      if (next) return new Response(JSON.stringify(next[1]), { status: next[0], headers: { 'Content-Type': 'application/json' } });
    }
    return fetch(url, init);
  };
  const c = client(t, server, { ...deaf, fetch: busy });
  const events = [];
  c.on('conflict', () => events.push('conflict'));
  c.on('error', () => events.push('error'));
  await c.start();
  const { columnIds: [col] } = await c.createProject({ name: 'Home', columns: ['To do'] });
  const id = await c.createTask({ columnId: col, title: 'Fix the tap' });
  await c.updateTask(id, { title: 'Fix the kitchen tap' });
  await c.settled();

  assert.deepEqual(events, []);
  assert.equal(keys.length, 3, 'sent three times');
  assert.equal(new Set(keys).size, 1, 'with one key');
  assert.equal((await apiClient(server.url, server.key).get(`/tasks/${id}`)).task.title, 'Fix the kitchen tap');
});
