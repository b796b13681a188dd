//! Every write body's decoding and validation: whatever the bytes, a typed command or a
//! clear error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use write_model::Limits;
use write_model::command::bulk;
use write_model::command::column::{self, CreateColumn};
use write_model::command::items::ItemCommand;
use write_model::command::project::{self, CreateProject};
use write_model::command::{import, task};
use write_model::ids::{ColumnId, ItemId, ProjectId, TaskId};

fuzz_target!(|data: &[u8]| {
    let limits = Limits::default();
    let id = || TaskId::named("t_fuzz");
    let _ = CreateProject::parse(data, &limits);
    let _ = project::parse_update(ProjectId::named("b_fuzz"), data, &limits);
    let _ = CreateColumn::parse(data, &limits);
    let _ = column::parse_update(ColumnId::named("c_fuzz"), data, &limits);
    let _ = task::CreateTask::parse(data, &limits);
    let _ = task::parse_update(id(), data, &limits);
    if bulk::is_batch(data) {
        let _ = bulk::parse_batch(data, &limits);
    }
    let _ = bulk::parse_positions(data, &limits);
    let _ = ItemCommand::parse_tag(id(), data, &limits);
    let _ = ItemCommand::parse_comment(id(), data, &limits);
    let _ = ItemCommand::parse_checklist(id(), data, &limits);
    let _ = ItemCommand::parse_order(id(), data, &limits);
    let _ = ItemCommand::parse_item_update(ItemId::named("k_fuzz"), data, &limits);
    let _ = import::parse(data, &limits);
});
