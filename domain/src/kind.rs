//! The three kinds of record, a word every other module of the domain uses (the errors
//! name the kind of a conflicting record): kept apart from `records` so that naming it
//! pulls in nothing else.

use serde::{Deserialize, Serialize};

/// The three kinds of record the interface reads and writes by id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Kind {
    Project = 0,
    Column = 1,
    Task = 2,
}

impl Kind {
    pub fn from_i64(k: i64) -> Option<Kind> {
        match k {
            0 => Some(Kind::Project),
            1 => Some(Kind::Column),
            2 => Some(Kind::Task),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::Project => "project",
            Kind::Column => "column",
            Kind::Task => "task",
        }
    }
}
