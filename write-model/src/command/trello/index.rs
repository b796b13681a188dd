//! The board's parts looked up by id, built once for the mapping, and the dates Trello
//! writes read as Workboard's.

use std::collections::HashMap;

use super::read::{Board, Checklist, Comment, Label, parse_ms};

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

/// The board's parts looked up by id, built once. Empty ids name nothing.
pub(super) struct Index<'b> {
    pub(super) labels: HashMap<&'b str, &'b Label>,
    pub(super) checklists: &'b [Checklist],
    /// Checklists by their `idCard`, as indexes into `checklists`.
    pub(super) checklists_of: HashMap<&'b str, Vec<usize>>,
    /// Checklists by their own id, for a card's `idChecklists`.
    pub(super) checklist_ids: HashMap<&'b str, usize>,
    /// Each card's comments, oldest first (a comment whose date does not parse last).
    pub(super) comments: HashMap<&'b str, Vec<&'b Comment>>,
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
            if !c.id.is_empty() {
                checklist_ids.entry(c.id.as_str()).or_insert(i);
            }
        }
        Index {
            labels: board
                .labels
                .iter()
                .filter(|l| !l.id.is_empty())
                .map(|l| (l.id.as_str(), l))
                .collect(),
            checklists: &board.checklists,
            checklists_of,
            checklist_ids,
            comments: comments_by_card(&board.comments),
            archived: archive_dates(&board.archivings),
        }
    }
}

/// When each list was archived, from its `updateList` actions.
#[derive(Default)]
pub(super) struct ArchiveDates {
    pub(super) newest: Option<i64>,
    pub(super) unreadable: Vec<String>,
}

fn archive_dates(archivings: &[(String, String)]) -> HashMap<&str, ArchiveDates> {
    let mut out: HashMap<&str, ArchiveDates> = HashMap::new();
    for (list, raw) in archivings {
        let dates = out.entry(list.as_str()).or_default();
        match parse_ms(raw) {
            Some(ms) => dates.newest = dates.newest.max(Some(ms)),
            None => dates.unreadable.push(raw.clone()),
        }
    }
    out
}

fn comments_by_card(comments: &[(String, Comment)]) -> HashMap<&str, Vec<&Comment>> {
    let mut out: HashMap<&str, Vec<&Comment>> = HashMap::new();
    // Trello lists actions newest first: reading them backwards keeps equal dates in order.
    for (card, comment) in comments.iter().rev() {
        out.entry(card.as_str()).or_default().push(comment);
    }
    for comments in out.values_mut() {
        comments.sort_by_key(|c| (c.ms.is_none(), c.ms));
    }
    out
}
