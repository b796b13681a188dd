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
use super::query::Query;
use super::reply::{ApiError, Reply, send};
use super::schema;
use super::{caller, state};

#[endpoint(tags("projects"), security(("bearer" = [])), parameters(("completed" = Option<schema::CompletedView>, Query, description = "`none` (default), `recent` (finished in the last 30 days) or `all`"), ("name" = Option<String>, Query, description = "Whole project name, case-folded")), responses((status_code = 200, description = "Success", body = schema::AccountDocument), (status_code = 304, description = "`If-None-Match` holds the current weak ETag: no body"), (status_code = 401, description = "Bad, unknown or revoked key", body = schema::ErrorBody), (status_code = 404, description = "Not found, or not the caller's", body = schema::ErrorBody), (status_code = 422, description = "An invalid value, unknown field or exceeded limit", body = schema::ErrorBody), (status_code = 429, description = "Allowance spent (`Retry-After`)", body = schema::ErrorBody), (status_code = 403, description = "No Authorization header: refused at the edge with an HTML page", content_type = "text/html", body = String)))]
pub async fn list_projects(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let result = (|| {
        let (state, caller) = (state(depot), caller(depot));
        let (view, name) = Query::of(req).projects(state.limits.name_chars)?;
        let etag = state.read.etag(&caller.account, view, query_string(req))?;
        conditional(req, etag, || {
            Ok(state
                .read
                .projects(&caller.account, view, name.as_deref())?
                .into())
        })
    })();
    send(res, result);
}

#[endpoint(tags("projects"), security(("bearer" = [])), parameters(("id" = String, Path, description = "The record's id"), ("completed" = Option<schema::CompletedView>, Query, description = "`none` (default), `recent` (finished in the last 30 days) or `all`")), responses((status_code = 200, description = "Success", body = schema::AccountDocument), (status_code = 304, description = "`If-None-Match` holds the current weak ETag: no body"), (status_code = 401, description = "Bad, unknown or revoked key", body = schema::ErrorBody), (status_code = 404, description = "Not found, or not the caller's", body = schema::ErrorBody), (status_code = 422, description = "An invalid value, unknown field or exceeded limit", body = schema::ErrorBody), (status_code = 429, description = "Allowance spent (`Retry-After`)", body = schema::ErrorBody), (status_code = 403, description = "No Authorization header: refused at the edge with an HTML page", content_type = "text/html", body = String)))]
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
                .map(Into::into)
                .ok_or(ApiError::NotFound)
        })
    })();
    send(res, result);
}

#[endpoint(tags("tasks"), security(("bearer" = [])), parameters(("id" = String, Path, description = "The record's id")), responses((status_code = 200, description = "Success", body = schema::TaskReply), (status_code = 401, description = "Bad, unknown or revoked key", body = schema::ErrorBody), (status_code = 404, description = "Not found, or not the caller's", body = schema::ErrorBody), (status_code = 422, description = "An invalid value, unknown field or exceeded limit", body = schema::ErrorBody), (status_code = 429, description = "Allowance spent (`Retry-After`)", body = schema::ErrorBody), (status_code = 403, description = "No Authorization header: refused at the edge with an HTML page", content_type = "text/html", body = String)))]
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

#[endpoint(tags("projects"), security(("bearer" = [])), request_body = schema::ProjectCreate, responses((status_code = 201, description = "Success", body = schema::ProjectWritten), (status_code = 200, description = "A safe retry: the id is in use with the same fields (or the tag exists), nothing changed", body = schema::ProjectWritten), (status_code = 400, description = "The body is not JSON", body = schema::ErrorBody), (status_code = 401, description = "Bad, unknown or revoked key", body = schema::ErrorBody), (status_code = 404, description = "Not found, or not the caller's", body = schema::ErrorBody), (status_code = 409, description = "A guard or an id clash: nothing written", body = schema::ErrorBody), (status_code = 413, description = "Storage full, or the body is over 32 MiB", body = schema::ErrorBody), (status_code = 422, description = "An invalid value, unknown field or exceeded limit", body = schema::ErrorBody), (status_code = 429, description = "Allowance spent (`Retry-After`)", body = schema::ErrorBody), (status_code = 503, description = "The store cannot take writes", body = schema::ErrorBody), (status_code = 403, description = "No Authorization header: refused at the edge with an HTML page", content_type = "text/html", body = String)))]
pub async fn create_project(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    send(res, write(req, depot, project::CreateProject::parse).await);
}

