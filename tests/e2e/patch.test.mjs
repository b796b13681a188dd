// Rendering that keeps state: a change from another device patches the board instead of
// redrawing it, so a list keeps its scroll position, the cards stay the same elements, and a
// click in progress when the change arrives still opens its card.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addCards, centre, eventually, seedBoard, session } from './harness.mjs';

const TITLES = Array.from({ length: 25 }, (_, i) => `Card ${String(i + 1).padStart(2, '0')}`);

test('a list keeps its scroll position and its cards across a remote change', async (t) => {
  const { page, api } = await session(t, { width: 1440, height: 900 });
  const { columnIds: [todo, doing] } = await seedBoard(api, { name: 'Busy', columns: ['To do', 'Doing'] });
  const ids = await addCards(api, todo, TITLES);
  const list = page.locator(`.card-list[data-column="${todo}"]`);
  await list.locator('.card-title:text-is("Card 25")').waitFor();

  // Scroll the list well down, and mark a card element to see whether it survives.
  await list.evaluate((el) => { el.scrollTop = 400; });
  const scrolled = await list.evaluate((el) => el.scrollTop);
  assert.ok(scrolled > 300, `the list scrolls (${scrolled})`);
  await list.locator('.card', { hasText: 'Card 20' }).evaluate((el) => { el.dataset.mark = 'kept'; });

  // Another device renames a card of this list and adds one to the other list.
  await api.patch(`/tasks/${ids[19]}`, { title: 'Card 20, renamed elsewhere' });
  await api.post('/tasks', { columnId: doing, title: 'Added elsewhere' });
  await page.locator('.card-title:text-is("Added elsewhere")').waitFor();
  await list.locator('.card-title:text-is("Card 20, renamed elsewhere")').waitFor();

  assert.equal(await list.evaluate((el) => el.scrollTop), scrolled, 'the scroll position is kept');
  assert.equal(await list.locator('[data-mark="kept"] .card-title').textContent(), 'Card 20, renamed elsewhere',
    'the card was patched in place, not drawn anew');
  assert.deepEqual(page.errors, []);
});

test('a click made while a remote change arrives opens the card it began on', async (t) => {
  const { page, api } = await session(t, { width: 1440, height: 900 });
  const { columnIds: [todo] } = await seedBoard(api, { name: 'Clicks', columns: ['To do', 'Doing'] });
  await addCards(api, todo, ['First', 'Second', 'Third']);
  const card = page.locator('.card', { hasText: 'Second' });
  await card.waitFor();

  // Press on "Second"; before the button comes up, another device adds a card above it,
  // which moves "Second" down from under the pointer.
  const at = await centre(card);
  await page.mouse.move(at.x, at.y);
  await page.mouse.down();
  await api.post('/tasks', { columnId: todo, title: 'Pushed in from elsewhere', position: 0 });
  await page.locator('.card-title:text-is("Pushed in from elsewhere")').waitFor();
  await page.mouse.up();

  await page.waitForSelector('#card-dialog[open]');
  assert.equal(await page.inputValue('#card-dialog .title-input'), 'Second');
  assert.deepEqual(page.errors, []);
});

test('an open card keeps what is typed, and its focus, while the card changes elsewhere', async (t) => {
  const { page, api } = await session(t);
  const { taskIds: [id] } = await seedBoard(api, { cards: ['Shared card'] });
  await page.locator('.card', { hasText: 'Shared card' }).click();
  const dialog = page.locator('#card-dialog');
  const comment = dialog.getByPlaceholder(/Write a comment/);
  await comment.fill('Half a thought');

  await api.post(`/tasks/${id}/checklist`, { text: 'Added on the phone' });
  await api.patch(`/tasks/${id}`, { location: 'Porto' });
  await dialog.locator('.checklist .item-text[value="Added on the phone"]').waitFor();
  await eventually(async () => (await dialog.getByLabel('Location', { exact: true }).inputValue()) === 'Porto', { message: 'the location to arrive' });

  assert.equal(await comment.inputValue(), 'Half a thought');
  assert.equal(await comment.evaluate((el) => el === document.activeElement), true, 'the comment box keeps the focus');
  await page.keyboard.type(', finished');
  assert.equal(await comment.inputValue(), 'Half a thought, finished');
  assert.deepEqual(page.errors, []);
});
