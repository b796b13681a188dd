//! A SQLite store's rows out (from one read transaction) and in (into an empty store, in one
//! transaction), for `workboard copy` and for backups of a PostgreSQL store.

use rusqlite::{Connection, params};

use crate::error::WriteError;
use crate::store::Engine;
use crate::store::copy::*;

/// Streams every table's rows to `each`, from one snapshot.
pub(super) fn copy_out(
    conn: &Connection,
    each: &mut dyn FnMut(Rows) -> Result<(), WriteError>,
) -> Result<(), WriteError> {
    let tx = conn.unchecked_transaction().db()?;
    let mut stmt = tx
        .prepare("SELECT name, value FROM meta ORDER BY name")
        .db()?;
    let rows = stmt
        .query_map([], |r| {
            Ok(MetaRow {
                name: r.get(0)?,
                value: r.get(1)?,
            })
        })
        .db()?;
    batched(rows.map(|r| r.db()), Rows::Meta, each)?;
    let mut stmt = tx
        .prepare("SELECT id, rev, last_stamp, stored_bytes, created_at FROM accounts ORDER BY id")
        .db()?;
    let rows = stmt
        .query_map([], |r| {
            Ok(AccountRow {
                id: r.get(0)?,
                rev: r.get(1)?,
                last_stamp: r.get(2)?,
                stored_bytes: r.get(3)?,
                created_at: r.get(4)?,
            })
        })
        .db()?;
    batched(rows.map(|r| r.db()), Rows::Accounts, each)?;
    let mut stmt = tx
        .prepare(
            "SELECT id, account, digest, label, prefix, created_at, last_used_at, revoked_at,
                access, expires_at
         FROM keys ORDER BY account, id",
        )
        .db()?;
    let rows = stmt
        .query_map([], |r| {
            Ok(KeyRow {
                id: r.get(0)?,
                account: r.get(1)?,
                digest: r.get(2)?,
                label: r.get(3)?,
                prefix: r.get(4)?,
                created_at: r.get(5)?,
                last_used_at: r.get(6)?,
                revoked_at: r.get(7)?,
                access: r.get(8)?,
                expires_at: r.get(9)?,
            })
        })
        .db()?;
    batched(rows.map(|r| r.db()), Rows::Keys, each)?;
    let mut stmt = tx
        .prepare(
            "SELECT k.account, a.key_id, a.resets_at, a.reads, a.writes
         FROM allowance a JOIN keys k ON k.id = a.key_id ORDER BY k.account, a.key_id",
        )
        .db()?;
    let rows = stmt
        .query_map([], |r| {
            Ok(AllowanceCopy {
                account: r.get(0)?,
                key_id: r.get(1)?,
                resets_at: r.get(2)?,
                reads: r.get(3)?,
                writes: r.get(4)?,
            })
        })
        .db()?;
    batched(rows.map(|r| r.db()), Rows::Allowances, each)?;
    let mut stmt = tx.prepare(
        "SELECT account, id, kind, project_id, column_id, parent_id, bin_entry, deleted_at, position, body
         FROM records ORDER BY account, id",
    ).db()?;
    let rows = stmt
        .query_map([], |r| {
            Ok(RecordRow {
                account: r.get(0)?,
                id: r.get(1)?,
                kind: r.get(2)?,
                project_id: r.get(3)?,
                column_id: r.get(4)?,
                parent_id: r.get(5)?,
                bin_entry: r.get(6)?,
                deleted_at: r.get(7)?,
                position: r.get(8)?,
                body: r.get(9)?,
            })
        })
        .db()?;
    batched(rows.map(|r| r.db()), Rows::Records, each)?;
    let mut stmt = tx
        .prepare(
            "SELECT account, id, seq, kind, head, deleted_at, label, count, key_id
         FROM bin ORDER BY account, seq",
        )
        .db()?;
    let rows = stmt
        .query_map([], |r| {
            Ok(BinRow {
                account: r.get(0)?,
                id: r.get(1)?,
                seq: r.get(2)?,
                kind: r.get(3)?,
                head: r.get(4)?,
                deleted_at: r.get(5)?,
                label: r.get(6)?,
                count: r.get(7)?,
                key_id: r.get(8)?,
            })
        })
        .db()?;
    batched(rows.map(|r| r.db()), Rows::Bin, each)?;
    let mut stmt = tx
        .prepare("SELECT account, id, task_id FROM items ORDER BY account, id")
        .db()?;
    let rows = stmt
        .query_map([], |r| {
            Ok(ItemRow {
                account: r.get(0)?,
                id: r.get(1)?,
                task_id: r.get(2)?,
            })
        })
        .db()?;
    batched(rows.map(|r| r.db()), Rows::Items, each)?;
    let mut stmt = tx
        .prepare(
            "SELECT account, id, kind, project_id, deleted_at FROM markers ORDER BY account, id",
        )
        .db()?;
    let rows = stmt
        .query_map([], |r| {
            Ok(MarkerCopy {
                account: r.get(0)?,
                id: r.get(1)?,
                kind: r.get(2)?,
                project_id: r.get(3)?,
                deleted_at: r.get(4)?,
            })
        })
        .db()?;
    batched(rows.map(|r| r.db()), Rows::Markers, each)?;
    let mut stmt = tx
        .prepare("SELECT account, key_id, seq, step FROM undo ORDER BY key_id, seq")
        .db()?;
    let rows = stmt
        .query_map([], |r| {
            Ok(UndoRow {
                account: r.get(0)?,
                key_id: r.get(1)?,
                seq: r.get(2)?,
                step: r.get(3)?,
            })
        })
        .db()?;
    batched(rows.map(|r| r.db()), Rows::Undo, each)?;
    Ok(())
}

