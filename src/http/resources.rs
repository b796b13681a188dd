//! Projects, columns and tasks: each handler checks its query, reads its body once, turns it
//! into a command, waits for the writer, and answers from the read model.

use salvo::http::StatusCode;
use salvo::prelude::*;
use write_model::Command;
use write_model::command::{bulk, column, project, task};

use super::common::{
    check_query, completed, conditional, id_param, no_query, query_string, write,
    write_without_body,
};
use super::reply::{ApiError, Reply, send};
use super::{caller, state};

#[handler]
pub async fn list_projects(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let result = (|| {
        check_query(req, &["completed", "name"])?;
        let view = completed(req)?;
        let (state, caller) = (state(depot), caller(depot));
        let name = req
            .queries()
            .get("name")
            .map(|n| write_model::values::trim_to(n, state.limits.name_chars));
        let chunks = state
            .read
            .projects(&caller.account, view, name.as_deref())?;
        Ok(Reply::chunks(StatusCode::OK, chunks))
    })();
    send(res, result);
}

#[handler]
pub async fn get_project(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let result = (|| {
        check_query(req, &["completed"])?;
        let view = completed(req)?;
        let (state, caller) = (state(depot), caller(depot));
        let id = id_param(req);
        if !state.read.has_project(&caller.account, &id)? {
            return Err(ApiError::NotFound);
        }
        let etag = state.read.etag(
            &caller.account,
            view,
            &format!("{id}?{}", query_string(req)),
        )?;
        conditional(req, etag, || {
            state
                .read
                .project(&caller.account, &id, view)?
                .ok_or(ApiError::NotFound)
        })
    })();
    send(res, result);
}

#[handler]
pub async fn get_task(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let result = (|| {
        no_query(req)?;
        let (state, caller) = (state(depot), caller(depot));
        match state.read.task_json(&caller.account, &id_param(req))? {
            Some(task) => Ok(Reply::record(StatusCode::OK, "", "task", Some(task))),
            None => Err(ApiError::NotFound),
        }
    })();
    send(res, result);
}

#[handler]
pub async fn create_project(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    send(res, write(req, depot, project::CreateProject::parse).await);
}

#[handler]
pub async fn update_project(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let id = id_param(req);
    send(
        res,
        write(req, depot, |b, l| project::UpdateProject::parse(id, b, l)).await,
    );
}

#[handler]
pub async fn delete_project(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let id = id_param(req);
    send(
        res,
        write_without_body(req, depot, Command::DeleteProject(id)).await,
    );
}

#[handler]
pub async fn create_column(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    send(res, write(req, depot, column::CreateColumn::parse).await);
}

#[handler]
pub async fn update_column(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let id = id_param(req);
    send(
        res,
        write(req, depot, |b, l| column::UpdateColumn::parse(id, b, l)).await,
    );
}

#[handler]
pub async fn delete_column(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let id = id_param(req);
    send(
        res,
        write_without_body(req, depot, Command::DeleteColumn(id)).await,
    );
}

/// `POST /tasks`: one card, or the batch form `{tasks: [...]}`.
#[handler]
pub async fn create_task(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    send(
        res,
        write(req, depot, |b, l| {
            if bulk::is_batch(b) {
                bulk::parse_batch(b, l)
            } else {
                task::CreateTask::parse(b, l)
            }
        })
        .await,
    );
}

#[handler]
pub async fn update_task(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let id = id_param(req);
    send(
        res,
        write(req, depot, |b, l| task::parse_update(id, b, l)).await,
    );
}

#[handler]
pub async fn delete_task(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let id = id_param(req);
    send(
        res,
        write_without_body(req, depot, Command::DeleteTask(id)).await,
    );
}
