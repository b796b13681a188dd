// The HTTP interface: one fetch wrapper that adds the key, turns every failure into an
// ApiError with a sentence a person can read, and remembers the allowance headers.

export class ApiError extends Error {
  constructor(status, body, message) {
    super(message);
    this.status = status; // 0 when the server could not be reached
    this.body = body || {};
  }

  get isConflict() {
    return this.status === 409 && 'field' in this.body;
  }
}

/** A guarded value: the write lands only while the field still holds `before`. */
export function guarded(before, after) {
  return { before, after };
}

/** A sentence a person can read for a status and its error envelope. */
export function readable(status, body) {
  const said = body && typeof body.error === 'string' ? body.error : '';
  switch (status) {
    case 0:
      return 'The server could not be reached. Check the connection and try again; nothing you typed was lost.';
    case 400:
      return `The server could not read the request${said ? `: ${said}` : ''}.`;
    case 401:
      return 'The key is unknown, revoked or expired. Paste a valid key to continue.';
    case 403:
      return body && body.code === 'read_only_key'
        ? 'This key is read-only: it can show the boards but not change them.'
        : 'The server refused the request (no key was sent).';
    case 404:
      return 'That item no longer exists; it may have been deleted on another device.';
    case 409:
      return said || 'Someone changed this on another device.';
    case 413:
      return 'The account storage is full. Delete or purge something, then try again.';
    case 422:
      return said ? `Not saved: ${said}` : 'Not saved: a value was not accepted.';
    case 429: {
      if (body && body.resetsAt) {
        const at = new Date(body.resetsAt).toLocaleString();
        return `This key has used today's requests. They reset at ${at}.`;
      }
      return said || 'Too many requests; wait a moment and try again.';
    }
    case 503:
      return said || 'The server is read-only right now; try again later.';
    default:
      return said ? `The server answered ${status}: ${said}` : `The server answered ${status}.`;
  }
}

/** Every request of a session goes through one client bound to its key. */
export function createClient(key, { onAllowance } = {}) {
  async function request(method, path, body) {
    const headers = { Authorization: `Bearer ${key}` };
    const init = { method, headers, cache: 'no-store' };
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    let res;
    try {
      res = await fetch(`/api/v1${path}`, init);
    } catch {
      throw new ApiError(0, null, readable(0, null));
    }
    const remaining = res.headers.get('ratelimit-remaining');
    if (remaining !== null && onAllowance) onAllowance(Number(remaining));
    const text = await res.text();
    let data = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch {
      data = null;
    }
    if (!res.ok) throw new ApiError(res.status, data, readable(res.status, data));
    return { data, text, res };
  }

  return {
    get: async (path) => (await request('GET', path)).data,
    post: async (path, body) => (await request('POST', path, body ?? {})).data,
    patch: async (path, body) => (await request('PATCH', path, body)).data,
    del: async (path) => (await request('DELETE', path)).data,
    /** A file to save: its text and the name the server suggests. */
    async download(path) {
      const { text, res } = await request('GET', path);
      const disposition = res.headers.get('content-disposition') || '';
      const name = /filename="([^"]+)"/.exec(disposition);
      return { text, filename: name ? name[1] : 'workboard-export.json' };
    },
  };
}

/** A client-chosen id (the contract accepts `prefix` + 1..64 of [A-Za-z0-9_-]), so a retried
 * create is answered with the record it already made instead of a duplicate. */
export function newId(prefix) {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  let out = '';
  for (const b of bytes) out += alphabet[b & 63];
  return `${prefix}${out}`;
}
