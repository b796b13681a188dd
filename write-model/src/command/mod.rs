//! Commands: one file per family, each parsing its body into typed values (on the caller's
//! thread) and executing against the store inside the processor's transaction. `Ctx` is what
//! an executing command may touch: the connection, the account's stamp and revision, and the
//! change set it is building.

pub mod account;
pub mod bulk;
pub mod column;
pub mod items;
pub mod project;
pub mod task;

use std::sync::Arc;

use rusqlite::{Connection, params};
use serde_json::Value;

use crate::change::{ChangeSet, Effect, KeyChange, RecordChange};
use crate::clock::{Clocks, StampClock};
use crate::error::WriteError;
use crate::input::Input;
use crate::limits::Limits;
use crate::records::{Kind, Project, Record};
use crate::store;

/// A command addressed to the writer, with who sent it.
#[derive(Debug, Clone)]
pub struct Request {
    /// The account acted on (`None` only for commands that make or find their account).
    pub account: Option<String>,
    /// The key that sent it, for undo steps (`None` from the CLI).
    pub key_id: Option<String>,
    pub command: Command,
}

#[derive(Debug, Clone)]
pub enum Command {
    CreateAccount,
    IssueKey(account::IssueKey),
    RevokeKey(account::RevokeKey),
    CreateProject(project::CreateProject),
    UpdateProject(String, project::UpdateProject),
    DeleteProject(String),
    CreateColumn(column::CreateColumn),
    UpdateColumn(String, column::UpdateColumn),
    DeleteColumn(String),
    CreateTask(Box<task::CreateTask>),
    UpdateTask(String, Box<task::UpdateTask>),
    DeleteTask(String),
    Item(items::ItemCommand),
    CreateTasks(Vec<task::CreateTask>),
    SetPositions(Vec<bulk::PositionEntry>),
    RestoreEntry(String),
    Purge,
}

/// What a command did, for the reply.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// A new record (201).
    Created {
        kind: Kind,
        id: String,
    },
    /// A create whose id exists with the same fields: a safe retry (200).
    Existing {
        kind: Kind,
        id: String,
    },
    /// A record after a PATCH (200), changed or not.
    Updated {
        kind: Kind,
        id: String,
    },
    /// A DELETE (200), counting the records removed.
    Deleted {
        id: String,
        count: usize,
    },
    AccountCreated {
        id: String,
    },
    KeyIssued {
        id: String,
        account: String,
        created_at: i64,
    },
    KeyRevoked {
        id: String,
    },
    /// Checklist items, a tag or a comment added to a card (`created: false` when a tag
    /// equal to one the card has was sent).
    ItemsAdded {
        task_id: String,
        ids: Vec<String>,
        created: bool,
        /// The checklist's items form, which answers `ids` rather than `id`.
        many: bool,
    },
    /// A batch create: how many were new, the revision after, every id in the order sent.
    BatchCreated {
        created: usize,
        rev: i64,
        ids: Vec<String>,
    },
    /// A bulk position write.
    Positions {
        changed: bool,
        moved: usize,
    },
    /// A bin entry restored.
    Restored {
        id: String,
        count: usize,
    },
    /// The bin emptied: cards destroyed and bytes freed.
    Purged {
        cards: usize,
        bytes: u64,
    },
    /// A checklist item after a PATCH.
    ItemUpdated {
        task_id: String,
        item_id: String,
    },
}

/// The environment a command executes in.
pub struct Ctx<'c> {
    pub conn: &'c Connection,
    pub account: String,
    pub limits: &'c Limits,
    clocks: &'c Clocks,
    clock: Option<Arc<StampClock>>,
    stamp_rev: Option<(i64, i64)>,
    changes: Vec<RecordChange>,
    keys: Vec<KeyChange>,
    names_changed: bool,
}

impl<'c> Ctx<'c> {
    pub fn new(
        conn: &'c Connection,
        account: String,
        limits: &'c Limits,
        clocks: &'c Clocks,
    ) -> Self {
        Ctx {
            conn,
            account,
            limits,
            clocks,
            clock: None,
            stamp_rev: None,
            changes: Vec::new(),
            keys: Vec::new(),
            names_changed: false,
        }
    }

    /// The stamp and new revision of this request, taken on the first change it makes. A
    /// request that changes nothing never calls this, so it stamps nothing.
    pub fn stamp(&mut self) -> Result<(i64, i64), WriteError> {
        if let Some(sr) = self.stamp_rev {
            return Ok(sr);
        }
        let (conn, account) = (self.conn, self.account.as_str());
        let clock = self
            .clocks
            .get(account, || store::last_stamp(conn, account).unwrap_or(0));
        let stamp = clock.begin();
        self.clock = Some(clock);
        let rev: i64 = conn
            .prepare_cached("UPDATE accounts SET rev = rev + 1, last_stamp = max(last_stamp, ?2) WHERE id = ?1 RETURNING rev")?
            .query_row(params![account, stamp], |r| r.get(0))?;
        self.stamp_rev = Some((stamp, rev));
        Ok((stamp, rev))
    }

    /// Stores a live record and records the change (a later write of the same record in
    /// this request replaces the earlier one).
    pub fn put_live(&mut self, record: Record) -> Result<(), WriteError> {
        store::put(self.conn, &self.account, &record, None)?;
        self.push(RecordChange::Live(record));
        Ok(())
    }

    /// Stores a live task, keeping the index of its checklist items, tags and comments.
    pub fn put_task(
        &mut self,
        old: Option<&crate::records::Task>,
        task: crate::records::Task,
    ) -> Result<(), WriteError> {
        store::index_items(self.conn, &self.account, old, &task)?;
        self.put_live(Record::Task(task))
    }

