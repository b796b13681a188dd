-- Version 1: every table and index. Every per-account table's key leads with the account id,
-- so that the tables can be distributed by account (Citus `create_distributed_table(...,
-- 'account')`, or the ranges of CockroachDB and YugabyteDB). `meta` holds a handful of values
-- about the store itself (a reference table there).

CREATE TABLE IF NOT EXISTS meta (
    name TEXT PRIMARY KEY,
    value BYTEA NOT NULL
);
CREATE TABLE IF NOT EXISTS accounts (
    id TEXT PRIMARY KEY,
    rev BIGINT NOT NULL DEFAULT 0,
    last_stamp BIGINT NOT NULL DEFAULT 0,
    stored_bytes BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS keys (
    account TEXT NOT NULL,
    id TEXT NOT NULL,
    digest BYTEA NOT NULL,
    label TEXT,
    prefix TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    last_used_at BIGINT,
    revoked_at BIGINT,
    PRIMARY KEY (account, id)
);
CREATE INDEX IF NOT EXISTS keys_by_id ON keys (id);
CREATE INDEX IF NOT EXISTS keys_by_digest ON keys (digest);
CREATE TABLE IF NOT EXISTS allowance (
    account TEXT NOT NULL,
    key_id TEXT NOT NULL,
    resets_at BIGINT NOT NULL,
    reads BIGINT NOT NULL,
    writes BIGINT NOT NULL,
    PRIMARY KEY (account, key_id)
);
CREATE TABLE IF NOT EXISTS records (
    account TEXT NOT NULL,
    id TEXT NOT NULL,
    kind BIGINT NOT NULL,
    project_id TEXT NOT NULL,
    column_id TEXT,
    parent_id TEXT,
    bin_entry TEXT,
    deleted_at BIGINT,
    position DOUBLE PRECISION NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (account, id)
);
CREATE INDEX IF NOT EXISTS records_by_project ON records (account, project_id, kind, position);
CREATE INDEX IF NOT EXISTS projects_by_position ON records (account, position) WHERE kind = 0;
CREATE INDEX IF NOT EXISTS records_by_column ON records (account, column_id, position) WHERE column_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS records_by_parent ON records (account, parent_id) WHERE parent_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS records_by_bin_entry ON records (account, bin_entry) WHERE bin_entry IS NOT NULL;
CREATE TABLE IF NOT EXISTS bin (
    account TEXT NOT NULL,
    id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    kind TEXT NOT NULL,
    head TEXT NOT NULL,
    deleted_at BIGINT NOT NULL,
    label TEXT NOT NULL,
    count BIGINT NOT NULL,
    key_id TEXT,
    PRIMARY KEY (account, id)
);
CREATE INDEX IF NOT EXISTS bin_by_seq ON bin (account, seq);
CREATE TABLE IF NOT EXISTS items (
    account TEXT NOT NULL,
    id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    PRIMARY KEY (account, id)
);
CREATE INDEX IF NOT EXISTS items_by_task ON items (account, task_id);
CREATE TABLE IF NOT EXISTS markers (
    account TEXT NOT NULL,
    id TEXT NOT NULL,
    kind BIGINT NOT NULL,
    project_id TEXT NOT NULL,
    deleted_at BIGINT NOT NULL,
    PRIMARY KEY (account, id)
);
CREATE TABLE IF NOT EXISTS undo (
    account TEXT NOT NULL,
    key_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    step TEXT NOT NULL,
    PRIMARY KEY (account, key_id, seq)
);
CREATE INDEX IF NOT EXISTS undo_by_key ON undo (key_id, seq);
