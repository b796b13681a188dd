// Text is never lost: what is typed in any box of a card survives Esc, Close, a click
// outside the dialog and a reload, until it is sent or cleared; and the editor's buttons
// answer the first click after a field was saved.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, seedBoard, session } from './harness.mjs';

test('typed text survives Esc, Close, a click outside and a reload, until it is sent', async (t) => {
  const { page, api } = await session(t, { width: 1440, height: 900 });
  const { taskIds: [id] } = await seedBoard(api, { cards: ['Keep my words', 'Another card'] });
  const dialog = page.locator('#card-dialog');
  const open = async (title) => {
    await page.locator('.card', { has: page.locator(`.card-title:text-is("${title}")`) }).click();
    await page.waitForSelector('#card-dialog[open]');
  };
  const comment = dialog.getByPlaceholder(/Write a comment/);
  const item = dialog.getByPlaceholder('Add an item');

  await open('Keep my words');
  await comment.fill('A comment not sent yet');
  await item.fill('An item not added yet');
  await page.keyboard.press('Escape');
  await page.waitForSelector('#card-dialog[open]', { state: 'detached' });
  await open('Keep my words');
  assert.equal(await comment.inputValue(), 'A comment not sent yet');
  assert.equal(await item.inputValue(), 'An item not added yet');

  // Another card has boxes of its own: empty.
  await dialog.getByRole('button', { name: 'Close' }).last().click();
  await open('Another card');
  assert.equal(await comment.inputValue(), '');
  assert.equal(await item.inputValue(), '');

  // A click outside the dialog closes it, with the same care for what was typed.
  await comment.fill('Typed in the other card');
  await page.mouse.click(20, 880);
  await page.waitForSelector('#card-dialog[open]', { state: 'detached' });
  await open('Another card');
  assert.equal(await comment.inputValue(), 'Typed in the other card');
  // A press that starts inside (selecting text) and ends outside does not close it.
  const box = await comment.boundingBox();
  await page.mouse.move(box.x + 5, box.y + 5);
  await page.mouse.down();
  await page.mouse.move(20, 880, { steps: 3 });
  await page.mouse.up();
  assert.equal(await page.locator('#card-dialog[open]').count(), 1);
  await page.keyboard.press('Escape');

  // Through a reload too.
  await page.reload();
  await open('Keep my words');
  assert.equal(await comment.inputValue(), 'A comment not sent yet');

  // Sent, the draft is gone.
  await comment.press('Control+Enter');
  await dialog.locator('.comments li', { hasText: 'A comment not sent yet' }).waitFor();
  // The comment shows at once; the box empties once the server has taken it.
  await eventually(async () => (await comment.inputValue()) === '', { message: 'the box to empty' });
  await page.keyboard.press('Escape');
  await open('Keep my words');
  assert.equal(await comment.inputValue(), '');
  assert.equal(await item.inputValue(), 'An item not added yet');
  assert.deepEqual((await api.get(`/tasks/${id}`)).task.comments.map((c) => c.text), ['A comment not sent yet']);
  assert.deepEqual(page.errors, []);
});

test('after Enter in a field, the first click on "Edit description" opens the editor', async (t) => {
  const { page, api } = await session(t);
  const { taskIds: [id] } = await seedBoard(api, { cards: ['Venue'] });
  await page.locator('.card', { hasText: 'Venue' }).click();
  const dialog = page.locator('#card-dialog');
  await dialog.getByLabel('Location', { exact: true }).fill('Lisbon');
  await dialog.getByLabel('Location', { exact: true }).press('Enter');
  await eventually(async () => (await api.get(`/tasks/${id}`)).task.location === 'Lisbon', { message: 'the location to save' });
  await dialog.getByRole('button', { name: 'Edit description' }).click();
  assert.equal(await dialog.locator('.description-input').isVisible(), true);

  // An empty title is refused once, beside the field, and nothing is sent.
  let writes = 0;
  page.on('request', (req) => { if (req.method() === 'PATCH') writes += 1; });
  await dialog.locator('.title-input').fill('   ');
  await dialog.locator('.title-input').press('Enter');
  await dialog.locator('.title-input').press('Tab');
  await page.waitForSelector('#card-title-error:text("A card needs a title")');
  assert.equal(await page.locator('.toast').count(), 0);
  assert.equal(writes, 0);
  assert.equal((await api.get(`/tasks/${id}`)).task.title, 'Venue');
  assert.deepEqual(page.errors, []);
});
