// Recurring cards in a file opened without a key (no server: web/js/local.js, web/js/recur.js):
// completing a repeating card makes its next occurrence at once, as the server does (the
// month-end rhythm kept across a reload, the checklist reopened, the subtasks copied open),
// and taking the completion back removes the occurrence.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { addCards, eventually, screenshot, seedBoard, session } from './harness.mjs';

const card = (page, title) => page.locator('.card', { has: page.locator(`.card-title:text-is("${title}")`) });
/** A UTC day `offset` days from `ms`, `YYYY-MM-DD` (a completion counts in UTC days). */
const utcDay = (offset, ms = Date.now()) => new Date(ms + offset * 86400000).toISOString().slice(0, 10);

/** Exports the seeded account and opens the file in the page, without a key. */
async function openAsFile(t, page, server, board) {
  const res = await fetch(`${server.url}/api/v1/export`, { headers: { Authorization: `Bearer ${server.key}` } });
  const dir = await mkdtemp(path.join(tmpdir(), 'workboard-recur-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'workboard-export.json');
  await writeFile(file, await res.text());
  const apiCalls = [];
  page.on('request', (req) => {
    if (new URL(req.url()).pathname.startsWith('/api')) apiCalls.push(`${req.method()} ${req.url()}`);
  });
  await page.goto(server.url);
  await page.setInputFiles('#import-file', file);
  await page.waitForSelector('#app:not([hidden])');
  assert.match(await page.textContent('#mode-badge'), /Local file/);
  await page.click(`.project-link:text-is("${board}")`);
  return apiCalls;
}

/** The cards of the file as this browser keeps it (written shortly after each change). */
async function keptCards(page) {
  const doc = await page.evaluate(() => JSON.parse(localStorage.getItem('workboard.localFile')).doc);
  return doc.projects.flatMap((p) => p.columns.flatMap((c) => c.tasks));
}

/** Waits until the kept file satisfies `check(cards)`; answers the cards. */
async function keptWhen(page, check, message) {
  let cards;
  await eventually(async () => check((cards = await keptCards(page))), { message });
  return cards;
}

async function complete(page, title, id) {
  await page.locator(`.card[data-id="${id}"]`).click();
  await page.locator('#card-dialog').getByRole('button', { name: 'Mark complete' }).click();
  await page.waitForSelector(`.toast-text:text-is("Completed ‘${title}’.")`);
}

test('a file: a monthly card due 31 January recurs on 28 February, then 31 March; Ctrl+Z takes the occurrence back', async (t) => {
  const { page, api, server } = await session(t, { signIn: false, width: 1280, height: 800 });
  const { columnIds: [todo] } = await seedBoard(api, { name: 'Home', columns: ['To do'] });
  const monthly = { every: 1, unit: 'month', from: 'deadline' };
  const [rent] = await addCards(api, todo, [
    {
      title: 'Pay rent', deadline: '2099-01-31', deadlineTime: '09:00', priority: 2, location: 'Bank', repeat: monthly,
      tags: ['bills'], checklist: [{ text: 'Transfer', done: true }, { text: 'File receipt' }], comments: [{ text: 'Paid late once' }],
    },
    'Other card',
  ]);
  const { id: receipt } = await api.post('/tasks', { columnId: todo, title: 'Keep receipt', parentId: rent, deadline: '2099-01-30', position: 1.5 });
  const apiCalls = await openAsFile(t, page, server, 'Home');
  await card(page, 'Pay rent').waitFor();

  await complete(page, 'Pay rent', rent);
  // At once: the occurrence right after the finished card, its subtask's copy after the subtask.
  const tiles = page.locator(`.card-list[data-column="${todo}"] .card`);
  await eventually(async () => (await card(page, 'Pay rent').count()) === 2, { message: 'the next occurrence on the board' });
  let cards = await keptWhen(page, (all) => all.filter((c) => c.title === 'Pay rent').length === 2, 'the occurrence kept');
  const finished = cards.find((c) => c.id === rent);
  const next = cards.find((c) => c.title === 'Pay rent' && c.id !== rent);
  assert.ok(finished.completedAt, 'the finished card stays, finished');
  assert.equal(finished.comments.length, 1, 'the comments stay with the finished card');
  assert.equal(next.deadline, '2099-02-28', '31 January + 1 month is the end of February');
  assert.equal(next.completedAt, null);
  assert.deepEqual(
    [next.deadlineTime, next.priority, next.location, next.tags, next.repeat, next.parentId, next.columnId],
    ['09:00', 2, 'Bank', ['bills'], monthly, null, todo],
  );
  assert.deepEqual(next.checklist.map((k) => [k.text, k.done]), [['Transfer', false], ['File receipt', false]], 'the checklist comes back open');
  assert.equal(next.checklist.some((k) => finished.checklist.some((f) => f.id === k.id)), false, 'fresh item ids');
  assert.deepEqual(next.comments, []);
  const copy = cards.find((c) => c.title === 'Keep receipt' && c.id !== receipt);
  assert.ok(copy, 'the subtask is copied');
  assert.deepEqual([copy.parentId, copy.completedAt, copy.deadline], [next.id, null, '2099-02-27'], 'under the occurrence, open, moved 28 days');
  assert.ok(cards.find((c) => c.id === receipt).completedAt, 'the subtask was finished with its parent');
  assert.ok(finished.position < next.position && next.position < 1.5 && copy.position > 1.5 && copy.position < 2, 'each right after what it copies');
  assert.deepEqual(await tiles.locator('.card-title').allTextContents(), ['Pay rent', 'Pay rent', 'Keep receipt', 'Keep receipt', 'Other card']);
  await screenshot(page, 'recur-file-1280');

  // The rhythm's anchor (31 January behind 28 February) is kept here, never exported: a
  // server's import refuses a field it does not know.
  assert.equal(next.repeatAnchor, '2099-01-31');
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-button')]);
  const exported = JSON.parse(await readFile(await download.path(), 'utf8'));
  const tasks = exported.projects.flatMap((p) => p.columns.flatMap((c) => c.tasks));
  assert.equal(tasks.length, 5);
  assert.equal(tasks.some((x) => 'repeatAnchor' in x), false);

  // The rhythm goes on from the 31st, across a reload: 28 February -> 31 March.
  await page.reload();
  await card(page, 'Pay rent').first().waitFor();
  await complete(page, 'Pay rent', next.id);
  cards = await keptWhen(page, (all) => all.filter((c) => c.title === 'Pay rent').length === 3, 'the second occurrence kept');
  const third = cards.find((c) => c.title === 'Pay rent' && c.completedAt === null);
  assert.equal(third.deadline, '2099-03-31');
  assert.equal(cards.filter((c) => c.title === 'Keep receipt').length, 3);

  // Ctrl+Z takes the completion back: the card reopens, the occurrence and its subtask go.
  await page.locator('#board-title').click();
  await page.keyboard.press('Control+z');
  await page.waitForSelector('.toast-text:text-is("Restored ‘Pay rent’ to To do")');
  await page.locator(`.card[data-id="${third.id}"]`).waitFor({ state: 'detached' });
  cards = await keptWhen(page, (all) => all.filter((c) => c.title === 'Pay rent').length === 2, 'the occurrence gone');
  assert.deepEqual(cards.filter((c) => c.title === 'Pay rent' && c.completedAt === null).map((c) => [c.id, c.deadline]), [[next.id, '2099-02-28']]);
  assert.equal(cards.filter((c) => c.title === 'Keep receipt').length, 2, 'the copy of the subtask gone too');
  assert.equal(await card(page, 'Pay rent').count(), 2);
  assert.deepEqual(apiCalls, [], 'nothing was sent to the server');
  assert.deepEqual(page.errors, []);
});

test('a file: a weekly card from completion recurs a week after the day it is finished; the toast\'s Undo takes it back', async (t) => {
  const { page, api, server } = await session(t, { signIn: false, width: 1280, height: 800 });
  const { columnIds: [todo] } = await seedBoard(api, { name: 'Garden', columns: ['To do'] });
  const [id] = await addCards(api, todo, [
    { title: 'Water plants', deadline: utcDay(-3), repeat: { every: 1, unit: 'week', from: 'completion' } },
    'Other card',
  ]);
  await openAsFile(t, page, server, 'Garden');
  await card(page, 'Water plants').waitFor();

  await complete(page, 'Water plants', id);
  await eventually(async () => (await card(page, 'Water plants').count()) === 2, { message: 'the next occurrence on the board' });
  const cards = await keptWhen(page, (all) => all.filter((c) => c.title === 'Water plants').length === 2, 'the occurrence kept');
  const finished = cards.find((c) => c.id === id);
  const next = cards.find((c) => c.title === 'Water plants' && c.id !== id);
  assert.equal(next.deadline, utcDay(7, finished.completedAt), 'a week after the day it was finished, not after the deadline');
  assert.equal(next.completedAt, null);
  assert.equal(await page.locator(`.card[data-id="${next.id}"]`).count(), 1);

  await page.locator('.toast').getByRole('button', { name: 'Undo' }).click();
  await page.waitForSelector('.toast-text:text-is("Restored ‘Water plants’ to To do")');
  await page.locator(`.card[data-id="${next.id}"]`).waitFor({ state: 'detached' });
  const after = await keptWhen(page, (all) => all.filter((c) => c.title === 'Water plants').length === 1, 'one card left');
  assert.deepEqual(after.filter((c) => c.title === 'Water plants').map((c) => [c.id, c.completedAt]), [[id, null]]);

  // As on a server, a rule from the deadline needs one: the refusal is said under the control.
  await card(page, 'Other card').click();
  const dialog = page.locator('#card-dialog');
  await dialog.getByRole('combobox', { name: 'Repeat', exact: true }).selectOption('every');
  await dialog.getByLabel('Repeat from').selectOption('deadline');
  const error = dialog.locator('.repeat-field .field-error');
  await eventually(async () => (await error.textContent()).startsWith('Not saved'), { message: 'the 422 under the control' });
  assert.match(await error.textContent(), /repeat/i);
  const other = await keptWhen(page, (all) => all.find((c) => c.title === 'Other card').repeat, 'the first rule kept');
  assert.deepEqual(other.find((c) => c.title === 'Other card').repeat, { every: 1, unit: 'week', from: 'completion' });
  assert.deepEqual(page.errors, []);
});
