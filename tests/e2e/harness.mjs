// What every browser test shares: the real server binary on a free loopback port with a
// fresh data folder, Debian's Chromium driven by playwright-core with a fresh profile, an
// API client for the "other device", waiting helpers and screenshots.

import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BINARY = process.env.WORKBOARD_BIN || path.join(ROOT, 'target/debug/workboard');
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
// Screenshots are test output, kept out of the repository (tests/e2e/.gitignore).
export const SCREENSHOTS = path.join(ROOT, 'tests/e2e/output');

// Every server and browser this test file starts, so that none outlives it: each test
// stops its own in `t.after` (which runs when it fails or times out too), and a file that
// is stopped from outside (the runner's --test-timeout sends SIGTERM) stops them here.
const running = new Set();
function track(stop) {
  running.add(stop);
  return () => running.delete(stop);
}
process.on('exit', () => {
  for (const stop of running) stop.now();
});
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
  process.once(signal, () => {
    for (const stop of running) stop.now();
    process.exit(signal === 'SIGINT' ? 130 : 143);
  });
}

/** Kills a process and its group (a browser's helpers too), without waiting. */
function killNow(pid) {
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, 'SIGKILL');
    } catch {
      // Already gone, or not a group leader.
    }
  }
}

/** Starts `workboard serve` (with `args` added) and reads its first key and address from
 * stdout. */
