//! Workboard's write model: the only code that writes.
//!
//! A tour, in the order a write travels:
//! - [`input`] decodes a request body (camelCase or snake_case, bare or guarded values);
//!   [`checks`] and [`ids`] check each value once; [`command`] turns them into a typed
//!   [`command::Command`] on the caller's thread.
//! - [`processor`] runs commands on one named thread that owns the write connection
//!   ([`store`]) in one group-committed transaction (a command that fails after writing
//!   sends its group round again with a savepoint each); the
//!   [`bin`] keeps deletions recoverable; [`clock`] stamps every change so stamps never go back;
//!   [`ledger`] keeps each account's counters in memory and writes them back once per group.
//! - Each committed command emits [`change`] records that the read model applies before the
//!   sender gets its reply, so a reply is never ahead of what reads show.

// The domain's modules, re-exported so that `crate::records`, `write_model::field` and the
// like read as they did before they moved to the `domain` crate.
pub use domain::{change, checks, clock, error, field, ids, input, limits, records, repeat};

pub mod command;
pub mod idempotency;
pub mod ledger;
pub mod outcome;
pub mod processor;
pub mod store;
pub mod tops;

// Keeps this crate's modules free of import circles: the binary's test (`src/layers.rs`),
// run over this crate's source.
#[cfg(test)]
#[path = "../../src/layers.rs"]
mod layers;
// The bin and undo live with the commands that fill them; their old paths still read.
pub use command::{bin, undo};

pub use command::{Command, Outcome, Request};
pub use domain::{
    ChangeSet, Clocks, Effect, KeyChange, Limits, RecordChange, StampClock, WriteError,
};
pub use processor::WriteModel;
pub use store::Durability;
