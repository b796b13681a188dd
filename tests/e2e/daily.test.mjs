// What a daily user reaches for (issue 33): finished cards stay in their list, marked as
// finished, with the counts saying what the filters hide; a card typed into a list lands at
// its bottom; and the smaller daily features, one test each.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addCards, eventually, seedBoard, session } from './harness.mjs';

const DAY_MS = 24 * 60 * 60 * 1000;
const titles = (page, columnId) => page.locator(`.card-list[data-column="${columnId}"] .card-title`).allTextContents();

test('finished cards stay in their list, marked as finished, and the counts say what is hidden', async (t) => {
  const { page, api } = await session(t, { width: 1440, height: 900 });
  const { projectId, columnIds: [todo, done] } = await seedBoard(api, { name: 'Finished', columns: ['To do', 'Done'] });
  const [write, , old] = await addCards(api, todo, ['Write notes', 'Call the bank', 'Old chore']);
  const [shipped] = await addCards(api, done, ['Shipped']);
  await api.patch(`/tasks/${shipped}`, { completedAt: Date.now() - 3 * DAY_MS });
  await api.patch(`/tasks/${old}`, { completedAt: Date.now() - 40 * DAY_MS });
  await page.goto(`${page.url().split('#')[0]}#/b/${projectId}`);

  // The "Done" list is not empty: a card finished 3 days ago shows there, struck, with a check.
  const finished = page.locator(`.card-list[data-column="${done}"] .card.completed`);
  await finished.waitFor();
  assert.equal(await finished.locator('.card-title').textContent(), 'Shipped');
  assert.match(await finished.getAttribute('aria-label'), /^Shipped\. finished/);
  assert.match(await finished.textContent(), /✓/);
  // One finished 40 days ago is outside the window, and the count says so.
  await eventually(async () => JSON.stringify(await titles(page, todo)) === JSON.stringify(['Write notes', 'Call the bank']),
    { message: 'the open cards of To do' });
  assert.equal(await page.locator(`.column[data-id="${todo}"] .count`).textContent(), '2 · 1 hidden');
  assert.match(await page.locator(`.column[data-id="${todo}"] .count`).getAttribute('aria-label'), /2 cards shown, 1 hidden/);
  assert.equal(await page.inputValue('#completed-filter'), 'recent');

  // Completing a card (here in the dialog) leaves it where it was, marked as finished.
  await page.locator('.card', { hasText: 'Write notes' }).click();
  await page.locator('#card-dialog').getByRole('button', { name: 'Mark complete' }).click();
  await eventually(async () => (await api.get(`/tasks/${write}`)).task.completedAt !== null, { message: 'completion' });
  await page.locator(`.card-list[data-column="${todo}"] .card.completed .card-title:text-is("Write notes")`).waitFor();
  assert.deepEqual(await titles(page, todo), ['Write notes', 'Call the bank']);

  // The existing filter still hides them, and the counts follow.
  await page.selectOption('#completed-filter', 'none');
  await page.locator('.card-title:text-is("Shipped")').waitFor({ state: 'detached' });
  assert.deepEqual(await titles(page, todo), ['Call the bank']);
  assert.equal(await page.locator(`.column[data-id="${todo}"] .count`).textContent(), '1 · 2 hidden');
  assert.equal(await page.locator(`.column[data-id="${done}"] .count`).textContent(), '0 · 1 hidden');
  assert.match(new URL(page.url()).hash, /done=none/);
  await page.selectOption('#completed-filter', 'all');
  await page.locator('.card-title:text-is("Old chore")').waitFor();
  assert.equal(await page.locator(`.column[data-id="${todo}"] .count`).textContent(), '3');
  assert.deepEqual(page.errors, []);
});
