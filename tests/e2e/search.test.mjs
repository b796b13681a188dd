// The search box: hidden while the server's discovery document names no search route (a
// server from before search), shown once it does; a real search against the real server
// lists hits with their marked snippets and opens the chosen card on its board; and, against
// a stand-in reply, a snippet never carries more than <mark> into the page.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addCards, seedBoard, session, signIn } from './harness.mjs';

test('the search box stays hidden while the server offers no search', async (t) => {
  const { page, server } = await session(t, { signIn: false });
  // A server from before search: its discovery document names no search route.
  await page.route(/\/api\/v1$/, async (route) => {
    const res = await route.fetch();
    const doc = await res.json();
    doc.endpoints = doc.endpoints.filter((e) => !e.path.endsWith('/search'));
    await route.fulfill({ response: res, json: doc });
  });
  await signIn(page, server);
  assert.equal(await page.isHidden('#search'), true);
  assert.deepEqual(page.errors, []);
});

test('a real search lists marked hits across boards and opens the chosen card', async (t) => {
  const { page, api, server } = await session(t, { signIn: false });
  await seedBoard(api, { name: 'Home', cards: ['Water the plants', 'Buy a watering can'] });
  const { projectId, columnIds } = await seedBoard(api, { name: 'Garden', cards: ['Prune the roses'] });
  const [repotId] = await addCards(api, columnIds[1], [
    { title: 'Repot the ficus', description: 'Use **terracotta** pots, then water them well.' },
  ]);
  await signIn(page, server);
  await page.locator('#search:not([hidden])').waitFor();

  await page.fill('#search-input', 'terracotta');
  const hit = page.locator('.search-hit').first();
  await hit.waitFor();
  assert.equal(await page.locator('.search-hit').count(), 1);
  assert.match(await page.textContent('.search-note'), /1 found/);
  assert.equal(await hit.locator('.hit-title').textContent(), 'Repot the ficus');
  assert.deepEqual(await hit.locator('mark').allTextContents(), ['terracotta']);
  assert.match(await hit.locator('.hit-snippet').textContent(), /Use terracotta pots, then water them well\./,
    'the Markdown reads as text');
  assert.match(await hit.textContent(), /Garden/);

  // Words in any order, across boards; the title match ranks first.
  await page.fill('#search-input', 'water');
  await page.locator('.search-hit', { hasText: 'Water the plants' }).waitFor();
  const titles = await page.locator('.search-hit .hit-title').allTextContents();
  assert.equal(titles[0], 'Water the plants');
  assert.ok(titles.includes('Repot the ficus'), titles.join(' | '));

  // Choosing a hit opens its board and the card.
  await page.locator('.search-hit', { hasText: 'Repot the ficus' }).click();
  await page.waitForSelector('#card-dialog[open]');
  assert.equal(await page.inputValue('#card-dialog .title-input'), 'Repot the ficus');
  assert.equal(await page.textContent('#board-title'), 'Garden');
  assert.match(new URL(page.url()).hash, new RegExp(`^#/b/${projectId}`));
  assert.ok(repotId);
  assert.deepEqual(page.errors, []);
});

test('a snippet shows only its marks as markup, and a hit opens its board and card', async (t) => {
  const { page, api, server } = await session(t, { signIn: false });
  await seedBoard(api, { name: 'Home', cards: ['Water the plants'] });
  const { projectId, taskIds: [invoiceId] } = await seedBoard(api, { name: 'Accounts', cards: ['Send the March invoice'] });
  const { task } = await api.get(`/tasks/${invoiceId}`);

  // A reply whose snippet carries markup the server would have escaped.
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
  assert.equal(asked[0].get('completed'), 'recent');
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
