// What the server has confirmed: projects, lists and cards by id, merged from the first
// read, write replies and `/changes` replies by the protocol's rules (a card's `rev` and a
// record's `updatedAt` never go back; deletions, the manifest `taskIds` and the cutoff drop
// what the server no longer holds). No pending local change is ever written here: the view
// a client shows is this plus the outbox (see overlay.js).

/**
 * @typedef {{id: string, name: string, position: number, updatedAt: number, [field: string]: any}} Project
 * @typedef {{id: string, projectId: string, name: string, position: number, updatedAt: number, [field: string]: any}} Column
 * @typedef {{id: string, projectId: string, columnId: string, title: string, position: number, rev: number,
 *   completedAt: number|null, cancelledAt: number|null, parentId: string|null, tags: string[], tagIds: string[],
 *   checklist: {id: string, text: string, done: boolean, position: number}[],
 *   comments: {id: string, text: string, createdAt: number}[], [field: string]: any}} Task
 * @typedef {'all'|'recent'|'none'} Completed
 * @typedef {object} Replica
 * @property {Map<string, Project>} projects
 * @property {Map<string, Column>} columns
 * @property {Map<string, Task>} tasks
 * @property {number} now  the server clock of the last read; the next `since`
 * @property {Completed} completed  which finished cards this replica reads
 */

/** @param {{completed?: Completed}} [options] @returns {Replica} */
export function createReplica({ completed = 'all' } = {}) {
  return { projects: new Map(), columns: new Map(), tasks: new Map(), now: 0, completed };
}

/** A whole-account document (`GET /projects`): replaces everything held. */
export function loadDocument(r, doc) {
  r.projects.clear();
  r.columns.clear();
  r.tasks.clear();
  for (const p of doc.projects || []) putProject(r, p);
  r.now = doc.now || 0;
}

/** A project as read, with its columns and cards if it carries them. */
export function putProject(r, p) {
  const { columns: cols, ...rest } = p;
  const held = r.projects.get(p.id);
  if (!held || !(held.updatedAt > rest.updatedAt)) r.projects.set(p.id, rest);
  for (const c of cols || []) putColumn(r, c);
}

export function putColumn(r, c) {
  const { tasks: cards, ...rest } = c;
  const held = r.columns.get(c.id);
  if (!held || !(held.updatedAt > rest.updatedAt)) r.columns.set(c.id, rest);
  for (const t of cards || []) putTask(r, t);
}

/** A card as read; a deleted one (`cancelledAt` set) leaves. An older `rev` never wins. */
export function putTask(r, t) {
  if (t.cancelledAt !== null && t.cancelledAt !== undefined) {
    r.tasks.delete(t.id);
    return;
  }
  const held = r.tasks.get(t.id);
  if (!held || !(held.rev > t.rev)) r.tasks.set(t.id, t);
}

export function dropProject(r, id) {
  r.projects.delete(id);
  for (const c of [...r.columns.values()]) if (c.projectId === id) dropColumn(r, c.id);
  for (const t of [...r.tasks.values()]) if (t.projectId === id) r.tasks.delete(t.id);
}

export function dropColumn(r, id) {
  r.columns.delete(id);
  for (const t of [...r.tasks.values()]) if (t.columnId === id) r.tasks.delete(t.id);
}

/** Drops a card and its subtasks, as a delete does on the server. */
export function dropTask(r, id) {
  r.tasks.delete(id);
  for (const t of [...r.tasks.values()]) if (t.parentId === id) r.tasks.delete(t.id);
}

/** Live cards held, for `holding`: the server answers `{unchanged}` only while it agrees. */
export function holding(r) {
  return r.tasks.size;
}

/** The query of the next catch-up read: `since` the last `now`, what is held, and the
 * narrow manifest (`taskIds` only for the projects the reply carries).
 * @param {{now: number, completed: Completed, holding: number}} at
 * @returns {string} the path and query under `/api/v1`
 */
export function changesPath({ now, completed, holding: held }) {
  const query = new URLSearchParams({
    since: String(now),
    holding: String(held),
    manifest: 'changed',
    completed,
  });
  return `/changes?${query}`;
}

/** The cutoff rule of `manifest=changed`: the narrow manifest is complete only once every
 * held card finished before `cutoff` is dropped (it left the window, it was not deleted).
 * With `completed=all` there is no window, so nothing ages out.
 * @param {Map<string, Task>} tasks
 * @param {number|undefined} cutoff
 * @param {Completed} completed
 */
export function applyCutoff(tasks, cutoff, completed) {
  if (!cutoff || completed === 'all') return;
  for (const t of [...tasks.values()]) {
    if (t.completedAt !== null && t.completedAt < cutoff) tasks.delete(t.id);
  }
}

/** A `/changes` reply: records that changed, deletions, the manifest and the cutoff. */
export function applyChanges(r, reply) {
  if (reply.unchanged) {
    r.now = reply.now;
    return false;
  }
  for (const p of reply.projects || []) {
    if (p.deletedAt) dropProject(r, p.id);
    else putProject(r, p);
  }
  for (const c of reply.lists || []) {
    if (c.deletedAt) dropColumn(r, c.id);
    else putColumn(r, c);
  }
  for (const t of reply.cards || []) putTask(r, t);
  if (Array.isArray(reply.taskIds)) {
    const live = new Set(reply.taskIds);
    // `scoped`: the manifest covers only the projects the reply names.
    const scope = reply.scoped ? new Set((reply.projects || []).map((p) => p.id)) : null;
    for (const t of [...r.tasks.values()]) {
      if (scope && !scope.has(t.projectId)) continue;
      if (!live.has(t.id)) r.tasks.delete(t.id);
    }
  }
  applyCutoff(r.tasks, reply.cutoff, r.completed);
  r.now = reply.now;
  return true;
}

const byPosition = (a, b) => a.position - b.position || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** The held account in the shape of a whole-account read (`{projects: [{columns: [{tasks}]}]}`),
 * sorted by position: what a client compares with the server's, or saves. */
export function toDocument({ projects, columns, tasks }, now = 0) {
  return {
    version: 1,
    now,
    projects: [...projects.values()].sort(byPosition).map((p) => ({
      ...p,
      columns: [...columns.values()]
        .filter((c) => c.projectId === p.id)
        .sort(byPosition)
        .map((c) => ({ ...c, tasks: [...tasks.values()].filter((t) => t.columnId === c.id).sort(byPosition) })),
    })),
  };
}
