//! What sync clients live on: the change feed, the export, and the live socket's tickets.

use read_model::Completed;
use salvo::http::{HeaderValue, StatusCode, header};
use salvo::prelude::*;

use super::common::{blocking, check_query, conditional, no_query, query_string};
use super::query::Query;
use super::reply::{ApiError, Reply};
use super::schema;
use super::{caller, state};

#[endpoint(tags("sync"), security(("bearer" = [])), parameters(("since" = Option<u64>, Query, description = "Changes at or after this ms stamp (inclusive); omit for everything"), ("completed" = Option<schema::CompletedView>, Query, description = "`recent` (default), `all` or `none`"), ("manifest" = Option<schema::Manifest>, Query, description = "`changed`: `taskIds` covers only the projects in the reply"), ("holding" = Option<u64>, Query, description = "Live cards the client holds; equal and nothing moved gives `{unchanged, now}`")), responses(schema::ReadErrors, (status_code = 200, description = "Success", body = schema::ChangesReply), (status_code = 304, description = "`If-None-Match` holds the current weak ETag: no body")))]
pub async fn changes(req: &mut Request, depot: &mut Depot) -> Result<Reply, ApiError> {
    let query = Query::of(req).changes()?;
    let view = query.view;
    let (state, caller) = (state(depot), caller(depot));
    let etag = state.read.etag(
        &caller.account,
        view,
        &format!("changes?{}", query_string(req)),
    )?;
    let encoding = super::encoding::negotiate(req);
    conditional(req, etag, || {
        Ok(state.read.changes(&caller.account, &query, encoding)?)
    })
}

/// `GET /export`: the whole account as a file. `json` (the default) is the whole-account
/// document with every finished card, which imports back; `csv` and `ndjson` are one row per
/// card, written out while sent.
#[endpoint(tags("sync"), security(("bearer" = [])), parameters(("format" = Option<schema::ExportFormatName>, Query, description = "`json` (default): the whole account, which imports back; `csv` (RFC 4180, a header row) or `ndjson`: one row per card, finished ones included, the bin not")), responses(schema::ReadErrors, (status_code = 200, description = "The file, as an attachment", content(
    ("application/json" = schema::AccountDocument),
    ("text/csv" = String),
    ("application/x-ndjson" = String),
)), (status_code = 304, description = "`If-None-Match` holds the current weak ETag: no body")))]
pub async fn export(req: &mut Request, depot: &mut Depot) -> Result<Reply, ApiError> {
    let format = Query::of(req).export_format()?;
    let (state, caller) = (state(depot), caller(depot));
    let tag = match format.rows() {
        None => "export".to_owned(),
        Some(rows) => format!("export?format={}", rows.extension()),
    };
    let etag = state.read.etag(&caller.account, Completed::All, &tag)?;
    let (reply, extension) = match format.rows() {
        None => {
            let reply = conditional(req, etag, || {
                Ok(state
                    .read
                    .projects(&caller.account, Completed::All, None)?
                    .into())
            })?;
            (reply, "json")
        }
        Some(rows) => {
            let reply = conditional(req, etag, || {
                Ok(read_model::Body::Rows(
                    state.read.export_rows(&caller.account, rows)?,
                ))
            })?;
            let reply = reply.with_header(
                header::CONTENT_TYPE,
                HeaderValue::from_static(rows.content_type()),
            );
            (reply, rows.extension())
        }
    };
    let date = jiff::Timestamp::now().strftime("%Y-%m-%d");
    let disposition = format!(
        "attachment; filename=\"workboard-{}-{date}.{extension}\"",
        caller.account
    );
    Ok(match HeaderValue::from_str(&disposition) {
        Ok(v) => reply.with_header(header::CONTENT_DISPOSITION, v),
        Err(_) => reply,
    })
}

#[endpoint(tags("sync"), security(("bearer" = [])), responses(schema::ReadErrors, (status_code = 200, description = "Success", body = schema::Ticket)))]
pub async fn issue_ticket(req: &mut Request, depot: &mut Depot) -> Result<Reply, ApiError> {
    no_query(req)?;
    let (state, caller) = (state(depot), caller(depot));
    let hub = state.hub.clone();
    let issued = blocking(move || {
        hub.issue_ticket(
            &caller.account,
            &caller.key_id,
            write_model::clock::wall_ms(),
            caller.expires_at,
        )
    })
    .await?;
    match issued {
        // The ticket opens a socket: no cache keeps it.
        Some((ticket, expires_at)) => Ok(Reply::json(
            StatusCode::OK,
            &serde_json::json!({"ok": true, "ticket": ticket, "expiresAt": expires_at}),
        )
        .with_header(header::CACHE_CONTROL, HeaderValue::from_static("no-store"))),
        None => Err(ApiError::TooManySockets),
    }
}

/// The change socket. It authenticates by its ticket (browsers cannot set headers on a
/// WebSocket); a bad, used or expired ticket answers 401 before the upgrade.
#[endpoint(tags("sync"), parameters(("ticket" = String, Query, description = "A ticket from `POST /live/ticket`: single use, 60 seconds")), responses(
    schema::SocketErrors,
    (status_code = 101, description = "WebSocket: text frames `{\"type\":\"changed\",\"at\":ms}`; pings every 30 s; closes 4401 when the key is revoked or expires"),
))]
pub async fn socket(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<(), ApiError> {
    let state = state(depot);
    check_query(req, &["ticket"])?;
    let ticket = req.queries().get("ticket").cloned().unwrap_or_default();
    let now = write_model::clock::wall_ms();
    let (hub, checked) = (state.hub.clone(), ticket.clone());
    if !blocking(move || hub.ticket_is_good(&checked, now)).await? {
        return Err(ApiError::BadTicket);
    }
    let upgrading = req
        .headers()
        .get(salvo::http::header::UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("websocket"));
    if !upgrading {
        return Err(ApiError::BadRequest("this route takes a WebSocket upgrade"));
    }
    let hub = state.hub.clone();
    let Some((account, key_id)) = blocking(move || hub.redeem(&ticket, now)).await? else {
        return Err(ApiError::BadTicket);
    };
    let Some(subscription) = state.hub.subscribe(&account, &key_id) else {
        return Err(ApiError::TooManySockets);
    };
    let upgrade = salvo::websocket::WebSocketUpgrade::new()
        .max_frame_size(64 * 1024)
        .max_message_size(64 * 1024);
    if let Err(e) = upgrade
        .upgrade(req, res, move |ws| {
            crate::live::serve_socket(ws, subscription)
        })
        .await
    {
        res.render(e);
    }
    Ok(())
}
