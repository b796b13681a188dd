// Drag and drop everywhere a person aims: a list's header puts the card at the top; its
// empty area and its "Add a card" field put it at the end; a finger drags after a long press.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addCards, centre, eventually, mouseDrag, screenshot, seedBoard, session } from './harness.mjs';

/** Titles of a list's cards in position order, as the server holds them. */
async function order(api, columnId) {
  const { projects } = await api.get('/projects');
  const column = projects.flatMap((p) => p.columns).find((c) => c.id === columnId);
  return column.tasks.map((x) => x.title);
}

test('a card dropped on a header goes to the top, on an empty list or an add field to the end', async (t) => {
  const { page, api } = await session(t, { width: 1440, height: 900 });
  const { columnIds: [todo, doing, review] } = await seedBoard(api, { name: 'Drops', columns: ['To do', 'Doing', 'Review'] });
  await addCards(api, todo, ['Alpha', 'Bravo', 'Charlie', 'Delta']);
  await addCards(api, doing, ['Working', 'Waiting']);
  const column = (id) => page.locator(`.column[data-id="${id}"]`);
  const card = (title) => page.locator('.card', { has: page.locator(`.card-title:text-is("${title}")`) });
  await card('Waiting').waitFor();
  await card('Delta').waitFor();

  // The empty list's drop area is tall enough to aim at.
  const emptyBox = await column(review).locator('.card-list').boundingBox();
  assert.ok(emptyBox.height >= 100, `an empty list offers ${emptyBox.height}px to drop on`);

  // On the header of a list with cards: at its top.
  await mouseDrag(page, card('Alpha'), await centre(column(doing).locator('.column-name')));
  await eventually(async () => JSON.stringify(await order(api, doing)) === JSON.stringify(['Alpha', 'Working', 'Waiting']),
    { message: 'Alpha at the top of Doing' });

  // On the empty area of an empty list: into it.
  await mouseDrag(page, card('Bravo'), await centre(column(review).locator('.card-list')));
  await eventually(async () => JSON.stringify(await order(api, review)) === '["Bravo"]', { message: 'Bravo in Review' });

  // On the "Add a card" field: at the end.
  await mouseDrag(page, card('Charlie'), await centre(column(doing).locator('.add-card input')));
  await eventually(async () => JSON.stringify(await order(api, doing)) === JSON.stringify(['Alpha', 'Working', 'Waiting', 'Charlie']),
    { message: 'Charlie at the end of Doing' });

  // On the empty space under a list's last card: at the end.
  const below = await column(review).locator('.card-list').boundingBox();
  await mouseDrag(page, card('Delta'), { x: below.x + below.width / 2, y: below.y + below.height - 8 });
  await eventually(async () => JSON.stringify(await order(api, review)) === JSON.stringify(['Bravo', 'Delta']),
    { message: 'Delta at the end of Review' });

  // The page shows what the server holds.
  await eventually(async () => JSON.stringify(await column(doing).locator('.card-title').allTextContents())
    === JSON.stringify(['Alpha', 'Working', 'Waiting', 'Charlie']), { message: 'the page to show the moves' });
  assert.equal(await page.locator('#card-dialog[open]').count(), 0, 'a drag does not open the card');
  assert.deepEqual(page.errors, []);
});

test('on a phone a long press lifts a card and the finger drops it', async (t) => {
  const { page, api } = await session(t, { width: 390, height: 844, hasTouch: true });
  const { columnIds: [todo] } = await seedBoard(api, { name: 'Touch', columns: ['To do', 'Doing'] });
  await addCards(api, todo, ['One', 'Two', 'Three', 'Four']);
  const card = (title) => page.locator('.card', { has: page.locator(`.card-title:text-is("${title}")`) });
  await card('Four').waitFor();

  const touch = await page.context().newCDPSession(page);
  const send = (type, points) => touch.send('Input.dispatchTouchEvent', { type, touchPoints: points });
  const from = await centre(card('One'));
  const to = await centre(card('Three'), 0, 12); // the lower half of "Three": after it
  await send('touchStart', [from]);
  // Held still, the press becomes a drag.
  await page.waitForSelector('.card.dragging');
  await screenshot(page, '13-phone-touch-drag');
  for (let i = 1; i <= 6; i += 1) {
    await send('touchMove', [{ x: from.x + ((to.x - from.x) * i) / 6, y: from.y + ((to.y - from.y) * i) / 6 }]);
  }
  await send('touchEnd', []);
  await eventually(async () => JSON.stringify(await order(api, todo)) === JSON.stringify(['Two', 'Three', 'One', 'Four']),
    { message: 'One to land after Three' });
  assert.equal(await page.locator('.drag-ghost').count(), 0);

  // A quick tap still opens the card.
  await card('Two').tap();
  await page.waitForSelector('#card-dialog[open]');
  assert.equal(await page.inputValue('#card-dialog .title-input'), 'Two');
  assert.deepEqual(page.errors, []);
});
