//! The SQLite store: schema, opening with the chosen durability, and the row-level reads and
//! writes the commands use; [`load_account`] streams a whole account to the read model. Only the
//! command processor writes.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::WriteError;
use crate::records::{Kind, Record, Task};

mod checkpoint;
mod load;
mod migrate;
pub use checkpoint::Checkpoints;
pub use load::{AccountSnapshot, Loaded, MarkerRow, load_account};

/// How hard a commit waits for the disk (contract: `--durability`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// `synchronous=FULL`: an acknowledged write survives a power loss.
    #[default]
    Full,
    /// `synchronous=NORMAL`: survives a crash of the process only.
    Normal,
}

impl Durability {
    /// SQLite's `synchronous` setting for it.
    pub fn pragma(self) -> &'static str {
        match self {
            Durability::Full => "FULL",
            Durability::Normal => "NORMAL",
        }
    }
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS accounts (
    id TEXT PRIMARY KEY,
    rev INTEGER NOT NULL DEFAULT 0,
    last_stamp INTEGER NOT NULL DEFAULT 0,
    stored_bytes INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS allowance (
    key_id TEXT PRIMARY KEY,
    resets_at INTEGER NOT NULL,
    reads INTEGER NOT NULL,
    writes INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS keys (
    id TEXT PRIMARY KEY,
    account TEXT NOT NULL,
    digest BLOB NOT NULL UNIQUE,
    label TEXT,
    prefix TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    last_used_at INTEGER,
    revoked_at INTEGER
);
CREATE INDEX IF NOT EXISTS keys_by_account ON keys(account);
CREATE TABLE IF NOT EXISTS records (
    account TEXT NOT NULL,
    id TEXT NOT NULL,
    kind INTEGER NOT NULL,
    project_id TEXT NOT NULL,
    column_id TEXT,
    parent_id TEXT,
    bin_entry TEXT,
    deleted_at INTEGER,
    position REAL NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (account, id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS records_by_project ON records(account, project_id, kind, position);
CREATE INDEX IF NOT EXISTS projects_by_position ON records(account, position) WHERE kind = 0;
CREATE INDEX IF NOT EXISTS records_by_column ON records(account, column_id, position) WHERE column_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS records_by_parent ON records(account, parent_id) WHERE parent_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS records_by_bin_entry ON records(account, bin_entry) WHERE bin_entry IS NOT NULL;
CREATE TABLE IF NOT EXISTS bin (
    account TEXT NOT NULL,
    id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    head TEXT NOT NULL,
    deleted_at INTEGER NOT NULL,
    label TEXT NOT NULL,
    count INTEGER NOT NULL,
    key_id TEXT,
    PRIMARY KEY (account, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS items (
    account TEXT NOT NULL,
    id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    PRIMARY KEY (account, id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS items_by_task ON items(account, task_id);
CREATE TABLE IF NOT EXISTS markers (
    account TEXT NOT NULL,
    id TEXT NOT NULL,
    kind INTEGER NOT NULL,
    project_id TEXT NOT NULL,
    deleted_at INTEGER NOT NULL,
    PRIMARY KEY (account, id)
) WITHOUT ROWID;
";

/// Opens (creating if needed) the store at `path` in WAL mode.
pub fn open(path: &Path, durability: Durability) -> Result<Connection, WriteError> {
    let conn = connect(path, durability)?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    // 4 MiB of page cache: the upper levels of the indexes and the leaves being written stay
    // in memory; the rest come from the OS cache, which costs a read call, not resident
    // memory. (16 MiB kept a large import's pages resident: 17 MiB of the memory peak.)
    conn.pragma_update(None, "cache_size", -4_096)?;
    // Savepoint journals stay in memory: a group replayed with a savepoint per command
    // copies the pages each touches, and would otherwise spill them to a temporary file.
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    conn.execute_batch(SCHEMA)?;
    migrate::undo_as_rowid_table(&conn)?;
    migrate::drop_whole_kind_index(&conn)?;
    Ok(conn)
}

/// A connection with the chosen durability that waits up to 5 s for a lock.
fn connect(path: &Path, durability: Durability) -> Result<Connection, WriteError> {
    let conn = Connection::open(path)?;
    conn.pragma_update(None, "synchronous", durability.pragma())?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    Ok(conn)
}

/// A record as the store holds it, with where it sits in the recycle bin if deleted.
#[derive(Debug, Clone)]
pub struct Stored<T> {
    pub value: T,
    pub bin_entry: Option<String>,
    pub deleted_at: Option<i64>,
}

/// Whether a live (not deleted) record of `kind` has `id` in the account.
pub fn is_live(conn: &Connection, account: &str, kind: Kind, id: &str) -> Result<bool, WriteError> {
    Ok(conn
        .prepare_cached(
            "SELECT 1 FROM records WHERE account = ?1 AND id = ?2 AND kind = ?3 AND bin_entry IS NULL",
        )?
        .exists(params![account, id, kind as i64])?)
}

/// Whether any record of the account (live, binned, any kind) uses `id`.
pub fn id_in_use(conn: &Connection, account: &str, id: &str) -> Result<bool, WriteError> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM records WHERE account = ?1 AND id = ?2")?
        .exists(params![account, id])?)
}

/// What a stored record's row holds besides its body: the indexed columns and the body's
/// size. A rewrite that keeps every indexed column replaces only the body, so it dirties one
/// page instead of one per index.
#[derive(Debug, Clone)]
pub struct Row {
    kind: Kind,
    project_id: String,
    column_id: Option<String>,
    parent_id: Option<String>,
    pub bin: Option<(String, i64)>,
    position: f64,
    /// The body's length in bytes: what the record counts toward the account's storage.
    len: i64,
    /// The record's JSON as stored, for undo steps, which keep it as it is rather than
    /// serialising the record again; dropped by commands that record no step (an import
    /// of a whole account would otherwise hold every body at once).
    pub body: Option<String>,
}

impl Row {
    fn of(record: &Record, bin: Option<(&str, i64)>, body: String) -> Row {
        let (project_id, column_id, parent_id, position) = match record {
            Record::Project(p) => (p.id.clone(), None, None, p.position),
            Record::Column(c) => (c.project_id.clone(), None, None, c.position),
            Record::Task(t) => (
                t.project_id.clone(),
                Some(t.column_id.clone()),
                t.parent_id.clone(),
                t.position,
            ),
        };
        Row {
            kind: record.kind(),
            project_id,
            column_id,
            parent_id,
            bin: bin.map(|(entry, at)| (entry.to_owned(), at)),
            position,
            len: body.len() as i64,
            body: Some(body),
        }
    }

    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The bytes the record counts toward the account's storage.
    pub fn stored_len(&self) -> i64 {
        self.len
    }

    /// Whether `other` keeps every indexed column of this row.
    fn same_columns(&self, other: &Row) -> bool {
        self.kind == other.kind
            && self.project_id == other.project_id
            && self.column_id == other.column_id
            && self.parent_id == other.parent_id
            && self.bin == other.bin
            && self.position == other.position
    }

    pub fn bin_entry(&self) -> Option<&str> {
        self.bin.as_ref().map(|(entry, _)| entry.as_str())
    }
}

/// Writes a record over `old` (the row as it stands, `None` if there is none), with its
/// place in the bin if deleted. Answers the row as now stored.
pub fn put(
    conn: &Connection,
    account: &str,
    record: &Record,
    bin: Option<(&str, i64)>,
    old: Option<&Row>,
) -> Result<Row, WriteError> {
    // Room for the record as it was and a little growth, so the JSON is written without
    // growing its buffer from empty on the way.
    let room = old.map_or(512, |old| old.len as usize + 64);
    let body = match record {
        Record::Project(p) => to_json(p, room)?,
        Record::Column(c) => to_json(c, room)?,
        Record::Task(t) => to_json(t, room)?,
    };
    let row = Row::of(record, bin, body);
    if old.is_some_and(|old| old.same_columns(&row)) {
        conn.prepare_cached("UPDATE records SET body = ?3 WHERE account = ?1 AND id = ?2")?
            .execute(params![account, record.id(), row.body])?;
        return Ok(row);
    }
    let sql = if old.is_some() {
        "UPDATE records SET kind = ?3, project_id = ?4, column_id = ?5, parent_id = ?6, bin_entry = ?7, deleted_at = ?8, position = ?9, body = ?10
         WHERE account = ?1 AND id = ?2"
    } else {
        "INSERT INTO records (account, id, kind, project_id, column_id, parent_id, bin_entry, deleted_at, position, body)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
    };
    conn.prepare_cached(sql)?.execute(params![
        account,
        record.id(),
        row.kind as i64,
        row.project_id,
        row.column_id,
        row.parent_id,
        row.bin.as_ref().map(|b| b.0.as_str()),
        row.bin.as_ref().map(|b| b.1),
        row.position,
        row.body
    ])?;
    Ok(row)
}

/// Any record of the account by id, whatever its kind, with its row.
pub fn get_row(
    conn: &Connection,
    account: &str,
    id: &str,
) -> Result<Option<(Record, Row)>, WriteError> {
    let found: Option<(i64, String, Option<String>, Option<i64>)> = conn
        .prepare_cached(
            "SELECT kind, body, bin_entry, deleted_at FROM records WHERE account = ?1 AND id = ?2",
        )?
        .query_row(params![account, id], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })
        .optional()?;
    let Some((kind, body, bin_entry, deleted_at)) = found else {
        return Ok(None);
    };
    let record = match Kind::from_i64(kind) {
        Some(Kind::Project) => Record::Project(serde_json::from_str(&body)?),
        Some(Kind::Column) => Record::Column(serde_json::from_str(&body)?),
        _ => Record::Task(serde_json::from_str(&body)?),
    };
    let bin = bin_entry.as_deref().map(|e| (e, deleted_at.unwrap_or(0)));
    let row = Row::of(&record, bin, body);
    Ok(Some((record, row)))
}

/// The account's stored bytes, and how many of them sit in the bin (what a purge frees).
pub fn storage(conn: &Connection, account: &str) -> Result<(u64, u64), WriteError> {
    let used: i64 = conn
        .prepare_cached("SELECT coalesce(max(stored_bytes), 0) FROM accounts WHERE id = ?1")?
        .query_row(params![account], |r| r.get(0))?;
    let binned: i64 = conn
        .prepare_cached(BINNED_BYTES)?
        .query_row(params![account], |r| r.get(0))?;
    Ok((used as u64, binned as u64))
}

fn to_json<T: Serialize>(v: &T, room: usize) -> Result<String, WriteError> {
    let mut out = Vec::with_capacity(room);
    serde_json::to_writer(&mut out, v).map_err(|e| WriteError::Internal(e.to_string()))?;
    // serde_json writes UTF-8 only.
    String::from_utf8(out).map_err(|e| WriteError::Internal(e.to_string()))
}

/// Removes a record for good.
pub fn destroy(conn: &Connection, account: &str, id: &str) -> Result<(), WriteError> {
    conn.prepare_cached("DELETE FROM records WHERE account = ?1 AND id = ?2")?
        .execute(params![account, id])?;
    Ok(())
}

// The queries that list or count a record's siblings name their index. Without statistics
// SQLite's planner prefers walking the whole account by its primary key to looking rows up
// through a narrower index, which made completing a card cost a read of every record of
// the account (its subtasks were found that way). `INDEXED BY` keeps each of these at what
// it returns; `sibling_queries_search_their_index` holds them to it.
const LIVE_IN_PROJECT: &str = "SELECT body FROM records INDEXED BY records_by_project WHERE account = ?1 AND project_id = ?2 AND kind = ?3 AND bin_entry IS NULL";
const LIVE_IN_COLUMN: &str = "SELECT body FROM records INDEXED BY records_by_column WHERE account = ?1 AND column_id = ?2 AND bin_entry IS NULL";
const LIVE_SUBTASKS: &str = "SELECT body FROM records INDEXED BY records_by_parent WHERE account = ?1 AND parent_id = ?2 AND bin_entry IS NULL";
const COUNT_IN_PROJECT: &str = "SELECT count(*) FROM records INDEXED BY records_by_project WHERE account = ?1 AND project_id = ?2 AND kind = ?3 AND bin_entry IS NULL";
const COUNT_PROJECTS: &str = "SELECT count(*) FROM records INDEXED BY projects_by_position WHERE account = ?1 AND kind = 0 AND bin_entry IS NULL";
const MIN_PROJECT_POSITION: &str = "SELECT min(position) FROM records INDEXED BY projects_by_position WHERE account = ?1 AND kind = 0 AND bin_entry IS NULL AND ?2 IS NULL";
const MIN_COLUMN_POSITION: &str = "SELECT min(position) FROM records INDEXED BY records_by_project WHERE account = ?1 AND project_id = ?2 AND kind = 1 AND bin_entry IS NULL";
const BINNED_BYTES: &str = "SELECT coalesce(sum(length(CAST(body AS BLOB))), 0) FROM records INDEXED BY records_by_bin_entry WHERE account = ?1 AND bin_entry IS NOT NULL";
/// The records of a bin entry: their ids, kinds, projects, deletion times and sizes.
pub(crate) const ENTRY_ROWS: &str = "SELECT id, kind, project_id, deleted_at, length(CAST(body AS BLOB)) FROM records INDEXED BY records_by_bin_entry WHERE account = ?1 AND bin_entry = ?2";
/// The records of a bin entry: their kinds and bodies.
pub(crate) const ENTRY_BODIES: &str = "SELECT kind, body FROM records INDEXED BY records_by_bin_entry WHERE account = ?1 AND bin_entry = ?2";
const MIN_TASK_POSITION: &str = "SELECT min(position) FROM records INDEXED BY records_by_column WHERE account = ?1 AND column_id = ?2 AND bin_entry IS NULL";

/// Live records of one kind under a project (its columns, or its tasks).
pub fn live_in_project<T: DeserializeOwned>(
    conn: &Connection,
    account: &str,
    project_id: &str,
    kind: Kind,
) -> Result<Vec<T>, WriteError> {
    bodies(
        conn,
        LIVE_IN_PROJECT,
        params![account, project_id, kind as i64],
    )
}

/// Live tasks of a column.
pub fn live_tasks_in_column(
    conn: &Connection,
    account: &str,
    column_id: &str,
) -> Result<Vec<Task>, WriteError> {
    bodies(conn, LIVE_IN_COLUMN, params![account, column_id])
}

/// Live subtasks of a task.
pub fn live_subtasks(
    conn: &Connection,
    account: &str,
    parent_id: &str,
) -> Result<Vec<Task>, WriteError> {
    bodies(conn, LIVE_SUBTASKS, params![account, parent_id])
}

/// The records whose bodies `sql` selects, parsed.
fn bodies<T: DeserializeOwned>(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
) -> Result<Vec<T>, WriteError> {
    let mut stmt = conn.prepare_cached(sql)?;
    let rows = stmt.query_map(params, |r| r.get::<_, String>(0))?;
    rows.map(|b| Ok(serde_json::from_str(&b?)?)).collect()
}

/// Counts the account's live projects.
pub fn count_live_projects(conn: &Connection, account: &str) -> Result<usize, WriteError> {
    let n: i64 = conn
        .prepare_cached(COUNT_PROJECTS)?
        .query_row(params![account], |r| r.get(0))?;
    Ok(n as usize)
}

/// Counts live records of a kind in one project.
pub fn count_live_in_project(
    conn: &Connection,
    account: &str,
    kind: Kind,
    project_id: &str,
) -> Result<usize, WriteError> {
    let n: i64 = conn
        .prepare_cached(COUNT_IN_PROJECT)?
        .query_row(params![account, project_id, kind as i64], |r| r.get(0))?;
    Ok(n as usize)
}

/// The lowest position among live siblings, for landing a new record at the top.
pub fn min_position(
    conn: &Connection,
    account: &str,
    kind: Kind,
    parent: Option<&str>,
) -> Result<Option<f64>, WriteError> {
    let sql = match kind {
        Kind::Project => MIN_PROJECT_POSITION,
        Kind::Column => MIN_COLUMN_POSITION,
        Kind::Task => MIN_TASK_POSITION,
    };
    Ok(conn
        .prepare_cached(sql)?
        .query_row(params![account, parent], |r| r.get(0))?)
}

/// The ids of every account.
pub fn account_ids(conn: &Connection) -> Result<Vec<String>, WriteError> {
    let mut stmt = conn.prepare("SELECT id FROM accounts ORDER BY created_at")?;
    let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The latest stamp of an account (0 if it has none yet).
pub fn last_stamp(conn: &Connection, account: &str) -> Result<i64, WriteError> {
    Ok(conn
        .prepare_cached("SELECT last_stamp FROM accounts WHERE id = ?1")?
        .query_row(params![account], |r| r.get(0))
        .optional()?
        .unwrap_or(0))
}

/// The task holding a checklist item, tag or comment.
pub fn item_task(
    conn: &Connection,
    account: &str,
    item_id: &str,
) -> Result<Option<String>, WriteError> {
    Ok(conn
        .prepare_cached("SELECT task_id FROM items WHERE account = ?1 AND id = ?2")?
        .query_row(params![account, item_id], |r| r.get(0))
        .optional()?)
}

/// Keeps the item index in step with a task's checklist, tags and comments.
pub fn index_items(
    conn: &Connection,
    account: &str,
    old: Option<&Task>,
    new: &Task,
) -> Result<(), WriteError> {
    let ids = |t: &Task| -> Vec<String> {
        t.tags
            .iter()
            .map(|x| x.id.clone())
            .chain(t.checklist.iter().map(|x| x.id.clone()))
            .chain(t.comments.iter().map(|x| x.id.clone()))
            .collect()
    };
    let before = old.map(ids).unwrap_or_default();
    let after = ids(new);
    for gone in before.iter().filter(|id| !after.contains(id)) {
        conn.prepare_cached("DELETE FROM items WHERE account = ?1 AND id = ?2")?
            .execute(params![account, gone])?;
    }
    for added in after.iter().filter(|id| !before.contains(id)) {
        conn.prepare_cached(
            "INSERT OR REPLACE INTO items (account, id, task_id) VALUES (?1, ?2, ?3)",
        )?
        .execute(params![account, added, new.id])?;
    }
    Ok(())
}

/// Forgets every item of a destroyed task.
pub fn drop_items(conn: &Connection, account: &str, task_id: &str) -> Result<(), WriteError> {
    conn.prepare_cached("DELETE FROM items WHERE account = ?1 AND task_id = ?2")?
        .execute(params![account, task_id])?;
    Ok(())
}

/// Whether any checklist item, tag or comment of the account uses `id`.
pub fn item_id_in_use(conn: &Connection, account: &str, id: &str) -> Result<bool, WriteError> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM items WHERE account = ?1 AND id = ?2")?
        .exists(params![account, id])?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sibling_queries_search_their_index() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let conn = open(&dir.path().join("plan.db"), Durability::Normal).expect("a store");
        for sql in [
            LIVE_IN_PROJECT,
            LIVE_IN_COLUMN,
            LIVE_SUBTASKS,
            COUNT_IN_PROJECT,
            COUNT_PROJECTS,
            MIN_PROJECT_POSITION,
            MIN_COLUMN_POSITION,
            MIN_TASK_POSITION,
            BINNED_BYTES,
            ENTRY_ROWS,
            ENTRY_BODIES,
        ] {
            let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
            let params = vec!["x"; stmt.parameter_count()];
            let plan: Vec<String> = stmt
                .query_map(rusqlite::params_from_iter(params), |r| r.get(3))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            let named = sql
                .split("INDEXED BY ")
                .nth(1)
                .and_then(|rest| rest.split_whitespace().next())
                .expect("the query names its index");
            // Past the account, each searches its index by the sibling's key too; projects
            // are an account's only entries in theirs.
            let search = if named == "projects_by_position" {
                format!("INDEX {named} (account=?)")
            } else {
                format!("INDEX {named} (account=? AND")
            };
            let searches_an_index = plan.iter().any(|step| step.contains(&search));
            assert!(searches_an_index, "{sql}\nis planned as {plan:?}");
        }
    }
}
