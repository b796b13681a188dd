//! The SQLite schema: its migrations, numbered `.sql` files in `migrations/` (embedded),
//! numbered and named as PostgreSQL's (`postgres/migrations/`), and the runner that brings a
//! store up to `store::SCHEMA_VERSION`, the highest number, when it opens. `0001_schema.sql`
//! makes every table; each later file brings one version. Each file past the version the
//! store records runs in its own transaction with the version it brings; a store whose
//! schema is newer than this build knows is refused.
//!
//! Two things stay Rust, because SQLite's SQL cannot say them:
//! - Where a store stands. A new file has no `meta` table to hold a version, and a store made
//!   before versions were numbered has none in it; both start at 0, and every statement of
//!   `0001_schema.sql` fits both: it makes what is missing, moves an undo table without
//!   rowids onto one with them, and drops the old index of every record by kind.
//! - Version 2, the keys' `access` and `expires_at` ([`key_access_and_expiry`]). SQLite's
//!   `ADD COLUMN` has no `IF NOT EXISTS`, a table cannot be copied with columns it may lack,
//!   and stores made before versions differ: builds of one branch gave keys both columns
//!   without recording a version. So the step looks at the table first; its file says so.
//!
//! Version 5 is plain SQL: version 4 always made the table it moves (nothing else makes it).

use rusqlite::{Connection, OptionalExtension};

use crate::error::WriteError;
use crate::store::Engine;

/// `(file name, SQL)` of each file in `migrations/`, embedded in the build.
macro_rules! migrations {
    ($($name:literal),* $(,)?) => {
        &[$(($name, include_str!(concat!("migrations/", $name)))),*]
    };
}

/// The migrations in order: version N is the Nth.
const MIGRATIONS: &[(&str, &str)] = migrations![
    "0001_schema.sql",
    "0002_key_access_and_expiry.sql",
    "0003_nodes_meet.sql",
    "0004_idempotency.sql",
    "0005_replies_apart.sql",
    "0006_rows_age_by_rowid.sql",
];

/// The versions whose work on SQLite is Rust (see the module doc), run after their file.
const IN_RUST: &[(i64, Step)] = &[(2, key_access_and_expiry)];

/// A version's work in Rust, inside its transaction.
type Step = fn(&Connection) -> Result<(), WriteError>;

/// Brings a store of any earlier build, or a new empty file, up to the current schema; a
/// store whose schema is newer than this build knows is refused.
pub(super) fn upgrade(conn: &Connection) -> Result<(), WriteError> {
    migrate_to(conn, crate::store::SCHEMA_VERSION)
}

/// Runs each migration past the store's version, up to `target`.
fn migrate_to(conn: &Connection, target: i64) -> Result<(), WriteError> {
    let version = version(conn)?;
    crate::store::check_schema_version(version)?;
    for (to, (_, sql)) in (1..=target)
        .zip(MIGRATIONS)
        .skip_while(|(to, _)| *to <= version)
    {
        conn.execute_batch("BEGIN IMMEDIATE").db()?;
        match migrate(conn, to, sql) {
            Ok(()) => conn.execute_batch("COMMIT").db()?,
            Err(e) => {
                let _ = conn.execute_batch("ROLLBACK");
                return Err(e);
            }
        }
    }
    Ok(())
}

/// One version: its file, its Rust step if it has one, and the version recorded.
fn migrate(conn: &Connection, to: i64, sql: &str) -> Result<(), WriteError> {
    conn.execute_batch(sql).db()?;
    for (_, step) in IN_RUST.iter().filter(|(version, _)| *version == to) {
        step(conn)?;
    }
    conn.execute(
        "INSERT OR REPLACE INTO meta (name, value) VALUES ('schema-version', ?1)",
        [to.to_string().into_bytes()],
    )
    .db()?;
    Ok(())
}

/// The version the store records; 0 for a new file or a store made before versions.
fn version(conn: &Connection) -> Result<i64, WriteError> {
    let has_meta: bool = conn
        .query_row(
            "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'meta'",
            [],
            |r| r.get(0),
        )
        .db()?;
    if !has_meta {
        return Ok(0);
    }
    Ok(conn
        .query_row(
            "SELECT value FROM meta WHERE name = 'schema-version'",
            [],
            |r| r.get::<_, Vec<u8>>(0),
        )
        .optional()
        .db()?
        .and_then(|v| String::from_utf8(v).ok())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0))
}

