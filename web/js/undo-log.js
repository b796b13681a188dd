// The page's undo log: the steps this page wrote, newest last (the last 20), each with the
// words that name it and the write that takes it back, and every way to take one back.
// Ctrl+Z and the header's Undo take back the newest; a toast's Undo takes back the one it
// names. Taking a step back is a write of its own, which the server records as a step of
// this key, so once this page has written, the server's undo (which takes back the key's
// latest step) could only re-do what the page took back: it is offered, behind the header's
// Undo and after saying what it will do, only while this page has written nothing (for a
// change made earlier or elsewhere). The steps are written and recorded by actions.js (and
// transfer.js); here a step is only its words, its subject and its way back.

import { confirmDialog, named, showError, toast } from './ui.js';
import { fieldLabel } from './rules.js';

const STEPS = 20; // this page's own log, not the server's undo

/** Changed fields in words for a step's label ("Title and priority"). */
export const fieldList = (fields) => {
  const names = [...new Set(fields.map(fieldLabel))];
  const text = names.length > 1 ? `${names.slice(0, -1).join(', ')} and ${names.at(-1)}` : names[0] || 'A change';
  return text.charAt(0).toUpperCase() + text.slice(1).toLowerCase();
};

export function createUndoLog(ctx) {
  const { store } = ctx;
  const log = []; // newest last: {id, subject, label, binned?, reverse: () => Promise<string>}
  let lastWrite = null; // words for this page's latest write, undoes included
  let wrote = false; // this page has written (to this key or file) since it was opened
  const pending = new Set(); // writes under way: an undo waits for them to land and be logged

  const listName = (columnId) => store.columns.get(columnId)?.name || 'its list';

  /** Adds a step written just now; the oldest beyond STEPS leaves the log. */
  function record(entry) {
    lastWrite = entry.label;
    log.push(entry);
    if (log.length > STEPS) log.shift();
    ctx.onUndoLog?.();
    return entry;
  }

  /** Reverses one recorded step (it leaves the log whether or not it lands). */
  async function reverse(entry) {
    const at = log.indexOf(entry);
    // Taken back already (by Ctrl+Z, the header's Undo or another toast): never twice.
    if (at < 0) {
      toast(`${entry.label}: already taken back.`);
      return;
    }
    log.splice(at, 1);
    ctx.onUndoLog?.();
    try {
      const said = await entry.reverse();
      lastWrite = said;
      toast(said);
    } catch (err) {
      if (err.status === 409) toast(`Cannot undo: ${entry.subject} was changed since, here or on another device.`, { kind: 'error' });
      else showError(err);
    }
  }

  /** Ctrl+Z: this page's latest step, and nothing older than this page. */
  async function undoLast() {
    // A change still being sent is the latest: once it lands (and is logged), it is the
    // one taken back, not the one before it.
    while (pending.size) {
      await Promise.allSettled([...pending]);
      await null;
    }
    const entry = log.at(-1);
    if (!entry) {
      toast(wrote
        ? 'Nothing left to undo: this page’s changes that can be taken back are taken back.'
        : 'Nothing to undo: this page has made no change yet.');
      return;
    }
    await reverse(entry);
  }

  return {
    /** Records a step this page wrote; returns it, for a toast's Undo. */
    record,
    /** A toast's Undo of a recorded step. */
    takeBack: (entry) => reverse(entry),
    /** The toast button that takes back `entry`. */
    undoButton: (entry) => ({ label: 'Undo', run: () => reverse(entry) }),
    undoLast,

    /** This page's latest step, for the Undo button's title. */
    get last() {
      return log.at(-1) || null;
    },

    /** Whether the header's Undo would be the server's undo (this page has written nothing). */
    get serverUndoOffered() {
      return !log.length && !wrote;
    },

    /** Wraps the operations so that any write marks this page as one that has written. */
    watch(ops) {
      const READS = new Set(['loadAll', 'bin', 'usage', 'keys', 'exportFile', 'undo', 'issueKey', 'revokeKey', 'close',
        'pendingIds', 'pull', 'forget']);
      return new Proxy(ops, {
        get(target, prop, receiver) {
          const value = Reflect.get(target, prop, receiver);
          if (typeof value !== 'function' || READS.has(prop)) return value;
          return function written(...args) {
            wrote = true;
            ctx.onUndoLog?.();
            const result = value.apply(this, args);
            if (result && typeof result.then === 'function') {
              pending.add(result);
              const done = () => pending.delete(result);
              result.then(done, done);
            }
            return result;
          };
        },
      });
    },

    /** A deletion restored from the recycle bin is taken back: it leaves the log. */
    restoredFromBin(kind, label) {
      const at = log.findLastIndex((e) => e.binned && e.binned.kind === kind && e.binned.label === label);
      if (at >= 0) log.splice(at, 1);
      ctx.onUndoLog?.();
    },

    /** Another key or file: nothing of the last one's log applies. */
    reset() {
      log.length = 0;
      lastWrite = null;
      wrote = false;
      ctx.onUndoLog?.();
    },

    /**
     * The header's Undo button: the same as Ctrl+Z while this page has steps to take back;
     * the server's undo of this key's latest step (after asking) only while this page has
     * written nothing, since after that the key's latest step is this page's own.
     */
    async serverUndo() {
      if (log.length || wrote) {
        await undoLast();
        return;
      }
      if (ctx.ops.kind === 'local') {
        toast(await ctx.ops.undo());
        return;
      }
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
      ctx.onUndoLog?.();
      toast(describeServerUndo(change, before));
    },
  };

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
