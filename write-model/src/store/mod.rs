//! The storage boundary: the only code that speaks SQL lives under this module. Everything
//! else reaches the store through three traits, shaped for two engines (SQLite embedded,
//! PostgreSQL on a server):
//! - [`Store`]: the engine itself, shared by every thread. It opens the writer's connection
//!   and serves the reads that need the store: those a read model makes ([`ReadStore`], in
//!   the `domain` crate: a cold account's records, keys, the bin, storage used), the key
//!   cache's and the operator's (backup, copy). What only a store several nodes share does
//!   is a trait of its own, [`SharedStore`], reached through [`Store::shared`].
//! - [`Writer`]: the one write connection, owned by the command processor's thread. Its
//!   transactions and savepoints are its own operations.
//! - [`Tx`]: what a command may read and write inside the writer's transaction, in the
//!   domain's words (records, bin entries, keys, undo steps), never in SQL.
//!
//! [`traits`] holds the three traits, [`types`] the values that cross the boundary,
//! [`remembered`] the rows of idempotency keys, [`shared`] what nodes sharing one store need
//! of it; this module only names them and opens the engine a [`Location`] names.

pub mod copy;
pub mod postgres;
pub mod remembered;
mod schema;
pub mod shared;
pub mod sqlite;
mod traits;
mod types;

pub use domain::storage::ReadStore;
pub use schema::SCHEMA_VERSION;
pub(crate) use schema::check_schema_version;
pub(crate) use traits::Engine;
pub use traits::{SharedStore, Store, Tx, Writer};
pub(crate) use types::loaded;
pub use types::{
    AccountSnapshot, AllowanceRow, BinEntry, Counters, Durability, EntryRow, KeyAccess, KeyCounts,
    KeyRecord, LiveKey, Loaded, MarkerRow, NewBinEntry, NewKey, ProjectName, Row, Stored,
    TicketRow,
};

use crate::error::WriteError;

/// Where a node keeps its store.
#[derive(Clone, PartialEq, Eq)]
pub enum Location {
    /// The SQLite database file in the data folder.
    Sqlite(std::path::PathBuf),
    /// A PostgreSQL database, by its URL (`postgres://user@host:port/dbname`).
    Postgres(String),
}

impl std::fmt::Debug for Location {
    /// A URL may carry a password: only its host and database are shown.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Location::Sqlite(path) => write!(f, "{}", path.display()),
            Location::Postgres(url) => f.write_str(&postgres::redacted(url)),
        }
    }
}

impl Location {
    /// A PostgreSQL URL, or else a SQLite database file.
    pub fn parse(text: &str) -> Location {
        if text.starts_with("postgres://") || text.starts_with("postgresql://") {
            Location::Postgres(text.to_owned())
        } else {
            Location::Sqlite(std::path::PathBuf::from(text))
        }
    }
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self, f)
    }
}

/// Opens (creating and migrating if needed) the store at `location`.
pub fn open(
    location: &Location,
    durability: Durability,
) -> Result<std::sync::Arc<dyn Store>, WriteError> {
    match location {
        Location::Sqlite(path) => Ok(std::sync::Arc::new(sqlite::SqliteStore::open(
            path, durability,
        )?)),
        Location::Postgres(url) => Ok(std::sync::Arc::new(postgres::PgStore::open(
            url, durability,
        )?)),
    }
}

/// Whether a store exists at `location` (a SQLite file, or a PostgreSQL database that holds
/// Workboard's schema), without making one.
pub fn exists(location: &Location) -> Result<bool, WriteError> {
    match location {
        Location::Sqlite(path) => Ok(path.exists()),
        Location::Postgres(url) => postgres::schema_exists(url),
    }
}
