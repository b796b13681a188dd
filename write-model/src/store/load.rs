//! Loading a whole account for the read model: its rows streamed in one read transaction,
//! and the snapshot shape fixtures build documents from.

use rusqlite::{Connection, OptionalExtension, params};

use super::Stored;
use crate::error::WriteError;
use crate::records::{Column, Kind, Project, Task};

/// Everything the read model needs to build an account's document.
#[derive(Debug, Default)]
pub struct AccountSnapshot {
    pub rev: i64,
    pub last_stamp: i64,
    pub projects: Vec<Stored<Project>>,
    pub columns: Vec<Stored<Column>>,
    pub tasks: Vec<Stored<Task>>,
    pub markers: Vec<MarkerRow>,
}

/// A project or column destroyed out of the bin, remembered for late clients.
#[derive(Debug, Clone)]
pub struct MarkerRow {
    pub id: String,
    pub kind: Kind,
    pub project_id: String,
    pub deleted_at: i64,
}

/// One stored row of an account, as the loader hands it over.
// Moved once per row straight into the document, never stored: boxing would only add an
// allocation per card.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Loaded {
    Project(Stored<Project>),
    Column(Stored<Column>),
    Task(Stored<Task>),
    Marker(MarkerRow),
}

/// Streams a whole account's rows to `each`, in no particular order, without holding them
/// all at once; answers the account's `(rev, last_stamp)`, or `None` if it does not exist.
pub fn load_account(
    conn: &Connection,
    account: &str,
    mut each: impl FnMut(Loaded),
) -> Result<Option<(i64, i64)>, WriteError> {
    // One read transaction: the rows and the markers come from the same snapshot.
    let tx = conn.unchecked_transaction()?;
    let Some(counters) = tx
        .prepare_cached("SELECT rev, last_stamp FROM accounts WHERE id = ?1")?
        .query_row(params![account], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?
    else {
        return Ok(None);
    };
    let mut stmt = tx.prepare_cached(
        "SELECT kind, body, bin_entry, deleted_at FROM records WHERE account = ?1",
    )?;
    let mut rows = stmt.query(params![account])?;
    while let Some(r) = rows.next()? {
        let kind: i64 = r.get(0)?;
        let body = r.get_ref(1)?.as_str().map_err(rusqlite::Error::from)?;
        let bin_entry: Option<String> = r.get(2)?;
        let deleted_at: Option<i64> = r.get(3)?;
        each(match Kind::from_i64(kind) {
            Some(Kind::Project) => Loaded::Project(Stored {
                value: serde_json::from_str(body)?,
                bin_entry,
                deleted_at,
            }),
            Some(Kind::Column) => Loaded::Column(Stored {
                value: serde_json::from_str(body)?,
                bin_entry,
                deleted_at,
            }),
            Some(Kind::Task) => Loaded::Task(Stored {
                value: serde_json::from_str(body)?,
                bin_entry,
                deleted_at,
            }),
            None => return Err(WriteError::Internal(format!("unknown record kind {kind}"))),
        });
    }
    drop(rows);
    let mut stmt = tx.prepare_cached(
        "SELECT id, kind, project_id, deleted_at FROM markers WHERE account = ?1",
    )?;
    let mut rows = stmt.query(params![account])?;
    while let Some(r) = rows.next()? {
        each(Loaded::Marker(MarkerRow {
            id: r.get(0)?,
            kind: Kind::from_i64(r.get(1)?).unwrap_or(Kind::Column),
            project_id: r.get(2)?,
            deleted_at: r.get(3)?,
        }));
    }
    Ok(Some(counters))
}
