//! A node's state, as one typed struct: the two models, the key cache, the pepper, limits,
//! throttles and allowances, the socket hub, metrics and the store. Request handlers reach it
//! through the HTTP layer's state (`http::Shared`), and the node's chores (saving usage,
//! evicting documents, ...) hold it directly. It knows nothing of HTTP: this module imports
//! no module of `http/`.

use std::sync::Arc;
use std::time::Duration;

use read_model::ReadModel;
use write_model::ids::KeyId;
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
    pub trust_proxy: bool,
    pub allowances: Allowances,
    pub hub: Arc<crate::live::Hub>,
    pub metrics: Arc<crate::metrics::Metrics>,
    /// The store, for what the state asks of it directly (a shared store's allowance totals).
    pub store: Arc<dyn write_model::store::Store>,
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
    pub store: Arc<dyn write_model::store::Store>,
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
            store,
        } = parts;
        let limits = write.limits().clone();
        AppState {
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
            trust_proxy,
            metrics,
            store,
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
                last_used: last_used
                    .iter()
                    .map(|(key, at)| (KeyId::named(key.as_str()), *at))
                    .collect(),
            },
        };
        if let Err(e) = self.submit(request).await {
            tracing::warn!(error = %e, "allowance counters could not be saved; retrying later");
            self.allowances.restore_unsaved(allowances, last_used);
            return;
        }
        // On a shared store, the totals come back with every node's counts in them.
        if let Some(store) = self.store.clone().shared()
            && !allowances.is_empty()
        {
            let keys: Vec<String> = allowances.into_iter().map(|r| r.key_id).collect();
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
