// What the page holds: projects, columns and cards by id, merged from full reads, write
// replies and change feeds, and the sorted views the screens draw from. Every card is held,
// finished ones included (the page reads with `completed=all`): a parent counts all its
// subtasks, and the finished-cards window is a view chosen in the filter bar.

/** Whether two records read the same (the server writes a record's keys in one order). */
const same = (a, b) => a === b || JSON.stringify(a) === JSON.stringify(b);

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
    /** Which finished cards the page reads from the server: all of them (see above). */
    completed: 'all',
    /** Server clock of the last full read or changes reply; the next `since`. */
    now: 0,

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

    // A record the page already holds as it is (a write's reply, then the change feed
    // bringing the same record again) changes nothing: the page is not drawn again for it.

    /** A project as read, with its columns and cards if it carries them. */
    putProject(p) {
      const { columns: cols, ...rest } = p;
      const held = projects.get(p.id);
      if (!held || !(held.updatedAt > rest.updatedAt)) {
        if (!(held && held.updatedAt === rest.updatedAt && same(held, rest))) {
          projects.set(p.id, rest);
          store.changed();
        }
      }
      for (const c of cols || []) store.putColumn(c);
    },

    putColumn(c) {
      const { tasks: cards, ...rest } = c;
      const held = columns.get(c.id);
      if (!held || !(held.updatedAt > rest.updatedAt)) {
        if (!(held && held.updatedAt === rest.updatedAt && same(held, rest))) {
          columns.set(c.id, rest);
          store.changed();
        }
      }
      for (const t of cards || []) store.putTask(t);
    },

    putTask(t) {
      if (t.cancelledAt !== null && t.cancelledAt !== undefined) {
        if (tasks.delete(t.id)) store.changed();
        return;
      }
      const held = tasks.get(t.id);
      if (held && (held.rev > t.rev || (held.rev === t.rev && same(held, t)))) return;
      tasks.set(t.id, t);
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
      let dropped = false;
      if (Array.isArray(reply.taskIds)) {
        const live = new Set(reply.taskIds);
        const scope = reply.scoped ? new Set((reply.projects || []).map((p) => p.id)) : null;
        for (const t of [...tasks.values()]) {
          if (scope && !scope.has(t.projectId)) continue;
          if (!live.has(t.id)) dropped = tasks.delete(t.id) || dropped;
        }
      }
      if (reply.cutoff && store.completed !== 'all') {
        for (const t of [...tasks.values()]) {
          if (t.completedAt !== null && t.completedAt < reply.cutoff) dropped = tasks.delete(t.id) || dropped;
        }
      }
      store.now = reply.now;
      if (dropped) store.changed();
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

    /** Cards of a column in position order, finished ones included. */
    tasksOf(columnId) {
      return [...tasks.values()].filter((t) => t.columnId === columnId).sort(byPosition);
    },

    /** Every card of a project by column id, each list in position order: one pass. */
    tasksByColumn(projectId) {
      const lists = new Map();
      for (const t of tasks.values()) {
        if (t.projectId !== projectId) continue;
        if (!lists.has(t.columnId)) lists.set(t.columnId, []);
        lists.get(t.columnId).push(t);
      }
      for (const list of lists.values()) list.sort(byPosition);
      return lists;
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
