-- Version 1: every table and index. Each statement also fits a store made before versions
-- were numbered (it has no `schema-version` in `meta`, and starts here): a table or index it
-- already holds stays, one it lacks is made.

CREATE TABLE IF NOT EXISTS accounts (
    id TEXT PRIMARY KEY,
    rev INTEGER NOT NULL DEFAULT 0,
    last_stamp INTEGER NOT NULL DEFAULT 0,
    stored_bytes INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS allowance (
    key_id TEXT PRIMARY KEY,
    resets_at INTEGER NOT NULL,
    reads INTEGER NOT NULL,
    writes INTEGER NOT NULL
) WITHOUT ROWID;
-- A key's access and expiry come with version 2.
CREATE TABLE IF NOT EXISTS keys (
    id TEXT PRIMARY KEY,
    account TEXT NOT NULL,
    digest BLOB NOT NULL UNIQUE,
    label TEXT,
    prefix TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    last_used_at INTEGER,
    revoked_at INTEGER
);
CREATE INDEX IF NOT EXISTS keys_by_account ON keys(account);
CREATE TABLE IF NOT EXISTS records (
    account TEXT NOT NULL,
    id TEXT NOT NULL,
    kind INTEGER NOT NULL,
    project_id TEXT NOT NULL,
    column_id TEXT,
    parent_id TEXT,
    bin_entry TEXT,
    deleted_at INTEGER,
    position REAL NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (account, id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS records_by_project ON records(account, project_id, kind, position);
CREATE INDEX IF NOT EXISTS projects_by_position ON records(account, position) WHERE kind = 0;
CREATE INDEX IF NOT EXISTS records_by_column ON records(account, column_id, position) WHERE column_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS records_by_parent ON records(account, parent_id) WHERE parent_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS records_by_bin_entry ON records(account, bin_entry) WHERE bin_entry IS NOT NULL;
-- Stores made before `projects_by_position` indexed every record by kind and position: only
-- projects were ever looked up through it, and every card created or moved paid an entry.
DROP INDEX IF EXISTS records_by_kind;
CREATE TABLE IF NOT EXISTS bin (
    account TEXT NOT NULL,
    id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    head TEXT NOT NULL,
    deleted_at INTEGER NOT NULL,
    label TEXT NOT NULL,
    count INTEGER NOT NULL,
    key_id TEXT,
    PRIMARY KEY (account, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS items (
    account TEXT NOT NULL,
    id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    PRIMARY KEY (account, id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS items_by_task ON items(account, task_id);
CREATE TABLE IF NOT EXISTS markers (
    account TEXT NOT NULL,
    id TEXT NOT NULL,
    kind INTEGER NOT NULL,
    project_id TEXT NOT NULL,
    deleted_at INTEGER NOT NULL,
    PRIMARY KEY (account, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (
    name TEXT PRIMARY KEY,
    value BLOB NOT NULL
) WITHOUT ROWID;

-- Each key's last undo steps, oldest first by `seq`, in a table with rowids. A step holds a
-- record before and after (about a kilobyte): keyed by rowid, steps append at the end of the
-- table and their key is a small index; without rowids each step outgrew its page's share,
-- took an overflow page and split leaves as steps came and went (a PATCH wrote about one page
-- more). Stores made before versions may hold the table without rowids, so whatever is there
-- moves into a new one, steps kept (in a new store, an empty table).
CREATE TABLE IF NOT EXISTS undo (
    key_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    account TEXT NOT NULL,
    step TEXT NOT NULL,
    PRIMARY KEY (key_id, seq)
);
ALTER TABLE undo RENAME TO undo_before_versions;
CREATE TABLE undo (
    key_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    account TEXT NOT NULL,
    step TEXT NOT NULL,
    PRIMARY KEY (key_id, seq)
);
INSERT INTO undo (key_id, seq, account, step)
    SELECT key_id, seq, account, step FROM undo_before_versions;
DROP TABLE undo_before_versions;
