//! Reading Trello's board export: the parts the mapping reads, decoded from a JSON tree whose
//! nulls are removed first (so `default` covers a field that is null as well as one that is
//! absent), and the board's parts indexed by id. Fields not named here are ignored.

use std::collections::HashMap;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::TrelloError;

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct Label {
    pub(super) id: String,
    pub(super) name: String,
    pub(super) color: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct List {
    pub(super) id: String,
    pub(super) name: String,
    pub(super) closed: bool,
    pub(super) pos: f64,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(super) struct Card {
    pub(super) id: String,
    pub(super) name: String,
    pub(super) desc: String,
    pub(super) closed: bool,
    pub(super) id_list: String,
    pub(super) pos: f64,
    pub(super) due: Option<String>,
    pub(super) due_complete: bool,
    pub(super) id_labels: Vec<String>,
    pub(super) id_checklists: Vec<String>,
    pub(super) date_last_activity: Option<String>,
    pub(super) labels: Vec<Label>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(super) struct Checklist {
    pub(super) id: String,
    pub(super) id_card: String,
    pub(super) name: String,
    pub(super) pos: f64,
    pub(super) check_items: Vec<CheckItem>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct CheckItem {
    pub(super) name: String,
    pub(super) state: String,
    pub(super) pos: f64,
}

pub(super) struct Board {
    pub(super) name: String,
    pub(super) closed: bool,
    pub(super) date_last_activity: Option<String>,
    pub(super) labels: Vec<Label>,
    pub(super) lists: Vec<List>,
    pub(super) cards: Vec<Card>,
    pub(super) checklists: Vec<Checklist>,
    pub(super) actions: Vec<Value>,
}

/// A `commentCard` action, read.
pub(super) struct Comment {
    pub(super) text: String,
    pub(super) date: Option<String>,
    pub(super) ms: Option<i64>,
}

/// Checks the shape of a board export and decodes the parts the mapping reads.
pub(super) fn read_board(bytes: &[u8]) -> Result<Board, TrelloError> {
    let root: Value =
        serde_json::from_slice(bytes).map_err(|e| TrelloError::BadJson(e.to_string()))?;
    let not_trello = |missing: String| TrelloError::NotTrello { missing };
    let Value::Object(mut object) = root else {
        return Err(not_trello(
            "a board object (the file holds JSON, but not an object)".into(),
        ));
    };
    for field in ["lists", "cards"] {
        match object.get(field) {
            None | Some(Value::Null) => return Err(not_trello(format!("`{field}` is missing"))),
            Some(v) if !v.is_array() => {
                return Err(not_trello(format!("`{field}` is not an array")));
            }
            Some(_) => {}
        }
    }
    let name = match object.get("name") {
        None | Some(Value::Null) => return Err(not_trello("`name` is missing".into())),
        Some(Value::String(name)) => name.clone(),
        Some(_) => return Err(not_trello("`name` is not a string".into())),
    };
    object.retain(|_, v| !v.is_null());
    object.values_mut().for_each(drop_nulls);
    Ok(Board {
        name,
        closed: field(&mut object, "closed")?.unwrap_or_default(),
        date_last_activity: field(&mut object, "dateLastActivity")?,
        labels: elements(&mut object, "labels", "label")?,
        lists: elements(&mut object, "lists", "list")?,
        cards: elements(&mut object, "cards", "card")?,
        checklists: elements(&mut object, "checklists", "checklist")?,
        actions: elements(&mut object, "actions", "action")?,
    })
}

/// Removes every `null` member of every object, so that a null field reads as an absent one.
fn drop_nulls(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|_, v| !v.is_null());
            map.values_mut().for_each(drop_nulls);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_nulls),
        _ => {}
    }
}

/// One field of the board itself.
fn field<T: DeserializeOwned>(
    object: &mut Map<String, Value>,
    name: &str,
) -> Result<Option<T>, TrelloError> {
    object
        .remove(name)
        .map(|v| {
            serde_json::from_value(v).map_err(|e| TrelloError::NotTrello {
                missing: format!("`{name}` does not read as Trello's: {e}"),
            })
        })
        .transpose()
}

/// One array of the board, each element decoded on its own so a malformed one is named.
fn elements<T: DeserializeOwned>(
    object: &mut Map<String, Value>,
    name: &str,
    what: &str,
) -> Result<Vec<T>, TrelloError> {
    let items = match object.remove(name) {
        None => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(_) => {
            return Err(TrelloError::NotTrello {
                missing: format!("`{name}` is not an array"),
            });
        }
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            serde_json::from_value(v).map_err(|e| TrelloError::NotTrello {
                missing: format!("`{name}[{i}]` does not read as a Trello {what}: {e}"),
            })
        })
        .collect()
}

