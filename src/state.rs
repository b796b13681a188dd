//! The state every request handler shares, as one typed struct.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use read_model::ReadModel;
use write_model::{Limits, Outcome, Request, WriteError, WriteModel};

use crate::allowance::Allowances;
use crate::auth::{KeyCache, Throttle};
use crate::pepper::Pepper;

pub struct AppState {
    pub write: WriteModel,
    pub read: Arc<ReadModel>,
    pub keys: Arc<KeyCache>,
    pub pepper: Arc<Pepper>,
    pub limits: Arc<Limits>,
    /// Bad-key replies per client address.
    pub bad_keys: Throttle,
    /// Keyless discovery requests per client address.
    pub discovery: Throttle,
    /// The discovery document, rendered once.
    pub discovery_doc: Bytes,
    /// The OpenAPI document, rendered once.
    pub openapi_doc: Bytes,
    /// Its routes, to answer 405 for a known path under another method.
    pub routes: crate::http::RouteTable,
    pub trust_proxy: bool,
    pub allowances: Allowances,
    pub hub: Arc<crate::live::Hub>,
    pub metrics: Arc<crate::metrics::Metrics>,
    /// The store, for what the state asks of it directly (a shared store's allowance totals).
    pub store: Arc<dyn write_model::store::Store>,
    /// The origins browser apps may call the interface from.
    pub cors: crate::http::cors::Cors,
    /// The budget for bytes held in request bodies, process-wide, and the slots that parse
    /// large ones.
    pub bodies: std::sync::Arc<crate::http::body::Bodies>,
    /// The idempotency keys whose writes this node is running.
    pub idempotency: crate::http::idempotency::InFlight,
}

/// What a node's state is made from.
pub struct Parts {
    pub write: WriteModel,
    pub read: Arc<ReadModel>,
    pub keys: Arc<KeyCache>,
    pub pepper: Arc<Pepper>,
    pub trust_proxy: bool,
    pub saved_allowances: Vec<write_model::store::AllowanceRow>,
    pub hub: Arc<crate::live::Hub>,
    pub metrics: Arc<crate::metrics::Metrics>,
    /// The OpenAPI document, rendered once.
    pub openapi: String,
    pub store: Arc<dyn write_model::store::Store>,
    /// `--cors-origin`: the origins browser apps may call the interface from.
    pub cors_origins: Vec<String>,
}

impl AppState {
    pub fn new(parts: Parts) -> Self {
        let Parts {
            write,
            read,
            keys,
            pepper,
            trust_proxy,
            saved_allowances,
            hub,
            metrics,
            openapi,
            store,
            cors_origins,
        } = parts;
        let limits = write.limits().clone();
        let cors = crate::http::cors::Cors::new(&cors_origins);
        let discovery_doc = Bytes::from(
            crate::discovery::discovery_document(&limits, store.engine(), cors.origins())
                .to_string(),
        );
        AppState {
            bodies: crate::http::body::Bodies::new(limits.body_budget_bytes),
            idempotency: Default::default(),
            bad_keys: Throttle::new(limits.bad_key_burst, Duration::from_secs(10)),
            discovery: Throttle::new(
                limits.discovery_burst,
                Duration::from_secs(u64::from(limits.discovery_burst_seconds)),
            ),
            hub,
            allowances: Allowances::new(
                limits.reads_per_day,
                limits.writes_per_day,
                saved_allowances,
            ),
            write,
            read,
            keys,
            pepper,
            limits,
            discovery_doc,
            routes: crate::http::RouteTable::from_openapi(&openapi),
            openapi_doc: Bytes::from(openapi),
            trust_proxy,
            metrics,
            store,
            cors,
        }
    }

    /// Saves allowance counters and last-use times changed since the last save.
    pub async fn save_usage(&self) {
        let (allowances, last_used) = self.allowances.take_unsaved();
        if allowances.is_empty() && last_used.is_empty() {
            return;
        }
        let request = Request {
            account: None,
            key_id: None,
            command: write_model::Command::SaveUsage {
                allowances: allowances.clone(),
                last_used: last_used.clone(),
            },
        };
        if let Err(e) = self.submit(request).await {
            tracing::warn!(error = %e, "allowance counters could not be saved; retrying later");
            self.allowances.restore_unsaved(allowances, last_used);
            return;
        }
        // On a shared store, the totals come back with every node's counts in them.
        if self.store.is_shared() && !allowances.is_empty() {
            let keys: Vec<String> = allowances.into_iter().map(|r| r.key_id).collect();
            let store = self.store.clone();
            match tokio::task::spawn_blocking(move || store.allowances(&keys)).await {
                Ok(Ok(saved)) => self.allowances.refresh(saved),
                Ok(Err(e)) => tracing::warn!(error = %e, "allowance totals could not be read"),
                Err(e) => tracing::warn!(error = %e, "allowance totals could not be read"),
            }
        }
    }

    /// Sends a command to the writer and waits, without blocking the async worker, until it
    /// is committed and visible to reads.
    pub async fn submit(&self, request: Request) -> Result<Outcome, WriteError> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.write.submit(
            request,
            Box::new(move |r| {
                let _ = tx.send(r);
            }),
        );
        rx.await.unwrap_or_else(|_| Err(self.write.gone()))
    }
}
