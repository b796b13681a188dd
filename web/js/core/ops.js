// The writes a sync client can queue, each in three parts: the request it sends (built
// once, when it is queued, so that its guards hold the values the user saw), its effect on
// the view while it waits (so the change shows at once, offline too), and what its reply
// confirms. An entry keeps only data (op name and arguments), so it survives a reload and
// its effect is found again by name.

import * as R from './replica.js';

/**
 * @typedef {object} Entry  one queued write, as the outbox stores it
 * @property {string} key    the `Idempotency-Key` (a UUID made when queued, kept across retries)
 * @property {string} op     an operation name of OPS below
 * @property {any} args      its arguments (plain JSON)
 * @property {{method: string, path: string, body?: any}} request
 * @property {number} queuedAt
 *
 * @typedef {{projects: Map<string, any>, columns: Map<string, any>, tasks: Map<string, any>}} View
 */

const enc = encodeURIComponent;

/** Fields a guard would only get in the way of: a position is a place in a sequence, and
 * two devices placing the same card agree by the last write (the spec refuses no guard here,
 * but a replayed move would otherwise conflict with itself for no gain). */
const UNGUARDED = new Set(['position']);

/** `{field: {before, after}}` for every field whose value the user saw on `held`. */
export function guard(held, fields, { guarded = true } = {}) {
  if (!guarded || !held) return { ...fields };
  const out = {};
  for (const [f, v] of Object.entries(fields)) {
    out[f] = UNGUARDED.has(f) || !(f in held) ? v : { before: held[f] ?? null, after: v };
  }
  return out;
}

/** The value a field is set to, whether sent bare or guarded. */
export const afterOf = (v) => (v && typeof v === 'object' && !Array.isArray(v) && 'after' in v ? v.after : v);
const unwrap = (body) => Object.fromEntries(Object.entries(body).map(([k, v]) => [k, afterOf(v)]));

const top = (items) => (items.length ? Math.min(...items.map((i) => i.position)) - 1 : 0);

/** A card's items changed locally: a new object, never the held one edited in place. */
function editTask(view, taskId, fn) {
  const held = view.tasks.get(taskId);
  const change = held && fn(held);
  if (change && Object.keys(change).length) view.tasks.set(taskId, { ...held, ...change });
}

function newTask(view, body) {
  const column = view.columns.get(body.columnId);
  if (!column) return null;
  const siblings = [...view.tasks.values()].filter((t) => t.columnId === body.columnId);
  const tags = body.tags || [];
  return {
    projectId: column.projectId, description: '', priority: 4, effort: null, deadline: null, deadlineTime: null,
    location: '', parentId: null, position: top(siblings), completedAt: null, cancelledAt: null, rev: 0, order: 0,
    updatedAt: 0, tags, tagIds: tags.map(() => null), checklist: [], comments: [], ...body,
  };
}

function insertItem(list, item, position) {
  const items = [...list].sort((a, b) => a.position - b.position);
  const at = position === undefined || position === null ? items.length : Math.min(position, items.length);
  items.splice(at, 0, item);
  return items.map((k, i) => ({ ...k, position: i }));
}

/** Completing a parent completes its open subtasks with the same stamp (as the server does). */
function cascade(view, id, before, after) {
  if (after.completedAt && before.completedAt === null) {
    for (const t of [...view.tasks.values()]) {
      if (t.parentId === id && t.completedAt === null) view.tasks.set(t.id, { ...t, completedAt: after.completedAt });
    }
  }
}

/** The operations. `request(args)` builds the request; `apply(view, args)` shows it while it
 * waits; `confirm(replica, args, data)` merges a success into what the server confirmed.
 * An effect may meet its own write already confirmed (the change feed can bring it before
 * the reply), so a create or an added item that is already there is left as it is. */
