//! The least position among the live records under each parent, as the writer knows it: a
//! record created without a position goes above the others there, and finding where that is
//! would otherwise cost each create a query (on PostgreSQL, a round trip on the writer's
//! connection, while the whole group waits).
//!
//! The ledger keeps what [`Tops`] knows per account. A command reads it only for a parent it
//! has not itself written under (else it asks the store, which sees the command's own
//! writes), and when it succeeds hands back what it read and how it moved its records
//! ([`TopsUpdate`]). A value is dropped when a record that may have been the least there
//! leaves; one that comes in only lowers it. So what is kept is always what the store would
//! answer, and everything is dropped with the ledger's other copies (a rollback, another
//! node's write).

use ahash::AHashMap;

use crate::records::{Kind, Record};

/// Where a record's position ranks it: its kind and its parent (a project's is the
/// account, `""`; a column's its project; a card's its column, subtasks included).
pub type TopKey = (Kind, String);

/// The least position under a parent: `None` when no live record is there.
pub type Least = Option<f64>;

/// Where a record stands live: its parent and position (`None`: not live).
pub type Place = Option<(TopKey, f64)>;

/// How many parents the writer keeps the least position of, over all accounts, before it
/// starts over.
const KEPT_PARENTS: usize = 4_096;

/// The parent and position of a record.
pub fn place_of(record: &Record) -> (TopKey, f64) {
    match record {
        Record::Project(p) => ((Kind::Project, String::new()), p.position),
        Record::Column(c) => ((Kind::Column, c.project_id.clone()), c.position),
        Record::Task(t) => ((Kind::Task, t.column_id.clone()), t.position),
    }
}

/// Whether `record` ranks under `key`.
pub fn is_under(record: &Record, key: &TopKey) -> bool {
    record.kind() == key.0
        && match record {
            Record::Project(_) => true,
            Record::Column(c) => c.project_id == key.1,
            Record::Task(t) => t.column_id == key.1,
        }
}

/// The parent a query for `kind` under `parent` asks about.
pub fn key(kind: Kind, parent: Option<&str>) -> TopKey {
    match kind {
        Kind::Project => (Kind::Project, String::new()),
        _ => (kind, parent.unwrap_or_default().to_owned()),
    }
}

/// What a command that succeeded tells the writer: the least positions it read from the
/// store, and each record it wrote, where it stood live before and where it stands live now.
#[derive(Debug, Default)]
pub struct TopsUpdate {
    pub read: Vec<(TopKey, Least)>,
    pub moved: Vec<(Place, Place)>,
}

/// The least positions the writer knows, by account, then parent.
#[derive(Debug, Default)]
pub struct Tops {
    by_account: AHashMap<String, AHashMap<TopKey, Least>>,
    kept: usize,
}

impl Tops {
    /// The least position under `key`, when known.
    pub fn get(&self, account: &str, key: &TopKey) -> Option<Least> {
        self.by_account.get(account)?.get(key).copied()
    }

    /// Whether anything is known of the account (else a command's moves change nothing).
    pub fn holds(&self, account: &str) -> bool {
        self.by_account.contains_key(account)
    }

    /// Takes in what a command that succeeded read and moved (see [`TopsUpdate`]).
    pub fn keep(&mut self, account: &str, update: TopsUpdate) {
        if update.read.is_empty() && !self.by_account.contains_key(account) {
            return;
        }
        if self.kept + update.read.len() > KEPT_PARENTS {
            self.clear();
        }
        let tops = self.by_account.entry(account.to_owned()).or_default();
        for (key, least) in update.read {
            if tops.insert(key, least).is_none() {
                self.kept += 1;
            }
        }
        for (was, now) in update.moved {
            if was == now {
                continue;
            }
            // A record leaving, or moving down, may have been the least there.
            if let Some((key, position)) = was
                && let Some(&least) = tops.get(&key)
                && least.is_none_or(|least| position <= least)
            {
                tops.remove(&key);
                self.kept -= 1;
            }
            if let Some((key, position)) = now
                && let Some(least) = tops.get_mut(&key)
            {
                *least = Some(least.map_or(position, |least| least.min(position)));
            }
        }
    }

    /// Forgets an account's positions (another node wrote it).
    pub fn drop_account(&mut self, account: &str) {
        if let Some(gone) = self.by_account.remove(account) {
            self.kept -= gone.len();
        }
    }

    /// Forgets every position (the transaction rolled back).
    pub fn clear(&mut self) {
        self.by_account.clear();
        self.kept = 0;
    }

    /// Every least position kept for `account` (for the tests).
    #[cfg(test)]
    pub fn of(&self, account: &str) -> Vec<(TopKey, Least)> {
        self.by_account
            .get(account)
            .map(|tops| tops.iter().map(|(k, v)| (k.clone(), *v)).collect())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn card(column: &str, position: f64) -> Place {
        Some(((Kind::Task, column.to_owned()), position))
    }

    fn kept(account: &str, column: &str, least: Least) -> (Tops, TopKey) {
        let mut tops = Tops::default();
        let key = (Kind::Task, column.to_owned());
        tops.keep(
            account,
            TopsUpdate {
                read: vec![(key.clone(), least)],
                moved: Vec::new(),
            },
        );
        (tops, key)
    }

    #[test]
    fn a_card_coming_in_lowers_the_least_and_one_leaving_from_the_top_forgets_it() {
        let (mut tops, key) = kept("a", "c", Some(1.0));
        let moved = |moved| TopsUpdate {
            read: Vec::new(),
            moved,
        };
        tops.keep("a", moved(vec![(None, card("c", -1.0))]));
        assert_eq!(tops.get("a", &key), Some(Some(-1.0)));
        // A card above it coming in or moving within keeps what is known.
        tops.keep("a", moved(vec![(None, card("c", 5.0))]));
        tops.keep("a", moved(vec![(card("c", 5.0), card("c", 6.0))]));
        assert_eq!(tops.get("a", &key), Some(Some(-1.0)));
        // The least one leaving (to the bin, or elsewhere) may leave anything behind.
        tops.keep("a", moved(vec![(card("c", -1.0), card("d", -1.0))]));
        assert_eq!(tops.get("a", &key), None);
        // Another account's parent of the same id is another parent.
        assert_eq!(tops.get("b", &key), None);
    }

    #[test]
    fn an_empty_parent_takes_its_first_card_as_its_least() {
        let (mut tops, key) = kept("a", "c", None);
        tops.keep(
            "a",
            TopsUpdate {
                read: Vec::new(),
                moved: vec![(None, card("c", 3.0))],
            },
        );
        assert_eq!(tops.get("a", &key), Some(Some(3.0)));
    }
}
