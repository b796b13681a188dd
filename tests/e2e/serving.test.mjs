// The page and its files as served: types, cache headers, the CSP, no key needed, and the
// JSON 404 kept for every other path.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from './harness.mjs';

// The policy's directives the page relies on; others (frame-ancestors, say) may join them.
const assertPolicy = (header, what) => {
  const directives = new Set((header || '').split(';').map((d) => d.trim()));
  for (const needed of ["default-src 'self'", "img-src 'self' data:"]) assert.ok(directives.has(needed), `${what}: ${needed} in ${header}`);
  assert.doesNotMatch(header, /unsafe-inline|unsafe-eval/, what);
};

test('the page and its assets are served with types, no-cache and the CSP', async (t) => {
  const server = await startServer();
  t.after(() => server.stop());

  const page = await fetch(`${server.url}/`);
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-type'), /^text\/html/);
  assert.equal(page.headers.get('cache-control'), 'no-cache');
  assertPolicy(page.headers.get('content-security-policy'), 'the page');
  const html = await page.text();
  assert.match(html, /<script type="module" src="\/assets\/js\/app.js"><\/script>/);
  assert.doesNotMatch(html, /<script>|\sstyle=|\son[a-z]+=/, 'no inline script, style or handler');

  for (const [asset, type] of [
    ['js/app.js', /^text\/javascript/],
    ['app.css', /^text\/css/],
    ['vendor/marked.esm.js', /^text\/javascript/],
    ['vendor/purify.es.mjs', /^text\/javascript/],
    ['icon.svg', /^image\/svg\+xml/],
  ]) {
    const res = await fetch(`${server.url}/assets/${asset}`);
    assert.equal(res.status, 200, asset);
    assert.match(res.headers.get('content-type'), type, asset);
    assertPolicy(res.headers.get('content-security-policy'), asset);
    const etag = res.headers.get('etag');
    assert.ok(etag, `${asset} carries an ETag`);
    const again = await fetch(`${server.url}/assets/${asset}`, { headers: { 'If-None-Match': etag } });
    assert.equal(again.status, 304, `${asset} revalidates`);
  }

  for (const missing of ['/assets/nope.js', '/nope', '/favicon.ico', '/assets/../Cargo.toml']) {
    const res = await fetch(`${server.url}${missing}`);
    assert.equal(res.status, 404, missing);
    assert.deepEqual(await res.json(), { ok: false, error: 'not found', code: 'not_found' }, missing);
  }
  // The interface still answers as before around the page.
  assert.equal((await fetch(`${server.url}/api/v1/projects`)).status, 403);
});
