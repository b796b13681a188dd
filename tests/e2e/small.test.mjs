// The small things: the welcome page says how to get a key and opens the README; empty
// states say what to do; the recycle bin's × sits at the right edge; a toast clears when the
// board changes, and an error is shown once.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { seedBoard, session } from './harness.mjs';

test('the welcome page says how to get a key and opens the set-up guide', async (t) => {
  const { page, server } = await session(t, { signIn: false });
  await page.goto(server.url);
  await page.waitForSelector('#welcome:not([hidden])');
  assert.match(await page.textContent('#key-help'), /workboard keys issue/);
  await page.click('#readme-link');
  await page.waitForSelector('#readme:not([hidden]) #readme-body h1');
  assert.equal(await page.textContent('#readme-body h1'), 'Workboard');
  assert.match(await page.textContent('#readme-body'), /keys issue/);
  await page.click('#readme a:text("Back")');
  await page.waitForSelector('#readme', { state: 'hidden' });
  assert.equal(await page.isVisible('#key-input'), true);
  assert.deepEqual(page.errors, []);
});

test('empty states say what to do, and the bin\'s close button sits at its right edge', async (t) => {
  const { page, api } = await session(t, { width: 1440, height: 900 });
  assert.match(await page.textContent('#board'), /No boards yet.*type its name under “Boards” and press Enter/s);
  const { projectId } = await seedBoard(api, { name: 'Bare', columns: [] });
  await page.goto(`${page.url().split('#')[0]}#/b/${projectId}`);
  await page.waitForSelector('.add-column-slot .hint:text("This board has no lists yet")');
  await page.fill('.add-column input', 'To do');
  await page.press('.add-column input', 'Enter');
  await page.waitForSelector('.list-empty:text("No cards yet. Add one above, or drop a card here.")');
  assert.equal(await page.isVisible('.add-column-slot .hint'), false);

  await page.click('#bin-button');
  await page.waitForSelector('#bin-dialog[open]');
  const dialog = await page.locator('#bin-dialog').boundingBox();
  const close = await page.locator('#bin-dialog .dialog-head button[aria-label="Close"]').boundingBox();
  const title = await page.locator('#bin-title').boundingBox();
  assert.ok(dialog.x + dialog.width - (close.x + close.width) < 30, 'the × is at the right edge');
  assert.ok(close.x - (title.x + title.width) > 100, 'and not beside the title');
  assert.deepEqual(page.errors, []);
});

test('an error is shown once, and a toast clears when the board changes', async (t) => {
  const { page, api } = await session(t, { width: 1440, height: 900 });
  await seedBoard(api, { name: 'First', cards: ['Refused edit'] });
  const { projectId: second } = await seedBoard(api, { name: 'Second', cards: ['Elsewhere'] });
  await page.click('.project-link:text-is("First")');
  await page.route(/\/api\/v1\/tasks\/t_[^/]+$/, (route) => (route.request().method() === 'PATCH'
    ? route.fulfill({ status: 503, json: { ok: false, error: 'The store is read-only for a moment.' } })
    : route.continue()));

  await page.locator('.card', { hasText: 'Refused edit' }).click();
  const location = page.locator('#card-dialog').getByLabel('Location', { exact: true });
  await location.fill('Lisbon');
  await location.press('Enter');
  await page.waitForSelector('.toast-error');
  // The same failure again (Enter, then leaving the field) keeps the one message.
  await location.press('Enter');
  await location.press('Tab');
  await page.waitForFunction(() => /read-only/.test(document.getElementById('announce-urgent').textContent));
  assert.equal(await page.locator('.toast').count(), 1);
  // The edit is kept in the outbox and sent again once the store takes writes.
  const said = /^The store is read-only for a moment\. Your edit is kept in this browser and sent again shortly\.$/;
  assert.match(await page.textContent('.toast-error .toast-text'), said);
  assert.match(await page.textContent('#announce-urgent'), said);

  await page.keyboard.press('Escape');
  await page.click('.project-link:text-is("Second")');
  await page.waitForSelector('#board-title:text("Second")');
  assert.equal(await page.locator('.toast').count(), 0, 'the error did not follow to the other board');
  assert.ok(second);
});
