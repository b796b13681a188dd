//! What commands read and write inside the writer's SQLite transaction: one prepared
//! statement per operation, cached on the writer's connection.

use std::cell::Cell;

use rusqlite::{Connection, OptionalExtension, params};
use serde::de::DeserializeOwned;

use crate::error::WriteError;
use crate::records::{Column, Kind, Record, Task};
use crate::store::Engine;
use crate::store::types::{item_ids, record_from_json, record_json};
use crate::store::{
    AllowanceRow, Counters, EntryRow, KeyCounts, LiveKey, MarkerRow, NewBinEntry, NewKey, Row, Tx,
};

// The queries that list or count a record's siblings name their index. Without statistics
// SQLite's planner prefers walking the whole account by its primary key to looking rows up
// through a narrower index, which made completing a card cost a read of every record of
// the account (its subtasks were found that way). `INDEXED BY` keeps each of these at what
// it returns; `sibling_queries_search_their_index` holds them to it.
const LIVE_IN_PROJECT: &str = "SELECT body FROM records INDEXED BY records_by_project WHERE account = ?1 AND project_id = ?2 AND kind = ?3 AND bin_entry IS NULL";
const LIVE_IN_COLUMN: &str = "SELECT body FROM records INDEXED BY records_by_column WHERE account = ?1 AND column_id = ?2 AND bin_entry IS NULL";
const LIVE_SUBTASKS: &str = "SELECT body FROM records INDEXED BY records_by_parent WHERE account = ?1 AND parent_id = ?2 AND bin_entry IS NULL";
const COUNT_IN_PROJECT: &str = "SELECT count(*) FROM records INDEXED BY records_by_project WHERE account = ?1 AND project_id = ?2 AND kind = ?3 AND bin_entry IS NULL";
const COUNT_PROJECTS: &str = "SELECT count(*) FROM records INDEXED BY projects_by_position WHERE account = ?1 AND kind = 0 AND bin_entry IS NULL";
const MIN_PROJECT_POSITION: &str = "SELECT min(position) FROM records INDEXED BY projects_by_position WHERE account = ?1 AND kind = 0 AND bin_entry IS NULL AND ?2 IS NULL";
const MIN_COLUMN_POSITION: &str = "SELECT min(position) FROM records INDEXED BY records_by_project WHERE account = ?1 AND project_id = ?2 AND kind = 1 AND bin_entry IS NULL";
const MIN_TASK_POSITION: &str = "SELECT min(position) FROM records INDEXED BY records_by_column WHERE account = ?1 AND column_id = ?2 AND bin_entry IS NULL";
const ENTRY_ROWS: &str = "SELECT id, kind, project_id, deleted_at, length(CAST(body AS BLOB)) FROM records INDEXED BY records_by_bin_entry WHERE account = ?1 AND bin_entry = ?2";
const ENTRY_BODIES: &str = "SELECT kind, body FROM records INDEXED BY records_by_bin_entry WHERE account = ?1 AND bin_entry = ?2";

/// The writer's connection, counting the rows it writes.
pub(super) struct SqliteTx {
    pub(super) conn: Connection,
    writes: Cell<u64>,
}

impl SqliteTx {
    pub(super) fn new(conn: Connection) -> Self {
        SqliteTx {
            conn,
            writes: Cell::new(0),
        }
    }

    /// Runs a write statement, counting the rows it changed.
    pub(super) fn write(
        &self,
        sql: &str,
        params: impl rusqlite::Params,
    ) -> Result<usize, WriteError> {
        let n = self.conn.prepare_cached(sql).db()?.execute(params).db()?;
        self.writes.set(self.writes.get() + n as u64);
        Ok(n)
    }

    fn exists(&self, sql: &str, params: impl rusqlite::Params) -> Result<bool, WriteError> {
        self.conn.prepare_cached(sql).db()?.exists(params).db()
    }

    fn count(&self, sql: &str, params: impl rusqlite::Params) -> Result<usize, WriteError> {
        let n: i64 = self
            .conn
            .prepare_cached(sql)
            .db()?
            .query_row(params, |r| r.get(0))
            .db()?;
        Ok(n as usize)
    }

