// The board on a phone (390x844): the top bar is one row with a menu, the first list
// starts within the first 200 px, and the card dialog shows its fields first, then the
// checklist, then the comments. Screenshots at 390x844 and 1440x900 go to tests/e2e/output.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addCards, dayIn, eventually, screenshot, seedBoard, session } from './harness.mjs';

async function seed(api) {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const { columnIds } = await seedBoard(api, { name: 'Website relaunch', columns: ['Backlog', 'In progress', 'Review', 'Done'] });
  const [first] = await addCards(api, columnIds[0], [
    { title: 'Pricing page', priority: 1, deadline: dayIn(zone, -1), tags: ['web'] },
    { title: 'Blog RSS feed', deadline: dayIn(zone, 0), effort: 'medium' },
    { title: 'Team photos', deadline: dayIn(zone, 1) },
    'Cookie banner', 'Newsletter form', 'Footer links',
  ]);
  await addCards(api, columnIds[1], ['Checkout flow', 'Search page']);
  await addCards(api, columnIds[2], ['Accessibility audit']);
  await api.post(`/tasks/${first}/checklist`, { items: [{ text: 'Copy' }, { text: 'Design', done: true }] });
  for (const text of ['Looks good', 'Needs the annual plan', 'Ship it Monday']) await api.post(`/tasks/${first}/comments`, { text });
  return columnIds;
}

test('at 390x844 the top bar is one row and the first list starts within 200 px', async (t) => {
  const { page, api } = await session(t, { width: 390, height: 844 });
  await seed(api);
  await page.locator('.card-title:text-is("Pricing page")').waitFor();

  const bar = await page.locator('.topbar').boundingBox();
  assert.ok(bar.height <= 56, `the top bar is one row (${bar.height}px)`);
  const list = await page.locator('.column[data-id]').first().boundingBox();
  assert.ok(list.y < 200, `the first list starts at ${list.y}px`);
  assert.ok(await page.locator('.card', { hasText: 'Pricing page' }).isVisible());
  await screenshot(page, '15-phone-board-390');

  // The header's tools are in its menu.
  assert.equal(await page.isVisible('#undo-button'), false);
  await page.click('#tools-toggle');
  for (const id of ['#undo-button', '#bin-button', '#export-button', '#key-button']) assert.equal(await page.isVisible(id), true, id);
  assert.match(await page.textContent('#tools-usage'), /requests left today/);
  await screenshot(page, '16-phone-menu-390');
  await page.keyboard.press('Escape');
  assert.equal(await page.isVisible('#undo-button'), false);

  // The filters fold behind one button too.
  assert.equal(await page.isVisible('#filter-text'), false);
  await page.click('.filter-toggle');
  assert.equal(await page.isVisible('#filter-text'), true);
  assert.deepEqual(page.errors, []);
});

test('on a phone the card dialog shows the fields first, then the checklist, then the comments', async (t) => {
  const { page, api } = await session(t, { width: 390, height: 844 });
  const columnIds = await seed(api);
  await page.locator('.card', { hasText: 'Pricing page' }).click();
  await page.waitForSelector('#card-dialog[open]');
  const dialog = page.locator('#card-dialog');
  await dialog.locator('.comments li', { hasText: 'Ship it Monday' }).waitFor();
  const top = async (locator) => (await locator.boundingBox()).y;
  const list = await top(dialog.getByLabel('List', { exact: true }));
  const priority = await top(dialog.getByLabel('Priority'));
  const deadline = await top(dialog.getByLabel('Deadline day'));
  const checklist = await top(dialog.locator('.checklist-section'));
  const comments = await top(dialog.locator('.comments-section'));
  assert.ok(list < checklist && priority < checklist && deadline < checklist, 'the fields come before the checklist');
  assert.ok(checklist < comments, 'the checklist comes before the comments');
  assert.ok(deadline < 844, `the deadline is on the first screen (${deadline}px)`);
  await screenshot(page, '17-phone-card-390');

  // Without dragging, the List and Position pickers move the card: a new list puts it at
  // the end (not the top), and the position picker anywhere in it.
  const [, , review] = columnIds;
  await dialog.getByLabel('List', { exact: true }).selectOption({ label: 'Review' });
  const titles = async () => (await api.get('/projects')).projects[0].columns.find((c) => c.id === review).tasks.map((x) => x.title);
  await eventually(async () => JSON.stringify(await titles()) === JSON.stringify(['Accessibility audit', 'Pricing page']),
    { message: 'the card at the end of Review' });
  await eventually(async () => (await dialog.getByLabel('Position in the list').locator('option').count()) === 2, { message: 'two positions' });
  await dialog.getByLabel('Position in the list').selectOption('0');
  await eventually(async () => JSON.stringify(await titles()) === JSON.stringify(['Pricing page', 'Accessibility audit']),
    { message: 'the card at the top of Review' });
  assert.deepEqual(page.errors, []);
});

test('the same board at 1440x900', async (t) => {
  const { page, api } = await session(t, { width: 1440, height: 900 });
  await seed(api);
  await page.locator('.card-title:text-is("Accessibility audit")').waitFor();
  assert.equal(await page.isVisible('#tools-toggle'), false, 'no menu button on a wide screen');
  assert.equal(await page.isVisible('#undo-button'), true);
  assert.equal(await page.locator('.column[data-id]').count(), 4);
  await screenshot(page, '18-board-1440');
  await page.locator('.card', { hasText: 'Pricing page' }).click();
  await page.waitForSelector('#card-dialog[open]');
  await screenshot(page, '19-card-1440');
  assert.deepEqual(page.errors, []);
});
