//! The `idempotency` table on SQLite: each API key's remembered results of writes sent with
//! an idempotency key (see `crate::idempotency`), and `idempotency_replies`, the first
//! replies of its successes.
//!
//! A row is written in the transaction of its write (the outcome, a few hundred bytes); the
//! first reply (often a kilobyte or more) comes a group later. Kept in the row, the reply
//! grew a cell in the middle of the table's tree and, past a kilobyte, spilled into an
//! overflow page of its own: that UPDATE cost more than the rest of a keyed write. Kept
//! apart, in a table keyed by the row's rowid, it is an append at the end of a tree, as sent
//! (no JSON escapes). The tables are made by
//! `migrations/0004_idempotency.sql` and `0005_replies_apart.sql`.
//!
//! Rows age in rowid order (`0006_rows_age_by_rowid.sql`): a new row takes the next rowid,
//! and a key taken over after its retention takes a new one too, so the oldest rows of an
//! API key are its smallest rowids, and the expired rows of the whole table are those
//! before the first that is not. That spares every keyed write an age index to insert into
//! and, later, delete from. The writer hands the rowid out with the outcome, and the first
//! reply names it: its write finds the row by its rowid, not through the key's index.
//! Every statement that forgets rows forgets their replies beside them (a rowid range when
//! the rows are one), in place of the triggers version 5 had, which ran once per row.

use rusqlite::{OptionalExtension, params};

use super::tx::SqliteTx;
use crate::error::WriteError;
use crate::store::Engine;
use crate::store::remembered::{FirstReply, MAX_REPLY_BYTES, RememberedRow, reply_result};

impl SqliteTx {
    pub(super) fn remembered_row(
        &self,
        account: &str,
        key_id: &str,
        key: &str,
        since: i64,
    ) -> Result<Option<RememberedRow>, WriteError> {
        let found = self
            .conn
            .prepare_cached(
                "SELECT i.fingerprint, i.created_at, i.result, r.status, r.content_type, r.body
                 FROM idempotency i LEFT JOIN idempotency_replies r ON r.id = i.id
                 WHERE i.account = ?1 AND i.key_id = ?2 AND i.idem_key = ?3
                   AND i.created_at >= ?4",
            )
            .db()?
            .query_row(params![account, key_id, key, since], |r| {
                let reply = match r.get::<_, Option<u16>>(3)? {
                    Some(status) => Some((status, r.get::<_, String>(4)?, r.get::<_, String>(5)?)),
                    None => None,
                };
                Ok((r.get(0)?, r.get(1)?, r.get::<_, String>(2)?, reply))
            })
            .optional()
            .db()?;
        let Some((fingerprint, created_at, result, reply)) = found else {
            return Ok(None);
        };
        let result = match reply {
            Some((status, content_type, body)) => reply_result(status, &content_type, &body)?,
            None => result,
        };
        Ok(Some(RememberedRow {
            account: account.to_owned(),
            key_id: key_id.to_owned(),
            key: key.to_owned(),
            fingerprint,
            created_at,
            result,
        }))
    }

