//! Every write body's decoding and validation: whatever the bytes, a typed command or a
//! clear error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use write_model::command::bulk;
use write_model::command::column::CreateColumn;
use write_model::command::items::ItemCommand;
use write_model::command::project::CreateProject;
use write_model::command::task;
use write_model::{Command, Limits};
use write_model::ids::{ColumnId, ItemId, ProjectId, TaskId};

fuzz_target!(|data: &[u8]| {
    let limits = Limits::default();
    let id = || TaskId::named("t_fuzz");
    let _ = CreateProject::parse(data, &limits);
    let _ = Command::update_project(ProjectId::named("b_fuzz"), data, &limits);
    let _ = CreateColumn::parse(data, &limits);
    let _ = Command::update_column(ColumnId::named("c_fuzz"), data, &limits);
    let _ = task::CreateTask::parse(data, &limits);
    let _ = Command::update_task(id(), data, &limits);
    if bulk::is_batch(data) {
        let _ = Command::create_tasks(data, &limits);
    }
    let _ = Command::set_positions(data, &limits);
    let _ = ItemCommand::parse_tag(id(), data, &limits);
    let _ = ItemCommand::parse_comment(id(), data, &limits);
    let _ = ItemCommand::parse_checklist(id(), data, &limits);
    let _ = ItemCommand::parse_order(id(), data, &limits);
    let _ = ItemCommand::parse_item_update(ItemId::named("k_fuzz"), data, &limits);
    let _ = Command::import(data, &limits);
});
