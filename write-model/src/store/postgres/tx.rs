//! What commands read and write inside the writer's PostgreSQL transaction: one prepared
//! statement per operation, run through the session's helpers (see [`super::session`]).
//! Bodies rewritten in place and new undo steps are held back and sent together before the
//! next statement (see [`super::deferred`]).

use crate::change::KeyChange;
use crate::error::WriteError;
use crate::records::{Column, Kind, Record, Task};
use crate::store::copy::RecordRow;
use crate::store::shared::{LOG_KEPT_REVS, Locked, LoggedChange};
use crate::store::types::{item_ids, record_from_json, record_json};
use crate::store::{
    AllowanceRow, Counters, EntryRow, KeyCounts, LiveKey, MarkerRow, NewBinEntry, NewKey, Row, Tx,
};

use super::notice;
use super::session::{Params, PgTx};

fn kind(k: i64) -> Result<Kind, WriteError> {
    Kind::from_i64(k).ok_or_else(|| WriteError::Internal(format!("unknown record kind {k}")))
}

impl Tx for PgTx {
    fn writes(&self) -> u64 {
        self.writes.get()
    }

    fn flush(&self) -> Result<(), WriteError> {
        self.send_deferred()
    }

    fn get_row(&self, account: &str, id: &str) -> Result<Option<(Record, Row)>, WriteError> {
        let Some(r) = self.query_opt(
            "SELECT kind, body, bin_entry, deleted_at FROM records WHERE account = $1 AND id = $2",
            &[&account, &id],
        )?
        else {
            return Ok(None);
        };
        let body: String = r.get(1);
        let record = record_from_json(kind(r.get(0))?, &body)?;
        let bin_entry: Option<String> = r.get(2);
        let deleted_at: Option<i64> = r.get(3);
        let bin = bin_entry.as_deref().map(|e| (e, deleted_at.unwrap_or(0)));
        let row = Row::of(&record, bin, body);
        Ok(Some((record, row)))
    }