    /// Answers the row's rowid. An expired row of the same key (the lookup passed over it)
    /// goes first, with its reply: the new request's row is the youngest, as it now is.
    pub(super) fn remember_row(&self, row: &RememberedRow) -> Result<Option<i64>, WriteError> {
        const INSERT: &str = "INSERT OR IGNORE INTO idempotency
                 (key_id, idem_key, account, fingerprint, created_at, result)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)";
        let values = params![
            row.key_id,
            row.key,
            row.account,
            row.fingerprint,
            row.created_at,
            row.result
        ];
        if self.write(INSERT, values)? == 0 {
            let key = params![row.account, row.key_id, row.key];
            self.write(
                "DELETE FROM idempotency_replies WHERE id = (SELECT id FROM idempotency
                     WHERE account = ?1 AND key_id = ?2 AND idem_key = ?3)",
                key,
            )?;
            self.write(
                "DELETE FROM idempotency WHERE account = ?1 AND key_id = ?2 AND idem_key = ?3",
                key,
            )?;
            self.write(INSERT, values)?;
        }
        Ok(Some(self.conn.last_insert_rowid()))
    }

    /// The reply as sent, beside its row: the bound is the body's bytes. Its row is found by
    /// the rowid the writer handed out, else by the request's key; either way only while it
    /// still remembers the same request.
    pub(super) fn reply_row(&self, reply: &FirstReply) -> Result<(), WriteError> {
        if reply.body.len() > MAX_REPLY_BYTES {
            return Ok(());
        }
        match reply.row {
            // A rowid freed (its API key revoked) may be taken again by another key's
            // row: the row found must still be this request's, under this key.
            Some(row) => self.write(
                "INSERT OR REPLACE INTO idempotency_replies (id, status, content_type, body)
                 SELECT id, ?6, ?7, ?8 FROM idempotency
                 WHERE id = ?1 AND account = ?2 AND key_id = ?3 AND idem_key = ?4
                   AND fingerprint = ?5",
                params![
                    row,
                    reply.account,
                    reply.key_id,
                    reply.key,
                    reply.fingerprint,
                    reply.status,
                    reply.content_type,
                    reply.body
                ],
            )?,
            None => self.write(
                "INSERT OR REPLACE INTO idempotency_replies (id, status, content_type, body)
                 SELECT id, ?5, ?6, ?7 FROM idempotency
                 WHERE account = ?1 AND key_id = ?2 AND idem_key = ?3 AND fingerprint = ?4",
                params![
                    reply.account,
                    reply.key_id,
                    reply.key,
                    reply.fingerprint,
                    reply.status,
                    reply.content_type,
                    reply.body
                ],
            )?,
        };
        Ok(())
    }

    /// Every row of the API key goes, and the replies beside them.
    pub(super) fn forget_rows(&self, account: &str, key_id: &str) -> Result<(), WriteError> {
        self.write(
            "DELETE FROM idempotency_replies WHERE id IN
                 (SELECT id FROM idempotency WHERE account = ?1 AND key_id = ?2)",
            params![account, key_id],
        )?;
        self.write(
            "DELETE FROM idempotency WHERE account = ?1 AND key_id = ?2",
            params![account, key_id],
        )?;
        Ok(())
    }

    /// The expired rows go for every API key at once: those before the first row, in rowid
    /// order, that is not expired (a range of both tables). Of each of `key_ids`, the rows
    /// past its newest `keep` go, oldest (smallest rowid) first; counting them reads the
    /// key's index, not its rows. A reply goes with its row, in the same statement's range.
    pub(super) fn prune_rows(
        &self,
        before: i64,
        key_ids: &[(&str, &str)],
        keep: usize,
    ) -> Result<(), WriteError> {
        let first_kept: Option<i64> = self
            .conn
            .prepare_cached(
                "SELECT coalesce(
                     (SELECT id FROM idempotency WHERE created_at >= ?1 ORDER BY id LIMIT 1),
                     (SELECT max(id) + 1 FROM idempotency))",
            )
            .db()?
            .query_row(params![before], |r| r.get(0))
            .db()?;
        if let Some(first_kept) = first_kept {
            self.write(
                "DELETE FROM idempotency_replies WHERE id < ?1",
                params![first_kept],
            )?;
            self.write("DELETE FROM idempotency WHERE id < ?1", params![first_kept])?;
        }
        for (account, key_id) in key_ids {
            let held: i64 = self
                .conn
                .prepare_cached(
                    "SELECT count(*) FROM idempotency WHERE account = ?1 AND key_id = ?2",
                )
                .db()?
                .query_row(params![account, key_id], |r| r.get(0))
                .db()?;
            let past = held - keep as i64;
            if past <= 0 {
                continue;
            }
            // The oldest rows, then each run of them that is a run of rowids (no other
            // key's row can sit inside it) goes as one range of both tables: under one busy
            // API key, the whole batch is one run.
            let gone: Vec<i64> = self
                .conn
                .prepare_cached(
                    "SELECT id FROM idempotency WHERE account = ?1 AND key_id = ?2
                     ORDER BY id LIMIT ?3",
                )
                .db()?
                .query_map(params![account, key_id, past], |r| r.get(0))
                .db()?
                .collect::<Result<_, _>>()
                .db()?;
            for run in gone.chunk_by(|a, b| b - a == 1) {
                let (first, last) = (run[0], run[run.len() - 1]);
                self.write(
                    "DELETE FROM idempotency_replies WHERE id BETWEEN ?1 AND ?2",
                    params![first, last],
                )?;
                self.write(
                    "DELETE FROM idempotency WHERE id BETWEEN ?1 AND ?2",
                    params![first, last],
                )?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(key: &str, result: &str) -> RememberedRow {
        RememberedRow {
            account: "a_1".into(),
            key_id: "y_1".into(),
            key: key.into(),
            fingerprint: vec![1, 2, 3],
            created_at: 10,
            result: result.into(),
        }
    }

    fn reply(key: &str, body: &str) -> FirstReply {
        FirstReply {
            account: "a_1".into(),
            key_id: "y_1".into(),
            key: key.into(),
            fingerprint: vec![1, 2, 3],
            row: None,
            status: 200,
            content_type: "application/json".into(),
            body: body.into(),
        }
    }

    /// A writer's connection to a new store at the current schema (the folder goes with
    /// the first half).
    fn new_store() -> (tempfile::TempDir, SqliteTx) {
        let dir = tempfile::tempdir().unwrap();
        let conn = super::super::open_connection(
            &dir.path().join("new.db"),
            crate::store::Durability::Full,
        )
        .unwrap();
        (dir, SqliteTx::new(conn))
    }

    fn count(tx: &SqliteTx, table: &str) -> i64 {
        tx.conn
            .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
            .unwrap()
    }

    #[test]
    fn a_version_4_table_gains_rowids_and_keeps_its_results() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.db");
        let kept_reply = reply_result(201, "application/json", "{\"ok\":true}").unwrap();
        {
            let old = rusqlite::Connection::open(&path).unwrap();
            old.execute_batch(include_str!("migrations/0004_idempotency.sql"))
                .unwrap();
            old.execute(
                "INSERT INTO idempotency VALUES ('y_1', 'k1', 'a_1', x'010203', 10, ?1),
                     ('y_1', 'k2', 'a_1', x'010203', 11, '{\"outcome\":\"saved\"}')",
                [&kept_reply],
            )
            .unwrap();
        }
        let conn = super::super::open_connection(&path, crate::store::Durability::Full).unwrap();
        let sql: String = conn
            .query_row(
                "SELECT sql FROM sqlite_master WHERE name = 'idempotency'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert!(!sql.contains("WITHOUT ROWID"), "{sql}");
        let tx = SqliteTx::new(conn);
        let found = |key| tx.remembered_row("a_1", "y_1", key, 0).unwrap().unwrap();
        assert_eq!(found("k1").result, kept_reply);
        assert_eq!(found("k2").result, "{\"outcome\":\"saved\"}");
        // The unique index still refuses a second row of a key.
        assert!(
            tx.conn
                .execute(
                    "INSERT INTO idempotency (key_id, idem_key, account, fingerprint, created_at, result)
                     VALUES ('y_1', 'k1', 'a_1', x'00', 12, '{}')",
                    [],
                )
                .is_err()
        );
    }

    #[test]
    fn a_reply_is_kept_apart_and_goes_with_its_row() {
        let (_dir, tx) = new_store();
        let outcome = "{\"outcome\":\"saved\"}";
        tx.remember_row(&row("k1", outcome)).unwrap();
        tx.remember_row(&row("k2", outcome)).unwrap();
        // A reply of another request under the key is left out; the request's own is kept.
        let mut other = reply("k1", "{\"other\":true}");
        other.fingerprint = vec![9];
        tx.reply_row(&other).unwrap();
        assert_eq!(count(&tx, "idempotency_replies"), 0);
        tx.reply_row(&reply("k1", "{\"ok\":true,\"n\":1}")).unwrap();
        tx.reply_row(&reply("k2", &"x".repeat(MAX_REPLY_BYTES + 1)))
            .unwrap();
        let found = |key| tx.remembered_row("a_1", "y_1", key, 0).unwrap().unwrap();
        assert_eq!(
            found("k1").result,
            reply_result(200, "application/json", "{\"ok\":true,\"n\":1}").unwrap()
        );
        // Past the bound, the row keeps its outcome.
        assert_eq!(found("k2").result, outcome);
        // A new request under an expired key takes the row over, and not the old reply.
        let mut again = row("k1", "{\"outcome\":\"again\"}");
        again.created_at = 99;
        tx.remember_row(&again).unwrap();
        assert_eq!(found("k1").result, "{\"outcome\":\"again\"}");
        assert_eq!(count(&tx, "idempotency_replies"), 0);
        // A row forgotten takes its reply along.
        tx.reply_row(&reply("k1", "{}")).unwrap();
        assert_eq!(count(&tx, "idempotency_replies"), 1);
        tx.forget_rows("a_1", "y_1").unwrap();
        assert_eq!(count(&tx, "idempotency"), 0);
        assert_eq!(count(&tx, "idempotency_replies"), 0);
    }

    fn keyed_row(key_id: &str, key: &str, created_at: i64) -> RememberedRow {
        RememberedRow {
            key_id: key_id.into(),
            created_at,
            ..row(key, "{}")
        }
    }

    fn keys_of(tx: &SqliteTx, key_id: &str) -> Vec<String> {
        let mut stmt = tx
            .conn
            .prepare("SELECT idem_key FROM idempotency WHERE key_id = ?1 ORDER BY id")
            .unwrap();
        stmt.query_map([key_id], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    #[test]
    fn rows_age_in_rowid_order_and_a_key_taken_over_is_the_youngest() {
        let (_dir, tx) = new_store();
        let no_index: i64 = tx
            .conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE name = 'idempotency_by_key_age'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(no_index, 0, "the age index is gone");
        let mut ids = Vec::new();
        for (n, key) in ["k1", "k2", "k3", "k4"].iter().enumerate() {
            ids.push(
                tx.remember_row(&keyed_row("y_1", key, 10 + n as i64))
                    .unwrap(),
            );
        }
        tx.remember_row(&keyed_row("y_2", "other", 11)).unwrap();
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
        // k1 taken over (its retention passed): it is now the youngest, and its reply goes.
        tx.reply_row(&FirstReply {
            row: ids[0],
            ..reply("k1", "{}")
        })
        .unwrap();
        assert_eq!(count(&tx, "idempotency_replies"), 1);
        let taken = tx.remember_row(&keyed_row("y_1", "k1", 50)).unwrap();
        assert!(taken > ids[3], "{taken:?} {ids:?}");
        assert_eq!(count(&tx, "idempotency_replies"), 0);
        // The bound keeps each key's newest two, oldest first to go; the other key's stay.
        tx.prune_rows(0, &[("a_1", "y_1")], 2).unwrap();
        assert_eq!(keys_of(&tx, "y_1"), ["k4", "k1"]);
        assert_eq!(keys_of(&tx, "y_2"), ["other"]);
        // Expiry, for every key at once: everything before the first row not expired, in
        // rowid order (k4 at 13 is; other at 11 is not; k1 at 50 is not).
        tx.prune_rows(40, &[], 2).unwrap();
        assert_eq!(keys_of(&tx, "y_1"), ["k1"]);
        assert!(keys_of(&tx, "y_2").is_empty());
        tx.prune_rows(100, &[], 2).unwrap();
        assert_eq!(count(&tx, "idempotency"), 0);
    }

    #[test]
    fn a_reply_named_by_its_row_is_kept_only_for_the_same_request() {
        let (_dir, tx) = new_store();
        let id = tx.remember_row(&row("k1", "{}")).unwrap();
        let other = FirstReply {
            row: id,
            fingerprint: vec![9],
            ..reply("k1", "{\"other\":true}")
        };
        tx.reply_row(&other).unwrap();
        assert_eq!(count(&tx, "idempotency_replies"), 0);
        let gone = FirstReply {
            row: id.map(|id| id + 1),
            ..reply("k1", "{}")
        };
        tx.reply_row(&gone).unwrap();
        assert_eq!(count(&tx, "idempotency_replies"), 0);
        // Its rowid taken by the same request under another API key (the first key revoked):
        // the reply is not that row's.
        let other_key = tx.remember_row(&keyed_row("y_2", "k1", 10)).unwrap();
        let misnamed = FirstReply {
            row: other_key,
            ..reply("k1", "{}")
        };
        tx.reply_row(&misnamed).unwrap();
        assert_eq!(count(&tx, "idempotency_replies"), 0);
        tx.reply_row(&FirstReply {
            row: id,
            ..reply("k1", "{\"n\":1}")
        })
        .unwrap();
        let found = tx.remembered_row("a_1", "y_1", "k1", 0).unwrap().unwrap();
        assert_eq!(
            found.result,
            reply_result(200, "application/json", "{\"n\":1}").unwrap()
        );
    }
}
