// Nothing happens that the user did not mean: a tap opens a card and nothing else; a tag,
// checklist item or comment deleted in a card is named in a toast whose Undo puts it back;
// Ctrl+Z, the toast's Undo and the header's Undo are one model and never contradict each
// other; Escape closes the topmost thing; after an action the focus lands somewhere sensible.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addCards, eventually, seedBoard, session } from './harness.mjs';

const card = (page, title) => page.locator('.card', { has: page.locator(`.card-title:text-is("${title}")`) });

/** Every write the page sends to the interface (anything but a read), as "METHOD /path". */
function recordWrites(page) {
  const writes = [];
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (url.pathname.startsWith('/api/') && request.method() !== 'GET') writes.push(`${request.method()} ${url.pathname}`);
  });
  return writes;
}

/** What has the focus: 'body', 'text field' (a field that raises a phone's keyboard) or a description. */
const focusKind = (page) => page.evaluate(() => {
  const el = document.activeElement;
  if (!el || el === document.body) return 'body';
  if (el.matches('input:not([type=checkbox]):not([type=radio]):not([type=button]), textarea, select, [contenteditable]')) {
    return `text field (${el.getAttribute('aria-label') || el.tagName})`;
  }
  return `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''} ${el.getAttribute('aria-label') || el.textContent.slice(0, 30)}`;
});

async function openByClick(page, title) {
  await card(page, title).click();
  await page.waitForSelector('#card-dialog[open]');
  await page.locator('#card-dialog .title-input').waitFor();
}

test('on a touch screen a tap opens the card and nothing else: no write, no keyboard', async (t) => {
  const { page, api } = await session(t, { width: 390, height: 844, hasTouch: true });
  const { columnIds: [todo] } = await seedBoard(api, { name: 'Phone', columns: ['To do', 'Done'] });
  const titles = ['Tagged card', 'Second', 'Third', 'Fourth', 'Fifth', 'Sixth', 'Seventh', 'Eighth', 'Ninth', 'Lowest card'];
  const ids = await addCards(api, todo, titles.map((title, i) => (i === 0 ? { title, tags: ['urgent', 'web'] } : title)));
  await api.post(`/tasks/${ids[0]}/checklist`, { items: [{ text: 'Copy' }, { text: 'Design' }] });
  await card(page, 'Lowest card').waitFor();
  const writes = recordWrites(page);

  // The tagged card, then every card whose tile is on the screen, the lowest last.
  const visible = [];
  for (const title of titles) {
    const box = await card(page, title).boundingBox();
    if (box && box.y + box.height / 2 < 844) visible.push(title);
  }
  assert.ok(visible.length >= 4, `several cards on the screen (${visible})`);
  for (const title of visible) {
    await card(page, title).tap();
    await page.waitForSelector('#card-dialog[open]');
    await page.locator('#card-dialog .title-input').waitFor();
    assert.equal(await page.inputValue('#card-dialog .title-input'), title, `the tap on ${title} opened it`);
    // Long enough for a stray click to have landed and its write to have gone out.
    await page.waitForTimeout(300);
    assert.deepEqual(writes, [], `a tap on ${title} wrote nothing`);
    const focus = await focusKind(page);
    assert.ok(!focus.startsWith('text field') && focus !== 'body', `after a tap on ${title} the focus is on ${focus}`);
    await page.keyboard.press('Escape');
    await page.waitForSelector('#card-dialog[open]', { state: 'detached' });
  }
  const held = (await api.get(`/tasks/${ids[0]}`)).task;
  assert.deepEqual(held.tags.map((x) => x.text ?? x), ['urgent', 'web'], 'the tags are all there');
  assert.equal((await api.get(`/tasks/${ids.at(-1)}`)).task.completedAt, null, 'the lowest card is not completed');
  assert.deepEqual(page.errors, []);
});

test('on a touch screen the delete buttons of tags and checklist items are 44 px and apart from the arrows', async (t) => {
  const { page, api } = await session(t, { width: 390, height: 844, hasTouch: true });
  const { columnIds: [todo] } = await seedBoard(api, { name: 'Phone', columns: ['To do'] });
  const [id] = await addCards(api, todo, [{ title: 'Launch', tags: ['web'] }]);
  await api.post(`/tasks/${id}/checklist`, { items: [{ text: 'Copy' }, { text: 'Design' }] });
  await card(page, 'Launch').tap();
  await page.waitForSelector('#card-dialog[open]');
  const dialog = page.locator('#card-dialog');
  await dialog.getByRole('button', { name: 'Delete Design' }).waitFor();
  for (const name of ['Remove tag web', 'Delete Copy', 'Delete Design']) {
    const box = await dialog.getByRole('button', { name }).boundingBox();
    assert.ok(box.width >= 44 && box.height >= 44, `${name} is ${box.width}x${box.height}`);
  }
  const down = await dialog.getByRole('button', { name: 'Move Copy down' }).boundingBox();
  const remove = await dialog.getByRole('button', { name: 'Delete Copy' }).boundingBox();
  assert.ok(remove.x - (down.x + down.width) >= 12, `a gap of ${remove.x - (down.x + down.width)} px between ↓ and the delete`);
  assert.deepEqual(page.errors, []);
});

