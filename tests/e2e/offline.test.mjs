// The web client without a network (issue 35): it opens from its service worker and the
// account kept in IndexedDB, every edit waits in the sync core's outbox (kept in IndexedDB,
// marked where it shows, counted in the header) and survives a reload, and on reconnect the
// outbox replays in order, once each, a field another device changed meanwhile offering the
// conflict choice. A key revoked while offline keeps the outbox.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apiClient, eventually, screenshot, seedBoard, session } from './harness.mjs';

const tile = (page, title) => page.locator('.card', { has: page.locator(`.card-title:text-is("${title}")`) });
const column = (page, name) => page.locator('.column', { has: page.locator(`.column-name:text-is("${name}")`) });
const pending = async (page) => Number(await page.getAttribute('#live-status', 'data-pending'));

/** Waits until the service worker runs and keeps the page's files, and the account is kept. */
async function readyForOffline(page) {
  await page.evaluate(() => navigator.serviceWorker.ready);
  await eventually(() => page.evaluate(async () => {
    const cache = await caches.open('workboard-shell');
    const kept = (await cache.keys()).map((r) => new URL(r.url).pathname);
    return kept.includes('/') && kept.includes('/assets/js/app.js') && kept.includes('/assets/js/synced.js');
  }), { message: 'the page files to be kept' });
}

/** Records every state the header shows, from now on (survives nothing: set after a load). */
const recordStates = (page) => page.evaluate(() => {
  window.statesSeen = [document.getElementById('live-status').dataset.state];
  new MutationObserver(() => window.statesSeen.push(document.getElementById('live-status').dataset.state))
    .observe(document.getElementById('live-status'), { attributes: true, attributeFilter: ['data-state'] });
});

async function goOffline(page) {
  await page.context().setOffline(true);
  await page.evaluate(() => window.dispatchEvent(new Event('offline')));
}

async function goOnline(page) {
  await page.context().setOffline(false);
  await page.evaluate(() => window.dispatchEvent(new Event('online')));
}

async function openCard(page, title) {
  await tile(page, title).click();
  await page.waitForSelector('#card-dialog[open]');
}

async function closeCard(page) {
  await page.click('#card-dialog footer button:text("Close")');
  await page.locator('#card-dialog[open]').waitFor({ state: 'detached' });
}

