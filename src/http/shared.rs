//! What every request handler shares, [`Shared`]: the node's state
//! ([`crate::state::AppState`], which knows nothing of HTTP) and what the HTTP layer keeps
//! beside it: the discovery and OpenAPI documents as rendered once, the route table, the
//! origins CORS allows, the body budget and the idempotency keys in flight. Each request
//! finds it in its depot ([`state`]), and the authenticated caller beside it ([`caller`]).
//!
//! This module imports only the leaves of `http/` that define what it holds, never a
//! handler, so nothing it imports imports it back.

use std::ops::Deref;
use std::sync::Arc;

use bytes::Bytes;
use salvo::prelude::*;

use super::body::Bodies;
use super::cors::Cors;
use super::in_flight::InFlight;
use super::route_table::RouteTable;
use crate::auth::Caller;
use crate::state::AppState;

pub struct Shared {
    node: Arc<AppState>,
    /// The discovery document, rendered once.
    pub discovery_doc: Bytes,
    /// The OpenAPI document, rendered once.
    pub openapi_doc: Bytes,
    /// Its routes, to answer 405 for a known path under another method.
    pub routes: RouteTable,
    /// The origins browser apps may call the interface from.
    pub cors: Cors,
    /// The budget for bytes held in request bodies, process-wide, and the slots that parse
    /// large ones.
    pub bodies: Arc<Bodies>,
    /// The idempotency keys whose writes this node is running.
    pub idempotency: InFlight,
}

impl Shared {
    /// The HTTP layer over `node`: `openapi` and `discovery` are the documents as served,
    /// `cors` the origins allowed.
    pub fn new(node: Arc<AppState>, openapi: String, discovery: String, cors: Cors) -> Self {
        Shared {
            bodies: Bodies::new(node.limits.body_budget_bytes),
            idempotency: InFlight::default(),
            routes: RouteTable::from_openapi(&openapi),
            openapi_doc: Bytes::from(openapi),
            discovery_doc: Bytes::from(discovery),
            cors,
            node,
        }
    }
}

/// A handler reaches the node's parts (`state.write`, `state.read`, ...) through the HTTP
/// layer's state, as if they were one.
impl Deref for Shared {
    type Target = AppState;

    fn deref(&self) -> &AppState {
        &self.node
    }
}

/// Puts the shared state in every request's depot.
pub struct WithState(pub Arc<Shared>);

#[async_trait]
impl Handler for WithState {
    async fn handle(
        &self,
        req: &mut Request,
        depot: &mut Depot,
        res: &mut Response,
        ctrl: &mut FlowCtrl,
    ) {
        depot.insert_typed(self.0.clone());
        ctrl.call_next(req, depot, res).await;
    }
}

/// The shared state, from a request's depot.
pub fn state(depot: &Depot) -> Arc<Shared> {
    depot
        .get_typed::<Arc<Shared>>()
        .expect("the state hoop runs first")
        .clone()
}

/// The key's caller, put in the depot by the hoops.
pub fn caller(depot: &Depot) -> Caller {
    depot
        .get_typed::<Caller>()
        .expect("the authentication hoop runs first")
        .clone()
}
