// Keyless mode: an export file opened in the browser, browsed and edited here with the same
// operations as synced.js (the account on the server), applied to the store alone. Nothing
// is sent to the server; the file stays in this browser's storage until closed, and Export
// saves the edited copy. What the server does besides a write's own fields is done here too:
// completing a repeating card makes its next occurrence (recur.js ports the server's rule).

import { ApiError, newId } from './api.js';
import { DEFAULT_PRIORITY, checkRoom, clip, limit } from './rules.js';
import { checkRepeat, nextOccurrence } from './recur.js';
import { sameRepeat } from './repeat.js';

const SAVED = 'workboard.localFile';

/** Parses an export file; throws a readable Error if it is not one. */
export function parseExport(text) {
  let doc;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new Error('This file is not JSON, so it is not a Workboard export.');
  }
  const ok = doc && Array.isArray(doc.projects) &&
    doc.projects.every((p) => p && typeof p.id === 'string' && typeof p.name === 'string' &&
      Array.isArray(p.columns) && p.columns.every((c) => c && typeof c.id === 'string' && Array.isArray(c.tasks)));
  if (!ok) throw new Error('This file is not a Workboard export (it has no projects with columns).');
  return doc;
}

export function savedFile() {
  try {
    const saved = JSON.parse(localStorage.getItem(SAVED) || 'null');
    return saved && saved.doc ? saved : null;
  } catch {
    return null;
  }
}

export function forgetFile() {
  localStorage.removeItem(SAVED);
}

const value = (v) => (v && typeof v === 'object' && !Array.isArray(v) && 'after' in v ? v.after : v);
const unwrap = (fields) => Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, value(v)]));