#[endpoint(tags("projects"), security(("bearer" = [])), parameters(("id" = String, Path, description = "The record's id")), request_body = schema::ProjectUpdate, responses((status_code = 200, description = "Success", body = schema::ProjectWritten), (status_code = 400, description = "The body is not JSON", body = schema::ErrorBody), (status_code = 401, description = "Bad, unknown or revoked key", body = schema::ErrorBody), (status_code = 404, description = "Not found, or not the caller's", body = schema::ErrorBody), (status_code = 409, description = "A guard or an id clash: nothing written", body = schema::ErrorBody), (status_code = 413, description = "Storage full, or the body is over 32 MiB", body = schema::ErrorBody), (status_code = 422, description = "An invalid value, unknown field or exceeded limit", body = schema::ErrorBody), (status_code = 429, description = "Allowance spent (`Retry-After`)", body = schema::ErrorBody), (status_code = 503, description = "The store cannot take writes", body = schema::ErrorBody), (status_code = 403, description = "No Authorization header: refused at the edge with an HTML page", content_type = "text/html", body = String)))]
pub async fn update_project(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let id = id_param(req);
    send(
        res,
        write(req, depot, |b, l| project::UpdateProject::parse(id, b, l)).await,
    );
}

#[endpoint(tags("projects"), security(("bearer" = [])), parameters(("id" = String, Path, description = "The record's id")), responses((status_code = 200, description = "Success", body = schema::Deleted), (status_code = 400, description = "The body is not JSON", body = schema::ErrorBody), (status_code = 401, description = "Bad, unknown or revoked key", body = schema::ErrorBody), (status_code = 404, description = "Not found, or not the caller's", body = schema::ErrorBody), (status_code = 409, description = "A guard or an id clash: nothing written", body = schema::ErrorBody), (status_code = 413, description = "Storage full, or the body is over 32 MiB", body = schema::ErrorBody), (status_code = 422, description = "An invalid value, unknown field or exceeded limit", body = schema::ErrorBody), (status_code = 429, description = "Allowance spent (`Retry-After`)", body = schema::ErrorBody), (status_code = 503, description = "The store cannot take writes", body = schema::ErrorBody), (status_code = 403, description = "No Authorization header: refused at the edge with an HTML page", content_type = "text/html", body = String)))]
pub async fn delete_project(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let id = id_param(req);
    send(
        res,
        write_without_body(req, depot, Command::DeleteProject(id)).await,
    );
}

#[endpoint(tags("columns"), security(("bearer" = [])), request_body = schema::ColumnCreate, responses((status_code = 201, description = "Success", body = schema::ColumnWritten), (status_code = 200, description = "A safe retry: the id is in use with the same fields (or the tag exists), nothing changed", body = schema::ColumnWritten), (status_code = 400, description = "The body is not JSON", body = schema::ErrorBody), (status_code = 401, description = "Bad, unknown or revoked key", body = schema::ErrorBody), (status_code = 404, description = "Not found, or not the caller's", body = schema::ErrorBody), (status_code = 409, description = "A guard or an id clash: nothing written", body = schema::ErrorBody), (status_code = 413, description = "Storage full, or the body is over 32 MiB", body = schema::ErrorBody), (status_code = 422, description = "An invalid value, unknown field or exceeded limit", body = schema::ErrorBody), (status_code = 429, description = "Allowance spent (`Retry-After`)", body = schema::ErrorBody), (status_code = 503, description = "The store cannot take writes", body = schema::ErrorBody), (status_code = 403, description = "No Authorization header: refused at the edge with an HTML page", content_type = "text/html", body = String)))]
pub async fn create_column(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    send(res, write(req, depot, column::CreateColumn::parse).await);
}

#[endpoint(tags("columns"), security(("bearer" = [])), parameters(("id" = String, Path, description = "The record's id")), request_body = schema::ColumnUpdate, responses((status_code = 200, description = "Success", body = schema::ColumnWritten), (status_code = 400, description = "The body is not JSON", body = schema::ErrorBody), (status_code = 401, description = "Bad, unknown or revoked key", body = schema::ErrorBody), (status_code = 404, description = "Not found, or not the caller's", body = schema::ErrorBody), (status_code = 409, description = "A guard or an id clash: nothing written", body = schema::ErrorBody), (status_code = 413, description = "Storage full, or the body is over 32 MiB", body = schema::ErrorBody), (status_code = 422, description = "An invalid value, unknown field or exceeded limit", body = schema::ErrorBody), (status_code = 429, description = "Allowance spent (`Retry-After`)", body = schema::ErrorBody), (status_code = 503, description = "The store cannot take writes", body = schema::ErrorBody), (status_code = 403, description = "No Authorization header: refused at the edge with an HTML page", content_type = "text/html", body = String)))]
pub async fn update_column(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let id = id_param(req);
    send(
        res,
        write(req, depot, |b, l| column::UpdateColumn::parse(id, b, l)).await,
    );
}

