//! Waiting for what the server does by itself: a background pass, a connection's close
//! noticed, a periodic save landing in the store, a line in its log. None of these answers
//! a request a test could await, so each wait asks again until the thing has happened (every
//! ask a real observation: a reply, the store, the log) and fails naming it past a bound
//! that is generous, since a slow machine only makes the wait longer, never wrong. A test
//! never sleeps for a guessed time when one of these exists.

use std::time::{Duration, Instant};

use crate::harness::{Server, database_of};

/// How long a wait lets pass between two asks: short enough not to slow a test, long
/// enough not to busy the server it watches.
const ASK_EVERY: Duration = Duration::from_millis(20);

/// Asks `check` until it answers `Ok`, and answers that; fails naming `what`, and what the
/// last ask saw (its `Err`), if `bound` passes first.
pub async fn until<T, E: std::fmt::Debug>(
    what: &str,
    bound: Duration,
    check: impl AsyncFnMut() -> Result<T, E>,
) -> T {
    within(bound, check)
        .await
        .unwrap_or_else(|seen| panic!("{what}: not within {bound:?}; last seen: {seen:?}"))
}

/// Asks `check` until it answers `Ok`; past `bound`, answers what the last ask saw, for a
/// caller whose own assertions say best what went wrong.
pub async fn within<T, E>(
    bound: Duration,
    mut check: impl AsyncFnMut() -> Result<T, E>,
) -> Result<T, E> {
    let deadline = Instant::now() + bound;
    loop {
        match check().await {
            Ok(found) => return Ok(found),
            Err(seen) if Instant::now() >= deadline => return Err(seen),
            Err(_) => tokio::time::sleep(ASK_EVERY).await,
        }
    }
}

impl Server {
    /// The log, once it holds every one of `lines` (each a fragment of a line).
    pub async fn log_shows(&self, lines: &[&str], within: Duration) -> String {
        let what = format!("the log shows {lines:?}");
        until(&what, within, async || {
            let log = self.log();
            let missing: Vec<&&str> = lines.iter().filter(|l| !log.contains(*l)).collect();
            if missing.is_empty() {
                Ok(log)
            } else {
                Err(format!("no {missing:?}"))
            }
        })
        .await
    }

    /// One number the store holds now, read by `sql` (one row, one integer column; no row
    /// reads as `None`) from this server's SQLite file or PostgreSQL database, beside the
    /// running server. For what the server writes by itself and no route shows, such as the
    /// periodic save of allowance counters and last-use times.
    pub fn stored_number(&self, sql: &str) -> Option<i64> {
        let sql = sql.to_owned();
        match database_of(&self.data_dir()) {
            Some(url) => std::thread::spawn(move || {
                let mut db = postgres::Client::connect(&url, postgres::NoTls)
                    .unwrap_or_else(|e| panic!("the test's database: {e}"));
                let row = db
                    .query_opt(&sql, &[])
                    .unwrap_or_else(|e| panic!("{sql}: {e}"));
                row.and_then(|r| r.get::<_, Option<i64>>(0))
            })
            .join()
            .expect("the query ran"),
            None => {
                let db = rusqlite::Connection::open(self.data_dir().join("workboard.db"))
                    .expect("the store's file");
                db.busy_timeout(Duration::from_secs(5)).expect("a timeout");
                db.query_row(&sql, [], |r| r.get::<_, Option<i64>>(0))
                    .unwrap_or_else(|e| match e {
                        rusqlite::Error::QueryReturnedNoRows => None,
                        e => panic!("{sql}: {e}"),
                    })
            }
        }
    }
}