test('edits made offline survive a reload, land once each on reconnect, and a field changed elsewhere offers the choice', async (t) => {
  const { page, api, server } = await session(t);
  const { projectId, columnIds: [todo, done], taskIds: [alpha, bravo, charlie, echo] } = await seedBoard(api, {
    name: 'Trip', cards: ['Alpha', 'Bravo', 'Charlie', 'Echo'],
  });
  await tile(page, 'Echo').waitFor();
  await readyForOffline(page);

  await goOffline(page);
  await page.waitForSelector('#live-status[data-state="offline"]');
  const dialog = page.locator('#card-dialog');

  // 1. A new card.
  await column(page, 'To do').locator('.add-card input').fill('Delta');
  await column(page, 'To do').locator('.add-card input').press('Enter');
  await tile(page, 'Delta').waitFor();
  // 2-9. A card's title, location, tag, checklist (two items, reordered), comment, subtask.
  await openCard(page, 'Alpha');
  await dialog.locator('.title-input').fill('Alpha offline');
  await dialog.locator('.title-input').press('Enter');
  await dialog.getByLabel('Location', { exact: true }).fill('Lisbon');
  await dialog.getByLabel('Location', { exact: true }).press('Enter');
  await dialog.getByPlaceholder('Add a tag').fill('travel');
  await dialog.getByPlaceholder('Add a tag').press('Enter');
  for (const item of ['Passports', 'Tickets']) {
    await dialog.getByPlaceholder('Add an item').fill(item);
    await dialog.getByPlaceholder('Add an item').press('Enter');
    await dialog.locator(`.checklist .item-text[value="${item}"]`).waitFor();
  }
  await dialog.getByLabel('Move Tickets up').click();
  await dialog.getByPlaceholder(/Write a comment/).fill('Written on the train');
  await dialog.getByPlaceholder(/Write a comment/).press('Control+Enter');
  await dialog.locator('.comments li', { hasText: 'Written on the train' }).waitFor();
  await dialog.getByPlaceholder('Add a subtask').fill('Pack bags');
  await dialog.getByPlaceholder('Add a subtask').press('Enter');
  await dialog.locator('.subtasks li', { hasText: 'Pack bags' }).waitFor();
  await page.waitForSelector('#card-dialog[data-pending]');
  // Each waiting item of the open card is marked too.
  await dialog.locator('.comments li[data-pending]', { hasText: 'Written on the train' }).waitFor();
  await dialog.locator('.subtasks li[data-pending]', { hasText: 'Pack bags' }).waitFor();
  await closeCard(page);
  // 10. Complete a card.
  await openCard(page, 'Bravo');
  await page.click('#card-dialog button:text("Mark complete")');
  await page.locator('.card.completed .card-title:text-is("Bravo")').waitFor();
  await page.keyboard.press('Escape');
  await page.locator('#card-dialog[open]').waitFor({ state: 'detached' });
  // 11. Move a card to another list.
  await openCard(page, 'Charlie');
  await dialog.getByLabel('List', { exact: true }).selectOption(done);
  await page.locator(`.card-list[data-column="${done}"] .card-title:text-is("Charlie")`).waitFor();
  await page.keyboard.press('Escape');
  await page.locator('#card-dialog[open]').waitFor({ state: 'detached' });
  // 12. Delete a card.
  await openCard(page, 'Echo');
  await page.click('#card-dialog footer button:text("Delete card")');
  await page.click('#ask-dialog button:text("Delete")');
  await tile(page, 'Echo').waitFor({ state: 'detached' });
  // 13. A new list.
  await page.fill('.add-column input', 'Review');
  await page.press('.add-column input', 'Enter');
  await column(page, 'Review').waitFor();

  // Marked where they show, and counted in the header.
  assert.ok(await tile(page, 'Delta').getAttribute('data-pending') !== null, 'a new card is marked');
  assert.ok(await tile(page, 'Alpha offline').getAttribute('data-pending') !== null, 'an edited card is marked');
  const queued = await pending(page);
  assert.ok(queued >= 12, `the header counts the waiting edits (${queued})`);
  assert.match(await page.textContent('#live-status'), new RegExp(`Offline · ${queued} pending`));
  await screenshot(page, 'offline-pending');

  // Reloaded without a network, the page opens from what this browser kept.
  await page.reload();
  await page.waitForSelector('#app:not([hidden])');
  await tile(page, 'Alpha offline').waitFor();
  await tile(page, 'Delta').waitFor();
  await page.locator(`.card-list[data-column="${done}"] .card-title:text-is("Charlie")`).waitFor();
  await column(page, 'Review').waitFor();
  assert.equal(await tile(page, 'Echo').count(), 0);
  assert.equal(await pending(page), queued, 'every edit is still waiting after the reload');
  assert.ok(await tile(page, 'Delta').getAttribute('data-pending') !== null);
  assert.match(await page.textContent('#live-status'), /Offline · \d+ pending/);

  // Meanwhile another device renames the same card; nothing of this page has landed.
  const { key } = await api.post('/keys', { label: 'phone' });
  const phone = apiClient(server.url, key);
  await phone.patch(`/tasks/${alpha}`, { title: 'Alpha phone' });
  assert.equal((await api.get(`/tasks/${alpha}`)).task.location, '');

  await recordStates(page);
  await goOnline(page);
  await page.waitForSelector('#ask-dialog[open] .conflict', { timeout: 20000 });
  assert.equal(await page.textContent('.conflict-current'), 'Alpha phone');
  assert.equal(await page.textContent('.conflict-mine'), 'Alpha offline');
  await page.click('#ask-dialog button:text("Save mine")');
  await page.waitForSelector('#live-status[data-state="live"][data-pending="0"]', { timeout: 20000 });
  const states = await page.evaluate(() => window.statesSeen);
  assert.ok(states.includes('replaying'), `the header said it was sending (${states})`);
  assert.equal(await page.locator('.card[data-pending]').count(), 0, 'no mark is left');

  // Read back: every edit landed, exactly once.
  const { projects } = await api.get('/projects?completed=all');
  const trip = projects.find((p) => p.id === projectId);
  const cards = trip.columns.flatMap((c) => c.tasks);
  assert.deepEqual(trip.columns.map((c) => c.name), ['To do', 'Done', 'Review']);
  assert.equal(cards.filter((c) => c.title === 'Delta').length, 1);
  assert.equal(cards.filter((c) => c.title === 'Pack bags').length, 1);
  assert.equal(cards.find((c) => c.title === 'Pack bags').parentId, alpha);
  assert.equal(cards.some((c) => c.id === echo), false, 'the deleted card is gone');
  const a = cards.find((c) => c.id === alpha);
  assert.equal(a.title, 'Alpha offline', 'mine, chosen knowingly');
  assert.equal(a.location, 'Lisbon');
  assert.deepEqual(a.tags, ['travel']);
  assert.deepEqual([...a.checklist].sort((x, y) => x.position - y.position).map((k) => k.text), ['Tickets', 'Passports']);
  assert.deepEqual(a.comments.map((c) => c.text), ['Written on the train']);
  assert.notEqual(cards.find((c) => c.id === bravo).completedAt, null);
  assert.equal(cards.find((c) => c.id === charlie).columnId, done);
  assert.equal(cards.find((c) => c.id === charlie).columnId, done);
  assert.ok(todo);
  // The page shows the same.
  await tile(page, 'Alpha offline').waitFor();
  assert.deepEqual(page.errors, []);
});

