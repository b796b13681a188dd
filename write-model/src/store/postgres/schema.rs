//! The PostgreSQL schema and its migrations, numbered as SQLite's are
//! (`store::SCHEMA_VERSION`). Start creates and migrates it under an advisory lock, so two
//! nodes starting at once on an empty database do not both create it.
//!
//! Every per-account table's key leads with the account id, so that the tables can be
//! distributed by account (Citus `create_distributed_table(..., 'account')`, or the ranges
//! of CockroachDB and YugabyteDB). `meta` holds a handful of values about the store itself
//! (a reference table there).

use postgres::Client;

use crate::error::WriteError;

/// The advisory lock that serialises schema changes across nodes (an arbitrary constant:
/// "workbord" in ASCII).
const SCHEMA_LOCK: i64 = 0x776f_726b_626f_7264;

/// Version 1: every table and index.
const SCHEMA: &str = "
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
";

/// The migrations after version 1, as `(version, SQL)`.
const MIGRATIONS: &[(i64, &str)] = &[
    (2, KEY_ACCESS_AND_EXPIRY),
    (3, NODES_MEET),
    (4, super::idempotency::TABLE),
    (5, REPLIES_APART),
];

/// Version 5 gives SQLite's table of remembered results rowids and keeps first replies in a
/// table of their own; PostgreSQL's table serves as it is (an UPDATE there writes a new row
/// version in place of growing one inside a b-tree), and nothing changes.
const REPLIES_APART: &str = "";

/// Version 2: what a key may do (`full` or `read`) and when it stops working; every existing
/// key keeps full access and never expires.
const KEY_ACCESS_AND_EXPIRY: &str = "
ALTER TABLE keys ADD COLUMN IF NOT EXISTS access TEXT NOT NULL DEFAULT 'full';
ALTER TABLE keys ADD COLUMN IF NOT EXISTS expires_at BIGINT;
";

/// Version 3: where nodes sharing the database meet. The change log, readable in order per
/// account; the live sockets' tickets, good on any node; allowance counters by key, which
/// each node reads back to learn what the others counted.
const NODES_MEET: &str = "
CREATE TABLE IF NOT EXISTS changes (
    account TEXT NOT NULL,
    rev BIGINT NOT NULL,
    stamp BIGINT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (account, rev)
);
CREATE TABLE IF NOT EXISTS tickets (
    account TEXT NOT NULL,
    digest BYTEA NOT NULL,
    key_id TEXT NOT NULL,
    expires_at BIGINT NOT NULL,
    PRIMARY KEY (account, digest)
);
CREATE INDEX IF NOT EXISTS tickets_by_digest ON tickets (digest);
CREATE INDEX IF NOT EXISTS allowance_by_key ON allowance (key_id);
";

/// Creates or migrates the schema; refuses a database whose schema is newer than this
/// build knows.
pub(super) fn upgrade(client: &mut Client) -> Result<(), WriteError> {
    client.execute("SELECT pg_advisory_lock($1)", &[&SCHEMA_LOCK])?;
    let upgraded = migrate(client);
    let unlocked = client.execute("SELECT pg_advisory_unlock($1)", &[&SCHEMA_LOCK]);
    upgraded?;
    unlocked?;
    Ok(())
}

fn migrate(client: &mut Client) -> Result<(), WriteError> {
    let fresh: bool = client
        .query_one("SELECT to_regclass('meta') IS NULL", &[])?
        .get(0);
    if fresh {
        let mut tx = client.transaction()?;
        tx.batch_execute(SCHEMA)?;
        for (_, sql) in MIGRATIONS {
            tx.batch_execute(sql)?;
        }
        set_version(&mut tx, crate::store::SCHEMA_VERSION)?;
        tx.commit()?;
        return Ok(());
    }
    let version: i64 = client
        .query_opt(
            "SELECT convert_from(value, 'UTF8') FROM meta WHERE name = 'schema-version'",
            &[],
        )?
        .and_then(|r| r.get::<_, String>(0).parse().ok())
        .unwrap_or(1);
    crate::store::check_schema_version(version)?;
    for (to, sql) in MIGRATIONS.iter().filter(|(to, _)| *to > version) {
        let mut tx = client.transaction()?;
        tx.batch_execute(sql)?;
        set_version(&mut tx, *to)?;
        tx.commit()?;
    }
    Ok(())
}

fn set_version(tx: &mut postgres::Transaction<'_>, version: i64) -> Result<(), WriteError> {
    tx.execute(
        "INSERT INTO meta (name, value) VALUES ('schema-version', $1)
         ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value",
        &[&version.to_string().into_bytes()],
    )?;
    Ok(())
}
