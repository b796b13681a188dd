//! A request body made a [`Command`]. Each family reads its body into its own values (`read`,
//! `read_update`, ..); here they become commands, so that the families never name the
//! [`Command`] enum that names them all (the entry points keep the names the interface calls).

use super::bulk;
use super::column::{self, CreateColumn};
use super::import;
use super::items::ItemCommand;
use super::project::{self, CreateProject};
use super::task::{self, CreateTask};
use crate::Command;
use crate::error::WriteError;
use crate::ids::{ColumnId, ItemId, ProjectId, TaskId};
use crate::limits::Limits;

impl CreateTask {
    pub fn parse(bytes: &[u8], limits: &Limits) -> Result<Command, WriteError> {
        Ok(Command::CreateTask(Box::new(CreateTask::read(
            bytes, limits,
        )?)))
    }
}

impl CreateColumn {
    pub fn parse(bytes: &[u8], limits: &Limits) -> Result<Command, WriteError> {
        Ok(Command::CreateColumn(CreateColumn::read(bytes, limits)?))
    }
}

impl CreateProject {
    pub fn parse(bytes: &[u8], limits: &Limits) -> Result<Command, WriteError> {
        Ok(Command::CreateProject(CreateProject::read(bytes, limits)?))
    }
}

impl ItemCommand {
    pub fn parse_tag(
        task_id: TaskId,
        bytes: &[u8],
        limits: &Limits,
    ) -> Result<Command, WriteError> {
        Ok(Command::Item(ItemCommand::read_tag(
            task_id, bytes, limits,
        )?))
    }

    pub fn parse_comment(
        task_id: TaskId,
        bytes: &[u8],
        limits: &Limits,
    ) -> Result<Command, WriteError> {
        Ok(Command::Item(ItemCommand::read_comment(
            task_id, bytes, limits,
        )?))
    }

    pub fn parse_checklist(
        task_id: TaskId,
        bytes: &[u8],
        limits: &Limits,
    ) -> Result<Command, WriteError> {
        Ok(Command::Item(ItemCommand::read_checklist(
            task_id, bytes, limits,
        )?))
    }

    pub fn parse_order(
        task_id: TaskId,
        bytes: &[u8],
        limits: &Limits,
    ) -> Result<Command, WriteError> {
        Ok(Command::Item(ItemCommand::read_order(
            task_id, bytes, limits,
        )?))
    }

    pub fn parse_item_update(
        item_id: ItemId,
        bytes: &[u8],
        limits: &Limits,
    ) -> Result<Command, WriteError> {
        Ok(Command::Item(ItemCommand::read_item_update(
            item_id, bytes, limits,
        )?))
    }
}

impl Command {
    /// `PATCH /tasks/:id`.
    pub fn update_task(id: TaskId, bytes: &[u8], limits: &Limits) -> Result<Command, WriteError> {
        Ok(Command::UpdateTask(
            id,
            Box::new(task::read_update(bytes, limits)?),
        ))
    }

    /// `PATCH /columns/:id`.
    pub fn update_column(
        id: ColumnId,
        bytes: &[u8],
        limits: &Limits,
    ) -> Result<Command, WriteError> {
        Ok(Command::UpdateColumn(
            id,
            column::read_update(bytes, limits)?,
        ))
    }

    /// `PATCH /projects/:id`.
    pub fn update_project(
        id: ProjectId,
        bytes: &[u8],
        limits: &Limits,
    ) -> Result<Command, WriteError> {
        Ok(Command::UpdateProject(
            id,
            project::read_update(bytes, limits)?,
        ))
    }

    /// `POST /tasks` in its batch form, `{tasks: [...]}`.
    pub fn create_tasks(bytes: &[u8], limits: &Limits) -> Result<Command, WriteError> {
        Ok(Command::CreateTasks(bulk::read_batch(bytes, limits)?))
    }

    /// `PATCH /tasks/positions`.
    pub fn set_positions(bytes: &[u8], limits: &Limits) -> Result<Command, WriteError> {
        Ok(Command::SetPositions(bulk::read_positions(bytes, limits)?))
    }

    /// An export file (`POST /import`, `workboard import`).
    pub fn import(bytes: &[u8], limits: &Limits) -> Result<Command, WriteError> {
        Ok(Command::Import(import::read(bytes, limits)?))
    }
}
