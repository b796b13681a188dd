// Entering a key, building a board in the page, and dragging a card to another list.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { eventually, screenshot, session } from './harness.mjs';

test('a wrong key is refused with a readable message, a right one opens the account', async (t) => {
  const { page, server } = await session(t, { signIn: false });
  await page.goto(server.url);
  await screenshot(page, '01-welcome');
  await page.fill('#key-input', 'wb_thisKeyDoesNotExist0000000000000000000000000');
  await page.click('#key-form button[type=submit]');
  await eventually(async () => /unknown, revoked or expired/.test(await page.textContent('#key-error')), { message: 'the key error' });
  assert.equal(await page.isHidden('#app'), true);

  await page.fill('#key-input', server.key);
  await page.click('#key-form button[type=submit]');
  await page.waitForSelector('#live-status[data-state="live"]');
  assert.match(await page.textContent('#board'), /No boards yet/);
  assert.match(await page.textContent('#allowance-text'), /requests left today/);

  // Export downloads the account's file.
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-button')]);
  assert.match(download.suggestedFilename(), /^workboard-.*\.json$/);
  const exported = JSON.parse(await readFile(await download.path(), 'utf8'));
  assert.deepEqual(exported.projects, []);

  // The key is kept: a reload opens the account again without asking.
  await page.reload();
  await page.waitForSelector('#live-status[data-state="live"]');
  assert.equal(await page.isHidden('#welcome'), true);
  assert.deepEqual(page.errors, []);
});

test('create a board with lists and cards, then drag a card to another list', async (t) => {
  const { page, api } = await session(t);

  await page.fill('.new-board input', 'Launch plan');
  await page.press('.new-board input', 'Enter');
  await page.waitForSelector('#board-title:text("Launch plan")');

  for (const name of ['To do', 'Doing', 'Done']) {
    await page.fill('.add-column input', name);
    await page.press('.add-column input', 'Enter');
    await page.waitForSelector(`.column-name:text-is("${name}")`);
  }
  const column = (name) => page.locator('.column', { has: page.locator(`.column-name:text-is("${name}")`) });

  // Cards are added at the bottom of their list, so they read in the order typed.
  for (const title of ['Write the brief', 'Book the venue', 'Send invitations']) {
    await column('To do').locator('.add-card input').fill(title);
    await column('To do').locator('.add-card input').press('Enter');
    await column('To do').locator(`.card-title:text-is("${title}")`).waitFor();
  }
  assert.deepEqual(await column('To do').locator('.card-title').allTextContents(),
    ['Write the brief', 'Book the venue', 'Send invitations']);

  // A new card shows before the server has answered it: wait for the server to hold all three.
  const { projects } = await eventually(async () => {
    const read = await api.get('/projects');
    return read.projects[0]?.columns[0]?.tasks.length === 3 && read;
  }, { message: 'the cards to land' });
  assert.equal(projects.length, 1);
  assert.deepEqual(projects[0].columns.map((c) => c.name), ['To do', 'Doing', 'Done']);
  const [todo, doing] = projects[0].columns;
  const venue = todo.tasks.find((x) => x.title === 'Book the venue');

  await screenshot(page, '02-board');

  // Drag "Book the venue" into the empty "Doing" list.
  await column('To do').locator('.card', { hasText: 'Book the venue' }).dragTo(column('Doing').locator('.card-list'));
  await column('Doing').locator('.card-title:text-is("Book the venue")').waitFor();
  const moved = await eventually(async () => {
    const { task } = await api.get(`/tasks/${venue.id}`);
    return task.columnId === doing.id && task;
  }, { message: 'the card to reach the Doing list' });
  assert.equal(moved.columnId, doing.id);

  // Drag "Send invitations" above "Write the brief": a position before it, same list.
  const brief = todo.tasks.find((x) => x.title === 'Write the brief');
  const invite = todo.tasks.find((x) => x.title === 'Send invitations');
  const target = column('To do').locator('.card', { hasText: 'Write the brief' });
  await column('To do').locator('.card', { hasText: 'Send invitations' }).dragTo(target, { targetPosition: { x: 20, y: 4 } });
  await eventually(async () => {
    const [{ task: a }, { task: b }] = await Promise.all([api.get(`/tasks/${brief.id}`), api.get(`/tasks/${invite.id}`)]);
    return b.position < a.position && b.columnId === todo.id;
  }, { message: 'the reorder to land' });
  // The list re-renders once the drag has ended, which may come a frame after the write.
  const order = ['Send invitations', 'Write the brief'];
  const shown = () => column('To do').locator('.card-title').allTextContents();
  await eventually(async () => JSON.stringify(await shown()) === JSON.stringify(order), { message: 'the list to show the new order' });
  assert.deepEqual(await shown(), order);

  // Keyboard: Alt+→ moves the focused card to the next list.
  await column('To do').locator('.card', { hasText: 'Send invitations' }).focus();
  await page.keyboard.press('Alt+ArrowRight');
  await eventually(async () => (await api.get(`/tasks/${invite.id}`)).task.columnId === doing.id, { message: 'the keyboard move' });

  // Drag the "Done" list before "To do".
  await column('Done').locator('.column-head').dragTo(column('To do').locator('.column-head'), { targetPosition: { x: 5, y: 5 } });
  await eventually(async () => {
    const { projects: [p] } = await api.get('/projects');
    return p.columns.map((c) => c.name).join() === 'Done,To do,Doing';
  }, { message: 'the list move' });

  await screenshot(page, '03-board-after-moves');
  assert.deepEqual(page.errors, []);
});

test('the board reads at phone width', async (t) => {
  const { page, api } = await session(t, { width: 390, height: 844 });
  await api.post('/projects', { name: 'Phone', columns: ['Inbox', 'Later'] });
  const { projects: [p] } = await api.get('/projects');
  await api.post('/tasks', { columnId: p.columns[0].id, title: 'Call the plumber', priority: 1, deadline: '2030-01-02' });
  await page.locator('.card-title:text-is("Call the plumber")').waitFor();
  assert.equal(await page.isVisible('#menu-toggle'), true);
  await screenshot(page, '04-phone-board');
  await page.click('#menu-toggle');
  await page.locator('.project-link:text-is("Phone")').waitFor({ state: 'visible' });
  await eventually(() => page.evaluate(() => getComputedStyle(document.getElementById('sidebar')).transform === 'none'),
    { message: 'the sidebar to finish sliding in' });
  await screenshot(page, '05-phone-sidebar');
  await page.click('.sidebar-close');
  await page.locator('.project-link:text-is("Phone")').waitFor({ state: 'hidden' });
});
