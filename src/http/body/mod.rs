//! Request bodies at the edge of a route: each route's body cap, the process-wide budget for
//! bytes held in bodies, the rate a body must keep, and the blocking slots that parse large
//! bodies off the async workers. Handlers get a body through [`read`]; what it returns holds
//! its share of the budget until it is dropped, after the command ran.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt;
use parking_lot::Mutex;
use salvo::http::ReqBody;
use salvo::prelude::*;
use serde_json::{Value, json};
use write_model::Limits;

use super::reply::ApiError;
use crate::state::AppState;

/// Bytes one character of text may take in a JSON body: a character outside the Basic
/// Multilingual Plane written as two `\uXXXX` escapes (what `ensure_ascii` encoders such as
/// Python's default send). Any other character takes at most 6 escaped, 4 in UTF-8. Limits
/// count characters, so a text at its limit may take this many bytes per character.
const ESCAPED: u64 = 12;
/// A PATCH may send every value guarded, `{before, after}`: the text twice.
const GUARDED: u64 = 2;
/// Room for what is not text in one body: field names in either spelling, ids, numbers,
/// stamps, punctuation, and a pretty-printer's indentation.
const FRAME: u64 = 16 * 1024;
/// The same for one entry of a list (a checklist item, a comment, a position, an id).
const ENTRY: u64 = 512;

/// One route that takes a body, and how its cap is sized from the limits in force.
pub struct Route {
    pub method: &'static str,
    /// Relative to the version prefix; `{id}` stands for any one segment.
    pub path: &'static str,
    /// The largest body a legitimate client can send under the limits (before `body_bytes`,
    /// which caps every route).
    size: fn(&Limits) -> u64,
    /// How the cap is sized, for the OpenAPI and discovery documents.
    pub sized: &'static str,
}

fn text(chars: usize) -> u64 {
    chars as u64 * ESCAPED
}

fn project(l: &Limits) -> u64 {
    GUARDED * (text(l.name_chars) + text(l.folder_chars) + text(l.photo_chars)) + FRAME
}

fn column(l: &Limits) -> u64 {
    GUARDED * (text(l.name_chars) + text(l.column_description_chars)) + FRAME
}

fn card_fields(l: &Limits) -> u64 {
    let tags = l.tags_per_task as u64 * (text(l.tag_chars) + ENTRY);
    GUARDED * (text(l.title_chars) + text(l.description_chars) + text(l.location_chars) + tags)
        + FRAME
}

fn checklist(l: &Limits) -> u64 {
    l.checklist_items_per_task as u64 * (text(l.checklist_item_chars) + ENTRY) + FRAME
}

fn comments(l: &Limits) -> u64 {
    l.comments_per_task as u64 * (text(l.comment_chars) + ENTRY) + FRAME
}

/// A card's create: its fields, a whole checklist and every comment (a read sent back lands
/// as it left); a batch holds `tasks_per_batch` of them.
fn card(l: &Limits) -> u64 {
    card_fields(l) + checklist(l) + comments(l)
}

