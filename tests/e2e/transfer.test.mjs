// Moving and copying a card to another board from the card dialog (issue 33), as Trello's
// Move and Copy: pick the board, the list and the top or bottom; a copy keeps the card's
// fields and, by choice, its checklist and tags; a card with subtasks takes them along (the
// server keeps a subtask in its parent's board); each is undoable like any edit; by
// keyboard on a desktop and by touch on a phone.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { addCards, eventually, seedBoard, session } from './harness.mjs';

const card = (page, title) => page.locator('.card', { has: page.locator(`.card-title:text-is("${title}")`) });
const goto = (page, projectId) => page.goto(`${page.url().split('#')[0]}#/b/${projectId}`);
const held = async (api, id) => (await api.get(`/tasks/${id}`)).task;
const tagTexts = (task) => task.tags.map((x) => x.text ?? x);

/** Two boards: Home (To do, Done) and Work (Inbox, Doing) with cards in Work's Doing. */
async function twoBoards(api) {
  const home = await seedBoard(api, { name: 'Home', columns: ['To do', 'Done'] });
  const work = await seedBoard(api, { name: 'Work', columns: ['Inbox', 'Doing'] });
  const [first, last] = await addCards(api, work.columnIds[1], ['Already doing', 'Doing last']);
  return { home, work, first, last };
}

async function openCard(page, title) {
  await card(page, title).click();
  await page.waitForSelector('#card-dialog[open]');
  await page.locator('#card-dialog .title-input').waitFor();
}

test('a card moves to the top of a list of another board by keyboard, and Ctrl+Z moves it back', async (t) => {
  const { page, api } = await session(t, { width: 1440, height: 900 });
  const { home, work, first } = await twoBoards(api);
  const [id, next] = await addCards(api, home.columnIds[0], [{ title: 'Renew passport', description: 'Photos', priority: 2 }, 'Water plants']);
  await goto(page, home.projectId);
  await openCard(page, 'Renew passport');

  const dialog = page.locator('#card-dialog');
  await dialog.getByRole('button', { name: 'Move…' }).focus();
  await page.keyboard.press('Enter');
  const move = page.locator('#transfer-dialog');
  await move.waitFor();
  assert.equal(await move.locator('h2').textContent(), 'Move ‘Renew passport’');
  await move.getByLabel('Board', { exact: true }).selectOption({ label: 'Work' });
  await move.getByLabel('List', { exact: true }).selectOption({ label: 'Doing' });
  await move.getByLabel('Position').selectOption('top');
  await move.getByRole('button', { name: 'Move card' }).focus();
  await page.keyboard.press('Enter');

  await eventually(async () => (await held(api, id)).columnId === work.columnIds[1], { message: 'the move to Work › Doing' });
  const moved = await held(api, id);
  assert.equal(moved.projectId, work.projectId);
  assert.ok(moved.position < (await held(api, first)).position, 'at the top of Doing');
  assert.equal(moved.description, 'Photos', 'the card itself, unchanged');
  // The card left this board: its dialog closes, the focus goes to the next card here, and
  // the toast names where it went.
  await page.waitForSelector('#card-dialog:not([open])', { state: 'attached' });
  await card(page, 'Renew passport').waitFor({ state: 'detached' });
  await page.waitForSelector('.toast-text:text-is("Moved ‘Renew passport’ to Work › Doing.")');
  await eventually(() => page.evaluate((nextId) => document.activeElement?.closest('.card')?.dataset.id === nextId, next),
    { message: 'the focus on the next card' });

  await page.keyboard.press('Control+z');
  await eventually(async () => (await held(api, id)).columnId === home.columnIds[0], { message: 'Ctrl+Z to move it back' });
  await card(page, 'Renew passport').waitFor();
  assert.deepEqual((await api.get(`/projects/${home.projectId}`)).projects[0].columns[0].tasks.map((x) => x.title),
    ['Renew passport', 'Water plants'], 'back in its old place');
  assert.deepEqual(page.errors, []);
});

