//! The mapping itself: the board as one project, its lists as columns and its cards as tasks,
//! each limit applied and each problem recorded where it sits (see the parent module for the
//! rules).
//!
//! Each card is built by `card`, never past its limits. What the document carries is counted
//! as it grows, and a board whose text could never fit the account's storage is refused when
//! it passes that, not after. Ids used twice are refused before anything is built.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};

use serde::Serialize;
use serde_json::value::RawValue;

use super::index::{ArchiveDates, Index};
use super::problems::{Problem, Problems, thousands};
use super::read::{Board, Card, List, parse_ms};
use crate::checks::trim_to;
use crate::ids::IdKind;
use crate::limits::Limits;

/// Cards whose checklists run past the item limit, by the checklists they name: a checklist
/// named by many cards is reported once, with how many cards it reached.
pub(super) struct Overflow {
    /// Where its problem sits in the listed ones (`None` past the listed ones).
    pub(super) problem: Option<usize>,
    pub(super) items: usize,
    pub(super) cards: usize,
}

pub(super) fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{} {}", thousands(n), if n == 1 { one } else { many })
}

pub(super) fn chars(s: &str) -> usize {
    s.chars().count()
}

/// How much of a Trello name or id a problem repeats: enough to find it, and a problem
/// never costs more than this however long the name.
const NAME_CHARS: usize = 1_000;

pub(super) fn named(s: &str) -> String {
    trim_to(s, NAME_CHARS)
}

/// How many left-out tags a message quotes before it only counts them.
pub(super) const QUOTED_TAGS: usize = 5;

