// The calendar view (web/js/calendar.js): a month of the cards with a deadline day, today
// and overdue cards marked; a card dragged to another day gets that deadline (read back
// through the API) and Undo takes it back; arrow keys move between days, Enter opens a card,
// Alt+arrows move one; on a phone an agenda of the days with cards; a board's address with
// `?card=<id>` (the calendar feed's links) opens that card; axe finds no serious violation.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { addCards, centre, dayIn, eventually, mouseDrag, screenshot, seedBoard, session } from './harness.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
const PHONE = { width: 390, height: 844, hasTouch: true, isMobile: true };

/** A day `n` days after `key` (YYYY-MM-DD). */
function addDays(key, n) {
  const [y, m, d] = key.split('-').map(Number);
  return new Date(Date.UTC(y, m - 1, d + n)).toISOString().slice(0, 10);
}
/** The day beside today in the same week row (Monday-first weeks). */
function besideToday() {
  const today = dayIn(zone, 0);
  const [y, m, d] = today.split('-').map(Number);
  const sunday = new Date(Date.UTC(y, m - 1, d)).getUTCDay() === 0;
  return addDays(today, sunday ? -1 : 1);
}

async function seed(api) {
  const { projectId, columnIds } = await seedBoard(api, { name: 'Launch', columns: ['To do', 'Done'] });
  const [late, now, later, moving] = await addCards(api, columnIds[0], [
    { title: 'Late report', deadline: dayIn(zone, -1) },
    { title: 'Ship it', deadline: dayIn(zone, 0) },
    { title: 'Next week', deadline: dayIn(zone, 7) },
    { title: 'Move me', deadline: dayIn(zone, 0) },
    'No deadline',
  ]);
  const other = await seedBoard(api, { name: 'Home', columns: ['Chores'] });
  const [gutter] = await addCards(api, other.columnIds[0], [{ title: 'Clean gutters', deadline: dayIn(zone, 0) }]);
  return { projectId, ids: { late, now, later, moving, gutter } };
}

const monthHref = (day, board = '') => `#/calendar${board ? `/${board}` : ''}?month=${day.slice(0, 7)}`;
const cell = (page, day) => page.locator(`td.cal-day[data-day="${day}"]`);

/** The seeded board, once the page holds its cards. */
async function showBoard(page, projectId) {
  await page.evaluate((h) => { location.hash = h; }, `#/b/${projectId}`);
  await page.locator('.card-title:text-is("Ship it")').waitFor();
}

async function openCalendar(page, hash) {
  await page.evaluate((h) => { location.hash = h; }, hash);
  await page.locator('#calendar:not([hidden]) .cal-head').waitFor();
}

test('the month shows the cards on their days, today and an overdue card marked', async (t) => {
  const { page, api } = await session(t);
  const { projectId, ids } = await seed(api);
  await showBoard(page, projectId);
  // Reached from the header.
  await page.click('#calendar-link');
  await page.locator('#calendar:not([hidden]) .cal-grid').waitFor();
  assert.equal(await page.isVisible('#board'), false, 'the board gives way to the calendar');
  const today = dayIn(zone, 0);
  await cell(page, today).locator('.cal-card', { hasText: 'Ship it' }).waitFor();
  assert.equal(await cell(page, today).getAttribute('aria-current'), 'date', 'today is marked');
  assert.match(await cell(page, today).getAttribute('class'), /cal-today/);
  // Every board by default: the other board's card is there too, and the card without a day is not.
  assert.equal(await cell(page, today).locator('.cal-card', { hasText: 'Clean gutters' }).count(), 1);
  assert.equal(await page.locator('.cal-card', { hasText: 'No deadline' }).count(), 0);
  assert.match(await cell(page, today).locator('.cal-card', { hasText: 'Ship it' }).getAttribute('class'), /due-today/);

  const yesterday = dayIn(zone, -1);
  await openCalendar(page, monthHref(yesterday));
  const late = cell(page, yesterday).locator('.cal-card', { hasText: 'Late report' });
  await late.waitFor();
  assert.match(await late.getAttribute('class'), /due-overdue/, 'the overdue card is marked as on the board');
  assert.equal(await late.locator('.cal-flag').textContent(), 'Overdue', 'and said in words');

  // One board: the other board's card leaves.
  const { projects } = await api.get('/projects');
  const launch = projects.find((p) => p.name === 'Launch');
  await openCalendar(page, monthHref(today, launch.id));
  await cell(page, today).locator('.cal-card', { hasText: 'Ship it' }).waitFor();
  assert.equal(await page.locator('.cal-card', { hasText: 'Clean gutters' }).count(), 0);

  // A finished card: shown as finished (the board's default window), hidden with done=none.
  await api.patch(`/tasks/${ids.now}`, { completedAt: Date.now() });
  const done = cell(page, today).locator('.cal-card', { hasText: 'Ship it' });
  await eventually(async () => /due-done/.test((await done.getAttribute('class')) || ''), { message: 'marked finished' });
  await openCalendar(page, `${monthHref(today, launch.id)}&done=none`);
  await cell(page, today).locator('.cal-card', { hasText: 'Move me' }).waitFor();
  assert.equal(await page.locator('.cal-card', { hasText: 'Ship it' }).count(), 0);

  await screenshot(page, '60-calendar-month');
  // A click opens the card dialog.
  await cell(page, today).locator('.cal-card', { hasText: 'Move me' }).click();
  await page.waitForSelector('#card-dialog[open]');
  assert.equal(await page.inputValue('#card-dialog input[aria-label="Deadline day"]'), today);
  assert.deepEqual(page.errors, []);
});