test('a card with subtasks moves to another board with them, still its subtasks; Undo brings all back', async (t) => {
  const { page, api } = await session(t, { width: 1440, height: 900 });
  const { home, work, first, last } = await twoBoards(api);
  const [parent] = await addCards(api, home.columnIds[0], ['Plan the trip', 'Unrelated']);
  const subA = (await api.post('/tasks', { columnId: home.columnIds[0], title: 'Book flights', parentId: parent })).id;
  const subB = (await api.post('/tasks', { columnId: home.columnIds[1], title: 'Find a hotel', parentId: parent })).id;
  await goto(page, home.projectId);
  await openCard(page, 'Plan the trip');
  await page.locator('#card-dialog').getByRole('button', { name: 'Move…' }).click();
  const move = page.locator('#transfer-dialog');
  await move.getByLabel('Board', { exact: true }).selectOption({ label: 'Work' });
  await move.getByLabel('List', { exact: true }).selectOption({ label: 'Doing' });
  assert.match(await move.locator('.transfer-note').textContent(), /2 subtasks move with it/);
  await move.getByRole('button', { name: 'Move card' }).click();

  await page.waitForSelector('.toast-text:text-is("Moved ‘Plan the trip’ with its 2 subtasks to Work › Doing.")');
  for (const id of [parent, subA, subB]) {
    const task = await held(api, id);
    assert.equal(task.columnId, work.columnIds[1], `${task.title} in Work › Doing`);
  }
  assert.equal((await held(api, subA)).parentId, parent, 'still a subtask');
  assert.equal((await held(api, subB)).parentId, parent, 'still a subtask');
  const doing = (await api.get(`/projects/${work.projectId}`)).projects[0].columns[1].tasks.map((x) => x.id);
  assert.deepEqual(doing.slice(0, 2), [first, last]);
  assert.equal(doing.indexOf(parent), 2, 'at the bottom, below the cards already there');
  assert.deepEqual(new Set(doing.slice(3)), new Set([subA, subB]), 'the subtasks right below it');

  await page.locator('.toast').getByRole('button', { name: 'Undo' }).click();
  await eventually(async () => (await held(api, parent)).columnId === home.columnIds[0], { message: 'Undo to move it back' });
  await eventually(async () => (await held(api, subB)).parentId === parent, { message: 'the subtasks are its own again' });
  assert.equal((await held(api, subA)).columnId, home.columnIds[0]);
  assert.equal((await held(api, subB)).columnId, home.columnIds[1], 'each subtask back in its own list');
  assert.equal((await held(api, subA)).parentId, parent);
  assert.deepEqual(page.errors, []);
});

test('a copy on another board keeps the fields, checklist and tags; unticked, it leaves them; Undo bins it', async (t) => {
  const { page, api } = await session(t, { width: 1440, height: 900 });
  const { home, work } = await twoBoards(api);
  const fields = { title: 'Weekly report', description: 'Use the **template**', priority: 1, effort: 'medium',
    deadline: '2030-05-06', deadlineTime: '09:30', location: 'Office', tags: ['ops', 'weekly'] };
  const [id] = await addCards(api, home.columnIds[0], [fields]);
  await api.post(`/tasks/${id}/checklist`, { items: [{ text: 'Numbers', done: true }, { text: 'Summary' }] });
  await api.post(`/tasks/${id}/comments`, { text: 'Sent last week' });
  await goto(page, home.projectId);
  await openCard(page, 'Weekly report');

  const dialog = page.locator('#card-dialog');
  await dialog.getByRole('button', { name: 'Copy…' }).click();
  const copy = page.locator('#transfer-dialog');
  assert.equal(await copy.getByLabel('Title of the copy').inputValue(), 'Weekly report');
  await copy.getByLabel('Title of the copy').fill('Weekly report (May)');
  await copy.getByLabel('Board', { exact: true }).selectOption({ label: 'Work' });
  await copy.getByLabel('List', { exact: true }).selectOption({ label: 'Inbox' });
  assert.match(await copy.locator('.transfer-note').textContent(), /Comments are not copied/);
  await copy.getByRole('button', { name: 'Copy card' }).click();
  await page.waitForSelector('.toast-text:text-is("Copied ‘Weekly report’ to Work › Inbox.")');
  // The card stays open on this board.
  assert.equal(await page.inputValue('#card-dialog .title-input'), 'Weekly report');

  const inbox = async () => (await api.get(`/projects/${work.projectId}`)).projects[0].columns[0].tasks;
  const [made] = await inbox();
  assert.equal(made.title, 'Weekly report (May)');
  for (const f of ['description', 'priority', 'effort', 'deadline', 'deadlineTime', 'location']) assert.equal(made[f], fields[f], f);
  const copied = await held(api, made.id);
  assert.deepEqual(tagTexts(copied), ['ops', 'weekly']);
  assert.deepEqual(copied.checklist.map((k) => [k.text, k.done]), [['Numbers', true], ['Summary', false]]);
  assert.equal(copied.comments.length, 0);
  assert.equal(copied.completedAt, null);
  assert.equal((await held(api, id)).columnId, home.columnIds[0], 'the original stays');

  // Ctrl+Z takes the copy back (to the recycle bin).
  await page.keyboard.press('Escape');
  await page.waitForSelector('#card-dialog:not([open])', { state: 'attached' });
  await page.keyboard.press('Control+z');
  await eventually(async () => (await inbox()).length === 0, { message: 'Ctrl+Z to take the copy back' });
  assert.ok((await api.get('/bin')).entries.some((e) => e.label === 'Weekly report (May)'), 'the copy is in the bin');

  // A copy without its checklist and tags, at the top of the same list.
  await openCard(page, 'Weekly report');
  await dialog.getByRole('button', { name: 'Copy…' }).click();
  await copy.getByLabel('Checklist (2)').uncheck();
  await copy.getByLabel('Tags (2)').uncheck();
  await copy.getByLabel('Position').selectOption('top');
  await copy.getByRole('button', { name: 'Copy card' }).click();
  await page.waitForSelector('.toast-text:text-is("Copied ‘Weekly report’ to Home › To do.")');
  // The copy shows before the server has answered it.
  const todo = await eventually(async () => {
    const tasks = (await api.get(`/projects/${home.projectId}`)).projects[0].columns[0].tasks;
    return tasks.length === 2 && tasks;
  }, { message: 'the copy to land' });
  assert.deepEqual(todo.map((x) => x.title), ['Weekly report', 'Weekly report'], 'the copy on top of the original');
  assert.notEqual(todo[0].id, id);
  const bare = await held(api, todo[0].id);
  assert.deepEqual([bare.tags.length, bare.checklist.length], [0, 0]);
  assert.deepEqual(page.errors, []);
});