test('a refused edit is named in a toast, and a new board made offline lands', async (t) => {
  const { page, api } = await session(t);
  const { taskIds: [gone] } = await seedBoard(api, { name: 'Shared', cards: ['Gone soon'] });
  await tile(page, 'Gone soon').waitFor();
  await readyForOffline(page);
  await goOffline(page);
  await page.waitForSelector('#live-status[data-state="offline"]');
  await openCard(page, 'Gone soon');
  await page.locator('#card-dialog').getByLabel('Location', { exact: true }).fill('Porto');
  await page.locator('#card-dialog').getByLabel('Location', { exact: true }).press('Enter');
  await closeCard(page);
  await page.fill('.new-board input', 'Made offline');
  await page.press('.new-board input', 'Enter');
  await page.locator('.project-link:text-is("Made offline")').waitFor();
  await eventually(async () => (await pending(page)) === 2, { message: 'two edits waiting' });

  // Another device deletes the card: the edit cannot land (the server answers 404).
  await api.del(`/tasks/${gone}`);
  await goOnline(page);
  const refused = page.locator('.toast-error', { hasText: 'Gone soon' });
  await refused.waitFor({ timeout: 20000 });
  assert.match(await refused.textContent(), /Not saved/);
  await page.waitForSelector('#live-status[data-state="live"][data-pending="0"]', { timeout: 20000 });
  const { projects } = await api.get('/projects');
  assert.equal(projects.filter((p) => p.name === 'Made offline').length, 1);
});

test('a key revoked while offline keeps the waiting edits and says so', async (t) => {
  const { page, api, server } = await session(t, { signIn: false });
  await seedBoard(api, { name: 'Kept', cards: ['Keep me'] });
  const { key, id: keyId } = await api.post('/keys', { label: 'laptop' });
  await page.goto(server.url);
  await page.fill('#key-input', key);
  await page.click('#key-form button[type=submit]');
  await page.waitForSelector('#live-status[data-state="live"]');
  await tile(page, 'Keep me').waitFor();
  await readyForOffline(page);

  await goOffline(page);
  await page.waitForSelector('#live-status[data-state="offline"]');
  await column(page, 'To do').locator('.add-card input').fill('Written offline');
  await column(page, 'To do').locator('.add-card input').press('Enter');
  await tile(page, 'Written offline').waitFor();
  await eventually(async () => (await pending(page)) === 1, { message: 'one edit waiting' });

  await api.del(`/keys/${keyId}`);
  await goOnline(page);
  await page.waitForSelector('#live-status[data-state="refused"]', { timeout: 20000 }).catch(async (e) => {
    console.log('DEBUG', await page.evaluate(() => [document.getElementById('live-status').outerHTML, document.getElementById('toasts').textContent]));
    throw e;
  });
  assert.match(await page.textContent('#live-status'), /Key refused · 1 pending/);
  await page.locator('.toast-error', { hasText: 'kept in this browser' }).waitFor();
  assert.equal(await page.isVisible('#app'), true, 'the page is not wiped to the welcome screen');
  await tile(page, 'Written offline').waitFor();

  // A reload still has it, and nothing reached the server.
  await page.reload();
  await page.waitForSelector('#live-status[data-state="refused"]', { timeout: 20000 });
  assert.equal(await pending(page), 1);
  await tile(page, 'Written offline').waitFor();
  const { projects } = await api.get('/projects');
  assert.equal(projects[0].columns[0].tasks.some((c) => c.title === 'Written offline'), false);
  assert.deepEqual(page.errors, []);
});

test('the page is an installable web app: a manifest and a service worker at the root', async (t) => {
  const { page, server } = await session(t);
  const href = await page.getAttribute('link[rel="manifest"]', 'href');
  const manifest = await (await fetch(new URL(href, server.url))).json();
  assert.equal(manifest.display, 'standalone');
  assert.equal(manifest.start_url, '/');
  assert.ok(manifest.icons.some((i) => i.src === '/assets/icon.svg'));
  const worker = await fetch(`${server.url}/sw.js`);
  assert.equal(worker.status, 200);
  assert.match(worker.headers.get('content-type'), /javascript/);
  await readyForOffline(page);
  assert.equal(await page.evaluate(async () => (await navigator.serviceWorker.getRegistration()).scope), `${server.url}/`);
  // The worker never keeps `/api` replies.
  const kept = await page.evaluate(async () => (await (await caches.open('workboard-shell')).keys()).map((r) => new URL(r.url).pathname));
  assert.equal(kept.some((p) => p.startsWith('/api')), false);
});
