//! Converting one board of Trello's JSON export (`Menu > Print, export and share > Export as
//! JSON`) into a Workboard export document that [`Command::import`](super::Command::import) takes unchanged. This
//! module owns the mapping and the report of what did not fit; it reads nothing but the bytes
//! it is given and writes nothing (the caller imports the document). `read` decodes Trello's
//! file, `index` looks its parts up by id; `map` applies the rules below, `card` those of one card.
//!
//! # The mapping
//! - The board becomes one project. Its `name` is trimmed to `name_chars` (an empty one becomes
//!   "Untitled board"). A closed board is archived at its `dateLastActivity` (else `now_ms`).
//!   The board's description is not carried: projects have none.
//! - Lists become columns in `pos` order, `position` = `pos`. A name is trimmed to
//!   `name_chars`; an empty one becomes "Untitled list". A closed (archived) list stays, archived
//!   at the date of the newest `updateList` action on it whose `data.old.closed` is `false` (the
//!   moment it was archived), else the board's `dateLastActivity`, else `now_ms`.
//! - Cards become tasks in their list, in `pos` order, `position` = `pos`: `name` is the title
//!   (trimmed to `title_chars`; empty becomes "Untitled card"), `desc` the description, `due`
//!   gives `deadline` (`YYYY-MM-DD`) and `deadlineTime` (`HH:MM`), both in UTC. A card with
//!   `dueComplete` or `closed` is finished: `completedAt` is its `dateLastActivity` (else
//!   `now_ms`), so an archived card is kept as a finished card (shown under `completed=all`
//!   and in the export, not on the board by default). Priority stays at its default.
//! - Labels become tags: each of the card's `idLabels` found in the board's `labels` (or, failing
//!   that, in the card's own `labels`), by its `name`, or its `color` when the name is empty; a
//!   label with neither is skipped. Tags are trimmed to `tag_chars` and deduplicated ignoring
//!   case (as Workboard compares them), in the order of `idLabels`.
//! - Checklists become checklist items: every checklist of the card (its `idCard` is the card,
//!   or the card's `idChecklists` names it) in checklist `pos` order, each one's items in `pos`
//!   order; `state == "complete"` is done. When a card has two or more checklists, each item's
//!   text is prefixed with its checklist's name and ": ". Texts are trimmed to
//!   `checklist_item_chars`; an item with an empty name is dropped.
//! - Comments are the `commentCard` actions on the card (`data.card.id`), oldest first by
//!   `date`, with `createdAt` = that date. A comment with an empty text is dropped. Trello's
//!   board export carries only its most recent actions (1,000), so older comments are not in
//!   the file and cannot be carried.
//! - Not carried: members, attachments, stickers, votes, custom fields, plugin (power-up) data,
//!   the board's description and background, and every Trello id. Workboard makes new ids; the
//!   only ones in the document are fresh column ids, which the import needs to place each card
//!   in its column.
//! - `null` anywhere in the file reads as absent, and fields this module does not name are
//!   ignored, since Trello adds fields all the time.
//!
//! # What does not fit
//! Every limit is the one in the [`Limits`] passed in, counted in characters (Unicode scalar
//! values). Display fields are trimmed as Workboard trims them. Everything else that exceeds a limit, a
//! card whose list is not in the file, and a date that does not parse is a [`Problem`] naming
//! its card (by its Trello name) and its list. Without `lenient` any problem refuses the whole
//! file. With `lenient` the part that does not fit is left out and each problem says what was:
//! tags past the limit (the first kept), checklist items past the limit (the first kept), an
//! over-long comment, comments past the limit (the oldest kept), an over-long description (the
//! card keeps an empty one), a date that does not parse (the field is left out, and a fallback
//! stands where the mapping names one), a card whose list is missing, and lists past the
//! column limit (archived lists first, then the last ones by `pos`, each with its cards).
//! Either way the first [`LISTED_PROBLEMS`] problems are listed and the rest only counted.
//!
//! Some problems refuse the file even with `lenient`, since leaving a part out cannot mend
//! them: two cards (lists, checklists) with one id, which Trello never writes and which
//! would hand one card's comments and checklists to another, and cards carrying more text
//! than an account may store at all.
//!
//! # What a file costs
//! Time and memory are linear in the file, whatever its shape: it is read straight into the
//! structs of `read` (no tree of the whole file), and no card is built past its limits (see
//! `map`). A checklist that several cards name (Trello gives each checklist one card; a
//! hand-made file may not) gives each of them at most the item limit, and its overflow is
//! one problem that counts the cards.

mod card;
mod index;
mod map;
mod problems;
mod read;

pub use problems::{LISTED_PROBLEMS, Problem, Problems, TrelloError};

use crate::limits::Limits;

#[derive(Debug, Clone, PartialEq)]
pub struct Converted {
    /// A Workboard export document (`{"version":1,"now":..,"projects":[ONE project]}`) as JSON
    /// bytes, which `Command::import` accepts unchanged.
    pub document: Vec<u8>,
    /// With `lenient`: what was left out, each naming its card (or list).
    pub skipped: Problems,
    /// The project's name as written (the board's, trimmed).
    pub project: String,
    pub lists: usize,
    pub cards: usize,
    pub checklist_items: usize,
    pub comments: usize,
}

/// Converts one Trello board export into a Workboard export document holding one project.
pub fn convert(
    bytes: &[u8],
    limits: &Limits,
    lenient: bool,
    now_ms: i64,
) -> Result<Converted, TrelloError> {
    let board = read::read_board(bytes)?;
    let mut c = map::Conversion::new(limits, lenient, now_ms);
    let (project, counts) = c.project(&board);
    drop(board);
    if c.fatal || (!lenient && !c.problems.is_empty()) {
        return Err(TrelloError::Refused(c.problems));
    }
    #[derive(serde::Serialize)]
    struct Document<'p> {
        version: u32,
        now: i64,
        projects: [&'p map::ProjectDoc; 1],
    }
    let document = Document {
        version: 1,
        now: now_ms,
        projects: [&project],
    };
    let name = project.name.clone();
    Ok(Converted {
        document: serde_json::to_vec(&document).expect("a document serialises"),
        skipped: c.problems,
        project: name,
        lists: counts.lists,
        cards: counts.cards,
        checklist_items: counts.checklist_items,
        comments: counts.comments,
    })
}

#[cfg(test)]
mod tests;
