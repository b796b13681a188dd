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

/// No route: 405 with `Allow` when the path exists under other methods, else 404.
#[handler]
pub async fn not_found(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let allowed = state(depot).routes.allowed(req.uri().path());
    match allowed {
        Some(methods) => {
            if let Ok(v) = salvo::http::HeaderValue::from_str(&methods.join(", ")) {
                res.headers_mut().insert(salvo::http::header::ALLOW, v);
            }
            send(res, Err(ApiError::MethodNotAllowed));
        }
        None => send(res, Err(ApiError::NotFound)),
    }
}

/// The documented routes, to tell a wrong method (405) from a wrong path (404).
#[derive(Debug, Default)]
pub struct RouteTable {
    routes: Vec<(Vec<String>, Vec<String>)>,
}

impl RouteTable {
    /// Reads the paths and methods of the OpenAPI document.
    pub fn from_openapi(doc: &str) -> Self {
        let Ok(serde_json::Value::Object(doc)) = serde_json::from_str::<serde_json::Value>(doc)
        else {
            return RouteTable::default();
        };
        let Some(serde_json::Value::Object(paths)) = doc.get("paths") else {
            return RouteTable::default();
        };
        let routes = paths
            .iter()
            .map(|(path, ops)| {
                let segments = path
                    .trim_matches('/')
                    .split('/')
                    .map(str::to_owned)
                    .collect();
                let methods = ops
                    .as_object()
                    .map(|o| o.keys().map(|m| m.to_uppercase()).collect())
                    .unwrap_or_default();
                (segments, methods)
            })
            .collect();
        RouteTable { routes }
    }

    /// The methods a path answers to, if it is a route at all (versioned or not).
    pub fn allowed(&self, path: &str) -> Option<Vec<String>> {
        let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
        let versioned: Vec<&str> = match segments.as_slice() {
            ["api", "v1", ..] => segments.clone(),
            ["api", rest @ ..] => ["api", "v1"]
                .iter()
                .copied()
                .chain(rest.iter().copied())
                .collect(),
            _ => return None,
        };
        let find = |path: &[&str]| {
            self.routes
                .iter()
                .find(|(template, _)| {
                    template.len() == path.len()
                        && template
                            .iter()
                            .zip(path)
                            .all(|(t, s)| t.starts_with('{') || t == s)
                })
                .map(|(_, methods)| methods.clone())
        };
        find(&segments).or_else(|| find(&versioned))
    }
}
