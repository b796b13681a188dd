//! The `idempotency` table on PostgreSQL: each API key's remembered results of writes sent
//! with an idempotency key (see `crate::idempotency`). Nodes meet here: a retry sent to
//! another node finds the row once the first node's transaction has committed, and the
//! account's lock (`Tx::lock_accounts`) makes a retry that races the first wait for it. The
//! table is made by `migrations/0004_idempotency.sql`.

use super::session::PgTx;
use crate::error::WriteError;
use crate::store::remembered::{FirstReply, MAX_REPLY_BYTES, RememberedRow};

impl PgTx {
    pub(super) fn remembered_row(
        &self,
        account: &str,
        key_id: &str,
        key: &str,
        since: i64,
    ) -> Result<Option<RememberedRow>, WriteError> {
        Ok(self
            .query_opt(
                "SELECT fingerprint, created_at, result FROM idempotency
                 WHERE account = $1 AND key_id = $2 AND idem_key = $3 AND created_at >= $4",
                &[&account, &key_id, &key, &since],
            )?
            .map(|r| RememberedRow {
                account: account.to_owned(),
                key_id: key_id.to_owned(),
                key: key.to_owned(),
                fingerprint: r.get(0),
                created_at: r.get(1),
                result: r.get(2),
            }))
    }

    /// Rows have no name here: the first reply finds its row by the request's key.
    pub(super) fn remember_row(&self, row: &RememberedRow) -> Result<Option<i64>, WriteError> {
        self.write(
            "INSERT INTO idempotency (key_id, idem_key, account, fingerprint, created_at, result)
             VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (account, key_id, idem_key) DO UPDATE SET
                 fingerprint = EXCLUDED.fingerprint, created_at = EXCLUDED.created_at,
                 result = EXCLUDED.result",
            &[
                &row.key_id,
                &row.key,
                &row.account,
                &row.fingerprint,
                &row.created_at,
                &row.result,
            ],
        )?;
        Ok(None)
    }

    /// The reply goes into the row's `result`, as a JSON string: the bound is that string's.
    pub(super) fn reply_row(&self, reply: &FirstReply) -> Result<(), WriteError> {
        let result = reply.result()?;
        if result.len() > MAX_REPLY_BYTES {
            return Ok(());
        }
        self.write(
            "UPDATE idempotency SET result = $5
             WHERE account = $1 AND key_id = $2 AND idem_key = $3 AND fingerprint = $4",
            &[
                &reply.account,
                &reply.key_id,
                &reply.key,
                &reply.fingerprint,
                &result,
            ],
        )?;
        Ok(())
    }

    pub(super) fn forget_rows(&self, account: &str, key_id: &str) -> Result<(), WriteError> {
        self.write(
            "DELETE FROM idempotency WHERE account = $1 AND key_id = $2",
            &[&account, &key_id],
        )?;
        Ok(())
    }

    pub(super) fn prune_rows(
        &self,
        before: i64,
        key_ids: &[(&str, &str)],
        keep: usize,
    ) -> Result<(), WriteError> {
        let offset = keep.saturating_sub(1) as i64;
        for (account, key_id) in key_ids {
            self.write(
                "DELETE FROM idempotency WHERE account = $1 AND key_id = $2 AND created_at < $3",
                &[account, key_id, &before],
            )?;
            // Rows as old as the newest `keep`-th stay: ties are kept rather than guessed.
            self.write(
                "DELETE FROM idempotency WHERE account = $1 AND key_id = $2 AND created_at < (
                     SELECT created_at FROM idempotency WHERE account = $1 AND key_id = $2
                     ORDER BY created_at DESC LIMIT 1 OFFSET $3)",
                &[account, key_id, &offset],
            )?;
        }
        Ok(())
    }
}
