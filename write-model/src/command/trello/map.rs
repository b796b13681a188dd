//! The mapping itself: the board as one project, its lists as columns and its cards as tasks,
//! each limit applied and each problem recorded where it sits (see the parent module for the
//! rules).

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value, json};

use super::Problem;
use super::read::{
    ArchiveDates, Board, Card, CheckItem, Checklist, Comment, Index, Label, List, deadline,
    parse_ms,
};
use crate::ids::IdKind;
use crate::limits::Limits;
use crate::values::trim_to;

/// A count with thousands separators, as the messages show it (`262,144`).
pub(super) fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{} {}", thousands(n), if n == 1 { one } else { many })
}

fn chars(s: &str) -> usize {
    s.chars().count()
}

fn quoted(texts: &[String]) -> String {
    texts
        .iter()
        .map(|t| format!("{t:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Sorts by `pos`, keeping the file's order among equals.
fn by_pos<T>(items: &mut [T], pos: impl Fn(&T) -> f64) {
    items.sort_by(|a, b| pos(a).total_cmp(&pos(b)));
}

pub(super) struct Conversion<'a> {
    pub(super) limits: &'a Limits,
    pub(super) lenient: bool,
    pub(super) now_ms: i64,
    pub(super) problems: Vec<Problem>,
    /// The board's `dateLastActivity` once read: `Some(None)` when absent or unreadable.
    pub(super) board_date: Option<Option<i64>>,
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
            problems: Vec::new(),
            board_date: None,
        }
    }

    /// Records a problem; with `lenient`, its message also says what was left out.
    fn report(&mut self, card: Option<&str>, list: Option<&str>, what: String, left_out: &str) {
        let message = if self.lenient {
            format!("{what}; {left_out}")
        } else {
            what
        };
        self.problems.push(Problem {
            card: card.map(str::to_owned),
            list: list.map(str::to_owned),
            message,
        });
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
                    format!("its `dateLastActivity` {raw:?} does not parse as a date"),
                    "left out, so the import's time stands in for it",
                );
            }
            ms
        });
        self.board_date = Some(ms);
        ms
    }

    pub(super) fn project(&mut self, board: &Board) -> (Value, Counts) {
        let name = if board.name.is_empty() {
            "Untitled board".to_owned()
        } else {
            trim_to(&board.name, self.limits.name_chars)
        };
        let mut project = Map::new();
        project.insert("name".into(), json!(name));
        if board.closed {
            let at = self.board_date(board).unwrap_or(self.now_ms);
            project.insert("archivedAt".into(), json!(at));
        }

        let mut lists: Vec<&List> = board.lists.iter().collect();
        by_pos(&mut lists, |l| l.pos);
        let mut cards_of: HashMap<&str, Vec<&Card>> = HashMap::new();
        let list_ids: HashSet<&str> = lists.iter().map(|l| l.id.as_str()).collect();
        for card in &board.cards {
            if list_ids.contains(card.id_list.as_str()) {
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
        let mut counts = Counts::default();
        let mut columns = Vec::new();
        for (i, list) in lists.iter().enumerate() {
            if self.lenient && dropped.contains(&i) {
                continue;
            }
            let mut column = Map::new();
            let column_id = IdKind::Column.generate();
            column.insert("id".into(), json!(column_id));
            let name = if list.name.is_empty() {
                "Untitled list".to_owned()
            } else {
                trim_to(&list.name, self.limits.name_chars)
            };
            column.insert("name".into(), json!(name));
            column.insert("position".into(), json!(list.pos));
            if list.closed {
                let at = self.list_archived_at(board, list, index.archived.get(list.id.as_str()));
                column.insert("archivedAt".into(), json!(at));
            }
            let mut cards = cards_of.remove(list.id.as_str()).unwrap_or_default();
            by_pos(&mut cards, |c| c.pos);
            let mut tasks = Vec::with_capacity(cards.len());
            for card in cards {
                let (task, items, notes) = self.task(&index, card, list, &column_id);
                counts.cards += 1;
                counts.checklist_items += items;
                counts.comments += notes;
                tasks.push(task);
            }
            column.insert("tasks".into(), Value::Array(tasks));
            counts.lists += 1;
            columns.push(Value::Object(column));
        }
        project.insert("columns".into(), Value::Array(columns));
        (Value::Object(project), counts)
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
                    format!("the date {raw:?} of its archiving does not parse"),
                    "left out",
                );
            }
            if let Some(ms) = dates.newest {
                return ms;
            }
        }
        self.board_date(board).unwrap_or(self.now_ms)
    }

    /// One card as a task create, with how many checklist items and comments it carries.
    fn task(
        &mut self,
        index: &Index<'_>,
        card: &Card,
        list: &List,
        column_id: &str,
    ) -> (Value, usize, usize) {
        let (name, list_name) = (Some(card.name.as_str()), Some(list.name.as_str()));
        let limits = self.limits;
        let mut task = Map::new();
        task.insert("columnId".into(), json!(column_id));
        let title = if card.name.is_empty() {
            "Untitled card".to_owned()
        } else {
            trim_to(&card.name, limits.title_chars)
        };
        task.insert("title".into(), json!(title));
        task.insert("position".into(), json!(card.pos));

        let desc_chars = chars(&card.desc);
        if desc_chars > limits.description_chars {
            self.report(
                name,
                list_name,
                format!(
                    "a description of {} characters; at most {}",
                    thousands(desc_chars),
                    thousands(limits.description_chars)
                ),
                "left out (the card keeps an empty description)",
            );
        } else if !card.desc.is_empty() {
            task.insert("description".into(), json!(card.desc));
        }

        if let Some(due) = card.due.as_deref().filter(|d| !d.is_empty()) {
            match deadline(due) {
                Some((day, time)) => {
                    task.insert("deadline".into(), json!(day));
                    task.insert("deadlineTime".into(), json!(time));
                }
                None => self.report(
                    name,
                    list_name,
                    format!("a due date {due:?} that does not parse"),
                    "left out",
                ),
            }
        }

        if card.due_complete || card.closed {
            let raw = card.date_last_activity.as_deref();
            let at = match raw.map(|r| (r, parse_ms(r))) {
                Some((_, Some(ms))) => ms,
                Some((raw, None)) => {
                    self.report(
                        name,
                        list_name,
                        format!("a `dateLastActivity` {raw:?} that does not parse"),
                        "left out, so the card is finished at the import's time",
                    );
                    self.now_ms
                }
                None => self.now_ms,
            };
            task.insert("completedAt".into(), json!(at));
        }

        let tags = self.tags(card, list, &index.labels);
        if !tags.is_empty() {
            task.insert("tags".into(), json!(tags));
        }
        let items = self.checklist(index, card, list);
        let n_items = items.len();
        if !items.is_empty() {
            task.insert("checklist".into(), Value::Array(items));
        }
        let notes = self.comments(card, list, index.comments.get(card.id.as_str()));
        let n_notes = notes.len();
        if !notes.is_empty() {
            task.insert("comments".into(), Value::Array(notes));
        }
        (Value::Object(task), n_items, n_notes)
    }

    fn tags(&mut self, card: &Card, list: &List, labels: &HashMap<&str, &Label>) -> Vec<String> {
        let mut tags: Vec<String> = Vec::new();
        for id in &card.id_labels {
            let label = labels
                .get(id.as_str())
                .copied()
                .or_else(|| card.labels.iter().find(|l| l.id == *id));
            let Some(label) = label else { continue };
            let text = if label.name.is_empty() {
                &label.color
            } else {
                &label.name
            };
            if text.is_empty() {
                continue;
            }
            let text = trim_to(text, self.limits.tag_chars);
            let folded = text.to_lowercase();
            if !tags.iter().any(|t| t.to_lowercase() == folded) {
                tags.push(text);
            }
        }
        let max = self.limits.tags_per_task;
        if tags.len() > max {
            let left_out = format!("left out {}", quoted(&tags[max..]));
            self.report(
                Some(&card.name),
                Some(&list.name),
                format!(
                    "{}; a card holds at most {}",
                    plural(tags.len(), "label", "labels"),
                    plural(max, "tag", "tags"),
                ),
                &left_out,
            );
            tags.truncate(max);
        }
        tags
    }

    fn checklist(&mut self, index: &Index<'_>, card: &Card, list: &List) -> Vec<Value> {
        let mut found: Vec<usize> = index
            .checklists_of
            .get(card.id.as_str())
            .cloned()
            .unwrap_or_default();
        found.extend(
            card.id_checklists
                .iter()
                .filter_map(|id| index.checklist_ids.get(id.as_str())),
        );
        // The file's order among equal `pos`, each checklist once.
        found.sort_unstable();
        found.dedup();
        let mut lists: Vec<&Checklist> = found.into_iter().map(|i| &index.checklists[i]).collect();
        by_pos(&mut lists, |c| c.pos);
        let prefixed = lists.len() >= 2;
        let mut items = Vec::new();
        for checklist in lists {
            let mut checks: Vec<&CheckItem> = checklist.check_items.iter().collect();
            by_pos(&mut checks, |i| i.pos);
            for item in checks.into_iter().filter(|i| !i.name.is_empty()) {
                let text = if prefixed {
                    format!("{}: {}", checklist.name, item.name)
                } else {
                    item.name.clone()
                };
                items.push(json!({
                    "text": trim_to(&text, self.limits.checklist_item_chars),
                    "done": item.state == "complete",
                }));
            }
        }
        let max = self.limits.checklist_items_per_task;
        if items.len() > max {
            self.report(
                Some(&card.name),
                Some(&list.name),
                format!(
                    "{}; at most {}",
                    plural(items.len(), "checklist item", "checklist items"),
                    thousands(max)
                ),
                &format!("left out the last {}", thousands(items.len() - max)),
            );
            items.truncate(max);
        }
        items
    }

    fn comments(
        &mut self,
        card: &Card,
        list: &List,
        comments: Option<&Vec<Comment>>,
    ) -> Vec<Value> {
        let (name, list_name) = (Some(card.name.as_str()), Some(list.name.as_str()));
        let all = comments.map_or(&[][..], Vec::as_slice);
        let max_chars = self.limits.comment_chars;
        let mut kept = Vec::new();
        for c in all {
            if let (Some(raw), None) = (&c.date, c.ms) {
                self.report(
                    name,
                    list_name,
                    format!("a comment dated {raw:?}, which does not parse"),
                    "its date left out, so it takes the import's time",
                );
            }
            let n = chars(&c.text);
            if n > max_chars {
                self.report(
                    name,
                    list_name,
                    format!(
                        "a comment of {} characters; at most {}",
                        thousands(n),
                        thousands(max_chars)
                    ),
                    "left out",
                );
                continue;
            }
            let mut comment = Map::new();
            comment.insert("text".into(), json!(c.text));
            if let Some(ms) = c.ms {
                comment.insert("createdAt".into(), json!(ms));
            }
            kept.push(Value::Object(comment));
        }
        let max = self.limits.comments_per_task;
        // Strict counts the comments as they are; lenient, what is left after the long ones.
        let counted = if self.lenient { kept.len() } else { all.len() };
        if counted > max {
            self.report(
                name,
                list_name,
                format!(
                    "{}; at most {}",
                    plural(counted, "comment", "comments"),
                    thousands(max)
                ),
                &format!(
                    "the oldest {} kept and the newest {} left out",
                    thousands(max),
                    thousands(counted - max)
                ),
            );
            kept.truncate(max);
        }
        kept
    }
}
