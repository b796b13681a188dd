//! Projects, columns and tasks: each handler checks its query, reads its body once, turns it
//! into a command, waits for the writer, and answers from the read model.

use salvo::http::StatusCode;
use salvo::prelude::*;
use write_model::Command;
use write_model::command::{bulk, column, project, task};
use write_model::ids::{ColumnId, ProjectId, TaskId};

use super::common::{
    check_query, completed, conditional, id_param, no_query, query_string, write,
    write_without_body,
};
use super::query::Query;
use super::reply::{ApiError, Reply};
use super::schema;
use super::{caller, state};

#[endpoint(tags("projects"), security(("bearer" = [])), parameters(("completed" = Option<schema::CompletedView>, Query, description = "`none` (default), `recent` (finished in the last 30 days) or `all`"), ("name" = Option<String>, Query, description = "Whole project name, case-folded")), responses(schema::ReadErrors, (status_code = 200, description = "Success", body = schema::AccountDocument), (status_code = 304, description = "`If-None-Match` holds the current weak ETag: no body")))]
pub async fn list_projects(req: &mut Request, depot: &mut Depot) -> Result<Reply, ApiError> {
    let (state, caller) = (state(depot), caller(depot));
    let (view, name) = Query::of(req).projects(state.limits.name_chars)?;
    let etag = state.read.etag(&caller.account, view, query_string(req))?;
    conditional(req, etag, || {
        Ok(state
            .read
            .projects(&caller.account, view, name.as_deref())?
            .into())
    })
}

#[endpoint(tags("projects"), security(("bearer" = [])), parameters(("id" = String, Path, description = "The record's id"), ("completed" = Option<schema::CompletedView>, Query, description = "`none` (default), `recent` (finished in the last 30 days) or `all`")), responses(schema::ReadErrors, (status_code = 200, description = "Success", body = schema::AccountDocument), (status_code = 304, description = "`If-None-Match` holds the current weak ETag: no body")))]
pub async fn get_project(req: &mut Request, depot: &mut Depot) -> Result<Reply, ApiError> {
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
            .map(Into::into)
            .ok_or(ApiError::NotFound)
    })
}

#[endpoint(tags("tasks"), security(("bearer" = [])), parameters(("id" = String, Path, description = "The record's id")), responses(schema::ReadErrors, (status_code = 200, description = "Success", body = schema::TaskReply)))]
pub async fn get_task(req: &mut Request, depot: &mut Depot) -> Result<Reply, ApiError> {
    no_query(req)?;
    let (state, caller) = (state(depot), caller(depot));
    match state.read.task_json(&caller.account, &id_param(req))? {
        Some(task) => Ok(Reply::record(StatusCode::OK, "", "task", Some(task))),
        None => Err(ApiError::NotFound),
    }
}

#[endpoint(tags("projects"), security(("bearer" = [])), request_body = schema::ProjectCreate, responses(schema::WriteErrors, (status_code = 201, description = "Success", body = schema::ProjectWritten), (status_code = 200, description = "A safe retry: the id is in use with the same fields (or the tag exists), nothing changed", body = schema::ProjectWritten)))]
pub async fn create_project(req: &mut Request, depot: &mut Depot) -> Result<Reply, ApiError> {
    write(req, depot, project::CreateProject::parse).await
}

#[endpoint(tags("projects"), security(("bearer" = [])), parameters(("id" = String, Path, description = "The record's id")), request_body = schema::ProjectUpdate, responses(schema::WriteErrors, (status_code = 200, description = "Success", body = schema::ProjectWritten)))]
pub async fn update_project(req: &mut Request, depot: &mut Depot) -> Result<Reply, ApiError> {
    let id = ProjectId::named(id_param(req));
    write(req, depot, |b, l| Command::update_project(id, b, l)).await
}

#[endpoint(tags("projects"), security(("bearer" = [])), parameters(("id" = String, Path, description = "The record's id")), responses(schema::WriteErrors, (status_code = 200, description = "Success", body = schema::Deleted)))]
pub async fn delete_project(req: &mut Request, depot: &mut Depot) -> Result<Reply, ApiError> {
    let id = ProjectId::named(id_param(req));
    write_without_body(req, depot, Command::DeleteProject(id)).await
}

#[endpoint(tags("columns"), security(("bearer" = [])), request_body = schema::ColumnCreate, responses(schema::WriteErrors, (status_code = 201, description = "Success", body = schema::ColumnWritten), (status_code = 200, description = "A safe retry: the id is in use with the same fields (or the tag exists), nothing changed", body = schema::ColumnWritten)))]
pub async fn create_column(req: &mut Request, depot: &mut Depot) -> Result<Reply, ApiError> {
    write(req, depot, column::CreateColumn::parse).await
}

#[endpoint(tags("columns"), security(("bearer" = [])), parameters(("id" = String, Path, description = "The record's id")), request_body = schema::ColumnUpdate, responses(schema::WriteErrors, (status_code = 200, description = "Success", body = schema::ColumnWritten)))]
pub async fn update_column(req: &mut Request, depot: &mut Depot) -> Result<Reply, ApiError> {
    let id = ColumnId::named(id_param(req));
    write(req, depot, |b, l| Command::update_column(id, b, l)).await
}

#[endpoint(tags("columns"), security(("bearer" = [])), parameters(("id" = String, Path, description = "The record's id")), responses(schema::WriteErrors, (status_code = 200, description = "Success", body = schema::Deleted)))]
pub async fn delete_column(req: &mut Request, depot: &mut Depot) -> Result<Reply, ApiError> {
    let id = ColumnId::named(id_param(req));
    write_without_body(req, depot, Command::DeleteColumn(id)).await
}

/// `POST /tasks`: one card, or the batch form `{tasks: [...]}`.
#[endpoint(tags("tasks"), security(("bearer" = [])), request_body = schema::TaskCreateBody, responses(schema::WriteErrors, (status_code = 201, description = "Success", body = schema::TaskCreated), (status_code = 200, description = "A safe retry: the id is in use with the same fields (or the tag exists), nothing changed", body = schema::TaskCreated)))]
pub async fn create_task(req: &mut Request, depot: &mut Depot) -> Result<Reply, ApiError> {
    write(req, depot, |b, l| {
        if bulk::is_batch(b) {
            Command::create_tasks(b, l)
        } else {
            task::CreateTask::parse(b, l)
        }
    })
    .await
}

#[endpoint(tags("tasks"), security(("bearer" = [])), parameters(("id" = String, Path, description = "The record's id")), request_body = schema::TaskUpdate, responses(schema::WriteErrors, (status_code = 200, description = "Success: the card, and `next` when it completed a repeating card", body = schema::TaskUpdated)))]
pub async fn update_task(req: &mut Request, depot: &mut Depot) -> Result<Reply, ApiError> {
    let id = TaskId::named(id_param(req));
    write(req, depot, |b, l| Command::update_task(id, b, l)).await
}

#[endpoint(tags("tasks"), security(("bearer" = [])), parameters(("id" = String, Path, description = "The record's id")), responses(schema::WriteErrors, (status_code = 200, description = "Success", body = schema::Deleted)))]
pub async fn delete_task(req: &mut Request, depot: &mut Depot) -> Result<Reply, ApiError> {
    let id = TaskId::named(id_param(req));
    write_without_body(req, depot, Command::DeleteTask(id)).await
}
