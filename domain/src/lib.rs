//! Workboard's domain: what the command side, the read side and the binary share, with no
//! storage engine in it.
//!
//! - [`records`] are the stored shapes of projects, columns and cards; [`field`] declares
//!   each kind's writable fields once (their values, limits, checks, read shape and export
//!   columns); [`input`] decodes a request body, [`checks`] and [`ids`] check single values;
//!   [`repeat`] is a card's recurrence; [`limits`] the limits in force.
//! - [`change`] holds the change records a committed command emits; [`clock`] the stamps
//!   that never go back and the `now` a read may promise.
//! - [`error`] is the domain's one error type, [`WriteError`]; [`kind`] and [`access`] are
//!   the kinds of record and what a key may do, words the other modules share.
//! - [`storage`] is what reading the store means ([`storage::ReadStore`]), implemented by
//!   the engines in `write-model`.

pub mod access;
pub mod change;
pub mod checks;
pub mod clock;
pub mod error;
pub mod field;
pub mod ids;
pub mod input;
pub mod kind;
pub mod limits;
pub mod records;
pub mod repeat;
pub mod storage;

// Keeps this crate's modules free of import circles: the binary's test (`src/layers.rs`),
// run over this crate's source.
#[cfg(test)]
#[path = "../../src/layers.rs"]
mod layers;

pub use change::{ChangeSet, Effect, KeyChange, RecordChange};
pub use clock::{Clocks, StampClock};
pub use error::WriteError;
pub use limits::Limits;
pub use storage::ReadStore;
