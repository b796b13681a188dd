// Another device's changes appear in an open page without a reload, through the change
// socket and `/changes`; the page catches up after its socket was cut.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apiClient, screenshot, seedBoard, session } from './harness.mjs';

test('a change made with a second key appears in the open page within 10 s', async (t) => {
  const { page, api, server } = await session(t);
  const { columnIds: [todo, done] } = await seedBoard(api, { name: 'Shared', cards: ['First'] });
  await page.locator('.card-title:text-is("First")').waitFor();

  // A second key of the same account: another device.
  const { key } = await api.post('/keys', { label: 'phone' });
  const phone = apiClient(server.url, key);

  const { id } = await phone.post('/tasks', { columnId: todo, title: 'Added on the phone' });
  await page.locator('.card-title:text-is("Added on the phone")').waitFor({ timeout: 10000 });

  await phone.patch(`/tasks/${id}`, { columnId: done, title: 'Moved on the phone' });
  const doneList = page.locator(`.card-list[data-column="${done}"]`);
  await doneList.locator('.card-title:text-is("Moved on the phone")').waitFor({ timeout: 10000 });

  await phone.post('/columns', { projectId: (await phone.get('/projects')).projects[0].id, name: 'Review' });
  await page.locator('.column-name:text-is("Review")').waitFor({ timeout: 10000 });

  await phone.del(`/tasks/${id}`);
  await page.locator('.card-title:text-is("Moved on the phone")').waitFor({ state: 'detached', timeout: 10000 });
  await screenshot(page, '10-live');
  assert.deepEqual(page.errors, []);
});

test('the page reconnects and catches up after the socket drops', async (t) => {
  const { page, api } = await session(t);
  const { columnIds: [todo] } = await seedBoard(api, { name: 'Flaky' });
  await page.locator('.column-name:text-is("To do")').waitFor();

  // Cut the page off: the socket closes and fetches fail until it comes back.
  await page.context().setOffline(true);
  await page.evaluate(() => window.dispatchEvent(new Event('offline')));
  await page.waitForSelector('#live-status[data-state="offline"]', { timeout: 10000 }).catch(() => {});
  await api.post('/tasks', { columnId: todo, title: 'Made while away' });
  await page.context().setOffline(false);
  await page.evaluate(() => window.dispatchEvent(new Event('online')));
  await page.locator('.card-title:text-is("Made while away")').waitFor({ timeout: 15000 });
  await page.waitForSelector('#live-status[data-state="live"]');
});
