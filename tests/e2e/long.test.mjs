// Long lists (issue 33, "Instant at 5,000 cards"): a list of hundreds of cards draws only
// the ones in and near its visible part, yet every card is reached by the keyboard and by
// scrolling; a change from elsewhere patches the one card it changed (the other tiles are
// the same elements) and keeps the scroll position and the focus; a drop in a scrolled list
// lands between the cards it was dropped between; due labels still move as time passes.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addCards, eventually, seedBoard, session, signIn } from './harness.mjs';

const N = 300;

async function longBoard(api) {
  const { columnIds } = await seedBoard(api, { name: 'Long', columns: ['Backlog', 'Doing'] });
  const titles = Array.from({ length: N }, (_, i) => `Card ${i + 1}`);
  const ids = [];
  for (let i = 0; i < N; i += 200) ids.push(...await addCards(api, columnIds[0], titles.slice(i, i + 200)));
  // addCards numbers positions from 1 per batch: place the second batch after the first.
  await api.patch('/tasks/positions', { positions: ids.map((id, i) => ({ id, position: (i + 1) * 10 })) });
  await addCards(api, columnIds[1], ['D1', 'D2', 'D3', 'D4', 'D5', 'D6']);
  return { columnIds, ids };
}

const list = (page, id) => page.locator(`.card-list[data-column="${id}"]`);
const focusedTitle = (page) => page.evaluate(() => document.activeElement?.closest?.('.card')?.querySelector('.card-title')?.textContent ?? null);
const drawn = (page, id) => list(page, id).locator('.card').count();

/** Scrolls a list to its middle; resolves the titles of the cards wholly in view there. */
async function scrollToMiddle(page, id) {
  await list(page, id).evaluate((el) => { el.scrollTop = el.scrollHeight / 2 - el.clientHeight / 2; });
  return eventually(async () => {
    const titles = await list(page, id).evaluate((el) => {
      const box = el.getBoundingClientRect();
      return [...el.querySelectorAll('.card')].filter((c) => {
        const r = c.getBoundingClientRect();
        return r.top >= box.top && r.bottom <= box.bottom;
      }).map((c) => c.querySelector('.card-title').textContent);
    });
    // The middle of the list is drawn (not the cards of its top).
    return titles.length >= 4 && Number(titles[0].slice('Card '.length)) > 100 && titles;
  }, { message: 'the middle of the list to be drawn' });
}

