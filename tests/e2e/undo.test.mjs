// Undo that speaks: one toast at a time naming the card and the change, an Undo button on
// delete, complete and archive, Ctrl+Z for this page's own actions only, and the server's
// undo behind the header's button, which says what it will do before it does.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addCards, eventually, screenshot, seedBoard, session } from './harness.mjs';

const card = (page, title) => page.locator('.card', { has: page.locator(`.card-title:text-is("${title}")`) });

test('the undo toast names the card and the change, one toast at a time', async (t) => {
  const { page, api } = await session(t, { width: 1440, height: 900 });
  const { columnIds: [todo, progress] } = await seedBoard(api, { name: 'Site', columns: ['To do', 'In progress'] });
  await addCards(api, todo, ['Blog RSS feed']);
  const [pricing] = await addCards(api, progress, ['Pricing page', 'Team page']);
  const toasts = page.locator('.toast');

  // Delete: the toast names the card and offers Undo, which restores it to its list.
  await card(page, 'Pricing page').click();
  await page.click('#card-dialog footer button:text("Delete card")');
  await page.click('#ask-dialog button:text("Delete")');
  await card(page, 'Pricing page').waitFor({ state: 'detached' });
  // The card leaves at once; the toast follows the server's reply.
  await toasts.locator('.toast-text').waitFor();
  assert.equal(await toasts.count(), 1);
  assert.equal(await toasts.locator('.toast-text').textContent(), 'Deleted ‘Pricing page’. It is in the recycle bin.');
  await screenshot(page, '14-undo-toast-1440');
  await toasts.getByRole('button', { name: 'Undo' }).click();
  await page.waitForSelector('.toast-text:text-is("Restored ‘Pricing page’ to In progress")');
  await page.locator(`.card-list[data-column="${progress}"] .card-title:text-is("Pricing page")`).waitFor();
  assert.equal((await api.get(`/tasks/${pricing}`)).task.cancelledAt, null);

  // Complete, then archive a list: each toast replaces the last, and each offers Undo.
  await card(page, 'Team page').click();
  await page.click('#card-dialog button:text("Mark complete")');
  await page.waitForSelector('.toast-text:text-is("Completed ‘Team page’.")');
  assert.equal(await toasts.count(), 1);
  await page.locator(`.column[data-id="${todo}"] .list-menu-toggle`).click();
  await page.locator(`.column[data-id="${todo}"] .list-menu`).getByRole('button', { name: 'Archive list' }).click();
  await page.waitForSelector('.toast-text:text-is("Archived the list ‘To do’.")');
  assert.equal(await toasts.count(), 1, 'one toast at a time');
  await page.locator(`.column[data-id="${todo}"]`).waitFor({ state: 'detached' });
  await toasts.getByRole('button', { name: 'Undo' }).click();
  await page.waitForSelector('.toast-text:text-is("Restored the list ‘To do’ to the board")');
  await page.locator(`.column[data-id="${todo}"] .card-title:text-is("Blog RSS feed")`).waitFor();

  // Ctrl+Z goes on back through this page's actions: the completion is next.
  await page.locator('#board-title').click();
  await page.keyboard.press('Control+z');
  await page.waitForSelector('.toast-text:text-is("Restored ‘Team page’ to In progress")');
  await card(page, 'Team page').waitFor();

  // A deleted list comes back from the recycle bin with its cards.
  await page.locator(`.column[data-id="${todo}"] .list-menu-toggle`).click();
  await page.locator(`.column[data-id="${todo}"] .list-menu`).getByRole('button', { name: 'Delete list' }).click();
  await page.click('#ask-dialog button:text("Delete")');
  await page.waitForSelector('.toast-text:text-is("Deleted the list ‘To do’. It is in the recycle bin.")');
  await page.locator(`.column[data-id="${todo}"]`).waitFor({ state: 'detached' });
  await toasts.getByRole('button', { name: 'Undo' }).click();
  await page.waitForSelector('.toast-text:text-is("Restored the list ‘To do’")');
  await page.locator(`.column[data-id="${todo}"] .card-title:text-is("Blog RSS feed")`).waitFor();
  assert.deepEqual(page.errors, []);
});

test('Ctrl+Z reverses only this page\'s own changes; the Undo button asks before the server undoes', async (t) => {
  const { page, api } = await session(t);
  const { columnIds: [todo] } = await seedBoard(api, { name: 'Blog', columns: ['To do'] });
  const [feed] = await addCards(api, todo, ['Blog RSS feed']);
  // A change made earlier with the same key, before this page was opened.
  await api.patch(`/tasks/${feed}`, { title: 'Blog RSS and Atom feed' });
  await page.reload();
  await card(page, 'Blog RSS and Atom feed').waitFor();

  await page.keyboard.press('Control+z');
  await page.waitForSelector('.toast-text:text-is("Nothing to undo: this page has made no change yet.")');
  assert.equal((await api.get(`/tasks/${feed}`)).task.title, 'Blog RSS and Atom feed', 'the earlier change stands');

  // The header's Undo button is the server's undo: it says what it will do, then does it.
  await page.click('#undo-button');
  await page.waitForSelector('#ask-dialog[open]');
  assert.match(await page.textContent('#ask-dialog'), /latest change made with this key/);
  assert.match(await page.textContent('#ask-dialog'), /This page has made no change yet/);
  await page.click('#ask-dialog button:text("Undo on the server")');
  await page.waitForSelector('.toast-text:text-is("Title of ‘Blog RSS feed’ set back")');
  assert.equal((await api.get(`/tasks/${feed}`)).task.title, 'Blog RSS feed');

  // This page's own edit: Ctrl+Z names the card and the field.
  await card(page, 'Blog RSS feed').click();
  await page.fill('#card-dialog .title-input', 'Blog feed');
  await page.press('#card-dialog .title-input', 'Enter');
  await eventually(async () => (await api.get(`/tasks/${feed}`)).task.title === 'Blog feed', { message: 'the rename' });
  await page.keyboard.press('Escape');
  await card(page, 'Blog feed').waitFor();
  await page.keyboard.press('Control+z');
  await page.waitForSelector('.toast-text:text-is("Title of ‘Blog RSS feed’ set back")');
  // The same words may still show from the server's undo above: wait for the write itself.
  await eventually(async () => (await api.get(`/tasks/${feed}`)).task.title === 'Blog RSS feed', { message: 'Ctrl+Z to set the title back' });
  assert.deepEqual(page.errors, []);
});
