// Recurring cards in the web client: the card dialog's Repeat control sets and clears
// `repeat` (a guarded edit, its 422 said under the control), the tile marks a repeating
// card, completing one shows its next occurrence at once from the PATCH reply (the change
// feed held back), and Ctrl+Z of that completion reopens the card and takes the occurrence
// back, online and when the completion was queued offline.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addCards, eventually, screenshot, seedBoard, session } from './harness.mjs';

const card = (page, title) => page.locator('.card', { has: page.locator(`.card-title:text-is("${title}")`) });
/** A UTC day `offset` days from today, `YYYY-MM-DD` (the server counts days in UTC). */
const utcDay = (offset) => new Date(Date.now() + offset * 86400000).toISOString().slice(0, 10);

/** Every card of the board with `title`, finished ones included, as the server holds them. */
async function cardsTitled(api, projectId, title) {
  const { projects: [p] } = await api.get(`/projects/${projectId}?completed=all`);
  return p.columns.flatMap((c) => c.tasks).filter((x) => x.title === title);
}

/** Holds back every `/changes` read until the returned function lets them go. */
async function holdChanges(page) {
  const held = [];
  const match = /\/api\/v1\/changes(\?|$)/;
  await page.route(match, (route) => held.push(route));
  return async () => {
    await page.unroute(match);
    for (const route of held) await route.continue().catch(() => {});
  };
}

test('a weekly repeat set in the dialog; completing shows the next card at once; Ctrl+Z takes it back and reopens', async (t) => {
  const { page, api } = await session(t, { width: 1280, height: 800 });
  const { projectId, columnIds: [todo] } = await seedBoard(api, { name: 'Home', columns: ['To do', 'Done'] });
  const deadline = utcDay(3);
  const [id] = await addCards(api, todo, [{ title: 'Water plants', deadline }, 'Other card']);

  await card(page, 'Water plants').click();
  const dialog = page.locator('#card-dialog');
  const repeat = dialog.getByRole('combobox', { name: 'Repeat', exact: true });
  assert.equal(await repeat.inputValue(), '', 'a card repeats never by default');
  await repeat.selectOption('every');
  await eventually(async () => (await api.get(`/tasks/${id}`)).task.repeat, { message: 'the repeat saved' });
  assert.deepEqual((await api.get(`/tasks/${id}`)).task.repeat, { every: 1, unit: 'week', from: 'deadline' });
  assert.equal(await dialog.getByLabel('Repeat every how many').inputValue(), '1');
  assert.equal(await dialog.getByLabel('Repeat unit').inputValue(), 'week');
  assert.equal(await dialog.getByLabel('Repeat from').inputValue(), 'deadline');

  // The tile marks it, with words for a screen reader.
  const mark = card(page, 'Water plants').locator('.repeat-mark');
  await mark.waitFor();
  assert.equal((await mark.textContent()).includes('↻'), true);
  assert.equal(await mark.locator('.visually-hidden').textContent(), 'Repeats every week from the deadline');
  assert.match(await card(page, 'Water plants').getAttribute('aria-label'), /\. repeats every week from the deadline\./);
  await screenshot(page, 'repeat-dialog-1280');

  // Complete it with the change feed held back: the next card shows from the reply alone,
  // right after the finished one, which stays as finished.
  const release = await holdChanges(page);
  await dialog.getByRole('button', { name: 'Mark complete' }).click();
  await page.waitForSelector('.toast-text:text-is("Completed ‘Water plants’.")');
  const tiles = page.locator(`.card-list[data-column="${todo}"] .card`);
  await eventually(async () => (await tiles.count()) === 3, { message: 'the next occurrence on the board' });
  const titles = await tiles.locator('.card-title').allTextContents();
  assert.deepEqual(titles, ['Water plants', 'Water plants', 'Other card']);
  assert.equal(await tiles.nth(0).evaluate((el) => el.classList.contains('completed')), true, 'the finished card stays, finished');
  assert.equal(await tiles.nth(1).evaluate((el) => el.classList.contains('completed')), false);
  const nextId = await tiles.nth(1).getAttribute('data-id');
  assert.notEqual(nextId, id);
  assert.equal((await api.get(`/tasks/${nextId}`)).task.deadline, utcDay(10));
  await release();
  await screenshot(page, 'repeat-completed-1280');

  // Ctrl+Z: the card reopens and its occurrence goes, one step.
  await page.locator('#board-title').click();
  await page.keyboard.press('Control+z');
  await page.waitForSelector('.toast-text:text-is("Restored ‘Water plants’ to To do")');
  await page.locator(`.card[data-id="${nextId}"]`).waitFor({ state: 'detached' });
  await eventually(async () => {
    const all = await cardsTitled(api, projectId, 'Water plants');
    return all.length === 1 && all[0].id === id && all[0].completedAt === null;
  }, { message: 'exactly one open card titled Water plants' });
  assert.equal(await tiles.count(), 2);
  assert.deepEqual(page.errors, []);
});

