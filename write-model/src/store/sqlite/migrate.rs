//! The SQLite schema, and the upgrades of a store made by an earlier build, run when the
//! store opens.

use rusqlite::{Connection, OptionalExtension};

use crate::error::WriteError;

/// Every table and index, as a new store is made.
pub(super) const SCHEMA: &str = "
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
CREATE TABLE IF NOT EXISTS keys (
    id TEXT PRIMARY KEY,
    account TEXT NOT NULL,
    digest BLOB NOT NULL UNIQUE,
    label TEXT,
    prefix TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    last_used_at INTEGER,
    revoked_at INTEGER,
    access TEXT NOT NULL DEFAULT 'full',
    expires_at INTEGER
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
";

/// The schema versions this build knows, numbered as the PostgreSQL engine numbers its own
/// (`store::SCHEMA_VERSION`): version 1 is [`SCHEMA`].
const MIGRATIONS: &[(i64, Migration)] = &[
    (2, key_access_and_expiry),
    (3, nodes_meet),
    (4, super::idempotency::migrate),
    (5, super::idempotency::replies_apart),
];

/// A migration, run in its own transaction with the version it brings.
type Migration = fn(&Connection) -> Result<(), WriteError>;

/// Version 3 gives PostgreSQL where nodes meet (a change log, shared tickets, allowances by
/// key); a SQLite store has one node, and nothing to add.
fn nodes_meet(_: &Connection) -> Result<(), WriteError> {
    Ok(())
}

/// Brings a store of any earlier build, or a new empty file, up to the current schema; a
/// store whose schema is newer than this build knows is refused.
pub(super) fn upgrade(conn: &Connection) -> Result<(), WriteError> {
    conn.execute_batch(SCHEMA)?;
    conn.execute_batch(super::idempotency::TABLE)?;
    undo_as_rowid_table(conn)?;
    drop_whole_kind_index(conn)?;
    let version: i64 = conn
        .query_row(
            "SELECT value FROM meta WHERE name = 'schema-version'",
            [],
            |r| r.get::<_, Vec<u8>>(0),
        )
        .optional()?
        .and_then(|v| String::from_utf8(v).ok())
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    crate::store::check_schema_version(version)?;
    for (to, migrate) in MIGRATIONS.iter().filter(|(to, _)| *to > version) {
        conn.execute_batch("BEGIN IMMEDIATE")?;
        match migrate(conn).and_then(|()| set_version(conn, *to)) {
            Ok(()) => conn.execute_batch("COMMIT")?,
            Err(e) => {
                let _ = conn.execute_batch("ROLLBACK");
                return Err(e);
            }
        }
    }
    set_version(conn, crate::store::SCHEMA_VERSION)?;
    Ok(())
}

fn set_version(conn: &Connection, version: i64) -> Result<(), WriteError> {
    conn.execute(
        "INSERT OR REPLACE INTO meta (name, value) VALUES ('schema-version', ?1)",
        [version.to_string().into_bytes()],
    )?;
    Ok(())
}

/// Version 2 gives the keys of a store made before keys had an access and an expiry both
/// columns: every existing key keeps full access and never expires.
pub(super) fn key_access_and_expiry(conn: &Connection) -> Result<(), WriteError> {
    let columns: Vec<String> = conn
        .prepare("SELECT name FROM pragma_table_info('keys')")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let has = |name: &str| columns.iter().any(|c| c == name);
    if !has("access") {
        conn.execute_batch("ALTER TABLE keys ADD COLUMN access TEXT NOT NULL DEFAULT 'full';")?;
    }
    if !has("expires_at") {
        conn.execute_batch("ALTER TABLE keys ADD COLUMN expires_at INTEGER;")?;
    }
    Ok(())
}

/// Moves a store made before the undo table had rowids onto one that has them. A step holds
/// a record before and after (about a kilobyte): keyed by rowid, steps append at the end of
/// the table and their key is a small index; without rowids each step outgrew its page's
/// share, took an overflow page and split leaves as steps came and went (a PATCH wrote
/// about one page more).
pub(super) fn undo_as_rowid_table(conn: &Connection) -> Result<(), WriteError> {
    let sql: Option<String> = conn
        .query_row(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'undo'",
            [],
            |r| r.get(0),
        )
        .optional()?;
    if !sql.is_some_and(|s| s.contains("WITHOUT ROWID")) {
        conn.execute_batch(UNDO_TABLE)?;
        return Ok(());
    }
    conn.execute_batch(&format!(
        "BEGIN IMMEDIATE;
         ALTER TABLE undo RENAME TO undo_without_rowid;
         {UNDO_TABLE}
         INSERT INTO undo (key_id, seq, account, step)
             SELECT key_id, seq, account, step FROM undo_without_rowid;
         DROP TABLE undo_without_rowid;
         COMMIT;"
    ))?;
    tracing::info!("the undo table now has rowids");
    Ok(())
}

/// Drops the index of every record by kind and position that stores made before
/// `projects_by_position`: only projects were ever looked up through it, and every card
/// created or moved paid an entry in it.
pub(super) fn drop_whole_kind_index(conn: &Connection) -> Result<(), WriteError> {
    conn.execute_batch("DROP INDEX IF EXISTS records_by_kind;")?;
    Ok(())
}

/// Each key's last undo steps, oldest first by `seq`.
const UNDO_TABLE: &str = "CREATE TABLE IF NOT EXISTS undo (
    key_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    account TEXT NOT NULL,
    step TEXT NOT NULL,
    PRIMARY KEY (key_id, seq)
);";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_undo_table_without_rowids_moves_with_its_steps() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.db");
        {
            let old = Connection::open(&path).unwrap();
            old.execute_batch(
                "CREATE TABLE undo (key_id TEXT NOT NULL, seq INTEGER NOT NULL,
                     account TEXT NOT NULL, step TEXT NOT NULL,
                     PRIMARY KEY (key_id, seq)) WITHOUT ROWID;
                 INSERT INTO undo VALUES ('y_a', 1, 'a_1', '{\"one\":1}'), ('y_a', 2, 'a_1', '{\"two\":2}');",
            )
            .unwrap();
        }
        let conn = super::super::open_connection(&path, crate::store::Durability::Full).unwrap();
        let sql: String = conn
            .query_row(
                "SELECT sql FROM sqlite_master WHERE name = 'undo'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert!(!sql.contains("WITHOUT ROWID"), "{sql}");
        let steps: Vec<(i64, String)> = conn
            .prepare("SELECT seq, step FROM undo WHERE key_id = 'y_a' ORDER BY seq")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            steps,
            vec![(1, "{\"one\":1}".into()), (2, "{\"two\":2}".into())]
        );
        // Opening again leaves it be; the primary key still refuses a second step 2.
        drop(conn);
        let conn = super::super::open_connection(&path, crate::store::Durability::Full).unwrap();
        assert!(
            conn.execute("INSERT INTO undo VALUES ('y_a', 2, 'a_1', '{}')", [])
                .is_err()
        );
    }

    #[test]
    fn keys_of_an_older_store_gain_full_access_and_no_expiry() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.db");
        {
            let old = Connection::open(&path).unwrap();
            old.execute_batch(
                "CREATE TABLE keys (id TEXT PRIMARY KEY, account TEXT NOT NULL,
                     digest BLOB NOT NULL UNIQUE, label TEXT, prefix TEXT NOT NULL,
                     created_at INTEGER NOT NULL, last_used_at INTEGER, revoked_at INTEGER);
                 INSERT INTO keys (id, account, digest, prefix, created_at)
                     VALUES ('y_old', 'a_1', x'01', 'wb_abcde', 5);",
            )
            .unwrap();
        }
        let conn = super::super::open_connection(&path, crate::store::Durability::Full).unwrap();
        let (access, expires): (String, Option<i64>) = conn
            .query_row(
                "SELECT access, expires_at FROM keys WHERE id = 'y_old'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!((access.as_str(), expires), ("full", None));
        // Opening again changes nothing, and new keys take both columns.
        drop(conn);
        let conn = super::super::open_connection(&path, crate::store::Durability::Full).unwrap();
        conn.execute(
            "INSERT INTO keys (id, account, digest, prefix, created_at, access, expires_at)
                 VALUES ('y_new', 'a_1', x'02', 'wb_fghij', 6, 'read', 99)",
            [],
        )
        .unwrap();
    }

    #[test]
    fn the_index_of_every_record_by_kind_gives_way_to_one_of_projects() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.db");
        {
            let old = super::super::open_connection(&path, crate::store::Durability::Full).unwrap();
            old.execute_batch(
                "CREATE INDEX records_by_kind ON records(account, kind, position);
                 INSERT INTO records (account, id, kind, project_id, position, body)
                     VALUES ('a_1', 'p_1', 0, 'p_1', 1.0, '{}'), ('a_1', 't_1', 2, 'p_1', 1.0, '{}');",
            )
            .unwrap();
        }
        let conn = super::super::open_connection(&path, crate::store::Durability::Full).unwrap();
        let indexes: Vec<String> = conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'records' ORDER BY name")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(
            !indexes.iter().any(|i| i == "records_by_kind"),
            "{indexes:?}"
        );
        // Projects are found through the new index.
        let entries: i64 = conn
            .query_row(
                "SELECT count(*) FROM records INDEXED BY projects_by_position WHERE account = 'a_1' AND kind = 0",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(entries, 1);
    }
}