test('a deleted tag is named in a toast whose Undo, inside the open card, adds it again', async (t) => {
  const { page, api } = await session(t, { width: 1280, height: 800 });
  const { columnIds: [todo] } = await seedBoard(api, { name: 'Site', columns: ['To do'] });
  const [id] = await addCards(api, todo, [{ title: 'Pricing page', tags: ['urgent', 'web'] }]);
  await card(page, 'Pricing page').waitFor();

  // An earlier, unrelated change made on this page: a new title.
  await openByClick(page, 'Pricing page');
  await page.fill('#card-dialog .title-input', 'Pricing and plans');
  await page.press('#card-dialog .title-input', 'Enter');
  await eventually(async () => (await api.get(`/tasks/${id}`)).task.title === 'Pricing and plans', { message: 'the rename' });
  const dialog = page.locator('#card-dialog');
  const tags = async () => (await api.get(`/tasks/${id}`)).task.tags.map((x) => x.text ?? x);

  // The delete says what it did, and its Undo (inside the open card) puts the tag back.
  await dialog.getByRole('button', { name: 'Remove tag urgent' }).click();
  await eventually(async () => JSON.stringify(await tags()) === '["web"]', { message: 'the tag deleted' });
  const toast = page.locator('.toast');
  await page.waitForSelector('.toast-text:text-is("Deleted the tag ‘urgent’ from ‘Pricing and plans’.")', { timeout: 5000 });
  assert.notEqual(await focusKind(page), 'body', 'the focus stays in the card');
  await toast.getByRole('button', { name: 'Undo' }).click();
  await page.waitForSelector('.toast-text:text-is("Put back the tag ‘urgent’ on ‘Pricing and plans’")');
  await eventually(async () => (await tags()).includes('urgent'), { message: 'the tag back' });
  await dialog.getByRole('button', { name: 'Remove tag urgent' }).waitFor();
  assert.deepEqual(page.errors, []);
});

test('Ctrl+Z after a tag delete puts the tag back and leaves an earlier change alone', async (t) => {
  const { page, api } = await session(t, { width: 1280, height: 800 });
  const { columnIds: [todo] } = await seedBoard(api, { name: 'Site', columns: ['To do'] });
  const [id] = await addCards(api, todo, [{ title: 'Pricing page', tags: ['urgent', 'web'] }]);
  await card(page, 'Pricing page').waitFor();
  const tags = async () => (await api.get(`/tasks/${id}`)).task.tags.map((x) => x.text ?? x);

  await openByClick(page, 'Pricing page');
  await page.fill('#card-dialog .title-input', 'Pricing and plans');
  await page.press('#card-dialog .title-input', 'Enter');
  await eventually(async () => (await api.get(`/tasks/${id}`)).task.title === 'Pricing and plans', { message: 'the rename' });
  await page.locator('#card-dialog').getByRole('button', { name: 'Remove tag web' }).click();
  await eventually(async () => !(await tags()).includes('web'), { message: 'the delete' });
  await page.keyboard.press('Control+z');
  // Whatever Ctrl+Z did, it says so.
  await page.waitForFunction(() => [...document.querySelectorAll('.toast-text')].some((el) => !el.textContent.startsWith('Deleted')));
  await page.waitForTimeout(300);
  assert.equal((await api.get(`/tasks/${id}`)).task.title, 'Pricing and plans', 'the earlier rename stands');
  await eventually(async () => (await tags()).includes('web'), { message: 'Ctrl+Z to put the tag back' });
  assert.deepEqual(page.errors, []);
});

