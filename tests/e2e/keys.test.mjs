// The keys view: the account's keys with access and expiry, issuing a read-only key with an
// expiry (shown once, and really read-only), and revoking it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apiClient, screenshot, session } from './harness.mjs';

test('the keys view lists access and expiry, issues a read key and revokes it', async (t) => {
  const { page, server } = await session(t);
  await page.click('#keys-button');
  const dialog = page.locator('#keys-dialog');
  await dialog.locator('.keys-list li').first().waitFor();
  assert.match(await dialog.locator('.keys-list li').first().innerText(), /full/);
  assert.match(await dialog.locator('.keys-list li').first().innerText(), /never expires/);

  await dialog.locator('#key-label').fill('Dashboard');
  await dialog.locator('#key-access').selectOption('read');
  await dialog.locator('#key-expires').fill('2099-01-02T03:04');
  await dialog.locator('#key-issue').click();
  const made = await dialog.locator('#key-new').inputValue();
  assert.match(made, /^wb_/);
  const row = dialog.locator('.keys-list li', { hasText: 'Dashboard' });
  await row.waitFor();
  assert.match(await row.innerText(), /read only/);
  assert.match(await row.innerText(), /expires/);
  await screenshot(page, '24-keys');

  // The key works, and only for reading.
  const reader = apiClient(server.url, made);
  await reader.get('/projects');
  await assert.rejects(reader.post('/projects', { name: 'No' }), /403/);
  const listed = (await server.api.get('/keys')).keys.find((k) => k.label === 'Dashboard');
  assert.equal(listed.access, 'read');
  assert.equal(listed.expiresAt, new Date('2099-01-02T03:04').getTime());

  await row.locator('button', { hasText: 'Revoke' }).click();
  await row.waitFor({ state: 'detached' });
  await assert.rejects(reader.get('/projects'), /401/);
  assert.deepEqual(page.errors, []);
});
