// What a daily user reaches for (issue 33): finished cards stay in their list, marked as
// finished, with the counts saying what the filters hide; a card typed into a list lands at
// its bottom; and the smaller daily features, one test each.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { addCards, centre, eventually, mouseDrag, seedBoard, session } from './harness.mjs';

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

/** Types `cards` into a list's add field one after another, each sent with Enter. */
async function typeCards(page, column, cards) {
  const input = column.locator('.add-card input');
  for (const title of cards) {
    await input.fill(title);
    await input.press('Enter');
    await eventually(async () => (await input.inputValue()) === '', { message: `${title} to be added` });
  }
}

test('cards typed into a list land at its bottom, in the order typed', async (t) => {
  const { page, api } = await session(t, { width: 1440, height: 900 });
  const { projectId, columnIds: [todo] } = await seedBoard(api, { name: 'Order', columns: ['To do'] });
  await addCards(api, todo, ['Already here', 'Also here']);
  await page.goto(`${page.url().split('#')[0]}#/b/${projectId}`);
  await page.locator('.card-title:text-is("Also here")').waitFor();

  const typed = ['First', 'Second', 'Third', 'Fourth'];
  await typeCards(page, page.locator(`.column[data-id="${todo}"]`), typed);
  const expected = ['Already here', 'Also here', ...typed];
  await eventually(async () => JSON.stringify(await titles(page, todo)) === JSON.stringify(expected), { message: 'the order typed on the board' });
  // The cards show before the server has answered them: wait for the last to land.
  const { projects: [board] } = await eventually(async () => {
    const read = await api.get(`/projects/${projectId}`);
    return read.projects[0].columns[0].tasks.length === expected.length && read;
  }, { message: 'the cards to land' });
  assert.deepEqual(board.columns[0].tasks.map((x) => x.title), expected, 'the server holds the same order');
  // After a reload too (the order is the server's, not only the page's).
  await page.reload();
  await page.locator('.card-title:text-is("Fourth")').waitFor();
  assert.deepEqual(await titles(page, todo), expected);
  assert.deepEqual(page.errors, []);
});