test('a long list draws a window, and the keyboard and scrolling reach every card', async (t) => {
  const { page, api } = await session(t, { width: 1440, height: 900 });
  const { columnIds: [backlog, doing] } = await longBoard(api);
  await page.locator('.card-title:text-is("Card 1")').waitFor();
  await page.locator('.card-title:text-is("D6")').waitFor();

  // Only part of the list is made of elements; the list scrolls as far as all of it.
  const shown = await drawn(page, backlog);
  assert.ok(shown > 5 && shown < N / 2, `${shown} of ${N} cards drawn`);
  assert.match(await page.locator(`.column[data-id="${backlog}"] .count`).textContent(), new RegExp(`^${N}`));
  const { scrollHeight, clientHeight } = await list(page, backlog).evaluate((el) => ({ scrollHeight: el.scrollHeight, clientHeight: el.clientHeight }));
  assert.ok(scrollHeight > 20 * N, `the list is as tall as its ${N} cards (${scrollHeight}px)`);

  // The keyboard goes by the list's cards, drawing the one it reaches.
  await page.locator('.card', { hasText: 'Card 1' }).first().focus();
  assert.equal(await focusedTitle(page), 'Card 1');
  await page.keyboard.press('End');
  assert.equal(await focusedTitle(page), `Card ${N}`);
  // A screen reader hears where the card is in the whole list.
  assert.deepEqual(await page.evaluate(() => [document.activeElement.getAttribute('aria-posinset'), document.activeElement.getAttribute('aria-setsize')]),
    [String(N), String(N)]);
  await eventually(async () => (await list(page, backlog).evaluate((el) => el.scrollTop)) > scrollHeight - clientHeight - 200,
    { message: 'the list to scroll to its end' });
  await page.keyboard.press('ArrowUp');
  assert.equal(await focusedTitle(page), `Card ${N - 1}`);
  // Still one Tab stop in the list, on the focused card.
  assert.equal(await list(page, backlog).locator('.card[tabindex="0"]').count(), 1);
  assert.equal(await list(page, backlog).locator('.card[tabindex="0"] .card-title').textContent(), `Card ${N - 1}`);
  await page.keyboard.press('Home');
  assert.equal(await focusedTitle(page), 'Card 1');
  for (let i = 0; i < 3; i += 1) await page.keyboard.press('ArrowDown');
  assert.equal(await focusedTitle(page), 'Card 4');
  await page.keyboard.press('ArrowRight');
  assert.equal(await focusedTitle(page), 'D4');
  await page.keyboard.press('ArrowLeft');
  assert.equal(await focusedTitle(page), 'Card 4');

  // Arrow keys one by one down past the first window: every card comes in turn.
  for (let i = 5; i <= 60; i += 1) {
    await page.keyboard.press('ArrowDown');
    assert.equal(await focusedTitle(page), `Card ${i}`);
  }
  // Alt+Down moves the focused card one place, and the focus goes with it.
  await page.keyboard.press('Alt+ArrowDown');
  await eventually(async () => {
    const { tasks } = (await api.get('/projects')).projects[0].columns[0];
    return tasks.map((x) => x.title).indexOf('Card 60') === 60;
  }, { message: 'Card 60 one place down' });
  assert.equal(await focusedTitle(page), 'Card 60');

  // Scrolling to the middle draws the cards there.
  await list(page, backlog).evaluate((el) => { el.scrollTop = el.scrollHeight / 2 - el.clientHeight / 2; });
  await eventually(async () => {
    const titles = await list(page, backlog).locator('.card-title').allTextContents();
    return titles.some((x) => /^Card 1[45]\d$/.test(x));
  }, { message: 'the middle of the list to be drawn' });
  assert.ok(await drawn(page, backlog) < N / 2);
  assert.deepEqual(page.errors, []);
  void doing;
});

test('Alt+Left into a long list scrolled down keeps the focus on the card moved to its top', async (t) => {
  const { page, api } = await session(t, { width: 1440, height: 900 });
  const { columnIds: [backlog] } = await longBoard(api);
  await page.locator('.card-title:text-is("D1")').waitFor();
  await scrollToMiddle(page, backlog);
  await page.locator('.card', { has: page.locator('.card-title:text-is("D1")') }).focus();
  await page.keyboard.press('Alt+ArrowLeft');
  await eventually(async () => (await api.get('/projects')).projects[0].columns[0].tasks[0].title === 'D1',
    { message: 'D1 at the top of Backlog' });
  await eventually(async () => (await focusedTitle(page)) === 'D1'
    && (await page.evaluate(() => document.activeElement.closest('.card-list')?.dataset.column)) === backlog,
  { message: 'the focus to follow D1 into Backlog' });
  // The list scrolled to show it, and the keyboard goes on from there.
  await page.keyboard.press('ArrowDown');
  assert.equal(await focusedTitle(page), 'Card 1');
  assert.ok(await drawn(page, backlog) < N / 2);
  assert.deepEqual(page.errors, []);
});

