// The card editor: Markdown rendered and sanitised, guarded edits with the conflict choice,
// the card's lists, and undo and the recycle bin.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, screenshot, seedBoard, session } from './harness.mjs';

const DESCRIPTION = [
  '## Plan',
  '',
  '| Step | Owner |',
  '| --- | --- |',
  '| Draft | Ana |',
  '| Review | Bo |',
  '',
  '```js',
  'const answer = 42;',
  '```',
  '',
  '<img src="x" onerror="window.hacked = true"> <script>window.hacked = true</script>',
].join('\n');

async function openCard(page, title) {
  await page.locator('.card', { hasText: title }).click();
  await page.waitForSelector('#card-dialog[open]');
}

test('a description is saved and shown as sanitised Markdown with a table and a code block', async (t) => {
  const { page, api } = await session(t);
  const { taskIds: [id] } = await seedBoard(api, { cards: ['Write the plan'] });
  await openCard(page, 'Write the plan');

  await page.click('button:text("Edit description")');
  await page.fill('.description-input', DESCRIPTION);
  await page.click('button:text("Save description")');
  await page.waitForSelector('.markdown table');

  assert.equal((await api.get(`/tasks/${id}`)).task.description, DESCRIPTION);
  assert.deepEqual(await page.locator('.markdown th').allTextContents(), ['Step', 'Owner']);
  assert.deepEqual(await page.locator('.markdown td').allTextContents(), ['Draft', 'Ana', 'Review', 'Bo']);
  assert.equal(await page.textContent('.markdown pre code'), 'const answer = 42;\n');
  assert.equal(await page.locator('.markdown script').count(), 0);
  assert.equal(await page.locator('.markdown [onerror]').count(), 0);
  assert.equal(await page.evaluate(() => window.hacked), undefined);
  await screenshot(page, '06-card-markdown');
  assert.deepEqual(page.errors, []);
});

test('a slow add does not pull the focus back from the field typed in since', async (t) => {
  const { page, api } = await session(t);
  const { taskIds: [id] } = await seedBoard(api, { cards: ['Pack'] });
  await openCard(page, 'Pack');
  const dialog = page.locator('#card-dialog');

  // Hold the tag's request until the next field is half typed.
  let release;
  const held = new Promise((resolve) => { release = resolve; });
  await page.route('**/tags', async (route) => {
    await held;
    await route.continue();
  });
  await dialog.getByPlaceholder('Add a tag').fill('travel');
  await dialog.getByPlaceholder('Add a tag').press('Enter');
  await dialog.getByPlaceholder('Add an item').click();
  await page.keyboard.type('Pass');
  release();
  await dialog.locator('.tags li', { hasText: 'travel' }).waitFor();
  await page.keyboard.type('ports');
  await page.keyboard.press('Enter');
  await dialog.locator('.checklist .item-text[value="Passports"]').waitFor();

  // The item shows before the server has answered: wait for it there.
  const task = await eventually(async () => (await api.get(`/tasks/${id}`)).task.checklist.length && (await api.get(`/tasks/${id}`)).task,
    { message: 'the item to land' });
  assert.deepEqual(task.tags, ['travel']);
  assert.deepEqual(task.checklist.map((k) => k.text), ['Passports']);
  assert.deepEqual(page.errors, []);
});

