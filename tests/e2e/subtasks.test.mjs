// Subtasks: a new one lands right below its parent; the parent counts finished ones too
// (1/3), and its subtasks can be shown together on its tile.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addCards, eventually, seedBoard, session } from './harness.mjs';

test('a new subtask lands below its parent, and the parent counts finished subtasks', async (t) => {
  const { page, api } = await session(t, { width: 1440, height: 900 });
  const { columnIds: [todo, doing] } = await seedBoard(api, { name: 'Release', columns: ['To do', 'Doing'] });
  const [, parentId] = await addCards(api, todo, ['Above', 'Write release notes', 'Below']);
  const tile = (title) => page.locator('.card', { has: page.locator(`.card-title:text-is("${title}")`) });
  await tile('Write release notes').click();
  const dialog = page.locator('#card-dialog');
  for (const title of ['Collect changes', 'Draft', 'Proofread']) {
    await dialog.getByPlaceholder('Add a subtask').fill(title);
    await dialog.getByPlaceholder('Add a subtask').press('Enter');
    await dialog.locator('.subtasks li', { hasText: title }).waitFor();
  }
  const order = async () => {
    const { projects } = await api.get('/projects');
    return projects[0].columns.find((c) => c.id === todo).tasks.map((x) => x.title);
  };
  // A new subtask shows before the server has answered it: wait for the last to land.
  await eventually(async () => (await order()).length === 6, { message: 'the subtasks to land' });
  assert.deepEqual(await order(), ['Above', 'Write release notes', 'Collect changes', 'Draft', 'Proofread', 'Below']);
  await eventually(async () => JSON.stringify(await page.locator(`.card-list[data-column="${todo}"] .card-title`).allTextContents())
    === JSON.stringify(['Above', 'Write release notes', 'Collect changes', 'Draft', 'Proofread', 'Below']), { message: 'the board order' });

  // One subtask finished (it stays, marked as finished), one moved to another list.
  await dialog.getByLabel('Complete Collect changes').click();
  await dialog.locator('.subtasks li.done', { hasText: 'Collect changes' }).waitFor();
  assert.equal(await dialog.locator('.subtasks-section h3 .count').textContent(), '1/3');
  await page.keyboard.press('Escape');
  const { projects } = await api.get('/projects');
  const proofread = projects[0].columns[0].tasks.find((x) => x.title === 'Proofread');
  await api.patch(`/tasks/${proofread.id}`, { columnId: doing });
  await page.locator(`.card-list[data-column="${doing}"] .card-title:text-is("Proofread")`).waitFor();
  await page.locator('.card.completed .card-title:text-is("Collect changes")').waitFor();

  // The count includes the finished one, and all three show together on the parent.
  const toggle = tile('Write release notes').locator('.subtasks-toggle');
  assert.equal(await toggle.textContent(), '↳ 1/3');
  assert.match(await toggle.getAttribute('aria-label'), /1 of 3 done/);
  await toggle.click();
  const peek = tile('Write release notes').locator('.subtask-peek li');
  await peek.first().waitFor();
  // Each subtask with its state (in words for a screen reader), and its list if elsewhere.
  assert.deepEqual(await peek.evaluateAll((items) => items.map((li) => li.textContent)),
    ['✓Done: Collect changes', '○Open: Draft', '○Open: Proofreadin Doing']);
  assert.deepEqual(await peek.evaluateAll((items) => items.map((li) => li.classList.contains('done'))), [true, false, false]);
  assert.equal(await page.locator('#card-dialog[open]').count(), 0, 'the toggle does not open the parent');
  await peek.filter({ hasText: 'Proofread' }).getByRole('button').click();
  await page.waitForSelector('#card-dialog[open]');
  assert.equal(await page.inputValue('#card-dialog .title-input'), 'Proofread');
  assert.ok(parentId);
  assert.deepEqual(page.errors, []);
});
