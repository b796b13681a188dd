//! Replies: the JSON envelope, the one place errors become HTTP statuses, and bodies sent as
//! chains of shared buffers (cached fragments are never copied into one buffer) or, for a
//! large changes reply, written out as the connection takes them.

use std::collections::VecDeque;

use bytes::Bytes;
use read_model::{Body, ReadError};
use salvo::http::{HeaderValue, ResBody, StatusCode, header};
use salvo::prelude::*;
use serde_json::{Value, json};
use write_model::WriteError;

/// A successful reply: a status and a body in chunks.
pub struct Reply {
    pub status: StatusCode,
    pub body: Body,
    /// A weak entity tag for conditional reads.
    pub etag: Option<String>,
}

impl Reply {
    /// 304: the client's copy is current; no body.
    pub fn not_modified(etag: String) -> Self {
        Reply {
            status: StatusCode::NOT_MODIFIED,
            body: Body::Ready(Vec::new()),
            etag: Some(etag),
        }
    }

    pub fn with_etag(mut self, etag: String) -> Self {
        self.etag = Some(etag);
        self
    }

    pub fn json(status: StatusCode, value: &Value) -> Self {
        Reply::chunks(status, vec![Bytes::from(value.to_string())])
    }

    pub fn chunks(status: StatusCode, chunks: Vec<Bytes>) -> Self {
        Reply::body(status, Body::Ready(chunks))
    }

    pub fn body(status: StatusCode, body: Body) -> Self {
        Reply {
            status,
            body,
            etag: None,
        }
    }

    /// `{"ok":true,<head>,"<name>":<record>}`: a write reply wrapping a record's read shape.
    pub fn record(status: StatusCode, head: &str, name: &str, record: Option<Bytes>) -> Self {
        let open = format!("{{\"ok\":true,{head}\"{name}\":");
        Reply {
            status,
            body: Body::Ready(vec![
                Bytes::from(open),
                record.unwrap_or_else(|| Bytes::from_static(b"null")),
                Bytes::from_static(b"}"),
            ]),
            etag: None,
        }
    }
}