    fn put(
        &self,
        account: &str,
        record: &Record,
        bin: Option<(&str, i64)>,
        old: Option<&Row>,
    ) -> Result<Row, WriteError> {
        let room = old.map_or(512, |old| old.len as usize + 64);
        let row = Row::of(record, bin, record_json(record, room)?);
        self.moved(account, old, &row);
        if old.is_some_and(|old| old.same_columns(&row)) {
            // (`Row::of` always holds the body it was made with.)
            let body = row.body.as_deref().unwrap_or_default();
            self.defer(|d| d.body(account, record.id(), body));
            return Ok(row);
        }
        let (entry, deleted_at) = row.bin.as_ref().map(|(e, at)| (e.as_str(), *at)).unzip();
        let kind = row.kind as i64;
        if old.is_none() {
            // A new record: nothing reads it before the held writes go out.
            self.defer_record(RecordRow {
                account: account.to_owned(),
                id: record.id().to_owned(),
                kind,
                project_id: row.project_id.clone(),
                column_id: row.column_id.clone(),
                parent_id: row.parent_id.clone(),
                bin_entry: entry.map(str::to_owned),
                deleted_at,
                position: row.position,
                body: row.body.clone().unwrap_or_default(),
            })?;
            return Ok(row);
        }
        let params: Params<'_> = &[
            &account,
            &record.id(),
            &kind,
            &row.project_id,
            &row.column_id,
            &row.parent_id,
            &entry,
            &deleted_at,
            &row.position,
            &row.body,
        ];
        self.write(
            "UPDATE records SET kind = $3, project_id = $4, column_id = $5, parent_id = $6,
                 bin_entry = $7, deleted_at = $8, position = $9, body = $10
             WHERE account = $1 AND id = $2",
            params,
        )?;
        Ok(row)
    }

    fn destroy(&self, account: &str, id: &str) -> Result<(), WriteError> {
        // Which list the record left is not known here: every top is read again.
        self.tops.borrow_mut().clear();
        self.write(
            "DELETE FROM records WHERE account = $1 AND id = $2",
            &[&account, &id],
        )?;
        Ok(())
    }

    fn is_live(&self, account: &str, kind: Kind, id: &str) -> Result<bool, WriteError> {
        let kind = kind as i64;
        self.exists(
            "SELECT 1 FROM records WHERE account = $1 AND id = $2 AND kind = $3 AND bin_entry IS NULL",
            &[&account, &id, &kind],
        )
    }

    fn id_in_use(&self, account: &str, id: &str) -> Result<bool, WriteError> {
        self.exists(
            "SELECT 1 FROM records WHERE account = $1 AND id = $2",
            &[&account, &id],
        )
    }

    fn live_columns(&self, account: &str, project_id: &str) -> Result<Vec<Column>, WriteError> {
        self.bodies(
            "SELECT body FROM records WHERE account = $1 AND project_id = $2 AND kind = 1 AND bin_entry IS NULL",
            &[&account, &project_id],
        )
    }

    fn live_project_tasks(&self, account: &str, project_id: &str) -> Result<Vec<Task>, WriteError> {
        self.bodies(
            "SELECT body FROM records WHERE account = $1 AND project_id = $2 AND kind = 2 AND bin_entry IS NULL",
            &[&account, &project_id],
        )
    }

    fn live_column_tasks(&self, account: &str, column_id: &str) -> Result<Vec<Task>, WriteError> {
        self.bodies(
            "SELECT body FROM records WHERE account = $1 AND column_id = $2 AND bin_entry IS NULL",
            &[&account, &column_id],
        )
    }

    fn live_subtasks(&self, account: &str, parent_id: &str) -> Result<Vec<Task>, WriteError> {
        self.bodies(
            "SELECT body FROM records WHERE account = $1 AND parent_id = $2 AND bin_entry IS NULL",
            &[&account, &parent_id],
        )
    }

    fn count_live_projects(&self, account: &str) -> Result<usize, WriteError> {
        self.count(
            "SELECT count(*) FROM records WHERE account = $1 AND kind = 0 AND bin_entry IS NULL",
            &[&account],
        )
    }

    fn count_live_columns(&self, account: &str, project_id: &str) -> Result<usize, WriteError> {
        self.count(
            "SELECT count(*) FROM records WHERE account = $1 AND project_id = $2 AND kind = 1 AND bin_entry IS NULL",
            &[&account, &project_id],
        )
    }

    fn min_position(
        &self,
        account: &str,
        kind: Kind,
        parent: Option<&str>,
    ) -> Result<Option<f64>, WriteError> {
        let siblings = (account.to_owned(), kind as i64, parent.map(str::to_owned));
        if let Some(top) = self.tops.borrow().get(&siblings) {
            return Ok(*top);
        }
        let rows = match kind {
            Kind::Project => self.query(
                "SELECT min(position) FROM records WHERE account = $1 AND kind = 0 AND bin_entry IS NULL",
                &[&account],
            )?,
            Kind::Column => self.query(
                "SELECT min(position) FROM records WHERE account = $1 AND project_id = $2 AND kind = 1 AND bin_entry IS NULL",
                &[&account, &parent],
            )?,
            Kind::Task => self.query(
                "SELECT min(position) FROM records WHERE account = $1 AND column_id = $2 AND bin_entry IS NULL",
                &[&account, &parent],
            )?,
        };
        let top = rows.first().and_then(|r| r.get::<_, Option<f64>>(0));
        self.tops.borrow_mut().insert(siblings, top);
        Ok(top)
    }

    fn item_task(&self, account: &str, item_id: &str) -> Result<Option<String>, WriteError> {
        self.string(
            "SELECT task_id FROM items WHERE account = $1 AND id = $2",
            &[&account, &item_id],
        )
    }

    fn item_id_in_use(&self, account: &str, id: &str) -> Result<bool, WriteError> {
        self.exists(
            "SELECT 1 FROM items WHERE account = $1 AND id = $2",
            &[&account, &id],
        )
    }

    fn index_items(&self, account: &str, old: Option<&Task>, new: &Task) -> Result<(), WriteError> {
        let before = old.map(item_ids).unwrap_or_default();
        let after = item_ids(new);
        for gone in before.iter().filter(|id| !after.contains(id)) {
            self.write(
                "DELETE FROM items WHERE account = $1 AND id = $2",
                &[&account, gone],
            )?;
        }
        for added in after.iter().filter(|id| !before.contains(id)) {
            self.defer(|d| d.item(account, added, &new.id));
        }
        Ok(())
    }

    fn drop_items(&self, account: &str, task_id: &str) -> Result<(), WriteError> {
        self.write(
            "DELETE FROM items WHERE account = $1 AND task_id = $2",
            &[&account, &task_id],
        )?;
        Ok(())
    }

    fn add_bin_entry(&self, account: &str, e: &NewBinEntry<'_>) -> Result<(), WriteError> {
        let count = e.count as i64;
        self.write(
            "INSERT INTO bin (account, id, seq, kind, head, deleted_at, label, count)
             SELECT $1, $2, coalesce(max(seq), 0) + 1, $3, $4, $5, $6, $7 FROM bin WHERE account = $1",
            &[&account, &e.id, &e.kind, &e.head, &e.deleted_at, &e.label, &count],
        )?;
        Ok(())
    }

    fn bin_len(&self, account: &str) -> Result<usize, WriteError> {
        self.count("SELECT count(*) FROM bin WHERE account = $1", &[&account])
    }

    fn bin_entry_ids(&self, account: &str) -> Result<Vec<String>, WriteError> {
        self.strings(
            "SELECT id FROM bin WHERE account = $1 ORDER BY seq",
            &[&account],
        )
    }

    fn bin_entry_exists(&self, account: &str, entry: &str) -> Result<bool, WriteError> {
        self.exists(
            "SELECT 1 FROM bin WHERE account = $1 AND id = $2",
            &[&account, &entry],
        )
    }

    fn bin_entry_headed_by(&self, account: &str, head: &str) -> Result<Option<String>, WriteError> {
        self.string(
            "SELECT id FROM bin WHERE account = $1 AND head = $2",
            &[&account, &head],
        )
    }

    fn bin_entry_rows(&self, account: &str, entry: &str) -> Result<Vec<EntryRow>, WriteError> {
        self.query(
            "SELECT id, kind, project_id, deleted_at, octet_length(body)::bigint FROM records
             WHERE account = $1 AND bin_entry = $2",
            &[&account, &entry],
        )?
        .iter()
        .map(|r| {
            Ok(EntryRow {
                id: r.get(0),
                kind: kind(r.get(1))?,
                project_id: r.get(2),
                deleted_at: r.get(3),
                bytes: r.get(4),
            })
        })
        .collect()
    }

    fn bin_entry_records(&self, account: &str, entry: &str) -> Result<Vec<Record>, WriteError> {
        self.query(
            "SELECT kind, body FROM records WHERE account = $1 AND bin_entry = $2",
            &[&account, &entry],
        )?
        .iter()
        .map(|r| record_from_json(kind(r.get(0))?, r.get::<_, &str>(1)))
        .collect()
    }

    fn remove_bin_entry(&self, account: &str, entry: &str) -> Result<(), WriteError> {
        self.write(
            "DELETE FROM bin WHERE account = $1 AND id = $2",
            &[&account, &entry],
        )?;
        Ok(())
    }

    fn put_marker(&self, account: &str, m: &MarkerRow) -> Result<(), WriteError> {
        let kind = m.kind as i64;
        self.write(
            "INSERT INTO markers (account, id, kind, project_id, deleted_at) VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (account, id) DO UPDATE SET kind = EXCLUDED.kind,
                 project_id = EXCLUDED.project_id, deleted_at = EXCLUDED.deleted_at",
            &[&account, &m.id, &kind, &m.project_id, &m.deleted_at],
        )?;
        Ok(())
    }

    fn create_account(&self, account: &str, created_at: i64) -> Result<(), WriteError> {
        self.write(
            "INSERT INTO accounts (id, rev, last_stamp, stored_bytes, created_at) VALUES ($1, 0, 0, 0, $2)",
            &[&account, &created_at],
        )?;
        Ok(())
    }

    fn account_exists(&self, account: &str) -> Result<bool, WriteError> {
        self.exists("SELECT 1 FROM accounts WHERE id = $1", &[&account])
    }

    fn counters(&self, account: &str) -> Result<Counters, WriteError> {
        let r = self
            .query_opt(
                "SELECT rev, last_stamp, stored_bytes FROM accounts WHERE id = $1",
                &[&account],
            )?
            .ok_or_else(|| WriteError::Internal(format!("no account `{account}`")))?;
        Ok(Counters {
            rev: r.get(0),
            last_stamp: r.get(1),
            stored_bytes: r.get(2),
        })
    }

    fn save_counters(&self, account: &str, c: &Counters) -> Result<(), WriteError> {
        self.write(
            "UPDATE accounts SET rev = $2, last_stamp = $3, stored_bytes = $4 WHERE id = $1",
            &[&account, &c.rev, &c.last_stamp, &c.stored_bytes],
        )?;
        Ok(())
    }

    fn key_counts(&self, account: &str, now: i64) -> Result<KeyCounts, WriteError> {
        let rows = self.query(
            "SELECT count(*), count(*) FILTER (WHERE access = 'full'),
                    count(*) FILTER (WHERE access = 'full' AND expires_at IS NULL) FROM keys
             WHERE account = $1 AND revoked_at IS NULL
               AND (expires_at IS NULL OR expires_at > $2)",
            &[&account, &now],
        )?;
        let (usable, usable_full, lasting_full) = rows.first().map_or((0, 0, 0), |r| {
            (r.get::<_, i64>(0), r.get::<_, i64>(1), r.get::<_, i64>(2))
        });
        Ok(KeyCounts {
            usable: usable as usize,
            usable_full: usable_full as usize,
            lasting_full: lasting_full as usize,
        })
    }

    fn insert_key(&self, k: &NewKey<'_>) -> Result<(), WriteError> {
        self.write(
            "INSERT INTO keys (account, id, digest, label, prefix, created_at, access, expires_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            &[
                &k.account,
                &k.id,
                &k.digest,
                &k.label,
                &k.prefix,
                &k.created_at,
                &k.access.as_str(),
                &k.expires_at,
            ],
        )?;
        Ok(())
    }

    fn live_key(&self, key_id: &str) -> Result<Option<LiveKey>, WriteError> {
        Ok(self
            .query_opt(
                "SELECT digest, id, account, access, expires_at FROM keys
                 WHERE id = $1 AND revoked_at IS NULL",
                &[&key_id],
            )?
            .map(|r| super::load::live_key_row(&r)))
    }

    fn revoke_key(&self, key_id: &str, at: i64) -> Result<(), WriteError> {
        self.write(
            "UPDATE keys SET revoked_at = $2 WHERE id = $1",
            &[&key_id, &at],
        )?;
        // Its live sockets' tickets die with it, on every node.
        self.write("DELETE FROM tickets WHERE key_id = $1", &[&key_id])?;
        Ok(())
    }

    fn add_allowance(&self, r: &AllowanceRow) -> Result<(), WriteError> {
        let (reads, writes) = (r.reads as i64, r.writes as i64);
        self.write(
            "INSERT INTO allowance (account, key_id, resets_at, reads, writes)
             SELECT account, id, $2, $3, $4 FROM keys WHERE id = $1
             ON CONFLICT (account, key_id) DO UPDATE SET
                 reads = CASE WHEN allowance.resets_at = EXCLUDED.resets_at
                                  THEN allowance.reads + EXCLUDED.reads
                              WHEN allowance.resets_at < EXCLUDED.resets_at THEN EXCLUDED.reads
                              ELSE allowance.reads END,
                 writes = CASE WHEN allowance.resets_at = EXCLUDED.resets_at
                                   THEN allowance.writes + EXCLUDED.writes
                               WHEN allowance.resets_at < EXCLUDED.resets_at THEN EXCLUDED.writes
                               ELSE allowance.writes END,
                 resets_at = greatest(allowance.resets_at, EXCLUDED.resets_at)",
            &[&r.key_id, &r.resets_at, &reads, &writes],
        )?;
        Ok(())
    }

    fn touch_key(&self, key_id: &str, at: i64) -> Result<(), WriteError> {
        self.write(
            "UPDATE keys SET last_used_at = greatest(coalesce(last_used_at, 0), $2) WHERE id = $1",
            &[&key_id, &at],
        )?;
        Ok(())
    }

    fn set_meta(&self, name: &str, value: &[u8]) -> Result<(), WriteError> {
        self.write(
            "INSERT INTO meta (name, value) VALUES ($1, $2)
             ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value",
            &[&name, &value],
        )?;
        Ok(())
    }

    fn next_undo_seq(&self, key_id: &str) -> Result<i64, WriteError> {
        let rows = self.query(
            "SELECT coalesce(max(seq), 0) + 1 FROM undo WHERE key_id = $1",
            &[&key_id],
        )?;
        Ok(rows.first().map_or(1, |r| r.get(0)))
    }

    fn push_undo(
        &self,
        key_id: &str,
        seq: i64,
        account: &str,
        step: &str,
    ) -> Result<(), WriteError> {
        self.defer(|d| d.undo(account, key_id, seq, step));
        Ok(())
    }

    fn latest_undo(
        &self,
        key_id: &str,
        account: &str,
    ) -> Result<Option<(i64, String)>, WriteError> {
        Ok(self
            .query_opt(
                "SELECT seq, step FROM undo WHERE account = $2 AND key_id = $1 ORDER BY seq DESC LIMIT 1",
                &[&key_id, &account],
            )?
            .map(|r| (r.get(0), r.get(1))))
    }

    fn delete_undo(&self, key_id: &str, seq: i64) -> Result<(), WriteError> {
        self.write(
            "DELETE FROM undo WHERE key_id = $1 AND seq = $2",
            &[&key_id, &seq],
        )?;
        Ok(())
    }

    fn delete_undo_up_to(&self, key_id: &str, upto: i64) -> Result<(), WriteError> {
        self.write(
            "DELETE FROM undo WHERE key_id = $1 AND seq <= $2",
            &[&key_id, &upto],
        )?;
        Ok(())
    }

    fn forget_undo(&self, key_id: &str) -> Result<(), WriteError> {
        self.write("DELETE FROM undo WHERE key_id = $1", &[&key_id])?;
        Ok(())
    }

    fn remembered(
        &self,
        account: &str,
        key_id: &str,
        key: &str,
        since: i64,
    ) -> Result<Option<crate::store::remembered::RememberedRow>, WriteError> {
        self.remembered_row(account, key_id, key, since)
    }

    fn remember(
        &self,
        row: &crate::store::remembered::RememberedRow,
    ) -> Result<Option<i64>, WriteError> {
        self.remember_row(row)
    }

    fn remember_reply(
        &self,
        reply: &crate::store::remembered::FirstReply,
    ) -> Result<(), WriteError> {
        self.reply_row(reply)
    }

    fn forget_remembered(&self, account: &str, key_id: &str) -> Result<(), WriteError> {
        self.forget_rows(account, key_id)
    }

    fn prune_remembered(
        &self,
        before: i64,
        key_ids: &[(&str, &str)],
        keep: usize,
    ) -> Result<(), WriteError> {
        self.prune_rows(before, key_ids, keep)
    }

    fn expect_many_rows(&self) -> Result<(), WriteError> {
        self.batch("SET LOCAL plan_cache_mode = force_custom_plan")
    }

    fn lock_accounts(&self, accounts: &[&str]) -> Result<Locked, WriteError> {
        let rows = self.query(
            "SELECT id, rev, last_stamp, stored_bytes FROM accounts
             WHERE id = ANY($1) ORDER BY id FOR UPDATE",
            &[&accounts],
        )?;
        // The clock is read only once the locks are held and the transaction has an id, so
        // that a node taking its horizon either sees this transaction open or took its clock
        // before this one (see `store::shared`).
        let clock = self.query_opt(
            "SELECT pg_current_xact_id()::text,
                    (extract(epoch FROM clock_timestamp()) * 1000)::bigint",
            &[],
        )?;
        Ok(Locked {
            accounts: rows
                .iter()
                .map(|r| {
                    (
                        r.get::<_, String>(0),
                        Counters {
                            rev: r.get(1),
                            last_stamp: r.get(2),
                            stored_bytes: r.get(3),
                        },
                    )
                })
                .collect(),
            clock_ms: clock.map_or(0, |r| r.get(1)),
        })
    }

    fn log_changes(&self, changes: &[LoggedChange], keys: &[KeyChange]) -> Result<(), WriteError> {
        let mut notices: Vec<String> = Vec::with_capacity(changes.len() + keys.len());
        if !changes.is_empty() {
            let accounts: Vec<&str> = changes.iter().map(|c| c.account.as_str()).collect();
            let revs: Vec<i64> = changes.iter().map(|c| c.rev).collect();
            let stamps: Vec<i64> = changes.iter().map(|c| c.stamp).collect();
            let bodies: Vec<&str> = changes.iter().map(|c| c.body.as_str()).collect();
            self.write(
                "INSERT INTO changes (account, rev, stamp, body)
                 SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::text[])",
                &[&accounts, &revs, &stamps, &bodies],
            )?;
            for c in changes {
                notices.push(notice::changed(&self.node, &c.account, c.rev, c.stamp));
                // Now and then, the account's oldest entries go: a node further behind than
                // the log reaches loads the account whole.
                if c.rev % 256 == 0 {
                    self.write(
                        "DELETE FROM changes WHERE account = $1 AND rev <= $2",
                        &[&c.account, &(c.rev - LOG_KEPT_REVS)],
                    )?;
                }
            }
        }
        for k in keys {
            notices.push(notice::key(&self.node, k)?);
        }
        if !notices.is_empty() {
            self.query(
                "SELECT pg_notify($1, n) FROM unnest($2::text[]) AS n",
                &[&notice::CHANNEL, &notices],
            )?;
        }
        Ok(())
    }
}