    /// Stores a record as deleted under bin entry `entry`.
    pub fn put_binned(
        &mut self,
        record: Record,
        entry: &str,
        deleted_at: i64,
    ) -> Result<(), WriteError> {
        store::put(self.conn, &self.account, &record, Some((entry, deleted_at)))?;
        self.push(RecordChange::Binned {
            record,
            entry: entry.to_owned(),
            deleted_at,
        });
        Ok(())
    }

    /// Records a change made by other means (a destruction).
    pub fn record_change(&mut self, change: RecordChange) {
        self.push(change);
    }

    fn push(&mut self, change: RecordChange) {
        match self.changes.iter_mut().find(|c| c.id() == change.id()) {
            Some(slot) => *slot = change,
            None => self.changes.push(change),
        }
    }

    pub fn names_changed(&mut self) {
        self.names_changed = true;
    }

    pub fn key_change(&mut self, change: KeyChange) {
        self.keys.push(change);
    }

    /// Moves a project's `updatedAt` to this request's stamp: anything inside it changed.
    pub fn touch_project(&mut self, project_id: &str) -> Result<(), WriteError> {
        let (stamp, _) = self.stamp()?;
        let current = self.changes.iter().find_map(|c| match c {
            RecordChange::Live(Record::Project(p)) if p.id == project_id => Some(p.clone()),
            _ => None,
        });
        let mut project = match current {
            Some(p) => p,
            None => {
                match store::get::<Project>(self.conn, &self.account, Kind::Project, project_id)? {
                    Some(s) if s.bin_entry.is_none() => s.value,
                    _ => return Ok(()),
                }
            }
        };
        if project.updated_at != stamp {
            project.updated_at = stamp;
            self.put_live(Record::Project(project))?;
        }
        Ok(())
    }

    /// Ends the command: its effects, and the in-flight stamp to settle once they are applied.
    pub fn finish(self) -> (Vec<Effect>, Option<(Arc<StampClock>, i64)>) {
        let mut effects: Vec<Effect> = self.keys.into_iter().map(Effect::Key).collect();
        let mut settle = None;
        if let (Some((stamp, rev)), Some(clock)) = (self.stamp_rev, self.clock) {
            effects.push(Effect::Records(ChangeSet {
                account: self.account,
                rev,
                stamp,
                records: self.changes,
                names_changed: self.names_changed,
            }));
            settle = Some((clock, stamp));
        }
        (effects, settle)
    }

    /// Settles a stamp taken by a command that then failed (its savepoint rolled back).
    pub fn abandon(self) {
        if let (Some((stamp, _)), Some(clock)) = (self.stamp_rev, self.clock) {
            clock.finish(stamp, false);
        }
    }
}

/// Runs one command. Every check happens before its first write.
pub fn execute(ctx: &mut Ctx<'_>, request: &Request) -> Result<Outcome, WriteError> {
    match &request.command {
        Command::CreateAccount => account::create_account(ctx),
        Command::IssueKey(c) => account::issue_key(ctx, c),
        Command::RevokeKey(c) => account::revoke_key(ctx, c),
        Command::CreateProject(c) => project::create(ctx, c),
        Command::UpdateProject(id, c) => project::update(ctx, id, c),
        Command::DeleteProject(id) => project::delete(ctx, id),
        Command::CreateColumn(c) => column::create(ctx, c),
        Command::UpdateColumn(id, c) => column::update(ctx, id, c),
        Command::DeleteColumn(id) => column::delete(ctx, id),
        Command::CreateTask(c) => task::create(ctx, c),
        Command::UpdateTask(id, c) => task::update(ctx, id, c),
        Command::DeleteTask(id) => task::delete(ctx, id),
        Command::Item(c) => items::execute(ctx, c),
        Command::CreateTasks(entries) => bulk::create_batch(ctx, entries),
        Command::SetPositions(entries) => bulk::set_positions(ctx, entries),
        Command::RestoreEntry(entry) => {
            let count = crate::bin::restore(ctx, entry)?;
            Ok(Outcome::Restored {
                id: entry.clone(),
                count,
            })
        }
        Command::Purge => {
            let d = crate::bin::purge(ctx)?;
            Ok(Outcome::Purged {
                cards: d.cards,
                bytes: d.bytes,
            })
        }
    }
}

/// Checks one guarded field against the value it holds now. `Some(409)` when it differs.
pub fn guard<T: PartialEq + serde::Serialize>(
    field: &str,
    input: &Option<Input<T>>,
    current: &T,
) -> Option<WriteError> {
    match input {
        Some(Input {
            before: Some(before),
            ..
        }) if before != current => Some(WriteError::conflict(
            field,
            serde_json::to_value(current).unwrap_or(Value::Null),
        )),
        _ => None,
    }
}

/// The position a new record takes when none is given: above every live sibling.
pub fn top_position(ctx: &Ctx<'_>, kind: Kind, parent: Option<&str>) -> Result<f64, WriteError> {
    Ok(store::min_position(ctx.conn, &ctx.account, kind, parent)?.map_or(0.0, |min| min - 1.0))
}

/// A finite position.
pub fn position(field: &str, p: f64) -> Result<f64, WriteError> {
    if p.is_finite() {
        Ok(p)
    } else {
        Err(WriteError::invalid(
            field,
            format!("`{field}` must be a finite number"),
        ))
    }
}

/// Refuses a create whose id is taken, unless every field sent equals the record's (a retry).
pub fn existing_or_conflict(
    same: bool,
    kind: Kind,
    id: &str,
    current: Value,
) -> Result<Outcome, WriteError> {
    if same {
        Ok(Outcome::Existing {
            kind,
            id: id.to_owned(),
        })
    } else {
        Err(WriteError::Conflict {
            message: format!("the id `{id}` is already in use"),
            field: "id".into(),
            current,
        })
    }
}
