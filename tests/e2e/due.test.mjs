// Due dates that warn: overdue, today and soon are told apart by words and colour, in the
// browser's time zone, and announced to screen readers; finished cards are never flagged.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addCards, dayIn, screenshot, seedBoard, session } from './harness.mjs';

// Fourteen hours ahead of UTC: for most of the day its date is not the server's.
const ZONE = 'Pacific/Kiritimati';

test('due dates read Overdue, Today, Tomorrow or In 2 days in the browser\'s time zone', async (t) => {
  const { page, api } = await session(t, { width: 1440, height: 900, timezoneId: ZONE });
  const { projectId, columnIds: [todo] } = await seedBoard(api, { name: 'Deadlines', columns: ['To do', 'Done'] });
  const day = (offset) => dayIn(ZONE, offset);
  const [, , , , , finishedId] = await addCards(api, todo, [
    { title: 'Was due yesterday', deadline: day(-1) },
    { title: 'Due today', deadline: day(0) },
    { title: 'Due tomorrow', deadline: day(1) },
    { title: 'Due in two days', deadline: day(2) },
    { title: 'Due next month', deadline: day(30) },
    { title: 'Finished late', deadline: day(-3) },
  ]);
  await api.patch(`/tasks/${finishedId}`, { completedAt: Date.now() });
  await page.goto(`${page.url().split('#')[0]}#/b/${projectId}?done=all`);
  const tile = (title) => page.locator('.card', { has: page.locator(`.card-title:text-is("${title}")`) });
  await tile('Finished late').waitFor();

  const label = async (title) => (await tile(title).locator('.pill.due').textContent()).replace('Due: ', '');
  assert.equal(await label('Was due yesterday'), 'Overdue · yesterday');
  assert.equal(await label('Due today'), 'Today');
  assert.equal(await label('Due tomorrow'), 'Tomorrow');
  assert.equal(await label('Due in two days'), 'In 2 days');
  assert.doesNotMatch(await label('Due next month'), /Overdue|Today|Tomorrow/);

  // Colour follows the words, and a finished card is never flagged, however late.
  assert.equal(await tile('Was due yesterday').locator('.pill.due-overdue').count(), 1);
  assert.equal(await tile('Due today').locator('.pill.due-today').count(), 1);
  assert.equal(await tile('Due tomorrow').locator('.pill.due-soon').count(), 1);
  assert.equal(await tile('Finished late').locator('.pill.due-done').count(), 1);
  assert.doesNotMatch(await label('Finished late'), /Overdue/);
  assert.doesNotMatch(await tile('Finished late').getAttribute('aria-label'), /Overdue/);
  const red = await tile('Was due yesterday').locator('.pill.due').evaluate((el) => getComputedStyle(el).backgroundColor);
  const plain = await tile('Due next month').locator('.pill.due').evaluate((el) => getComputedStyle(el).backgroundColor);
  assert.notEqual(red, plain);

  // Screen readers hear it: in the card's name, and in the board's summary on opening.
  assert.match(await tile('Was due yesterday').getAttribute('aria-label'), /Overdue: was due yesterday/);
  assert.match(await tile('Due today').getAttribute('aria-label'), /Due today/);
  await page.reload();
  await tile('Was due yesterday').waitFor();
  await page.waitForFunction(() => /1 overdue, 1 due today, 2 due in the next 2 days/.test(document.getElementById('announce').textContent));
  await screenshot(page, '12-due-dates-1440');
  assert.deepEqual(page.errors, []);
});
