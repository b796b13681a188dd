//! Writes the writer holds back and sends together: each round trip to PostgreSQL costs
//! tens of microseconds, and a group of card edits would otherwise spend most of its time
//! on them (a PATCH rewrites its card's and its project's bodies and adds an undo step).
//!
//! Only the writes nothing else in the transaction depends on meanwhile are held: a new
//! record, a record's body rewritten in place, an item (a tag, checklist entry or comment)
//! added to a card, and a new undo step. So a card create sends nothing of its own until the
//! group commits. They go out, in one statement per kind (new records first, so a rewrite of
//! one finds it), before anything else is sent on the connection (any read or other write,
//! a savepoint, its release, the commit), so every statement still sees the transaction as
//! if they had been sent at once; a rollback drops them. A body rewritten twice, or an item
//! added twice, is sent once with its last value, as the second write would have left it.
//! New records go out by themselves once [`MAX_HELD_RECORDS`] wait, so an import of a whole
//! account never holds every body.

use ahash::AHashSet;

use crate::store::copy::RecordRow;

/// New records held before they are sent by themselves.
pub(super) const MAX_HELD_RECORDS: usize = 256;

/// The held writes, in the order they were made.
#[derive(Debug, Default)]
pub(super) struct Deferred {
    records: Vec<RecordRow>,
    /// `(account, id, body)`.
    bodies: Vec<(String, String, String)>,
    /// `(account, item id, task id)`.
    items: Vec<(String, String, String)>,
    /// `(account, key_id, seq, step)`.
    undo: Vec<(String, String, i64, String)>,
}

/// One batch of held writes, ready to send: the columns of each statement's `unnest`.
pub(super) struct Batch {
    pub records: Option<RecordColumns>,
    /// Accounts, ids and bodies.
    pub bodies: Option<[Vec<String>; 3]>,
    /// Accounts, item ids and task ids.
    pub items: Option<[Vec<String>; 3]>,
    pub undo: Option<UndoColumns>,
}

/// New records as columns.
#[derive(Debug, Default)]
pub(super) struct RecordColumns {
    pub accounts: Vec<String>,
    pub ids: Vec<String>,
    pub kinds: Vec<i64>,
    pub project_ids: Vec<String>,
    pub column_ids: Vec<Option<String>>,
    pub parent_ids: Vec<Option<String>>,
    pub bin_entries: Vec<Option<String>>,
    pub deleted_ats: Vec<Option<i64>>,
    pub positions: Vec<f64>,
    pub bodies: Vec<String>,
}

/// Undo steps as columns.
#[derive(Debug, Default)]
pub(super) struct UndoColumns {
    pub accounts: Vec<String>,
    pub key_ids: Vec<String>,
    pub seqs: Vec<i64>,
    pub steps: Vec<String>,
}

/// Inserts new records.
pub(super) const INSERT_RECORDS: &str = "INSERT INTO records
     (account, id, kind, project_id, column_id, parent_id, bin_entry, deleted_at, position, body)
     SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[],
         $6::text[], $7::text[], $8::bigint[], $9::float8[], $10::text[])";

/// Rewrites bodies of existing records, one row per `(account, id)`.
pub(super) const UPDATE_BODIES: &str = "UPDATE records SET body = v.body
     FROM unnest($1::text[], $2::text[], $3::text[]) AS v (account, id, body)
     WHERE records.account = v.account AND records.id = v.id";

/// Adds items, or moves them to the task named (as one `INSERT` of each would).
pub(super) const INSERT_ITEMS: &str = "INSERT INTO items (account, id, task_id)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[])
     ON CONFLICT (account, id) DO UPDATE SET task_id = EXCLUDED.task_id";

pub(super) const INSERT_UNDO: &str = "INSERT INTO undo (account, key_id, seq, step)
     SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[])";

impl Deferred {
    /// Holds a new record; says whether enough are held to send them now.
    pub fn record(&mut self, record: RecordRow) -> bool {
        self.records.push(record);
        self.records.len() >= MAX_HELD_RECORDS
    }

    pub fn body(&mut self, account: &str, id: &str, body: &str) {
        self.bodies
            .push((account.to_owned(), id.to_owned(), body.to_owned()));
    }

    pub fn item(&mut self, account: &str, id: &str, task_id: &str) {
        self.items
            .push((account.to_owned(), id.to_owned(), task_id.to_owned()));
    }

    pub fn undo(&mut self, account: &str, key_id: &str, seq: i64, step: &str) {
        self.undo
            .push((account.to_owned(), key_id.to_owned(), seq, step.to_owned()));
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
            && self.bodies.is_empty()
            && self.items.is_empty()
            && self.undo.is_empty()
    }

    /// Drops what is held (the transaction, or its savepoint, rolled back).
    pub fn clear(&mut self) {
        self.records.clear();
        self.bodies.clear();
        self.items.clear();
        self.undo.clear();
    }

