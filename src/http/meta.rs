//! Routes about the service itself: health, the discovery document, and not-found.

use salvo::http::StatusCode;
use salvo::prelude::*;
use serde_json::json;

use super::reply::{ApiError, Reply, send, send_chunks};
use super::schema;
use super::{Credentials, admit, client_ip, credentials, state};
use crate::http::common::no_query;
use crate::state::AppState;

/// Health: `{ok, mode}`; no key, never limited.
#[endpoint(tags("service"), responses((status_code = 200, description = "`mode` is `normal`, or `read-only` while the store cannot take writes", body = schema::Health)))]
pub async fn health(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let mode = if state(depot).write.read_only() {
        "read-only"
    } else {
        "normal"
    };
    send(
        res,
        no_query(req).map(|_| Reply::json(StatusCode::OK, &json!({"ok": true, "mode": mode}))),
    );
}

/// The discovery document: keyless within a burst limit per address, or with a valid key.
#[endpoint(tags("service"), responses(
    (status_code = 200, description = "The self-describing document: versioning, authentication, shapes, limits in force, errors", body = serde_json::Value),
    (status_code = 401, description = "A bad key in the header", body = schema::ErrorBody),
    (status_code = 422, description = "An unknown query parameter", body = schema::ErrorBody),
    (status_code = 429, description = "Keyless burst spent for this address", body = schema::ErrorBody),
))]
pub async fn discovery(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    keyless(req, depot, res, |state| state.discovery_doc.clone());
}

/// The OpenAPI 3.1 document of this interface; keyless like discovery, sharing its burst.
#[endpoint(tags("service"), responses(
    (status_code = 200, description = "This document", body = serde_json::Value),
    (status_code = 401, description = "A bad key in the header", body = schema::ErrorBody),
    (status_code = 422, description = "An unknown query parameter", body = schema::ErrorBody),
    (status_code = 429, description = "Keyless burst spent for this address", body = schema::ErrorBody),
))]
pub async fn openapi(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    keyless(req, depot, res, |state| state.openapi_doc.clone());
}

/// Serves a document that needs no key: counted against the key's allowance when one is
/// sent, else against the keyless burst of the client's address.
fn keyless(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
    doc: impl FnOnce(&AppState) -> bytes::Bytes,
) {
    let state = state(depot);
    if let Err(e) = no_query(req) {
        return send(res, Err(e));
    }
    match credentials(req, &state) {
        Credentials::Valid(caller) => {
            if !admit(req, res, &state, &caller) {
                return;
            }
        }
        Credentials::Invalid(e) => return send(res, Err(e)),
        Credentials::Missing => {
            if !state.discovery.allow(client_ip(req, &state)) {
                return send(
                    res,
                    Err(ApiError::Throttled {
                        retry_after: u64::from(state.limits.discovery_burst_seconds),
                        message: "too many keyless discovery requests from this address",
                    }),
                );
            }
        }
    }
    send_chunks(res, StatusCode::OK, vec![doc(&state)]);
}

#[handler]
pub async fn not_found(res: &mut Response) {
    send(res, Err(ApiError::NotFound));
}
