//! `POST /import`: an import file as the body, under the rules of `workboard import`: all or
//! nothing, the storage limit applies, one write. `from=workboard` (the default) takes this
//! service's export; `from=trello` one board of Trello's JSON export, as a new project. What
//! a Trello import leaves out, or refuses, is listed up to a hundred and counted past that.

use salvo::http::StatusCode;
use salvo::prelude::*;
use serde_json::json;
use write_model::command::trello::TrelloError;
use write_model::{Outcome, WriteError};

use super::common::{body, count_write, request};
use super::query::Query;
use super::reply::{ApiError, Reply};
use super::schema;
use super::{caller, state};
use crate::error::Error;
use crate::transfer::problem_json;

#[endpoint(tags("sync"), security(("bearer" = [])), parameters(
    ("from" = Option<schema::ImportSource>, Query, description = "`workboard` (default): this service's export, ids kept; `trello`: one board of Trello's JSON export, made into one new project with new ids"),
    ("lenient" = Option<bool>, Query, description = "`from=trello` only: leave out what does not fit a limit (listed in `skipped`) instead of refusing the whole file"),
), request_body = schema::ImportFile, responses(schema::WriteErrors, (status_code = 201, description = "Imported whole: what was made, the new projects' ids, and what a lenient import left out", body = schema::Imported)))]
pub async fn import(req: &mut Request, depot: &mut Depot) -> Result<Reply, ApiError> {
    let (state, caller) = (state(depot), caller(depot));
    let result = async {
        let (from, lenient) = Query::of(req).import()?;
        // Held until the import has run (the end of this block): its share of the body budget
        // goes back then.
        let file = body(req, &state, &caller).await?;
        // Reading a large file is work: off the async workers, on one of the parsing threads.
        let (bytes, limits) = (file.bytes(), state.limits.clone());
        let prepared = state
            .bodies
            .off_workers(move || crate::transfer::prepare(&bytes, from, lenient, &limits))
            .await?;
        let (command, skipped) = prepared.map_err(|e| match e {
            Error::Write(e) => ApiError::Write(e),
            Error::Trello(TrelloError::Refused(problems)) => ApiError::ImportRefused(problems),
            not_trello @ Error::Trello(_) => ApiError::Write(WriteError::Invalid {
                message: not_trello.to_string(),
                field: None,
                accepted: None,
                index: None,
            }),
            // `prepare` fails with nothing else.
            other => ApiError::Write(WriteError::Internal(other.to_string())),
        })?;
        let answer =
            super::idempotency::submit(req, depot, &file, request(&caller, command)).await?;
        super::idempotency::answer(depot, answer, |outcome, _| match outcome {
            Outcome::Imported {
                projects,
                columns,
                tasks,
                project_ids,
            } => Ok(Reply::json(
                StatusCode::CREATED,
                &json!({
                    "ok": true,
                    "projects": projects,
                    "columns": columns,
                    "tasks": tasks,
                    "projectIds": project_ids,
                    "skipped": skipped.iter().map(problem_json).collect::<Vec<_>>(),
                    "moreSkipped": skipped.more,
                }),
            )),
            other => Err(ApiError::Write(WriteError::Internal(format!(
                "unexpected outcome {other:?}"
            )))),
        })
    }
    .await;
    count_write(&state, &result);
    result
}