test('dragging a card to another day changes its deadline, and Undo takes it back', async (t) => {
  const { page, api } = await session(t);
  const { projectId, ids } = await seed(api);
  const today = dayIn(zone, 0);
  const target = besideToday();
  await showBoard(page, projectId);
  await openCalendar(page, monthHref(today));
  const card = cell(page, today).locator('.cal-card', { hasText: 'Move me' });
  await card.waitFor();
  await mouseDrag(page, card, await centre(cell(page, target)));
  await cell(page, target).locator('.cal-card', { hasText: 'Move me' }).waitFor();
  await eventually(async () => (await api.get(`/tasks/${ids.moving}`)).task.deadline === target, { message: 'the new deadline on the server' });
  assert.equal(await page.isVisible('#card-dialog[open]'), false, 'the drop does not open the card');

  await page.locator('#calendar-title').focus();
  await page.keyboard.press('Control+z');
  await eventually(async () => (await api.get(`/tasks/${ids.moving}`)).task.deadline === today, { message: 'undone on the server' });
  await cell(page, today).locator('.cal-card', { hasText: 'Move me' }).waitFor();
  assert.deepEqual(page.errors, []);
});

test('arrow keys move between days, Enter opens a card, Alt+arrows move it a day', async (t) => {
  const { page, api } = await session(t);
  const { projectId, ids } = await seed(api);
  const today = dayIn(zone, 0);
  await showBoard(page, projectId);
  await openCalendar(page, monthHref(today));
  await cell(page, today).locator('.cal-card').first().waitFor();
  // Today holds the grid's one Tab stop.
  assert.equal(await page.locator('td.cal-day[tabindex="0"]').count(), 1);
  assert.equal(await page.locator('td.cal-day[tabindex="0"]').getAttribute('data-day'), today);
  await cell(page, today).focus();
  const focusedDay = () => page.evaluate(() => document.activeElement?.dataset?.day);
  await page.keyboard.press('ArrowDown');
  assert.equal(await focusedDay(), addDays(today, 7));
  await page.keyboard.press('ArrowUp');
  await page.keyboard.press('ArrowLeft');
  await eventually(async () => (await focusedDay()) === addDays(today, -1), { message: 'the day before (maybe last month)' });
  await page.keyboard.press('ArrowRight');
  await eventually(async () => (await focusedDay()) === today, { message: 'back on today' });

  // Enter goes into the day's cards; Enter on a card opens it.
  await page.keyboard.press('Enter');
  const focusedCard = () => page.evaluate(() => document.activeElement?.closest('.cal-card')?.textContent || '');
  assert.match(await focusedCard(), /Clean gutters|Ship it|Move me/);
  while (!/Move me/.test(await focusedCard())) await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Alt+ArrowDown');
  const week = addDays(today, 7);
  await eventually(async () => (await api.get(`/tasks/${ids.moving}`)).task.deadline === week, { message: 'a week later' });
  await eventually(async () => /Move me/.test(await focusedCard()), { message: 'the focus goes with the card' });
  assert.equal(await page.evaluate(() => document.activeElement.closest('td').dataset.day), week);
  await page.keyboard.press('Enter');
  await page.waitForSelector('#card-dialog[open]');
  assert.equal(await page.inputValue('#card-dialog input[aria-label="Deadline day"]'), week);
  assert.deepEqual(page.errors, []);
});