    /// The records whose bodies `sql` selects, parsed.
    fn bodies<T: DeserializeOwned>(
        &self,
        sql: &str,
        params: impl rusqlite::Params,
    ) -> Result<Vec<T>, WriteError> {
        let mut stmt = self.conn.prepare_cached(sql).db()?;
        let rows = stmt.query_map(params, |r| r.get::<_, String>(0)).db()?;
        rows.map(|b| Ok(serde_json::from_str(&b.db()?)?)).collect()
    }

    fn strings(&self, sql: &str, params: impl rusqlite::Params) -> Result<Vec<String>, WriteError> {
        let mut stmt = self.conn.prepare_cached(sql).db()?;
        let rows = stmt.query_map(params, |r| r.get::<_, String>(0)).db()?;
        rows.collect::<Result<_, _>>().db()
    }

    fn string(
        &self,
        sql: &str,
        params: impl rusqlite::Params,
    ) -> Result<Option<String>, WriteError> {
        self.conn
            .prepare_cached(sql)
            .db()?
            .query_row(params, |r| r.get(0))
            .optional()
            .db()
    }
}

fn kind(k: i64) -> Result<Kind, WriteError> {
    Kind::from_i64(k).ok_or_else(|| WriteError::Internal(format!("unknown record kind {k}")))
}

impl Tx for SqliteTx {
    fn writes(&self) -> u64 {
        self.writes.get()
    }

