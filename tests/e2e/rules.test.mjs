// The rules the page enforces come from the server it talks to (web/js/rules.js): a server
// started with lower limits has the page hold its fields, its tag count and its words to
// those limits, not to the interface's defaults; a server that states no limits leaves the
// defaults.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openBrowser, seedBoard, signIn, startServer } from './harness.mjs';

/** A server started with `args`, a browser signed in to it; both stop when the test ends. */
async function sessionWith(t, args, { beforeSignIn } = {}) {
  const server = await startServer(args);
  t.after(() => server.stop());
  const browser = await openBrowser();
  t.after(() => browser.close());
  if (beforeSignIn) await beforeSignIn(browser.page);
  await signIn(browser.page, server);
  return { server, page: browser.page, api: server.api };
}

test('the page enforces the limits the server states, not its defaults', async (t) => {
  const { page, api } = await sessionWith(t,
    ['--limit-title-chars', '30', '--limit-tags-per-task', '2', '--limit-finished-window-days', '7']);
  const { taskIds: [id] } = await seedBoard(api, { name: 'Trip', cards: ['Pack'] });
  const tagWrites = [];
  page.on('request', (req) => {
    if (req.method() === 'POST' && /\/api\/v1\/tasks\/[^/]+\/tags$/.test(req.url())) tagWrites.push(req.url());
  });
  await page.click('.project-link:text-is("Trip")');

  // A field drawn before the discovery document was read is brought up to the server's limit.
  await page.waitForSelector('.add-card input[maxlength="30"]');
  await page.locator('.add-card input').first().pressSequentially('A title that is longer than thirty characters');
  assert.equal((await page.locator('.add-card input').first().inputValue()).length, 30);
  assert.equal(await page.locator('#completed-filter option[value="recent"]').textContent(), 'Finished in the last 7 days');

  await page.locator('.card', { hasText: 'Pack' }).click();
  const dialog = page.locator('#card-dialog');
  await dialog.waitFor();
  assert.equal(await dialog.getByLabel('Title', { exact: true }).getAttribute('maxlength'), '30');
  assert.equal(await dialog.getByPlaceholder('Add a subtask').getAttribute('maxlength'), '30');

  const add = dialog.getByPlaceholder('Add a tag');
  for (const tag of ['passport', 'tickets']) {
    await add.fill(tag);
    await add.press('Enter');
    await dialog.locator('.tags li', { hasText: tag }).waitFor();
  }
  // The third is refused here, in the page's words, and never sent.
  await add.fill('charger');
  await add.press('Enter');
  await page.waitForSelector('.toast-error:has-text("a card holds at most 2 tags")');
  assert.equal(await dialog.locator('.tags li').count(), 2);
  assert.equal(tagWrites.length, 2, 'only the two tags the server takes were sent');
  assert.deepEqual((await api.get(`/tasks/${id}`)).task.tags, ['passport', 'tickets']);
  assert.deepEqual(page.errors, []);
});

test('a server that states no limits leaves the interface\'s defaults', async (t) => {
  const { page, api } = await sessionWith(t, ['--limit-title-chars', '30'], {
    // A server from before the limits were listed: its discovery document has none.
    beforeSignIn: (p) => p.route(/\/api\/v1$/, async (route) => {
      const res = await route.fetch();
      const { limits, ...doc } = await res.json();
      assert.ok(limits, 'the real document lists the limits');
      await route.fulfill({ response: res, json: doc });
    }),
  });
  await seedBoard(api, { name: 'Trip', cards: ['Pack'] });
  await page.click('.project-link:text-is("Trip")');
  await page.waitForSelector('.add-card input');
  await page.waitForSelector('#search:not([hidden])'); // the document was read (it lists search)
  assert.equal(await page.locator('.add-card input').first().getAttribute('maxlength'), '250');
  assert.equal(await page.locator('#completed-filter option[value="recent"]').textContent(), 'Finished in the last 30 days');
  assert.deepEqual(page.errors, []);
});
