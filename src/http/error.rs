//! Everything that can go wrong answering a request, and the one place errors become HTTP:
//! a status, the contract's envelope `{ok:false, error, code, ...}` and the headers that go
//! with it. `code` comes from one table ([`ErrorCode`]), which the discovery document lists
//! and the OpenAPI error schema names as an enum, so clients never match English text.

use bytes::Bytes;
use read_model::ReadError;
use salvo::http::{HeaderValue, StatusCode, header};
use salvo::oapi::{Components, EndpointOutRegister, Operation};
use salvo::prelude::*;
use serde_json::{Value, json};
use write_model::WriteError;

pub use super::error_code::ErrorCode;

/// Everything that can go wrong answering a request.
#[derive(Debug)]
pub enum ApiError {
    Write(WriteError),
    Read(ReadError),
    NotFound,
    /// 422 on a query parameter: an unknown one, or a value it does not take.
    Query {
        field: String,
        message: String,
        unknown: bool,
    },
    /// 413: the body is over the cap.
    BodyTooLarge,
    /// 408: the body did not arrive in time.
    RequestTimeout,
    /// 503: the process-wide budget for bytes held in bodies has no room for this one.
    BodyBudget,
    /// 429 from an address throttle (bad keys, keyless discovery).
    Throttled {
        retry_after: u64,
        message: &'static str,
    },
    /// 429: the account has its maximum of open sockets.
    TooManySockets,
    /// 401: the key.
    Unauthorized(&'static str),
    /// 401: the socket's ticket.
    BadTicket,
    /// 403: a read key asked for a write.
    ReadOnlyKey,
    /// 403: a calendar key asked for anything but the calendar feed.
    CalendarKey,
    /// 403: a key in the query string, where none is taken.
    KeyInQuery(&'static str),
    /// 405: the path exists, not under this method.
    MethodNotAllowed,
    /// 400 for a request that is not what the route takes.
    BadRequest(&'static str),
    /// 429: the key's daily allowance is spent until `resets_at` (ms).
    AllowanceSpent {
        resets_at: i64,
    },
    /// 409 from an undo whose step could not land.
    UndoConflict {
        field: String,
        current: Value,
    },
    /// 422: a Trello board with things that do not fit, imported without `lenient` (or that
    /// leaving out cannot mend); nothing was imported. Each problem names its card and list;
    /// the first hundred are listed, the rest counted.
    ImportRefused(write_model::command::trello::Problems),
    /// 400: the `Idempotency-Key` header.
    BadIdempotencyKey(&'static str),
    /// 409: the idempotency key's first request is still running.
    IdempotencyKeyInFlight,
    /// 422: the idempotency key was first used for another request.
    IdempotencyKeyReused,
    /// A refusal remembered under an idempotency key, answered again as it was sent.
    Replayed {
        status: u16,
        body: String,
    },
}

impl From<WriteError> for ApiError {
    fn from(e: WriteError) -> Self {
        ApiError::Write(e)
    }
}

impl From<ReadError> for ApiError {
    fn from(e: ReadError) -> Self {
        ApiError::Read(e)
    }
}

/// Seconds a client waits before retrying a write the service could not take now.
const RETRY_WRITES_AFTER: u64 = 1;

impl ApiError {
    pub fn code(&self) -> ErrorCode {
        match self {
            ApiError::NotFound => ErrorCode::NotFound,
            ApiError::Query { unknown: true, .. } => ErrorCode::UnknownField,
            ApiError::Query { .. } => ErrorCode::InvalidValue,
            ApiError::BodyTooLarge => ErrorCode::BodyTooLarge,
            ApiError::RequestTimeout => ErrorCode::RequestTimeout,
            ApiError::BodyBudget => ErrorCode::BodyBudget,
            ApiError::Throttled { .. } => ErrorCode::RateLimited,
            ApiError::TooManySockets => ErrorCode::TooManySockets,
            ApiError::Unauthorized(_) => ErrorCode::BadKey,
            ApiError::BadTicket => ErrorCode::BadTicket,
            ApiError::ReadOnlyKey => ErrorCode::ReadOnlyKey,
            ApiError::CalendarKey => ErrorCode::CalendarKey,
            ApiError::KeyInQuery(_) => ErrorCode::KeyInQuery,
            ApiError::MethodNotAllowed => ErrorCode::MethodNotAllowed,
            ApiError::BadRequest(_) => ErrorCode::BadRequest,
            ApiError::AllowanceSpent { .. } => ErrorCode::AllowanceExhausted,
            ApiError::UndoConflict { .. } => ErrorCode::Conflict,
            ApiError::ImportRefused(_) => ErrorCode::InvalidValue,
            ApiError::Read(_) => ErrorCode::Internal,
            ApiError::BadIdempotencyKey(_) => ErrorCode::BadIdempotencyKey,
            ApiError::IdempotencyKeyInFlight => ErrorCode::IdempotencyKeyInFlight,
            ApiError::IdempotencyKeyReused => ErrorCode::IdempotencyKeyReused,
            ApiError::Replayed { body, .. } => replayed_code(body),
            ApiError::Write(e) => write_code(e),
        }
    }
}

/// The code of a write model error.
fn write_code(e: &WriteError) -> ErrorCode {
    match e {
        WriteError::BadJson(_) => ErrorCode::InvalidJson,
        WriteError::DuplicateKey { .. } => ErrorCode::DuplicateKey,
        WriteError::TooWide { .. } => ErrorCode::ObjectTooWide,
        WriteError::NotFound => ErrorCode::NotFound,
        WriteError::Conflict { .. } => ErrorCode::Conflict,
        WriteError::StorageFull => ErrorCode::StorageFull,
        WriteError::Invalid {
            accepted: Some(_), ..
        } => ErrorCode::UnknownField,
        WriteError::Invalid { .. } => ErrorCode::InvalidValue,
        WriteError::LimitReached { .. } => ErrorCode::LimitReached,
        WriteError::Overloaded => ErrorCode::Overloaded,
        WriteError::Unavailable(_) => ErrorCode::ReadOnly,
        WriteError::WriterStopped(_) => ErrorCode::WriterStopped,
        WriteError::Internal(_) => ErrorCode::Internal,
    }
}

/// The code a remembered refusal was sent with.
fn replayed_code(body: &str) -> ErrorCode {
    let code = serde_json::from_str::<Value>(body).ok();
    let code = code.as_ref().and_then(|b| b["code"].as_str());
    ErrorCode::TABLE
        .iter()
        .map(|(c, _, _)| *c)
        .find(|c| Some(c.as_str()) == code)
        .unwrap_or(ErrorCode::Internal)
}

/// A refusal of the writer as [`ApiError::render`] sends it, status and envelope, with the
/// `current` of an id clash given; `None` for a fault of the service (5xx). What an
/// idempotency key remembers.
pub fn write_refusal(e: &WriteError, current: Option<Value>) -> Option<(u16, Value)> {
    let code = write_code(e);
    let status = ErrorCode::TABLE
        .iter()
        .find(|(c, _, _)| *c == code)
        .map_or(500, |(_, status, _)| *status);
    if status >= 500 {
        return None;
    }
    let mut body = write_body(e);
    if let Some(current) = current {
        body["current"] = current;
    }
    body["ok"] = json!(false);
    body["code"] = json!(code.as_str());
    Some((status, body))
}

impl ApiError {
    /// Whether the error is the service's (5xx), not the request's.
    pub fn is_fault(&self) -> bool {
        self.status().is_server_error()
    }

    fn status(&self) -> StatusCode {
        if let ApiError::Replayed { status, .. } = self {
            return StatusCode::from_u16(*status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        }
        let code = self.code();
        let status = ErrorCode::TABLE
            .iter()
            .find(|(c, _, _)| *c == code)
            .map_or(500, |(_, status, _)| *status);
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }

    /// The body's fields beyond `ok`, `error` and `code`.
    fn body(&self) -> Value {
        let fail = |msg: &str| json!({"error": msg});
        let mut body = match self {
            ApiError::NotFound | ApiError::Write(WriteError::NotFound) => fail("not found"),
            ApiError::Query { field, message, .. } => json!({"error": message, "field": field}),
            ApiError::BodyTooLarge => {
                json!({"error": "the request body is too large", "limit": "body-bytes"})
            }
            ApiError::RequestTimeout => {
                json!({"error": "the request body did not arrive in time; the connection is closed", "limit": "body-seconds"})
            }
            ApiError::BodyBudget => json!({
                "error": "the service holds as many request bodies as it takes right now; nothing was read, retry after a moment",
                "limit": "body-budget-bytes",
            }),
            ApiError::Throttled {
                message,
                retry_after,
            } => {
                let resets_at = write_model::clock::wall_ms() + (*retry_after as i64) * 1000;
                json!({"error": message, "resetsAt": resets_at})
            }
            ApiError::TooManySockets => fail("the account has its maximum of open sockets"),
            ApiError::Unauthorized(msg) => fail(msg),
            ApiError::BadTicket => fail("the ticket is unknown, used or expired"),
            ApiError::ReadOnlyKey => fail(
                "this key has read access only: it may read, and open the live socket, but not write",
            ),
            ApiError::CalendarKey => fail(
                "this is a calendar key: it fetches the calendar feed (GET /calendar.ics) and nothing else",
            ),
            ApiError::KeyInQuery(msg) => fail(msg),
            ApiError::MethodNotAllowed => fail("this route does not take that method"),
            ApiError::BadRequest(msg) => fail(msg),
            ApiError::AllowanceSpent { resets_at } => {
                json!({"error": "the key's daily allowance is used up", "resetsAt": resets_at})
            }
            ApiError::UndoConflict { field, current } => json!({
                "error": format!("`{field}` changed since; the step is dropped"),
                "field": field, "current": current,
            }),
            ApiError::ImportRefused(problems) => {
                let n = problems.total();
                json!({
                    "error": format!(
                        "nothing was imported: {n} {} in this Trello board do{} not fit; \
                         `problems` names each, or import with lenient=true to leave them out",
                        if n == 1 { "thing" } else { "things" },
                        if n == 1 { "es" } else { "" },
                    ),
                    "problems": problems.iter().map(crate::transfer::problem_json).collect::<Vec<_>>(),
                    "more": problems.more,
                })
            }
            ApiError::Read(e) => {
                tracing::error!(error = %e, "a read failed");
                fail("internal error")
            }
            ApiError::BadIdempotencyKey(msg) => json!({"error": msg, "field": "Idempotency-Key"}),
            ApiError::IdempotencyKeyInFlight => json!({
                "error": "a request with this Idempotency-Key is still running; retry it after a moment",
                "field": "Idempotency-Key",
            }),
            ApiError::IdempotencyKeyReused => json!({
                "error": "this Idempotency-Key was first used for another request (method, path or body); nothing ran",
                "field": "Idempotency-Key",
            }),
            ApiError::Replayed { body, .. } => {
                serde_json::from_str(body).unwrap_or_else(|_| fail("internal error"))
            }
            ApiError::Write(e) => write_body(e),
        };
        body["ok"] = json!(false);
        body["code"] = json!(self.code().as_str());
        body
    }

    /// Seconds to wait before retrying, for the replies that say so.
    fn retry_after(&self) -> Option<u64> {
        match self {
            ApiError::Throttled { retry_after, .. } => Some(*retry_after),
            ApiError::TooManySockets => Some(1),
            ApiError::BodyBudget | ApiError::IdempotencyKeyInFlight => Some(RETRY_WRITES_AFTER),
            ApiError::AllowanceSpent { resets_at } => {
                Some(((resets_at - write_model::clock::wall_ms()).max(1000) as u64).div_ceil(1000))
            }
            ApiError::Write(
                WriteError::Overloaded | WriteError::Unavailable(_) | WriteError::WriterStopped(_),
            ) => Some(RETRY_WRITES_AFTER),
            _ => None,
        }
    }

    /// The envelope `{ok:false, error, code, ...}` this error answers with.
    pub fn envelope(&self) -> Value {
        self.body()
    }

    /// Writes the error into the response: status, headers and the envelope.
    pub fn render(&self, res: &mut Response) {
        if let Some(secs) = self.retry_after() {
            res.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        if matches!(
            self,
            ApiError::BodyTooLarge | ApiError::RequestTimeout | ApiError::BodyBudget
        ) {
            // The rest of the body is not read: the connection cannot carry another request.
            res.headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        let body = match self {
            // Byte for byte as first sent.
            ApiError::Replayed { body, .. } => {
                res.headers_mut()
                    .insert(super::reply::REPLAYED, HeaderValue::from_static("true"));
                Bytes::from(body.clone())
            }
            _ => Bytes::from(self.body().to_string()),
        };
        super::reply::send_chunks(res, self.status(), vec![body]);
    }
}

/// The body of a write model error.
fn write_body(e: &WriteError) -> Value {
    match e {
        WriteError::BadJson(m) => json!({"error": m}),
        WriteError::DuplicateKey { key } => json!({"error": e.to_string(), "field": key}),
        WriteError::TooWide { max } => json!({"error": e.to_string(), "limit": max}),
        WriteError::NotFound => json!({"error": "not found"}),
        WriteError::Conflict {
            message,
            field,
            current,
            index,
            ..
        } => {
            let mut body = json!({"error": message, "field": field, "current": current});
            if let Some(i) = index {
                body["index"] = json!(i);
            }
            body
        }
        WriteError::StorageFull => json!({"error": e.to_string(), "limit": "storage-bytes"}),
        WriteError::Invalid {
            message,
            field,
            accepted,
            index,
        } => {
            let mut body = json!({"error": message});
            if let Some(f) = field {
                body["field"] = json!(f);
            }
            if let Some(a) = accepted {
                body["accepted"] = json!(a);
            }
            if let Some(i) = index {
                body["index"] = json!(i);
            }
            body
        }
        WriteError::LimitReached {
            message,
            field,
            index,
        } => {
            let mut body = json!({"error": message});
            if let Some(f) = field {
                body["field"] = json!(f);
            }
            if let Some(i) = index {
                body["index"] = json!(i);
            }
            body
        }
        WriteError::Overloaded => {
            json!({"error": "the service is taking too many writes right now; nothing was written, retry after a moment"})
        }
        WriteError::Unavailable(cause) => {
            tracing::error!(%cause, "the store cannot take writes");
            json!({"error": "the service cannot take writes right now"})
        }
        WriteError::WriterStopped(_) => {
            json!({"error": "the service's writer has stopped; no write can land until it restarts"})
        }
        WriteError::Internal(cause) => {
            tracing::error!(%cause, "internal error");
            json!({"error": "internal error"})
        }
    }
}

#[async_trait]
impl Writer for ApiError {
    async fn write(self, _req: &mut Request, _depot: &mut Depot, res: &mut Response) {
        self.render(res);
    }
}

/// The error statuses each route can answer are listed by its endpoint, from the shared
/// sets of [`super::schema::responses`]; the error type adds none of its own.
impl EndpointOutRegister for ApiError {
    fn register(_components: &mut Components, _operation: &mut Operation) {}
}
