// The harness itself: a browser that cannot start fails its test at once with the browser's
// own log (instead of hanging the file until the runner's timeout), and a test file that is
// stopped by its timeout leaves none of its servers or browsers running.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventually, openBrowser } from './harness.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));

const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** A stand-in for Chromium: a shell script that says something on stderr, then `then`. */
async function fakeBrowser(t, then) {
  const dir = await mkdtemp(path.join(tmpdir(), 'workboard-fake-chromium-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'chromium');
  await writeFile(file, `#!/bin/sh\necho $$ > "${dir}/pid"\necho "fake chromium: cannot open the display" >&2\n${then}\n`);
  await chmod(file, 0o755);
  return { file, pid: async () => Number(await readFile(path.join(dir, 'pid'), 'utf8')) };
}

test('a browser that exits at start fails the test at once, with its log', async (t) => {
  const fake = await fakeBrowser(t, 'exit 3');
  const started = Date.now();
  await assert.rejects(openBrowser({ executablePath: fake.file }), (err) => {
    assert.match(err.message, /Chromium did not start/);
    assert.match(err.message, /fake chromium: cannot open the display/);
    return true;
  });
  assert.ok(Date.now() - started < 10000, `failed after ${Date.now() - started} ms`);
});

test('a browser that hangs at start fails after the launch timeout, with its log, and is killed', async (t) => {
  const fake = await fakeBrowser(t, 'exec sleep 300');
  const started = Date.now();
  await assert.rejects(openBrowser({ executablePath: fake.file, launchTimeout: 2000 }), (err) => {
    assert.match(err.message, /fake chromium: cannot open the display/);
    return true;
  });
  assert.ok(Date.now() - started < 10000, `failed after ${Date.now() - started} ms`);
  const pid = await fake.pid();
  await eventually(() => !alive(pid), { timeout: 5000, message: `the hung browser (pid ${pid}) to be gone` });
});

test('a test file stopped by its timeout leaves no server or browser running', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'workboard-stuck-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const pidFile = path.join(dir, 'pids');
  // A runner of its own, as CI starts one (not a child of this one's test context).
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  const runner = spawn(process.execPath, ['--test', '--test-timeout=8000', path.join(HERE, 'fixtures/stuck-session.mjs')], {
    env: { ...env, PID_FILE: pidFile },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  runner.stdout.on('data', (chunk) => { output += chunk; });
  runner.stderr.on('data', (chunk) => { output += chunk; });
  const code = await new Promise((resolve) => runner.on('exit', resolve));
  assert.notEqual(code, 0, 'the stuck file fails');
  assert.match(output, /timed out/);
  const [serverPid, browserPid] = (await readFile(pidFile, 'utf8')).trim().split(' ').map(Number);
  assert.ok(serverPid > 0 && browserPid > 0, 'the fixture started both');
  await eventually(() => !alive(serverPid) && !alive(browserPid),
    { timeout: 5000, message: `the server (${serverPid}) and browser (${browserPid}) to be gone` });
});