export const OPS = {
  createProject: {
    request: ({ body }) => ({ method: 'POST', path: '/projects', body }),
    apply(view, { body }) {
      if (view.projects.has(body.id)) return;
      const { columns = [], ...fields } = body;
      view.projects.set(body.id, {
        folder: null, position: top([...view.projects.values()]), archivedAt: null, pinnedAt: null, photo: null,
        updatedAt: 0, ...fields,
      });
      columns.forEach((c, i) => {
        const col = typeof c === 'string' ? { name: c } : c;
        if (col.id) view.columns.set(col.id, { projectId: body.id, description: null, position: i, archivedAt: null, updatedAt: 0, ...col });
      });
    },
    confirm: (r, _a, data) => data?.project && R.putProject(r, data.project),
  },
  updateProject: {
    request: ({ id, body }) => ({ method: 'PATCH', path: `/projects/${enc(id)}`, body }),
    apply(view, { id, body }) {
      const held = view.projects.get(id);
      if (held) view.projects.set(id, { ...held, ...unwrap(body) });
    },
    confirm: (r, _a, data) => data?.project && R.putProject(r, data.project),
  },
  deleteProject: {
    request: ({ id }) => ({ method: 'DELETE', path: `/projects/${enc(id)}` }),
    apply: (view, { id }) => R.dropProject(view, id),
    confirm: (r, { id }) => R.dropProject(r, id),
  },

  createColumn: {
    request: ({ body }) => ({ method: 'POST', path: '/columns', body }),
    apply(view, { body }) {
      if (view.columns.has(body.id) || !view.projects.has(body.projectId)) return;
      const siblings = [...view.columns.values()].filter((c) => c.projectId === body.projectId);
      view.columns.set(body.id, { description: null, position: top(siblings), archivedAt: null, updatedAt: 0, ...body });
    },
    confirm: (r, _a, data) => data?.column && R.putColumn(r, data.column),
  },
  updateColumn: {
    request: ({ id, body }) => ({ method: 'PATCH', path: `/columns/${enc(id)}`, body }),
    apply(view, { id, body }) {
      const held = view.columns.get(id);
      if (held) view.columns.set(id, { ...held, ...unwrap(body) });
    },
    confirm: (r, _a, data) => data?.column && R.putColumn(r, data.column),
  },
  deleteColumn: {
    request: ({ id }) => ({ method: 'DELETE', path: `/columns/${enc(id)}` }),
    apply: (view, { id }) => R.dropColumn(view, id),
    confirm: (r, { id }) => R.dropColumn(r, id),
  },

  createTask: {
    request: ({ body }) => ({ method: 'POST', path: '/tasks', body }),
    apply(view, { body }) {
      if (view.tasks.has(body.id)) return;
      const task = newTask(view, body);
      if (task) view.tasks.set(task.id, task);
    },
    confirm: (r, _a, data) => data?.task && R.putTask(r, data.task),
  },
  updateTask: {
    request: ({ id, body }) => ({ method: 'PATCH', path: `/tasks/${enc(id)}`, body }),
    apply(view, { id, body }) {
      const held = view.tasks.get(id);
      if (!held) return;
      const next = { ...held, ...unwrap(body) };
      if (next.columnId !== held.columnId) next.projectId = view.columns.get(next.columnId)?.projectId ?? held.projectId;
      cascade(view, id, held, next);
      if (next.cancelledAt !== null && next.cancelledAt !== undefined) R.dropTask(view, id);
      else view.tasks.set(id, next);
    },
    confirm(r, _a, data) {
      if (data?.task) R.putTask(r, data.task);
      // Completing a repeating card made its next occurrence in the same command.
      if (data?.next) R.putTask(r, data.next);
    },
  },
  deleteTask: {
    request: ({ id }) => ({ method: 'DELETE', path: `/tasks/${enc(id)}` }),
    apply: (view, { id }) => R.dropTask(view, id),
    confirm: (r, { id }) => R.dropTask(r, id),
  },

  addTag: {
    request: ({ taskId, body }) => ({ method: 'POST', path: `/tasks/${enc(taskId)}/tags`, body }),
    apply: (view, { taskId, body }) => editTask(view, taskId, (t) => (
      t.tags.some((x) => x.toLowerCase() === body.text.toLowerCase()) ? {} : { tags: [...t.tags, body.text], tagIds: [...t.tagIds, body.id] }
    )),
    confirm: (r, _a, data) => data?.task && R.putTask(r, data.task),
  },
  removeTag: {
    request: ({ tagId }) => ({ method: 'DELETE', path: `/tags/${enc(tagId)}` }),
    apply: (view, args) => editTask(view, args.taskId, (t) => {
      const keep = t.tagIds.map((id, i) => (id === args.tagId ? -1 : i)).filter((i) => i >= 0);
      return { tags: keep.map((i) => t.tags[i]), tagIds: keep.map((i) => t.tagIds[i]) };
    }),
    confirm: (r, args) => OPS.removeTag.apply(r, args),
  },
  addComment: {
    request: ({ taskId, body }) => ({ method: 'POST', path: `/tasks/${enc(taskId)}/comments`, body }),
    apply: (view, { taskId, body, at }) => editTask(view, taskId, (t) => (
      t.comments.some((c) => c.id === body.id) ? {} : { comments: [...t.comments, { id: body.id, text: body.text, createdAt: at }] }
    )),
    confirm: (r, _a, data) => data?.task && R.putTask(r, data.task),
  },
  deleteComment: {
    request: ({ commentId }) => ({ method: 'DELETE', path: `/comments/${enc(commentId)}` }),
    apply: (view, { taskId, commentId }) => editTask(view, taskId, (t) => ({ comments: t.comments.filter((c) => c.id !== commentId) })),
    confirm: (r, args) => OPS.deleteComment.apply(r, args),
  },
  addChecklist: {
    request: ({ taskId, body }) => ({ method: 'POST', path: `/tasks/${enc(taskId)}/checklist`, body }),
    apply: (view, { taskId, body }) => editTask(view, taskId, (t) => (
      t.checklist.some((k) => k.id === body.id) ? {} : { checklist: insertItem(t.checklist, { id: body.id, text: body.text, done: Boolean(body.done) }, body.position) }
    )),
    confirm: (r, _a, data) => data?.task && R.putTask(r, data.task),
  },
  updateChecklist: {
    request: ({ itemId, body }) => ({ method: 'PATCH', path: `/checklist/${enc(itemId)}`, body }),
    apply: (view, { taskId, itemId, body }) => editTask(view, taskId, (t) => ({
      checklist: t.checklist.map((k) => (k.id === itemId ? { ...k, ...unwrap(body) } : k)),
    })),
    confirm(r, args, data) {
      if (data?.task) R.putTask(r, data.task);
      else OPS.updateChecklist.apply(r, args);
    },
  },
  /** Puts a card's checklist in the order of `body.ids`. */
  orderChecklist: {
    request: ({ taskId, body }) => ({ method: 'POST', path: `/tasks/${enc(taskId)}/checklist/order`, body }),
    apply: (view, { taskId, body }) => editTask(view, taskId, (t) => {
      const at = new Map(body.ids.map((id, i) => [id, i]));
      return { checklist: t.checklist.map((k) => (at.has(k.id) ? { ...k, position: at.get(k.id) } : k)) };
    }),
    confirm: (r, _a, data) => data?.task && R.putTask(r, data.task),
  },
  /** Renumbers cards without moving them (`PATCH /tasks/positions`). */
  setPositions: {
    request: ({ body }) => ({ method: 'PATCH', path: '/tasks/positions', body }),
    apply(view, { body }) {
      for (const { id, position } of body.positions) {
        const held = view.tasks.get(id);
        if (held) view.tasks.set(id, { ...held, position });
      }
    },
    confirm: (r, args) => OPS.setPositions.apply(r, args),
  },
  deleteChecklist: {
    request: ({ itemId }) => ({ method: 'DELETE', path: `/checklist/${enc(itemId)}` }),
    apply: (view, { taskId, itemId }) => editTask(view, taskId, (t) => ({
      checklist: t.checklist.filter((k) => k.id !== itemId).map((k, i) => ({ ...k, position: i })),
    })),
    confirm: (r, args) => OPS.deleteChecklist.apply(r, args),
  },
};