    /// Takes what is held as one batch; a body rewritten, or an item added, more than once
    /// keeps its last value (one statement may not change a row twice).
    pub fn take(&mut self) -> Batch {
        let records = std::mem::take(&mut self.records);
        let records = (!records.is_empty()).then(|| {
            let mut c = RecordColumns::default();
            for r in records {
                c.accounts.push(r.account);
                c.ids.push(r.id);
                c.kinds.push(r.kind);
                c.project_ids.push(r.project_id);
                c.column_ids.push(r.column_id);
                c.parent_ids.push(r.parent_id);
                c.bin_entries.push(r.bin_entry);
                c.deleted_ats.push(r.deleted_at);
                c.positions.push(r.position);
                c.bodies.push(r.body);
            }
            c
        });
        let bodies = last_of_each(std::mem::take(&mut self.bodies));
        let items = last_of_each(std::mem::take(&mut self.items));
        let undo = std::mem::take(&mut self.undo);
        let undo = (!undo.is_empty()).then(|| {
            let mut columns = UndoColumns::default();
            for (account, key_id, seq, step) in undo {
                columns.accounts.push(account);
                columns.key_ids.push(key_id);
                columns.seqs.push(seq);
                columns.steps.push(step);
            }
            columns
        });
        Batch {
            records,
            bodies,
            items,
            undo,
        }
    }
}

/// `(account, id, value)` rows as columns, each `(account, id)` once with its last value (one
/// statement may not change a row twice); `None` when there are none.
fn last_of_each(rows: Vec<(String, String, String)>) -> Option<[Vec<String>; 3]> {
    if rows.is_empty() {
        return None;
    }
    // From the end, the first sight of each `(account, id)` is its last value.
    let mut seen: AHashSet<(&str, &str)> = AHashSet::with_capacity(rows.len());
    let last: Vec<bool> = rows
        .iter()
        .rev()
        .map(|(account, id, _)| seen.insert((account, id)))
        .collect();
    let mut columns: [Vec<String>; 3] = Default::default();
    for ((account, id, value), last) in rows.into_iter().zip(last.into_iter().rev()) {
        if last {
            columns[0].push(account);
            columns[1].push(id);
            columns[2].push(value);
        }
    }
    Some(columns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_rewritten_twice_is_sent_once_with_its_last_value() {
        let mut d = Deferred::default();
        d.body("a_1", "t_1", "first");
        d.body("a_1", "t_2", "other");
        d.body("a_1", "t_1", "second");
        d.undo("a_1", "y_1", 4, "step");
        let batch = d.take();
        let [accounts, ids, bodies] = batch.bodies.unwrap();
        assert_eq!(accounts, ["a_1", "a_1"]);
        assert_eq!(ids, ["t_2", "t_1"]);
        assert_eq!(bodies, ["other", "second"]);
        assert_eq!(batch.undo.unwrap().seqs, [4]);
        assert!(batch.records.is_none());
        assert!(batch.items.is_none());
        assert!(d.is_empty());
    }

    fn new_record(id: &str) -> RecordRow {
        RecordRow {
            account: "a_1".into(),
            id: id.into(),
            kind: 2,
            project_id: "b_1".into(),
            column_id: Some("c_1".into()),
            parent_id: None,
            bin_entry: None,
            deleted_at: None,
            position: 1.5,
            body: "{}".into(),
        }
    }

    #[test]
    fn new_records_are_sent_as_columns_in_order_and_say_when_enough_wait() {
        let mut d = Deferred::default();
        for i in 1..MAX_HELD_RECORDS {
            assert!(!d.record(new_record(&format!("t_{i}"))), "{i} held");
        }
        assert!(d.record(new_record("t_last")));
        let records = d.take().records.unwrap();
        assert_eq!(records.ids.len(), MAX_HELD_RECORDS);
        assert_eq!(records.ids[0], "t_1");
        assert_eq!(records.ids[MAX_HELD_RECORDS - 1], "t_last");
        assert_eq!(records.column_ids[0].as_deref(), Some("c_1"));
        assert_eq!(records.parent_ids[0], None);
        assert!(d.is_empty());
        d.record(new_record("t_dropped"));
        d.clear();
        assert!(d.take().records.is_none());
    }

    #[test]
    fn an_item_added_twice_is_sent_once_on_the_task_it_last_went_to() {
        let mut d = Deferred::default();
        d.item("a_1", "g_1", "t_1");
        d.item("a_1", "g_2", "t_1");
        d.item("a_1", "g_1", "t_2");
        let [accounts, ids, tasks] = d.take().items.unwrap();
        assert_eq!(accounts, ["a_1", "a_1"]);
        assert_eq!(ids, ["g_2", "g_1"]);
        assert_eq!(tasks, ["t_1", "t_2"]);
        assert!(d.is_empty());
    }
}
