// How long to wait before trying again, for the socket's reconnects and the outbox's resends.

/**
 * @typedef {object} Backoff
 * @property {number} [base]  first delay in ms (default 1000)
 * @property {number} [max]   ceiling in ms (default 30000)
 */

/** The delay before try number `attempt` (0-based): base, 2×base, 4×base … up to `max`, each
 * spread by ±25% so that many clients cut off together do not come back together.
 * @param {number} attempt
 * @param {Backoff} [backoff]
 * @param {() => number} [random] a number in [0, 1)
 * @returns {number} ms
 */
export function backoffDelay(attempt, { base = 1000, max = 30000 } = {}, random = Math.random) {
  return Math.min(max, base * 2 ** Math.min(attempt, 30)) * (0.75 + random() * 0.5);
}
