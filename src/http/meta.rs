//! Routes about the service itself: health, the discovery document, and not-found.

use salvo::http::StatusCode;
use salvo::prelude::*;
use serde_json::json;

use super::reply::{ApiError, Reply, send, send_chunks};
use super::{Credentials, admit, client_ip, credentials, state};
use crate::http::common::no_query;

#[handler]
pub async fn health(req: &mut Request, res: &mut Response) {
    send(
        res,
        no_query(req).map(|_| Reply::json(StatusCode::OK, &json!({"ok": true, "mode": "normal"}))),
    );
}

/// The discovery document: keyless within a burst limit per address, or with a valid key.
#[handler]
pub async fn discovery(req: &mut Request, depot: &mut Depot, res: &mut Response) {
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
    send_chunks(res, StatusCode::OK, vec![state.discovery_doc.clone()]);
}

#[handler]
pub async fn not_found(res: &mut Response) {
    send(res, Err(ApiError::NotFound));
}
