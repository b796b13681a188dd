//! What every request passes through first and last: its request id (echoed in
//! `X-Request-Id`), a tracing span that every log line written while serving it carries (its
//! id and route template), its line in the log, its count and duration in the metrics, and
//! the headers every reply carries.
//!
//! The log never sees a query string (it may carry a socket ticket) or a header's value.

use salvo::http::HeaderValue;
use salvo::http::header::{self, HeaderName};
use salvo::prelude::*;
use tracing::Instrument;

use super::state;

// Header names made once: a name given as text is parsed and checked on each insert.
const X_REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// How replies under `/api` may be cached, unless the route says otherwise: by the client
/// alone (never a shared cache), and revalidated each time, which conditional reads make
/// cheap (`If-None-Match` and a 304). Replies that carry a key or a ticket say `no-store`.
const API_CACHE_CONTROL: HeaderValue = HeaderValue::from_static("private, no-cache");
const NOSNIFF: HeaderValue = HeaderValue::from_static("nosniff");

/// The request id a client sent, if it is short and plain; else a new one.
fn request_id(req: &Request) -> String {
    req.headers()
        .get(X_REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .filter(|v| {
            !v.is_empty()
                && v.len() <= 64
                && v.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
        .map(str::to_owned)
        .unwrap_or_else(|| write_model::ids::thread_token(16))
}

#[handler]
pub async fn request(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
    ctrl: &mut FlowCtrl,
) {
    let started = std::time::Instant::now();
    let id = request_id(req);
    let span = tracing::info_span!(
        "request",
        request_id = %id,
        route = %format_args!("/{}", req.matched_path()),
    );
    ctrl.call_next(req, depot, res)
        .instrument(span.clone())
        .await;
    let status = res.status_code.map_or(200, |s| s.as_u16());
    let headers = res.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&id) {
        headers.insert(X_REQUEST_ID, v);
    }
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, NOSNIFF);
    let path = req.uri().path();
    if path.starts_with("/api") && !headers.contains_key(header::CACHE_CONTROL) {
        headers.insert(header::CACHE_CONTROL, API_CACHE_CONTROL);
    }
    let took = started.elapsed();
    state(depot).metrics.request(
        req.matched_path(),
        req.method().as_str(),
        status,
        took.as_secs_f64(),
    );
    span.in_scope(|| {
        crate::request_log::write(&crate::request_log::Line {
            request_id: &id,
            route: req.matched_path(),
            method: req.method().as_str(),
            path,
            status,
            micros: took.as_micros() as u64,
        })
    });
}