export function localOps(store, name, doc) {
  store.loadDocument(doc);
  let lastStamp = 0;
  let rev = Math.max(0, ...[...store.tasks.values()].map((t) => t.rev || 0));
  const undoStack = [];
  const bin = [];

  const stamp = () => (lastStamp = Math.max(Date.now(), lastStamp + 1));
  const top = (items) => (items.length ? Math.min(...items.map((i) => i.position)) - 1 : 0);

  function persist() {
    try {
      localStorage.setItem(SAVED, JSON.stringify({ name, doc: store.toDocument() }));
    } catch {
      // Over the browser's quota: the file stays open in this tab; Export still saves it.
    }
  }
  let timer = null;
  const unsubscribe = store.subscribe(() => {
    clearTimeout(timer);
    timer = setTimeout(persist, 300);
  });
  // Leaving the page writes what the debounce has not yet saved.
  const flush = () => {
    if (timer) {
      clearTimeout(timer);
      timer = null;
      persist();
    }
  };
  window.addEventListener('pagehide', flush);
  persist();

  /** Every write is one undo step: a copy of the whole file before it. */
  function step() {
    undoStack.push({ doc: store.toDocument(), bin: bin.length });
    if (undoStack.length > limit('undo-steps')) undoStack.shift();
  }

  function putTask(t, fields) {
    const next = { ...t, ...fields, rev: ++rev, updatedAt: stamp() };
    store.putTask(next);
    const project = store.projects.get(next.projectId);
    if (project) store.putProject({ ...project, updatedAt: next.updatedAt });
    return { ok: true, task: next };
  }

  function held(map, id) {
    const record = map.get(id);
    if (!record) throw new ApiError(404, null, 'That item no longer exists.');
    return record;
  }

  function toBin(kind, label, doc) {
    bin.unshift({ id: newId('d_'), kind, label, deletedAt: Date.now(), doc });
    if (bin.length > limit('recoverable-deletions')) bin.pop();
  }

  const editTask = (t, fn) => {
    step();
    return putTask(held(store.tasks, t.id), fn(held(store.tasks, t.id)));
  };

  return {
    kind: 'local',
    name,
    set afterWrite(_fn) {},
    async loadAll() {},

    async createProject({ name: projectName, columns = [], ...rest }) {
      step();
      const now = stamp();
      const project = {
        id: newId('b_'), name: clip(projectName, 'name-chars'), folder: null, position: top(store.projectList()),
        archivedAt: null, pinnedAt: null, photo: null, updatedAt: now, ...unwrap(rest),
      };
      store.putProject({
        ...project,
        columns: columns.map((c, i) => ({
          id: newId('c_'), projectId: project.id, name: String(c), description: null, position: i,
          archivedAt: null, updatedAt: now,
        })),
      });
      return project;
    },
    async updateProject(id, fields) {
      step();
      const next = { ...held(store.projects, id), ...unwrap(fields), updatedAt: stamp() };
      if (next.folder === '') next.folder = null;
      store.putProject(next);
    },
    async deleteProject(id) {
      step();
      const doc = store.toDocument().projects.find((p) => p.id === id);
      toBin('project', held(store.projects, id).name, { projects: [doc] });
      store.dropProject(id);
    },

    async createColumn({ projectId, name: columnName, ...rest }) {
      step();
      const column = {
        id: newId('c_'), projectId, name: clip(columnName, 'name-chars'), description: null,
        position: top(store.columnsOf(projectId)), archivedAt: null, updatedAt: stamp(), ...unwrap(rest),
      };
      store.putColumn(column);
      return column;
    },
    async updateColumn(id, fields) {
      step();
      store.putColumn({ ...held(store.columns, id), ...unwrap(fields), updatedAt: stamp() });
    },
    async deleteColumn(id) {
      step();
      const column = held(store.columns, id);
      const tasks = [...store.tasks.values()].filter((t) => t.columnId === id);
      toBin('column', column.name, { columns: [{ ...column, tasks }] });
      store.dropColumn(id);
    },

    async createTask({ columnId, ...fields }) {
      const column = held(store.columns, columnId);
      checkRepeat({ deadline: null, ...unwrap(fields) }, false);
      step();
      const task = {
        id: newId('t_'), projectId: column.projectId, columnId, title: '', description: '', priority: DEFAULT_PRIORITY,
        effort: null, deadline: null, deadlineTime: null, location: '', parentId: null,
        position: top([...store.tasks.values()].filter((t) => t.columnId === columnId)),
        completedAt: null, cancelledAt: null, order: 0, tags: [], tagIds: [], checklist: [], comments: [],
        ...unwrap(fields),
      };
      return putTask(task, {}).task;
    },
    /** Also answers `next`, the occurrence a repeating card's completion made, as the
     * server's reply does (the page's undo of the completion deletes it). */
    async updateTask(id, fields) {
      const task = held(store.tasks, id);
      const next = unwrap(fields);
      if (next.columnId) next.projectId = held(store.columns, next.columnId).projectId;
      // A rule is checked where a write sets it or the deadline (a card of a file made by
      // hand may lack the deadline its rule counts from: its completion still recurs).
      if ('repeat' in next || 'deadline' in next) {
        checkRepeat({ ...task, ...next }, !('repeat' in next) && 'deadline' in next && !next.deadline);
      }
      // A deadline or rule set by hand is the rhythm's new anchor.
      const { repeatAnchor, ...unanchored } = task;
      const rhythmSet = ('deadline' in next && next.deadline !== task.deadline)
        || ('repeat' in next && !sameRepeat(next.repeat, task.repeat));
      const current = repeatAnchor !== undefined && rhythmSet ? unanchored : task;
      const finishing = Boolean(next.completedAt) && task.completedAt === null;
      // Made before anything is written: a refusal (past the year 9999) writes nothing.
      const made = finishing ? nextOccurrence({ ...current, ...next }, store.tasks) : null;
      step();
      if (finishing) {
        for (const sub of store.subtasksOf(id)) if (sub.completedAt === null) putTask(sub, { completedAt: next.completedAt });
      }
      const reply = putTask(current, next);
      if (!made) return reply;
      const [occurrence] = made.map((card) => putTask(card, {}).task);
      return { ...reply, next: occurrence };
    },
    async deleteTask(id) {
      step();
      const task = held(store.tasks, id);
      toBin('task', task.title, { tasks: [task, ...store.subtasksOf(id)] });
      store.dropTask(id);
    },

    async addTag(t, text) {
      if (t.tags.some((x) => x.toLowerCase() === text.toLowerCase())) return { ok: true };
      checkRoom(t, 'tags');
      return editTask(t, (c) => ({ tags: [...c.tags, clip(text, 'tag-chars')], tagIds: [...c.tagIds, newId('g_')] }));
    },
    removeTag: async (t, index) => editTask(t, (c) => ({
      tags: c.tags.filter((_, i) => i !== index), tagIds: c.tagIds.filter((_, i) => i !== index),
    })),
    async addComment(t, text) {
      checkRoom(t, 'comments');
      return editTask(t, (c) => ({ comments: [...c.comments, { id: newId('m_'), text, createdAt: Date.now() }] }));
    },
    deleteComment: async (t, commentId) => editTask(t, (c) => ({ comments: c.comments.filter((m) => m.id !== commentId) })),
    async addChecklist(t, text, { done = false, position } = {}) {
      checkRoom(t, 'checklist');
      return editTask(t, (c) => {
        const items = [...c.checklist].sort((x, y) => x.position - y.position);
        const at = position === undefined ? items.length : Math.min(position, items.length);
        items.splice(at, 0, { id: newId('k_'), text: clip(text, 'checklist-item-chars'), done: Boolean(done), position: at });
        return { checklist: items.map((k, i) => ({ ...k, position: i })) };
      });
    },
    updateChecklist: async (t, itemId, fields) => editTask(t, (c) => ({
      checklist: c.checklist.map((k) => (k.id === itemId ? { ...k, ...unwrap(fields) } : k)),
    })),
    deleteChecklist: async (t, itemId) => editTask(t, (c) => ({
      checklist: c.checklist.filter((k) => k.id !== itemId).map((k, i) => ({ ...k, position: i })),
    })),
    orderChecklist: async (t, ids) => editTask(t, (c) => {
      const rank = (k) => (ids.includes(k.id) ? ids.indexOf(k.id) : ids.length + k.position);
      return { checklist: [...c.checklist].sort((a, b) => rank(a) - rank(b)).map((k, i) => ({ ...k, position: i })) };
    }),

    async renumber(cards) {
      cards.forEach((c, i) => putTask(c, { position: (i + 1) * 1024 }));
    },

    async undo() {
      const last = undoStack.pop();
      if (!last) return 'Nothing left to undo.';
      store.loadDocument(last.doc);
      bin.splice(0, bin.length - last.bin);
      return 'Undone.';
    },

    async bin() {
      return bin.map(({ doc: records, ...entry }) => ({
        ...entry,
        count: entry.kind === 'task' ? records.tasks.length : 1,
      }));
    },
    /** Brings a deleted card back from this file's bin. */
    async restoreTask(t) {
      const entry = bin.find((e) => e.kind === 'task' && e.doc.tasks[0].id === t.id);
      if (!entry) throw new ApiError(409, { error: 'gone' }, 'That card is no longer in the recycle bin.');
      return this.restore(entry.id);
    },
    async restore(entryId) {
      const index = bin.findIndex((e) => e.id === entryId);
      if (index < 0) throw new ApiError(404, null, 'That entry is no longer in the bin.');
      step();
      const [entry] = bin.splice(index, 1);
      for (const p of entry.doc.projects || []) store.putProject({ ...p, updatedAt: stamp() });
      for (const c of entry.doc.columns || []) store.putColumn({ ...c, updatedAt: stamp() });
      for (const t of entry.doc.tasks || []) putTask(t, {});
    },

    /** Stops keeping the file in this browser (the file was closed). */
    close() {
      clearTimeout(timer);
      timer = null;
      unsubscribe();
      window.removeEventListener('pagehide', flush);
    },

    usage: async () => null,
    async exportFile() {
      // A rhythm's anchor is kept in this browser, never shown: a server's import refuses
      // it, as its exports leave it out.
      const doc = store.toDocument();
      for (const c of doc.projects.flatMap((p) => p.columns)) c.tasks = c.tasks.map(({ repeatAnchor: _, ...t }) => t);
      return { text: JSON.stringify(doc, null, 2), filename: name || 'workboard-export.json' };
    },
  };
}
