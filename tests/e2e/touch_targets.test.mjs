// On a touch phone (390x844, hasTouch, isMobile) every control a finger can reach, on the
// board (with its menu and filters open too), in the card dialog, and on the welcome page,
// the set-up guide, the bin, the keys view, the shortcuts and the search results, is at least 44x44 px,
// and the card dialog fits the screen's width. One exemption, from the width rule only: a
// text input or textarea that takes its container's whole width (it is tapped anywhere
// along it); its height must still be 44 px. Fails on the client before the touch rules at
// the end of web/app.css (21 controls on the board were under 44 px).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addCards, dayIn, screenshot, seedBoard, session, signIn } from './harness.mjs';

const PHONE = { width: 390, height: 844, hasTouch: true, isMobile: true };
const MIN = 44;
const INTERACTIVE = 'button, a[href], input, select, textarea, summary, [role=button], [tabindex="0"]';

async function seed(api) {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const { projectId, columnIds } = await seedBoard(api, { name: 'Touch', columns: ['To do', 'Doing', 'Done'] });
  const [rich] = await addCards(api, columnIds[0], [
    { title: 'Rich card', deadline: dayIn(zone, 2), tags: ['web', 'urgent'], description: 'Some **notes**' },
    'Plain card', 'Third card',
  ]);
  await api.post('/tasks', { columnId: columnIds[0], title: 'A subtask', parentId: rich });
  await api.post(`/tasks/${rich}/checklist`, { items: [{ text: 'Copy' }, { text: 'Design', done: true }] });
  await api.post(`/tasks/${rich}/comments`, { text: 'Looks good' });
  return { projectId, columnIds, rich };
}

/** Every visible interactive element under `root` smaller than 44x44 px,
 * as `tag "name" WxH`. A text field (input of a text type, or textarea) is measured for
 * height only when it takes the whole width of its container (full-width fields are exempt
 * from the width rule, never from the height rule). */
async function smallTargets(page, root, selector = INTERACTIVE) {
  return page.evaluate(({ root, selector, min }) => {
    const scope = document.querySelector(root);
    const textTypes = new Set(['text', 'search', 'email', 'url', 'password', 'number', 'tel', '']);
    const out = [];
    for (const el of scope.querySelectorAll(selector)) {
      if (el.type === 'hidden') continue;
      const style = getComputedStyle(el);
      if (style.visibility === 'hidden' || style.display === 'none') continue;
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) continue;
      // Inside a closed dialog or a hidden ancestor.
      if (!el.checkVisibility?.({ visibilityProperty: true })) continue;
      let width = r.width;
      const isText = el.tagName === 'TEXTAREA' || (el.tagName === 'INPUT' && textTypes.has(el.getAttribute('type') || ''));
      if (isText) {
        const parent = el.parentElement.getBoundingClientRect();
        const pad = parseFloat(getComputedStyle(el.parentElement).paddingLeft) + parseFloat(getComputedStyle(el.parentElement).paddingRight);
        if (r.width >= parent.width - pad - 2) width = min; // full width: exempt from the width rule
      }
      if (width < min - 0.5 || r.height < min - 0.5) {
        const name = (el.getAttribute('aria-label') || el.textContent || el.value || el.placeholder || '').trim().replace(/\s+/g, ' ').slice(0, 40);
        out.push(`${el.tagName.toLowerCase()}${el.className ? '.' + String(el.className).split(' ').join('.') : ''} "${name}" ${Math.round(r.width)}x${Math.round(r.height)}`);
      }
    }
    return out;
  }, { root, selector, min: MIN });
}

test('on a touch phone every control on the board is at least 44x44 px', async (t) => {
  const { page, api } = await session(t, PHONE);
  await seed(api);
  await page.locator('.card-title:text-is("Rich card")').waitFor();
  const small = await smallTargets(page, 'body');
  await screenshot(page, '40-touch-board-390');
  // The header's menu and the filter panel, open.
  await page.locator('#tools-toggle').tap();
  small.push(...await smallTargets(page, '.tools'));
  await page.keyboard.press('Escape');
  await page.locator('.filter-toggle').tap();
  await page.locator('#filter-text').waitFor();
  small.push(...await smallTargets(page, '.filter-bar'));
  assert.deepEqual(small, [], `controls under 44x44 on the board:\n${small.join('\n')}`);
  assert.deepEqual(page.errors, []);
});

