//! Commands: one file per family, each reading its body into typed values (on the caller's
//! thread) and executing against the store inside the processor's transaction, through a
//! [`Ctx`]. This module names the commands ([`Command`]) and dispatches them; `parse` makes
//! a family's values a command, `place` holds what the families' creates share, so no
//! family imports this module or another family that imports it back.

pub mod account;
pub mod bin;
pub mod bulk;
pub mod column;
mod ctx;
pub mod import;
pub mod items;
mod lists;
mod parse;
mod place;
pub mod project;
pub mod room;
pub mod task;
pub mod trello;
pub mod undo;

pub use crate::outcome::Outcome;
pub use ctx::{Ctx, Finished};

use crate::error::WriteError;
use crate::ids::{BinEntryId, ColumnId, KeyId, ProjectId, TaskId};

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
    UpdateProject(ProjectId, project::UpdateProject),
    DeleteProject(ProjectId),
    CreateColumn(column::CreateColumn),
    UpdateColumn(ColumnId, column::UpdateColumn),
    DeleteColumn(ColumnId),
    CreateTask(Box<task::CreateTask>),
    UpdateTask(TaskId, Box<task::UpdateTask>),
    DeleteTask(TaskId),
    Item(items::ItemCommand),
    CreateTasks(Vec<task::CreateTask>),
    SetPositions(Vec<bulk::PositionEntry>),
    RestoreEntry(BinEntryId),
    Purge,
    Undo,
    Import(import::Import),
    /// Folds the write-ahead log into the database (on shutdown).
    Checkpoint,
    /// A tiny write that tells whether the store takes writes again (after a full disk).
    Probe,
    SaveUsage {
        allowances: Vec<crate::store::AllowanceRow>,
        /// When each key was last used (ms).
        last_used: Vec<(KeyId, i64)>,
    },
}

impl Command {
    /// Whether a command is a step of its key's undo history.
    pub fn undoable(&self) -> bool {
        use items::ItemCommand;
        match self {
            Command::CreateProject(_)
            | Command::UpdateProject(..)
            | Command::DeleteProject(_)
            | Command::CreateColumn(_)
            | Command::UpdateColumn(..)
            | Command::DeleteColumn(_)
            | Command::CreateTask(_)
            | Command::UpdateTask(..)
            | Command::DeleteTask(_)
            | Command::CreateTasks(_) => true,
            Command::Item(c) => matches!(
                c,
                ItemCommand::AddTag { .. }
                    | ItemCommand::AddComment { .. }
                    | ItemCommand::AddChecklist { .. }
                    | ItemCommand::UpdateChecklistItem { .. }
            ),
            _ => false,
        }
    }
}

/// Runs one command. Every check happens before its first write.
pub fn execute(ctx: &mut Ctx<'_>, request: &Request) -> Result<Outcome, WriteError> {
    match &request.command {
        Command::CreateAccount => account::create_account(ctx),
        Command::IssueKey(c) => account::issue_key(ctx, c, request.key_id.as_deref()),
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
            let count = bin::restore(ctx, entry)?;
            Ok(Outcome::Restored {
                id: entry.as_str().to_owned(),
                count,
            })
        }
        Command::SaveUsage {
            allowances,
            last_used,
        } => account::save_usage(ctx, allowances, last_used),
        Command::Import(i) => import::execute(ctx, i),
        Command::Checkpoint => Ok(Outcome::Saved),
        Command::Probe => {
            let now = crate::clock::wall_ms().to_string();
            ctx.store.set_meta("probe", now.as_bytes())?;
            Ok(Outcome::Saved)
        }
        Command::Undo => match &request.key_id {
            Some(key) => undo::undo(ctx, key),
            None => Ok(Outcome::NothingToUndo),
        },
        Command::Purge => {
            let d = bin::purge(ctx)?;
            Ok(Outcome::Purged {
                cards: d.cards,
                bytes: d.bytes,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{bulk, column, items, project, task};

    /// The body's width cap (`input::MAX_OBJECT_KEYS`) lives in the domain; the routes'
    /// field lists live here.
    #[test]
    fn the_width_cap_fits_the_widest_object_in_both_spellings() {
        use crate::input::MAX_OBJECT_KEYS;
        let widest = [
            task::CREATE_FIELDS.len(),
            project::CREATE_FIELDS.len(),
            column::CREATE_FIELDS.len(),
            items::CHECKLIST_FIELDS.len(),
            bulk::BATCH_FIELDS.len(),
        ]
        .into_iter()
        .max()
        .unwrap_or(0);
        assert!(2 * widest <= MAX_OBJECT_KEYS, "{widest} fields");
    }
}
