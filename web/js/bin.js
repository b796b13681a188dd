// The recycle bin: the account's last deletions (`GET /bin`; how many, the server's
// `recoverable-deletions`), newest first, each with a restore button.

import { h, showError, toast, formatTime, mount } from './ui.js';
import { limit } from './rules.js';

export function createBin(ctx) {
  const dialog = document.getElementById('bin-dialog');
  const list = h('ul', { class: 'bin-list' });
  const note = h('p', { class: 'muted' });

  async function draw() {
    let entries;
    try {
      entries = await ctx.ops.bin();
    } catch (err) {
      showError(err);
      return;
    }
    const kept = limit('recoverable-deletions');
    note.textContent = entries.length
      ? `The last ${kept} deletions can be restored; older ones are gone for good.`
      : `The recycle bin is empty. Deleted cards, lists and boards wait here (the last ${kept}), ready to be restored.`;
    mount(list, ...entries.map((entry) => h('li', {},
      h('span', { class: ['pill', `kind-${entry.kind}`], text: entry.kind }),
      h('span', { class: 'bin-label', text: entry.label }),
      entry.count > 1 && h('span', { class: 'muted', text: `${entry.count} items` }),
      h('time', { class: 'muted', text: formatTime(entry.deletedAt) }),
      h('button', { type: 'button', class: 'small', text: 'Restore', on: { click: async (event) => {
        event.currentTarget.disabled = true;
        try {
          await ctx.ops.restore(entry.id);
          ctx.undoLog.restoredFromBin(entry.kind, entry.label);
          toast(`Restored “${entry.label}”.`);
        } catch (err) {
          showError(err);
        }
        draw();
      } } }))));
  }

  mount(dialog, h('div', { class: 'bin' },
    h('header', { class: 'dialog-head' },
      h('h2', { id: 'bin-title', text: 'Recycle bin' }),
      h('button', { type: 'button', class: 'icon-button', 'aria-label': 'Close', text: '×', on: { click: () => dialog.close() } })),
    note, list));

  return {
    async show() {
      mount(list);
      note.textContent = 'Loading…';
      dialog.showModal();
      await draw();
    },
  };
}