test('cards typed into a list of a file opened without a key land at its bottom too', async (t) => {
  const { page, api, server } = await session(t, { signIn: false });
  const { columnIds: [todo] } = await seedBoard(api, { name: 'Offline', columns: ['To do'] });
  await addCards(api, todo, ['Already here']);
  const res = await fetch(`${server.url}/api/v1/export`, { headers: { Authorization: `Bearer ${server.key}` } });
  const dir = await mkdtemp(path.join(tmpdir(), 'workboard-export-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'workboard-export.json');
  await writeFile(file, await res.text());
  await page.goto(server.url);
  await page.setInputFiles('#import-file', file);
  await page.click('.project-link:text-is("Offline")');
  await page.locator('.card-title:text-is("Already here")').waitFor();

  const typed = ['First', 'Second', 'Third', 'Fourth'];
  await typeCards(page, page.locator('.column', { has: page.locator('.column-name:text-is("To do")') }), typed);
  const shown = () => page.locator('.card-list .card-title').allTextContents();
  await eventually(async () => JSON.stringify(await shown()) === JSON.stringify(['Already here', ...typed]), { message: 'the order typed' });
  await page.reload();
  await page.locator('.card-title:text-is("Fourth")').waitFor();
  assert.deepEqual(await shown(), ['Already here', ...typed]);
  assert.deepEqual(page.errors, []);
});

test('a tile marks a card that has a description', async (t) => {
  const { page, api } = await session(t, { width: 1440, height: 900 });
  const { projectId, columnIds: [todo] } = await seedBoard(api, { name: 'Described', columns: ['To do'] });
  const [, bare] = await addCards(api, todo, [{ title: 'With notes', description: 'The **plan**' }, 'Bare', { title: 'Blank', description: '   ' }]);
  await page.goto(`${page.url().split('#')[0]}#/b/${projectId}`);
  const tile = (title) => page.locator('.card', { has: page.locator(`.card-title:text-is("${title}")`) });
  await tile('With notes').locator('.has-description').waitFor();
  assert.match(await tile('With notes').getAttribute('aria-label'), /has a description/);
  assert.equal(await tile('Bare').locator('.has-description').count(), 0);
  assert.doesNotMatch(await tile('Bare').getAttribute('aria-label'), /description/);
  assert.equal(await tile('Blank').locator('.has-description').count(), 0, 'blank text is no description');
  // A description written on another device marks the tile too.
  await api.patch(`/tasks/${bare}`, { description: 'Now it has one' });
  await tile('Bare').locator('.has-description').waitFor();
  assert.deepEqual(page.errors, []);
});

/** WCAG contrast of an element's text on its own background (both opaque). */
function contrastOf(el) {
  const rgb = (css) => css.match(/\d+(\.\d+)?/g).slice(0, 3).map(Number);
  const lum = ([r, g, b]) => {
    const [R, G, B] = [r, g, b].map((v) => {
      const c = v / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * R + 0.7152 * G + 0.0722 * B;
  };
  const style = getComputedStyle(el);
  const [a, b] = [lum(rgb(style.color)), lum(rgb(style.backgroundColor))];
  return { colour: `${style.color} on ${style.backgroundColor}`, ratio: (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05) };
}

test('a tag has one colour per tag text, on every card and board, with enough contrast', async (t) => {
  const { page, api } = await session(t, { width: 1440, height: 900 });
  const names = ['web', 'billing', 'urgent', 'design', 'legal', 'backend', 'ops', 'mobile'];
  const { projectId, columnIds: [todo] } = await seedBoard(api, { name: 'Tags', columns: ['To do'] });
  await addCards(api, todo, [{ title: 'One', tags: names.slice(0, 4) }, { title: 'Two', tags: names.slice(4) }, { title: 'Three', tags: ['Web', 'ops'] }]);
  const other = await seedBoard(api, { name: 'Other', columns: ['To do'] });
  await addCards(api, other.columnIds[0], [{ title: 'Elsewhere', tags: ['web'] }]);
  await page.goto(`${page.url().split('#')[0]}#/b/${projectId}`);
  await page.locator('.card-title:text-is("Three")').waitFor();

  const colours = async (title) => page.locator('.card', { has: page.locator(`.card-title:text-is("${title}")`) })
    .locator('.tags li').evaluateAll((items, fn) => items.map((li) => [li.textContent, new Function(`return ${fn}`)()(li)]), contrastOf.toString());
  const seen = new Map();
  for (const title of ['One', 'Two', 'Three']) {
    for (const [text, { colour, ratio }] of await colours(title)) {
      assert.ok(ratio >= 4.5, `${text}: ${colour} has contrast ${ratio.toFixed(2)}`);
      const key = text.toLowerCase();
      if (seen.has(key)) assert.equal(colour, seen.get(key), `${text} has one colour`);
      seen.set(key, colour);
    }
  }
  // The palette tells tags apart: eight tags get at least four colours.
  assert.ok(new Set(names.map((n) => seen.get(n))).size >= 4, `colours: ${[...seen.values()].join(', ')}`);

  // The same on another board, and in the card dialog.
  await page.click('.project-link:text-is("Other")');
  await page.locator('.card-title:text-is("Elsewhere")').waitFor();
  assert.equal((await colours('Elsewhere'))[0][1].colour, seen.get('web'));
  await page.locator('.card', { hasText: 'Elsewhere' }).click();
  const inDialog = await page.locator('#card-dialog .tags li').first().evaluate((li, fn) => new Function(`return ${fn}`)()(li), contrastOf.toString());
  assert.equal(inDialog.colour, seen.get('web'));
  assert.deepEqual(page.errors, []);
});

test('the list of boards folds away, and stays folded after a reload', async (t) => {
  const { page, api } = await session(t, { width: 1440, height: 900 });
  const { projectId } = await seedBoard(api, { name: 'Wide', columns: ['A', 'B', 'C', 'D', 'E', 'F', 'G', 'H'] });
  await page.goto(`${page.url().split('#')[0]}#/b/${projectId}`);
  await page.locator('.column-name:text-is("H")').waitFor();
  const toggle = page.getByRole('button', { name: 'List of boards' });
  assert.equal(await toggle.getAttribute('aria-expanded'), 'true');
  assert.ok(await page.locator('#sidebar').isVisible());
  const widthBefore = (await page.locator('#board').boundingBox()).width;

  await toggle.click();
  await page.locator('#sidebar').waitFor({ state: 'hidden' });
  assert.equal(await toggle.getAttribute('aria-expanded'), 'false');
  assert.ok((await page.locator('#board').boundingBox()).width > widthBefore + 100, 'the board takes the room');

  await page.reload();
  await page.locator('.column-name:text-is("H")').waitFor();
  assert.equal(await page.locator('#sidebar').isVisible(), false, 'still folded after a reload');
  assert.equal(await toggle.getAttribute('aria-expanded'), 'false');
  await toggle.click();
  await page.locator('#sidebar').waitFor();
  await page.reload();
  await page.locator('.project-link:text-is("Wide")').waitFor();
  assert.equal(await toggle.getAttribute('aria-expanded'), 'true');
  assert.deepEqual(page.errors, []);
});

test("the board's photo and a list's description show where they belong", async (t) => {
  const { page, api } = await session(t, { width: 1440, height: 900 });
  const photo = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
  const { project } = await api.post('/projects', { name: 'Pictured', photo, columns: [{ name: 'Inbox', description: 'Anything new lands here; sort it on Mondays.' }, 'Doing'] });
  const [inbox, doing] = project.columns.map((c) => c.id);
  await page.goto(`${page.url().split('#')[0]}#/b/${project.id}`);
  await page.locator('.column-name:text-is("Doing")').waitFor();

  // The photo beside the board's name, and beside it in the list of boards.
  await page.locator('.board-head img.board-photo').waitFor();
  assert.equal(await page.locator('.board-head img.board-photo').getAttribute('src'), photo);
  assert.equal(await page.locator('.project-link', { hasText: 'Pictured' }).locator('img').getAttribute('src'), photo);
  assert.ok(await page.locator('.board-head img.board-photo').evaluate((img) => img.complete && img.naturalWidth === 1), 'the image loads');

  // The description under the list's name, read out with the list; none for a list without.
  const description = page.locator(`.column[data-id="${inbox}"] .column-description`);
  assert.equal(await description.textContent(), 'Anything new lands here; sort it on Mondays.');
  assert.equal(await page.locator(`.column[data-id="${inbox}"]`).getAttribute('aria-describedby'), await description.getAttribute('id'));
  assert.equal(await page.locator(`.column[data-id="${doing}"] .column-description`).isVisible(), false);

  // Changed on another device, both follow; and a list's description can be written here.
  await api.patch(`/projects/${project.id}`, { photo: null });
  await page.locator('.board-head img.board-photo').waitFor({ state: 'hidden' });
  await page.locator(`.column[data-id="${doing}"] .list-menu-toggle`).click();
  await page.locator(`.column[data-id="${doing}"] .list-menu`).getByRole('button', { name: 'Edit list description' }).click();
  await page.getByLabel('List description (empty for none)').fill('Two at a time at most');
  await page.getByLabel('List description (empty for none)').press('Enter');
  await page.locator(`.column[data-id="${doing}"] .column-description:text-is("Two at a time at most")`).waitFor();
  await eventually(async () => (await api.get(`/projects/${project.id}`)).projects[0].columns[1].description === 'Two at a time at most',
    { message: 'the description to be saved' });
  assert.deepEqual(page.errors, []);
});

test('an archived board is shown read-only until restored', async (t) => {
  const { page, api } = await session(t, { width: 1440, height: 900 });
  const { projectId, columnIds: [todo, doing] } = await seedBoard(api, { name: 'Old project', columns: ['To do', 'Doing'] });
  const [first] = await addCards(api, todo, ['Keep me here', 'Second']);
  await api.patch(`/projects/${projectId}`, { archivedAt: Date.now() });
  await page.goto(`${page.url().split('#')[0]}#/b/${projectId}`);
  await page.locator('.card-title:text-is("Keep me here")').waitFor();

  // A banner says so, with Restore; no add, list or edit controls show.
  const banner = page.locator('.archived-banner');
  await banner.waitFor();
  assert.match(await banner.textContent(), /archived/i);
  for (const control of ['.add-card input', '.add-column input', '.list-menu-toggle']) {
    assert.equal(await page.locator(control).filter({ visible: true }).count(), 0, `${control} is not shown`);
  }
  assert.equal(await page.locator('#board-actions button', { hasText: 'Rename' }).count(), 0, 'no Rename in the board menu');

  // A drag moves nothing; neither does Alt+arrow.
  const tile = page.locator('.card', { hasText: 'Keep me here' });
  await mouseDrag(page, tile, await centre(page.locator(`.column[data-id="${doing}"] .card-list`)));
  await tile.focus();
  await page.keyboard.press('Alt+ArrowRight');
  await page.keyboard.press('Alt+ArrowDown');
  // The card opens to be read, with its fields off.
  await tile.click();
  const dialog = page.locator('#card-dialog[open]');
  await dialog.waitFor();
  assert.equal(await dialog.locator('.title-input').isDisabled(), true);
  assert.equal(await dialog.getByRole('button', { name: 'Mark complete' }).isDisabled(), true);
  assert.equal(await dialog.getByRole('button', { name: 'Delete card' }).isDisabled(), true);
  assert.equal(await page.evaluate(() => document.activeElement.getAttribute('aria-label') || document.activeElement.textContent), 'Close');
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });
  const { task } = await api.get(`/tasks/${first}`);
  assert.equal(task.columnId, todo, 'the card stayed in its list');
  assert.equal(task.completedAt, null);
  assert.deepEqual(await titles(page, todo), ['Keep me here', 'Second']);

  // Restore: the board is editable again.
  await banner.getByRole('button', { name: 'Restore the board' }).click();
  await banner.waitFor({ state: 'hidden' });
  await eventually(async () => (await api.get(`/projects/${projectId}`)).projects[0].archivedAt === null, { message: 'the restore' });
  await page.locator(`.column[data-id="${todo}"] .add-card input`).fill('New again');
  await page.locator(`.column[data-id="${todo}"] .add-card input`).press('Enter');
  await page.locator('.card-title:text-is("New again")').waitFor();
  assert.deepEqual(page.errors, []);
});

/** A card with checklist items `texts`, opened in its dialog; returns its id. */
async function openChecklist(page, api, texts) {
  const { projectId, columnIds: [todo] } = await seedBoard(api, { name: 'Lists', columns: ['To do'] });
  const [id] = await addCards(api, todo, ['Pack']);
  await api.post(`/tasks/${id}/checklist`, { items: texts.map((text) => ({ text })) });
  await page.goto(`${page.url().split('#')[0]}#/b/${projectId}`);
  await page.locator('.card', { hasText: 'Pack' }).click();
  await page.waitForSelector('#card-dialog[open]');
  await page.locator('#card-dialog .checklist li').nth(texts.length - 1).waitFor();
  return id;
}
const shownItems = (page) => page.$$eval('#card-dialog .checklist .item-text', (els) => els.map((el) => el.value));
const savedItems = async (api, id) => (await api.get(`/tasks/${id}`)).task.checklist
  .sort((a, b) => a.position - b.position).map((k) => k.text);
const itemRow = (page, text) => page.locator('#card-dialog .checklist li', { has: page.locator(`.item-text[value="${text}"]`) });
const inOrder = async (page, api, id, expected, message) => {
  await eventually(async () => JSON.stringify(await savedItems(api, id)) === JSON.stringify(expected), { message });
  await eventually(async () => JSON.stringify(await shownItems(page)) === JSON.stringify(expected), { message: `${message}, as shown` });
};

test('checklist items are dragged into order with the mouse, and moved by Alt+Up/Down', async (t) => {
  const { page, api } = await session(t, { width: 1440, height: 900 });
  const id = await openChecklist(page, api, ['Passport', 'Tickets', 'Charger']);

  // "Charger" by its grip onto the upper half of "Passport": first.
  await mouseDrag(page, itemRow(page, 'Charger').locator('.item-grip'), await centre(itemRow(page, 'Passport'), 0, -6));
  await inOrder(page, api, id, ['Charger', 'Passport', 'Tickets'], 'Charger dragged to the top');
  // "Charger" onto the lower half of "Tickets": last.
  await mouseDrag(page, itemRow(page, 'Charger').locator('.item-grip'), await centre(itemRow(page, 'Tickets'), 0, 8));
  await inOrder(page, api, id, ['Passport', 'Tickets', 'Charger'], 'Charger dragged to the bottom');

  // The keyboard: Alt+Up twice in an item's text moves it twice, the focus staying with it.
  await itemRow(page, 'Charger').locator('.item-text').focus();
  await page.keyboard.press('Alt+ArrowUp');
  await inOrder(page, api, id, ['Passport', 'Charger', 'Tickets'], 'Alt+Up once');
  await page.keyboard.press('Alt+ArrowUp');
  await inOrder(page, api, id, ['Charger', 'Passport', 'Tickets'], 'Alt+Up twice');
  assert.equal(await page.evaluate(() => document.activeElement.value), 'Charger', 'the focus stays in the moved item');
  await page.keyboard.press('Alt+ArrowDown');
  await inOrder(page, api, id, ['Passport', 'Charger', 'Tickets'], 'Alt+Down');
  // The dialog stays open: Alt+arrows moved an item, not the card.
  assert.ok(await page.locator('#card-dialog[open]').isVisible());

  // A reorder undone with Ctrl+Z (outside a text field, where it undoes typing) goes back.
  await page.locator('#card-dialog').getByRole('button', { name: 'Move Charger down' }).focus();
  await page.keyboard.press('Control+z');
  await inOrder(page, api, id, ['Charger', 'Passport', 'Tickets'], 'Ctrl+Z');
  assert.deepEqual(page.errors, []);
});

test('a checklist reorder shows at once and is put back when the server refuses it', async (t) => {
  const { page, api } = await session(t, { width: 1440, height: 900 });
  const id = await openChecklist(page, api, ['Passport', 'Tickets', 'Charger']);
  let release;
  const held = new Promise((resolve) => { release = resolve; });
  await page.route('**/api/v1/tasks/*/checklist/order', async (route) => {
    await held;
    await route.fulfill({ status: 422, contentType: 'application/json', body: JSON.stringify({ ok: false, error: 'refused for the test', code: 'invalid' }) });
  });
  await itemRow(page, 'Tickets').locator('.item-text').focus();
  await page.keyboard.press('Alt+ArrowDown');
  // Shown before the server answered.
  await eventually(async () => JSON.stringify(await shownItems(page)) === JSON.stringify(['Passport', 'Charger', 'Tickets']), { message: 'the order shown at once' });
  release();
  await page.waitForSelector('.toast-error .toast-text:has-text("refused for the test")');
  await eventually(async () => JSON.stringify(await shownItems(page)) === JSON.stringify(['Passport', 'Tickets', 'Charger']), { message: 'the order put back' });
  assert.deepEqual(await savedItems(api, id), ['Passport', 'Tickets', 'Charger']);
  assert.deepEqual(page.errors, []);
});

test('on a touch phone a checklist item is dragged by its grip with a finger', async (t) => {
  const { page, api } = await session(t, { width: 390, height: 844, hasTouch: true, isMobile: true });
  const id = await openChecklist(page, api, ['Passport', 'Tickets', 'Charger']);
  await page.waitForSelector('#card-dialog:not(.settling)');
  const grip = itemRow(page, 'Passport').locator('.item-grip');
  await grip.scrollIntoViewIfNeeded();
  const box = await grip.boundingBox();
  assert.ok(box.width >= 44 && box.height >= 44, `the grip is ${box.width}x${box.height}`);
  const touch = await page.context().newCDPSession(page);
  const send = (type, points) => touch.send('Input.dispatchTouchEvent', { type, touchPoints: points });
  const from = await centre(grip);
  const to = await centre(itemRow(page, 'Charger'), 0, 10);
  await send('touchStart', [from]);
  for (let i = 1; i <= 6; i += 1) await send('touchMove', [{ x: from.x, y: from.y + ((to.y - from.y) * i) / 6 }]);
  await send('touchEnd', []);
  await inOrder(page, api, id, ['Tickets', 'Charger', 'Passport'], 'Passport dragged to the bottom by a finger');
  assert.deepEqual(page.errors, []);
});

test('a mouse double-click on a card opens it once, and its second click acts on nothing in the dialog', async (t) => {
  const { page, api } = await session(t, { width: 1440, height: 900 });
  const { projectId, columnIds } = await seedBoard(api, { name: 'Clicks', columns: ['To do', 'Doing', 'Done'] });
  const titles = ['First', 'Second', 'Third', 'Fourth', 'Fifth', 'Sixth', 'Seventh', 'Eighth'];
  const ids = [];
  for (const column of columnIds) {
    ids.push(...await addCards(api, column, titles.map((title, i) => ({ title: `${title} ${column.slice(-3)}`, tags: i % 2 ? ['web'] : [] }))));
  }
  await page.goto(`${page.url().split('#')[0]}#/b/${projectId}`);
  await page.locator('.card').nth(ids.length - 1).waitFor();
  const writes = [];
  page.on('request', (request) => {
    if (new URL(request.url()).pathname.startsWith('/api/') && request.method() !== 'GET') writes.push(`${request.method()} ${new URL(request.url()).pathname}`);
  });
  const tiles = await page.locator('.card').evaluateAll((els) => els.map((el) => {
    const r = el.getBoundingClientRect();
    return { id: el.dataset.id, x: r.x + r.width / 2, y: r.y + r.height / 2, shown: r.bottom < innerHeight };
  }));
  for (const tile of tiles.filter((x) => x.shown)) {
    await page.mouse.dblclick(tile.x, tile.y);
    await page.waitForSelector('#card-dialog[open]');
    await page.waitForTimeout(200);
    assert.ok(await page.locator('#card-dialog[open]').isVisible(), `the double-click on ${tile.id} left its card open`);
    const title = (await api.get(`/tasks/${tile.id}`)).task.title;
    assert.equal(await page.inputValue('#card-dialog .title-input'), title);
    assert.deepEqual(writes, [], `a double-click on ${title} wrote nothing`);
    // The second click took no control: the focus is where opening the card put it.
    const focused = await page.evaluate(() => document.activeElement.getAttribute('aria-label') || document.activeElement.tagName);
    assert.equal(focused, 'Title', `after a double-click on ${title} the focus is on ${focused}`);
    await page.keyboard.press('Escape');
    await page.waitForSelector('#card-dialog[open]', { state: 'detached' });
  }
  assert.deepEqual(page.errors, []);
});