test('the card fields, tags, checklist, subtasks and comments save through the interface', async (t) => {
  const { page, api } = await session(t);
  const { taskIds: [id] } = await seedBoard(api, { cards: ['Plan the trip'] });
  await openCard(page, 'Plan the trip');
  const dialog = page.locator('#card-dialog');

  await dialog.getByLabel('Priority').selectOption('2');
  await dialog.getByLabel('Effort').selectOption('hard');
  await dialog.getByLabel('Deadline time').fill('09:30');
  await dialog.getByLabel('Deadline time').press('Tab');
  await dialog.getByLabel('Location', { exact: true }).fill('Lisbon');
  await dialog.getByLabel('Location', { exact: true }).press('Enter');
  await dialog.getByPlaceholder('Add a tag').fill('travel');
  await dialog.getByPlaceholder('Add a tag').press('Enter');
  for (const item of ['Passports', 'Tickets']) {
    await dialog.getByPlaceholder('Add an item').fill(item);
    await dialog.getByPlaceholder('Add an item').press('Enter');
    await dialog.locator(`.checklist .item-text[value="${item}"]`).waitFor();
  }
  await dialog.getByLabel('Move Tickets up').click();
  for (const title of ['Pack bags', 'Buy sunscreen']) {
    await dialog.getByPlaceholder('Add a subtask').fill(title);
    await dialog.getByPlaceholder('Add a subtask').press('Enter');
    await dialog.locator('.subtasks li', { hasText: title }).waitFor();
  }
  await dialog.getByPlaceholder(/Write a comment/).fill('Check the weather first');
  await dialog.getByPlaceholder(/Write a comment/).press('Control+Enter');
  await dialog.locator('.comments li', { hasText: 'Check the weather first' }).waitFor();

  const task = await eventually(async () => {
    const { task: x } = await api.get(`/tasks/${id}`);
    // The comment was the last write (the outbox sends in order): once it is there, all are.
    return x.location === 'Lisbon' && x.checklist.length === 2 && x.checklist[0].text === 'Tickets' && x.comments.length === 1 && x;
  }, { message: 'the fields to land' });
  assert.equal(task.priority, 2);
  assert.equal(task.effort, 'hard');
  assert.equal(task.deadline, null);
  assert.equal(task.deadlineTime, '09:30');
  assert.deepEqual(task.tags, ['travel']);
  assert.deepEqual(task.comments.map((c) => c.text), ['Check the weather first']);
  const { projects: [p] } = await api.get('/projects');
  const sub = p.columns[0].tasks.find((x) => x.title === 'Pack bags');
  const other = p.columns[0].tasks.find((x) => x.title === 'Buy sunscreen');
  assert.equal(sub.parentId, id);
  assert.equal(other.parentId, id);
  await screenshot(page, '07-card-editor');

  // Complete one subtask, and lift the other to a card of its own.
  // A click, not check(): the box is redrawn when the subtask completes, and check() can
  // fail to read back a box that was replaced meanwhile.
  await dialog.getByLabel('Complete Pack bags').click();
  await eventually(async () => (await api.get(`/tasks/${sub.id}`)).task.completedAt !== null, { message: 'the subtask to complete' });
  await dialog.locator('.subtasks li', { hasText: 'Buy sunscreen' }).getByRole('button', { name: 'Lift' }).click();
  await eventually(async () => (await api.get(`/tasks/${other.id}`)).task.parentId === null, { message: 'the lift' });
  await dialog.locator('.subtasks li', { hasText: 'Buy sunscreen' }).waitFor({ state: 'detached' });

  // Complete the card: the editor closes, the card stays in its list marked as finished,
  // with a toast that names it.
  await dialog.getByRole('button', { name: 'Mark complete' }).click();
  await eventually(async () => (await api.get(`/tasks/${id}`)).task.completedAt !== null, { message: 'completion' });
  await page.waitForSelector('#card-dialog[open]', { state: 'detached' });
  const shown = page.locator('.toast');
  await shown.waitFor();
  assert.match(await shown.textContent(), /Completed ‘Plan the trip’/);
  await page.locator('.card.completed .card-title:text-is("Plan the trip")').waitFor();
  await page.locator('.card.completed .card-title:text-is("Pack bags")').waitFor();
  assert.equal(await page.inputValue('#completed-filter'), 'recent');
  assert.deepEqual(page.errors, []);
});

test('a field changed on another device after the card was opened shows the conflict', async (t) => {
  const { page, api } = await session(t);
  const { taskIds: [id] } = await seedBoard(api, { cards: ['Original title'] });
  await openCard(page, 'Original title');
  const title = page.locator('#card-dialog .title-input');

  // Start typing, then another device renames the card before this edit is saved.
  await title.fill('My title');
  await api.patch(`/tasks/${id}`, { title: 'Their title' });
  await title.press('Enter');

  await page.waitForSelector('#ask-dialog[open] .conflict');
  assert.equal(await page.textContent('.conflict-current'), 'Their title');
  assert.equal(await page.textContent('.conflict-mine'), 'My title');
  await screenshot(page, '08-conflict');
  assert.equal((await api.get(`/tasks/${id}`)).task.title, 'Their title', 'nothing was overwritten');

  // Choosing "Save mine" writes it over theirs, knowingly.
  await page.click('#ask-dialog button:text("Save mine")');
  await eventually(async () => (await api.get(`/tasks/${id}`)).task.title === 'My title', { message: 'mine to land' });

  // Again on the description; this time keep theirs.
  await page.click('button:text("Edit description")');
  await page.fill('.description-input', 'my notes');
  await api.patch(`/tasks/${id}`, { description: 'their notes' });
  await page.click('button:text("Save description")');
  await page.waitForSelector('#ask-dialog[open] .conflict');
  assert.equal(await page.textContent('.conflict-current'), 'their notes');
  await page.click('#ask-dialog button:text("Use theirs")');
  await eventually(async () => (await page.textContent('#card-dialog .markdown')).includes('their notes'), { message: 'theirs shown' });
  assert.equal((await api.get(`/tasks/${id}`)).task.description, 'their notes');
  assert.deepEqual(page.errors, []);
});

