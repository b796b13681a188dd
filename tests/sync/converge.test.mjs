// The sync core against the real server: clients that edit at random converge to the
// server's account, and a client cut off from the server keeps editing, replays its outbox
// when the server is back (across a kill -9 and replies lost after their commit), and ends
// with every edit applied once: nothing lost, nothing doubled.

import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'node:test';

import { jsonFileStorage } from '../../examples/json-file-storage.mjs';
import { client, honoursIdempotencyKey, lossyFetch, normal, serverDocument } from './helpers.mjs';
import { startServer } from './server.mjs';

/** A seeded random source, so that a failing run can be run again as it was. */
function seeded(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let x = s;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

test('two clients making random edits converge to the server\'s account', async (t) => {
  const server = await startServer(t);
  const a = client(t, server);
  const b = client(t, server);
  await a.start();
  await b.start();
  const { columnIds } = await a.createProject({ name: 'Random', columns: ['One', 'Two', 'Three'] });
  await a.settled();
  await b.settled();

  const seed = Number(process.env.SYNC_SEED || Date.now() % 100000);
  const random = seeded(seed);
  const pick = (list) => list[Math.floor(random() * list.length)];
  const conflicts = { a: 0, b: 0 };
  a.on('conflict', (c) => {
    conflicts.a += 1;
    if (random() < 0.5) a.resolve(c, 'mine');
  });
  b.on('conflict', (c) => {
    conflicts.b += 1;
  });

  for (let step = 0; step < 120; step += 1) {
    const c = random() < 0.5 ? a : b;
    const cards = [...c.view.tasks.values()];
    const card = cards.length ? pick(cards) : null;
    const roll = random();
    if (!card || roll < 0.2) await c.createTask({ columnId: pick(columnIds), title: `card ${step}` });
    else if (roll < 0.35) await c.updateTask(card.id, { title: `${card.title} +${step}` });
    else if (roll < 0.5) await c.moveTask(card.id, { columnId: pick(columnIds), position: Math.floor(random() * 100) });
    else if (roll < 0.6) await c.completeTask(card.id, card.completedAt === null);
    else if (roll < 0.7) await c.addComment(card.id, `comment ${step}`);
    else if (roll < 0.8) await c.addChecklistItem(card.id, `item ${step}`);
    else if (roll < 0.87 && card.checklist.length) {
      const item = pick(card.checklist);
      await c.updateChecklistItem(card.id, item.id, { done: !item.done });
    } else if (roll < 0.94) await c.addTag(card.id, `tag${step % 7}`);
    else await c.deleteTask(card.id);
    // Now and then a client waits for its outbox, so that the other's view moves on.
    if (random() < 0.15) await c.settled();
  }
  await a.settled();
  await b.settled();
  // Each has seen the other's last writes.
  await a.pull();
  await b.pull();

  const truth = normal(await serverDocument(server));
  assert.equal(a.pending, 0);
  assert.equal(b.pending, 0);
  assert.deepEqual(normal(a.document()), truth, `client a differs from the server (seed ${seed})`);
  assert.deepEqual(normal(b.document()), truth, `client b differs from the server (seed ${seed})`);
  assert.ok(truth[0].columns.some((col) => col.tasks.length), 'the random edits left cards');
  t.diagnostic(`seed ${seed}; conflicts a ${conflicts.a}, b ${conflicts.b}; cards ${truth[0].columns.flatMap((col) => col.tasks).length}`);
});

test('a client cut off keeps editing, replays after the server is back, and every edit lands once', async (t) => {
  const server = await startServer(t);
  const header = await honoursIdempotencyKey(server);
  const dir = await mkdtemp(path.join(tmpdir(), 'workboard-outbox-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const storage = jsonFileStorage(path.join(dir, 'outbox.json'));

  // Online: a board with two lists and three cards.
  const first = client(t, server, { storage });
  await first.start();
  const { id: boardId, columnIds: [todo, done] } = await first.createProject({ name: 'Trip', columns: ['To do', 'Done'] });
  const old = [];
  for (const title of ['Tickets', 'Passport', 'Bags']) old.push(await first.createTask({ columnId: todo, title }));
  await first.settled();

  // Cut off: every kind of edit, to cards the server knows and to cards it has never seen.
  await server.stop();
  const made = [];
  for (let i = 0; i < 5; i += 1) {
    const id = await first.createTask({ columnId: todo, title: `new ${i}` });
    made.push(id);
    await first.updateTask(id, { title: `New ${i}`, priority: 2 });
    await first.addComment(id, `said once ${i}`);
    await first.addChecklistItem(id, `step ${i}`);
    await first.addTag(id, 'offline');
  }
  await first.moveTask(made[0], { columnId: done, position: 10 });
  await first.completeTask(made[1]);
  await first.moveTask(made[1], { columnId: done, position: 20 });
  await first.updateTask(old[0], { title: 'Train tickets' });
  await first.completeTask(old[1]);
  await first.deleteTask(old[2]);
  const item = first.view.tasks.get(made[2]).checklist[0].id;
  await first.updateChecklistItem(made[2], item, { done: true });
  await first.updateProject(boardId, { name: 'Summer trip' });
  const queued = first.pending;
  assert.ok(queued >= 30, `the edits wait in the outbox (${queued})`);
  assert.equal(first.view.tasks.get(made[0]).columnId, done, 'a card made offline was moved offline');
  assert.notEqual(first.view.tasks.get(made[1]).completedAt, null, 'and completed offline');

  // The script stops while cut off; a new run finds the outbox in its file, and the account
  // as it last saw it in the snapshot it kept.
  const snapshot = JSON.parse(JSON.stringify(first.snapshot()));
  first.stop();
  let writes = 0;
  const lossy = lossyFetch(async () => {
    writes += 1;
    // Every third reply is lost after the server committed the write; after the tenth
    // write the server is killed (-9) with that reply unsent, and started again.
    if (writes === 10) {
      await server.kill();
      server.restart();
      return true;
    }
    return writes % 3 === 0;
  });
  const second = client(t, server, { storage, fetch: lossy, snapshot });
  const conflicts = [];
  const errors = [];
  second.on('conflict', (c) => conflicts.push(c));
  second.on('error', (e) => errors.push(e));
  await second.start();
  assert.equal(second.pending, queued, 'the outbox survived the client stopping');
  assert.equal(second.view.tasks.get(old[0]).title, 'Train tickets', 'offline, the new run shows the account with its edits');
  assert.equal(second.view.tasks.get(made[0]).columnId, done);
  assert.equal(second.view.tasks.has(old[2]), false);
  await server.restart();
  second.online();
  await second.settled();

  assert.deepEqual(conflicts, [], 'no edit conflicts with itself');
  assert.deepEqual(errors.map((e) => e.error.message), [], 'no edit is refused');
  assert.equal(second.pending, 0);
  assert.ok(lossy.lost >= 10, `replies were lost after their commit (${lossy.lost})`);
  if (header) {
    assert.ok(lossy.replayed >= lossy.lost, `each lost reply was replayed by the server (${lossy.replayed} of ${lossy.lost})`);
  }

  const truth = normal(await serverDocument(server));
  assert.deepEqual(normal(second.document()), truth, 'the client holds what the server holds');
  const [board] = truth;
  assert.equal(board.name, 'Summer trip');
  const cards = board.columns.flatMap((col) => col.tasks);
  const byId = new Map(cards.map((c) => [c.id, c]));
  assert.equal(cards.length, 7, 'two old cards and five new, the deleted one gone');
  assert.equal(byId.has(old[2]), false);
  assert.equal(byId.get(old[0]).title, 'Train tickets');
  assert.notEqual(byId.get(old[1]).completedAt, null);
  for (const [i, id] of made.entries()) {
    const card = byId.get(id);
    assert.ok(card, `new ${i} exists`);
    assert.equal(cards.filter((c) => c.title === `New ${i}`).length, 1, `new ${i} exists once`);
    assert.equal(card.priority, 2);
    assert.deepEqual(card.comments.map((c) => c.text), [`said once ${i}`], `one comment on new ${i}`);
    assert.deepEqual(card.checklist.map((k) => [k.text, k.done]), [[`step ${i}`, i === 2]], `one checklist item on new ${i}`);
    assert.deepEqual(card.tags, ['offline']);
  }
  assert.equal(byId.get(made[0]).columnId, done);
  assert.equal(byId.get(made[1]).columnId, done);
  assert.notEqual(byId.get(made[1]).completedAt, null);
  t.diagnostic(`${queued} queued writes, ${lossy.lost} replies lost, ${lossy.replayed} replayed; server replays keys: ${header}`);
});

/** What a person sees of a card, for comparing intent with outcome: duplicates (a second
 * comment, checklist item or card) and losses both show. */
function seen(tasks) {
  return [...tasks].map((t) => ({
    id: t.id, title: t.title, columnId: t.columnId, position: t.position, priority: t.priority, completedAt: t.completedAt,
    tags: t.tags, comments: t.comments.map((c) => c.text), checklist: t.checklist.map((k) => [k.text, k.done, k.position]),
  })).sort((a, b) => (a.id < b.id ? -1 : 1));
}

test('several hundred mixed writes queued offline replay across two kill -9s, each applied once', async (t) => {
  const server = await startServer(t);
  const header = await honoursIdempotencyKey(server);
  let writes = 0;
  const lossy = lossyFetch(async () => {
    writes += 1;
    if (writes === 80 || writes === 190) {
      await server.kill();
      server.restart();
      return true;
    }
    return writes % 7 === 0;
  });
  const c = client(t, server, { fetch: lossy });
  const errors = [];
  c.on('conflict', (x) => errors.push(`conflict ${x.op} ${x.field}`));
  c.on('error', (x) => errors.push(`${x.op}: ${x.error.message}`));
  await c.start();
  const { columnIds } = await c.createProject({ name: 'Busy', columns: ['A', 'B', 'C'] });
  await c.settled();

  await server.stop();
  const random = seeded(7);
  const ids = [];
  for (let i = 0; i < 50; i += 1) {
    const id = await c.createTask({ columnId: columnIds[i % 3], title: `card ${i}` });
    ids.push(id);
    await c.updateTask(id, { title: `Card ${i}`, priority: 1 + (i % 4) });
    await c.addComment(id, `note ${i}`);
    const item = await c.addChecklistItem(id, `first ${i}`);
    await c.addChecklistItem(id, `second ${i}`, { position: 0 });
    await c.addTag(id, `t${i % 4}`);
    if (i % 3 === 0) await c.updateChecklistItem(id, item, { done: true });
    if (i % 4 === 0) await c.completeTask(id);
    if (i % 5 === 0) await c.moveTask(id, { columnId: columnIds[(i + 1) % 3], position: Math.floor(random() * 1000) });
  }
  for (const id of ids.filter((_, i) => i % 10 === 9)) await c.deleteTask(id);
  const queued = c.pending;
  const intent = seen(c.view.tasks.values());
  assert.ok(queued >= 300, `several hundred writes wait (${queued})`);

  await server.restart();
  c.online();
  await c.settled();

  assert.deepEqual(errors, []);
  assert.equal(c.pending, 0);
  const truth = await serverDocument(server);
  const cards = truth.projects[0].columns.flatMap((col) => col.tasks);
  assert.deepEqual(seen(cards), intent, 'the server holds what the client meant, each write once');
  assert.deepEqual(normal(c.document()), normal(truth));
  if (header) assert.ok(lossy.replayed >= lossy.lost, `each lost reply was replayed (${lossy.replayed} of ${lossy.lost})`);
  t.diagnostic(`${queued} queued writes, ${lossy.lost} replies lost (2 with a kill -9), ${lossy.replayed} replayed; server replays keys: ${header}`);
});