pub(super) fn quoted(texts: &[String]) -> String {
    texts
        .iter()
        .map(|t| format!("{t:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Sorts by `pos`, keeping the file's order among equals.
pub(super) fn by_pos<T>(items: &mut [T], pos: impl Fn(&T) -> f64) {
    items.sort_by(|a, b| pos(a).total_cmp(&pos(b)));
}

pub(super) struct Conversion<'a> {
    pub(super) limits: &'a Limits,
    pub(super) lenient: bool,
    pub(super) now_ms: i64,
    pub(super) problems: Problems,
    /// A problem was found that refuses the file even with `lenient` (duplicate ids, more
    /// text than the account can store).
    pub(super) fatal: bool,
    /// The board's `dateLastActivity` once read: `Some(None)` when absent or unreadable.
    pub(super) board_date: Option<Option<i64>>,
    /// Bytes the document's cards will take at least, stored: their texts (titles,
    /// descriptions, tags, items, comments) and the least each record adds around its text.
    text_bytes: u64,
    pub(super) overflows: HashMap<Vec<usize>, Overflow>,
}

/// The document's one project, each card already written out as JSON, so that no tree of
/// the whole board is held.
#[derive(Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ProjectDoc {
    pub(super) name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    archived_at: Option<i64>,
    columns: Vec<ColumnDoc>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ColumnDoc {
    id: String,
    name: String,
    position: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    archived_at: Option<i64>,
    tasks: Vec<Box<RawValue>>,
}

/// What the document holds.
#[derive(Default)]
pub(super) struct Counts {
    pub(super) lists: usize,
    pub(super) cards: usize,
    pub(super) checklist_items: usize,
    pub(super) comments: usize,
}

impl<'a> Conversion<'a> {
    pub(super) fn new(limits: &'a Limits, lenient: bool, now_ms: i64) -> Self {
        Conversion {
            limits,
            lenient,
            now_ms,
            problems: Problems::default(),
            fatal: false,
            board_date: None,
            text_bytes: 0,
            overflows: HashMap::new(),
        }
    }

    /// Records a problem; with `lenient`, its message also says what was left out. Past the
    /// listed ones only the count grows. Returns where it was listed.
    pub(super) fn report(
        &mut self,
        card: Option<&str>,
        list: Option<&str>,
        what: String,
        left_out: &str,
    ) -> Option<usize> {
        let message = if self.lenient {
            format!("{what}; {left_out}")
        } else {
            what
        };
        self.problems.push(Problem {
            card: card.map(named),
            list: list.map(named),
            message,
        })
    }

    /// The board's last activity in ms; reported once if it does not parse.
    fn board_date(&mut self, board: &Board) -> Option<i64> {
        if let Some(ms) = self.board_date {
            return ms;
        }
        let ms = board.date_last_activity.as_deref().and_then(|raw| {
            let ms = parse_ms(raw);
            if ms.is_none() {
                self.report(
                    None,
                    None,
                    format!(
                        "its `dateLastActivity` {:?} does not parse as a date",
                        named(raw)
                    ),
                    "left out, so the import's time stands in for it",
                );
            }
            ms
        });
        self.board_date = Some(ms);
        ms
    }

    /// Refuses ids used twice where an id decides where something goes: two cards with one
    /// id would each take the other's comments and checklists, two lists would split one
    /// list's cards, two checklists would go to the wrong card.
    fn duplicate_ids(&mut self, board: &Board) {
        let mut lists: HashMap<&str, &str> = HashMap::new();
        for list in &board.lists {
            if list.id.is_empty() {
                continue;
            }
            match lists.entry(&list.id) {
                Entry::Occupied(first) => {
                    let message = format!(
                        "its id {:?} is list {:?}'s too; each list needs an id of its own",
                        named(&list.id),
                        named(first.get())
                    );
                    self.report(None, Some(&list.name), message, "nothing was imported");
                    self.fatal = true;
                }
                Entry::Vacant(slot) => {
                    slot.insert(&list.name);
                }
            }
        }
        let mut cards: HashMap<&str, &str> = HashMap::new();
        for card in &board.cards {
            if card.id.is_empty() {
                continue;
            }
            match cards.entry(&card.id) {
                Entry::Occupied(first) => {
                    let message = format!(
                        "its id {:?} is card {:?}'s too; each card needs an id of its own",
                        named(&card.id),
                        named(first.get())
                    );
                    let list = lists.get(&*card.id_list).copied();
                    self.report(Some(&card.name), list, message, "nothing was imported");
                    self.fatal = true;
                }
                Entry::Vacant(slot) => {
                    slot.insert(&card.name);
                }
            }
        }
        let mut checklists: HashMap<&str, &str> = HashMap::new();
        for checklist in &board.checklists {
            if checklist.id.is_empty() {
                continue;
            }
            match checklists.entry(&checklist.id) {
                Entry::Occupied(first) => {
                    let message = format!(
                        "checklist {:?}: its id {:?} is checklist {:?}'s too; each checklist \
                         needs an id of its own",
                        named(&checklist.name),
                        named(&checklist.id),
                        named(first.get())
                    );
                    let card = cards.get(checklist.id_card.as_str()).copied();
                    self.report(card, None, message, "nothing was imported");
                    self.fatal = true;
                }
                Entry::Vacant(slot) => {
                    slot.insert(&checklist.name);
                }
            }
        }
    }

    /// Counts what the document will store: a text, and the least its record adds around
    /// it (`floor`). Past what the account could ever store, the board is refused (the
    /// import would be, at the storage limit) and mapping stops.
    pub(super) fn carry(&mut self, text: &str, floor: u64) {
        self.text_bytes += text.len() as u64 + floor;
    }

    fn over_storage(&mut self) -> bool {
        let limit = self.limits.storage_bytes;
        if self.text_bytes <= limit || self.fatal {
            return self.fatal;
        }
        self.fatal = true;
        // The overflows name their problems by place in the list, which this one shifts.
        self.finish_overflows();
        let problem = Problem {
            card: None,
            list: None,
            message: format!(
                "its cards would take more than {} bytes to store, more than an account \
                 stores (the storage limit); nothing was imported",
                thousands(limit as usize)
            ),
        };
        self.problems.put_first(problem);
        true
    }

    /// Whether the file is refused whatever else is found, so cards need not be kept.
    fn refusing(&self) -> bool {
        self.fatal || (!self.lenient && !self.problems.is_empty())
    }

    pub(super) fn project(&mut self, board: &Board) -> (ProjectDoc, Counts) {
        let mut counts = Counts::default();
        let mut project = ProjectDoc::default();
        self.duplicate_ids(board);
        if self.fatal {
            return (project, counts);
        }
        project.name = if board.name.is_empty() {
            "Untitled board".to_owned()
        } else {
            trim_to(&board.name, self.limits.name_chars)
        };
        if board.closed {
            project.archived_at = Some(self.board_date(board).unwrap_or(self.now_ms));
        }

        let mut lists: Vec<&List> = board.lists.iter().collect();
        by_pos(&mut lists, |l| l.pos);
        let mut cards_of: HashMap<&str, Vec<&Card>> = HashMap::new();
        let list_ids: HashSet<&str> = lists.iter().map(|l| l.id.as_str()).collect();
        for card in &board.cards {
            if list_ids.contains(&*card.id_list) {
                cards_of.entry(&card.id_list).or_default().push(card);
            } else {
                self.report(
                    Some(&card.name),
                    None,
                    "its list is not in the file".into(),
                    "left out",
                );
            }
        }
        let dropped = self.lists_over_limit(&lists, &cards_of);

        let index = Index::new(board);
        'lists: for (i, list) in lists.iter().enumerate() {
            if self.lenient && dropped.contains(&i) {
                continue;
            }
            let id = IdKind::Column.generate();
            let name = if list.name.is_empty() {
                "Untitled list".to_owned()
            } else {
                trim_to(&list.name, self.limits.name_chars)
            };
            let archived_at = list
                .closed
                .then(|| self.list_archived_at(board, list, index.archived.get(list.id.as_str())));
            let mut cards = cards_of.remove(list.id.as_str()).unwrap_or_default();
            by_pos(&mut cards, |c| c.pos);
            let mut tasks = Vec::new();
            for card in cards {
                let (task, items, notes) = self.task(&index, card, list, &id);
                if self.over_storage() {
                    break 'lists;
                }
                counts.cards += 1;
                counts.checklist_items += items;
                counts.comments += notes;
                // Each card is kept as its JSON text, a few bytes per byte it stores, not as
                // a tree; once the file is refused anyway, not at all.
                if !self.refusing() {
                    tasks.push(serde_json::value::to_raw_value(&task).expect("a task serialises"));
                }
            }
            counts.lists += 1;
            project.columns.push(ColumnDoc {
                id,
                name,
                position: list.pos,
                archived_at,
                tasks,
            });
        }
        self.finish_overflows();
        (project, counts)
    }

    /// The indexes (in `pos` order) of the lists past the column limit: archived lists first,
    /// then the last ones by `pos`. Each is reported, with how many cards go with it.
    fn lists_over_limit(
        &mut self,
        lists: &[&List],
        cards_of: &HashMap<&str, Vec<&Card>>,
    ) -> HashSet<usize> {
        let max = self.limits.columns_per_project;
        let over = lists.len().saturating_sub(max);
        let archived = (0..lists.len()).rev().filter(|&i| lists[i].closed);
        let live = (0..lists.len()).rev().filter(|&i| !lists[i].closed);
        let dropped: HashSet<usize> = archived.chain(live).take(over).collect();
        for (i, list) in lists.iter().enumerate() {
            if !dropped.contains(&i) {
                continue;
            }
            let cards = cards_of.get(list.id.as_str()).map_or(0, Vec::len);
            let state = if list.closed {
                "an archived list"
            } else {
                "a list"
            };
            self.report(
                None,
                Some(&list.name),
                format!(
                    "{state} past the limit: the board has {} and a project holds at most {}",
                    plural(lists.len(), "list", "lists"),
                    plural(max, "column", "columns"),
                ),
                &format!("left out with its {}", plural(cards, "card", "cards")),
            );
        }
        dropped
    }

    fn list_archived_at(
        &mut self,
        board: &Board,
        list: &List,
        dates: Option<&ArchiveDates>,
    ) -> i64 {
        if let Some(dates) = dates {
            for raw in &dates.unreadable {
                self.report(
                    None,
                    Some(&list.name),
                    format!("the date {:?} of its archiving does not parse", named(raw)),
                    "left out",
                );
            }
            if let Some(ms) = dates.newest {
                return ms;
            }
        }
        self.board_date(board).unwrap_or(self.now_ms)
    }
}