export async function startServer(args = []) {
  const dir = await mkdtemp(path.join(tmpdir(), 'workboard-e2e-'));
  const child = spawn(BINARY, ['serve', '--addr', '127.0.0.1:0', '--data', path.join(dir, 'data'), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, RUST_LOG: process.env.RUST_LOG || 'warn' },
  });
  const kill = Object.assign(() => {}, { now: () => killNow(child.pid) });
  const untrack = track(kill);
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const found = {};
  const lines = createInterface({ input: child.stdout });
  try {
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the server did not start in 20 s:\n${stderr}`)), 20000);
      child.on('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the server exited with ${code}:\n${stderr}`));
      });
      lines.on('line', (line) => {
        const m = /^(key|listening):\s*(\S+)/.exec(line.trim());
        if (m) found[m[1]] = m[2];
        if (found.key && found.listening) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
  } catch (err) {
    killNow(child.pid);
    untrack();
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  const url = `http://${found.listening}`;
  return {
    url,
    key: found.key,
    dir,
    pid: child.pid,
    api: apiClient(url, found.key),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await Promise.race([exited, quietly(5000)]);
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      }
      untrack();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Another device: plain fetch with a key. Throws on a status outside 2xx. */
export function apiClient(url, key) {
  async function call(method, route, body) {
    const res = await fetch(`${url}/api/v1${route}`, {
      method,
      headers: { Authorization: `Bearer ${key}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    const data = text ? JSON.parse(text) : null;
    if (!res.ok) throw new Error(`${method} ${route} answered ${res.status}: ${text}`);
    return data;
  }
  return {
    key,
    get: (route) => call('GET', route),
    post: (route, body = {}) => call('POST', route, body),
    patch: (route, body) => call('PATCH', route, body),
    del: (route) => call('DELETE', route),
  };
}

const LAUNCH_TIMEOUT_MS = Number(process.env.WORKBOARD_E2E_LAUNCH_TIMEOUT_MS || 30000);

/**
 * Chromium with a fresh profile; `page.errors` collects uncaught page errors. A browser
 * that exits at start fails at once, and one that hangs fails after `launchTimeout` ms;
 * either way the error carries the browser's own log.
 */
export async function openBrowser({ width = 1280, height = 800, timezoneId, hasTouch = false, isMobile = false,
  launchTimeout = LAUNCH_TIMEOUT_MS, executablePath = CHROMIUM } = {}) {
  let browser;
  try {
    browser = await chromium.launch({
      executablePath,
      headless: true,
      timeout: launchTimeout,
      // The harness stops the browser itself (and on SIGTERM, see above).
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
      args: [
        '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync',
        // A page served by the test (below) has no address of its own, so Chromium would
        // refuse its socket to the loopback server.
        ...(process.env.WORKBOARD_E2E_WEB_REV ? ['--disable-features=LocalNetworkAccessChecks'] : []),
      ],
    });
  } catch (err) {
    // Playwright's message carries the browser's own output ("[pid=N][err] ...").
    const message = err.message.replace(/\u001b\[[0-9;]*m/g, '');
    // Playwright gives up on a browser that hangs at start but leaves it running.
    const launched = /<launched> pid=(\d+)/.exec(message);
    if (launched) killNow(Number(launched[1]));
    throw new Error(`Chromium did not start (${executablePath}) within ${launchTimeout} ms or exited:\n${message}`);
  }
  // The browser's process id, so that a browser that stops answering can be killed.
  const cdp = await browser.newBrowserCDPSession();
  const { processInfo } = await cdp.send('SystemInfo.getProcessInfo');
  await cdp.detach();
  const pid = processInfo.find((p) => p.type === 'browser')?.id || null;
  const kill = Object.assign(() => {}, { now: () => pid && killNow(pid) });
  const untrack = track(kill);
  // launch() gives the browser a fresh profile folder of its own, removed on close.
  const context = await browser.newContext({
    viewport: { width, height }, acceptDownloads: true, hasTouch, isMobile, ...(timezoneId ? { timezoneId } : {}),
  });
  if (process.env.WORKBOARD_E2E_WEB_REV) await serveWebOf(context, process.env.WORKBOARD_E2E_WEB_REV);
  const page = await context.newPage();
  page.errors = [];
  page.on('pageerror', (err) => page.errors.push(err));
  page.on('console', (msg) => {
    // A refused request (a 409 the page handles, say) is logged by Chromium itself.
    if (msg.type() === 'error' && !msg.text().startsWith('Failed to load resource')) {
      page.errors.push(new Error(`console: ${msg.text()}`));
    }
  });
  return {
    context,
    page,
    pid,
    async close() {
      // A browser that no longer answers is killed instead of waited for.
      await Promise.race([browser.close(), quietly(10000)]).catch(() => {});
      if (pid) killNow(pid);
      untrack();
    },
  };
}

/**
 * WORKBOARD_E2E_WEB_REV=<commit>: the page's own files (`/` and `/assets/...`) come from
 * `web/` at that commit instead of the binary, so that a test can be seen to fail on an
 * older client (`WORKBOARD_E2E_WEB_REV=HEAD~3 node --test tests/e2e/x.test.mjs`).
 * `WORKBOARD_E2E_WEB_REV=worktree` serves the files as they are in the working tree, so that
 * a change to `web/` can be tried without rebuilding the binary that embeds it.
 */
async function serveWebOf(context, rev) {
  const types = { js: 'text/javascript', mjs: 'text/javascript', css: 'text/css', html: 'text/html', svg: 'image/svg+xml', md: 'text/markdown', json: 'application/json' };
  await context.route(/^http:\/\/127\.0\.0\.1:\d+\/(assets\/.*)?([?#].*)?$/, async (route) => {
    const { pathname } = new URL(route.request().url());
    const file = pathname === '/' ? 'index.html' : decodeURIComponent(pathname.slice('/assets/'.length));
    let body;
    try {
      body = rev === 'worktree'
        ? readFileSync(path.join(ROOT, 'web', file))
        : execFileSync('git', ['show', `${rev}:web/${file}`], { cwd: ROOT, maxBuffer: 64 << 20 });
    } catch {
      await route.fulfill({ status: 404, body: 'not in that commit' });
      return;
    }
    await route.fulfill({ status: 200, body, contentType: types[file.split('.').pop()] || 'application/octet-stream' });
  });
}

/** Opens the page and signs in with a key; resolves once the app shows. */
export async function signIn(page, server) {
  await page.goto(server.url);
  await page.fill('#key-input', server.key);
  await page.click('#key-form button[type=submit]');
  await page.waitForSelector('#app:not([hidden])');
  await page.waitForSelector('#live-status[data-state="live"]');
}

export async function screenshot(page, name) {
  await mkdir(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: false });
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A bound on a wait that does not itself keep the test file running. */
const quietly = (ms) => new Promise((resolve) => setTimeout(resolve, ms).unref());

/** Polls `check` until it returns a truthy value or `timeout` ms pass. */
export async function eventually(check, { timeout = 10000, interval = 100, message = 'condition' } = {}) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      last = await check();
      if (last) return last;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${message}; last: ${last}`);
    await sleep(interval);
  }
}

/** A fresh server, a browser signed in to it; both stop when the test ends, however it ends. */
export async function session(t, options = {}) {
  const server = await startServer();
  t.after(() => server.stop());
  const browser = await openBrowser(options);
  t.after(() => browser.close());
  if (options.signIn !== false) await signIn(browser.page, server);
  return { server, browser, page: browser.page, api: server.api };
}

/** Creates a board with lists and cards through the API; returns its ids. */
export async function seedBoard(api, { name = 'Seeded', columns = ['To do', 'Done'], cards = [] } = {}) {
  const { project } = await api.post('/projects', { name, columns });
  const columnIds = project.columns.map((c) => c.id);
  const taskIds = [];
  for (const title of [...cards].reverse()) {
    const reply = await api.post('/tasks', { columnId: columnIds[0], title });
    taskIds.unshift(reply.id);
  }
  return { projectId: project.id, columnIds, taskIds };
}

/** Adds cards to a list in one batch, in the order given (positions 1, 2, …); returns ids. */
export async function addCards(api, columnId, cards) {
  const tasks = cards.map((card, i) => ({ columnId, position: i + 1, ...(typeof card === 'string' ? { title: card } : card) }));
  return (await api.post('/tasks', { tasks })).ids;
}

/** A day `offset` days from today in `timeZone`, as `YYYY-MM-DD`. */
export function dayIn(timeZone, offset = 0) {
  const parts = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' })
    .formatToParts(new Date());
  const get = (type) => Number(parts.find((p) => p.type === type).value);
  const day = new Date(Date.UTC(get('year'), get('month') - 1, get('day') + offset));
  return day.toISOString().slice(0, 10);
}

/** Presses on an element and drags it with the mouse to (x, y) in small steps. */
export async function mouseDrag(page, from, to) {
  const box = await from.boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width / 2 + 10, box.y + box.height / 2 + 10, { steps: 2 });
  await page.mouse.move(to.x, to.y, { steps: 8 });
  await page.mouse.up();
}

/** The centre of a locator's box, optionally moved by (dx, dy). */
export async function centre(locator, dx = 0, dy = 0) {
  const box = await locator.boundingBox();
  return { x: box.x + box.width / 2 + dx, y: box.y + box.height / 2 + dy };
}
