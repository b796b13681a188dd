// The card editor's Repeat control: "never", or "every N days/weeks/months/years, from the
// deadline or from completion" (the card's `repeat`, null or {every, unit, from}). It owns
// the controls and their words; the editor (card.js) saves what it answers as a guarded
// edit like any field's, and a refusal (a 422, such as "from the deadline" on a card with
// none) is said here, under the control where the edit was made.

import { h, setText } from './ui.js';
import { REPEAT_EVERY, REPEAT_FROM, REPEAT_UNITS } from './rules.js';

const FROM_WORDS = { deadline: 'from the deadline', completion: 'from completion' };

/** A rule in words: "Repeats every 2 weeks from the deadline" (the tile's mark says it). */
export const repeatWords = (r) => `Repeats every ${r.every === 1 ? r.unit : `${r.every} ${r.unit}s`} from ${r.from === 'deadline' ? 'the deadline' : 'completion'}`;

/** Whether two `repeat` values say the same (null, or the same rule). */
export const sameRepeat = (a, b) => (a ?? null) === (b ?? null)
  || (Boolean(a) && Boolean(b) && a.every === b.every && a.unit === b.unit && a.from === b.from);

/**
 * The control. `save(value)` writes a new `repeat` (null to clear it); `task()` is the card
 * as now held (a new rule starts from its deadline when it has one).
 * @returns {{el: HTMLElement, update(value): void, error(err): void}}
 */
export function repeatField({ save, task }) {
  const mode = h('select', { 'aria-label': 'Repeat' },
    h('option', { value: '', text: 'Never' }), h('option', { value: 'every', text: 'Every…' }));
  const every = h('input', { type: 'number', min: REPEAT_EVERY.min, max: REPEAT_EVERY.max, step: 1, inputmode: 'numeric', class: 'repeat-every', 'aria-label': 'Repeat every how many' });
  const unit = h('select', { class: 'repeat-unit', 'aria-label': 'Repeat unit' }, REPEAT_UNITS.map((u) => h('option', { value: u, text: `${u}s` })));
  const from = h('select', { class: 'repeat-from', 'aria-label': 'Repeat from' },
    REPEAT_FROM.map((f) => h('option', { value: f, text: FROM_WORDS[f] })));
  const message = h('p', { class: 'error field-error', role: 'status' });
  const rule = h('span', { class: 'repeat-rule' }, every, unit, from);
  const el = h('div', { class: 'field repeat-field', role: 'group', 'aria-label': 'Repeat' },
    h('span', { 'aria-hidden': 'true', text: 'Repeat' }), h('span', { class: 'repeat-controls' }, mode, rule), message);

  /** The rule the controls show, or null for "never". */
  const read = () => (mode.value === '' ? null
    : { every: Number(every.value), unit: unit.value, from: from.value });
  const plural = (n) => {
    for (const option of unit.options) setText(option, n === 1 ? option.value : `${option.value}s`);
  };
  // One save at a time: each is guarded by the value the last one wrote, so a second change
  // made before the first's reply (Every…, then a unit) waits for it instead of conflicting.
  let saving = Promise.resolve();
  const changed = () => {
    message.textContent = '';
    if (mode.value === 'every' && rule.hidden) {
      // A new rule: weekly, from the deadline when the card has one.
      every.value = '1';
      unit.value = 'week';
      from.value = task().deadline ? 'deadline' : 'completion';
    }
    rule.hidden = mode.value === '';
    plural(Number(every.value));
    const value = read();
    saving = saving.then(() => save(value), () => save(value));
  };
  for (const control of [mode, every, unit, from]) control.addEventListener('change', changed);
  every.addEventListener('input', () => plural(Number(every.value)));
  every.addEventListener('keydown', (event) => {
    if (event.key === 'Enter') {
      event.preventDefault();
      changed();
    }
  });

  return {
    el,
    /** Shows `value` (the card's rule, or the one not saved yet), leaving a number being typed. */
    update(value) {
      mode.value = value ? 'every' : '';
      rule.hidden = !value;
      if (!value) return;
      if (document.activeElement !== every) every.value = String(value.every);
      unit.value = value.unit;
      from.value = value.from;
      plural(Number(every.value));
    },
    /** A refusal of the last save, said under the control (null clears it). */
    error(err) {
      message.textContent = err ? err.message : '';
    },
  };
}
