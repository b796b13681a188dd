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

pub mod bin;
pub mod change;
pub mod checks;
pub mod clock;
pub mod command;
pub mod error;
pub mod field;
pub mod idempotency;
pub mod ids;
pub mod input;
pub mod ledger;
pub mod limits;
pub mod processor;
pub mod records;
pub mod repeat;
pub mod store;
pub mod tops;
pub mod undo;

pub use change::{ChangeSet, Effect, KeyChange, RecordChange};
pub use clock::{Clocks, StampClock};
pub use command::{Command, Outcome, Request};
pub use error::WriteError;
pub use limits::Limits;
pub use processor::WriteModel;
pub use store::Durability;
