//! What an API key may do: the word the key records, the change records and the store share.

use serde::{Deserialize, Serialize};

/// What a key may do: everything, only read (every GET, `/changes`, the live socket), or
/// only fetch the calendar feed (`GET /calendar.ics`, the one route that takes a key in its
/// query, since calendar apps send no header).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KeyAccess {
    #[default]
    Full,
    Read,
    Calendar,
}

impl KeyAccess {
    pub fn as_str(self) -> &'static str {
        match self {
            KeyAccess::Full => "full",
            KeyAccess::Read => "read",
            KeyAccess::Calendar => "calendar",
        }
    }

    pub fn parse(s: &str) -> Option<KeyAccess> {
        match s {
            "full" => Some(KeyAccess::Full),
            "read" => Some(KeyAccess::Read),
            "calendar" => Some(KeyAccess::Calendar),
            _ => None,
        }
    }
}