/// Writes rows into a store in one transaction, begun when made.
pub(super) struct SqliteLoader {
    conn: Connection,
}

impl SqliteLoader {
    pub(super) fn begin(conn: Connection) -> Result<Self, WriteError> {
        conn.execute_batch("BEGIN IMMEDIATE").db()?;
        Ok(SqliteLoader { conn })
    }
}

impl Loader for SqliteLoader {
    fn load(&mut self, rows: Rows) -> Result<(), WriteError> {
        let c = &self.conn;
        match rows {
            Rows::Meta(rows) => {
                let mut stmt = c
                    .prepare_cached("INSERT OR REPLACE INTO meta (name, value) VALUES (?1, ?2)")
                    .db()?;
                for r in rows {
                    stmt.execute(params![r.name, r.value]).db()?;
                }
            }
            Rows::Accounts(rows) => {
                let mut stmt = c.prepare_cached(
                    "INSERT INTO accounts (id, rev, last_stamp, stored_bytes, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
                ).db()?;
                for r in rows {
                    stmt.execute(params![
                        r.id,
                        r.rev,
                        r.last_stamp,
                        r.stored_bytes,
                        r.created_at
                    ])
                    .db()?;
                }
            }
            Rows::Keys(rows) => {
                let mut stmt = c.prepare_cached(
                    "INSERT INTO keys (id, account, digest, label, prefix, created_at, last_used_at,
                         revoked_at, access, expires_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                ).db()?;
                for r in rows {
                    stmt.execute(params![
                        r.id,
                        r.account,
                        r.digest,
                        r.label,
                        r.prefix,
                        r.created_at,
                        r.last_used_at,
                        r.revoked_at,
                        r.access,
                        r.expires_at
                    ])
                    .db()?;
                }
            }
            Rows::Allowances(rows) => {
                let mut stmt = c.prepare_cached(
                    "INSERT INTO allowance (key_id, resets_at, reads, writes) VALUES (?1, ?2, ?3, ?4)",
                ).db()?;
                for r in rows {
                    stmt.execute(params![r.key_id, r.resets_at, r.reads, r.writes])
                        .db()?;
                }
            }
            Rows::Records(rows) => {
                let mut stmt = c.prepare_cached(
                    "INSERT INTO records (account, id, kind, project_id, column_id, parent_id, bin_entry, deleted_at, position, body)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                ).db()?;
                for r in rows {
                    stmt.execute(params![
                        r.account,
                        r.id,
                        r.kind,
                        r.project_id,
                        r.column_id,
                        r.parent_id,
                        r.bin_entry,
                        r.deleted_at,
                        r.position,
                        r.body
                    ])
                    .db()?;
                }
            }
            Rows::Bin(rows) => {
                let mut stmt = c.prepare_cached(
                    "INSERT INTO bin (account, id, seq, kind, head, deleted_at, label, count, key_id)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                ).db()?;
                for r in rows {
                    stmt.execute(params![
                        r.account,
                        r.id,
                        r.seq,
                        r.kind,
                        r.head,
                        r.deleted_at,
                        r.label,
                        r.count,
                        r.key_id
                    ])
                    .db()?;
                }
            }
            Rows::Items(rows) => {
                let mut stmt = c
                    .prepare_cached("INSERT INTO items (account, id, task_id) VALUES (?1, ?2, ?3)")
                    .db()?;
                for r in rows {
                    stmt.execute(params![r.account, r.id, r.task_id]).db()?;
                }
            }
            Rows::Markers(rows) => {
                let mut stmt = c.prepare_cached(
                    "INSERT INTO markers (account, id, kind, project_id, deleted_at) VALUES (?1, ?2, ?3, ?4, ?5)",
                ).db()?;
                for r in rows {
                    stmt.execute(params![r.account, r.id, r.kind, r.project_id, r.deleted_at])
                        .db()?;
                }
            }
            Rows::Undo(rows) => {
                let mut stmt = c
                    .prepare_cached(
                        "INSERT INTO undo (key_id, seq, account, step) VALUES (?1, ?2, ?3, ?4)",
                    )
                    .db()?;
                for r in rows {
                    stmt.execute(params![r.key_id, r.seq, r.account, r.step])
                        .db()?;
                }
            }
        }
        Ok(())
    }

    fn commit(self: Box<Self>) -> Result<(), WriteError> {
        self.conn.execute_batch("COMMIT").db()?;
        Ok(())
    }
}
