//! A card's checklist, tags and comments; bulk reorder; the recycle bin and purge.

use salvo::http::StatusCode;
use salvo::prelude::*;
use serde_json::json;
use write_model::Command;
use write_model::command::bulk;
use write_model::command::items::{ItemCommand, ItemKind};

use super::common::{from_store, id_param, no_query, write, write_without_body};
use super::reply::{ApiError, Reply, send};
use super::schema;
use super::{caller, state};

#[endpoint(tags("card items"), security(("bearer" = [])), parameters(("id" = String, Path, description = "The record's id")), request_body = schema::TextItemCreate, responses((status_code = 201, description = "Success", body = schema::TaskWritten), (status_code = 200, description = "A safe retry: the id is in use with the same fields (or the tag exists), nothing changed", body = schema::TaskWritten), (status_code = 400, description = "The body is not JSON", body = schema::ErrorBody), (status_code = 401, description = "Bad, unknown or revoked key", body = schema::ErrorBody), (status_code = 404, description = "Not found, or not the caller's", body = schema::ErrorBody), (status_code = 409, description = "A guard or an id clash: nothing written", body = schema::ErrorBody), (status_code = 413, description = "Storage full, or the body is over 32 MiB", body = schema::ErrorBody), (status_code = 422, description = "An invalid value, unknown field or exceeded limit", body = schema::ErrorBody), (status_code = 429, description = "Allowance spent (`Retry-After`)", body = schema::ErrorBody), (status_code = 503, description = "The store cannot take writes", body = schema::ErrorBody), (status_code = 403, description = "No Authorization header: refused at the edge with an HTML page", content_type = "text/html", body = String)))]
pub async fn add_tag(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let id = id_param(req);
    send(
        res,
        write(req, depot, |b, l| ItemCommand::parse_tag(id, b, l)).await,
    );
}

#[endpoint(tags("card items"), security(("bearer" = [])), parameters(("id" = String, Path, description = "The record's id")), request_body = schema::TextItemCreate, responses((status_code = 201, description = "Success", body = schema::TaskWritten), (status_code = 200, description = "A safe retry: the id is in use with the same fields (or the tag exists), nothing changed", body = schema::TaskWritten), (status_code = 400, description = "The body is not JSON", body = schema::ErrorBody), (status_code = 401, description = "Bad, unknown or revoked key", body = schema::ErrorBody), (status_code = 404, description = "Not found, or not the caller's", body = schema::ErrorBody), (status_code = 409, description = "A guard or an id clash: nothing written", body = schema::ErrorBody), (status_code = 413, description = "Storage full, or the body is over 32 MiB", body = schema::ErrorBody), (status_code = 422, description = "An invalid value, unknown field or exceeded limit", body = schema::ErrorBody), (status_code = 429, description = "Allowance spent (`Retry-After`)", body = schema::ErrorBody), (status_code = 503, description = "The store cannot take writes", body = schema::ErrorBody), (status_code = 403, description = "No Authorization header: refused at the edge with an HTML page", content_type = "text/html", body = String)))]
pub async fn add_comment(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let id = id_param(req);
    send(
        res,
        write(req, depot, |b, l| ItemCommand::parse_comment(id, b, l)).await,
    );
}

#[endpoint(tags("card items"), security(("bearer" = [])), parameters(("id" = String, Path, description = "The record's id")), request_body = schema::ChecklistCreate, responses((status_code = 201, description = "Success", body = schema::TaskWritten), (status_code = 200, description = "A safe retry: the id is in use with the same fields (or the tag exists), nothing changed", body = schema::TaskWritten), (status_code = 400, description = "The body is not JSON", body = schema::ErrorBody), (status_code = 401, description = "Bad, unknown or revoked key", body = schema::ErrorBody), (status_code = 404, description = "Not found, or not the caller's", body = schema::ErrorBody), (status_code = 409, description = "A guard or an id clash: nothing written", body = schema::ErrorBody), (status_code = 413, description = "Storage full, or the body is over 32 MiB", body = schema::ErrorBody), (status_code = 422, description = "An invalid value, unknown field or exceeded limit", body = schema::ErrorBody), (status_code = 429, description = "Allowance spent (`Retry-After`)", body = schema::ErrorBody), (status_code = 503, description = "The store cannot take writes", body = schema::ErrorBody), (status_code = 403, description = "No Authorization header: refused at the edge with an HTML page", content_type = "text/html", body = String)))]
pub async fn add_checklist(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let id = id_param(req);
    send(
        res,
        write(req, depot, |b, l| ItemCommand::parse_checklist(id, b, l)).await,
    );
}