test('on a touch phone every control in the card dialog is at least 44x44 px, and the dialog fits the width', async (t) => {
  const { page, api } = await session(t, PHONE);
  await seed(api);
  await page.locator('.card-title:text-is("Rich card")').tap();
  await page.waitForSelector('#card-dialog[open]');
  const dialog = page.locator('#card-dialog');
  await dialog.locator('.comments li', { hasText: 'Looks good' }).waitFor();
  await dialog.locator('.checklist li').nth(1).waitFor();
  const small = await smallTargets(page, '#card-dialog');
  await screenshot(page, '41-touch-card-390');
  assert.deepEqual(small, [], `controls under 44x44 in the card dialog:\n${small.join('\n')}`);

  const fit = await page.evaluate(() => {
    const d = document.querySelector('#card-dialog');
    const r = d.getBoundingClientRect();
    return { left: r.left, right: r.right, scroll: d.scrollWidth, client: d.clientWidth, page: document.documentElement.scrollWidth, vw: innerWidth };
  });
  assert.ok(fit.left >= 0 && fit.right <= fit.vw + 0.5, `the dialog sits within the screen (${fit.left}..${fit.right} of ${fit.vw})`);
  assert.ok(fit.scroll <= fit.client, `nothing in the dialog overflows its width (${fit.scroll} > ${fit.client})`);
  assert.ok(fit.page <= fit.vw, `the page does not scroll sideways (${fit.page} > ${fit.vw})`);

  // The Copy dialog over it (the Move dialog is the same without the title and the choices).
  await page.waitForSelector('#card-dialog:not(.settling)');
  await dialog.getByRole('button', { name: 'Copy…' }).tap();
  await page.locator('#transfer-dialog[open]').waitFor();
  const inCopy = await smallTargets(page, '#transfer-dialog');
  assert.deepEqual(inCopy, [], `controls under 44x44 in the Copy dialog:\n${inCopy.join('\n')}`);
  assert.deepEqual(page.errors, []);
});

test('on a touch phone every control of the welcome page, bin, keys, shortcuts and search results is at least 44x44 px', async (t) => {
  const { page, api, server } = await session(t, { ...PHONE, signIn: false });
  const { rich } = await seed(api);
  await api.post(`/tasks/${rich}/comments`, { text: 'Another' });
  const [binned] = await addCards(api, (await api.get(`/tasks/${rich}`)).task.columnId, ['Bin me']);
  await api.del(`/tasks/${binned}`);
  const small = [];
  const check = async (view, root, selector) => {
    for (const found of await smallTargets(page, root, selector)) small.push(`${view}: ${found}`);
  };

  await page.goto(server.url);
  await page.waitForSelector('#welcome:not([hidden])');
  await check('welcome', '#welcome');
  await page.click('#readme-link');
  await page.waitForSelector('#readme:not([hidden]) #readme-body h1, #readme:not([hidden]) #readme-body h2');
  await check('set-up guide', '#readme header');
  await page.goto(server.url);
  await signIn(page, server);
  await page.locator('.card-title:text-is("Rich card")').waitFor();

  const menu = async (name) => {
    await page.locator('#tools-toggle').tap();
    await page.locator('#tools').getByRole('button', { name, exact: true }).tap();
  };
  await menu('Recycle bin');
  await page.locator('#bin-dialog .bin-list li', { hasText: 'Bin me' }).waitFor();
  await check('bin', '#bin-dialog');
  await page.keyboard.press('Escape');
  await menu('Keys');
  await page.locator('#keys-dialog .keys-list li').first().waitFor();
  await check('keys', '#keys-dialog');
  await page.keyboard.press('Escape');
  await menu('Shortcuts');
  await page.locator('#help-dialog .shortcuts').waitFor();
  await check('shortcuts', '#help-dialog');
  await page.keyboard.press('Escape');

  // Search results: each hit (an option of the list) is a target of its own.
  await page.locator('#search-input').fill('card');
  await page.locator('#search-results .search-hit').nth(1).waitFor();
  await check('search results', '#search-results', `${INTERACTIVE}, [role=option]`);
  await screenshot(page, '42-touch-search-390');
  assert.deepEqual(small, [], `controls under 44x44:\n${small.join('\n')}`);
  assert.deepEqual(page.errors, []);
});
