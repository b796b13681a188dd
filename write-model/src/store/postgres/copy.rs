//! The PostgreSQL store's rows out and in for `workboard copy`: every table streamed from
//! one snapshot, and rows written back in one transaction.

use postgres::{Client, IsolationLevel};

use crate::error::WriteError;
use crate::store::Engine;
use crate::store::copy::*;

/// Streams every table's rows to `each`, from one snapshot.
pub(super) fn copy_out(
    client: &mut Client,
    each: &mut dyn FnMut(Rows) -> Result<(), WriteError>,
) -> Result<(), WriteError> {
    let mut tx = client
        .build_transaction()
        .isolation_level(IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .db()?;
    let rows = tx
        .query("SELECT name, value FROM meta ORDER BY name", &[])
        .db()?;
    batched(
        rows.iter().map(|r| {
            Ok(MetaRow {
                name: r.get(0),
                value: r.get(1),
            })
        }),
        Rows::Meta,
        each,
    )?;
    let rows = tx
        .query(
            "SELECT id, rev, last_stamp, stored_bytes, created_at FROM accounts ORDER BY id",
            &[],
        )
        .db()?;
    batched(
        rows.iter().map(|r| {
            Ok(AccountRow {
                id: r.get(0),
                rev: r.get(1),
                last_stamp: r.get(2),
                stored_bytes: r.get(3),
                created_at: r.get(4),
            })
        }),
        Rows::Accounts,
        each,
    )?;
    let rows = tx
        .query(
            "SELECT id, account, digest, label, prefix, created_at, last_used_at, revoked_at,
                access, expires_at
         FROM keys ORDER BY account, id",
            &[],
        )
        .db()?;
    batched(
        rows.iter().map(|r| {
            Ok(KeyRow {
                id: r.get(0),
                account: r.get(1),
                digest: r.get(2),
                label: r.get(3),
                prefix: r.get(4),
                created_at: r.get(5),
                last_used_at: r.get(6),
                revoked_at: r.get(7),
                access: r.get(8),
                expires_at: r.get(9),
            })
        }),
        Rows::Keys,
        each,
    )?;
    let rows = tx.query(
        "SELECT account, key_id, resets_at, reads, writes FROM allowance ORDER BY account, key_id",
        &[],
    ).db()?;
    batched(
        rows.iter().map(|r| {
            Ok(AllowanceCopy {
                account: r.get(0),
                key_id: r.get(1),
                resets_at: r.get(2),
                reads: r.get(3),
                writes: r.get(4),
            })
        }),
        Rows::Allowances,
        each,
    )?;
    // Records stream through a cursor: a large store is never held whole.
    let portal = tx.bind(
        "SELECT account, id, kind, project_id, column_id, parent_id, bin_entry, deleted_at, position, body
         FROM records ORDER BY account, id",
        &[],
    ).db()?;
    loop {
        let rows = tx.query_portal(&portal, BATCH as i32).db()?;
        if rows.is_empty() {
            break;
        }
        each(Rows::Records(
            rows.iter()
                .map(|r| RecordRow {
                    account: r.get(0),
                    id: r.get(1),
                    kind: r.get(2),
                    project_id: r.get(3),
                    column_id: r.get(4),
                    parent_id: r.get(5),
                    bin_entry: r.get(6),
                    deleted_at: r.get(7),
                    position: r.get(8),
                    body: r.get(9),
                })
                .collect(),
        ))?;
    }
    let rows = tx
        .query(
            "SELECT account, id, seq, kind, head, deleted_at, label, count, key_id
         FROM bin ORDER BY account, seq",
            &[],
        )
        .db()?;
    batched(
        rows.iter().map(|r| {
            Ok(BinRow {
                account: r.get(0),
                id: r.get(1),
                seq: r.get(2),
                kind: r.get(3),
                head: r.get(4),
                deleted_at: r.get(5),
                label: r.get(6),
                count: r.get(7),
                key_id: r.get(8),
            })
        }),
        Rows::Bin,
        each,
    )?;
    let rows = tx
        .query(
            "SELECT account, id, task_id FROM items ORDER BY account, id",
            &[],
        )
        .db()?;
    batched(
        rows.iter().map(|r| {
            Ok(ItemRow {
                account: r.get(0),
                id: r.get(1),
                task_id: r.get(2),
            })
        }),
        Rows::Items,
        each,
    )?;
    let rows = tx
        .query(
            "SELECT account, id, kind, project_id, deleted_at FROM markers ORDER BY account, id",
            &[],
        )
        .db()?;
    batched(
        rows.iter().map(|r| {
            Ok(MarkerCopy {
                account: r.get(0),
                id: r.get(1),
                kind: r.get(2),
                project_id: r.get(3),
                deleted_at: r.get(4),
            })
        }),
        Rows::Markers,
        each,
    )?;
    let rows = tx
        .query(
            "SELECT account, key_id, seq, step FROM undo ORDER BY key_id, seq",
            &[],
        )
        .db()?;
    batched(
        rows.iter().map(|r| {
            Ok(UndoRow {
                account: r.get(0),
                key_id: r.get(1),
                seq: r.get(2),
                step: r.get(3),
            })
        }),
        Rows::Undo,
        each,
    )?;
    tx.commit().db()?;
    Ok(())
}

/// Writes rows into the database in one transaction, begun when made.
pub(super) struct PgLoader {
    client: Client,
}

impl PgLoader {
    pub(super) fn begin(mut client: Client) -> Result<Self, WriteError> {
        client.batch_execute("BEGIN").db()?;
        Ok(PgLoader { client })
    }
}

impl Loader for PgLoader {
    fn load(&mut self, rows: Rows) -> Result<(), WriteError> {
        let c = &mut self.client;
        match rows {
            Rows::Meta(rows) => {
                let stmt = c
                    .prepare(
                        "INSERT INTO meta (name, value) VALUES ($1, $2)
                     ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value",
                    )
                    .db()?;
                for r in rows {
                    c.execute(&stmt, &[&r.name, &r.value]).db()?;
                }
            }
            Rows::Accounts(rows) => {
                let stmt = c.prepare(
                    "INSERT INTO accounts (id, rev, last_stamp, stored_bytes, created_at) VALUES ($1, $2, $3, $4, $5)",
                ).db()?;
                for r in rows {
                    c.execute(
                        &stmt,
                        &[&r.id, &r.rev, &r.last_stamp, &r.stored_bytes, &r.created_at],
                    )
                    .db()?;
                }
            }
            Rows::Keys(rows) => {
                let stmt = c.prepare(
                    "INSERT INTO keys (account, id, digest, label, prefix, created_at, last_used_at,
                         revoked_at, access, expires_at)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
                ).db()?;
                for r in rows {
                    c.execute(
                        &stmt,
                        &[
                            &r.account,
                            &r.id,
                            &r.digest,
                            &r.label,
                            &r.prefix,
                            &r.created_at,
                            &r.last_used_at,
                            &r.revoked_at,
                            &r.access,
                            &r.expires_at,
                        ],
                    )
                    .db()?;
                }
            }
            Rows::Allowances(rows) => {
                let stmt = c.prepare(
                    "INSERT INTO allowance (account, key_id, resets_at, reads, writes) VALUES ($1, $2, $3, $4, $5)",
                ).db()?;
                for r in rows {
                    c.execute(
                        &stmt,
                        &[&r.account, &r.key_id, &r.resets_at, &r.reads, &r.writes],
                    )
                    .db()?;
                }
            }
            Rows::Records(rows) => {
                let stmt = c.prepare(
                    "INSERT INTO records (account, id, kind, project_id, column_id, parent_id, bin_entry, deleted_at, position, body)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
                ).db()?;
                for r in rows {
                    c.execute(
                        &stmt,
                        &[
                            &r.account,
                            &r.id,
                            &r.kind,
                            &r.project_id,
                            &r.column_id,
                            &r.parent_id,
                            &r.bin_entry,
                            &r.deleted_at,
                            &r.position,
                            &r.body,
                        ],
                    )
                    .db()?;
                }
            }
            Rows::Bin(rows) => {
                let stmt = c.prepare(
                    "INSERT INTO bin (account, id, seq, kind, head, deleted_at, label, count, key_id)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                ).db()?;
                for r in rows {
                    c.execute(
                        &stmt,
                        &[
                            &r.account,
                            &r.id,
                            &r.seq,
                            &r.kind,
                            &r.head,
                            &r.deleted_at,
                            &r.label,
                            &r.count,
                            &r.key_id,
                        ],
                    )
                    .db()?;
                }
            }
            Rows::Items(rows) => {
                let stmt = c
                    .prepare("INSERT INTO items (account, id, task_id) VALUES ($1, $2, $3)")
                    .db()?;
                for r in rows {
                    c.execute(&stmt, &[&r.account, &r.id, &r.task_id]).db()?;
                }
            }
            Rows::Markers(rows) => {
                let stmt = c.prepare(
                    "INSERT INTO markers (account, id, kind, project_id, deleted_at) VALUES ($1, $2, $3, $4, $5)",
                ).db()?;
                for r in rows {
                    c.execute(
                        &stmt,
                        &[&r.account, &r.id, &r.kind, &r.project_id, &r.deleted_at],
                    )
                    .db()?;
                }
            }
            Rows::Undo(rows) => {
                let stmt = c
                    .prepare(
                        "INSERT INTO undo (account, key_id, seq, step) VALUES ($1, $2, $3, $4)",
                    )
                    .db()?;
                for r in rows {
                    c.execute(&stmt, &[&r.account, &r.key_id, &r.seq, &r.step])
                        .db()?;
                }
            }
        }
        Ok(())
    }

    fn commit(mut self: Box<Self>) -> Result<(), WriteError> {
        self.client.batch_execute("COMMIT").db()?;
        Ok(())
    }
}
