//! A card's checklist, tags and comments; bulk reorder; the recycle bin and purge.

use salvo::http::StatusCode;
use salvo::prelude::*;
use serde_json::json;
use write_model::Command;
use write_model::command::bulk;
use write_model::command::items::{ItemCommand, ItemKind};

use super::common::{id_param, no_query, write, write_without_body};
use super::reply::{ApiError, Reply, send};
use super::{caller, state};

#[handler]
pub async fn add_tag(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let id = id_param(req);
    send(
        res,
        write(req, depot, |b, l| ItemCommand::parse_tag(id, b, l)).await,
    );
}

#[handler]
pub async fn add_comment(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let id = id_param(req);
    send(
        res,
        write(req, depot, |b, l| ItemCommand::parse_comment(id, b, l)).await,
    );
}

#[handler]
pub async fn add_checklist(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let id = id_param(req);
    send(
        res,
        write(req, depot, |b, l| ItemCommand::parse_checklist(id, b, l)).await,
    );
}

#[handler]
pub async fn order_checklist(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let id = id_param(req);
    send(
        res,
        write(req, depot, |b, _| ItemCommand::parse_order(id, b)).await,
    );
}

#[handler]
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

#[handler]
pub async fn delete_checklist_item(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    delete_item(req, depot, res, ItemKind::Checklist).await;
}

#[handler]
pub async fn delete_tag(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    delete_item(req, depot, res, ItemKind::Tag).await;
}

#[handler]
pub async fn delete_comment(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    delete_item(req, depot, res, ItemKind::Comment).await;
}

#[handler]
pub async fn set_positions(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    send(res, write(req, depot, bulk::parse_positions).await);
}

#[handler]
pub async fn list_bin(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let result = (|| {
        no_query(req)?;
        let entries = state(depot).read.bin(&caller(depot).account)?;
        Ok::<_, ApiError>(Reply::json(
            StatusCode::OK,
            &json!({"ok": true, "entries": entries}),
        ))
    })();
    send(res, result);
}

#[handler]
pub async fn restore(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let entry = id_param(req);
    send(
        res,
        write_without_body(req, depot, Command::RestoreEntry(entry)).await,
    );
}

#[handler]
pub async fn purge(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    send(res, write_without_body(req, depot, Command::Purge).await);
}
