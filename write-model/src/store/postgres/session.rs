//! The writer's session on PostgreSQL: its connection, the statements prepared on it, the
//! writes it holds back (see [`super::deferred`]), and the helpers every operation of
//! [`super::tx`] runs its SQL through. Each helper sends the held writes first, so every
//! statement sees the transaction as if they had been sent at once.
//!
//! PostgreSQL aborts a whole transaction at its first failing statement, where SQLite goes
//! on. So a statement that fails counts as a write: the processor then runs the group again
//! with a savepoint per command, and the failure costs only its own command.

use std::cell::{Cell, RefCell};

use ahash::AHashMap;
use postgres::types::ToSql;
use postgres::{Client, Row as PgRow, Statement};
use serde::de::DeserializeOwned;

use crate::error::WriteError;
use crate::records::Kind;
use crate::store::Row;
use crate::store::copy::RecordRow;

use super::deferred::{self, Deferred};

pub(super) type Params<'a> = &'a [&'a (dyn ToSql + Sync)];

pub(super) struct PgTx {
    client: RefCell<Client>,
    /// This node's token, in what it announces to the others.
    pub(super) node: String,
    statements: RefCell<AHashMap<&'static str, Statement>>,
    /// Rows written so far, held-back ones included (see [`Tx::writes`](crate::store::Tx::writes)).
    pub(super) writes: Cell<u64>,
    deferred: RefCell<Deferred>,
    /// The top position of each list of siblings (`min_position`) read in this transaction,
    /// kept current by its writes, so a run of creates into one column reads it once.
    pub(super) tops: RefCell<AHashMap<Siblings, Option<f64>>>,
}

/// A list of siblings: the account, the kind, and the parent (a task's column, a column's
/// project, none for projects).
pub(super) type Siblings = (String, i64, Option<String>);

impl PgTx {
    pub(super) fn new(client: Client, node: &str) -> Self {
        PgTx {
            client: RefCell::new(client),
            node: node.to_owned(),
            statements: RefCell::new(AHashMap::new()),
            writes: Cell::new(0),
            deferred: RefCell::new(Deferred::default()),
            tops: RefCell::new(AHashMap::new()),
        }
    }

    /// Sends the writes held back, before anything else goes out on the connection.
    pub(super) fn send_deferred(&self) -> Result<(), WriteError> {
        if self.deferred.borrow().is_empty() {
            return Ok(());
        }
        let batch = self.deferred.borrow_mut().take();
        // Each goes out as it is: `run` would send the held writes first, and they are these.
        if let Some(r) = batch.records {
            self.run_now(deferred::INSERT_RECORDS, |c, s| {
                c.execute(
                    s,
                    &[
                        &r.accounts,
                        &r.ids,
                        &r.kinds,
                        &r.project_ids,
                        &r.column_ids,
                        &r.parent_ids,
                        &r.bin_entries,
                        &r.deleted_ats,
                        &r.positions,
                        &r.bodies,
                    ],
                )
            })?;
        }
        if let Some([accounts, ids, bodies]) = batch.bodies {
            self.run_now(deferred::UPDATE_BODIES, |c, s| {
                c.execute(s, &[&accounts, &ids, &bodies])
            })?;
        }
        if let Some([accounts, ids, tasks]) = batch.items {
            self.run_now(deferred::INSERT_ITEMS, |c, s| {
                c.execute(s, &[&accounts, &ids, &tasks])
            })?;
        }
        if let Some(u) = batch.undo {
            self.run_now(deferred::INSERT_UNDO, |c, s| {
                c.execute(s, &[&u.accounts, &u.key_ids, &u.seqs, &u.steps])
            })?;
        }
        Ok(())
    }

    /// Drops what the session holds for the open transaction (the writes held back, the
    /// tops read): a transaction begins, or the transaction or a savepoint is rolled back.
    pub(super) fn discard(&self) {
        self.deferred.borrow_mut().clear();
        self.tops.borrow_mut().clear();
    }

    /// Holds a write back, counting it as written.
    pub(super) fn defer(&self, hold: impl FnOnce(&mut Deferred)) {
        hold(&mut self.deferred.borrow_mut());
        self.writes.set(self.writes.get() + 1);
    }

    /// Holds a new record back, counting it as written; sends what is held once enough
    /// records wait.
    pub(super) fn defer_record(&self, record: RecordRow) -> Result<(), WriteError> {
        let mut full = false;
        self.defer(|d| full = d.record(record));
        if full {
            self.send_deferred()?;
        }
        Ok(())
    }

    /// Whether the connection is gone.
    pub(super) fn is_closed(&self) -> bool {
        self.client.borrow().is_closed()
    }

    /// Goes on over a new connection; statements prepared on the old one are gone with it.
    pub(super) fn reconnect(&self, client: Client) {
        *self.client.borrow_mut() = client;
        self.statements.borrow_mut().clear();
    }

    /// Runs `sql` (the transaction's own statements) after the writes held back.
    pub(super) fn batch(&self, sql: &str) -> Result<(), WriteError> {
        self.send_deferred()?;
        self.client
            .borrow_mut()
            .batch_execute(sql)
            .map_err(|e| self.failed(e))
    }

    /// After a failing statement the transaction is aborted: count it as a write so the
    /// group runs again with savepoints.
    pub(super) fn failed(&self, e: postgres::Error) -> WriteError {
        self.writes.set(self.writes.get() + 1);
        super::connect::fault(e)
    }

    pub(super) fn statement(&self, sql: &'static str) -> Result<Statement, WriteError> {
        if let Some(s) = self.statements.borrow().get(sql) {
            return Ok(s.clone());
        }
        let prepared = self
            .client
            .borrow_mut()
            .prepare(sql)
            .map_err(|e| self.failed(e))?;
        self.statements.borrow_mut().insert(sql, prepared.clone());
        Ok(prepared)
    }

    /// Runs one prepared statement of the transaction's own, after the writes held back; a
    /// failure counts as a write (see [`Self::failed`]).
    fn run<T>(
        &self,
        sql: &'static str,
        call: impl FnOnce(&mut Client, &Statement) -> Result<T, postgres::Error>,
    ) -> Result<T, WriteError> {
        self.send_deferred()?;
        self.run_now(sql, call)
    }

    /// [`Self::run`], with nothing sent before it.
    fn run_now<T>(
        &self,
        sql: &'static str,
        call: impl FnOnce(&mut Client, &Statement) -> Result<T, postgres::Error>,
    ) -> Result<T, WriteError> {
        let stmt = self.statement(sql)?;
        call(&mut self.client.borrow_mut(), &stmt).map_err(|e| self.failed(e))
    }

    pub(super) fn query(
        &self,
        sql: &'static str,
        params: Params<'_>,
    ) -> Result<Vec<PgRow>, WriteError> {
        self.run(sql, |c, stmt| c.query(stmt, params))
    }

    pub(super) fn query_opt(
        &self,
        sql: &'static str,
        params: Params<'_>,
    ) -> Result<Option<PgRow>, WriteError> {
        self.run(sql, |c, stmt| c.query_opt(stmt, params))
    }

    pub(super) fn write(&self, sql: &'static str, params: Params<'_>) -> Result<u64, WriteError> {
        let n = self.run(sql, |c, stmt| c.execute(stmt, params))?;
        self.writes.set(self.writes.get() + n);
        Ok(n)
    }

    pub(super) fn exists(&self, sql: &'static str, params: Params<'_>) -> Result<bool, WriteError> {
        Ok(self.query_opt(sql, params)?.is_some())
    }

    pub(super) fn count(&self, sql: &'static str, params: Params<'_>) -> Result<usize, WriteError> {
        let rows = self.query(sql, params)?;
        Ok(rows.first().map_or(0, |r| r.get::<_, i64>(0)) as usize)
    }

    pub(super) fn bodies<T: DeserializeOwned>(
        &self,
        sql: &'static str,
        params: Params<'_>,
    ) -> Result<Vec<T>, WriteError> {
        self.query(sql, params)?
            .iter()
            .map(|r| Ok(serde_json::from_str(r.get::<_, &str>(0))?))
            .collect()
    }

    pub(super) fn strings(
        &self,
        sql: &'static str,
        params: Params<'_>,
    ) -> Result<Vec<String>, WriteError> {
        Ok(self
            .query(sql, params)?
            .iter()
            .map(|r| r.get::<_, String>(0))
            .collect())
    }

    pub(super) fn string(
        &self,
        sql: &'static str,
        params: Params<'_>,
    ) -> Result<Option<String>, WriteError> {
        Ok(self.query_opt(sql, params)?.map(|r| r.get(0)))
    }
}

/// The list of siblings a live row sits in, as `min_position` reads them.
fn siblings_of(account: &str, row: &Row) -> Option<Siblings> {
    if row.bin.is_some() {
        return None;
    }
    let parent = match row.kind {
        Kind::Project => None,
        Kind::Column => Some(row.project_id.clone()),
        Kind::Task => row.column_id.clone(),
    };
    Some((account.to_owned(), row.kind as i64, parent))
}

impl PgTx {
    /// Keeps the tops read in this transaction true as a record is written from `old` to
    /// `new`: a list the record may have headed is read again; a list it joins takes its
    /// position if that is higher.
    pub(super) fn moved(&self, account: &str, old: Option<&Row>, new: &Row) {
        let mut tops = self.tops.borrow_mut();
        if tops.is_empty() {
            return;
        }
        if let Some(old) = old
            && let Some(left) = siblings_of(account, old)
            && tops
                .get(&left)
                .is_some_and(|top| top.is_none_or(|top| old.position <= top))
        {
            tops.remove(&left);
        }
        if let Some(joined) = siblings_of(account, new)
            && let Some(top) = tops.get_mut(&joined)
        {
            *top = Some(top.map_or(new.position, |t| t.min(new.position)));
        }
    }
}