/// Everything that can go wrong answering a request.
#[derive(Debug)]
pub enum ApiError {
    Write(WriteError),
    Read(ReadError),
    NotFound,
    /// 422 on a query parameter.
    Query {
        field: String,
        message: String,
    },
    /// 413: the body is over the cap.
    BodyTooLarge,
    /// 429 from an address throttle.
    Throttled {
        retry_after: u64,
        message: &'static str,
    },
    /// 401
    Unauthorized(&'static str),
    /// 405: the path exists, not under this method.
    MethodNotAllowed,
    /// 400 for a request that is not what the route takes (a socket route without an upgrade).
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

impl ApiError {
    fn status_and_body(&self) -> (StatusCode, Value) {
        let fail = |msg: &str| json!({"ok": false, "error": msg});
        match self {
            ApiError::NotFound | ApiError::Write(WriteError::NotFound) => {
                (StatusCode::NOT_FOUND, fail("not found"))
            }
            ApiError::Query { field, message } => (
                StatusCode::UNPROCESSABLE_ENTITY,
                json!({"ok": false, "error": message, "field": field}),
            ),
            ApiError::BodyTooLarge => (
                StatusCode::PAYLOAD_TOO_LARGE,
                json!({"ok": false, "error": "the request body is too large", "limit": "body-bytes"}),
            ),
            ApiError::Throttled {
                message,
                retry_after,
            } => {
                let resets_at = write_model::clock::wall_ms() + (*retry_after as i64) * 1000;
                (
                    StatusCode::TOO_MANY_REQUESTS,
                    json!({"ok": false, "error": message, "resetsAt": resets_at}),
                )
            }
            ApiError::Unauthorized(msg) => (StatusCode::UNAUTHORIZED, fail(msg)),
            ApiError::MethodNotAllowed => (
                StatusCode::METHOD_NOT_ALLOWED,
                fail("this route does not take that method"),
            ),
            ApiError::BadRequest(msg) => (StatusCode::BAD_REQUEST, fail(msg)),
            ApiError::AllowanceSpent { resets_at } => (
                StatusCode::TOO_MANY_REQUESTS,
                json!({"ok": false, "error": "the key's daily allowance is used up", "resetsAt": resets_at}),
            ),
            ApiError::UndoConflict { field, current } => (
                StatusCode::CONFLICT,
                json!({"ok": false, "error": format!("`{field}` changed since; the step is dropped"), "field": field, "current": current}),
            ),
            ApiError::Read(e) => {
                tracing::error!(error = %e, "a read failed");
                (StatusCode::INTERNAL_SERVER_ERROR, fail("internal error"))
            }
            ApiError::Write(e) => match e {
                WriteError::BadJson(m) => (StatusCode::BAD_REQUEST, fail(m)),
                WriteError::NotFound => unreachable!("matched above"),
                WriteError::Conflict {
                    message,
                    field,
                    current,
                    index,
                    ..
                } => {
                    let mut body =
                        json!({"ok": false, "error": message, "field": field, "current": current});
                    if let Some(i) = index {
                        body["index"] = json!(i);
                    }
                    (StatusCode::CONFLICT, body)
                }
                WriteError::StorageFull => (
                    StatusCode::PAYLOAD_TOO_LARGE,
                    json!({"ok": false, "error": e.to_string(), "limit": "storage-bytes"}),
                ),
                WriteError::Invalid {
                    message,
                    field,
                    accepted,
                    index,
                } => {
                    let mut body = json!({"ok": false, "error": message});
                    if let Some(f) = field {
                        body["field"] = json!(f);
                    }
                    if let Some(a) = accepted {
                        body["accepted"] = json!(a);
                    }
                    if let Some(i) = index {
                        body["index"] = json!(i);
                    }
                    (StatusCode::UNPROCESSABLE_ENTITY, body)
                }
                WriteError::Unavailable(cause) => {
                    tracing::error!(%cause, "the store cannot take writes");
                    (
                        StatusCode::SERVICE_UNAVAILABLE,
                        fail("the service cannot take writes right now"),
                    )
                }
                WriteError::Internal(cause) => {
                    tracing::error!(%cause, "internal error");
                    (StatusCode::INTERNAL_SERVER_ERROR, fail("internal error"))
                }
            },
        }
    }
}

/// Writes a handler's result into the response.
pub fn send(res: &mut Response, result: Result<Reply, ApiError>) {
    match result {
        Ok(reply) => {
            if let Some(tag) = reply
                .etag
                .as_deref()
                .and_then(|t| HeaderValue::from_str(t).ok())
            {
                res.headers_mut().insert(header::ETAG, tag);
            }
            if reply.status == StatusCode::NOT_MODIFIED {
                res.status_code(StatusCode::NOT_MODIFIED);
                res.replace_body(ResBody::None);
            } else {
                match reply.body {
                    Body::Ready(chunks) => send_chunks(res, reply.status, chunks),
                    Body::Parts(parts) => send_parts(res, reply.status, parts),
                }
            }
        }
        Err(e) => {
            let retry_after = match &e {
                ApiError::Throttled { retry_after, .. } => Some(*retry_after),
                ApiError::AllowanceSpent { resets_at } => Some(
                    ((resets_at - write_model::clock::wall_ms()).max(1000) as u64).div_ceil(1000),
                ),
                _ => None,
            };
            if let Some(secs) = retry_after {
                res.headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from(secs));
            }
            if matches!(e, ApiError::BodyTooLarge) {
                // The rest of the body is not read: the connection cannot carry another request.
                res.headers_mut()
                    .insert(header::CONNECTION, HeaderValue::from_static("close"));
            }
            let (status, body) = e.status_and_body();
            send_chunks(res, status, vec![Bytes::from(body.to_string())]);
        }
    }
}

pub fn send_chunks(res: &mut Response, status: StatusCode, chunks: Vec<Bytes>) {
    res.status_code(status);
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    res.replace_body(ResBody::Chunks(VecDeque::from(chunks)));
}

/// What a reply written out as it is sent may have ready before it streams: a reply that
/// ends within this is sent whole, with its length.
const READY_BEFORE_STREAMING: usize = 256 * 1024;

/// A reply written out while it is sent: the connection pulls the next buffer when it has
/// room for it, so a large reply never sits whole in memory.
pub fn send_parts(
    res: &mut Response,
    status: StatusCode,
    mut parts: impl Iterator<Item = Bytes> + Send + 'static,
) {
    let mut ready = Vec::new();
    let mut size = 0;
    while size < READY_BEFORE_STREAMING {
        match parts.next() {
            Some(part) => {
                size += part.len();
                ready.push(part);
            }
            None => return send_chunks(res, status, ready),
        }
    }
    send_chunks(res, status, Vec::new());
    let rest = ready.into_iter().chain(parts);
    res.stream(futures_util::stream::iter(
        rest.map(Ok::<Bytes, std::convert::Infallible>),
    ));
}

const FORBIDDEN_PAGE: &str = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>403 Forbidden</title></head>\
<body><h1>403 Forbidden</h1><p>Requests to this interface carry an <code>Authorization: Bearer &lt;key&gt;</code> header.</p></body></html>\n";

/// The edge's refusal of a request with no `Authorization` header: HTML, not JSON.
pub fn forbidden(res: &mut Response) {
    res.status_code(StatusCode::FORBIDDEN);
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    res.replace_body(ResBody::Once(Bytes::from_static(FORBIDDEN_PAGE.as_bytes())));
}