test('a repeating card set by the API: its next card shows from the reply alone; the toast\'s Undo takes it back', async (t) => {
  const { page, api } = await session(t, { width: 1280, height: 800 });
  const { projectId, columnIds: [todo] } = await seedBoard(api, { name: 'Home', columns: ['To do'] });
  const [id] = await addCards(api, todo, [{ title: 'Stand-up', deadline: utcDay(1), repeat: { every: 1, unit: 'day', from: 'completion' } }]);
  await card(page, 'Stand-up').click();
  const release = await holdChanges(page);
  await page.locator('#card-dialog').getByRole('button', { name: 'Mark complete' }).click();
  await page.waitForSelector('.toast-text:text-is("Completed ‘Stand-up’.")');
  await eventually(async () => (await card(page, 'Stand-up').count()) === 2, { message: 'the next occurrence, the change feed held back' });
  const nextId = await page.locator(`.card[data-id]:not([data-id="${id}"])`, { has: page.locator('.card-title:text-is("Stand-up")') }).getAttribute('data-id');
  await release();
  await page.locator('.toast').getByRole('button', { name: 'Undo' }).click();
  await page.waitForSelector('.toast-text:text-is("Restored ‘Stand-up’ to To do")');
  await page.locator(`.card[data-id="${nextId}"]`).waitFor({ state: 'detached' });
  await eventually(async () => {
    const all = await cardsTitled(api, projectId, 'Stand-up');
    return all.length === 1 && all[0].id === id && all[0].completedAt === null;
  }, { message: 'exactly one open card titled Stand-up' });
  assert.deepEqual(page.errors, []);
});

test('a completion queued offline: Ctrl+Z takes back the occurrence once the reply names it', async (t) => {
  const { page, api } = await session(t, { width: 1280, height: 800 });
  const { projectId, columnIds: [todo] } = await seedBoard(api, { name: 'Home', columns: ['To do'] });
  await addCards(api, todo, [{ title: 'Pay rent', deadline: utcDay(2), repeat: { every: 1, unit: 'month', from: 'deadline' } }]);
  await card(page, 'Pay rent').waitFor();

  await page.context().setOffline(true);
  await page.evaluate(() => window.dispatchEvent(new Event('offline')));
  await page.waitForSelector('#live-status[data-state="offline"]');
  await card(page, 'Pay rent').click();
  await page.locator('#card-dialog').getByRole('button', { name: 'Mark complete' }).click();
  await page.waitForSelector('.toast-text:text-is("Completed ‘Pay rent’.")');
  await page.locator('#board-title').click();
  await page.keyboard.press('Control+z');
  await page.waitForSelector('.toast-text:text-is("Restored ‘Pay rent’ to To do")');
  await page.context().setOffline(false);
  await page.evaluate(() => window.dispatchEvent(new Event('online')));

  // The completion lands and makes the occurrence; its reply names it, and it is deleted.
  await eventually(async () => {
    const all = await cardsTitled(api, projectId, 'Pay rent');
    return all.length === 1 && all[0].completedAt === null;
  }, { message: 'exactly one open card titled Pay rent', timeout: 20000 });
  await eventually(async () => (await card(page, 'Pay rent').count()) === 1, { message: 'one tile' });
  assert.deepEqual(page.errors, []);
});

