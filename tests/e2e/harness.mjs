// What every browser test shares: the real server binary on a free loopback port with a
// fresh data folder, Debian's Chromium driven by playwright-core with a fresh profile, an
// API client for the "other device", waiting helpers and screenshots.

import { spawn } from 'node:child_process';
import { mkdtemp, mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BINARY = process.env.WORKBOARD_BIN || path.join(ROOT, 'target/debug/workboard');
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
export const SCREENSHOTS = path.join(ROOT, 'target/e2e-screenshots');

/** Starts `workboard serve` and reads its first key and address from stdout. */
export async function startServer() {
  const dir = await mkdtemp(path.join(tmpdir(), 'workboard-e2e-'));
  const child = spawn(BINARY, ['serve', '--addr', '127.0.0.1:0', '--data', path.join(dir, 'data')], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, RUST_LOG: process.env.RUST_LOG || 'warn' },
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const found = {};
  const lines = createInterface({ input: child.stdout });
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start in 20 s:\n${stderr}`)), 20000);
    child.on('exit', (code) => reject(new Error(`the server exited with ${code}:\n${stderr}`)));
    lines.on('line', (line) => {
      const m = /^(key|listening):\s*(\S+)/.exec(line.trim());
      if (m) found[m[1]] = m[2];
      if (found.key && found.listening) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  const url = `http://${found.listening}`;
  return {
    url,
    key: found.key,
    dir,
    api: apiClient(url, found.key),
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await Promise.race([exited, sleep(5000)]);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
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

/** Chromium with a fresh profile; `page.errors` collects uncaught page errors. */
export async function openBrowser({ width = 1280, height = 800 } = {}) {
  const profile = await mkdtemp(path.join(tmpdir(), 'workboard-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width, height },
    acceptDownloads: true,
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
    ],
  });
  const page = context.pages()[0] || (await context.newPage());
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
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
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

/** A fresh server, a browser signed in to it, and cleanup for `t.after`. */
export async function session(t, options = {}) {
  const server = await startServer();
  const browser = await openBrowser(options);
  t.after(async () => {
    await browser.close();
    await server.stop();
  });
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