test('on a phone the calendar is an agenda of the days with cards', async (t) => {
  const { page, api } = await session(t, PHONE);
  const { projectId } = await seed(api);
  const today = dayIn(zone, 0);
  await showBoard(page, projectId);
  // Reached from the header's menu.
  await page.click('#tools-toggle');
  await page.click('#calendar-link');
  await page.locator('#calendar:not([hidden]) .cal-agenda').waitFor();
  assert.equal(await page.locator('.cal-grid').count(), 0, 'no grid on a phone');
  const days = await page.locator('.cal-agenda-day').evaluateAll((els) => els.map((e) => e.dataset.day));
  assert.deepEqual(days, [...days].sort(), 'the days in order');
  assert.ok(days.includes(today));
  assert.ok(days.every((d) => d.slice(0, 7) === today.slice(0, 7)), 'the days of this month');
  const todays = page.locator(`.cal-agenda-day[data-day="${today}"]`);
  assert.equal(await todays.getAttribute('aria-current'), 'date');
  assert.equal(await todays.locator('.cal-card').count(), 3);
  const small = await page.locator('#calendar button, #calendar select, #calendar a[href]').evaluateAll((els) => els
    .filter((e) => e.offsetParent !== null)
    .map((e) => [e.textContent.trim().slice(0, 20), e.getBoundingClientRect()])
    .filter(([, r]) => r.height < 44 || r.width < 44)
    .map(([name, r]) => `${name} ${Math.round(r.width)}x${Math.round(r.height)}`));
  assert.deepEqual(small, [], 'touch targets of at least 44 px');
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(width <= 390, `no sideways scroll (${width}px)`);
  await screenshot(page, '61-calendar-agenda-390');
  await todays.locator('.cal-card', { hasText: 'Move me' }).tap();
  await page.waitForSelector('#card-dialog[open]');
  assert.deepEqual(page.errors, []);
});

test('a board address with ?card= (the feed’s links) opens the card', async (t) => {
  const { page, api } = await session(t);
  const { projectId, ids } = await seed(api);
  await showBoard(page, projectId);
  await page.evaluate((h) => { location.hash = h; }, `#/b/${projectId}?card=${ids.later}`);
  await page.waitForSelector('#card-dialog[open]');
  assert.equal(await page.inputValue('#card-dialog input[aria-label="Deadline day"]'), dayIn(zone, 7));
  // The address goes back to the board's, so a reload or Back does not open it again.
  assert.equal(await page.evaluate(() => location.hash), `#/b/${projectId}`);

  // Opened straight from the link, as a calendar app does (a fresh page).
  const url = new URL(page.url());
  await page.goto(`${url.origin}/#/b/${projectId}?card=${ids.late}`);
  await page.waitForSelector('#card-dialog[open]');
  assert.equal(await page.inputValue('#card-dialog input[aria-label="Deadline day"]'), dayIn(zone, -1));
  assert.deepEqual(page.errors, []);
});

test('the calendar has no serious or critical accessibility violation', async (t) => {
  const AXE = await readFile(path.join(ROOT, 'node_modules/axe-core/axe.min.js'), 'utf8');
  const { page, api } = await session(t);
  const { projectId } = await seed(api);
  await showBoard(page, projectId);
  await openCalendar(page, monthHref(dayIn(zone, 0)));
  await page.locator('.cal-card').first().waitFor();
  await page.evaluate(AXE);
  const found = await page.evaluate(async () => (await window.axe.run(document)).violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}) at ${v.nodes[0]?.target.join(' ')}`));
  assert.deepEqual(found, []);
});
