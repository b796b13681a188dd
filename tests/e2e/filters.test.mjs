// The filter bar narrows the board by text (title and description), tag, priority,
// effort, due date and the finished-cards window; active filters show as chips, live in the
// address and survive a reload.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addCards, dayIn, eventually, seedBoard, session } from './harness.mjs';

test('the filters narrow the board, show as chips and survive a reload', async (t) => {
  const { page, api } = await session(t, { width: 1440, height: 900 });
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const { projectId, columnIds: [todo, doing] } = await seedBoard(api, { name: 'Filters', columns: ['To do', 'Doing'] });
  await addCards(api, todo, [
    { title: 'Pricing page', description: 'Send the invoice template to legal', tags: ['web'], priority: 1, effort: 'easy' },
    { title: 'Blog RSS feed', tags: ['web'], priority: 3, deadline: dayIn(zone, -2) },
    { title: 'Invoice export', tags: ['billing'], priority: 1, effort: 'hard', deadline: dayIn(zone, 3) },
    { title: 'Café menu', priority: 4 },
  ]);
  const [finished] = await addCards(api, doing, [{ title: 'Shipped last week', tags: ['web'] }, { title: 'Onboarding mail' }]);
  await api.patch(`/tasks/${finished}`, { completedAt: Date.now() - 3 * 86400000 });

  const shown = async () => (await page.locator('.card-title').allTextContents()).sort();
  // A card finished in the last 30 days shows by default, in its list, marked as finished.
  const all = ['Blog RSS feed', 'Café menu', 'Invoice export', 'Onboarding mail', 'Pricing page', 'Shipped last week'];
  await eventually(async () => JSON.stringify(await shown()) === JSON.stringify(all), { message: 'every card' });
  assert.equal(await page.locator('.card.completed .card-title').textContent(), 'Shipped last week');

  // Text matches titles and descriptions, ignoring case and accents.
  await page.fill('#filter-text', 'invoice');
  await page.waitForSelector('.chip:has-text("Text: “invoice”")');
  assert.deepEqual(await shown(), ['Invoice export', 'Pricing page']);
  assert.match(await page.locator(`.column[data-id="${todo}"] .count`).textContent(), /^2 · 2 hidden$/);
  await page.fill('#filter-text', 'cafe');
  await page.waitForSelector('.chip:has-text("Text: “cafe”")');
  assert.deepEqual(await shown(), ['Café menu']);
  await page.locator('.chip', { hasText: 'Text:' }).getByRole('button').click();
  await page.locator('.chip').first().waitFor({ state: 'detached' });

  // Tag, priority, effort and due date narrow together.
  await page.selectOption('#filter-tag', 'web');
  await page.waitForSelector('.chip:has-text("Tag: web")');
  assert.deepEqual(await shown(), ['Blog RSS feed', 'Pricing page', 'Shipped last week']);
  await page.selectOption('#filter-priority', '1');
  await page.waitForSelector('.chip:has-text("Priority: P1")');
  assert.deepEqual(await shown(), ['Pricing page']);
  await page.selectOption('#filter-tag', '');
  await page.selectOption('#filter-effort', 'hard');
  await page.waitForSelector('.chip:has-text("Effort: Hard")');
  assert.deepEqual(await shown(), ['Invoice export']);
  await page.selectOption('#filter-priority', '');
  await page.selectOption('#filter-effort', '');
  await page.selectOption('#filter-due', 'overdue');
  await page.waitForSelector('.chip:has-text("Overdue")');
  assert.deepEqual(await shown(), ['Blog RSS feed']);
  await page.selectOption('#filter-due', 'week');
  await page.waitForSelector('.chip:has-text("Due this week")');
  assert.deepEqual(await shown(), ['Invoice export']);
  await page.selectOption('#filter-due', 'none');
  await page.waitForSelector('.chip:has-text("No due date")');
  assert.deepEqual(await shown(), ['Café menu', 'Onboarding mail', 'Pricing page', 'Shipped last week']);

  // The finished-cards window is a filter too; with the tag it hides the finished card.
  await page.selectOption('#filter-due', '');
  await page.selectOption('#filter-tag', 'web');
  await page.selectOption('#completed-filter', 'none');
  await page.waitForSelector('.chip:has-text("Finished cards hidden")');
  assert.deepEqual(await shown(), ['Blog RSS feed', 'Pricing page']);

  // In the address, so a reload (or a shared link) shows the same board.
  const url = new URL(page.url());
  assert.match(url.hash, new RegExp(`^#/b/${projectId}\\?`));
  assert.match(url.hash, /tag=web/);
  assert.match(url.hash, /done=none/);
  await page.reload();
  await page.locator('.card-title:text-is("Pricing page")').waitFor();
  assert.deepEqual(await shown(), ['Blog RSS feed', 'Pricing page']);
  assert.deepEqual(await page.locator('.chip > span').allTextContents(), ['Tag: web', 'Finished cards hidden']);
  assert.equal(await page.inputValue('#filter-tag'), 'web');
  assert.equal(await page.inputValue('#completed-filter'), 'none');

  // Nothing left to show says so, and "Clear all" brings every card back.
  await page.fill('#filter-text', 'no such words');
  await page.waitForSelector('.filter-notice:has-text("No cards match the filters")');
  await page.getByRole('button', { name: 'Clear all' }).click();
  await page.locator('.card-title:text-is("Café menu")').waitFor();
  assert.deepEqual(await shown(), all);
  assert.equal(new URL(page.url()).hash, `#/b/${projectId}`);
  assert.deepEqual(page.errors, []);
});