#[endpoint(tags("card items"), security(("bearer" = [])), parameters(("id" = String, Path, description = "The record's id")), request_body = schema::ChecklistOrder, responses((status_code = 200, description = "Success", body = schema::TaskReply), (status_code = 400, description = "The body is not JSON", body = schema::ErrorBody), (status_code = 401, description = "Bad, unknown or revoked key", body = schema::ErrorBody), (status_code = 404, description = "Not found, or not the caller's", body = schema::ErrorBody), (status_code = 409, description = "A guard or an id clash: nothing written", body = schema::ErrorBody), (status_code = 413, description = "Storage full, or the body is over 32 MiB", body = schema::ErrorBody), (status_code = 422, description = "An invalid value, unknown field or exceeded limit", body = schema::ErrorBody), (status_code = 429, description = "Allowance spent (`Retry-After`)", body = schema::ErrorBody), (status_code = 503, description = "The store cannot take writes", body = schema::ErrorBody), (status_code = 403, description = "No Authorization header: refused at the edge with an HTML page", content_type = "text/html", body = String)))]
pub async fn order_checklist(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let id = id_param(req);
    send(
        res,
        write(req, depot, |b, _| ItemCommand::parse_order(id, b)).await,
    );
}

#[endpoint(tags("card items"), security(("bearer" = [])), parameters(("id" = String, Path, description = "The record's id")), request_body = schema::ChecklistItemUpdate, responses((status_code = 200, description = "Success", body = schema::ItemWritten), (status_code = 400, description = "The body is not JSON", body = schema::ErrorBody), (status_code = 401, description = "Bad, unknown or revoked key", body = schema::ErrorBody), (status_code = 404, description = "Not found, or not the caller's", body = schema::ErrorBody), (status_code = 409, description = "A guard or an id clash: nothing written", body = schema::ErrorBody), (status_code = 413, description = "Storage full, or the body is over 32 MiB", body = schema::ErrorBody), (status_code = 422, description = "An invalid value, unknown field or exceeded limit", body = schema::ErrorBody), (status_code = 429, description = "Allowance spent (`Retry-After`)", body = schema::ErrorBody), (status_code = 503, description = "The store cannot take writes", body = schema::ErrorBody), (status_code = 403, description = "No Authorization header: refused at the edge with an HTML page", content_type = "text/html", body = String)))]
pub async fn update_checklist_item(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let id = id_param(req);
    send(
        res,
        write(req, depot, |b, l| ItemCommand::parse_item_update(id, b, l)).await,
    );
}

async fn delete_item(req: &mut Request, depot: &Depot, res: &mut Response, kind: ItemKind) {
    let item_id = id_param(req);
    let command = Command::Item(ItemCommand::Delete { kind, item_id });
    send(res, write_without_body(req, depot, command).await);
}

#[endpoint(tags("card items"), security(("bearer" = [])), parameters(("id" = String, Path, description = "The record's id")), responses((status_code = 200, description = "Success", body = schema::Deleted), (status_code = 400, description = "The body is not JSON", body = schema::ErrorBody), (status_code = 401, description = "Bad, unknown or revoked key", body = schema::ErrorBody), (status_code = 404, description = "Not found, or not the caller's", body = schema::ErrorBody), (status_code = 409, description = "A guard or an id clash: nothing written", body = schema::ErrorBody), (status_code = 413, description = "Storage full, or the body is over 32 MiB", body = schema::ErrorBody), (status_code = 422, description = "An invalid value, unknown field or exceeded limit", body = schema::ErrorBody), (status_code = 429, description = "Allowance spent (`Retry-After`)", body = schema::ErrorBody), (status_code = 503, description = "The store cannot take writes", body = schema::ErrorBody), (status_code = 403, description = "No Authorization header: refused at the edge with an HTML page", content_type = "text/html", body = String)))]
pub async fn delete_checklist_item(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    delete_item(req, depot, res, ItemKind::Checklist).await;
}

#[endpoint(tags("card items"), security(("bearer" = [])), parameters(("id" = String, Path, description = "The record's id")), responses((status_code = 200, description = "Success", body = schema::Deleted), (status_code = 400, description = "The body is not JSON", body = schema::ErrorBody), (status_code = 401, description = "Bad, unknown or revoked key", body = schema::ErrorBody), (status_code = 404, description = "Not found, or not the caller's", body = schema::ErrorBody), (status_code = 409, description = "A guard or an id clash: nothing written", body = schema::ErrorBody), (status_code = 413, description = "Storage full, or the body is over 32 MiB", body = schema::ErrorBody), (status_code = 422, description = "An invalid value, unknown field or exceeded limit", body = schema::ErrorBody), (status_code = 429, description = "Allowance spent (`Retry-After`)", body = schema::ErrorBody), (status_code = 503, description = "The store cannot take writes", body = schema::ErrorBody), (status_code = 403, description = "No Authorization header: refused at the edge with an HTML page", content_type = "text/html", body = String)))]
pub async fn delete_tag(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    delete_item(req, depot, res, ItemKind::Tag).await;
}