test('a deleted checklist item comes back from its toast with its text, done state and place', async (t) => {
  const { page, api } = await session(t, { width: 1280, height: 800 });
  const { columnIds: [todo] } = await seedBoard(api, { name: 'Site', columns: ['To do'] });
  const [id] = await addCards(api, todo, ['Pricing page']);
  await api.post(`/tasks/${id}/checklist`, { items: [{ text: 'Copy' }, { text: 'Design', done: true }, { text: 'Ship' }] });
  const items = async () => (await api.get(`/tasks/${id}`)).task.checklist
    .sort((a, b) => a.position - b.position).map((k) => `${k.text}${k.done ? ' (done)' : ''}`);
  await openByClick(page, 'Pricing page');
  const dialog = page.locator('#card-dialog');

  await dialog.getByRole('button', { name: 'Delete Design' }).click();
  await eventually(async () => JSON.stringify(await items()) === '["Copy","Ship"]', { message: 'the item deleted' });
  await page.waitForSelector('.toast-text:text-is("Deleted the checklist item ‘Design’ from ‘Pricing page’.")', { timeout: 5000 });
  // The focus goes to the next item's delete button, not to the page (nor a text field).
  assert.match(await focusKind(page), /Delete Ship/);
  await page.locator('.toast').getByRole('button', { name: 'Undo' }).click();
  await page.waitForSelector('.toast-text:text-is("Put back the checklist item ‘Design’ on ‘Pricing page’")');
  await eventually(async () => JSON.stringify(await items()) === '["Copy","Design (done)","Ship"]',
    { message: 'Design back in the middle, done' });
  await dialog.locator('.checklist li.done input[value="Design"]').waitFor();
  assert.deepEqual(page.errors, []);
});

test('the header\'s Undo after Ctrl+Z never re-does what Ctrl+Z took back', async (t) => {
  const { page, api } = await session(t, { width: 1280, height: 800 });
  const { columnIds: [todo, doing] } = await seedBoard(api, { name: 'Site', columns: ['To do', 'Doing'] });
  const [id] = await addCards(api, todo, ['Pricing page', 'Blog']);
  await card(page, 'Pricing page').waitFor();
  const columnOf = async () => (await api.get(`/tasks/${id}`)).task.columnId;

  // A move with the keyboard, and Ctrl+Z takes it back.
  await card(page, 'Pricing page').focus();
  await page.keyboard.press('Alt+ArrowRight');
  await eventually(async () => (await columnOf()) === doing, { message: 'the move' });
  await page.keyboard.press('Control+z');
  await page.waitForSelector('.toast-text:text-is("Moved ‘Pricing page’ back to To do")');
  assert.equal(await columnOf(), todo);

  // The header's Undo is the same model: nothing of this page's is left to take back.
  await page.click('#undo-button');
  // (Today's client asks first and then lets the server undo the step Ctrl+Z wrote.)
  if (await page.isVisible('#ask-dialog[open]')) await page.click('#ask-dialog button[type=submit]');
  await page.waitForFunction(() => document.querySelector('.toast-text')?.textContent !== 'Moved ‘Pricing page’ back to To do');
  assert.match(await page.textContent('.toast-text'), /Nothing left to undo/);
  await page.waitForTimeout(300);
  assert.equal(await columnOf(), todo, 'the card stays where Ctrl+Z put it');
  assert.deepEqual(page.errors, []);
});

test('Escape closes the card after the filter was used, and typing then goes nowhere near the title', async (t) => {
  const { page, api } = await session(t, { width: 1280, height: 800 });
  const { columnIds: [todo] } = await seedBoard(api, { name: 'Site', columns: ['To do'] });
  const [id] = await addCards(api, todo, ['Pricing page', 'Blog feed']);
  await card(page, 'Blog feed').waitFor();

  await page.locator('#board-title').click();
  await page.keyboard.press('/');
  await page.keyboard.type('pricing');
  await eventually(async () => (await page.locator('.card').count()) === 1, { message: 'the filter to narrow' });
  await card(page, 'Pricing page').focus();
  await page.keyboard.press('Enter');
  await page.waitForSelector('#card-dialog[open]');
  await page.keyboard.press('Escape');
  await page.waitForSelector('#card-dialog[open]', { state: 'detached', timeout: 3000 });
  await page.keyboard.type('zz');
  await page.waitForTimeout(300);
  assert.equal((await api.get(`/tasks/${id}`)).task.title, 'Pricing page');
  assert.deepEqual(page.errors, []);
});

test('the focus lands on a card after Mark complete', async (t) => {
  const { page, api } = await session(t, { width: 1280, height: 800 });
  const { columnIds: [todo] } = await seedBoard(api, { name: 'Site', columns: ['To do'] });
  await addCards(api, todo, ['Pricing page', 'Blog feed', 'Team page']);
  await seedBoard(api, { name: 'Garden', columns: ['Spring'], cards: ['Sow peas'] });
  await page.click('.project-link:text-is("Site")');
  await card(page, 'Blog feed').waitFor();

  await openByClick(page, 'Blog feed');
  await page.click('#card-dialog button:text("Mark complete")');
  await page.waitForSelector('#card-dialog[open]', { state: 'detached' });
  await page.waitForSelector('.toast-text:text-matches("Completed ‘Blog feed’")');
  await eventually(async () => (await focusKind(page)) !== 'body', { timeout: 3000, message: 'the focus to land' })
    .catch(() => {});
  const focused = await page.evaluate(() => document.activeElement.closest('.card')?.querySelector('.card-title')?.textContent
    || document.activeElement.tagName);
  // The card itself if finished cards are shown, else the one after it.
  assert.ok(['Blog feed', 'Team page'].includes(focused), `the focus is on ${focused}`);
  assert.deepEqual(page.errors, []);
});

