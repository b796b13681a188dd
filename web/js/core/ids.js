// Names a client makes itself: record ids for creates (so a record made offline can be
// edited before the server has seen it) and Idempotency-Keys for outbox entries.

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** A valid client-chosen id: the contract accepts `prefix` followed by 1 to 64 characters of
 * `[A-Za-z0-9_-]`. 22 random characters carry 132 bits, so an id already in use on the
 * server can only be one this client made (a create that landed before its reply was lost).
 * @param {'b_'|'c_'|'t_'|'k_'|'g_'|'m_'} prefix
 * @returns {string}
 */
export function newId(prefix) {
  const bytes = crypto.getRandomValues(new Uint8Array(22));
  let out = '';
  for (const b of bytes) out += ALPHABET[b & 63];
  return `${prefix}${out}`;
}

/** A random UUID (version 4) for an `Idempotency-Key`. `crypto.randomUUID` exists only in
 * secure contexts in browsers, so the bytes are formatted by hand where it is missing.
 * @returns {string}
 */
export function newKey() {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const hex = [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