/// Every route that reads a body, literal segments before `{id}` where both could match.
pub const ROUTES: &[Route] = &[
    Route {
        method: "POST",
        path: "projects",
        size: |l| project(l) + l.columns_per_project as u64 * column(l),
        sized: "a project's name, folder and photo, and its columns with their descriptions",
    },
    Route {
        method: "PATCH",
        path: "projects/{id}",
        size: project,
        sized: "a project's name, folder and photo, each guarded",
    },
    Route {
        method: "POST",
        path: "columns",
        size: column,
        sized: "a column's name and description",
    },
    Route {
        method: "PATCH",
        path: "columns/{id}",
        size: column,
        sized: "a column's name and description, each guarded",
    },
    Route {
        method: "POST",
        path: "tasks",
        size: |l| l.tasks_per_batch as u64 * card(l),
        sized: "a batch of tasks-per-batch cards, each with every field, a full checklist and every comment",
    },
    Route {
        method: "PATCH",
        path: "tasks/positions",
        size: |l| l.positions_per_request as u64 * ENTRY + FRAME,
        sized: "positions-per-request entries of {id, position}",
    },
    Route {
        method: "PATCH",
        path: "tasks/{id}",
        size: card_fields,
        sized: "a card's title, description, location and tags, each guarded",
    },
    Route {
        method: "POST",
        path: "tasks/{id}/tags",
        size: |l| text(l.tag_chars) + FRAME,
        sized: "one tag",
    },
    Route {
        method: "POST",
        path: "tasks/{id}/comments",
        size: |l| text(l.comment_chars) + FRAME,
        sized: "one comment",
    },
    Route {
        method: "POST",
        path: "tasks/{id}/checklist",
        size: checklist,
        sized: "a card's whole checklist",
    },
    Route {
        method: "POST",
        path: "tasks/{id}/checklist/order",
        size: |l| l.checklist_items_per_task as u64 * ENTRY + FRAME,
        sized: "the ids of a card's whole checklist",
    },
    Route {
        method: "PATCH",
        path: "checklist/{id}",
        size: |l| GUARDED * text(l.checklist_item_chars) + FRAME,
        sized: "one checklist item's text, guarded",
    },
    Route {
        method: "POST",
        path: "keys",
        size: |l| text(l.name_chars) + FRAME,
        sized: "a key's label, access and expiry",
    },
    Route {
        method: "POST",
        path: "import",
        size: |_| u64::MAX,
        sized: "a whole export file or Trello board",
    },
];

impl Route {
    /// The cap in force: what the route's largest legitimate body takes, at most `body_bytes`.
    pub fn cap(&self, limits: &Limits) -> u64 {
        (self.size)(limits).min(limits.body_bytes as u64)
    }

    fn matches(&self, method: &str, relative: &str) -> bool {
        if !self.method.eq_ignore_ascii_case(method) {
            return false;
        }
        let mut pattern = self.path.split('/');
        let mut path = relative.trim_end_matches('/').split('/');
        loop {
            match (pattern.next(), path.next()) {
                (None, None) => return true,
                (Some("{id}"), Some(seg)) if !seg.is_empty() => {}
                (Some(p), Some(seg)) if p == seg => {}
                _ => return false,
            }
        }
    }
}

/// The route a request's path names, under `/api/v1/` or `/api/`.
pub fn route(method: &str, path: &str) -> Option<&'static Route> {
    let relative = path
        .strip_prefix("/api/v1/")
        .or_else(|| path.strip_prefix("/api/"))?;
    ROUTES.iter().find(|r| r.matches(method, relative))
}

/// The body cap of a request: its route's, or `body_bytes` for one not in the table.
pub fn cap(method: &str, path: &str, limits: &Limits) -> u64 {
    route(method, path).map_or(limits.body_bytes as u64, |r| r.cap(limits))
}

/// The process's bodies: the budget of bytes they may hold at once, each account's share of
/// it, and the blocking slots that parse the large ones.
pub struct Bodies {
    budget: u64,
    /// The most one account's bodies may hold at once: a quarter of the budget, so one
    /// account that opens bodies and sends them slowly leaves the rest to the others.
    share: u64,
    held: Mutex<Holdings>,
    parsing: tokio::sync::Semaphore,
}

/// What bodies hold now: in all, and by account.
#[derive(Default)]
struct Holdings {
    total: u64,
    by_account: HashMap<Arc<str>, u64>,
}

impl Bodies {
    pub fn new(budget: u64) -> Arc<Self> {
        // Half the cores (at least one) parse large bodies; the rest stay free for the async
        // workers that answer every other request.
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        Arc::new(Bodies {
            budget,
            share: budget / 4,
            held: Mutex::default(),
            parsing: tokio::sync::Semaphore::new((cores / 2).max(1)),
        })
    }

    /// Bytes held in bodies now (for tests of the release).
    pub fn held(&self) -> u64 {
        self.held.lock().total
    }

