//! The PostgreSQL schema: its migrations, numbered `.sql` files in `migrations/` (embedded),
//! numbered and named as SQLite's (`sqlite/migrations/`), and the runner that brings a
//! database up to `store::SCHEMA_VERSION`, the highest number. `0001_schema.sql` makes every
//! table; each later file brings one version. Each file past the version the database records
//! runs in its own transaction with the version it brings, all of it under an advisory lock,
//! so two nodes starting at once on an empty database do not both create it.
//!
//! Every step is SQL: PostgreSQL says `IF NOT EXISTS` of a column too, and no PostgreSQL
//! store was made before versions. The runner only reads where a database stands (0 without
//! a `meta` table) and refuses one whose schema is newer than this build knows.

use postgres::Client;

use crate::error::WriteError;
use crate::store::Engine;

/// The advisory lock that serialises schema changes across nodes (an arbitrary constant:
/// "workbord" in ASCII).
const SCHEMA_LOCK: i64 = 0x776f_726b_626f_7264;

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

/// Creates or migrates the schema; refuses a database whose schema is newer than this
/// build knows.
pub(super) fn upgrade(client: &mut Client) -> Result<(), WriteError> {
    client
        .execute("SELECT pg_advisory_lock($1)", &[&SCHEMA_LOCK])
        .db()?;
    let upgraded = migrate_to(client, crate::store::SCHEMA_VERSION);
    let unlocked = client.execute("SELECT pg_advisory_unlock($1)", &[&SCHEMA_LOCK]);
    upgraded?;
    unlocked.db()?;
    Ok(())
}

/// Runs each migration past the database's version, up to `target`.
fn migrate_to(client: &mut Client, target: i64) -> Result<(), WriteError> {
    let version = version(client)?;
    crate::store::check_schema_version(version)?;
    for (to, (_, sql)) in (1..=target)
        .zip(MIGRATIONS)
        .skip_while(|(to, _)| *to <= version)
    {
        let mut tx = client.transaction().db()?;
        tx.batch_execute(sql).db()?;
        tx.execute(
            "INSERT INTO meta (name, value) VALUES ('schema-version', $1)
             ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value",
            &[&to.to_string().into_bytes()],
        )
        .db()?;
        tx.commit().db()?;
    }
    Ok(())
}

/// The version the database records; 0 for a new one.
fn version(client: &mut Client) -> Result<i64, WriteError> {
    let fresh: bool = client
        .query_one("SELECT to_regclass('meta') IS NULL", &[])
        .db()?
        .get(0);
    if fresh {
        return Ok(0);
    }
    Ok(client
        .query_opt(
            "SELECT convert_from(value, 'UTF8') FROM meta WHERE name = 'schema-version'",
            &[],
        )
        .db()?
        .and_then(|r| r.get::<_, String>(0).parse().ok())
        .unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use postgres::NoTls;

    use super::*;

    #[test]
    fn every_file_of_the_folder_is_embedded_in_order() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/store/postgres/migrations");
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|f| f.unwrap().file_name().into_string().unwrap())
            .collect();
        files.sort();
        let listed: Vec<&str> = MIGRATIONS.iter().map(|(name, _)| *name).collect();
        assert_eq!(listed, files);
    }

    /// Runs `test` on a new database of the test server (`WORKBOARD_TEST_DATABASE`, as the
    /// HTTP tests' engines and nodes modules need; `source tests/pg.sh` starts one), by URL,
    /// and drops the database after.
    fn on_a_new_database(test: impl FnOnce(&str)) {
        let admin = std::env::var("WORKBOARD_TEST_DATABASE").expect(
            "WORKBOARD_TEST_DATABASE must name a PostgreSQL server (`source tests/pg.sh` starts a throwaway one)",
        );
        let mut server = Client::connect(&admin, NoTls).unwrap();
        let name = format!("wb_schema_{}", rand::random::<u64>());
        server
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .unwrap();
        let (base, _) = admin.rsplit_once('/').expect("a URL ending in /dbname");
        let url = format!("{base}/{name}");
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| test(&url)));
        server
            .batch_execute(&format!("DROP DATABASE {name} WITH (FORCE)"))
            .unwrap();
        if let Err(panic) = outcome {
            std::panic::resume_unwind(panic);
        }
    }

    #[test]
    fn a_database_at_version_4_upgrades_to_5_with_its_rows() {
        on_a_new_database(|url| {
            let mut client = Client::connect(url, NoTls).unwrap();
            migrate_to(&mut client, 4).unwrap();
            assert_eq!(version(&mut client).unwrap(), 4);
            client
                .batch_execute(
                    "INSERT INTO keys (account, id, digest, prefix, created_at, access, expires_at)
                         VALUES ('a_1', 'y_1', '\\x01', 'wb_abcde', 5, 'read', 99);
                     INSERT INTO idempotency VALUES
                         ('y_1', 'k1', 'a_1', '\\x01', 11, '{\"outcome\":\"saved\"}');",
                )
                .unwrap();
            drop(client);
            // The store opens as a node opens it.
            drop(super::super::PgStore::open(url, crate::store::Durability::Full).unwrap());
            let mut client = Client::connect(url, NoTls).unwrap();
            assert_eq!(version(&mut client).unwrap(), crate::store::SCHEMA_VERSION);
            let row = client
                .query_one(
                    "SELECT (SELECT access FROM keys), (SELECT result FROM idempotency)",
                    &[],
                )
                .unwrap();
            assert_eq!(row.get::<_, String>(0), "read");
            assert_eq!(row.get::<_, String>(1), "{\"outcome\":\"saved\"}");
        });
    }

    /// The tables and columns of a database, and its indexes, by name.
    fn shape(client: &mut Client) -> Vec<String> {
        client
            .query(
                "SELECT table_name || ' ' || column_name || ' ' || data_type
                     FROM information_schema.columns WHERE table_schema = 'public'
                 UNION ALL SELECT 'index ' || indexname FROM pg_indexes WHERE schemaname = 'public'
                 ORDER BY 1",
                &[],
            )
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect()
    }

    #[test]
    fn a_database_at_every_earlier_version_upgrades_to_the_shape_of_a_new_one() {
        let mut new = None;
        on_a_new_database(|url| {
            let mut client = Client::connect(url, NoTls).unwrap();
            upgrade(&mut client).unwrap();
            assert_eq!(version(&mut client).unwrap(), crate::store::SCHEMA_VERSION);
            new = Some(shape(&mut client));
        });
        for at in 1..crate::store::SCHEMA_VERSION {
            let new = new.clone().unwrap();
            on_a_new_database(move |url| {
                let mut client = Client::connect(url, NoTls).unwrap();
                migrate_to(&mut client, at).unwrap();
                assert_eq!(version(&mut client).unwrap(), at);
                upgrade(&mut client).unwrap();
                assert_eq!(version(&mut client).unwrap(), crate::store::SCHEMA_VERSION);
                assert_eq!(shape(&mut client), new, "from version {at}");
            });
        }
    }
}
