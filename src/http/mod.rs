//! The HTTP interface: the route tree, and the hoops every request passes (state, then
//! authentication for everything under `/api` but health and discovery).

mod account;
pub mod auth;
pub mod body;
mod calendar;
mod cards;
mod common;
pub mod cors;
pub mod encoding;
pub mod error;
mod error_code;
pub mod idempotency;
mod import;
mod in_flight;
mod meta;
mod observe;
pub mod query;
mod read_route;
mod record;
pub mod reply;
mod resources;
mod route_table;
mod routes;
pub mod schema;
mod search;
pub mod shared;
mod sync;

use std::sync::Arc;

use salvo::http::Method;
use salvo::prelude::*;

pub use auth::client_ip;
use auth::{authenticate, authenticate_feed, keyless};
use read_route::read;
pub use route_table::RouteTable;
use routes::keyed;
use shared::WithState;
pub use shared::{Shared, caller, state};

/// The routes outside the keyed table, as the discovery document lists them (method, path,
/// summary): before the keyed routes, and after them. `router` below builds them, each with
/// its own hoop; the routing test holds this list and the router to each other.
#[rustfmt::skip]
const SERVICE_FIRST: &[(&str, &str, &str)] = &[
    ("GET", "/api/health", "{ok, mode}; no key, never limited"),
    ("GET", "/api/v1", "this document; no key needed (burst-limited)"),
    ("GET", "/api", "this document, unversioned form"),
    ("GET", "/api/v1/openapi.json", "the OpenAPI document; no key needed (burst-limited)"),
];
#[rustfmt::skip]
const SERVICE_LAST: &[(&str, &str, &str)] = &[
    ("GET", "/api/v1/calendar.ics", "the cards with a deadline as an iCalendar feed to subscribe to; query: key (a calendar key, for apps that send no header), project, completed, alarm"),
    ("GET", "/api/v1/live", "the change socket (WebSocket); query: ticket"),
];