test('a subtask moved alone to another board becomes a card of its own there', async (t) => {
  const { page, api } = await session(t, { width: 1440, height: 900 });
  const { home, work } = await twoBoards(api);
  const [parent] = await addCards(api, home.columnIds[0], ['Plan the trip']);
  const sub = (await api.post('/tasks', { columnId: home.columnIds[0], title: 'Expense claim', parentId: parent })).id;
  await goto(page, home.projectId);
  await card(page, 'Plan the trip').locator('.subtasks-toggle').click();
  await openCard(page, 'Expense claim');
  await page.locator('#card-dialog').getByRole('button', { name: 'Move…' }).click();
  const move = page.locator('#transfer-dialog');
  await move.getByLabel('Board', { exact: true }).selectOption({ label: 'Work' });
  assert.match(await move.locator('.transfer-note').textContent(), /leaves its parent ‘Plan the trip’/);
  await move.getByRole('button', { name: 'Move card' }).click();
  await eventually(async () => (await held(api, sub)).projectId === work.projectId, { message: 'the move' });
  assert.equal((await held(api, sub)).parentId, null);
  await page.keyboard.press('Control+z');
  await eventually(async () => (await held(api, sub)).parentId === parent, { message: 'Ctrl+Z makes it a subtask again' });
  assert.equal((await held(api, sub)).columnId, home.columnIds[0]);
  assert.deepEqual(page.errors, []);
});

test('on a touch phone a card moves to another board with taps', async (t) => {
  const { page, api } = await session(t, { width: 390, height: 844, hasTouch: true, isMobile: true });
  const { home, work } = await twoBoards(api);
  const [id] = await addCards(api, home.columnIds[0], ['Call the plumber']);
  await goto(page, home.projectId);
  await card(page, 'Call the plumber').tap();
  await page.waitForSelector('#card-dialog[open]');
  const button = page.locator('#card-dialog').getByRole('button', { name: 'Move…' });
  await button.scrollIntoViewIfNeeded();
  // The dialog takes no touch for a moment after the tap that opened it.
  await page.waitForSelector('#card-dialog:not(.settling)');
  await button.tap();
  const move = page.locator('#transfer-dialog');
  await move.waitFor();
  const fit = await move.boundingBox();
  assert.ok(fit.x >= 0 && fit.x + fit.width <= 390.5, `the dialog fits the screen (${fit.x}+${fit.width})`);
  for (const name of ['Board', 'List', 'Position']) {
    const box = await move.getByLabel(name).boundingBox();
    assert.ok(box.height >= 44, `${name} is ${box.height} px high`);
  }
  await move.getByLabel('Board', { exact: true }).selectOption({ label: 'Work' });
  await move.getByRole('button', { name: 'Move card' }).tap();
  await eventually(async () => (await held(api, id)).columnId === work.columnIds[0], { message: 'the move to Work › Inbox' });
  await page.waitForSelector('#card-dialog:not([open])', { state: 'attached' });
  assert.deepEqual(page.errors, []);
});

