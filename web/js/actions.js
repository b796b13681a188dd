// The edits a person makes on this page, each written through the operations (the sync
// core, or a local file) and recorded in the page's undo log (undo-log.js) with the words
// that name it and the write that takes it back: cards (add, edit, move, complete, reopen,
// delete), a card's tags, checklist and comments, subtasks made cards of their own, and
// lists and boards (edit, archive, delete). A deletion, a completion or an archive says so
// in a toast with an Undo.

import { named, showError, toast } from './ui.js';
import { finishedShown } from './filters.js';
import { checkRoom, clip } from './rules.js';
import { fieldList } from './undo-log.js';

export function createActions(ctx) {
  const { store, undoLog } = ctx;
  const { record, undoButton } = undoLog;
  const lastAdded = new Map(); // list id -> the position given to the card added there last

  const listName = (columnId) => store.columns.get(columnId)?.name || 'its list';
  const titleOf = (id, fallback) => store.tasks.get(id)?.title || fallback;

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

  /** Records a deletion from a card (a tag, a checklist item, a comment) and says so with
   * an Undo that puts it back by creating it again. */
  function removedItem(task, what, text, putBack) {
    const subject = `the ${what} ${named(text)}`;
    const entry = record({
      id: task.id,
      subject,
      label: `Deleted ${subject} from ${named(task.title)}`,
      reverse: async () => {
        const now = store.tasks.get(task.id);
        if (!now) {
          const err = new Error(`${named(task.title)} is no longer on the board.`);
          err.status = 409;
          throw err;
        }
        await putBack(now);
        return `Put back ${subject} on ${named(now.title)}`;
      },
    });
    toast(`Deleted ${subject} from ${named(task.title)}.`, { actions: [undoButton(entry)] });
  }

  /** Records a write that adds to or edits a card's items, with the write that reverses it. */
  function itemEdit(task, label, reverse) {
    return record({ id: task.id, subject: named(task.title), label, reverse });
  }

  return {
    /** Deletes a tag; the toast's Undo (or Ctrl+Z) adds it again. */
    async removeTag(task, index) {
      const text = task.tags[index];
      await ctx.ops.removeTag(task, index);
      removedItem(task, 'tag', text, (now) => ctx.ops.addTag(now, text));
    },

    /** Deletes a checklist item; Undo creates it again with its text, done state and place. */
    async removeChecklistItem(task, item) {
      const sorted = [...task.checklist].sort((a, b) => a.position - b.position);
      const position = Math.max(0, sorted.findIndex((k) => k.id === item.id));
      await ctx.ops.deleteChecklist(task, item.id);
      removedItem(task, 'checklist item', item.text,
        (now) => ctx.ops.addChecklist(now, item.text, { done: item.done, position }));
    },

    /** Deletes a comment; Undo writes it again (dated now). */
    async deleteComment(task, comment) {
      await ctx.ops.deleteComment(task, comment.id);
      removedItem(task, 'comment', comment.text, (now) => ctx.ops.addComment(now, comment.text));
    },

    async addTag(task, text) {
      const same = (t) => t.toLowerCase() === text.toLowerCase();
      if (!task.tags.some(same)) checkRoom(task, 'tags');
      const reply = await ctx.ops.addTag(task, text);
      // A tag the card already had was not added: there is nothing to take back.
      if (task.tags.some(same)) return reply;
      itemEdit(task, `Added the tag ${named(text)} to ${named(task.title)}`, async () => {
        const now = store.tasks.get(task.id);
        const at = now ? now.tags.findIndex(same) : -1;
        if (at >= 0) await ctx.ops.removeTag(now, at);
        return `Took back the tag ${named(text)} from ${named(titleOf(task.id, task.title))}`;
      });
      return reply;
    },

    async addChecklistItem(task, text) {
      const before = new Set(task.checklist.map((k) => k.id));
      checkRoom(task, 'checklist');
      const reply = await ctx.ops.addChecklist(task, text);
      itemEdit(task, `Added the checklist item ${named(text)} to ${named(task.title)}`, async () => {
        const now = store.tasks.get(task.id);
        const added = now?.checklist.find((k) => !before.has(k.id) && k.text === clip(text, 'checklist-item-chars'));
        if (added) await ctx.ops.deleteChecklist(now, added.id);
        return `Took back the checklist item ${named(text)} from ${named(titleOf(task.id, task.title))}`;
      });
      return reply;
    },

    /** Ticks, unticks or renames a checklist item; the log can set it back. */
    async updateChecklistItem(task, item, fields) {
      await ctx.ops.updateChecklist(task, item.id, fields);
      const back = Object.fromEntries(Object.keys(fields).map((f) => [f, item[f]]));
      const label = 'done' in fields
        ? `${fields.done ? 'Ticked' : 'Unticked'} ${named(item.text)} on ${named(task.title)}`
        : `Renamed the checklist item ${named(item.text)} on ${named(task.title)}`;
      itemEdit(task, label, async () => {
        const now = store.tasks.get(task.id);
        if (now?.checklist.some((k) => k.id === item.id)) await ctx.ops.updateChecklist(now, item.id, back);
        return `Checklist item ${named(item.text)} set back`;
      });
    },

    /** Puts a card's checklist in the order `ids`; the log can put it back. */
    async orderChecklist(task, ids) {
      const was = [...task.checklist].sort((x, y) => x.position - y.position).map((k) => k.id);
      await ctx.ops.orderChecklist(task, ids);
      itemEdit(task, `Reordered the checklist of ${named(task.title)}`, async () => {
        const now = store.tasks.get(task.id);
        if (now) await ctx.ops.orderChecklist(now, was);
        return `Checklist order of ${named(titleOf(task.id, task.title))} set back`;
      });
    },

    async addComment(task, text) {
      const before = new Set(task.comments.map((c) => c.id));
      checkRoom(task, 'comments');
      const reply = await ctx.ops.addComment(task, text);
      itemEdit(task, `Commented on ${named(task.title)}`, async () => {
        const now = store.tasks.get(task.id);
        const added = now?.comments.find((c) => !before.has(c.id) && c.text === text);
        if (added) await ctx.ops.deleteComment(now, added.id);
        return `Took back the comment on ${named(titleOf(task.id, task.title))}`;
      });
      return reply;
    },

    /** Makes a subtask a card of its own; the log can make it a subtask again. */
    lift(task) {
      return editCard(task, { parentId: null }, {
        label: `Made ${named(task.title)} a card of its own`,
        undone: () => `${named(titleOf(task.id, task.title))} is a subtask again`,
      });
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

    /**
     * Adds a card. Without a `position` it lands at the bottom of its list, as in Trello and
     * Planka (the interface would put it at the top): after every card held there, and after
     * any added a moment ago whose reply has not landed yet, so cards typed quickly in a row
     * read in the order typed.
     */
    async createCard(column, fields) {
      let { position } = fields;
      if (position === undefined) {
        const held = store.tasksOf(column.id);
        const last = held.length ? held.at(-1).position : 0;
        position = Math.floor(Math.max(last, lastAdded.get(column.id) ?? -Infinity)) + 1;
        lastAdded.set(column.id, position);
      }
      const task = await ctx.ops.createTask({ columnId: column.id, ...fields, position });
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

    /** Completes a card: it stays in its list marked as finished (unless the filter hides finished cards, which the toast says), with a toast that offers Undo. */
    async complete(task) {
      const openSubs = store.subtasksOf(task.id).filter((s) => s.completedAt === null).map((s) => s.id);
      const reply = await ctx.ops.updateTask(task.id, { completedAt: Date.now() });
      const stamp = reply && reply.task ? reply.task.completedAt : null;
      // A repeating card's completion made its next occurrence, which the reply names (a
      // completion queued offline names it when its reply comes): undo takes it back too.
      let next = reply?.next ?? null;
      reply?.replied?.then((data) => { next = data?.next ?? next; });
      const drop = (n) => n && store.tasks.has(n.id) && ctx.ops.deleteTask(n.id);
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
          if (next) await drop(next);
          else reply?.replied?.then((data) => drop(data?.next)).catch(showError);
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
        binned: { kind: 'task', label: task.title },
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
      binned: { kind, label: rec.name },
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
}