/** The view: the confirmed replica with every queued entry's effect on top, in order. With
 * nothing queued it is the replica itself (read it, never write it). A refused entry leaves
 * the queue, so its change rolls back by itself the next time this is computed.
 * @param {{projects: Map, columns: Map, tasks: Map}} replica
 * @param {Entry[]} entries
 * @returns {View}
 */
export function overlay(replica, entries) {
  if (!entries.length) return { projects: replica.projects, columns: replica.columns, tasks: replica.tasks };
  const view = { projects: new Map(replica.projects), columns: new Map(replica.columns), tasks: new Map(replica.tasks) };
  for (const e of entries) OPS[e.op]?.apply(view, e.args);
  return view;
}

/** Whether a refusal means the entry had already landed: a reply lost after its commit,
 * retried against a server that does not replay it (no `Idempotency-Key` support). A create
 * whose random id is in use was this client's; a delete of what is gone is done; a guarded
 * edit whose fields already hold the values it sets was this edit (with several fields, the
 * record is read to check them all: the refusal names only the first).
 * @param {Entry} entry
 * @param {{status: number, body: any}} err
 * @param {{get: (path: string) => Promise<any>}} http
 * @returns {Promise<boolean>}
 */
export async function alreadyApplied(entry, err, http) {
  const { method, path, body } = entry.request;
  if (method === 'DELETE' && err.status === 404) return true;
  if (err.status !== 409 || typeof err.body.field !== 'string') return false;
  if (method === 'POST' && err.body.field === 'id' && body?.id && err.body.current) return true;
  if (method !== 'PATCH' || !body) return false;
  const guarded = Object.entries(body).filter(([, v]) => afterOf(v) !== v);
  const named = guarded.find(([f]) => f === err.body.field);
  if (!named || !sameValue(afterOf(named[1]), err.body.current)) return false;
  if (guarded.length === 1) return true;
  const reader = /^\/(tasks|projects)\/[^/]+$/.exec(path);
  if (!reader) return false;
  try {
    const data = await http.get(path);
    const record = reader[1] === 'tasks' ? data.task : data.projects?.[0];
    return Boolean(record) && guarded.every(([f, v]) => sameValue(afterOf(v), record[f]));
  } catch {
    return false;
  }
}

export function sameValue(a, b) {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}