#[endpoint(tags("card items"), security(("bearer" = [])), parameters(("id" = String, Path, description = "The record's id")), responses((status_code = 200, description = "Success", body = schema::Deleted), (status_code = 400, description = "The body is not JSON", body = schema::ErrorBody), (status_code = 401, description = "Bad, unknown or revoked key", body = schema::ErrorBody), (status_code = 404, description = "Not found, or not the caller's", body = schema::ErrorBody), (status_code = 409, description = "A guard or an id clash: nothing written", body = schema::ErrorBody), (status_code = 413, description = "Storage full, or the body is over 32 MiB", body = schema::ErrorBody), (status_code = 422, description = "An invalid value, unknown field or exceeded limit", body = schema::ErrorBody), (status_code = 429, description = "Allowance spent (`Retry-After`)", body = schema::ErrorBody), (status_code = 503, description = "The store cannot take writes", body = schema::ErrorBody), (status_code = 403, description = "No Authorization header: refused at the edge with an HTML page", content_type = "text/html", body = String)))]
pub async fn delete_comment(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    delete_item(req, depot, res, ItemKind::Comment).await;
}

#[endpoint(tags("tasks"), security(("bearer" = [])), request_body = schema::Positions, responses((status_code = 200, description = "Success", body = schema::PositionsWritten), (status_code = 400, description = "The body is not JSON", body = schema::ErrorBody), (status_code = 401, description = "Bad, unknown or revoked key", body = schema::ErrorBody), (status_code = 404, description = "Not found, or not the caller's", body = schema::ErrorBody), (status_code = 409, description = "A guard or an id clash: nothing written", body = schema::ErrorBody), (status_code = 413, description = "Storage full, or the body is over 32 MiB", body = schema::ErrorBody), (status_code = 422, description = "An invalid value, unknown field or exceeded limit", body = schema::ErrorBody), (status_code = 429, description = "Allowance spent (`Retry-After`)", body = schema::ErrorBody), (status_code = 503, description = "The store cannot take writes", body = schema::ErrorBody), (status_code = 403, description = "No Authorization header: refused at the edge with an HTML page", content_type = "text/html", body = String)))]
pub async fn set_positions(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    send(res, write(req, depot, bulk::parse_positions).await);
}

#[endpoint(tags("recycle bin"), security(("bearer" = [])), responses((status_code = 200, description = "Success", body = schema::Bin), (status_code = 401, description = "Bad, unknown or revoked key", body = schema::ErrorBody), (status_code = 404, description = "Not found, or not the caller's", body = schema::ErrorBody), (status_code = 422, description = "An invalid value, unknown field or exceeded limit", body = schema::ErrorBody), (status_code = 429, description = "Allowance spent (`Retry-After`)", body = schema::ErrorBody), (status_code = 403, description = "No Authorization header: refused at the edge with an HTML page", content_type = "text/html", body = String)))]
pub async fn list_bin(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let result = async {
        no_query(req)?;
        let account = caller(depot).account;
        let entries = from_store(&state(depot), move |read| read.bin(&account)).await?;
        Ok::<_, ApiError>(Reply::json(
            StatusCode::OK,
            &json!({"ok": true, "entries": entries}),
        ))
    };
    send(res, result.await);
}

#[endpoint(tags("recycle bin"), security(("bearer" = [])), parameters(("id" = String, Path, description = "The bin entry's id")), responses((status_code = 200, description = "Success", body = schema::Restored), (status_code = 400, description = "The body is not JSON", body = schema::ErrorBody), (status_code = 401, description = "Bad, unknown or revoked key", body = schema::ErrorBody), (status_code = 404, description = "Not found, or not the caller's", body = schema::ErrorBody), (status_code = 409, description = "A guard or an id clash: nothing written", body = schema::ErrorBody), (status_code = 413, description = "Storage full, or the body is over 32 MiB", body = schema::ErrorBody), (status_code = 422, description = "An invalid value, unknown field or exceeded limit", body = schema::ErrorBody), (status_code = 429, description = "Allowance spent (`Retry-After`)", body = schema::ErrorBody), (status_code = 503, description = "The store cannot take writes", body = schema::ErrorBody), (status_code = 403, description = "No Authorization header: refused at the edge with an HTML page", content_type = "text/html", body = String)))]
pub async fn restore(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let entry = id_param(req);
    send(
        res,
        write_without_body(req, depot, Command::RestoreEntry(entry)).await,
    );
}

#[endpoint(tags("recycle bin"), security(("bearer" = [])), responses((status_code = 200, description = "Success", body = schema::Purged), (status_code = 400, description = "The body is not JSON", body = schema::ErrorBody), (status_code = 401, description = "Bad, unknown or revoked key", body = schema::ErrorBody), (status_code = 404, description = "Not found, or not the caller's", body = schema::ErrorBody), (status_code = 409, description = "A guard or an id clash: nothing written", body = schema::ErrorBody), (status_code = 413, description = "Storage full, or the body is over 32 MiB", body = schema::ErrorBody), (status_code = 422, description = "An invalid value, unknown field or exceeded limit", body = schema::ErrorBody), (status_code = 429, description = "Allowance spent (`Retry-After`)", body = schema::ErrorBody), (status_code = 503, description = "The store cannot take writes", body = schema::ErrorBody), (status_code = 403, description = "No Authorization header: refused at the edge with an HTML page", content_type = "text/html", body = String)))]
pub async fn purge(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    send(res, write_without_body(req, depot, Command::Purge).await);
}
