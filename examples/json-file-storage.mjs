// An outbox kept in a JSON file, for scripts under Node: queued writes survive the script
// being stopped, killed or run again. Each save writes a temporary file beside the real one
// and renames it over it, so a crash mid-save leaves the previous list whole.

import { readFile, rename, writeFile } from 'node:fs/promises';

/** @param {string} file @returns {import('../web/js/core/outbox.js').OutboxStorage} */
export function jsonFileStorage(file) {
  return {
    async load() {
      try {
        return JSON.parse(await readFile(file, 'utf8'));
      } catch (err) {
        if (err.code === 'ENOENT') return [];
        throw err;
      }
    },
    async save(entries) {
      const temp = `${file}.${process.pid}.tmp`;
      await writeFile(temp, JSON.stringify(entries));
      await rename(temp, file);
    },
  };
}
