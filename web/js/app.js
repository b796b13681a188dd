// The page: the key (or a local export file), routing between boards and their filters (in
// the address), the header's tools (undo, bin, export, usage, the phone's menu), and wiring
// the screens to the store. Drawing is patched (board.js), so it runs on every change.

import { createClient, readable } from './api.js';
import { createStore } from './store.js';
import { localOps, parseExport, savedFile, forgetFile } from './local.js';
import { startSynced } from './synced.js';
import { installWorker, markPending, onAuth, onConflict, onRefused, onUnreachable, showStatus } from './offline.js';
import { createBoard } from './board.js';
import { createSidebar, wireSidebarCollapse } from './sidebar.js';
import { createCardEditor } from './card.js';
import { createMoves } from './moves.js';
import { createDrag } from './drag.js';
import { createNav } from './nav.js';
import { createUndoLog } from './undo-log.js';
import { createActions } from './actions.js';
import { createBin } from './bin.js';
import { createKeys } from './keys.js';
import { createSearch } from './search.js';
import { calendarRoute, cardFromRoute, createCalendar } from './calendar.js';
import { createFilterBar, finishedShown, parseRoute, routeHref } from './filters.js';
import { msToNextMinute } from './due.js';
import { drafts } from './drafts.js';
import { renderMarkdown } from './markdown.js';
import { announce, clearToast, confirmDialog, disclosure, showError } from './ui.js';
import { adoptServerLimits, resetLimits } from './rules.js';

const KEY = 'workboard.key';
const $ = (id) => document.getElementById(id);

const store = createStore();
let pendingCard = null; // a card to open once its board is drawn (a search hit)

const ctx = {
  store,
  ops: null,
  sync: null,
  render: () => scheduleRender(),
  openCard: (id, how) => editor.open(id, how),
  announce,
  active: () => Boolean(ctx.ops) && !$('app').hidden,
  filters: () => parseRoute().filters,
  /** Whether a board is archived, so shown read-only until restored. */
  readOnly: (projectId) => Boolean(store.projects.get(projectId)?.archivedAt),
  setFilters(filters) {
    const projectId = currentProjectId();
    if (!projectId) return;
    history.replaceState(null, '', routeHref(projectId, filters));
    scheduleRender();
  },
  /** A board's address, keeping the finished-cards window as the person left it. */
  boardHref: (projectId) => routeHref(projectId, parseRoute().filters.done ? { done: parseRoute().filters.done } : {}),
  /** Opens a board and one of its cards (a search hit). */
  openAt(projectId, task) {
    const { filters } = parseRoute();
    const done = finishedShown(task, filters.done) ? filters.done : 'all';
    pendingCard = task.id;
    const href = routeHref(projectId, done ? { done } : {});
    if (location.hash === href) scheduleRender();
    else location.hash = href;
  },
  onUndoLog: () => {
    const last = ctx.undoLog.last;
    $('undo-button').title = last
      ? `Undo (Ctrl+Z): ${last.label}`
      : ctx.undoLog.serverUndoOffered
        ? 'Undo on the server: the latest change made with this key (asks first)'
        : 'Nothing left to undo on this page';
  },
};
ctx.filterBar = createFilterBar({ onChange: (filters) => ctx.setFilters(filters) });
ctx.moves = createMoves(ctx);
ctx.undoLog = createUndoLog(ctx);
ctx.actions = createActions(ctx);
ctx.nav = createNav(ctx);
ctx.board = createBoard(ctx);
const drag = createDrag(ctx);
const sidebar = createSidebar(ctx);
const editor = createCardEditor(ctx);
const bin = createBin(ctx);
const keys = createKeys(ctx);
const search = createSearch(ctx);
const calendar = createCalendar(ctx);

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
  const { projectId } = parseRoute();
  if (projectId) return projectId;
  const first = store.projectList().find((p) => p.archivedAt === null);
  return first ? first.id : null;
}

