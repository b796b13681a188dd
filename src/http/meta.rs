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
                let mut methods: Vec<String> = ops
                    .as_object()
                    .map(|o| o.keys().map(|m| m.to_uppercase()).collect())
                    .unwrap_or_default();
                // Every GET route answers HEAD too (the document lists the GET only).
                if methods.iter().any(|m| m == "GET") {
                    methods.push("HEAD".to_owned());
                }
                (segments, methods)
            })
            .collect();
        RouteTable { routes }
    }

    /// Every route's template (`/api/v1/tasks/{id}`), and the web client's.
    pub fn templates(&self) -> Vec<String> {
        let mut all: Vec<String> = self
            .routes
            .iter()
            .map(|(segments, _)| format!("/{}", segments.join("/")))
            .collect();
        all.extend(["/".to_owned(), "/assets/{**path}".to_owned()]);
        all
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