test('the focus lands on the board\'s heading after choosing a board', async (t) => {
  const { page, api } = await session(t, { width: 1280, height: 800 });
  await seedBoard(api, { name: 'Site', columns: ['To do'], cards: ['Pricing page'] });
  await seedBoard(api, { name: 'Garden', columns: ['Spring'], cards: ['Sow peas'] });
  await page.click('.project-link:text-is("Site")');
  await card(page, 'Pricing page').waitFor();
  await page.click('.project-link:text-is("Garden")');
  await page.waitForSelector('#board-title:text-is("Garden")');
  await card(page, 'Sow peas').waitFor();
  await page.waitForTimeout(100);
  const after = await focusKind(page);
  assert.notEqual(after, 'body');
  assert.match(after, /board-title/);
  assert.deepEqual(page.errors, []);
});

test('a deleted comment comes back from its toast', async (t) => {
  const { page, api } = await session(t, { width: 1280, height: 800 });
  const { columnIds: [todo] } = await seedBoard(api, { name: 'Site', columns: ['To do'] });
  const [id] = await addCards(api, todo, ['Pricing page']);
  await api.post(`/tasks/${id}/comments`, { text: 'Needs the annual plan' });
  const comments = async () => (await api.get(`/tasks/${id}`)).task.comments.map((c) => c.text);
  await openByClick(page, 'Pricing page');
  const dialog = page.locator('#card-dialog');
  await dialog.locator('.comments li', { hasText: 'Needs the annual plan' }).getByRole('button', { name: 'Delete' }).click();
  await page.click('#ask-dialog button[type=submit]');
  await eventually(async () => (await comments()).length === 0, { message: 'the comment deleted' });
  await page.waitForSelector('.toast-text:text-is("Deleted the comment ‘Needs the annual plan’ from ‘Pricing page’.")', { timeout: 5000 });
  await page.locator('.toast').getByRole('button', { name: 'Undo' }).click();
  await eventually(async () => JSON.stringify(await comments()) === '["Needs the annual plan"]', { message: 'the comment back' });
  assert.deepEqual(page.errors, []);
});

test('on a phone, Escape closes the card over an open filter panel first, then the panel', async (t) => {
  const { page, api } = await session(t, { width: 390, height: 844 });
  const { columnIds: [todo] } = await seedBoard(api, { name: 'Site', columns: ['To do'] });
  await addCards(api, todo, ['Pricing page']);
  await card(page, 'Pricing page').waitFor();
  await page.click('.filter-toggle');
  assert.equal(await page.isVisible('#filter-text'), true);
  await card(page, 'Pricing page').focus();
  await page.keyboard.press('Enter');
  await page.waitForSelector('#card-dialog[open]');
  await page.keyboard.press('Escape');
  await page.waitForSelector('#card-dialog[open]', { state: 'detached', timeout: 3000 });
  assert.equal(await page.isVisible('#filter-text'), true, 'the panel under the card stays for the next Escape');
  await page.keyboard.press('Escape');
  await eventually(async () => !(await page.isVisible('#filter-text')), { timeout: 3000, message: 'the panel to close' });
  assert.deepEqual(page.errors, []);
});

test('the focus is not dropped on the page when the list it was in is archived', async (t) => {
  const { page, api } = await session(t, { width: 1280, height: 800 });
  const { columnIds: [todo] } = await seedBoard(api, { name: 'Site', columns: ['To do', 'Doing'], cards: ['Pricing page'] });
  await card(page, 'Pricing page').waitFor();
  await page.locator(`.column[data-id="${todo}"] .list-menu-toggle`).click();
  await page.locator(`.column[data-id="${todo}"] .list-menu`).getByRole('button', { name: 'Archive list' }).click();
  await page.locator(`.column[data-id="${todo}"]`).waitFor({ state: 'detached' });
  await eventually(async () => (await focusKind(page)) !== 'body', { timeout: 3000, message: 'the focus to land' }).catch(() => {});
  assert.match(await focusKind(page), /board-title/);
  assert.deepEqual(page.errors, []);
});