#[endpoint(tags("columns"), security(("bearer" = [])), parameters(("id" = String, Path, description = "The record's id")), responses((status_code = 200, description = "Success", body = schema::Deleted), (status_code = 400, description = "The body is not JSON", body = schema::ErrorBody), (status_code = 401, description = "Bad, unknown or revoked key", body = schema::ErrorBody), (status_code = 404, description = "Not found, or not the caller's", body = schema::ErrorBody), (status_code = 409, description = "A guard or an id clash: nothing written", body = schema::ErrorBody), (status_code = 413, description = "Storage full, or the body is over 32 MiB", body = schema::ErrorBody), (status_code = 422, description = "An invalid value, unknown field or exceeded limit", body = schema::ErrorBody), (status_code = 429, description = "Allowance spent (`Retry-After`)", body = schema::ErrorBody), (status_code = 503, description = "The store cannot take writes", body = schema::ErrorBody), (status_code = 403, description = "No Authorization header: refused at the edge with an HTML page", content_type = "text/html", body = String)))]
pub async fn delete_column(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let id = id_param(req);
    send(
        res,
        write_without_body(req, depot, Command::DeleteColumn(id)).await,
    );
}

/// `POST /tasks`: one card, or the batch form `{tasks: [...]}`.
#[endpoint(tags("tasks"), security(("bearer" = [])), request_body = schema::TaskCreateBody, responses((status_code = 201, description = "Success", body = schema::TaskCreated), (status_code = 200, description = "A safe retry: the id is in use with the same fields (or the tag exists), nothing changed", body = schema::TaskCreated), (status_code = 400, description = "The body is not JSON", body = schema::ErrorBody), (status_code = 401, description = "Bad, unknown or revoked key", body = schema::ErrorBody), (status_code = 404, description = "Not found, or not the caller's", body = schema::ErrorBody), (status_code = 409, description = "A guard or an id clash: nothing written", body = schema::ErrorBody), (status_code = 413, description = "Storage full, or the body is over 32 MiB", body = schema::ErrorBody), (status_code = 422, description = "An invalid value, unknown field or exceeded limit", body = schema::ErrorBody), (status_code = 429, description = "Allowance spent (`Retry-After`)", body = schema::ErrorBody), (status_code = 503, description = "The store cannot take writes", body = schema::ErrorBody), (status_code = 403, description = "No Authorization header: refused at the edge with an HTML page", content_type = "text/html", body = String)))]
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

#[endpoint(tags("tasks"), security(("bearer" = [])), parameters(("id" = String, Path, description = "The record's id")), request_body = schema::TaskUpdate, responses((status_code = 200, description = "Success", body = schema::TaskReply), (status_code = 400, description = "The body is not JSON", body = schema::ErrorBody), (status_code = 401, description = "Bad, unknown or revoked key", body = schema::ErrorBody), (status_code = 404, description = "Not found, or not the caller's", body = schema::ErrorBody), (status_code = 409, description = "A guard or an id clash: nothing written", body = schema::ErrorBody), (status_code = 413, description = "Storage full, or the body is over 32 MiB", body = schema::ErrorBody), (status_code = 422, description = "An invalid value, unknown field or exceeded limit", body = schema::ErrorBody), (status_code = 429, description = "Allowance spent (`Retry-After`)", body = schema::ErrorBody), (status_code = 503, description = "The store cannot take writes", body = schema::ErrorBody), (status_code = 403, description = "No Authorization header: refused at the edge with an HTML page", content_type = "text/html", body = String)))]
pub async fn update_task(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let id = id_param(req);
    send(
        res,
        write(req, depot, |b, l| task::parse_update(id, b, l)).await,
    );
}

#[endpoint(tags("tasks"), security(("bearer" = [])), parameters(("id" = String, Path, description = "The record's id")), responses((status_code = 200, description = "Success", body = schema::Deleted), (status_code = 400, description = "The body is not JSON", body = schema::ErrorBody), (status_code = 401, description = "Bad, unknown or revoked key", body = schema::ErrorBody), (status_code = 404, description = "Not found, or not the caller's", body = schema::ErrorBody), (status_code = 409, description = "A guard or an id clash: nothing written", body = schema::ErrorBody), (status_code = 413, description = "Storage full, or the body is over 32 MiB", body = schema::ErrorBody), (status_code = 422, description = "An invalid value, unknown field or exceeded limit", body = schema::ErrorBody), (status_code = 429, description = "Allowance spent (`Retry-After`)", body = schema::ErrorBody), (status_code = 503, description = "The store cannot take writes", body = schema::ErrorBody), (status_code = 403, description = "No Authorization header: refused at the edge with an HTML page", content_type = "text/html", body = String)))]
pub async fn delete_task(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let id = id_param(req);
    send(
        res,
        write_without_body(req, depot, Command::DeleteTask(id)).await,
    );
}
