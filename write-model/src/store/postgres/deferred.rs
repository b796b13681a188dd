//! Writes the writer holds back and sends together: each round trip to PostgreSQL costs
//! tens of microseconds, and a group of card edits would otherwise spend most of its time
//! on them (a PATCH rewrites its card's and its project's bodies and adds an undo step).
//!
//! Only the writes nothing else in the transaction depends on meanwhile are held: a
//! record's body rewritten in place, and a new undo step. They go out, in one statement per
//! kind, before anything else is sent on the connection (any read or other write, a
//! savepoint, its release, the commit), so every statement still sees the transaction as if
//! they had been sent at once; a rollback drops them. A body rewritten twice is sent once,
//! with its last value, as the second write would have left it.

use ahash::AHashMap;

/// The held writes, in the order they were made.
#[derive(Debug, Default)]
pub(super) struct Deferred {
    /// `(account, id, body)`.
    bodies: Vec<(String, String, String)>,
    /// `(account, key_id, seq, step)`.
    undo: Vec<(String, String, i64, String)>,
}

/// One batch of held writes, ready to send: the columns of each statement's `unnest`.
pub(super) struct Batch {
    /// Accounts, ids and bodies.
    pub bodies: Option<[Vec<String>; 3]>,
    pub undo: Option<UndoColumns>,
}

/// Undo steps as columns.
#[derive(Debug, Default)]
pub(super) struct UndoColumns {
    pub accounts: Vec<String>,
    pub key_ids: Vec<String>,
    pub seqs: Vec<i64>,
    pub steps: Vec<String>,
}

/// Rewrites bodies of existing records, one row per `(account, id)`.
pub(super) const UPDATE_BODIES: &str = "UPDATE records SET body = v.body
     FROM unnest($1::text[], $2::text[], $3::text[]) AS v (account, id, body)
     WHERE records.account = v.account AND records.id = v.id";

pub(super) const INSERT_UNDO: &str = "INSERT INTO undo (account, key_id, seq, step)
     SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[])";

impl Deferred {
    pub fn body(&mut self, account: &str, id: &str, body: &str) {
        self.bodies
            .push((account.to_owned(), id.to_owned(), body.to_owned()));
    }

    pub fn undo(&mut self, account: &str, key_id: &str, seq: i64, step: &str) {
        self.undo
            .push((account.to_owned(), key_id.to_owned(), seq, step.to_owned()));
    }

    pub fn is_empty(&self) -> bool {
        self.bodies.is_empty() && self.undo.is_empty()
    }

    /// Drops what is held (the transaction, or its savepoint, rolled back).
    pub fn clear(&mut self) {
        self.bodies.clear();
        self.undo.clear();
    }

    /// Takes what is held as one batch; a body rewritten more than once keeps its last
    /// value (one statement may not update a row twice).
    pub fn take(&mut self) -> Batch {
        let bodies = std::mem::take(&mut self.bodies);
        let undo = std::mem::take(&mut self.undo);
        let bodies = (!bodies.is_empty()).then(|| {
            let mut last: AHashMap<(String, String), usize> = AHashMap::new();
            for (i, (account, id, _)) in bodies.iter().enumerate() {
                last.insert((account.clone(), id.clone()), i);
            }
            let mut columns: [Vec<String>; 3] = Default::default();
            for (i, (account, id, body)) in bodies.into_iter().enumerate() {
                if last.get(&(account.clone(), id.clone())) == Some(&i) {
                    columns[0].push(account);
                    columns[1].push(id);
                    columns[2].push(body);
                }
            }
            columns
        });
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
        Batch { bodies, undo }
    }
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
        assert!(d.is_empty());
    }
}
