//! A node's feed on PostgreSQL: one connection of its own that `LISTEN`s for what the other
//! nodes commit, and asks the questions the horizon needs (the clock, the writers'
//! transactions still open).

use std::time::{Duration, Instant};

use postgres::Client;
use postgres::fallible_iterator::FallibleIterator;

use super::connect::{WRITER_APPLICATION, connect_named};
use super::notice;
use crate::error::WriteError;
use crate::store::Engine;
use crate::store::shared::{Feed, Notice};

pub(super) struct PgFeed {
    client: Client,
    /// This node's token: its own announcements are ignored, its own pings heard.
    node: String,
}

impl PgFeed {
    pub(super) fn open(url: &str, node: &str) -> Result<PgFeed, WriteError> {
        let name = format!("workboard follower {}", std::process::id());
        let mut client = connect_named(url, &name)?;
        client
            .batch_execute(&format!("LISTEN {}", notice::CHANNEL))
            .db()?;
        Ok(PgFeed {
            client,
            node: node.to_owned(),
        })
    }
}

impl Feed for PgFeed {
    fn next(&mut self, wait: Duration) -> Result<Option<Notice>, WriteError> {
        let deadline = Instant::now() + wait;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let mut notifications = self.client.notifications();
            let Some(n) = notifications.timeout_iter(left).next().db()? else {
                return Ok(None);
            };
            if let Some(notice) = notice::parse(n.payload(), &self.node) {
                return Ok(Some(notice));
            }
            if Instant::now() >= deadline {
                return Ok(None);
            }
        }
    }

    fn clock_and_open_writes(&mut self) -> Result<(i64, Vec<String>), WriteError> {
        // The clock first: a writer that takes its transaction id after the list below is
        // read also reads the clock after this one.
        let clock: i64 = self
            .client
            .query_one(
                "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint",
                &[],
            )
            .db()?
            .get(0);
        // The writers' transactions open at this moment (their sessions found by name; a
        // writer holds a transaction id from its account lock on), by id. Read from the
        // sessions, not from a snapshot: a snapshot lists only ids below its `xmax` (the
        // last completed one, plus one), so a writer that took its id after the last commit,
        // as one that waited for an account's lock does, would be missing from it.
        let open = self
            .client
            .query(
                "SELECT backend_xid::text FROM pg_stat_activity
                 WHERE application_name LIKE $1 || ' %' AND datname = current_database()
                   AND backend_xid IS NOT NULL",
                &[&WRITER_APPLICATION],
            )
            .db()?
            .iter()
            .map(|r| r.get::<_, String>(0))
            .collect();
        Ok((clock, open))
    }

    fn any_open(&mut self, writes: &[String]) -> Result<bool, WriteError> {
        if writes.is_empty() {
            return Ok(false);
        }
        // A session that ended the transaction has no id, or a new one.
        Ok(self
            .client
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM pg_stat_activity
                                WHERE backend_xid::text = ANY($1))",
                &[&writes],
            )
            .db()?
            .get(0))
    }

    fn ping(&mut self, n: u64) -> Result<(), WriteError> {
        self.client
            .execute(
                "SELECT pg_notify($1, $2)",
                &[&notice::CHANNEL, &notice::ping(&self.node, n)],
            )
            .db()?;
        Ok(())
    }

    fn revs(&mut self, accounts: &[String]) -> Result<Vec<(String, i64)>, WriteError> {
        Ok(self
            .client
            .query(
                "SELECT id, rev FROM accounts WHERE id = ANY($1)",
                &[&accounts],
            )
            .db()?
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect())
    }
}
