// What the page holds: projects, columns and cards by id, merged from full reads, write
// replies and change feeds, and the sorted views the screens draw from.

const DAY_MS = 24 * 60 * 60 * 1000;

const byPosition = (a, b) => a.position - b.position || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

export function createStore() {
  const projects = new Map();
  const columns = new Map();
  const tasks = new Map();
  const listeners = new Set();
  let pending = false;

  const store = {
    projects,
    columns,
    tasks,
    /** `none`, `recent` or `all`: which finished cards the page holds and shows. */
    completed: 'none',
    /** Server clock of the last full read or changes reply; the next `since`. */
    now: 0,
    /** Keyless mode holds every card of the file, whatever the filter shows. */
    keepAll: false,

    subscribe(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },

    /** Listeners run once per task turn however many merges happened. */
    changed() {
      if (pending) return;
      pending = true;
      queueMicrotask(() => {
        pending = false;
        for (const fn of listeners) fn();
      });
    },

    clear() {
      projects.clear();
      columns.clear();
      tasks.clear();
      store.changed();
    },

    /** A whole-account document (`GET /projects`, an export file). */
    loadDocument(doc) {
      projects.clear();
      columns.clear();
      tasks.clear();
      for (const p of doc.projects || []) store.putProject(p);
      store.now = doc.now || Date.now();
      store.changed();
    },

    /** A project as read, with its columns and cards if it carries them. */
    putProject(p) {
      const { columns: cols, ...rest } = p;
      const held = projects.get(p.id);
      if (!held || !(held.updatedAt > rest.updatedAt)) projects.set(p.id, rest);
      for (const c of cols || []) store.putColumn(c);
      store.changed();
    },

    putColumn(c) {
      const { tasks: cards, ...rest } = c;
      const held = columns.get(c.id);
      if (!held || !(held.updatedAt > rest.updatedAt)) columns.set(c.id, rest);
      for (const t of cards || []) store.putTask(t);
      store.changed();
    },

    putTask(t) {
      const hidden = !store.keepAll && store.completed === 'none' && t.completedAt !== null;
      if ((t.cancelledAt !== null && t.cancelledAt !== undefined) || hidden) {
        tasks.delete(t.id);
      } else {
        const held = tasks.get(t.id);
        if (!held || !(held.rev > t.rev)) tasks.set(t.id, t);
      }
      store.changed();
    },

    dropProject(id) {
      projects.delete(id);
      for (const c of [...columns.values()]) if (c.projectId === id) store.dropColumn(c.id);
      store.changed();
    },

    dropColumn(id) {
      columns.delete(id);
      for (const t of [...tasks.values()]) if (t.columnId === id) tasks.delete(t.id);
      store.changed();
    },

    /** Drops a card and its subtasks, as a delete does on the server. */
    dropTask(id) {
      tasks.delete(id);
      for (const t of [...tasks.values()]) if (t.parentId === id) tasks.delete(t.id);
      store.changed();
    },

    /** A `/changes` reply; `manifest=changed` scopes `taskIds` to the projects it names. */
    applyChanges(reply) {
      if (reply.unchanged) {
        store.now = reply.now;
        return;
      }
      for (const p of reply.projects || []) {
        if (p.deletedAt) store.dropProject(p.id);
        else store.putProject(p);
      }
      for (const c of reply.lists || []) {
        if (c.deletedAt) store.dropColumn(c.id);
        else store.putColumn(c);
      }
      for (const t of reply.cards || []) store.putTask(t);
      if (Array.isArray(reply.taskIds)) {
        const live = new Set(reply.taskIds);
        const scope = reply.scoped ? new Set((reply.projects || []).map((p) => p.id)) : null;
        for (const t of [...tasks.values()]) {
          if (scope && !scope.has(t.projectId)) continue;
          if (!live.has(t.id)) tasks.delete(t.id);
        }
      }
      if (reply.cutoff && store.completed !== 'all') {
        for (const t of [...tasks.values()]) {
          if (t.completedAt !== null && t.completedAt < reply.cutoff) tasks.delete(t.id);
        }
      }
      store.now = reply.now;
      store.changed();
    },

    // Views.

    projectList() {
      return [...projects.values()].sort(byPosition);
    },

    columnsOf(projectId, { archived = false } = {}) {
      return [...columns.values()]
        .filter((c) => c.projectId === projectId && (archived ? c.archivedAt !== null : c.archivedAt === null))
        .sort(byPosition);
    },

    /** Cards of a column in position order, finished ones only as the filter allows. */
    tasksOf(columnId) {
      const cutoff = (store.keepAll ? Date.now() : store.now) - 30 * DAY_MS;
      return [...tasks.values()]
        .filter((t) => t.columnId === columnId)
        .filter((t) => {
          if (t.completedAt === null) return true;
          if (store.completed === 'all') return true;
          return store.completed === 'recent' && t.completedAt >= cutoff;
        })
        .sort(byPosition);
    },

    subtasksOf(taskId) {
      return [...tasks.values()].filter((t) => t.parentId === taskId).sort(byPosition);
    },

    /** Live cards held, for `holding`. */
    holding() {
      return tasks.size;
    },

    /** The held account as an export document. */
    toDocument() {
      return {
        version: 1,
        now: Date.now(),
        projects: store.projectList().map((p) => ({
          ...p,
          columns: [...columns.values()]
            .filter((c) => c.projectId === p.id)
            .sort(byPosition)
            .map((c) => ({
              ...c,
              tasks: [...tasks.values()].filter((t) => t.columnId === c.id).sort(byPosition),
            })),
        })),
      };
    },
  };
  return store;
}

/** A position strictly between two neighbours' (either may be missing). */
export function between(before, after) {
  if (before && after) return (before.position + after.position) / 2;
  if (before) return before.position + 1;
  if (after) return after.position - 1;
  return 0;
}