test('a change from elsewhere in a long list patches one tile and keeps the scroll and the focus', async (t) => {
  const { page, api } = await session(t, { width: 1440, height: 900 });
  const { columnIds: [backlog], ids } = await longBoard(api);
  await page.locator('.card-title:text-is("Card 1")').waitFor();

  // Scrolled into the middle, a card there focused.
  const middle = await scrollToMiddle(page, backlog);
  const target = page.locator('.card', { has: page.locator(`.card-title:text-is("${middle[1]}")`) });
  await target.focus();
  const before = await list(page, backlog).evaluate((el) => {
    window.__tiles = new Map([...el.querySelectorAll('.card')].map((c) => [c.dataset.id, [c, c.firstElementChild]]));
    return { scrollTop: el.scrollTop, drawn: window.__tiles.size };
  });
  assert.ok(before.drawn < N / 2);

  // Another device renames the card below it.
  const changed = ids[Number(middle[2].slice('Card '.length)) - 1];
  await api.patch(`/tasks/${changed}`, { title: 'Renamed elsewhere' });
  await page.locator('.card-title:text-is("Renamed elsewhere")').waitFor();
  const after = await list(page, backlog).evaluate((el, changed) => {
    let same = 0;
    let redrawn = [];
    for (const [id, [tile, inner]] of window.__tiles) {
      const now = el.querySelector(`.card[data-id="${CSS.escape(id)}"]`);
      if (now === tile && tile.firstElementChild === inner) same += 1;
      else if (id !== changed) redrawn.push(id);
    }
    return { scrollTop: el.scrollTop, same, redrawn, focused: document.activeElement?.querySelector?.('.card-title')?.textContent };
  }, changed);
  assert.deepEqual(after.redrawn, [], 'no other tile was made or drawn anew');
  assert.equal(after.same, before.drawn - 1, 'every other tile is the same element with the same inside');
  assert.equal(after.scrollTop, before.scrollTop, 'the list kept its scroll position');
  assert.equal(after.focused, middle[1], 'the focused card kept the focus');
  assert.ok(await drawn(page, backlog) < N / 2);
  assert.deepEqual(page.errors, []);
});

test('a drop in a scrolled long list lands between the cards it was dropped between', async (t) => {
  const { page, api } = await session(t, { width: 1440, height: 900 });
  const { columnIds: [backlog] } = await longBoard(api);
  await page.locator('.card-title:text-is("Card 1")').waitFor();
  const card = (title) => page.locator('.card', { has: page.locator(`.card-title:text-is("${title}")`) });
  const visible = await scrollToMiddle(page, backlog);
  assert.ok(await drawn(page, backlog) < N / 2);
  assert.ok(visible.length >= 4, `cards in view: ${visible}`);
  const [moving, , above, below] = visible;
  // Dropped on the lower half of `above`: after it, before `below`.
  await card(moving).dragTo(card(above), { targetPosition: { x: 30, y: (await card(above).boundingBox()).height - 4 } });
  await eventually(async () => {
    const titles = (await api.get('/projects')).projects[0].columns[0].tasks.map((x) => x.title);
    const at = titles.indexOf(moving);
    return titles[at - 1] === above && titles[at + 1] === below;
  }, { message: `${moving} between ${above} and ${below}` });
  assert.deepEqual(page.errors, []);
});

test('due labels move on as a due time passes and at midnight', async (t) => {
  const { page, api, server } = await session(t, { width: 1440, height: 900, timezoneId: 'UTC', signIn: false });
  // 23:58:30 in the page's zone (UTC) on 10 June 2026; the page's clock then runs on.
  await page.clock.install({ time: new Date('2026-06-10T23:58:30Z') });
  const { columnIds: [todo] } = await seedBoard(api, { name: 'Dates', columns: ['To do'] });
  await addCards(api, todo, [
    { title: 'Late tonight', deadline: '2026-06-10', deadlineTime: '23:58' },
    { title: 'Tomorrow morning', deadline: '2026-06-11' },
    { title: 'In three days', deadline: '2026-06-13' },
  ]);
  await signIn(page, server);
  const label = async (title) => (await page.locator('.card', { has: page.locator(`.card-title:text-is("${title}")`) })
    .locator('.pill.due').textContent()).replace('Due: ', '');
  await page.locator('.card-title:text-is("In three days")').waitFor();
  assert.equal(await label('Late tonight'), 'Today 23:58');
  assert.equal(await label('Tomorrow morning'), 'Tomorrow');
  assert.equal(await label('In three days'), 'In 3 days');

  // At 23:59 the time has passed; past midnight every day moves by one.
  await page.clock.runFor(45000);
  await eventually(async () => (await label('Late tonight')) === 'Overdue · today 23:58', { message: 'the time to pass' });
  assert.equal(await label('Tomorrow morning'), 'Tomorrow');
  await page.clock.runFor(60000);
  await eventually(async () => (await label('Tomorrow morning')) === 'Today', { message: 'midnight' });
  assert.equal(await label('Late tonight'), 'Overdue · yesterday');
  assert.equal(await label('In three days'), 'In 2 days');
  assert.deepEqual(page.errors, []);
});
