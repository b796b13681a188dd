// The real server for the sync core's tests: `workboard serve` on a data folder of its own,
// which can be stopped (politely or with kill -9) and started again on the same folder and
// the same port, so that a client keeps its address across the outage.

import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BINARY = process.env.WORKBOARD_BIN || path.join(ROOT, 'target/debug/workboard');

const children = new Set();
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

/** Starts `serve` and resolves with what it printed (`key`, on a fresh folder, and `listening`). */
function launch(dir, addr) {
  const child = spawn(BINARY, ['serve', '--addr', addr, '--data', path.join(dir, 'data')], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, RUST_LOG: process.env.RUST_LOG || 'warn' },
  });
  children.add(child);
  child.on('exit', () => children.delete(child));
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const found = {};
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start in 20 s:\n${stderr}`)), 20000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the server exited with ${code}:\n${stderr}`));
    });
    createInterface({ input: child.stdout }).on('line', (line) => {
      const m = /^(key|listening):\s*(\S+)/.exec(line.trim());
      if (m) found[m[1]] = m[2];
      if (found.listening) {
        clearTimeout(timer);
        resolve({ child, ...found });
      }
    });
  });
}

/** A server on a fresh folder; `stop`, `kill` and `restart` keep the folder and the port. */
export async function startServer(t) {
  const dir = await mkdtemp(path.join(tmpdir(), 'workboard-sync-'));
  let { child, key, listening } = await launch(dir, '127.0.0.1:0');
  const url = `http://${listening}`;
  const exited = (c) => (c.exitCode !== null || c.signalCode !== null ? Promise.resolve() : new Promise((r) => c.once('exit', r)));
  const server = {
    url,
    key,
    dir,
    /** SIGTERM: in-flight writes finish, then the process exits. */
    async stop() {
      const gone = exited(child);
      child.kill('SIGTERM');
      await gone;
    },
    /** kill -9: whatever was in flight is cut. */
    async kill() {
      const gone = exited(child);
      child.kill('SIGKILL');
      await gone;
    },
    async restart() {
      ({ child } = await launch(dir, listening));
    },
    async close() {
      await server.kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
  t?.after(() => server.close());
  return server;
}
