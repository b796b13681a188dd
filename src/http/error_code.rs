//! The stable codes of error bodies, in one table: each code's text, status and meaning.
//! The discovery document lists the table, the OpenAPI error schema names its codes as an
//! enum, and docs/interface/errors-and-limits.md has a row for each (a test holds them
//! alike); `error.rs` puts a code into every error body.

/// The stable codes of error bodies. Each keeps its meaning for good; new ones may be added.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    InvalidJson,
    DuplicateKey,
    ObjectTooWide,
    BadRequest,
    BadKey,
    BadTicket,
    ReadOnlyKey,
    CalendarKey,
    KeyInQuery,
    NotFound,
    MethodNotAllowed,
    RequestTimeout,
    Conflict,
    BodyTooLarge,
    StorageFull,
    UnknownField,
    InvalidValue,
    LimitReached,
    AllowanceExhausted,
    RateLimited,
    TooManySockets,
    Internal,
    ReadOnly,
    Overloaded,
    WriterStopped,
    BodyBudget,
    BadIdempotencyKey,
    IdempotencyKeyInFlight,
    IdempotencyKeyReused,
}

impl ErrorCode {
    /// Every code with its status and meaning, in the order the documents list them.
    pub const TABLE: &[(ErrorCode, u16, &str)] = &[
        (ErrorCode::InvalidJson, 400, "the body is not valid JSON"),
        (
            ErrorCode::DuplicateKey,
            400,
            "a JSON object names one key twice (the key is named)",
        ),
        (
            ErrorCode::ObjectTooWide,
            422,
            "a JSON object in the body names more keys than any route takes (`limit`: the most)",
        ),
        (
            ErrorCode::BadRequest,
            400,
            "the request is not one the route takes (two `Authorization` headers, a socket route without an upgrade)",
        ),
        (
            ErrorCode::BadKey,
            401,
            "the key is malformed, unknown, revoked or expired",
        ),
        (
            ErrorCode::BadTicket,
            401,
            "the socket ticket is unknown, used or expired",
        ),
        (ErrorCode::ReadOnlyKey, 403, "a read key asked for a write"),
        (
            ErrorCode::CalendarKey,
            403,
            "a calendar key reaches only `GET /calendar.ics`",
        ),
        (
            ErrorCode::KeyInQuery,
            403,
            "a key in the query string (`?key=`): only `/calendar.ics` takes one, and only a calendar key",
        ),
        (
            ErrorCode::NotFound,
            404,
            "no such record, route or version, or not the caller's",
        ),
        (
            ErrorCode::MethodNotAllowed,
            405,
            "the path exists under other methods (`Allow` lists them)",
        ),
        (
            ErrorCode::RequestTimeout,
            408,
            "the request body did not arrive in time; the connection is closed",
        ),
        (
            ErrorCode::Conflict,
            409,
            "a guard found another value, an id is taken, or an undo step no longer applies (`field`, `current`)",
        ),
        (
            ErrorCode::BodyTooLarge,
            413,
            "the request body is over the body limit (`limit: \"body-bytes\"`)",
        ),
        (
            ErrorCode::StorageFull,
            413,
            "the account's storage is full (`limit: \"storage-bytes\"`)",
        ),
        (
            ErrorCode::UnknownField,
            422,
            "a body field or query parameter the route does not take (`field`; `accepted` lists a body's fields)",
        ),
        (
            ErrorCode::InvalidValue,
            422,
            "a value the field does not take (`field`)",
        ),
        (
            ErrorCode::LimitReached,
            422,
            "a count limit is reached: projects, columns, tags, items, keys, batch sizes (`field`)",
        ),
        (
            ErrorCode::AllowanceExhausted,
            429,
            "the key's daily allowance is used up (`resetsAt`, `Retry-After`)",
        ),
        (
            ErrorCode::RateLimited,
            429,
            "too many bad-key or keyless requests from this address (`resetsAt`, `Retry-After`)",
        ),
        (
            ErrorCode::TooManySockets,
            429,
            "the account has its maximum of open live sockets",
        ),
        (
            ErrorCode::Internal,
            500,
            "a fault of the service; its cause is in the service's log",
        ),
        (
            ErrorCode::ReadOnly,
            503,
            "the store cannot take writes (a full disk); reads go on (`Retry-After`)",
        ),
        (
            ErrorCode::Overloaded,
            503,
            "the writer's queue is full, or the caller's account holds its share of it; nothing was written (`Retry-After`)",
        ),
        (
            ErrorCode::WriterStopped,
            503,
            "the writer has stopped (its cause is in the service's log); no write lands and health answers 503 until the node restarts",
        ),
        (
            ErrorCode::BodyBudget,
            503,
            "the service holds as many request bodies as its budget allows (`limit: \"body-budget-bytes\"`); nothing was read or written (`Retry-After`)",
        ),
        (
            ErrorCode::BadIdempotencyKey,
            400,
            "the `Idempotency-Key` header is not 1 to 255 printable ASCII characters (bare or quoted), or is sent twice",
        ),
        (
            ErrorCode::IdempotencyKeyInFlight,
            409,
            "the `Idempotency-Key` names a request still running; retry after a moment",
        ),
        (
            ErrorCode::IdempotencyKeyReused,
            422,
            "the `Idempotency-Key` was first used for another request (method, path or body); nothing ran",
        ),
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidJson => "invalid_json",
            ErrorCode::DuplicateKey => "duplicate_key",
            ErrorCode::ObjectTooWide => "object_too_wide",
            ErrorCode::BadRequest => "bad_request",
            ErrorCode::BadKey => "bad_key",
            ErrorCode::BadTicket => "bad_ticket",
            ErrorCode::ReadOnlyKey => "read_only_key",
            ErrorCode::CalendarKey => "calendar_key",
            ErrorCode::KeyInQuery => "key_in_query",
            ErrorCode::NotFound => "not_found",
            ErrorCode::MethodNotAllowed => "method_not_allowed",
            ErrorCode::RequestTimeout => "request_timeout",
            ErrorCode::Conflict => "conflict",
            ErrorCode::BodyTooLarge => "body_too_large",
            ErrorCode::StorageFull => "storage_full",
            ErrorCode::UnknownField => "unknown_field",
            ErrorCode::InvalidValue => "invalid_value",
            ErrorCode::LimitReached => "limit_reached",
            ErrorCode::AllowanceExhausted => "allowance_exhausted",
            ErrorCode::RateLimited => "rate_limited",
            ErrorCode::TooManySockets => "too_many_sockets",
            ErrorCode::Internal => "internal",
            ErrorCode::ReadOnly => "read_only",
            ErrorCode::Overloaded => "overloaded",
            ErrorCode::WriterStopped => "writer_stopped",
            ErrorCode::BodyBudget => "body_budget",
            ErrorCode::BadIdempotencyKey => "bad_idempotency_key",
            ErrorCode::IdempotencyKeyInFlight => "idempotency_key_in_flight",
            ErrorCode::IdempotencyKeyReused => "idempotency_key_reused",
        }
    }

    /// Every code's text, for the OpenAPI enum.
    pub fn all() -> impl Iterator<Item = &'static str> {
        Self::TABLE.iter().map(|(code, _, _)| code.as_str())
    }
}