    /// Takes `bytes` more of the budget (and of `account`'s share), or answers `false` with
    /// nothing taken.
    fn take(&self, account: Option<&Arc<str>>, bytes: u64) -> bool {
        let mut held = self.held.lock();
        let total = held.total.saturating_add(bytes);
        if total > self.budget {
            return false;
        }
        if let Some(account) = account {
            let mine = held.by_account.get(account).copied().unwrap_or(0);
            let after = mine.saturating_add(bytes);
            if after > self.share {
                return false;
            }
            held.by_account.insert(account.clone(), after);
        }
        held.total = total;
        true
    }

    fn give(&self, account: Option<&Arc<str>>, bytes: u64) {
        let mut held = self.held.lock();
        held.total = held.total.saturating_sub(bytes);
        if let Some(account) = account
            && let Some(mine) = held.by_account.get_mut(account)
        {
            *mine = mine.saturating_sub(bytes);
            if *mine == 0 {
                held.by_account.remove(account);
            }
        }
    }

    /// Runs `work` (parsing a large body) in a blocking slot, off the async workers; waits for
    /// a slot when every one is busy.
    pub async fn off_workers<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, ApiError> {
        let fault = |e: &dyn std::fmt::Display| {
            ApiError::Write(write_model::WriteError::Internal(format!(
                "a body could not be parsed: {e}"
            )))
        };
        let _slot = self.parsing.acquire().await.map_err(|e| fault(&e))?;
        tokio::task::spawn_blocking(work)
            .await
            .map_err(|e| fault(&e))
    }
}

/// A share of the budget, given back when dropped.
pub struct Reservation {
    bodies: Arc<Bodies>,
    account: Option<Arc<str>>,
    bytes: u64,
}

impl Reservation {
    fn new(bodies: &Arc<Bodies>, account: Option<&str>, bytes: u64) -> Option<Self> {
        let account: Option<Arc<str>> = account.map(Arc::from);
        bodies.take(account.as_ref(), bytes).then(|| Reservation {
            bodies: bodies.clone(),
            account,
            bytes,
        })
    }

    /// Grows the share to `total` bytes, or answers `false` with it unchanged.
    fn grow_to(&mut self, total: u64) -> bool {
        if total <= self.bytes {
            return true;
        }
        let more = total - self.bytes;
        if !self.bodies.take(self.account.as_ref(), more) {
            return false;
        }
        self.bytes = total;
        true
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.bodies.give(self.account.as_ref(), self.bytes);
    }
}

/// A body read whole, holding its share of the budget for as long as it (or the command
/// parsed from it, which the handler keeps beside it) lives.
pub struct Held {
    bytes: Bytes,
    _share: Reservation,
}

impl Held {
    pub fn bytes(&self) -> Bytes {
        self.bytes.clone()
    }
}

impl std::ops::Deref for Held {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.bytes
    }
}

/// Bodies up to this size are parsed on the async worker that read them (cheaper than the
/// hop to a blocking thread); larger ones in a blocking slot ([`Bodies::off_workers`]).
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
    state: &AppState,
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
    Ok(Held {
        bytes: buf.freeze(),
        _share: share,
    })
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

/// Writes each route's cap into the OpenAPI document: `x-body-limit-bytes` on the operation
/// and the number in its 413's text.
pub fn document_caps(doc: &mut Value, limits: &Limits, placeholder: &str) {
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else {
        return;
    };
    for (path, item) in paths.iter_mut() {
        let Some(item) = item.as_object_mut() else {
            continue;
        };
        for (method, op) in item.iter_mut() {
            if op.get("requestBody").is_none() {
                continue;
            }
            let Some(route) = route(&method.to_ascii_uppercase(), path) else {
                continue;
            };
            let cap = route.cap(limits);
            op["x-body-limit-bytes"] = json!(cap);
            if let Some(text) = op
                .pointer_mut("/responses/413/description")
                .and_then(|d| d.as_str().map(str::to_owned))
            {
                op["responses"]["413"]["description"] =
                    json!(text.replace(placeholder, &format!("{cap} bytes ({})", route.sized)));
            }
        }
    }
}