/// Milliseconds since the epoch of an ISO 8601 date with its offset (Trello writes UTC, `Z`).
pub(super) fn parse_ms(s: &str) -> Option<i64> {
    s.parse::<jiff::Timestamp>()
        .ok()
        .map(|t| t.as_millisecond())
}

/// A due date as Workboard's deadline day and time of day, both in UTC.
pub(super) fn deadline(s: &str) -> Option<(String, String)> {
    let at = s
        .parse::<jiff::Timestamp>()
        .ok()?
        .to_zoned(jiff::tz::TimeZone::UTC);
    let (date, time) = (at.date(), at.time());
    // A deadline is `YYYY-MM-DD`: four digits of year.
    (0..=9999).contains(&date.year()).then(|| {
        (
            format!("{:04}-{:02}-{:02}", date.year(), date.month(), date.day()),
            format!("{:02}:{:02}", time.hour(), time.minute()),
        )
    })
}

/// The board's parts looked up by id, built once.
pub(super) struct Index<'b> {
    pub(super) labels: HashMap<&'b str, &'b Label>,
    pub(super) checklists: &'b [Checklist],
    /// Checklists by their `idCard`, as indexes into `checklists`.
    pub(super) checklists_of: HashMap<&'b str, Vec<usize>>,
    /// Checklists by their own id, for a card's `idChecklists`.
    pub(super) checklist_ids: HashMap<&'b str, usize>,
    pub(super) comments: HashMap<&'b str, Vec<Comment>>,
    pub(super) archived: HashMap<&'b str, ArchiveDates>,
}

impl<'b> Index<'b> {
    pub(super) fn new(board: &'b Board) -> Self {
        let mut checklists_of: HashMap<&str, Vec<usize>> = HashMap::new();
        let mut checklist_ids = HashMap::new();
        for (i, c) in board.checklists.iter().enumerate() {
            if !c.id_card.is_empty() {
                checklists_of.entry(c.id_card.as_str()).or_default().push(i);
            }
            checklist_ids.entry(c.id.as_str()).or_insert(i);
        }
        Index {
            labels: board.labels.iter().map(|l| (l.id.as_str(), l)).collect(),
            checklists: &board.checklists,
            checklists_of,
            checklist_ids,
            comments: comments_by_card(&board.actions),
            archived: archive_dates(&board.actions),
        }
    }
}

/// When each list was archived, from its `updateList` actions.
#[derive(Default)]
pub(super) struct ArchiveDates {
    pub(super) newest: Option<i64>,
    pub(super) unreadable: Vec<String>,
}

fn str_at<'v>(v: &'v Value, pointer: &str) -> Option<&'v str> {
    v.pointer(pointer).and_then(Value::as_str)
}

/// The archiving dates of lists: `updateList` actions whose `data.old.closed` is `false`.
fn archive_dates(actions: &[Value]) -> HashMap<&str, ArchiveDates> {
    let mut out: HashMap<&str, ArchiveDates> = HashMap::new();
    for action in actions {
        let archiving = str_at(action, "/type") == Some("updateList")
            && action.pointer("/data/old/closed") == Some(&Value::Bool(false));
        let Some(list) = str_at(action, "/data/list/id").filter(|_| archiving) else {
            continue;
        };
        let dates = out.entry(list).or_default();
        let raw = str_at(action, "/date").unwrap_or_default();
        match parse_ms(raw) {
            Some(ms) => dates.newest = dates.newest.max(Some(ms)),
            None => dates.unreadable.push(raw.to_owned()),
        }
    }
    out
}

/// Each card's non-empty comments, oldest first (a comment whose date does not parse last).
fn comments_by_card(actions: &[Value]) -> HashMap<&str, Vec<Comment>> {
    let mut out: HashMap<&str, Vec<Comment>> = HashMap::new();
    // Trello lists actions newest first: reading them backwards keeps equal dates in order.
    for action in actions.iter().rev() {
        if str_at(action, "/type") != Some("commentCard") {
            continue;
        }
        let (Some(card), Some(text)) = (
            str_at(action, "/data/card/id"),
            str_at(action, "/data/text"),
        ) else {
            continue;
        };
        if text.is_empty() {
            continue;
        }
        let date = str_at(action, "/date").map(str::to_owned);
        out.entry(card).or_default().push(Comment {
            text: text.to_owned(),
            ms: date.as_deref().and_then(parse_ms),
            date,
        });
    }
    for comments in out.values_mut() {
        comments.sort_by_key(|c| (c.ms.is_none(), c.ms));
    }
    out
}