test('a write the server cannot take yet keeps what was typed', async (t) => {
  const { page, api, server } = await session(t);
  const { taskIds: [id] } = await seedBoard(api, { cards: ['Keep me'] });
  await openCard(page, 'Keep me');
  await page.click('button:text("Edit description")');
  await page.fill('.description-input', 'typed while the server is away');
  await server.stop();
  await page.click('button:text("Save description")');
  // Kept in the outbox (offline.test.mjs sends it later): shown, marked and counted.
  await page.waitForSelector('#live-status[data-state="offline"][data-pending="1"]', { timeout: 20000 });
  await page.waitForSelector('#card-dialog[data-pending]');
  // Closing and reopening the card (or reloading, see offline.test.mjs) still shows it.
  await page.click('#card-dialog footer button:text("Close")');
  await openCard(page, 'Keep me');
  assert.match(await page.textContent('#card-dialog .markdown'), /typed while the server is away/);
  assert.ok(id);
});

test('undo reverses the last change, and the recycle bin restores a deleted card', async (t) => {
  const { page, api } = await session(t);
  const { taskIds: [id] } = await seedBoard(api, { cards: ['Bin me'] });
  await openCard(page, 'Bin me');
  await page.click('#card-dialog footer button:text("Delete card")');
  await page.click('#ask-dialog button:text("Delete")');
  await page.locator('.card', { hasText: 'Bin me' }).waitFor({ state: 'detached' });

  await page.click('#bin-button');
  await page.locator('.bin-list li', { hasText: 'Bin me' }).waitFor();
  await screenshot(page, '09-recycle-bin');
  await page.locator('.bin-list li', { hasText: 'Bin me' }).getByRole('button', { name: 'Restore' }).click();
  await page.locator('.bin-list li', { hasText: 'Bin me' }).waitFor({ state: 'detached' });
  await page.keyboard.press('Escape');
  await page.locator('.card', { hasText: 'Bin me' }).waitFor();
  assert.equal((await api.get(`/tasks/${id}`)).task.title, 'Bin me');

  // Rename through the page, then Ctrl+Z (outside a text field) undoes it.
  await openCard(page, 'Bin me');
  await page.fill('#card-dialog .title-input', 'Renamed');
  await page.press('#card-dialog .title-input', 'Enter');
  await eventually(async () => (await api.get(`/tasks/${id}`)).task.title === 'Renamed', { message: 'the rename' });
  await page.click('#card-dialog footer button:text("Close")');
  await page.locator('.card', { hasText: 'Renamed' }).waitFor();
  await page.keyboard.press('Control+z');
  await eventually(async () => (await api.get(`/tasks/${id}`)).task.title === 'Bin me', { message: 'the undo' });
  await page.locator('.card', { hasText: 'Bin me' }).waitFor();
  await page.waitForSelector('.toast-text:text-is("Title of ‘Bin me’ set back")');

  // The header's Undo is the same model as Ctrl+Z (README, "Undo"): it goes on back through
  // this page's changes and never re-does the rename Ctrl+Z took back.
  await page.click('#undo-button');
  await page.waitForFunction(() => document.querySelector('.toast-text')?.textContent !== 'Title of ‘Bin me’ set back');
  assert.equal(await page.isVisible('#ask-dialog[open]'), false, 'no question: this page has changes of its own to take back');
  assert.equal((await api.get(`/tasks/${id}`)).task.title, 'Bin me');
  assert.deepEqual(page.errors, []);
});
