//! The error replies routes share, as sets each endpoint names once instead of listing every
//! status: a keyed read, a keyed write, the keyless documents, the socket, and health. Each
//! error carries the envelope [`ErrorBody`](super::ErrorBody), whose `code` is one of the
//! table in `http::error`.

use salvo::oapi::schema::{BasicType, Object, Schema};
use salvo::oapi::{Components, Content, RefOr, Response, Responses, ToResponses, ToSchema};

use super::ErrorBody;

/// The text of the 413 a write can answer; the body limit in it is the configured one,
/// written into the document when it is served (`http::openapi_json`).
pub const BODY_LIMIT_PLACEHOLDER: &str = "{body-limit}";

fn json_error(components: &mut Components, description: &str) -> Response {
    Response::new(description).add_content(
        "application/json",
        Content::new(ErrorBody::to_schema(components)),
    )
}

/// The edge's refusal of a request with no `Authorization` header.
fn html_forbidden() -> Response {
    let page: RefOr<Schema> = Schema::Object(Box::new(Object::with_type(BasicType::String))).into();
    Response::new("No Authorization header: refused at the edge with an HTML page")
        .add_content("text/html", Content::new(page))
}

/// Which 403 a route's set carries.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Forbidden {
    None,
    /// JSON `calendar_key`: a calendar key, on a document that needs no key.
    CalendarKey,
    /// The edge's HTML page, or JSON `calendar_key` or `key_in_query`.
    Edge,
    /// The edge's HTML page, or JSON `read_only_key` for a read key's write (or
    /// `calendar_key`, `key_in_query`).
    EdgeOrReadOnly,
    /// The calendar feed: the edge's HTML page, or JSON `key_in_query`.
    Feed,
}

/// What a JSON 403 of a keyed route other than the feed may say.
const KEY_REFUSALS: &str = "a calendar key, which reaches GET /calendar.ics alone: JSON `calendar_key`; `?key=` in the query, taken by the feed alone: JSON `key_in_query`";

fn responses(
    components: &mut Components,
    errors: &[(u16, &str)],
    forbidden: Forbidden,
) -> Responses {
    let mut out = Responses::new();
    for (status, description) in errors {
        out.insert(status.to_string(), json_error(components, description));
    }
    let description = match forbidden {
        Forbidden::None => return out,
        Forbidden::CalendarKey => {
            out.insert(
                "403",
                json_error(
                    components,
                    "A calendar key, which reaches GET /calendar.ics alone (`calendar_key`)",
                ),
            );
            return out;
        }
        Forbidden::Edge => format!(
            "No Authorization header: refused at the edge with an HTML page; or {KEY_REFUSALS}"
        ),
        Forbidden::EdgeOrReadOnly => format!(
            "No Authorization header: refused at the edge with an HTML page; or a read key asked for a write: JSON `read_only_key`, counted as a read, nothing written; or {KEY_REFUSALS}"
        ),
        Forbidden::Feed => "No key at all: refused at the edge with an HTML page; or a key other than a calendar key in `?key=`: JSON `key_in_query`".to_owned(),
    };
    let both = html_forbidden().description(description).add_content(
        "application/json",
        Content::new(ErrorBody::to_schema(components)),
    );
    out.insert("403", both);
    out
}

const BAD_KEY: (u16, &str) = (401, "A bad, unknown, revoked or expired key (`bad_key`)");
const NOT_FOUND: (u16, &str) = (404, "Not found, or not the caller's (`not_found`)");
const INVALID: (u16, &str) = (
    422,
    "An unknown field or parameter, an invalid value, or a count limit (`unknown_field`, `invalid_value`, `limit_reached`)",
);
const THROTTLED: (u16, &str) = (
    429,
    "Allowance spent, or too many bad-key requests from this address (`Retry-After`)",
);
const FAULT: (u16, &str) = (
    500,
    "A fault of the service (`internal`); the cause is in its log",
);

/// A keyed read.
pub struct ReadErrors;

impl ToResponses for ReadErrors {
    fn to_responses(components: &mut Components) -> Responses {
        responses(
            components,
            &[BAD_KEY, NOT_FOUND, INVALID, THROTTLED, FAULT],
            Forbidden::Edge,
        )
    }
}

/// The calendar feed, whose key may come in its query.
pub struct FeedErrors;

impl ToResponses for FeedErrors {
    fn to_responses(components: &mut Components) -> Responses {
        responses(
            components,
            &[
                (
                    400,
                    "The key sent twice: in the Authorization header and as `?key=`, or in two Authorization headers (`bad_request`)",
                ),
                BAD_KEY,
                NOT_FOUND,
                INVALID,
                THROTTLED,
                FAULT,
            ],
            Forbidden::Feed,
        )
    }
}

/// A keyed write.
pub struct WriteErrors;

impl ToResponses for WriteErrors {
    fn to_responses(components: &mut Components) -> Responses {
        responses(
            components,
            &[
                (
                    400,
                    "The body is not JSON, or an object names one key twice (`invalid_json`, `duplicate_key`)",
                ),
                BAD_KEY,
                NOT_FOUND,
                (
                    408,
                    "The body did not arrive in time (`request_timeout`); the connection is closed",
                ),
                (409, "A guard or an id clash: nothing written (`conflict`)"),
                (
                    413,
                    "Storage full (`storage_full`), or the body is over the body limit of {body-limit} (`body_too_large`)",
                ),
                INVALID,
                THROTTLED,
                FAULT,
                (
                    503,
                    "The store cannot take writes (`read_only`), or the writer's queue is full or the account holds its share of it (`overloaded`); nothing was written; or the writer has stopped (`writer_stopped`); or the service holds as many request bodies as its budget allows (`body_budget`, nothing read); `Retry-After`",
                ),
            ],
            Forbidden::EdgeOrReadOnly,
        )
    }
}

/// The documents that need no key (discovery, OpenAPI).
pub struct KeylessErrors;

impl ToResponses for KeylessErrors {
    fn to_responses(components: &mut Components) -> Responses {
        responses(
            components,
            &[
                (401, "A bad key in the header (`bad_key`)"),
                (422, "An unknown query parameter (`unknown_field`)"),
                (
                    429,
                    "Keyless burst spent for this address, or the key's allowance (`Retry-After`)",
                ),
            ],
            Forbidden::CalendarKey,
        )
    }
}

/// The change socket, which authenticates by its ticket.
pub struct SocketErrors;

impl ToResponses for SocketErrors {
    fn to_responses(components: &mut Components) -> Responses {
        responses(
            components,
            &[
                (400, "Not a WebSocket upgrade (`bad_request`)"),
                (401, "A bad, used or expired ticket (`bad_ticket`)"),
                (422, "An unknown query parameter (`unknown_field`)"),
                (
                    429,
                    "The account has its maximum of open sockets (`too_many_sockets`)",
                ),
            ],
            Forbidden::None,
        )
    }
}

/// A route that only checks its query string (health).
pub struct QueryErrors;

impl ToResponses for QueryErrors {
    fn to_responses(components: &mut Components) -> Responses {
        responses(
            components,
            &[
                (422, "An unknown query parameter (`unknown_field`)"),
                (
                    503,
                    "The writer has stopped (`writer_stopped`, `mode: \"stopped\"`): no write lands until the node restarts",
                ),
            ],
            Forbidden::None,
        )
    }
}