function render() {
  showReadme();
  if ($('app').hidden) return;
  // A board's address may name a card to open (the calendar feed's links).
  const linked = cardFromRoute();
  if (linked) {
    pendingCard = linked.id;
    history.replaceState(null, '', linked.hash);
  }
  const cal = calendarRoute();
  const projectId = cal ? cal.projectId : currentProjectId();
  sidebar.render($('sidebar'), projectId);
  $('board').hidden = Boolean(cal);
  $('calendar').hidden = !cal;
  $('calendar-link').setAttribute('aria-current', cal ? 'page' : 'false');
  if (cal) calendar.render($('calendar'), cal);
  // A drag in progress keeps the board as it is; the drop draws it again.
  else if (!drag.dragging) ctx.board.render($('board'), projectId, parseRoute().filters);
  const project = !cal && projectId && store.projects.get(projectId);
  if (!cal) document.title = project ? `${project.name} · Workboard` : 'Workboard';
  const now = document.activeElement;
  const lost = !now || now === document.body;
  if (focusBoard) {
    // A board chosen in the list of boards: its heading takes the focus the list lost.
    focusBoard = false;
    if (lost || $('sidebar').contains(now)) $('board-title')?.focus();
  } else if (lost && lastFocused && !lastFocused.isConnected && !document.querySelector('dialog[open]')) {
    // What had the focus was drawn again: a card redrawn when its write's reply or the
    // feed brought it (after a keyboard move, say) keeps the focus in its new drawing.
    // Else it was drawn away (an archived or deleted list, a board's menu): the board's
    // heading takes it, not the page. A click on nothing (focus left on purpose) leaves
    // what had it in the page, and is not followed.
    const id = lastFocused.classList.contains('card') ? lastFocused.dataset.id : null;
    const again = id && $('board').querySelector(`.card[data-id="${CSS.escape(id)}"]`);
    (again || $('board-title'))?.focus();
  }
  if (ctx.ops?.pendingIds) markPending(ctx.ops.pendingIds());
  if (pendingCard && store.tasks.has(pendingCard)) {
    const id = pendingCard;
    pendingCard = null;
    editor.open(id);
  }
}
store.subscribe(scheduleRender);

let shownProject = null;
let lastFocused = null; // the element that last took the focus
document.addEventListener('focusin', (event) => {
  lastFocused = event.target;
});
let focusBoard = false; // the next draw gives the board's heading the focus
window.addEventListener('hashchange', () => {
  const now = document.activeElement;
  focusBoard = !now || now === document.body || $('sidebar').contains(now);
  $('sidebar').classList.remove('open');
  $('menu-toggle').setAttribute('aria-expanded', 'false');
  const projectId = currentProjectId();
  // A message about the board left behind does not follow to the next one.
  if (projectId !== shownProject) clearToast();
  shownProject = projectId;
  scheduleRender();
});

// Due labels move at midnight and as due times pass: draw again each minute.
(function everyMinute() {
  setTimeout(() => {
    scheduleRender();
    everyMinute();
  }, msToNextMinute());
})();

// The set-up guide: the README, shown from the welcome page.
let readmeLoaded = false;
let welcoming = false; // the welcome page is the screen (no key, no file open)
async function showReadme() {
  // Only on the welcome page, whose place it takes while it is open.
  const wanted = welcoming && location.hash === '#/readme';
  if (welcoming) $('welcome').hidden = wanted;
  const opening = wanted && $('readme').hidden;
  $('readme').hidden = !wanted;
  if (opening) $('readme-title').focus();
  if (!wanted || readmeLoaded) return;
  readmeLoaded = true;
  try {
    const res = await fetch('/assets/docs/README.md', { cache: 'no-cache' });
    if (!res.ok) throw new Error(`The guide could not be loaded (${res.status}).`);
    $('readme-body').innerHTML = renderMarkdown(await res.text());
  } catch (err) {
    readmeLoaded = false;
    $('readme-body').textContent = err.message;
  }
}

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
  const text = `${reads} requests left today${writes !== null ? ` (${writes} writes)` : ''}`;
  $('allowance-text').textContent = text;
  $('tools-usage').textContent = `Storage ${$('storage-text').textContent} · ${text}`;
}

function liveStatus(text, state) {
  const el = $('live-status');
  el.textContent = text;
  el.dataset.state = state;
}

// Starting and leaving.

function showWelcome(message = '') {
  welcoming = true;
  $('app').hidden = true;
  $('welcome').hidden = false;
  $('key-error').textContent = message;
  showReadme();
  if (location.hash !== '#/readme') $('key-input').focus();
}

function showApp() {
  welcoming = false;
  $('welcome').hidden = true;
  $('readme').hidden = true;
  $('app').hidden = false;
  $('key-error').textContent = '';
  $('import-error').textContent = '';
  if (location.hash === '#/readme') location.hash = '';
  shownProject = currentProjectId();
  scheduleRender();
}

