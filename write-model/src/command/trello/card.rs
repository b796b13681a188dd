//! One card as a task: its title, description, dates, tags, checklist and comments, each cut
//! at its limit as it is built, never built whole and cut after. A card's checklist stops at
//! the item limit however many cards name the same checklist; an item's text and its
//! checklist's name are each cut to the item limit before they are joined; tags are told
//! apart with a hash set; comments stop at the comment limit. What does not fit is counted.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value, json};

use super::index::{Index, deadline};
use super::map::{Conversion, Overflow, QUOTED_TAGS, by_pos, chars, named, plural, quoted};
use super::problems::thousands;
use super::read::{Card, Comment, Label, List, parse_ms};
use crate::checks::trim_to;

/// The least a stored card takes beside its texts (its id, column, position, stamps and
/// their names), and the least an item or comment does (its id and field names): what the
/// storage count can rely on before anything is stored.
const CARD_FLOOR: u64 = 64;
const ITEM_FLOOR: u64 = 24;

impl Conversion<'_> {
    /// One card as a task create, with how many checklist items and comments it carries.
    pub(super) fn task(
        &mut self,
        index: &Index<'_>,
        card: &Card,
        list: &List,
        column_id: &str,
    ) -> (Value, usize, usize) {
        let (name, list_name) = (Some(&*card.name), Some(list.name.as_str()));
        let limits = self.limits;
        let mut task = Map::new();
        task.insert("columnId".into(), json!(column_id));
        let title = if card.name.is_empty() {
            "Untitled card".to_owned()
        } else {
            trim_to(&card.name, limits.title_chars)
        };
        self.carry(&title, CARD_FLOOR);
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
            self.carry(&card.desc, 0);
            task.insert("description".into(), json!(card.desc));
        }

        if let Some(due) = card.due.as_deref().filter(|d| !d.is_empty()) {
            match deadline(due) {
                Some((day, time)) => {
                    task.insert("deadline".into(), json!(day));
                    task.insert("deadlineTime".into(), json!(time));
                }
                None => {
                    self.report(
                        name,
                        list_name,
                        format!("a due date {:?} that does not parse", named(due)),
                        "left out",
                    );
                }
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
                        format!("a `dateLastActivity` {:?} that does not parse", named(raw)),
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
        let comments = if card.id.is_empty() {
            None
        } else {
            index.comments.get(&*card.id)
        };
        let notes = self.comments(card, list, comments.map_or(&[][..], Vec::as_slice));
        let n_notes = notes.len();
        if !notes.is_empty() {
            task.insert("comments".into(), Value::Array(notes));
        }
        (Value::Object(task), n_items, n_notes)
    }

    /// The card's tags: distinct ignoring case (a hash set, so a card of many labels costs
    /// time linear in them), the first `tags_per_task` kept.
    fn tags(&mut self, card: &Card, list: &List, labels: &HashMap<&str, &Label>) -> Vec<String> {
        // The card's own labels by id, the first of an id winning, for a card with many.
        let own: Option<HashMap<&str, &Label>> = (card.labels.len() > 8).then(|| {
            card.labels
                .iter()
                .rev()
                .map(|l| (l.id.as_str(), l))
                .collect()
        });
        let max = self.limits.tags_per_task;
        let mut seen: HashSet<String> = HashSet::new();
        let mut tags: Vec<String> = Vec::new();
        let (mut past, mut quoted_past) = (0usize, Vec::new());
        for id in &card.id_labels {
            let label = labels.get(&**id).copied().or_else(|| match &own {
                Some(own) => own.get(&**id).copied(),
                None => card.labels.iter().find(|l| *l.id == **id),
            });
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
            if !seen.insert(text.to_lowercase()) {
                continue;
            }
            if tags.len() < max {
                self.carry(&text, 2);
                tags.push(text);
            } else {
                past += 1;
                if quoted_past.len() < QUOTED_TAGS {
                    quoted_past.push(text);
                }
            }
        }
        if past > 0 {
            let mut left_out = format!("left out {}", quoted(&quoted_past));
            if past > quoted_past.len() {
                left_out.push_str(&format!(
                    " and {} more",
                    thousands(past - quoted_past.len())
                ));
            }
            self.report(
                Some(&card.name),
                Some(&list.name),
                format!(
                    "{}; a card holds at most {}",
                    plural(max + past, "label", "labels"),
                    plural(max, "tag", "tags"),
                ),
                &left_out,
            );
        }
        tags
    }

    /// The card's checklist items, built only up to the item limit: a checklist named by
    /// many cards costs each of them at most the limit, and what does not fit is counted, not
    /// built.
    fn checklist(&mut self, index: &Index<'_>, card: &Card, list: &List) -> Vec<Value> {
        let mut found: Vec<usize> = if card.id.is_empty() {
            Vec::new()
        } else {
            index
                .checklists_of
                .get(&*card.id)
                .cloned()
                .unwrap_or_default()
        };
        found.extend(
            card.id_checklists
                .iter()
                .filter_map(|id| index.checklist_ids.get(&**id)),
        );
        // The file's order among equal `pos`, each checklist once.
        found.sort_unstable();
        found.dedup();
        let checklists = index.checklists;
        by_pos(&mut found, |&i| checklists[i].pos);
        let prefixed = found.len() >= 2;
        let (max, max_chars) = (
            self.limits.checklist_items_per_task,
            self.limits.checklist_item_chars,
        );
        let total: usize = found.iter().map(|&i| checklists[i].check_items.len()).sum();
        let mut items = Vec::with_capacity(total.min(max));
        'checklists: for &i in &found {
            let checklist = &checklists[i];
            // The name is cut once per checklist, and only for one that gives an item.
            let mut prefix: Option<String> = None;
            for item in &checklist.check_items {
                if items.len() == max {
                    break 'checklists;
                }
                // Each part is cut to the limit before they are joined, so the join costs
                // at most twice the limit whatever the lengths in the file.
                let text = trim_to(&item.name, max_chars);
                let text = if prefixed {
                    let name = prefix.get_or_insert_with(|| trim_to(&checklist.name, max_chars));
                    trim_to(&format!("{name}: {text}"), max_chars)
                } else {
                    text
                };
                self.carry(&text, ITEM_FLOOR);
                items.push(json!({"text": text, "done": item.state == "complete"}));
            }
        }
        if total > max {
            self.overflow(found, card, list, total);
        }
        items
    }

    /// A card whose checklists hold more than the limit: reported once for every set of
    /// checklists, however many cards name that same set.
    fn overflow(&mut self, checklists: Vec<usize>, card: &Card, list: &List, items: usize) {
        if let Some(known) = self.overflows.get_mut(&checklists) {
            known.cards += 1;
            return;
        }
        let (what, left_out) = self.overflow_message(items, 1);
        let problem = self.report(Some(&card.name), Some(&list.name), what, &left_out);
        self.overflows.insert(
            checklists,
            Overflow {
                problem,
                items,
                cards: 1,
            },
        );
    }

    fn overflow_message(&self, items: usize, cards: usize) -> (String, String) {
        let max = self.limits.checklist_items_per_task;
        let mut what = format!(
            "{}; at most {}",
            plural(items, "checklist item", "checklist items"),
            thousands(max)
        );
        let mut left_out = format!("left out the last {}", thousands(items - max));
        if cards > 1 {
            what.push_str(&format!(
                "; {} other {} the same checklists",
                thousands(cards - 1),
                if cards == 2 {
                    "card names"
                } else {
                    "cards name"
                }
            ));
            left_out.push_str(" on each");
        }
        (what, left_out)
    }

    /// Says in each shared overflow's problem how many cards it reached; the other cards'
    /// count once, in that problem.
    pub(super) fn finish_overflows(&mut self) {
        let overflows = std::mem::take(&mut self.overflows);
        for o in overflows.values().filter(|o| o.cards > 1) {
            let Some(at) = o.problem else { continue };
            let (what, left_out) = self.overflow_message(o.items, o.cards);
            self.problems.listed[at].message = if self.lenient {
                format!("{what}; {left_out}")
            } else {
                what
            };
        }
    }

    /// The card's comments, oldest first, built only up to the comment limit.
    fn comments(&mut self, card: &Card, list: &List, all: &[&Comment]) -> Vec<Value> {
        let (name, list_name) = (Some(&*card.name), Some(list.name.as_str()));
        let max_chars = self.limits.comment_chars;
        let max = self.limits.comments_per_task;
        let mut kept = Vec::with_capacity(all.len().min(max));
        let mut fitting = 0;
        for c in all {
            if let (Some(raw), None) = (&c.date, c.ms) {
                self.report(
                    name,
                    list_name,
                    format!("a comment dated {:?}, which does not parse", named(raw)),
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
            fitting += 1;
            if kept.len() < max {
                self.carry(&c.text, ITEM_FLOOR);
                let mut comment = Map::new();
                comment.insert("text".into(), json!(c.text));
                if let Some(ms) = c.ms {
                    comment.insert("createdAt".into(), json!(ms));
                }
                kept.push(Value::Object(comment));
            }
        }
        // Strict counts the comments as they are; lenient, what is left after the long ones.
        let counted = if self.lenient { fitting } else { all.len() };
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
        }
        kept
    }
}