test('when the card itself cannot move, its subtasks already moved are taken back and the dialog says why', async (t) => {
  const { page, api } = await session(t, { width: 1440, height: 900 });
  const { home, work } = await twoBoards(api);
  const [parent] = await addCards(api, home.columnIds[0], ['Plan the trip']);
  const sub = (await api.post('/tasks', { columnId: home.columnIds[1], title: 'Book flights', parentId: parent })).id;
  await goto(page, home.projectId);
  await openCard(page, 'Plan the trip');
  const writes = [];
  await page.route(`**/api/v1/tasks/${parent}`, async (route) => {
    if (route.request().method() !== 'PATCH') return route.continue();
    writes.push(route.request().postDataJSON());
    return route.fulfill({ status: 422, contentType: 'application/json', body: JSON.stringify({ ok: false, error: 'refused for the test', code: 'invalid' }) });
  });
  await page.locator('#card-dialog').getByRole('button', { name: 'Move…' }).click();
  const move = page.locator('#transfer-dialog');
  await move.getByLabel('Board', { exact: true }).selectOption({ label: 'Work' });
  await move.getByRole('button', { name: 'Move card' }).click();
  await move.locator('.error:has-text("refused for the test")').waitFor();
  assert.equal(writes.length, 1, 'the card was asked to move once');
  // Guarded by what the page saw: a card moved elsewhere meanwhile is not moved over it.
  assert.deepEqual(writes[0].columnId, { before: home.columnIds[0], after: work.columnIds[0] });
  // The subtask had crossed first; it is back in its list, the card's subtask again.
  await eventually(async () => (await held(api, sub)).parentId === parent, { message: 'the subtask attached again' });
  assert.equal((await held(api, sub)).columnId, home.columnIds[1]);
  assert.equal((await held(api, parent)).columnId, home.columnIds[0]);
  // Nothing to undo: nothing moved.
  assert.ok(await move.isVisible(), 'the dialog stays open to try again or cancel');
  assert.deepEqual(page.errors, []);
});

test('in a file opened without a key, a card with a subtask moves to another board and a copy lands there too', async (t) => {
  const { page, api, server } = await session(t, { signIn: false, width: 1440, height: 900 });
  const { home } = await twoBoards(api);
  const [parent] = await addCards(api, home.columnIds[0], [{ title: 'Plan the trip', tags: ['travel'] }]);
  await api.post('/tasks', { columnId: home.columnIds[0], title: 'Book flights', parentId: parent });
  await api.post(`/tasks/${parent}/checklist`, { items: [{ text: 'Passport', done: true }] });
  const res = await fetch(`${server.url}/api/v1/export`, { headers: { Authorization: `Bearer ${server.key}` } });
  const dir = await mkdtemp(path.join(tmpdir(), 'workboard-export-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'workboard-export.json');
  await writeFile(file, await res.text());
  await page.goto(server.url);
  await page.setInputFiles('#import-file', file);
  await page.click('.project-link:text-is("Home")');
  await openCard(page, 'Plan the trip');

  const dialog = page.locator('#card-dialog');
  const transfer = page.locator('#transfer-dialog');
  await dialog.getByRole('button', { name: 'Copy…' }).click();
  await transfer.getByLabel('Board', { exact: true }).selectOption({ label: 'Work' });
  await transfer.getByRole('button', { name: 'Copy card' }).click();
  await page.waitForSelector('.toast-text:text-is("Copied ‘Plan the trip’ to Work › Inbox.")');
  await dialog.getByRole('button', { name: 'Move…' }).click();
  await transfer.getByLabel('Board', { exact: true }).selectOption({ label: 'Work' });
  await transfer.getByLabel('List', { exact: true }).selectOption({ label: 'Doing' });
  await transfer.getByRole('button', { name: 'Move card' }).click();
  await page.waitForSelector('.toast-text:text-is("Moved ‘Plan the trip’ with its subtask to Work › Doing.")');

  await page.click('.project-link:text-is("Work")');
  const inList = (name) => page.locator('.column', { has: page.locator(`.column-name:text-is("${name}")`) });
  await inList('Inbox').locator('.card-title:text-is("Plan the trip")').waitFor();
  await inList('Doing').locator('.card-title:text-is("Plan the trip")').waitFor();
  const copy = inList('Inbox').locator('.card', { has: page.locator('.card-title:text-is("Plan the trip")') });
  assert.match(await copy.textContent(), /travel/, 'the copy keeps its tag');
  await copy.click();
  await page.waitForSelector('#card-dialog[open]');
  assert.deepEqual(await page.$$eval('#card-dialog .checklist .item-text', (els) => els.map((el) => el.value)), ['Passport']);
  assert.equal(await dialog.locator('.subtasks li').count(), 0, 'the copy has no subtasks');
  await page.keyboard.press('Escape');
  const moved = inList('Doing').locator('.card', { has: page.locator('.card-title:text-is("Plan the trip")') });
  await moved.click();
  await dialog.locator('.subtasks li', { hasText: 'Book flights' }).waitFor();
  assert.deepEqual(page.errors, []);
});