/// Version 2 gives the keys of a store made before keys had an access and an expiry both
/// columns: every existing key keeps full access and never expires.
fn key_access_and_expiry(conn: &Connection) -> Result<(), WriteError> {
    let columns: Vec<String> = conn
        .prepare("SELECT name FROM pragma_table_info('keys')")
        .db()?
        .query_map([], |r| r.get(0))
        .db()?
        .collect::<Result<_, _>>()
        .db()?;
    let has = |name: &str| columns.iter().any(|c| c == name);
    if !has("access") {
        conn.execute_batch("ALTER TABLE keys ADD COLUMN access TEXT NOT NULL DEFAULT 'full';")
            .db()?;
    }
    if !has("expires_at") {
        conn.execute_batch("ALTER TABLE keys ADD COLUMN expires_at INTEGER;")
            .db()?;
    }
    Ok(())
}

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
            // A store made before versions: the index, and no version in `meta`.
            let old = super::super::open_connection(&path, crate::store::Durability::Full).unwrap();
            old.execute_batch(
                "CREATE INDEX records_by_kind ON records(account, kind, position);
                 INSERT INTO records (account, id, kind, project_id, position, body)
                     VALUES ('a_1', 'p_1', 0, 'p_1', 1.0, '{}'), ('a_1', 't_1', 2, 'p_1', 1.0, '{}');
                 DROP TABLE idempotency_replies;
                 DROP TABLE idempotency;
                 DELETE FROM meta;",
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

    /// The file names in an engine's `migrations/` folder, in order.
    fn files_of(engine: &str) -> Vec<String> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("src/store")
            .join(engine)
            .join("migrations");
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|f| f.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn both_engines_number_their_migrations_alike_up_to_the_schema_version() {
        let files = files_of("sqlite");
        assert_eq!(files, files_of("postgres"));
        for (number, name) in (1..).zip(&files) {
            assert!(
                name.starts_with(&format!("{number:04}_")) && name.ends_with(".sql"),
                "{name} is not migration {number}"
            );
        }
        assert_eq!(files.len() as i64, crate::store::SCHEMA_VERSION);
        // Every file is embedded, in order (PostgreSQL's list is held to its folder there).
        let listed: Vec<&str> = MIGRATIONS.iter().map(|(name, _)| *name).collect();
        assert_eq!(listed, files);
    }

    /// The tables and columns of a store, and its indexes and triggers, by name.
    fn shape(conn: &Connection) -> Vec<String> {
        conn.prepare(
            "SELECT m.type || ' ' || m.name || coalesce(' ' || p.name, '')
             FROM sqlite_master m LEFT JOIN pragma_table_info(m.name) p ON m.type = 'table'
             ORDER BY 1",
        )
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
    }

    #[test]
    fn a_store_at_every_earlier_version_upgrades_to_the_shape_of_a_new_one() {
        let dir = tempfile::tempdir().unwrap();
        let new = super::super::open_connection(
            &dir.path().join("new.db"),
            crate::store::Durability::Full,
        )
        .unwrap();
        assert_eq!(version(&new).unwrap(), crate::store::SCHEMA_VERSION);
        for at in 0..crate::store::SCHEMA_VERSION {
            let path = dir.path().join(format!("at-{at}.db"));
            {
                let old = Connection::open(&path).unwrap();
                migrate_to(&old, at).unwrap();
                assert_eq!(version(&old).unwrap(), at);
            }
            let conn =
                super::super::open_connection(&path, crate::store::Durability::Full).unwrap();
            assert_eq!(version(&conn).unwrap(), crate::store::SCHEMA_VERSION);
            assert_eq!(shape(&conn), shape(&new), "from version {at}");
        }
    }

    #[test]
    fn a_store_at_version_4_upgrades_to_5_with_its_rows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v4.db");
        {
            let old = Connection::open(&path).unwrap();
            migrate_to(&old, 4).unwrap();
            old.execute_batch(
                "INSERT INTO keys (id, account, digest, prefix, created_at, access, expires_at)
                     VALUES ('y_1', 'a_1', x'01', 'wb_abcde', 5, 'read', 99);
                 INSERT INTO records (account, id, kind, project_id, position, body)
                     VALUES ('a_1', 'p_1', 0, 'p_1', 1.0, '{}');
                 INSERT INTO undo VALUES ('y_1', 1, 'a_1', '{\"one\":1}');
                 INSERT INTO idempotency VALUES
                     ('y_1', 'k2', 'a_1', x'02', 12, '{\"outcome\":\"later\"}'),
                     ('y_1', 'k1', 'a_1', x'01', 11, '{\"outcome\":\"saved\"}');",
            )
            .unwrap();
            let sql: String = old
                .query_row(
                    "SELECT sql FROM sqlite_master WHERE name = 'idempotency'",
                    [],
                    |r| r.get(0),
                )
                .unwrap();
            assert!(sql.contains("WITHOUT ROWID"), "{sql}");
        }
        let conn = super::super::open_connection(&path, crate::store::Durability::Full).unwrap();
        assert_eq!(version(&conn).unwrap(), crate::store::SCHEMA_VERSION);
        let kept: (String, i64, i64, i64) = conn
            .query_row(
                "SELECT (SELECT access FROM keys), (SELECT count(*) FROM records),
                        (SELECT count(*) FROM undo), (SELECT count(*) FROM idempotency)",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .unwrap();
        assert_eq!(kept, ("read".into(), 1, 1, 2));
        // Rows take rowids oldest first (the order they age in since version 6).
        let rows: Vec<(i64, String)> = conn
            .prepare("SELECT id, idem_key FROM idempotency ORDER BY id")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(rows, vec![(1, "k1".into()), (2, "k2".into())]);
    }
}