    fn get_row(&self, account: &str, id: &str) -> Result<Option<(Record, Row)>, WriteError> {
        let found: Option<(i64, String, Option<String>, Option<i64>)> = self
            .conn
            .prepare_cached(
                "SELECT kind, body, bin_entry, deleted_at FROM records WHERE account = ?1 AND id = ?2",
            ).db()?
            .query_row(params![account, id], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })
            .optional().db()?;
        let Some((k, body, bin_entry, deleted_at)) = found else {
            return Ok(None);
        };
        let record = record_from_json(kind(k)?, &body)?;
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
        // Room for the record as it was and a little growth, so the JSON is written without
        // growing its buffer from empty on the way.
        let room = old.map_or(512, |old| old.len as usize + 64);
        let row = Row::of(record, bin, record_json(record, room)?);
        if old.is_some_and(|old| old.same_columns(&row)) {
            self.write(
                "UPDATE records SET body = ?3 WHERE account = ?1 AND id = ?2",
                params![account, record.id(), row.body],
            )?;
            return Ok(row);
        }
        let sql = if old.is_some() {
            "UPDATE records SET kind = ?3, project_id = ?4, column_id = ?5, parent_id = ?6, bin_entry = ?7, deleted_at = ?8, position = ?9, body = ?10
             WHERE account = ?1 AND id = ?2"
        } else {
            "INSERT INTO records (account, id, kind, project_id, column_id, parent_id, bin_entry, deleted_at, position, body)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
        };
        self.write(
            sql,
            params![
                account,
                record.id(),
                row.kind as i64,
                row.project_id,
                row.column_id,
                row.parent_id,
                row.bin.as_ref().map(|b| b.0.as_str()),
                row.bin.as_ref().map(|b| b.1),
                row.position,
                row.body
            ],
        )?;
        Ok(row)
    }

    fn destroy(&self, account: &str, id: &str) -> Result<(), WriteError> {
        self.write(
            "DELETE FROM records WHERE account = ?1 AND id = ?2",
            params![account, id],
        )?;
        Ok(())
    }

    fn is_live(&self, account: &str, kind: Kind, id: &str) -> Result<bool, WriteError> {
        self.exists(
            "SELECT 1 FROM records WHERE account = ?1 AND id = ?2 AND kind = ?3 AND bin_entry IS NULL",
            params![account, id, kind as i64],
        )
    }

    fn id_in_use(&self, account: &str, id: &str) -> Result<bool, WriteError> {
        self.exists(
            "SELECT 1 FROM records WHERE account = ?1 AND id = ?2",
            params![account, id],
        )
    }

    fn live_columns(&self, account: &str, project_id: &str) -> Result<Vec<Column>, WriteError> {
        self.bodies(
            LIVE_IN_PROJECT,
            params![account, project_id, Kind::Column as i64],
        )
    }

    fn live_project_tasks(&self, account: &str, project_id: &str) -> Result<Vec<Task>, WriteError> {
        self.bodies(
            LIVE_IN_PROJECT,
            params![account, project_id, Kind::Task as i64],
        )
    }

    fn live_column_tasks(&self, account: &str, column_id: &str) -> Result<Vec<Task>, WriteError> {
        self.bodies(LIVE_IN_COLUMN, params![account, column_id])
    }

    fn live_subtasks(&self, account: &str, parent_id: &str) -> Result<Vec<Task>, WriteError> {
        self.bodies(LIVE_SUBTASKS, params![account, parent_id])
    }

    fn count_live_projects(&self, account: &str) -> Result<usize, WriteError> {
        self.count(COUNT_PROJECTS, params![account])
    }

    fn count_live_columns(&self, account: &str, project_id: &str) -> Result<usize, WriteError> {
        self.count(
            COUNT_IN_PROJECT,
            params![account, project_id, Kind::Column as i64],
        )
    }

    fn min_position(
        &self,
        account: &str,
        kind: Kind,
        parent: Option<&str>,
    ) -> Result<Option<f64>, WriteError> {
        let sql = match kind {
            Kind::Project => MIN_PROJECT_POSITION,
            Kind::Column => MIN_COLUMN_POSITION,
            Kind::Task => MIN_TASK_POSITION,
        };
        self.conn
            .prepare_cached(sql)
            .db()?
            .query_row(params![account, parent], |r| r.get(0))
            .db()
    }

    fn item_task(&self, account: &str, item_id: &str) -> Result<Option<String>, WriteError> {
        self.string(
            "SELECT task_id FROM items WHERE account = ?1 AND id = ?2",
            params![account, item_id],
        )
    }

    fn item_id_in_use(&self, account: &str, id: &str) -> Result<bool, WriteError> {
        self.exists(
            "SELECT 1 FROM items WHERE account = ?1 AND id = ?2",
            params![account, id],
        )
    }

    fn index_items(&self, account: &str, old: Option<&Task>, new: &Task) -> Result<(), WriteError> {
        let before = old.map(item_ids).unwrap_or_default();
        let after = item_ids(new);
        for gone in before.iter().filter(|id| !after.contains(id)) {
            self.write(
                "DELETE FROM items WHERE account = ?1 AND id = ?2",
                params![account, gone],
            )?;
        }
        for added in after.iter().filter(|id| !before.contains(id)) {
            self.write(
                "INSERT OR REPLACE INTO items (account, id, task_id) VALUES (?1, ?2, ?3)",
                params![account, added, new.id],
            )?;
        }
        Ok(())
    }

    fn drop_items(&self, account: &str, task_id: &str) -> Result<(), WriteError> {
        self.write(
            "DELETE FROM items WHERE account = ?1 AND task_id = ?2",
            params![account, task_id],
        )?;
        Ok(())
    }

    fn add_bin_entry(&self, account: &str, e: &NewBinEntry<'_>) -> Result<(), WriteError> {
        self.write(
            "INSERT INTO bin (account, id, seq, kind, head, deleted_at, label, count)
             SELECT ?1, ?2, coalesce(max(seq), 0) + 1, ?3, ?4, ?5, ?6, ?7 FROM bin WHERE account = ?1",
            params![
                account,
                e.id,
                e.kind,
                e.head,
                e.deleted_at,
                e.label,
                e.count as i64
            ],
        )?;
        Ok(())
    }

    fn bin_len(&self, account: &str) -> Result<usize, WriteError> {
        self.count(
            "SELECT count(*) FROM bin WHERE account = ?1",
            params![account],
        )
    }

    fn bin_entry_ids(&self, account: &str) -> Result<Vec<String>, WriteError> {
        self.strings(
            "SELECT id FROM bin WHERE account = ?1 ORDER BY seq",
            params![account],
        )
    }

    fn bin_entry_exists(&self, account: &str, entry: &str) -> Result<bool, WriteError> {
        self.exists(
            "SELECT 1 FROM bin WHERE account = ?1 AND id = ?2",
            params![account, entry],
        )
    }

    fn bin_entry_headed_by(&self, account: &str, head: &str) -> Result<Option<String>, WriteError> {
        self.string(
            "SELECT id FROM bin WHERE account = ?1 AND head = ?2",
            params![account, head],
        )
    }

    fn bin_entry_rows(&self, account: &str, entry: &str) -> Result<Vec<EntryRow>, WriteError> {
        let mut stmt = self.conn.prepare_cached(ENTRY_ROWS).db()?;
        let rows = stmt
            .query_map(params![account, entry], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, Option<i64>>(3)?,
                    r.get::<_, i64>(4)?,
                ))
            })
            .db()?;
        rows.map(|row| {
            let (id, k, project_id, deleted_at, bytes) = row.db()?;
            Ok(EntryRow {
                id,
                kind: kind(k)?,
                project_id,
                deleted_at,
                bytes,
            })
        })
        .collect()
    }

    fn bin_entry_records(&self, account: &str, entry: &str) -> Result<Vec<Record>, WriteError> {
        let mut stmt = self.conn.prepare_cached(ENTRY_BODIES).db()?;
        let rows = stmt
            .query_map(params![account, entry], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
            })
            .db()?;
        rows.map(|row| {
            let (k, body) = row.db()?;
            record_from_json(kind(k)?, &body)
        })
        .collect()
    }

    fn remove_bin_entry(&self, account: &str, entry: &str) -> Result<(), WriteError> {
        self.write(
            "DELETE FROM bin WHERE account = ?1 AND id = ?2",
            params![account, entry],
        )?;
        Ok(())
    }

    fn put_marker(&self, account: &str, m: &MarkerRow) -> Result<(), WriteError> {
        self.write(
            "INSERT OR REPLACE INTO markers (account, id, kind, project_id, deleted_at) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![account, m.id, m.kind as i64, m.project_id, m.deleted_at],
        )?;
        Ok(())
    }

    fn create_account(&self, account: &str, created_at: i64) -> Result<(), WriteError> {
        self.write(
            "INSERT INTO accounts (id, rev, last_stamp, created_at) VALUES (?1, 0, 0, ?2)",
            params![account, created_at],
        )?;
        Ok(())
    }

    fn account_exists(&self, account: &str) -> Result<bool, WriteError> {
        self.exists("SELECT 1 FROM accounts WHERE id = ?1", params![account])
    }

    fn counters(&self, account: &str) -> Result<Counters, WriteError> {
        self.conn
            .prepare_cached("SELECT rev, last_stamp, stored_bytes FROM accounts WHERE id = ?1")
            .db()?
            .query_row(params![account], |r| {
                Ok(Counters {
                    rev: r.get(0)?,
                    last_stamp: r.get(1)?,
                    stored_bytes: r.get(2)?,
                })
            })
            .db()
    }

    fn save_counters(&self, account: &str, c: &Counters) -> Result<(), WriteError> {
        self.write(
            "UPDATE accounts SET rev = ?2, last_stamp = ?3, stored_bytes = ?4 WHERE id = ?1",
            params![account, c.rev, c.last_stamp, c.stored_bytes],
        )?;
        Ok(())
    }

    fn key_counts(&self, account: &str, now: i64) -> Result<KeyCounts, WriteError> {
        let (usable, usable_full, lasting_full): (i64, i64, i64) = self
            .conn
            .prepare_cached(
                "SELECT count(*), coalesce(sum(access = 'full'), 0),
                        coalesce(sum(access = 'full' AND expires_at IS NULL), 0) FROM keys
                 WHERE account = ?1 AND revoked_at IS NULL
                   AND (expires_at IS NULL OR expires_at > ?2)",
            )
            .db()?
            .query_row(params![account, now], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .db()?;
        Ok(KeyCounts {
            usable: usable as usize,
            usable_full: usable_full as usize,
            lasting_full: lasting_full as usize,
        })
    }

    fn insert_key(&self, k: &NewKey<'_>) -> Result<(), WriteError> {
        self.write(
            "INSERT INTO keys (id, account, digest, label, prefix, created_at, access, expires_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                k.id,
                k.account,
                k.digest,
                k.label,
                k.prefix,
                k.created_at,
                k.access.as_str(),
                k.expires_at
            ],
        )?;
        Ok(())
    }

    fn live_key(&self, key_id: &str) -> Result<Option<LiveKey>, WriteError> {
        self.conn
            .prepare_cached(
                "SELECT digest, id, account, access, expires_at FROM keys
                 WHERE id = ?1 AND revoked_at IS NULL",
            )
            .db()?
            .query_row(params![key_id], super::load::live_key_row)
            .optional()
            .db()
    }

    fn revoke_key(&self, key_id: &str, at: i64) -> Result<(), WriteError> {
        self.write(
            "UPDATE keys SET revoked_at = ?2 WHERE id = ?1",
            params![key_id, at],
        )?;
        Ok(())
    }

    fn add_allowance(&self, r: &AllowanceRow) -> Result<(), WriteError> {
        self.write(
            "INSERT INTO allowance (key_id, resets_at, reads, writes) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (key_id) DO UPDATE SET
                 reads = CASE WHEN resets_at = excluded.resets_at THEN reads + excluded.reads
                              WHEN resets_at < excluded.resets_at THEN excluded.reads
                              ELSE reads END,
                 writes = CASE WHEN resets_at = excluded.resets_at THEN writes + excluded.writes
                               WHEN resets_at < excluded.resets_at THEN excluded.writes
                               ELSE writes END,
                 resets_at = max(resets_at, excluded.resets_at)",
            params![r.key_id, r.resets_at, r.reads as i64, r.writes as i64],
        )?;
        Ok(())
    }

    fn touch_key(&self, key_id: &str, at: i64) -> Result<(), WriteError> {
        self.write(
            "UPDATE keys SET last_used_at = max(coalesce(last_used_at, 0), ?2) WHERE id = ?1",
            params![key_id, at],
        )?;
        Ok(())
    }

    fn set_meta(&self, name: &str, value: &[u8]) -> Result<(), WriteError> {
        self.write(
            "INSERT OR REPLACE INTO meta (name, value) VALUES (?1, ?2)",
            params![name, value],
        )?;
        Ok(())
    }

    fn next_undo_seq(&self, key_id: &str) -> Result<i64, WriteError> {
        self.conn
            .prepare_cached("SELECT coalesce(max(seq), 0) + 1 FROM undo WHERE key_id = ?1")
            .db()?
            .query_row(params![key_id], |r| r.get(0))
            .db()
    }

    fn push_undo(
        &self,
        key_id: &str,
        seq: i64,
        account: &str,
        step: &str,
    ) -> Result<(), WriteError> {
        self.write(
            "INSERT INTO undo (key_id, seq, account, step) VALUES (?1, ?2, ?3, ?4)",
            params![key_id, seq, account, step],
        )?;
        Ok(())
    }

    fn latest_undo(
        &self,
        key_id: &str,
        account: &str,
    ) -> Result<Option<(i64, String)>, WriteError> {
        self
            .conn
            .prepare_cached(
                "SELECT seq, step FROM undo WHERE key_id = ?1 AND account = ?2 ORDER BY seq DESC LIMIT 1",
            ).db()?
            .query_row(params![key_id, account], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional().db()
    }

    fn delete_undo(&self, key_id: &str, seq: i64) -> Result<(), WriteError> {
        self.write(
            "DELETE FROM undo WHERE key_id = ?1 AND seq = ?2",
            params![key_id, seq],
        )?;
        Ok(())
    }

    fn delete_undo_up_to(&self, key_id: &str, upto: i64) -> Result<(), WriteError> {
        self.write(
            "DELETE FROM undo WHERE key_id = ?1 AND seq <= ?2",
            params![key_id, upto],
        )?;
        Ok(())
    }

    fn forget_undo(&self, key_id: &str) -> Result<(), WriteError> {
        self.write("DELETE FROM undo WHERE key_id = ?1", params![key_id])?;
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
}

#[cfg(test)]
#[path = "tx_tests.rs"]
mod tests;
