// Writes that a person makes on this page, each recorded with the words that name it and
// the guarded write that takes it back. Ctrl+Z and a toast's Undo button reverse this page's
// own recent actions only (never another tab's or an earlier session's); the server's undo,
// which takes back the key's latest step wherever it was made, stays behind the header's
// Undo button and says what it will do before it does.

import { confirmDialog, named, showError, toast } from './ui.js';
import { finishedShown } from './filters.js';

const STEPS = 20;
const FIELD_NAMES = {
  title: 'Title', description: 'Description', priority: 'Priority', effort: 'Effort', deadline: 'Due day',
  deadlineTime: 'Due time', location: 'Location', tags: 'Tags', parentId: 'Parent', name: 'Name', folder: 'Folder',
  pinnedAt: 'Pin', archivedAt: 'Archive', completedAt: 'Completion', position: 'Position', columnId: 'List',
};

const fieldList = (fields) => {
  const names = [...new Set(fields.map((f) => FIELD_NAMES[f] || f))];
  const text = names.length > 1 ? `${names.slice(0, -1).join(', ')} and ${names.at(-1)}` : names[0] || 'A change';
  return text.charAt(0).toUpperCase() + text.slice(1).toLowerCase();
};

export function createActions(ctx) {
  const { store } = ctx;
  const log = []; // newest last: {id, label, reverse: () => Promise<string>}
  let lastWrite = null; // words for this page's latest write, undoes included

  const listName = (columnId) => store.columns.get(columnId)?.name || 'its list';
  const titleOf = (id, fallback) => store.tasks.get(id)?.title || fallback;

  function record(entry) {
    lastWrite = entry.label;
    log.push(entry);
    if (log.length > STEPS) log.shift();
    ctx.onActions?.();
    return entry;
  }

  /** Reverses one recorded action (it leaves the log whether or not it lands). */
  async function reverse(entry) {
    const at = log.indexOf(entry);
    if (at >= 0) log.splice(at, 1);
    ctx.onActions?.();
    try {
      const said = await entry.reverse();
      lastWrite = said;
      toast(said);
    } catch (err) {
      if (err.status === 409) toast(`Cannot undo: ${entry.subject} was changed since, here or on another device.`, { kind: 'error' });
      else showError(err);
    }
  }

  const undoButton = (entry) => ({ label: 'Undo', run: () => reverse(entry) });

  /** Writes `fields` of a card (bare values) and records how to set them back. */
  async function editCard(task, fields, { label, undone } = {}) {
    const reply = await ctx.ops.updateTask(task.id, fields);
    const after = reply && reply.task ? reply.task : { ...task, ...fields };
    return record({
      id: task.id,
      subject: named(task.title),
      label: label || `${fieldList(Object.keys(fields))} of ${named(task.title)} changed`,
      reverse: async () => {
        const back = {};
        for (const f of Object.keys(fields)) back[f] = { before: after[f], after: task[f] };
        await ctx.ops.updateTask(task.id, back);
        return undone ? undone() : `${fieldList(Object.keys(fields))} of ${named(titleOf(task.id, task.title))} set back`;
      },
    });
  }

  // Lists and boards: one shape of write and words for both.
  const NAMED = {
    column: { what: 'list', update: 'updateColumn', remove: 'deleteColumn', held: store.columns, unarchived: 'to the board' },
    project: { what: 'board', update: 'updateProject', remove: 'deleteProject', held: store.projects, unarchived: 'from the archive' },
  };

  return {
    /** The label of this page's latest action, for the Undo button's title. */
    get last() {
      return log.at(-1) || null;
    },

    /** Records an edit the card editor already wrote (as a guarded write of its own). */
    recordEdit(task, field, before, after) {
      record({
        id: task.id,
        subject: named(task.title),
        label: `${fieldList([field])} of ${named(task.title)} changed`,
        reverse: async () => {
          await ctx.ops.updateTask(task.id, { [field]: { before: after, after: before } });
          return `${fieldList([field])} of ${named(titleOf(task.id, field === 'title' ? before : task.title))} set back`;
        },
      });
    },

    async createCard(column, fields) {
      const task = await ctx.ops.createTask({ columnId: column.id, ...fields });
      record({
        id: task.id,
        subject: named(task.title),
        label: `Added ${named(task.title)} to ${column.name}`,
        reverse: async () => {
          await ctx.ops.deleteTask(task.id);
          return `Took back ${named(task.title)} (it is in the recycle bin)`;
        },
      });
      return task;
    },

    moveCard(task, fields) {
      const to = listName(fields.columnId || task.columnId);
      return editCard(task, fields, {
        label: `Moved ${named(task.title)} to ${to}`,
        undone: () => `Moved ${named(titleOf(task.id, task.title))} back to ${listName(task.columnId)}`,
      });
    },

    /** Completes a card: it leaves the board with a toast that offers Undo (and shows it). */
    async complete(task) {
      const openSubs = store.subtasksOf(task.id).filter((s) => s.completedAt === null).map((s) => s.id);
      const reply = await ctx.ops.updateTask(task.id, { completedAt: Date.now() });
      const stamp = reply && reply.task ? reply.task.completedAt : null;
      const entry = record({
        id: task.id,
        subject: named(task.title),
        label: `Completed ${named(task.title)}`,
        reverse: async () => {
          await ctx.ops.updateTask(task.id, { completedAt: { before: stamp, after: null } });
          // The completion took the open subtasks along; they come back with it.
          for (const id of openSubs) {
            try {
              await ctx.ops.updateTask(id, { completedAt: { before: stamp, after: null } });
            } catch {
              // A subtask changed since keeps its own state.
            }
          }
          return `Restored ${named(titleOf(task.id, task.title))} to ${listName(task.columnId)}`;
        },
      });
      const filters = ctx.filters();
      const hidden = !finishedShown({ completedAt: stamp ?? Date.now() }, filters.done);
      toast(`Completed ${named(task.title)}.${hidden ? ' Finished cards are hidden.' : ''}`, {
        actions: [undoButton(entry), hidden && { label: 'Show finished', run: () => ctx.setFilters({ ...ctx.filters(), done: 'recent' }) }].filter(Boolean),
      });
    },

    reopen(task) {
      return editCard(task, { completedAt: null }, {
        label: `Reopened ${named(task.title)}`,
        undone: () => `${named(titleOf(task.id, task.title))} finished again`,
      });
    },

    async deleteCard(task) {
      await ctx.ops.deleteTask(task.id);
      const entry = record({
        id: task.id,
        subject: named(task.title),
        label: `Deleted ${named(task.title)}`,
        reverse: async () => {
          await ctx.ops.restoreTask(task);
          return `Restored ${named(task.title)} to ${listName(task.columnId)}`;
        },
      });
      toast(`Deleted ${named(task.title)}. It is in the recycle bin.`, { actions: [undoButton(entry)] });
    },

    updateColumn: (column, fields) => editNamed('column', column, fields),
    archiveColumn: (column) => editNamed('column', column, { archivedAt: Date.now() }),
    deleteColumn: (column) => deleteNamed('column', column),
    updateProject: (project, fields) => editNamed('project', project, fields),
    deleteProject: (project) => deleteNamed('project', project),

    /** Ctrl+Z: this page's latest action, and nothing older than this page. */
    async undoLast() {
      const entry = log.at(-1);
      if (!entry) {
        toast('Nothing to undo: this page has made no change yet.');
        return;
      }
      await reverse(entry);
    },

    /** The header's Undo button: the server's undo of this key's latest step, after asking. */
    async serverUndo() {
      if (ctx.ops.kind === 'local') {
        toast(await ctx.ops.undo());
        log.length = 0;
        ctx.onActions?.();
        return;
      }
      const own = log.at(-1);
      // Without a way to ask the server which step is next, say what it may be, and why.
      const ok = await confirmDialog(
        'Undo on the server takes back the latest change made with this key, wherever it was made: '
        + 'this page, another tab or device, or an earlier session. '
        + (lastWrite ? `This page's latest change: ${lastWrite}.` : 'This page has made no change yet, so it will be one made elsewhere or earlier.'),
        'Undo on the server', { danger: false });
      if (!ok) return;
      const before = { tasks: new Map(store.tasks), columns: new Map(store.columns), projects: new Map(store.projects) };
      let reply;
      try {
        reply = await ctx.ops.undo();
      } catch (err) {
        toast(err.status === 409 ? `Cannot undo: ${err.message}` : err.message, { kind: 'error' });
        return;
      }
      if (!reply.undone) {
        toast('Nothing left to undo for this key.');
        return;
      }
      const { change } = reply;
      if (own && own.id === change.id) {
        log.pop();
        lastWrite = log.at(-1)?.label || null;
      }
      ctx.onActions?.();
      toast(describeServerUndo(change, before));
    },
  };

  /** A guarded edit of a list or board; archiving one offers Undo in a toast. */
  async function editNamed(kind, rec, fields) {
    const { what, update, held, unarchived } = NAMED[kind];
    const subject = `the ${what} ${named(rec.name)}`;
    await ctx.ops[update](rec.id, Object.fromEntries(Object.entries(fields).map(([f, v]) => [f, { before: rec[f], after: v }])));
    const after = held.get(rec.id) || { ...rec, ...fields };
    const archiving = 'archivedAt' in fields && fields.archivedAt !== null;
    const changed = fieldList(Object.keys(fields));
    const entry = record({
      id: rec.id,
      subject,
      label: archiving ? `Archived ${subject}` : `${changed} of ${subject} changed`,
      reverse: async () => {
        const back = {};
        for (const f of Object.keys(fields)) back[f] = { before: after[f], after: rec[f] };
        await ctx.ops[update](rec.id, back);
        return archiving ? `Restored ${subject} ${unarchived}` : `${changed} of ${subject} set back`;
      },
    });
    if (archiving) toast(`Archived ${subject}.`, { actions: [undoButton(entry)] });
    return entry;
  }

  /** Deletes a list or board (to the bin); the toast's Undo restores it from there. */
  async function deleteNamed(kind, rec) {
    const { what, remove } = NAMED[kind];
    const subject = `the ${what} ${named(rec.name)}`;
    await ctx.ops[remove](rec.id);
    const entry = record({
      id: rec.id,
      subject,
      label: `Deleted ${subject}`,
      reverse: async () => {
        await restoreFromBin(kind, rec.name);
        return `Restored ${subject}`;
      },
    });
    toast(`Deleted ${subject}. It is in the recycle bin.`, { actions: [undoButton(entry)] });
  }

  async function restoreFromBin(kind, label) {
    const entries = await ctx.ops.bin();
    const entry = entries.find((e) => e.kind === kind && e.label === label);
    if (!entry) {
      const err = new Error(`${label} is no longer in the recycle bin.`);
      err.status = 409;
      throw err;
    }
    await ctx.ops.restore(entry.id);
  }

  /** The server's `{kind, id, fields}` in words, named from what the page held. */
  function describeServerUndo({ kind, id, fields }, before) {
    const fieldsOf = fields || [];
    if (kind === 'task') {
      const now = store.tasks.get(id);
      const was = before.tasks.get(id);
      const title = named((now || was || {}).title || 'a card');
      if (!now) return `Took back the card ${title}`;
      if (fieldsOf.includes('cancelledAt') || !was) return `Restored ${title} to ${listName(now.columnId)}`;
      if (fieldsOf.includes('completedAt')) return now.completedAt === null ? `Reopened ${title}` : `${title} finished again`;
      if (fieldsOf.includes('columnId') || fieldsOf.includes('position')) return `Moved ${title} back to ${listName(now.columnId)}`;
      return `${fieldList(fieldsOf)} of ${title} set back`;
    }
    const map = kind === 'column' ? store.columns : store.projects;
    const what = kind === 'column' ? 'list' : 'board';
    const record = map.get(id) || (kind === 'column' ? before.columns : before.projects).get(id);
    const name = named(record ? record.name : `a ${what}`);
    if (!map.get(id)) return `Took back the ${what} ${name}`;
    if (fieldsOf.includes('deletedAt')) return `Restored the ${what} ${name}`;
    return `${fieldList(fieldsOf)} of the ${what} ${name} set back`;
  }
}
