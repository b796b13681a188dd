// The keys view issues a calendar key and shows the calendar feed's URL to copy, with a line
// on how to subscribe (issue 36): the URL carries the key, serves the board's deadlines to a
// client with no header, and the key reaches nothing else.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { screenshot, seedBoard, session } from './harness.mjs';

test('the keys view issues a calendar key and shows the feed URL to copy', async (t) => {
  const { page, server, browser } = await session(t);
  const { columnIds } = await seedBoard(server.api, { name: 'Home' });
  await server.api.post('/tasks', { columnId: columnIds[0], title: 'Renew the passport', deadline: '2027-01-15' });
  await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });

  await page.click('#keys-button');
  const dialog = page.locator('#keys-dialog');
  await dialog.locator('.keys-list li').first().waitFor();
  await dialog.locator('#calendar-issue').click();
  const field = dialog.locator('#feed-url');
  await field.waitFor();
  const url = await field.inputValue();
  assert.match(url, new RegExp(`^${server.url}/api/v1/calendar\\.ics\\?key=wb_[A-Za-z0-9_-]+$`));
  const how = await dialog.locator('.feed-how').innerText();
  for (const app of ['Google Calendar', 'From URL', 'Apple Calendar', 'New Calendar Subscription', 'Thunderbird']) {
    assert.ok(how.includes(app), `${app} in: ${how}`);
  }
  const row = dialog.locator('.keys-list li', { hasText: 'Calendar feed' });
  await row.waitFor();
  assert.match(await row.innerText(), /calendar feed/);
  await screenshot(page, '36-calendar-key');

  // Copy puts the URL on the clipboard.
  await dialog.locator('#feed-copy').click();
  await dialog.locator('.feed-url [role="status"]', { hasText: 'Copied.' }).waitFor();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), url);

  // The URL alone (no header, as a calendar app fetches it) serves the deadlines...
  const feed = await fetch(url);
  assert.equal(feed.status, 200);
  assert.equal(feed.headers.get('content-type'), 'text/calendar; charset=utf-8');
  const text = await feed.text();
  assert.match(text, /^BEGIN:VCALENDAR\r\n/);
  assert.match(text, /SUMMARY:Renew the passport\r\n/);
  assert.match(text, /DTSTART;VALUE=DATE:20270115\r\n/);
  // ...and its key reaches nothing else.
  const key = new URL(url).searchParams.get('key');
  const other = await fetch(`${server.url}/api/v1/projects`, { headers: { Authorization: `Bearer ${key}` } });
  assert.equal(other.status, 403);
  assert.equal((await other.json()).code, 'calendar_key');

  // The form's access choice issues one too, with its label.
  await dialog.locator('#key-label').fill('Phone');
  await dialog.locator('#key-access').selectOption('calendar');
  await dialog.locator('#key-issue').click();
  await dialog.locator('.keys-list li', { hasText: 'Phone' }).waitFor();
  const second = await dialog.locator('#feed-url').inputValue();
  assert.notEqual(second, url);
  assert.equal((await fetch(second)).status, 200);
  const listed = (await server.api.get('/keys')).keys.filter((k) => k.access === 'calendar');
  assert.deepEqual(listed.map((k) => k.label).sort(), ['Calendar feed', 'Phone']);

  // A full key's issue shows no feed URL.
  await dialog.locator('#key-access').selectOption('full');
  await dialog.locator('#key-issue').click();
  await dialog.locator('#key-new:visible').waitFor();
  assert.equal(await dialog.locator('#feed-url').count(), 0);
  assert.deepEqual(page.errors, []);
});
