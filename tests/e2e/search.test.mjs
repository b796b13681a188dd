// The search box: hidden while the server's discovery document names no search route (the
// server has none yet), and, against a stand-in for `GET /api/v1/search` in the reply shape
// agreed for it, shows hits with their marked snippets (made safe) and opens the chosen card.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { seedBoard, session, signIn } from './harness.mjs';

test('the search box stays hidden while the server offers no search', async (t) => {
  const { page } = await session(t);
  const discovery = await page.evaluate(async () => (await fetch('/api/v1', { headers: { Authorization: `Bearer ${localStorage.getItem('workboard.key')}` } })).json());
  assert.ok(!discovery.endpoints.some((e) => e.path.endsWith('/search')), 'this server has no search route yet');
  assert.equal(await page.isHidden('#search'), true);
  assert.deepEqual(page.errors, []);
});

test('with a search route, a hit shows its marked snippets and opens its board and card', async (t) => {
  const { page, api, server } = await session(t, { signIn: false });
  await seedBoard(api, { name: 'Home', cards: ['Water the plants'] });
  const { projectId, taskIds: [invoiceId] } = await seedBoard(api, { name: 'Accounts', cards: ['Send the March invoice'] });
  const { task } = await api.get(`/tasks/${invoiceId}`);

  // The discovery document as a server with search will send it, and a search reply.
  await page.route(/\/api\/v1$/, async (route) => {
    const res = await route.fetch();
    const doc = await res.json();
    doc.endpoints.push({ method: 'GET', path: '/api/v1/search', summary: 'full-text search' });
    await route.fulfill({ response: res, json: doc });
  });
  const asked = [];
  await page.route(/\/api\/v1\/search\?/, (route) => {
    asked.push(new URL(route.request().url()).searchParams);
    return route.fulfill({ json: {
      ok: true, total: 1,
      hits: [{
        task, projectId, score: 3.2,
        highlights: {
          title: ['Send the March <mark>invoice</mark>'],
          description: ['the <mark>invoice</mark> total <img src=x onerror="window.hacked=1"><b>bold</b>'],
        },
      }],
    } });
  });
  await signIn(page, server);
  await page.locator('#search:not([hidden])').waitFor();

  await page.fill('#search-input', 'invoice');
  const hit = page.locator('.search-hit').first();
  await hit.waitFor();
  assert.equal(asked[0].get('q'), 'invoice');
  assert.equal(asked[0].get('completed'), 'none');
  assert.equal(asked[0].get('limit'), '20');
  assert.deepEqual(await hit.locator('mark').allTextContents(), ['invoice', 'invoice']);
  assert.equal(await hit.locator('img, b, [onerror]').count(), 0, 'only <mark> survives in a snippet');
  assert.match(await hit.locator('.hit-snippet').textContent(), /total <img src=x onerror="window.hacked=1"><b>bold<\/b>/,
    'anything else shows as the text it is');
  assert.match(await hit.textContent(), /Accounts/);

  // Arrow down and Enter choose it: its board opens, and the card.
  await page.press('#search-input', 'ArrowDown');
  await page.press('#search-input', 'Enter');
  await page.waitForSelector('#card-dialog[open]');
  assert.equal(await page.inputValue('#card-dialog .title-input'), 'Send the March invoice');
  assert.equal(await page.textContent('#board-title'), 'Accounts');
  assert.match(new URL(page.url()).hash, new RegExp(`^#/b/${projectId}`));
  assert.equal(await page.evaluate(() => window.hacked), undefined);
  assert.deepEqual(page.errors, []);
});
