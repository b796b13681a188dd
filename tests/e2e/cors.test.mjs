// A browser app served from another origin calls the interface from Chromium: a listed
// origin reads, writes (after a preflight) and sees the exposed headers; an origin that is
// not listed is refused by the browser, having received no CORS headers.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { openBrowser, startServer } from './harness.mjs';

/** A page server on a free loopback port: serves one empty page. */
async function pageServer(t) {
  const server = createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end('<!doctype html><title>app</title><p>another origin</p>');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  return `http://127.0.0.1:${server.address().port}`;
}

/** Runs in the page: a GET and a POST to the interface with the key in a header. */
async function callFrom(page, api, key) {
  return page.evaluate(async ({ api, key }) => {
    try {
      const got = await fetch(`${api}/api/v1/projects`, { headers: { Authorization: `Bearer ${key}` } });
      const posted = await fetch(`${api}/api/v1/projects`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: 'From the app' }),
      });
      return {
        get: got.status,
        etag: got.headers.get('etag'),
        remaining: got.headers.get('ratelimit-remaining'),
        post: posted.status,
        name: (await posted.json()).project.name,
      };
    } catch (err) {
      return { error: String(err) };
    }
  }, { api, key });
}

test('a listed origin calls the interface from Chromium; another origin cannot', async (t) => {
  const app = await pageServer(t);
  const stranger = await pageServer(t);
  const server = await startServer(['--cors-origin', app]);
  t.after(() => server.stop());
  const browser = await openBrowser();
  t.after(() => browser.close());
  const page = browser.page;

  await page.goto(app);
  const listed = await callFrom(page, server.url, server.key);
  assert.equal(listed.error, undefined, listed.error);
  assert.equal(listed.get, 200);
  assert.match(listed.etag, /^W\//);
  assert.ok(Number(listed.remaining) > 0);
  assert.equal(listed.post, 201);
  assert.equal(listed.name, 'From the app');

  await page.goto(stranger);
  const refused = await callFrom(page, server.url, server.key);
  assert.match(refused.error || '', /Failed to fetch|TypeError/);
  // Only the listed origin's project was made.
  const { projects } = await server.api.get('/projects');
  assert.equal(projects.filter((p) => p.name === 'From the app').length, 1);
});