/// Every route as (method, path, summary), for the discovery document: the keyed ones from
/// the route table, under `/api/v1/` with `:id` for a parameter.
pub fn endpoints() -> Vec<(&'static str, String, &'static str)> {
    let service = |list: &[(&'static str, &'static str, &'static str)]| {
        list.iter()
            .map(|&(method, path, summary)| (method, path.to_owned(), summary))
            .collect::<Vec<_>>()
    };
    let keyed = routes::KEYED.iter().map(|&(method, path, summary)| {
        (
            method,
            format!("/api/v1/{}", path.replace("{id}", ":id")),
            summary,
        )
    });
    let mut all = service(SERVICE_FIRST);
    all.extend(keyed);
    all.extend(service(SERVICE_LAST));
    all
}

/// The whole route tree. Every resource answers under `/api/v1/` and `/api/` alike; anything
/// else under `/api` is authenticated first and then 404 (so `/api/v2` answers 403, 401 or
/// 404 by the key it carries). `client` is the web client's routes, tried before that 404.
pub fn router(state: Arc<Shared>, client: Router) -> Router {
    let cors = cors::Hoop(state.cors.clone());
    Router::new()
        .hoop(WithState(state))
        .hoop(observe::request)
        .hoop(cors)
        .hoop(head_length)
        .hoop(encoding::hoop)
        // The keyed routes first: they take nearly every request, and the router tries
        // its children in order (a path none of them holds falls through to the next).
        .push(
            Router::with_path("api/v1")
                .hoop(authenticate)
                .hoop(idempotency::hoop)
                .push(keyed()),
        )
        // The calendar feed has a hoop of its own: its key may come as `?key=`.
        .push(calendar_feed("api/v1/calendar.ics"))
        .push(calendar_feed("api/calendar.ics"))
        .push(Router::with_path("api/health").push(read(meta::health)))
        .push(Router::with_path("api/v1/health").push(read(meta::health)))
        .push(
            Router::with_path("api/v1/openapi.json")
                .hoop(keyless)
                .push(read(meta::openapi)),
        )
        .push(
            Router::with_path("api/openapi.json")
                .hoop(keyless)
                .push(read(meta::openapi)),
        )
        .push(Router::with_path("api/v1/live").get(sync::socket))
        .push(Router::with_path("api/live").get(sync::socket))
        .push(
            Router::with_path("api/v1")
                .hoop(keyless)
                .push(read(meta::discovery)),
        )
        .push(
            Router::with_path("api")
                .hoop(keyless)
                .push(read(meta::discovery)),
        )
        .push(
            Router::with_path("api")
                .hoop(authenticate)
                .hoop(idempotency::hoop)
                .push(keyed())
                .push(Router::with_path("{**rest}").goal(meta::not_found)),
        )
        .push(client)
        .push(Router::with_path("{**rest}").goal(meta::not_found))
}

/// The calendar feed at `path`, behind its own authentication hoop.
fn calendar_feed(path: &str) -> Router {
    Router::with_path(path)
        .hoop(authenticate_feed)
        .push(read(calendar::feed))
}

/// A HEAD reply says the Content-Length its GET would send: salvo drops a HEAD reply's body
/// before hyper could count it. Outside the encoding hoop, so the length is the encoded one.
#[handler]
async fn head_length(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
    ctrl: &mut FlowCtrl,
) {
    ctrl.call_next(req, depot, res).await;
    if req.method() == Method::HEAD
        && !res
            .headers()
            .contains_key(salvo::http::header::CONTENT_LENGTH)
        && let Some(length) = res.body.size()
    {
        res.headers_mut()
            .insert(salvo::http::header::CONTENT_LENGTH, length.into());
    }
}

/// The OpenAPI 3.1 document, generated from the handlers' own annotations, with the limits
/// in force written into it. It lists the versioned paths; every one also answers under
/// `/api/` unversioned.
pub fn openapi_json(limits: &write_model::Limits) -> String {
    use salvo::oapi::OpenApi;
    use salvo::oapi::security::{ApiKey, ApiKeyValue, Http, HttpAuthScheme, SecurityScheme};
    let documented = Router::new()
        .push(Router::with_path("api/health").get(meta::health))
        .push(Router::with_path("api/v1").get(meta::discovery))
        .push(Router::with_path("api/v1/openapi.json").get(meta::openapi))
        .push(Router::with_path("api/v1/live").get(sync::socket))
        .push(Router::with_path("api/v1/calendar.ics").get(calendar::feed))
        .push(Router::with_path("api/v1").push(keyed()));
    use salvo::oapi::Info;
    let document = OpenApi::with_info(
        Info::new("Workboard", env!("CARGO_PKG_VERSION")).description(DOCUMENT_NOTES),
    )
    .add_security_scheme(
        "bearer",
        SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer).bearer_format("wb_ key")),
    )
    .add_security_scheme(
        "calendarKey",
        SecurityScheme::ApiKey(ApiKey::Query(ApiKeyValue::with_description(
            "key",
            "A calendar key (`access: \"calendar\"`) in the feed's URL, for calendar apps that send no header; taken by GET /calendar.ics alone",
        ))),
    )
    .merge_router(&documented)
    .to_json()
    .expect("the OpenAPI document serialises");
    // Each route's own body cap in its 413; any text left names the cap over every route.
    let document = match serde_json::from_str::<serde_json::Value>(&document) {
        Ok(mut doc) => {
            body::document_caps(&mut doc, limits, schema::BODY_LIMIT_PLACEHOLDER);
            idempotency::document(&mut doc);
            doc.to_string()
        }
        Err(_) => document,
    };
    document.replace(
        schema::BODY_LIMIT_PLACEHOLDER,
        &bytes_text(limits.body_bytes),
    )
}

/// What the OpenAPI document says once for every route: compression, CORS, key access.
const DOCUMENT_NOTES: &str = "Self-hosted kanban over HTTP/JSON; every path also answers unversioned under /api/.\n\nCompression: every JSON reply of at least 1024 bytes negotiates Accept-Encoding among gzip and zstd (gzip wins equal q-values; br is not offered); smaller replies, identity, no header or only codings not offered get the uncompressed bytes. Every reply carries Vary: Accept-Encoding, a compressed one Content-Encoding. gzip is one member; zstd is one frame per cached piece, concatenated (RFC 8878, section 3). ETags are weak and the same in every encoding.\n\nCORS: only for the origins given with --cors-origin (none by default): preflights are answered before authentication and never counted; Access-Control-Allow-Headers lists Authorization, Content-Type, If-None-Match, X-Request-Id and Idempotency-Key; Access-Control-Expose-Headers lists ETag, RateLimit-*, Retry-After, X-Request-Id, Content-Disposition and Idempotent-Replayed; no credentials mode.\n\nIdempotency keys: every POST, PATCH and DELETE takes an Idempotency-Key header (see its parameter, and the discovery document's `idempotency`).\n\nKeys: access full (default) or read, and an optional expiresAt (ms). A read key may call every GET, /changes, POST /live/ticket and the socket; any other write answers 403 JSON read_only_key, counted as a read. A calendar key (access calendar) may call GET /calendar.ics alone, in the Authorization header or as ?key= (calendar apps send no header); every other route answers it 403 calendar_key. ?key= is taken by /calendar.ics alone, and only with a calendar key: anywhere else, or with another key, 403 key_in_query. An expired key answers 401 like a revoked one; its sockets close with 4401.";

/// A size as a person reads it: `32 MiB`, `64 KiB`, else bytes.
fn bytes_text(bytes: usize) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}
