//! Routes about the service itself: health, the discovery document, and not-found.

use salvo::http::StatusCode;
use salvo::prelude::*;
use serde_json::json;

use super::reply::{ApiError, Reply};
use super::schema;
use super::state;
use crate::http::common::no_query;

/// Health: `{ok, mode}`; no key, never limited. A node whose writer has stopped is not
/// healthy: 503 `{ok:false, mode:"stopped", code:"writer_stopped"}`, since none of its
/// writes can land.
#[endpoint(tags("service"), responses(schema::QueryErrors, (status_code = 200, description = "`mode` is `normal`, or `read-only` while the store cannot take writes", body = schema::Health)))]
pub async fn health(req: &mut Request, depot: &mut Depot) -> Result<Reply, ApiError> {
    no_query(req)?;
    let write = &state(depot).write;
    if write.stopped().is_some() {
        let error = ApiError::Write(write.gone());
        let mut body = error.envelope();
        body["mode"] = json!("stopped");
        return Ok(Reply::json(StatusCode::SERVICE_UNAVAILABLE, &body));
    }
    let mode = if write.read_only() {
        "read-only"
    } else {
        "normal"
    };
    Ok(Reply::json(
        StatusCode::OK,
        &json!({"ok": true, "mode": mode}),
    ))
}

/// The discovery document: keyless within a burst limit per address, or with a valid key
/// (the `keyless` hoop counts it).
#[endpoint(tags("service"), responses(schema::KeylessErrors, (status_code = 200, description = "The self-describing document: versioning, authentication, shapes, limits in force, errors", body = serde_json::Value)))]
pub async fn discovery(req: &mut Request, depot: &mut Depot) -> Result<Reply, ApiError> {
    no_query(req)?;
    Ok(Reply::chunks(
        StatusCode::OK,
        vec![state(depot).discovery_doc.clone()],
    ))
}

/// The OpenAPI 3.1 document of this interface; keyless like discovery, sharing its burst.
#[endpoint(tags("service"), responses(schema::KeylessErrors, (status_code = 200, description = "This document", body = serde_json::Value)))]
pub async fn openapi(req: &mut Request, depot: &mut Depot) -> Result<Reply, ApiError> {
    no_query(req)?;
    Ok(Reply::chunks(
        StatusCode::OK,
        vec![state(depot).openapi_doc.clone()],
    ))
}

/// No route: 405 with `Allow` when the path exists under other methods, else 404.
#[handler]
pub async fn not_found(req: &mut Request, depot: &mut Depot, res: &mut Response) -> ApiError {
    match state(depot).routes.allowed(req.uri().path()) {
        Some(methods) => {
            if let Ok(v) = salvo::http::HeaderValue::from_str(&methods.join(", ")) {
                res.headers_mut().insert(salvo::http::header::ALLOW, v);
            }
            ApiError::MethodNotAllowed
        }
        None => ApiError::NotFound,
    }
}
