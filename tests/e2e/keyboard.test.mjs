// The keyboard: one Tab stop per list (a roving tabindex), arrow keys between cards and
// lists, Enter opens, `n` adds a card, `?` lists the shortcuts, and a focused card's ring is
// drawn whole inside its scrolling list.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addCards, eventually, seedBoard, session } from './harness.mjs';

test('arrow keys move between cards and lists, with one Tab stop per list', async (t) => {
  const { page, api } = await session(t, { width: 1440, height: 900 });
  const { columnIds } = await seedBoard(api, { name: 'Keys', columns: ['Ideas', 'Doing', 'Done'] });
  for (const [i, id] of columnIds.entries()) {
    const letter = 'ABC'[i];
    await addCards(api, id, [`${letter}1`, `${letter}2`, `${letter}3`]);
  }
  await page.locator('.card-title:text-is("C3")').waitFor();
  const focused = () => page.evaluate(() => {
    const el = document.activeElement;
    return el.classList.contains('card') ? el.querySelector('.card-title').textContent : `${el.tagName}:${el.className}`;
  });

  // Each list has exactly one card in the Tab order.
  for (const id of columnIds) {
    assert.equal(await page.locator(`.card-list[data-column="${id}"] .card[tabindex="0"]`).count(), 1);
  }

  await page.locator('.card', { hasText: 'A1' }).focus();
  await page.keyboard.press('ArrowDown');
  assert.equal(await focused(), 'A2');
  await page.keyboard.press('ArrowDown');
  assert.equal(await focused(), 'A3');
  await page.keyboard.press('ArrowRight');
  assert.equal(await focused(), 'B3');
  await page.keyboard.press('ArrowUp');
  assert.equal(await focused(), 'B2');
  await page.keyboard.press('Home');
  assert.equal(await focused(), 'B1');
  await page.keyboard.press('End');
  assert.equal(await focused(), 'B3');
  await page.keyboard.press('ArrowRight');
  assert.equal(await focused(), 'C3');
  await page.keyboard.press('ArrowLeft');
  await page.keyboard.press('ArrowLeft');
  assert.equal(await focused(), 'A3');

  // The focus ring is drawn whole: the card's outline fits inside the list that clips it.
  const ring = await page.evaluate(() => {
    const card = document.activeElement;
    const style = getComputedStyle(card);
    const spread = parseFloat(style.outlineWidth) + parseFloat(style.outlineOffset);
    const c = card.getBoundingClientRect();
    const l = card.closest('.card-list').getBoundingClientRect();
    return { style: style.outlineStyle, inside: c.left - spread >= l.left && c.right + spread <= l.right && c.top - spread >= l.top };
  });
  assert.equal(ring.style, 'solid');
  assert.equal(ring.inside, true, 'the focus ring is not cut off at the sides');

  // Enter opens the card; Esc closes it and gives the focus back to the card.
  await page.keyboard.press('Enter');
  await page.waitForSelector('#card-dialog[open]');
  assert.equal(await page.inputValue('#card-dialog .title-input'), 'A3');
  await page.keyboard.press('Escape');
  await page.waitForSelector('#card-dialog[open]', { state: 'detached' });
  assert.equal(await focused(), 'A3');

  // Tab leaves the list (its other cards are no Tab stops) and reaches the next list's card
  // after its few controls; the list keeps the card last focused as its stop.
  const stops = [];
  for (let i = 0; i < 6 && (await focused()) !== 'B3'; i += 1) {
    await page.keyboard.press('Tab');
    stops.push(await focused());
  }
  assert.equal(stops.at(-1), 'B3', `Tab reaches the next list's card: ${stops.join(' → ')}`);
  assert.ok(!stops.some((s) => /^A/.test(s)), 'no other card of the first list is a Tab stop');
  assert.ok(stops.length <= 4, `${stops.length} Tabs from one list's card to the next list's`);

  // n adds a card to the list in focus.
  await page.keyboard.press('n');
  assert.equal(await page.evaluate(() => document.activeElement.getAttribute('aria-label')), 'New card in Doing');
  await page.keyboard.type('Typed after n');
  await page.keyboard.press('Enter');
  await eventually(async () => (await api.get('/projects')).projects[0].columns[1].tasks.some((x) => x.title === 'Typed after n'),
    { message: 'the card added with n' });

  // Alt+arrows move the focused card, and the focus moves with it.
  await page.locator('.card', { hasText: 'A1' }).focus();
  await page.keyboard.press('Alt+ArrowRight');
  await page.locator(`.card-list[data-column="${columnIds[1]}"] .card-title:text-is("A1")`).waitFor();
  await eventually(async () => (await focused()) === 'A1', { message: 'the focus to follow the moved card' });
  await page.keyboard.press('Alt+ArrowDown');
  await eventually(async () => (await page.locator(`.card-list[data-column="${columnIds[1]}"] .card-title`).allTextContents())
    .indexOf('A1') === 1, { message: 'A1 one place down' });
  await eventually(async () => (await focused()) === 'A1', { message: 'the focus to stay on the moved card' });

  // A change made elsewhere draws the focused card again: the focus stays on the card, not
  // on the board's heading.
  const moved = (await api.get('/projects')).projects[0].columns[1].tasks.find((x) => x.title === 'A1');
  await api.patch(`/tasks/${moved.id}`, { title: 'A1 renamed' });
  await page.locator('.card-title:text-is("A1 renamed")').waitFor();
  await eventually(async () => (await focused()) === 'A1 renamed', { message: 'the focus to stay on the card drawn again' });

  // ? lists the shortcuts.
  await page.locator('.card', { hasText: 'C1' }).focus();
  await page.keyboard.press('?');
  await page.waitForSelector('#help-dialog[open]');
  assert.match(await page.textContent('#help-dialog'), /Add a card to this list/);
  await page.keyboard.press('Escape');
  await page.waitForSelector('#help-dialog[open]', { state: 'detached' });

  // The first Tab of the page offers to skip to the cards, keeping the board's address.
  const address = page.url();
  await page.reload();
  await page.locator('.card-title:text-is("C3")').waitFor();
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'skip-link');
  await page.keyboard.press('Enter');
  assert.equal(await focused(), 'A2');
  assert.equal(page.url(), address);
  assert.deepEqual(page.errors, []);
});
