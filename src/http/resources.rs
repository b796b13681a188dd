//! Projects, columns and tasks: each handler checks its query, reads its body once, turns it
//! into a command, waits for the writer, and answers from the read model.

use bytes::Bytes;
use read_model::Completed;
use salvo::http::StatusCode;
use salvo::prelude::*;
use write_model::command::{column, project, task};
use write_model::records::Kind;
use write_model::{Command, Outcome, Request as WriteRequest};

use super::reply::{ApiError, Reply, send};
use super::{caller, state};
use crate::auth::Caller;
use crate::state::AppState;

/// Refuses query parameters the route does not take (contract: 422 naming it).
pub fn check_query(req: &Request, accepted: &[&str]) -> Result<(), ApiError> {
    match req
        .queries()
        .keys()
        .find(|k| !accepted.contains(&k.as_str()))
    {
        Some(unknown) => Err(ApiError::Query {
            field: unknown.clone(),
            message: format!(
                "unknown query parameter `{unknown}`; this route takes: {}",
                accepted.join(", ")
            ),
        }),
        None => Ok(()),
    }
}

pub fn no_query(req: &Request) -> Result<(), ApiError> {
    check_query(req, &[])
}

fn completed(req: &Request) -> Result<Completed, ApiError> {
    match req.queries().get("completed") {
        None => Ok(Completed::None),
        Some(v) => Completed::parse(v).ok_or_else(|| ApiError::Query {
            field: "completed".into(),
            message: "`completed` must be `none`, `recent` or `all`".into(),
        }),
    }
}

/// The request body, at most the body cap.
async fn body(req: &mut Request, state: &AppState) -> Result<Bytes, ApiError> {
    req.payload_with_max_size(state.limits.body_bytes)
        .await
        .cloned()
        .map_err(|_| ApiError::BodyTooLarge)
}

fn id_param(req: &Request) -> String {
    req.param::<String>("id").unwrap_or_default()
}

fn request(caller: &Caller, command: Command) -> WriteRequest {
    WriteRequest {
        account: Some(caller.account.clone()),
        key_id: Some(caller.key_id.clone()),
        command,
    }
}

/// The reply to a write, with the record's read shape taken from the read model.
fn write_reply(state: &AppState, caller: &Caller, outcome: Outcome) -> Result<Reply, ApiError> {
    let account = &caller.account;
    let shaped = |kind: Kind, id: &str| -> Result<(&'static str, Option<Bytes>), ApiError> {
        Ok(match kind {
            Kind::Project => ("project", state.read.project_json(account, id)?),
            Kind::Column => ("column", state.read.column_json(account, id)?),
            Kind::Task => ("task", state.read.task_json(account, id)?),
        })
    };
    Ok(match outcome {
        Outcome::Created { kind, id } | Outcome::Existing { kind, id } => {
            let (name, record) = shaped(kind, &id)?;
            let id_json = serde_json::to_string(&id).unwrap_or_default();
            Reply::record(
                StatusCode::CREATED,
                &format!("\"id\":{id_json},"),
                name,
                record,
            )
        }
        Outcome::Updated { kind, id } => {
            let (name, record) = shaped(kind, &id)?;
            Reply::record(StatusCode::OK, "", name, record)
        }
        Outcome::Deleted { id, count } => Reply::json(
            StatusCode::OK,
            &serde_json::json!({"ok": true, "id": id, "deleted": count}),
        ),
        other => {
            return Err(ApiError::Write(write_model::WriteError::Internal(format!(
                "unexpected outcome {other:?}"
            ))));
        }
    })
}

/// Runs a write: parse the body into a command, submit it, shape the reply.
async fn write(
    req: &mut Request,
    depot: &Depot,
    parse: impl FnOnce(&[u8], &write_model::Limits) -> Result<Command, write_model::WriteError>,
) -> Result<Reply, ApiError> {
    let state = state(depot);
    let caller = caller(depot);
    no_query(req)?;
    let bytes = body(req, &state).await?;
    let command = parse(&bytes, &state.limits)?;
    let outcome = state.submit(request(&caller, command)).await?;
    let existing = matches!(outcome, Outcome::Existing { .. });
    let mut reply = write_reply(&state, &caller, outcome)?;
    if existing {
        reply.status = StatusCode::OK;
    }
    Ok(reply)
}

/// Runs a body-less write (DELETE).
async fn write_without_body(
    req: &mut Request,
    depot: &Depot,
    command: Command,
) -> Result<Reply, ApiError> {
    let state = state(depot);
    let caller = caller(depot);
    no_query(req)?;
    let outcome = state.submit(request(&caller, command)).await?;
    write_reply(&state, &caller, outcome)
}

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
        match state.read.project(&caller.account, &id_param(req), view)? {
            Some(chunks) => Ok(Reply::chunks(StatusCode::OK, chunks)),
            None => Err(ApiError::NotFound),
        }
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

#[handler]
pub async fn create_task(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    send(res, write(req, depot, task::CreateTask::parse).await);
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
