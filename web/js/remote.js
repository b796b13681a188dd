// Operations against the server: each write goes to the interface and its reply is merged
// into the store at once (the change feed brings the same record again, harmlessly).
// local.js offers the same operations on a file held in the browser.

import { newId } from './api.js';

export function remoteOps(client, store) {
  let afterWrite = () => {};

  const enc = encodeURIComponent;
  // Replies of item routes carry the item, not the card: patch the held card in place (the
  // change feed brings the card with its new `rev` right after).
  const edit = (taskId, fn) => {
    const held = store.tasks.get(taskId);
    if (held) {
      store.tasks.set(taskId, { ...held, ...fn(held) });
      store.changed();
    }
  };
  const task = async (promise) => {
    const reply = await promise;
    if (reply && reply.task) store.putTask(reply.task);
    return reply;
  };

  return {
    kind: 'remote',
    /** Called after writes whose effects the reply does not carry (undo, restore). */
    set afterWrite(fn) {
      afterWrite = fn;
    },

    async loadAll() {
      const doc = await client.get(`/projects?completed=${store.completed}`);
      store.loadDocument(doc);
    },

    async createProject(fields) {
      const reply = await client.post('/projects', { id: newId('b_'), ...fields });
      store.putProject(reply.project);
      return reply.project;
    },
    async updateProject(id, fields) {
      const reply = await client.patch(`/projects/${enc(id)}`, fields);
      store.putProject(reply.project);
    },
    async deleteProject(id) {
      await client.del(`/projects/${enc(id)}`);
      store.dropProject(id);
    },

    async createColumn(fields) {
      const reply = await client.post('/columns', { id: newId('c_'), ...fields });
      store.putColumn(reply.column);
      return reply.column;
    },
    async updateColumn(id, fields) {
      const reply = await client.patch(`/columns/${enc(id)}`, fields);
      store.putColumn(reply.column);
    },
    async deleteColumn(id) {
      await client.del(`/columns/${enc(id)}`);
      store.dropColumn(id);
    },

    async createTask(fields) {
      const reply = await task(client.post('/tasks', { id: newId('t_'), ...fields }));
      return reply.task;
    },
    updateTask: (id, fields) => task(client.patch(`/tasks/${enc(id)}`, fields)),
    async deleteTask(id) {
      await client.del(`/tasks/${enc(id)}`);
      store.dropTask(id);
    },

    addTag: (t, text) => task(client.post(`/tasks/${enc(t.id)}/tags`, { text })),
    async removeTag(t, index) {
      const tagId = t.tagIds[index];
      await client.del(`/tags/${enc(tagId)}`);
      edit(t.id, (held) => {
        const keep = held.tagIds.map((id, i) => (id === tagId ? -1 : i)).filter((i) => i >= 0);
        return { tags: keep.map((i) => held.tags[i]), tagIds: keep.map((i) => held.tagIds[i]) };
      });
    },
    addComment: (t, text) => task(client.post(`/tasks/${enc(t.id)}/comments`, { text })),
    async deleteComment(t, commentId) {
      await client.del(`/comments/${enc(commentId)}`);
      edit(t.id, (held) => ({ comments: held.comments.filter((c) => c.id !== commentId) }));
    },
    /** Adds an item at the end, or (putting a deleted one back) `at` {done, position}. */
    addChecklist: (t, text, at = {}) => task(client.post(`/tasks/${enc(t.id)}/checklist`, { id: newId('k_'), text, ...at })),
    async updateChecklist(t, itemId, fields) {
      const reply = await client.patch(`/checklist/${enc(itemId)}`, fields);
      if (reply.task) store.putTask(reply.task);
      const item = reply.item || fields;
      edit(t.id, (held) => ({ checklist: held.checklist.map((k) => (k.id === itemId ? { ...k, ...item } : k)) }));
    },
    async deleteChecklist(t, itemId) {
      await client.del(`/checklist/${enc(itemId)}`);
      edit(t.id, (held) => ({ checklist: held.checklist.filter((k) => k.id !== itemId) }));
    },
    orderChecklist: (t, ids) => task(client.post(`/tasks/${enc(t.id)}/checklist/order`, { ids })),

    /** Renumbers cards without moving them (the bulk route only reorders). */
    async renumber(cards) {
      const positions = cards.map((c, i) => ({ id: c.id, position: (i + 1) * 1024 }));
      await client.patch('/tasks/positions', { positions });
      for (const { id, position } of positions) {
        const held = store.tasks.get(id);
        if (held) store.tasks.set(id, { ...held, position });
      }
    },

    /** The server's undo of this key's latest step: its reply, once the page caught up. */
    async undo() {
      const reply = await client.post('/undo');
      if (reply.undone) await afterWrite();
      return reply;
    },

    /** Brings a deleted card back (with the subtasks deleted with it). */
    async restoreTask(t) {
      await task(client.patch(`/tasks/${enc(t.id)}`, { cancelledAt: null }));
      await afterWrite();
    },

    async bin() {
      return (await client.get('/bin')).entries;
    },
    async restore(entryId) {
      await client.post(`/bin/${enc(entryId)}/restore`);
      await afterWrite();
    },

    usage: () => client.get('/usage'),
    keys: async () => (await client.get('/keys')).keys,
    issueKey: (body) => client.post('/keys', body),
    revokeKey: (id) => client.del(`/keys/${enc(id)}`),
    exportFile: () => client.download('/export'),
  };
}
