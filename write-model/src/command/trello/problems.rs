//! What a Trello board holds that does not fit Workboard: each problem naming its card or
//! list, the first hundred listed and the rest counted, and the error a refused file reads as.

use std::fmt;

/// One thing that did not fit, naming where it sits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The card's Trello name, when the problem is a card's.
    pub card: Option<String>,
    /// The list's Trello name: the card's list, or the list the problem is about.
    pub list: Option<String>,
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Debug quoting keeps a name with a newline or a quote on one readable line.
        match (&self.card, &self.list) {
            (Some(card), Some(list)) => write!(f, "card {card:?} in list {list:?}: ")?,
            (Some(card), None) => write!(f, "card {card:?}: ")?,
            (None, Some(list)) => write!(f, "list {list:?}: ")?,
            (None, None) => write!(f, "the board: ")?,
        }
        f.write_str(&self.message)
    }
}

/// How many problems are listed; past them, only their count.
pub const LISTED_PROBLEMS: usize = 100;

/// The problems found: the first [`LISTED_PROBLEMS`] listed, the rest counted. A file with a
/// problem on every card lists a hundred, not a message per card.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Problems {
    pub listed: Vec<Problem>,
    /// How many more were found past the listed ones.
    pub more: usize,
}

impl Problems {
    /// Lists a problem, or counts it past the listed ones; returns where it was listed.
    pub fn push(&mut self, problem: Problem) -> Option<usize> {
        if self.listed.len() < LISTED_PROBLEMS {
            self.listed.push(problem);
            Some(self.listed.len() - 1)
        } else {
            self.more += 1;
            None
        }
    }

    /// Lists a problem first, the one it displaces from the list counted.
    pub(crate) fn put_first(&mut self, problem: Problem) {
        self.listed.insert(0, problem);
        if self.listed.len() > LISTED_PROBLEMS {
            self.listed.pop();
            self.more += 1;
        }
    }

    /// Every problem found, listed or not.
    pub fn total(&self) -> usize {
        self.listed.len() + self.more
    }

    pub fn is_empty(&self) -> bool {
        self.total() == 0
    }

    pub fn iter(&self) -> std::slice::Iter<'_, Problem> {
        self.listed.iter()
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrelloError {
    /// Not JSON at all.
    BadJson(String),
    /// JSON, but not a Trello board export: names what is missing or malformed (e.g. "`lists`
    /// is missing").
    NotTrello { missing: String },
    /// What does not fit, each naming its card (or list): without `lenient` anything, with it
    /// what leaving out cannot mend (ids used twice, more text than an account stores).
    Refused(Problems),
}

impl fmt::Display for TrelloError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TrelloError::BadJson(e) => write!(f, "the file is not JSON: {e}"),
            TrelloError::NotTrello { missing } => {
                write!(f, "the file is not a Trello board export: {missing}")
            }
            TrelloError::Refused(problems) => {
                let n = problems.total();
                write!(
                    f,
                    "nothing was imported: {} {} in this Trello board do{} not fit",
                    thousands(n),
                    if n == 1 { "thing" } else { "things" },
                    if n == 1 { "es" } else { "" },
                )?;
                for p in problems.iter() {
                    write!(f, "\n- {p}")?;
                }
                if problems.more > 0 {
                    write!(f, "\n- and {} more", thousands(problems.more))?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for TrelloError {}

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
