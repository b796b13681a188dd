// The wire: one request function bound to a server and a key, over an injected `fetch`.
// Every failure becomes a SyncError carrying the status (0 when the server could not be
// reached) and the error envelope, so callers decide by status, never by message.

/** A refused or failed request. */
export class SyncError extends Error {
  /**
   * @param {number} status 0 when no reply arrived
   * @param {any} body the reply's JSON (`{ok:false, error, code, field?, current?}`), or {}
   * @param {string} message
   */
  constructor(status, body, message) {
    super(message);
    this.name = 'SyncError';
    this.status = status;
    this.body = body || {};
  }

  /** A guarded write found another value: the reply names `field` and its `current` value. */
  get isConflict() {
    return this.status === 409 && typeof this.body.field === 'string';
  }
}

/**
 * @typedef {object} Reply
 * @property {number} status
 * @property {any} data the reply's JSON, or null
 * @property {boolean} replayed the server answered a remembered reply (`Idempotent-Replayed: true`)
 */

/**
 * @typedef {object} HttpOptions
 * @property {string} baseUrl   the server, e.g. `http://127.0.0.1:8080` (no `/api/v1`)
 * @property {string} key       a bearer key (`wb_...`)
 * @property {typeof fetch} [fetch]
 */

/** @param {HttpOptions} options */
export function createHttp({ baseUrl, key, fetch: fetchImpl = globalThis.fetch }) {
  const base = String(baseUrl).replace(/\/+$/, '');

  /**
   * @param {string} method
   * @param {string} path under `/api/v1`, with its query
   * @param {any} [body]
   * @param {{idempotencyKey?: string}} [options]
   * @returns {Promise<Reply>} resolves for 2xx, rejects with a SyncError otherwise
   */
  async function request(method, path, body, { idempotencyKey } = {}) {
    /** @type {Record<string, string>} */
    const headers = { Authorization: `Bearer ${key}` };
    /** @type {RequestInit} */
    const init = { method, headers, cache: 'no-store' };
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    if (idempotencyKey) headers['Idempotency-Key'] = idempotencyKey;
    let res;
    let text;
    try {
      res = await fetchImpl(`${base}/api/v1${path}`, init);
      text = await res.text();
    } catch (err) {
      throw new SyncError(0, null, `The server could not be reached (${err && err.message ? err.message : err}).`);
    }
    let data = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch {
      data = null;
    }
    if (!res.ok) {
      const said = data && typeof data.error === 'string' ? data.error : text.slice(0, 200);
      throw new SyncError(res.status, data, `${method} ${path.split('?')[0]} answered ${res.status}: ${said}`);
    }
    return { status: res.status, data, replayed: res.headers.get('idempotent-replayed') === 'true' };
  }

  return {
    baseUrl: base,
    request,
    get: async (path) => (await request('GET', path)).data,
    post: async (path, body) => (await request('POST', path, body ?? {})).data,
  };
}
