//! Looking into a data folder's store from the tests, on either engine: whether it is sound
//! (SQLite's `PRAGMA integrity_check`; PostgreSQL's `amcheck` over every B-tree index), its
//! live rows, and whether a store exists at all.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::harness::database_of;

/// Runs `f` with a client of the data folder's PostgreSQL database, off the async runtime.
fn with_database<T: Send + 'static>(
    url: String,
    f: impl FnOnce(&mut postgres::Client) -> T + Send + 'static,
) -> T {
    std::thread::spawn(move || {
        let mut client = postgres::Client::connect(&url, postgres::NoTls)
            .unwrap_or_else(|e| panic!("the test's database: {e}"));
        f(&mut client)
    })
    .join()
    .expect("the database check ran")
}

/// `"ok"` when the data folder's store is sound.
pub fn integrity(data: &Path) -> String {
    match database_of(data) {
        None => crate::crash::integrity(&data.join("workboard.db")),
        Some(url) => with_database(url, |c| {
            c.batch_execute("CREATE EXTENSION IF NOT EXISTS amcheck")
                .expect("amcheck");
            let indexes: Vec<String> = c
                .query(
                    "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
                     JOIN pg_am a ON a.oid = c.relam JOIN pg_namespace n ON n.oid = c.relnamespace
                     WHERE a.amname = 'btree' AND n.nspname = 'public'",
                    &[],
                )
                .expect("the indexes")
                .iter()
                .map(|r| r.get(0))
                .collect();
            assert!(!indexes.is_empty(), "the store has no indexes");
            for index in indexes {
                // The names come from the catalog itself.
                let check = format!("SELECT bt_index_check('{index}'::regclass, true)");
                if let Err(e) = c.batch_execute(&check) {
                    return format!("{index}: {e}");
                }
            }
            "ok".to_owned()
        }),
    }
}

/// The store's live rows of `records` (not in the bin): id → (kind, stored body).
pub fn live_rows(data: &Path) -> BTreeMap<String, (i64, Value)> {
    let rows: Vec<(String, i64, String)> = match database_of(data) {
        None => {
            let conn = crate::crash::open_read_only(&data.join("workboard.db"));
            let mut stmt = conn
                .prepare("SELECT id, kind, body FROM records WHERE bin_entry IS NULL")
                .expect("prepare records");
            stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .expect("query records")
                .map(|row| row.expect("a record row"))
                .collect()
        }
        Some(url) => with_database(url, |c| {
            c.query(
                "SELECT id, kind, body FROM records WHERE bin_entry IS NULL",
                &[],
            )
            .expect("query records")
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get(2)))
            .collect()
        }),
    };
    rows.into_iter()
        .map(|(id, kind, body)| {
            let body = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{id}: {e}"));
            (id, (kind, body))
        })
        .collect()
}

/// Whether the data folder's store exists (a SQLite file, or the schema in its database).
pub fn exists(data: &Path) -> bool {
    match database_of(data) {
        None => data.join("workboard.db").exists(),
        Some(url) => with_database(url, |c| {
            c.query_one("SELECT to_regclass('meta') IS NOT NULL", &[])
                .expect("the schema")
                .get(0)
        }),
    }
}
