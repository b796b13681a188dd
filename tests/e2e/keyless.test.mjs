// Keyless mode: an export file opened with no key shows its boards and can be edited in
// the browser, with no request to the interface.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { screenshot, seedBoard, session } from './harness.mjs';

test('an export file opens without a key and is edited locally', async (t) => {
  const { page, api, server } = await session(t, { signIn: false });
  await seedBoard(api, { name: 'Exported board', columns: ['Backlog', 'Shipped'], cards: ['Alpha', 'Beta'] });
  const { projectId } = await seedBoard(api, { name: 'Second board', cards: ['Gamma'] });
  await api.patch(`/projects/${projectId}`, { folder: 'Clients', pinnedAt: Date.now() });
  const res = await fetch(`${server.url}/api/v1/export`, { headers: { Authorization: `Bearer ${server.key}` } });
  const dir = await mkdtemp(path.join(tmpdir(), 'workboard-export-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'workboard-export.json');
  await writeFile(file, await res.text());

  const apiCalls = [];
  page.on('request', (req) => {
    if (new URL(req.url()).pathname.startsWith('/api')) apiCalls.push(`${req.method()} ${req.url()}`);
  });
  await page.goto(server.url);
  await page.setInputFiles('#import-file', file);
  await page.waitForSelector('#app:not([hidden])');
  await page.locator('.project-link:text-is("Exported board")').waitFor();
  await page.locator('.project-link:text-is("Second board")').waitFor();
  assert.match(await page.textContent('#mode-badge'), /Local file/);

  await page.click('.project-link:text-is("Exported board")');
  await page.locator('.card-title:text-is("Alpha")').waitFor();
  await page.locator('.card-title:text-is("Beta")').waitFor();

  // Edit locally: add a card and rename one.
  const backlog = page.locator('.column', { has: page.locator('.column-name:text-is("Backlog")') });
  await backlog.locator('.add-card input').fill('Local card');
  await backlog.locator('.add-card input').press('Enter');
  await backlog.locator('.card-title:text-is("Local card")').waitFor();
  await page.locator('.card', { hasText: 'Alpha' }).click();
  await page.fill('#card-dialog .title-input', 'Alpha, renamed here');
  await page.press('#card-dialog .title-input', 'Enter');
  await page.click('#card-dialog footer button:text("Close")');
  await page.locator('.card-title:text-is("Alpha, renamed here")').waitFor();
  await screenshot(page, '11-keyless');

  // Still there after a reload, and still nothing sent to the interface.
  await page.reload();
  await page.locator('.card-title:text-is("Local card")').waitFor();
  assert.deepEqual(apiCalls, []);
  assert.equal((await api.get('/projects')).projects.flatMap((p) => p.columns.flatMap((c) => c.tasks)).length, 3);
  assert.deepEqual(page.errors, []);
});

test('a file that is not an export is refused with a message', async (t) => {
  const { page, server } = await session(t, { signIn: false });
  const dir = await mkdtemp(path.join(tmpdir(), 'workboard-export-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'notes.json');
  await writeFile(file, '{"hello": "world"}');
  await page.goto(server.url);
  await page.setInputFiles('#import-file', file);
  await page.waitForSelector('#import-error:text("not a Workboard export")');
  assert.equal(await page.isHidden('#app'), true);
});