/// What the discovery document says of bodies: each route's cap, the budget and the rate.
pub fn discovery(limits: &Limits) -> Value {
    let caps: Vec<Value> = ROUTES
        .iter()
        .map(|r| {
            json!({
                "method": r.method,
                "path": format!("/api/v1/{}", r.path),
                "bytes": r.cap(limits),
                "sized": r.sized,
            })
        })
        .collect();
    json!({
        "caps": caps,
        "sizing": "Each route's cap is the largest body a client can send under the limits: every text at its limit with every character a 12-byte escape (a character outside the BMP as two \\uXXXX), twice when a PATCH may guard it ({before, after}), plus 16 KiB for names, ids and whitespace and 512 bytes per list entry; never above body-bytes. Over it: 413 {limit: \"body-bytes\"}.",
        "budget": format!("At most {} bytes are held in request bodies across the whole service at once (limit \"body-budget-bytes\"); and at most a quarter of that by one account's bodies; a body that does not fit is refused at once with 503 {{code: \"body_budget\"}} and Retry-After, nothing read.", limits.body_budget_bytes),
        "rate": format!("After a grace of {} s a body must have sent {} bytes for every second past it; slower, 408 request_timeout and the connection is closed.", limits.body_seconds, limits.body_bytes_per_second),
        "width": format!("No object in a body may name more than {} keys (422 object_too_wide).", write_model::input::MAX_OBJECT_KEYS),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_route_finds_its_cap_and_literals_come_before_ids() {
        let l = Limits::default();
        let at = |m: &str, p: &str| route(m, p).map(|r| r.path);
        assert_eq!(
            at("PATCH", "/api/v1/tasks/positions"),
            Some("tasks/positions")
        );
        assert_eq!(at("PATCH", "/api/tasks/t_1"), Some("tasks/{id}"));
        assert_eq!(
            at("POST", "/api/v1/tasks/t_1/checklist/order"),
            Some("tasks/{id}/checklist/order")
        );
        assert_eq!(at("GET", "/api/v1/tasks/t_1"), None);
        assert_eq!(at("POST", "/api/v1/tasks/t_1/nope"), None);
        // A card PATCH: a guarded 262,144-character description at 12 bytes a character.
        let patch = cap("PATCH", "/api/v1/tasks/t_1", &l);
        assert!(patch > 2 * 12 * 262_144 && patch < 8 << 20, "{patch}");
        assert_eq!(cap("POST", "/api/v1/tasks", &l), l.body_bytes as u64);
        assert_eq!(cap("POST", "/api/v1/import", &l), l.body_bytes as u64);
        assert!(cap("POST", "/api/v1/tasks/t_1/tags", &l) < 32 << 10);
    }

    #[test]
    fn the_budget_is_given_back_when_a_share_drops() {
        let bodies = Bodies::new(100);
        let mut a = Reservation::new(&bodies, None, 60).expect("fits");
        assert!(Reservation::new(&bodies, None, 50).is_none());
        assert!(a.grow_to(90));
        assert!(!a.grow_to(101));
        let b = Reservation::new(&bodies, None, 10).expect("fits");
        drop(a);
        assert_eq!(bodies.held(), 10);
        drop(b);
        assert_eq!(bodies.held(), 0);
    }

    #[test]
    fn one_account_holds_a_quarter_of_the_budget_at_most() {
        let bodies = Bodies::new(400);
        let mut a = Reservation::new(&bodies, Some("a"), 60).expect("fits");
        assert!(Reservation::new(&bodies, Some("a"), 50).is_none());
        assert!(!a.grow_to(101));
        let b = Reservation::new(&bodies, Some("b"), 100).expect("another account fits");
        assert!(a.grow_to(100));
        drop(a);
        assert!(Reservation::new(&bodies, Some("a"), 100).is_some());
        drop(b);
        assert_eq!(bodies.held(), 0);
        assert!(bodies.held.lock().by_account.is_empty());
    }
}
