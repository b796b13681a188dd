// Accessibility: axe-core (node_modules/axe-core) finds no serious or critical violation on
// the welcome page, the board, the open card dialog, the recycle bin and the keys view, nor
// in the Move and Copy dialogs, the shortcuts and the search results.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { addCards, seedBoard, session } from './harness.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const AXE = await readFile(path.join(ROOT, 'node_modules/axe-core/axe.min.js'), 'utf8');

/** Runs axe on the page as it stands; returns its serious and critical violations. */
async function serious(page) {
  // Evaluated through the browser's debugging protocol: the page's Content-Security-Policy
  // (default-src 'self') refuses an inline <script>, which is as it should be.
  if (!(await page.evaluate(() => Boolean(window.axe)))) await page.evaluate(AXE);
  const violations = await page.evaluate(async () => (await window.axe.run(document)).violations
    .map((v) => ({ id: v.id, impact: v.impact, target: v.nodes[0]?.target.join(' '), count: v.nodes.length })));
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

async function assertClean(page, view) {
  const found = await serious(page);
  assert.deepEqual(found, [], `${view}:\n${found.map((v) => `  ${v.id} (${v.impact}, ${v.count}x) at ${v.target}`).join('\n')}`);
}

test('the welcome page has no serious or critical accessibility violation', async (t) => {
  const { page, server } = await session(t, { signIn: false });
  await page.goto(server.url);
  await page.waitForSelector('#welcome:not([hidden])');
  await assertClean(page, 'the welcome page');
  // Moderate, but named in the issue: the page's content sits in a <main> landmark.
  const all = await page.evaluate(async () => (await window.axe.run(document)).violations.map((v) => v.id));
  assert.ok(!all.includes('landmark-one-main'), `the welcome page has no <main>: ${all.join(', ')}`);
  assert.deepEqual(page.errors, []);
});

test('the board, the card dialog, the bin and the keys view have no serious or critical violation', async (t) => {
  const { page, api } = await session(t, { width: 1440, height: 900 });
  const { columnIds: [todo] } = await seedBoard(api, { name: 'Launch', columns: ['To do', 'Doing', 'Done'] });
  const [plan, , binned] = await addCards(api, todo, [
    { title: 'Plan the launch', description: 'Steps:\n\n- [ ] x\n- [x] done already\n\nSee **notes**.' },
    'Write the post',
    'Bin me',
  ]);
  await api.post('/tasks', { columnId: todo, title: 'Book the room', parentId: plan });
  await api.del(`/tasks/${binned}`);
  const tile = page.locator('.card', { has: page.locator('.card-title:text-is("Plan the launch")') });
  await tile.locator('.subtasks-toggle').waitFor();
  await page.locator('.card-title:text-is("Bin me")').waitFor({ state: 'detached' });
  await assertClean(page, 'the board');

  await tile.click();
  await page.waitForSelector('#card-dialog[open]');
  await page.locator('#card-dialog .markdown input[type=checkbox]').first().waitFor();
  await assertClean(page, 'the card dialog');
  await page.keyboard.press('Escape');
  await page.waitForSelector('#card-dialog:not([open])', { state: 'attached' });

  await page.click('#bin-button');
  await page.locator('#bin-dialog .bin-list li', { hasText: 'Bin me' }).waitFor();
  await assertClean(page, 'the recycle bin');
  await page.keyboard.press('Escape');
  await page.waitForSelector('#bin-dialog:not([open])', { state: 'attached' });

  await page.click('#keys-button');
  await page.locator('#keys-dialog .keys-list li').first().waitFor();
  await assertClean(page, 'the keys view');
  assert.deepEqual(page.errors, []);
});

test('the Move and Copy dialogs, the shortcuts and the search results have no serious or critical violation', async (t) => {
  const { page, api } = await session(t, { width: 1440, height: 900 });
  const { projectId, columnIds: [todo] } = await seedBoard(api, { name: 'Launch', columns: ['To do', 'Done'] });
  await seedBoard(api, { name: 'Other', columns: ['Inbox'] });
  await page.goto(`${page.url().split('#')[0]}#/b/${projectId}`);
  const [plan] = await addCards(api, todo, [{ title: 'Plan the launch', tags: ['web'] }, 'Plan the party']);
  await api.post(`/tasks/${plan}/checklist`, { items: [{ text: 'Copy' }, { text: 'Design', done: true }] });
  await api.post('/tasks', { columnId: todo, title: 'Book the room', parentId: plan });
  const tile = page.locator('.card', { has: page.locator('.card-title:text-is("Plan the launch")') });
  await tile.click();
  const dialog = page.locator('#card-dialog');
  await dialog.locator('.checklist li .item-grip').nth(1).waitFor();
  await assertClean(page, 'the card dialog with its checklist grips and Move and Copy');
  for (const name of ['Move…', 'Copy…']) {
    await dialog.getByRole('button', { name }).click();
    await page.locator('#transfer-dialog[open]').waitFor();
    await page.locator('#transfer-dialog').getByLabel('Board', { exact: true }).selectOption({ label: 'Other' });
    await assertClean(page, `the ${name} dialog`);
    await page.keyboard.press('Escape');
    await page.waitForSelector('#transfer-dialog:not([open])', { state: 'attached' });
  }
  await page.keyboard.press('Escape');
  await page.waitForSelector('#card-dialog:not([open])', { state: 'attached' });

  await page.click('#help-button');
  await page.locator('#help-dialog .shortcuts').waitFor();
  await assertClean(page, 'the shortcuts');
  await page.keyboard.press('Escape');
  await page.waitForSelector('#help-dialog:not([open])', { state: 'attached' });

  await page.locator('#search-input').fill('plan');
  await page.locator('#search-results .search-hit').nth(1).waitFor();
  await page.keyboard.press('ArrowDown');
  await assertClean(page, 'the search results');
  assert.deepEqual(page.errors, []);
});