test('from the deadline on a card without one: the 422 is said under the control; clearing works', async (t) => {
  const { page, api } = await session(t, { width: 1280, height: 800 });
  const { columnIds: [todo] } = await seedBoard(api, { name: 'Home', columns: ['To do'] });
  const [id] = await addCards(api, todo, ['No deadline']);
  await card(page, 'No deadline').click();
  const dialog = page.locator('#card-dialog');
  await dialog.getByRole('combobox', { name: 'Repeat', exact: true }).selectOption('every');
  // Without a deadline a new rule counts from completion.
  await eventually(async () => (await api.get(`/tasks/${id}`)).task.repeat?.from === 'completion', { message: 'the rule saved' });
  await dialog.getByLabel('Repeat every how many').fill('2');
  await dialog.getByLabel('Repeat every how many').press('Enter');
  await eventually(async () => (await api.get(`/tasks/${id}`)).task.repeat?.every === 2, { message: 'every 2' });
  assert.equal(await dialog.getByLabel('Repeat unit').locator('option:checked').textContent(), 'weeks');

  await dialog.getByLabel('Repeat from').selectOption('deadline');
  const error = dialog.locator('.repeat-field .field-error');
  await eventually(async () => (await error.textContent()).startsWith('Not saved'), { message: 'the 422 under the control' });
  assert.match(await error.textContent(), /repeat/i);
  assert.deepEqual((await api.get(`/tasks/${id}`)).task.repeat, { every: 2, unit: 'week', from: 'completion' });
  await screenshot(page, 'repeat-422-1280');

  // Back to "from completion" clears the error; Never clears the rule.
  await dialog.getByLabel('Repeat from').selectOption('completion');
  await eventually(async () => (await error.textContent()) === '', { message: 'the error cleared' });
  await dialog.getByRole('combobox', { name: 'Repeat', exact: true }).selectOption('');
  await eventually(async () => (await api.get(`/tasks/${id}`)).task.repeat === null, { message: 'the rule cleared' });
  await page.keyboard.press('Escape');
  await card(page, 'No deadline').waitFor();
  assert.equal(await card(page, 'No deadline').locator('.repeat-mark').count(), 0);
  // Clearing it is an edit like any: Ctrl+Z sets the rule back.
  await page.locator('#board-title').click();
  await page.keyboard.press('Control+z');
  await page.waitForSelector('.toast-text:text-is("Repeat of ‘No deadline’ set back")');
  assert.deepEqual((await api.get(`/tasks/${id}`)).task.repeat, { every: 2, unit: 'week', from: 'completion' });
  await card(page, 'No deadline').locator('.repeat-mark').waitFor();
  assert.deepEqual(page.errors, []);
});

test('on a touch phone the Repeat control works, fits the width, every part at least 44x44 px', async (t) => {
  const { page, api } = await session(t, { width: 390, height: 844, hasTouch: true, isMobile: true });
  const { columnIds: [todo] } = await seedBoard(api, { name: 'Phone', columns: ['To do'] });
  const [id] = await addCards(api, todo, [{ title: 'Gym', deadline: utcDay(1) }]);
  await card(page, 'Gym').tap();
  const dialog = page.locator('#card-dialog');
  const repeat = dialog.getByRole('combobox', { name: 'Repeat', exact: true });
  await repeat.scrollIntoViewIfNeeded();
  await repeat.selectOption('every');
  await dialog.getByLabel('Repeat unit').selectOption('day');
  await eventually(async () => (await api.get(`/tasks/${id}`)).task.repeat?.unit === 'day', { message: 'daily saved' });
  const sizes = [];
  for (const label of ['Repeat every how many', 'Repeat unit', 'Repeat from']) {
    const box = await dialog.getByLabel(label).boundingBox();
    sizes.push([label, Math.round(box.width), Math.round(box.height)]);
    assert.ok(box.x >= 0 && box.x + box.width <= 390, `${label} fits the screen's width`);
  }
  const box = await repeat.boundingBox();
  sizes.push(['Repeat', Math.round(box.width), Math.round(box.height)]);
  const small = sizes.filter(([, w, h]) => w < 44 || h < 44);
  assert.deepEqual(small, [], `under 44x44: ${JSON.stringify(small)}`);
  await screenshot(page, 'repeat-phone-390');
  assert.deepEqual(page.errors, []);
});
