//! A card's checklist, tags and comments; bulk reorder; the recycle bin and purge.

use salvo::http::StatusCode;
use salvo::prelude::*;
use serde_json::json;
use write_model::Command;
use write_model::command::items::{ItemCommand, ItemRef};
use write_model::ids::{BinEntryId, CommentId, ItemId, TagId, TaskId};

use super::common::{from_store, id_param, no_query, write, write_without_body};
use super::reply::{ApiError, Reply};
use super::schema;
use super::{caller, state};

#[endpoint(tags("card items"), security(("bearer" = [])), parameters(("id" = String, Path, description = "The record's id")), request_body = schema::TextItemCreate, responses(schema::WriteErrors, (status_code = 201, description = "Success", body = schema::TaskWritten), (status_code = 200, description = "A safe retry: the id is in use with the same fields (or the tag exists), nothing changed", body = schema::TaskWritten)))]
pub async fn add_tag(req: &mut Request, depot: &mut Depot) -> Result<Reply, ApiError> {
    let id = TaskId::named(id_param(req));
    write(req, depot, |b, l| ItemCommand::parse_tag(id, b, l)).await
}

#[endpoint(tags("card items"), security(("bearer" = [])), parameters(("id" = String, Path, description = "The record's id")), request_body = schema::TextItemCreate, responses(schema::WriteErrors, (status_code = 201, description = "Success", body = schema::TaskWritten), (status_code = 200, description = "A safe retry: the id is in use with the same fields (or the tag exists), nothing changed", body = schema::TaskWritten)))]
pub async fn add_comment(req: &mut Request, depot: &mut Depot) -> Result<Reply, ApiError> {
    let id = TaskId::named(id_param(req));
    write(req, depot, |b, l| ItemCommand::parse_comment(id, b, l)).await
}

#[endpoint(tags("card items"), security(("bearer" = [])), parameters(("id" = String, Path, description = "The record's id")), request_body = schema::ChecklistCreate, responses(schema::WriteErrors, (status_code = 201, description = "Success", body = schema::TaskWritten), (status_code = 200, description = "A safe retry: the id is in use with the same fields (or the tag exists), nothing changed", body = schema::TaskWritten)))]
pub async fn add_checklist(req: &mut Request, depot: &mut Depot) -> Result<Reply, ApiError> {
    let id = TaskId::named(id_param(req));
    write(req, depot, |b, l| ItemCommand::parse_checklist(id, b, l)).await
}

#[endpoint(tags("card items"), security(("bearer" = [])), parameters(("id" = String, Path, description = "The record's id")), request_body = schema::ChecklistOrder, responses(schema::WriteErrors, (status_code = 200, description = "Success", body = schema::TaskReply)))]
pub async fn order_checklist(req: &mut Request, depot: &mut Depot) -> Result<Reply, ApiError> {
    let id = TaskId::named(id_param(req));
    write(req, depot, |b, l| ItemCommand::parse_order(id, b, l)).await
}

#[endpoint(tags("card items"), security(("bearer" = [])), parameters(("id" = String, Path, description = "The record's id")), request_body = schema::ChecklistItemUpdate, responses(schema::WriteErrors, (status_code = 200, description = "Success", body = schema::ItemWritten)))]
pub async fn update_checklist_item(
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Reply, ApiError> {
    let id = ItemId::named(id_param(req));
    write(req, depot, |b, l| ItemCommand::parse_item_update(id, b, l)).await
}

/// Removes the item the path names, typed by the route it came by (`item`).
async fn delete_item(
    req: &mut Request,
    depot: &Depot,
    item: fn(String) -> ItemRef,
) -> Result<Reply, ApiError> {
    let command = Command::Item(ItemCommand::Delete(item(id_param(req))));
    write_without_body(req, depot, command).await
}

#[endpoint(tags("card items"), security(("bearer" = [])), parameters(("id" = String, Path, description = "The record's id")), responses(schema::WriteErrors, (status_code = 200, description = "Success", body = schema::Deleted)))]
pub async fn delete_checklist_item(
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Reply, ApiError> {
    delete_item(req, depot, |id| ItemRef::Checklist(ItemId::named(id))).await
}

#[endpoint(tags("card items"), security(("bearer" = [])), parameters(("id" = String, Path, description = "The record's id")), responses(schema::WriteErrors, (status_code = 200, description = "Success", body = schema::Deleted)))]
pub async fn delete_tag(req: &mut Request, depot: &mut Depot) -> Result<Reply, ApiError> {
    delete_item(req, depot, |id| ItemRef::Tag(TagId::named(id))).await
}

#[endpoint(tags("card items"), security(("bearer" = [])), parameters(("id" = String, Path, description = "The record's id")), responses(schema::WriteErrors, (status_code = 200, description = "Success", body = schema::Deleted)))]
pub async fn delete_comment(req: &mut Request, depot: &mut Depot) -> Result<Reply, ApiError> {
    delete_item(req, depot, |id| ItemRef::Comment(CommentId::named(id))).await
}

#[endpoint(tags("tasks"), security(("bearer" = [])), request_body = schema::Positions, responses(schema::WriteErrors, (status_code = 200, description = "Success", body = schema::PositionsWritten)))]
pub async fn set_positions(req: &mut Request, depot: &mut Depot) -> Result<Reply, ApiError> {
    write(req, depot, Command::set_positions).await
}

#[endpoint(tags("recycle bin"), security(("bearer" = [])), responses(schema::ReadErrors, (status_code = 200, description = "Success", body = schema::Bin)))]
pub async fn list_bin(req: &mut Request, depot: &mut Depot) -> Result<Reply, ApiError> {
    no_query(req)?;
    let account = caller(depot).account;
    let entries = from_store(&state(depot), move |read| read.bin(&account)).await?;
    Ok(Reply::json(
        StatusCode::OK,
        &json!({"ok": true, "entries": entries}),
    ))
}

#[endpoint(tags("recycle bin"), security(("bearer" = [])), parameters(("id" = String, Path, description = "The bin entry's id")), responses(schema::WriteErrors, (status_code = 200, description = "Success", body = schema::Restored)))]
pub async fn restore(req: &mut Request, depot: &mut Depot) -> Result<Reply, ApiError> {
    let entry = BinEntryId::named(id_param(req));
    write_without_body(req, depot, Command::RestoreEntry(entry)).await
}

#[endpoint(tags("recycle bin"), security(("bearer" = [])), responses(schema::WriteErrors, (status_code = 200, description = "Success", body = schema::Purged)))]
pub async fn purge(req: &mut Request, depot: &mut Depot) -> Result<Reply, ApiError> {
    write_without_body(req, depot, Command::Purge).await
}
