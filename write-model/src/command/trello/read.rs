//! Reading Trello's board export: the parts the mapping reads, decoded straight from the bytes
//! into the structs below (no tree of the whole file is built). Fields not named here are skipped as they are read, since Trello's export carries
//! hundreds; `null` reads as absent. What is never used is dropped while reading: checklist
//! items with an empty name, and every action but comments and list archivings.
//!
//! The file is first checked to be JSON at all (a pass that allocates nothing), so that a file
//! cut short is told apart from a board of the wrong shape.

use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use super::problems::TrelloError;

/// `null` reads as the field's default, like an absent field.
fn nullable<'de, D: Deserializer<'de>, T: Default + Deserialize<'de>>(d: D) -> Result<T, D::Error> {
    Option::<T>::deserialize(d).map(Option::unwrap_or_default)
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct Label {
    #[serde(deserialize_with = "nullable")]
    pub(super) id: String,
    #[serde(deserialize_with = "nullable")]
    pub(super) name: String,
    #[serde(deserialize_with = "nullable")]
    pub(super) color: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct List {
    #[serde(deserialize_with = "nullable")]
    pub(super) id: String,
    #[serde(deserialize_with = "nullable")]
    pub(super) name: String,
    #[serde(deserialize_with = "nullable")]
    pub(super) closed: bool,
    #[serde(deserialize_with = "nullable")]
    pub(super) pos: f64,
}

/// A card, in boxed strings and slices: the most numerous thing in a file, and the one a
/// hostile file makes smallest, so its size is most of what reading a file costs.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(super) struct Card {
    #[serde(deserialize_with = "nullable")]
    pub(super) id: Box<str>,
    #[serde(deserialize_with = "nullable")]
    pub(super) name: Box<str>,
    #[serde(deserialize_with = "nullable")]
    pub(super) desc: Box<str>,
    #[serde(deserialize_with = "nullable")]
    pub(super) closed: bool,
    #[serde(deserialize_with = "nullable")]
    pub(super) id_list: Box<str>,
    #[serde(deserialize_with = "nullable")]
    pub(super) pos: f64,
    #[serde(deserialize_with = "nullable")]
    pub(super) due: Option<Box<str>>,
    #[serde(deserialize_with = "nullable")]
    pub(super) due_complete: bool,
    #[serde(deserialize_with = "nullable")]
    pub(super) id_labels: Box<[Box<str>]>,
    #[serde(deserialize_with = "nullable")]
    pub(super) id_checklists: Box<[Box<str>]>,
    #[serde(deserialize_with = "nullable")]
    pub(super) date_last_activity: Option<Box<str>>,
    #[serde(deserialize_with = "nullable")]
    pub(super) labels: Box<[Label]>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(super) struct Checklist {
    #[serde(deserialize_with = "nullable")]
    pub(super) id: String,
    #[serde(deserialize_with = "nullable")]
    pub(super) id_card: String,
    #[serde(deserialize_with = "nullable")]
    pub(super) name: String,
    #[serde(deserialize_with = "nullable")]
    pub(super) pos: f64,
    /// The items with a name, in `pos` order (the file's among equals).
    #[serde(deserialize_with = "check_items")]
    pub(super) check_items: Vec<CheckItem>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct CheckItem {
    #[serde(deserialize_with = "nullable")]
    pub(super) name: String,
    #[serde(deserialize_with = "nullable")]
    pub(super) state: String,
    #[serde(deserialize_with = "nullable")]
    pub(super) pos: f64,
}

/// A checklist's items: those with an empty name are dropped as they are read (the mapping
/// drops them anyway), the rest sorted by `pos` once, here, not once per card naming them.
fn check_items<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<CheckItem>, D::Error> {
    struct Items;
    impl<'de> Visitor<'de> for Items {
        type Value = Vec<CheckItem>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an array of checklist items")
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(Vec::new())
        }
        fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Self::Value, S::Error> {
            let mut items = Vec::new();
            while let Some(item) = seq.next_element::<CheckItem>()? {
                if !item.name.is_empty() {
                    items.push(item);
                }
            }
            items.sort_by(|a: &CheckItem, b| a.pos.total_cmp(&b.pos));
            Ok(items)
        }
    }
    d.deserialize_any(Items)
}

pub(super) struct Board {
    pub(super) name: String,
    pub(super) closed: bool,
    pub(super) date_last_activity: Option<String>,
    pub(super) labels: Vec<Label>,
    pub(super) lists: Vec<List>,
    pub(super) cards: Vec<Card>,
    pub(super) checklists: Vec<Checklist>,
    /// The `commentCard` actions with a card id and a non-empty text, in the file's order.
    pub(super) comments: Vec<(String, Comment)>,
    /// The `updateList` actions that archived a list: its id, and the action's date.
    pub(super) archivings: Vec<(String, String)>,
}

/// A `commentCard` action, read.
pub(super) struct Comment {
    pub(super) text: String,
    pub(super) date: Option<String>,
    pub(super) ms: Option<i64>,
}

/// What a shape error's message starts with, to tell it from serde's own words.
const SHAPE: &str = "trello shape: ";

/// Milliseconds since the epoch of an ISO 8601 date with its offset (Trello writes UTC, `Z`).
pub(super) fn parse_ms(s: &str) -> Option<i64> {
    s.parse::<jiff::Timestamp>()
        .ok()
        .map(|t| t.as_millisecond())
}

/// Checks the shape of a board export and decodes the parts the mapping reads.
pub(super) fn read_board(bytes: &[u8]) -> Result<Board, TrelloError> {
    serde_json::from_slice::<IgnoredAny>(bytes).map_err(|e| TrelloError::BadJson(e.to_string()))?;
    let mut de = serde_json::Deserializer::from_slice(bytes);
    de.deserialize_any(BoardVisitor).map_err(|e| {
        // The position serde adds last is where the error surfaced, not where it is: an
        // element's own position is kept inside its message.
        let text = e.to_string();
        let text = text.rsplit_once(" at line ").map_or(&text[..], |(m, _)| m);
        TrelloError::NotTrello {
            missing: text.strip_prefix(SHAPE).unwrap_or(text).to_owned(),
        }
    })
}

fn shape<E: de::Error>(message: impl fmt::Display) -> E {
    E::custom(format!("{SHAPE}{message}"))
}

struct BoardVisitor;

impl<'de> Visitor<'de> for BoardVisitor {
    type Value = Board;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a Trello board")
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Board, M::Error> {
        let mut name = None;
        let mut closed = None;
        let mut date_last_activity = None;
        let (mut labels, mut lists, mut cards, mut checklists) = (None, None, None, None);
        let (mut comments, mut archivings) = (Vec::new(), Vec::new());
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            match &*key {
                "name" => {
                    name = map
                        .next_value::<Option<&'de RawValue>>()?
                        .map(|raw| {
                            serde_json::from_str::<String>(raw.get())
                                .map_err(|_| shape("`name` is not a string"))
                        })
                        .transpose()?;
                }
                "closed" => closed = map.next_value_seed(Field::<bool>::new("closed"))?,
                "dateLastActivity" => {
                    date_last_activity = map.next_value_seed(Field::new("dateLastActivity"))?;
                }
                "labels" => labels = map.next_value_seed(Elements::new("labels", "label"))?,
                "lists" => lists = map.next_value_seed(Elements::new("lists", "list"))?,
                "cards" => cards = map.next_value_seed(Elements::new("cards", "card"))?,
                "checklists" => {
                    checklists = map.next_value_seed(Elements::new("checklists", "checklist"))?;
                }
                "actions" => map.next_value_seed(Actions {
                    comments: &mut comments,
                    archivings: &mut archivings,
                })?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let Some(lists) = lists else {
            return Err(shape("`lists` is missing"));
        };
        let Some(cards) = cards else {
            return Err(shape("`cards` is missing"));
        };
        let Some(name) = name else {
            return Err(shape("`name` is missing"));
        };
        Ok(Board {
            name,
            closed: closed.unwrap_or_default(),
            date_last_activity,
            labels: labels.unwrap_or_default(),
            lists,
            cards,
            checklists: checklists.unwrap_or_default(),
            comments,
            archivings,
        })
    }

    fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Board, S::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Err(shape(
            "a board object (the file holds JSON, but not an object)",
        ))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Board, E> {
        Err(not_an_object())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Board, E> {
        Err(not_an_object())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Board, E> {
        Err(not_an_object())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Board, E> {
        Err(not_an_object())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Board, E> {
        Err(not_an_object())
    }
    fn visit_unit<E: de::Error>(self) -> Result<Board, E> {
        Err(not_an_object())
    }
}

fn not_an_object<E: de::Error>() -> E {
    shape("a board object (the file holds JSON, but not an object)")
}

/// One field of the board itself; `null` reads as absent.
struct Field<T> {
    name: &'static str,
    of: PhantomData<T>,
}

impl<T> Field<T> {
    fn new(name: &'static str) -> Self {
        Field {
            name,
            of: PhantomData,
        }
    }
}

impl<'de, T: Deserialize<'de>> DeserializeSeed<'de> for Field<T> {
    type Value = Option<T>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<T>, D::Error> {
        let name = self.name;
        Option::<T>::deserialize(d)
            .map_err(|e| shape(format!("`{name}` does not read as Trello's: {e}")))
    }
}

/// One array of the board, each element decoded on its own so a malformed one is named;
/// `null` reads as absent.
struct Elements<T> {
    name: &'static str,
    what: &'static str,
    of: PhantomData<T>,
}

impl<T> Elements<T> {
    fn new(name: &'static str, what: &'static str) -> Self {
        Elements {
            name,
            what,
            of: PhantomData,
        }
    }
}

impl<'de, T: Deserialize<'de>> DeserializeSeed<'de> for Elements<T> {
    type Value = Option<Vec<T>>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for Elements<T> {
    type Value = Option<Vec<T>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an array of Trello {}s", self.what)
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Self::Value, S::Error> {
        let mut out = Vec::new();
        loop {
            match seq.next_element::<T>() {
                Ok(Some(item)) => out.push(item),
                Ok(None) => return Ok(Some(out)),
                Err(e) => {
                    let (name, what, i) = (self.name, self.what, out.len());
                    return Err(shape(format!(
                        "`{name}[{i}]` does not read as a Trello {what}: {e}"
                    )));
                }
            }
        }
    }

    fn visit_map<M: MapAccess<'de>>(self, _: M) -> Result<Self::Value, M::Error> {
        Err(self.not_an_array())
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Err(self.not_an_array())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Err(self.not_an_array())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Err(self.not_an_array())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Err(self.not_an_array())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Err(self.not_an_array())
    }
}

impl<T> Elements<T> {
    fn not_an_array<E: de::Error>(&self) -> E {
        shape(format!("`{}` is not an array", self.name))
    }
}

/// A value that reads as `T`, or as nothing when it does not: the actions this module does
/// not read vary in shape, and one that does not match is skipped, not an error.
struct Loose<T>(Option<T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Loose<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = <&'de RawValue>::deserialize(d)?;
        Ok(Loose(serde_json::from_str(raw.get()).ok()))
    }
}

impl<T> Default for Loose<T> {
    fn default() -> Self {
        Loose(None)
    }
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct Action<'a> {
    #[serde(rename = "type")]
    kind: Loose<String>,
    date: Loose<String>,
    #[serde(borrow)]
    data: Option<&'a RawValue>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct Of {
    id: Loose<String>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct CommentData {
    text: Loose<String>,
    card: Loose<Of>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct ListData {
    list: Loose<Of>,
    old: Loose<Old>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct Old {
    closed: Loose<bool>,
}

/// The board's `actions`, each read and kept only when it is a comment or a list archiving.
struct Actions<'v> {
    comments: &'v mut Vec<(String, Comment)>,
    archivings: &'v mut Vec<(String, String)>,
}

impl<'de> DeserializeSeed<'de> for Actions<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Actions<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of Trello actions")
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<(), S::Error> {
        let mut i = 0;
        loop {
            let action = match seq.next_element::<Action<'de>>() {
                Ok(Some(action)) => action,
                Ok(None) => return Ok(()),
                Err(e) => {
                    return Err(shape(format!(
                        "`actions[{i}]` does not read as a Trello action: {e}"
                    )));
                }
            };
            i += 1;
            let (Some(kind), Some(data)) = (action.kind.0, action.data) else {
                continue;
            };
            match kind.as_str() {
                "commentCard" => {
                    let Ok(data) = serde_json::from_str::<CommentData>(data.get()) else {
                        continue;
                    };
                    let (Some(card), Some(text)) = (data.card.0.and_then(|c| c.id.0), data.text.0)
                    else {
                        continue;
                    };
                    if text.is_empty() {
                        continue;
                    }
                    let date = action.date.0;
                    let ms = date.as_deref().and_then(parse_ms);
                    self.comments.push((card, Comment { text, date, ms }));
                }
                "updateList" => {
                    let Ok(data) = serde_json::from_str::<ListData>(data.get()) else {
                        continue;
                    };
                    let archiving = data.old.0.and_then(|o| o.closed.0) == Some(false);
                    if let Some(list) = data.list.0.and_then(|l| l.id.0).filter(|_| archiving) {
                        self.archivings
                            .push((list, action.date.0.unwrap_or_default()));
                    }
                }
                _ => {}
            }
        }
    }

    fn visit_map<M: MapAccess<'de>>(self, _: M) -> Result<(), M::Error> {
        Err(shape("`actions` is not an array"))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Err(shape("`actions` is not an array"))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Err(shape("`actions` is not an array"))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Err(shape("`actions` is not an array"))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Err(shape("`actions` is not an array"))
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Err(shape("`actions` is not an array"))
    }
}