async function startRemote(key) {
  const client = createClient(key, { onAllowance: (left) => showAllowance(left) });
  // Writes go through the sync core's outbox (kept in IndexedDB) and the page shows the
  // core's view; a server out of reach is not an error (the kept account shows, edits wait).
  let ops = null;
  // The choice is made after the core has started (the person answers a dialog).
  const conflicts = onConflict(() => ops.core);
  try {
    ops = await startSynced(key, store, client, {
      onStatus: (status) => {
        showStatus(status);
        if (ctx.ops?.pendingIds) markPending(ctx.ops.pendingIds());
      },
      onConflict: conflicts,
      onRefused,
      onUnreachable,
      onAuth: (refusal) => {
        // Nothing waiting to be sent: back to the welcome page, as for any refused key.
        if (!refusal.pending) {
          localStorage.removeItem(KEY);
          stop();
          showWelcome(readable(401, null));
          return;
        }
        onAuth(refusal);
      },
    });
  } catch (err) {
    if (err.status === 401 || err.status === 403) {
      localStorage.removeItem(KEY);
      showWelcome(readable(err.status, err.body));
      return false;
    }
    showError(err);
    return false;
  }
  localStorage.setItem(KEY, key);
  ctx.ops = ctx.undoLog.watch(ops);
  $('mode-badge').hidden = true;
  $('key-button').textContent = 'Forget key';
  $('keys-button').hidden = false;
  $('export-button').textContent = 'Export';
  showApp();
  ctx.sync = { pull: () => ops.pull(), stop: () => {} };
  showStatus(ops.status);
  refreshUsage();
  discover(client, ctx.ops);
  return true;
}

/**
 * Reads the server's discovery document (`GET /api/v1`) once per sign-in: the limits it
 * states become the page's (rules.js), and it says whether search is offered. Unread
 * (offline, an error), the interface's defaults stand and there is no search box.
 */
async function discover(client, ops) {
  let doc = null;
  try {
    doc = await client.get('');
  } catch (err) {
    if (err.status === 401) showError(err);
  }
  if (ctx.ops !== ops) return; // signed out, or another key, meanwhile
  if (doc) adoptServerLimits(doc);
  search.enable(client, doc);
}

function startLocal(name, doc) {
  ctx.ops = ctx.undoLog.watch(localOps(store, name, doc));
  $('mode-badge').hidden = false;
  $('mode-badge').textContent = `Local file: ${name}`;
  $('usage').hidden = true;
  $('tools-usage').textContent = '';
  $('key-button').textContent = 'Close file';
  // A file has no keys.
  $('keys-button').hidden = true;
  $('export-button').textContent = 'Save file';
  liveStatus('Not synced: edits stay in this browser', 'local');
  showApp();
}

function stop() {
  if (ctx.sync) ctx.sync.stop();
  if (ctx.ops && ctx.ops.close) ctx.ops.close();
  ctx.sync = null;
  ctx.ops = null;
  ctx.undoLog.reset();
  clearTimeout(usageTimer);
  $('usage').hidden = true;
  search.disable();
  resetLimits();
  clearToast();
  drafts.clear();
  store.clear();
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
    : ctx.ops?.pending
      ? `Forget the key in this browser? ${ctx.ops.pending} edit${ctx.ops.pending === 1 ? ' is' : 's are'} not sent yet and will be lost. You will need to paste the key again.`
      : 'Forget the key in this browser? You will need to paste it again.';
  if (!(await confirmDialog(question, local ? 'Close file' : 'Forget key'))) return;
  if (local) forgetFile();
  else localStorage.removeItem(KEY);
  // The key forgotten: its kept account and unsent edits leave this browser too.
  if (!local) await ctx.ops?.forget?.();
  stop();
  showWelcome();
});

// Header tools.

$('undo-button').addEventListener('click', () => ctx.undoLog.serverUndo());
$('help-button').addEventListener('click', () => ctx.nav.showHelp());

document.addEventListener('keydown', (event) => {
  if (!ctx.active()) return;
  const typing = event.target.closest?.('input[type="text"], input[type="search"], input:not([type]), textarea, [contenteditable]');
  // Ctrl+Z reverses this page's own latest action, never an older session's.
  if ((event.ctrlKey || event.metaKey) && !event.shiftKey && event.key.toLowerCase() === 'z' && !typing) {
    event.preventDefault();
    ctx.undoLog.undoLast();
  }
});

$('bin-button').addEventListener('click', () => bin.show());
$('keys-button').addEventListener('click', () => keys.show());

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
disclosure($('tools-toggle'), $('tools'));
wireSidebarCollapse($('sidebar-collapse'), $('sidebar'));

drag.wire($('board'));
ctx.nav.wire($('board'));

// Boot: a kept key first, then a kept local file, else the welcome screen.
const key = localStorage.getItem(KEY);
const saved = savedFile();
if (key) startRemote(key);
else if (saved) startLocal(saved.name, saved.doc);
else showWelcome();
// The worker's first download of the page's files waits until the page has settled, so it
// never competes with the first draw and the first clicks.
setTimeout(() => (window.requestIdleCallback || setTimeout)(() => installWorker()), 5000);
window.addEventListener('hashchange', () => {
  if (!$('welcome').hidden) showWelcome($('key-error').textContent);
});
