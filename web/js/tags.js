// Tag colours: each tag's colour follows from its text alone (case and accents folded, as the
// tag filter matches), so a tag looks the same on every card, board and device with nothing
// stored. The palette (app.css, `.tag-c0` … `.tag-c7`) pairs a light ground with dark ink,
// every pair above 7:1 contrast.

const COLOURS = 8;

/** The palette class of a tag: FNV-1a of its folded text, modulo the palette. */
export function tagClass(text) {
  const folded = String(text || '').normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
  let hash = 0x811c9dc5;
  for (let i = 0; i < folded.length; i += 1) {
    hash ^= folded.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return `tag-c${hash % COLOURS}`;
}
