//! The `idempotency` table on SQLite: each API key's remembered results of writes sent with
//! an idempotency key (see `crate::idempotency`), and `idempotency_replies`, the first
//! replies of its successes.
//!
//! A row is written in the transaction of its write (the outcome, a few hundred bytes); the
//! first reply (often a kilobyte or more) comes a group later. Kept in the row, the reply
//! grew a cell in the middle of the table's tree and, past a kilobyte, spilled into an
//! overflow page of its own: that UPDATE cost more than the rest of a keyed write. Kept
//! apart, in a table keyed by the row's rowid, it is an append at the end of a tree, as sent
//! (no JSON escapes). Triggers keep the two in step: a row forgotten, or taken over by a new
//! request under an expired key, takes its reply along. The tables are made by
//! `migrations/0004_idempotency.sql` and `0005_replies_apart.sql`.

use rusqlite::{OptionalExtension, params};

use super::tx::SqliteTx;
use crate::error::WriteError;
use crate::idempotency::{FirstReply, MAX_REPLY_BYTES, RememberedRow, reply_result};
use crate::store::Engine;

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

    /// Over an expired row of the same key, the row keeps its rowid and takes the new
    /// request (its old reply goes with the trigger `idempotency_taken_over`).
    pub(super) fn remember_row(&self, row: &RememberedRow) -> Result<(), WriteError> {
        self.write(
            "INSERT INTO idempotency
                 (key_id, idem_key, account, fingerprint, created_at, result)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT (account, key_id, idem_key) DO UPDATE SET
                 fingerprint = excluded.fingerprint, created_at = excluded.created_at,
                 result = excluded.result",
            params![
                row.key_id,
                row.key,
                row.account,
                row.fingerprint,
                row.created_at,
                row.result
            ],
        )?;
        Ok(())
    }

    /// The reply as sent, beside its row: the bound is the body's bytes.
    pub(super) fn reply_row(&self, reply: &FirstReply) -> Result<(), WriteError> {
        if reply.body.len() > MAX_REPLY_BYTES {
            return Ok(());
        }
        self.write(
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
        )?;
        Ok(())
    }

    pub(super) fn forget_rows(&self, account: &str, key_id: &str) -> Result<(), WriteError> {
        self.write(
            "DELETE FROM idempotency WHERE account = ?1 AND key_id = ?2",
            params![account, key_id],
        )?;
        Ok(())
    }

    pub(super) fn prune_rows(
        &self,
        before: i64,
        key_ids: &[(&str, &str)],
        keep: usize,
    ) -> Result<(), WriteError> {
        for (account, key_id) in key_ids {
            self.write(
                "DELETE FROM idempotency WHERE account = ?1 AND key_id = ?2 AND created_at < ?3",
                params![account, key_id, before],
            )?;
            // Rows as old as the newest `keep`-th stay: ties are kept rather than guessed.
            self.write(
                "DELETE FROM idempotency WHERE account = ?1 AND key_id = ?2 AND created_at < (
                     SELECT created_at FROM idempotency WHERE account = ?1 AND key_id = ?2
                     ORDER BY created_at DESC LIMIT 1 OFFSET ?3)",
                params![account, key_id, keep.saturating_sub(1) as i64],
            )?;
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
            status: 200,
            content_type: "application/json".into(),
            body: body.into(),
        }
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
        let dir = tempfile::tempdir().unwrap();
        let conn = super::super::open_connection(
            &dir.path().join("new.db"),
            crate::store::Durability::Full,
        )
        .unwrap();
        let tx = SqliteTx::new(conn);
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
}
