// The page: the key (or a local export file), the header's tools (filter, undo, bin,
// export, usage), routing between boards, and wiring the screens to the store.

import { createClient } from './api.js';
import { createStore } from './store.js';
import { remoteOps } from './remote.js';
import { localOps, parseExport, savedFile, forgetFile } from './local.js';
import { createSync } from './sync.js';
import { createBoard } from './board.js';
import { createSidebar } from './sidebar.js';
import { createCardEditor } from './card.js';
import { createMoves } from './moves.js';
import { createBin } from './bin.js';
import { confirmDialog, showError, toast } from './ui.js';

const KEY = 'workboard.key';
const FILTER = 'workboard.completed';
const $ = (id) => document.getElementById(id);

const store = createStore();
const ctx = {
  store,
  ops: null,
  sync: null,
  render: () => scheduleRender(),
  openCard: (id) => editor.open(id),
};
ctx.moves = createMoves(ctx);
const board = createBoard(ctx);
const sidebar = createSidebar(ctx);
const editor = createCardEditor(ctx);
const bin = createBin(ctx);

let renderQueued = false;
function scheduleRender() {
  if (renderQueued) return;
  renderQueued = true;
  requestAnimationFrame(() => {
    renderQueued = false;
    render();
  });
}

function currentProjectId() {
  const match = /^#\/b\/([^/]+)/.exec(location.hash);
  if (match) return decodeURIComponent(match[1]);
  const first = store.projectList().find((p) => p.archivedAt === null);
  return first ? first.id : null;
}

function render() {
  if ($('app').hidden) return;
  const projectId = currentProjectId();
  sidebar.render($('sidebar'), projectId);
  if (!ctx.moves.dragging) board.render($('board'), projectId);
  const project = projectId && store.projects.get(projectId);
  document.title = project ? `${project.name} · Workboard` : 'Workboard';
}
store.subscribe(scheduleRender);
window.addEventListener('hashchange', () => {
  $('sidebar').classList.remove('open');
  $('menu-toggle').setAttribute('aria-expanded', 'false');
  scheduleRender();
});

// Usage and allowance.

let usageTimer = null;
async function refreshUsage() {
  clearTimeout(usageTimer);
  if (!ctx.ops || ctx.ops.kind !== 'remote') return;
  try {
    const usage = await ctx.ops.usage();
    $('usage').hidden = false;
    $('storage-bar').max = usage.limit;
    $('storage-bar').value = usage.used;
    const mb = (n) => `${(n / 1048576).toFixed(n < 1048576 ? 2 : 1)} MB`;
    $('storage-text').textContent = `${mb(usage.used)} of ${mb(usage.limit)}`;
    showAllowance(usage.reads.limit - usage.reads.used, usage.writes.limit - usage.writes.used);
  } catch {
    // Shown again on the next refresh; a failed read already said why elsewhere.
  }
  usageTimer = setTimeout(refreshUsage, 60000);
}
// Storage and writes move with the account: read them again shortly after changes settle.
let usageSoon = null;
store.subscribe(() => {
  clearTimeout(usageSoon);
  usageSoon = setTimeout(refreshUsage, 5000);
});

let writesLeft = null;
function showAllowance(reads, writes = writesLeft) {
  writesLeft = writes;
  $('allowance-text').textContent = `${reads} requests left today${writes !== null ? ` (${writes} writes)` : ''}`;
}

function liveStatus(text, state) {
  const el = $('live-status');
  el.textContent = text;
  el.dataset.state = state;
}

// Starting and leaving.

function showWelcome(message = '') {
  $('app').hidden = true;
  $('welcome').hidden = false;
  $('key-error').textContent = message;
  $('key-input').focus();
}

function showApp() {
  $('welcome').hidden = true;
  $('app').hidden = false;
  $('key-error').textContent = '';
  $('import-error').textContent = '';
  $('completed-filter').value = store.completed;
  scheduleRender();
}

