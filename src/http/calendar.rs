//! `GET /calendar.ics`: the caller's cards that have a deadline, as an iCalendar feed a
//! calendar app subscribes to (the document itself is the read model's, `read_model::calendar`).
//!
//! Calendar apps send no header, so this route alone also takes its key as `?key=` (a
//! calendar key only: see `auth`). The feed is a conditional read like the others: its weak
//! tag moves with every write of the account. A feed can run to megabytes (5,000 cards
//! are about 3 MB), so it is written, and compressed when the client takes gzip or zstd, on
//! a blocking thread rather than an async worker.

use read_model::calendar::{FeedRequest, MAX_ALARM_MINUTES};
use read_model::encoded::{Chain, Encoding, Part, THRESHOLD};
use read_model::{Body, Completed};
use salvo::http::StatusCode;
use salvo::http::header::{self, HeaderValue};
use salvo::prelude::*;

use super::common::{fresh, from_store};
use super::query::Query;
use super::reply::{ApiError, Reply};
use super::schema;
use super::shared::Shared;
use super::{caller, state};

const CALENDAR: HeaderValue = HeaderValue::from_static("text/calendar; charset=utf-8");

#[endpoint(tags("calendar"), security(("bearer" = []), ("calendarKey" = [])), parameters(
    ("key" = Option<String>, Query, description = "A calendar key (`access: \"calendar\"`), for apps that cannot send `Authorization`; any other key here answers 403 `key_in_query`, and so does `?key=` on every other route. Never written to the log."),
    ("project" = Option<String>, Query, description = "One board's cards only (its id); an unknown board answers 404"),
    ("completed" = Option<schema::CompletedView>, Query, description = "`none` (default: open cards), `recent` (also cards finished in the last 30 days) or `all`"),
    ("alarm" = Option<u32>, Query, description = "A reminder (`VALARM`, `ACTION:DISPLAY`, `TRIGGER:-PT{n}M`) this many minutes before each deadline, 0 to 10080; anything else answers 422 naming `alarm`"),
), responses(schema::FeedErrors, (status_code = 200, description = "An iCalendar document (RFC 5545), `text/calendar; charset=utf-8`: one `VEVENT` per card with a deadline day (cards on archived boards or in archived lists left out). A day alone is an all-day event (`DTSTART;VALUE=DATE`, `DTEND` the next day); a day and a time is a moment in floating local time (no `TZID`, no `Z`: a deadline has no time zone). `UID` is `<card id>@workboard`, `SUMMARY` the title, `DESCRIPTION` the board and list, `LOCATION` the card's location, `URL` the card in the web client, `DTSTAMP` and `LAST-MODIFIED` the card's stamp; a card repeating `from: deadline` carries its `RRULE`", content(("text/calendar" = String))), (status_code = 304, description = "`If-None-Match` holds the current weak ETag: no body")))]
pub async fn feed(req: &mut Request, depot: &mut Depot) -> Result<Reply, ApiError> {
    let (state, caller) = (state(depot), caller(depot));
    let request = feed_request(req, &state)?;
    if let Some(project) = &request.project
        && !state.read.has_project(&caller.account, project)?
    {
        return Err(ApiError::NotFound);
    }
    // The tag covers what shapes the body (never the key, which does not).
    let tag = format!(
        "calendar.ics?{:?}&{:?}&{:?}&{:?}",
        request.project, request.view, request.alarm_minutes, request.web_base
    );
    let etag = state.read.etag(&caller.account, request.view, &tag)?;
    if fresh(req, &etag) {
        return Ok(Reply::not_modified(etag));
    }
    let encoding = super::encoding::negotiate(req);
    let account = caller.account.clone();
    let body = from_store(&state, move |read| {
        let ics = read.calendar(&account, &request)?;
        Ok(match encoding {
            Encoding::Identity => Body::Ready(vec![ics]),
            _ if ics.len() < THRESHOLD => Body::Ready(vec![ics]),
            _ => Body::Encoded(encoding, Chain(vec![Part::Fresh(ics)]).encode(encoding)),
        })
    })
    .await?;
    Ok(Reply::body(StatusCode::OK, body)
        .with_etag(etag)
        .with_header(header::CONTENT_TYPE, CALENDAR))
}

/// The feed's query: `key` (taken by the hoop), `project`, `completed` and `alarm`.
fn feed_request(req: &Request, state: &Shared) -> Result<FeedRequest, ApiError> {
    let query = Query::of(req);
    query.only(&["key", "project", "completed", "alarm"])?;
    let view = query.completed(Completed::None)?;
    let alarm = match query.whole_number("alarm") {
        Ok(None) => None,
        Ok(Some(n)) if n <= u64::from(MAX_ALARM_MINUTES) => Some(n as u32),
        Ok(Some(_)) | Err(_) => {
            return Err(ApiError::Query {
                unknown: false,
                field: "alarm".into(),
                message: format!(
                    "`alarm` is a whole number of minutes before the deadline, 0 to {MAX_ALARM_MINUTES}"
                ),
            });
        }
    };
    Ok(FeedRequest {
        project: query.get("project").map(str::to_owned),
        view,
        alarm_minutes: alarm,
        web_base: web_base(req, state),
    })
}

/// Where the web client answers, as the client reached this server: the `Host` header (or,
/// under `--trust-proxy`, the proxy's `X-Forwarded-Host` and `X-Forwarded-Proto`). `None`
/// when the host is missing or not a plain host name, so no event links anywhere odd.
fn web_base(req: &Request, state: &Shared) -> Option<String> {
    let first = |name: &str| {
        req.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(',').next())
            .map(str::trim)
    };
    let forwarded = |name| first(name).filter(|_| state.trust_proxy);
    let host = forwarded("x-forwarded-host").or_else(|| first("host"))?;
    let plain = !host.is_empty()
        && host.len() <= 255
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b".-:[]".contains(&b));
    let scheme = match forwarded("x-forwarded-proto") {
        Some(p) if p.eq_ignore_ascii_case("https") => "https",
        _ => "http",
    };
    plain.then(|| format!("{scheme}://{host}/"))
}
