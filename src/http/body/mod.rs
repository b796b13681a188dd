//! Request bodies at the edge of a route: each route's body cap ([`caps`]), the process-wide
//! budget for bytes held in bodies ([`budget`]), the rate a body must keep, and the blocking
//! low-priority threads that parse large bodies off the async workers ([`pool`]). Handlers get a body through [`read`];
//! what it returns holds its share of the budget until it is dropped, after the command ran.

mod budget;
mod caps;
mod pool;

use std::time::Duration;

use bytes::BytesMut;
use http_body_util::BodyExt;
use salvo::http::ReqBody;
use salvo::prelude::*;

use budget::Reservation;
pub use budget::{Bodies, Held};
pub use caps::{ROUTES, Route, cap, discovery, document_caps, route};

use super::reply::ApiError;
use crate::http::shared::Shared;

/// Bodies up to this size are parsed on the async worker that read them (cheaper than the
/// hop to another thread); larger ones on a parsing thread ([`Bodies::off_workers`]).
pub const INLINE_PARSE_BYTES: usize = 16 * 1024;

/// The request body, within its route's cap, the process's budget (and `account`'s share of
/// it) and its deadline.
///
/// - Over the cap: 413 `body-bytes`, before anything is buffered when `Content-Length` says
///   so, else as soon as the bytes read pass it.
/// - Past the budget, or past the account's quarter of it: 503 `body_budget` with
///   `Retry-After`, at once: a declared length is reserved whole before the first byte is
///   read, a chunked body grows its reservation frame by frame and is refused at the frame
///   that does not fit.
/// - Too slow: by any moment after `body-seconds` (a grace), a body must have sent
///   `body-bytes-per-second` for every second past it, so one that declares 32 MiB and sends
///   nothing holds its reservation for the grace only; a gap between frames as long as the
///   grace also ends it. 408, and the connection is closed.
pub async fn read(
    req: &mut Request,
    state: &Shared,
    account: Option<&str>,
) -> Result<Held, ApiError> {
    let limits = &state.limits;
    let cap = cap(req.method().as_str(), req.uri().path(), limits);
    let declared = req
        .headers()
        .get(salvo::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let mut body = req.take_body();
    if declared.is_some_and(|d| d > cap) {
        drain(body, declared).await;
        return Err(ApiError::BodyTooLarge);
    }
    let Some(mut share) = Reservation::new(&state.bodies, account, declared.unwrap_or(0)) else {
        drain(body, declared).await;
        return Err(ApiError::BodyBudget);
    };
    let started = tokio::time::Instant::now();
    let grace = Duration::from_secs(u64::from(limits.body_seconds));
    let rate = u64::from(limits.body_bytes_per_second.max(1));
    let mut buf = BytesMut::with_capacity(declared.unwrap_or(0) as usize);
    loop {
        // The deadline moves with what was sent: a body that keeps the rate lives until it
        // ends (or, chunked, reaches its cap), and one that does not is cut off.
        let owed = buf.len() as u64 + 1;
        let deadline = started + grace + Duration::from_secs_f64(owed as f64 / rate as f64);
        let data = match tokio::time::timeout_at(deadline, body.frame()).await {
            Ok(None) => break,
            Ok(Some(Ok(frame))) => match frame.into_data() {
                Ok(data) => data,
                Err(_) => continue,
            },
            // The connection's own gap timeout between frames, a client gone mid-body, or
            // the deadline.
            Ok(Some(Err(_))) | Err(_) => return Err(ApiError::RequestTimeout),
        };
        let total = (buf.len() + data.len()) as u64;
        if total > cap {
            drain(body, None).await;
            return Err(ApiError::BodyTooLarge);
        }
        if !share.grow_to(total) {
            drain(body, None).await;
            return Err(ApiError::BodyBudget);
        }
        buf.extend_from_slice(&data);
    }
    Ok(Held::new(buf.freeze(), share))
}

/// How much of a refused body is read and dropped before its reply goes out, and for how
/// long. A client that writes its whole body before it reads the reply (most do) then reads
/// the 413 or 503, where closing on the unread rest would reset the connection under it.
/// Past either bound the connection closes anyway, so the drain costs at most this much per
/// connection; nothing drained is held.
const DRAIN_BYTES: u64 = 64 << 20;
const DRAIN_TIME: Duration = Duration::from_secs(2);

/// Reads what is left of a body and drops it, frame by frame, within the bounds above; a body
/// declared longer than they allow is not read at all.
async fn drain(mut body: ReqBody, declared: Option<u64>) {
    if declared.is_some_and(|d| d > DRAIN_BYTES) {
        return;
    }
    let deadline = tokio::time::Instant::now() + DRAIN_TIME;
    let mut read = 0u64;
    while read < DRAIN_BYTES {
        match tokio::time::timeout_at(deadline, body.frame()).await {
            Ok(Some(Ok(frame))) => read += frame.data_ref().map_or(0, |d| d.len() as u64),
            _ => break,
        }
    }
}