async function startRemote(key) {
  const client = createClient(key, { onAllowance: (left) => showAllowance(left) });
  const ops = remoteOps(client, store);
  store.keepAll = false;
  store.completed = localStorage.getItem(FILTER) || 'none';
  try {
    await ops.loadAll();
  } catch (err) {
    if (err.status === 401 || err.status === 403) {
      localStorage.removeItem(KEY);
      showWelcome(err.message);
      return false;
    }
    // Unreachable for now: the sync loop retries and catches up from scratch.
    showError(err);
  }
  localStorage.setItem(KEY, key);
  ctx.ops = ops;
  $('mode-badge').hidden = true;
  $('key-button').textContent = 'Forget key';
  $('export-button').textContent = 'Export';
  showApp();
  ctx.sync = createSync(client, store, {
    onStatus: liveStatus,
    onFatal: (err) => {
      localStorage.removeItem(KEY);
      stop();
      showWelcome(err.message);
    },
  });
  ops.afterWrite = () => ctx.sync.pull();
  ctx.sync.start();
  refreshUsage();
  return true;
}

function startLocal(name, doc) {
  ctx.ops = localOps(store, name, doc);
  $('mode-badge').hidden = false;
  $('mode-badge').textContent = `Local file: ${name}`;
  $('usage').hidden = true;
  $('key-button').textContent = 'Close file';
  $('export-button').textContent = 'Save file';
  liveStatus('Not synced: edits stay in this browser', 'local');
  showApp();
}

function stop() {
  if (ctx.sync) ctx.sync.stop();
  if (ctx.ops && ctx.ops.close) ctx.ops.close();
  ctx.sync = null;
  ctx.ops = null;
  clearTimeout(usageTimer);
  $('usage').hidden = true;
  store.clear();
  store.keepAll = false;
  location.hash = '';
}

$('key-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const key = $('key-input').value.trim();
  if (!key.startsWith('wb_')) {
    $('key-error').textContent = 'A Workboard key starts with “wb_”.';
    return;
  }
  $('key-error').textContent = 'Checking the key…';
  if (await startRemote(key)) $('key-input').value = '';
});

$('import-file').addEventListener('change', async (event) => {
  const file = event.target.files[0];
  if (!file) return;
  try {
    const doc = parseExport(await file.text());
    startLocal(file.name, doc);
  } catch (err) {
    $('import-error').textContent = err.message;
  }
  event.target.value = '';
});

$('key-button').addEventListener('click', async () => {
  const local = ctx.ops && ctx.ops.kind === 'local';
  const question = local
    ? 'Close the file? Edits not saved with “Save file” are dropped from this browser.'
    : 'Forget the key in this browser? You will need to paste it again.';
  if (!(await confirmDialog(question, local ? 'Close file' : 'Forget key'))) return;
  if (local) forgetFile();
  else localStorage.removeItem(KEY);
  stop();
  showWelcome();
});

// Header tools.

$('completed-filter').addEventListener('change', async (event) => {
  store.completed = event.target.value;
  localStorage.setItem(FILTER, store.completed);
  if (ctx.ops.kind === 'remote') {
    try {
      await ctx.ops.loadAll();
    } catch (err) {
      showError(err);
    }
  }
  store.changed();
});

async function undo() {
  try {
    toast(await ctx.ops.undo());
  } catch (err) {
    toast(err.status === 409 ? `Cannot undo: ${err.message}` : err.message, { kind: 'error' });
  }
}
$('undo-button').addEventListener('click', undo);

document.addEventListener('keydown', (event) => {
  if (!ctx.ops || $('app').hidden) return;
  const typing = event.target.closest?.('input, textarea, select, [contenteditable]');
  if ((event.ctrlKey || event.metaKey) && !event.shiftKey && event.key.toLowerCase() === 'z' && !typing) {
    event.preventDefault();
    undo();
  }
});

$('bin-button').addEventListener('click', () => bin.show());

$('export-button').addEventListener('click', async () => {
  try {
    const { text, filename } = await ctx.ops.exportFile();
    const url = URL.createObjectURL(new Blob([text], { type: 'application/json' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = filename;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
  } catch (err) {
    showError(err);
  }
});

$('menu-toggle').addEventListener('click', () => {
  const open = $('sidebar').classList.toggle('open');
  $('menu-toggle').setAttribute('aria-expanded', String(open));
});

ctx.moves.wire($('board'));

// Boot: a kept key first, then a kept local file, else the welcome screen.
const key = localStorage.getItem(KEY);
const saved = savedFile();
if (key) startRemote(key);
else if (saved) startLocal(saved.name, saved.doc);
else showWelcome();
