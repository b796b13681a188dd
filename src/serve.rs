//! Serving a node: the HTTP listener with its timeouts, the control socket, the periodic
//! chores (saving allowance counters, dropping idle documents), and a clean stop that loses
//! nothing acknowledged.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use salvo::conn::tcp::TcpAcceptor;
use salvo::prelude::*;

use crate::node::Node;
use crate::state::AppState;

/// Where a node listens.
pub struct Listeners {
    /// The interface.
    pub http: tokio::net::TcpListener,
    /// `GET /metrics`, apart from the interface so that it is never exposed with it.
    pub metrics: Option<tokio::net::TcpListener>,
    /// The operator's control socket.
    pub control: Option<tokio::net::UnixListener>,
}

impl Listeners {
    /// Only the interface (tests and benches).
    pub fn http(http: tokio::net::TcpListener) -> Self {
        Listeners {
            http,
            metrics: None,
            control: None,
        }
    }
}

/// Serves `node` on its listeners until `shutdown` resolves; then drains in-flight
/// requests, saves the allowance counters and folds the store's log, so a restart finds
/// everything acknowledged in place.
pub async fn run(
    node: Node,
    listeners: Listeners,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let Listeners {
        http: listener,
        metrics,
        control,
    } = listeners;
    let state = node.state.clone();
    let metrics = metrics.map(|m| {
        let node = node.clone();
        tokio::spawn(async move {
            if let Err(e) = serve_metrics(m, node).await {
                tracing::error!(error = %e, "the metrics listener stopped");
            }
        })
    });
    let chores = [
        tokio::spawn(save_usage_periodically(state.clone())),
        tokio::spawn(evict_idle_documents(state.clone())),
        tokio::spawn(recheck_while_read_only(state.clone())),
        tokio::spawn(sweep_throttles(state.clone())),
        tokio::spawn(expire_keys(state.clone())),
        tokio::spawn(settle_search_indexes(state.clone())),
    ];
    let control = control.map(|c| tokio::spawn(crate::control::serve(c, node.admin.clone())));
    // On a store other nodes share, this node follows what they commit.
    let following = match node.store.clone().shared() {
        Some(shared) => Some(
            crate::follow::Follower {
                store: shared,
                read: state.read.clone(),
                keys: state.keys.clone(),
                hub: state.hub.clone(),
                clocks: node.clocks.clone(),
            }
            .start()?,
        ),
        None => None,
    };
    let served = serve_http(listener, node.http.clone(), shutdown).await;
    // Stops the follower (joining its thread, within a round) off the async workers.
    let _ = tokio::task::spawn_blocking(move || drop(following)).await;
    for chore in chores.into_iter().chain(metrics) {
        chore.abort();
    }
    if let Some(control) = control {
        control.abort();
    }
    // Nothing acknowledged is lost: the counters are saved, the log folded into the store.
    state.save_usage().await;
    let write = state.write.clone();
    let fold = write_model::Request {
        account: None,
        key_id: None,
        command: write_model::Command::Checkpoint,
    };
    if let Ok(Err(e)) = tokio::task::spawn_blocking(move || write.execute_blocking(fold)).await {
        tracing::warn!(error = %e, "the store could not be checkpointed");
    }
    tracing::info!("stopped");
    served
}

/// The most bytes a request head may take (request line, headers, line ends), as the README
/// states.
pub const MAX_HEAD_BYTES: usize = 64 * 1024;

/// The HTTP side: serves the route tree until `shutdown`, then closes every socket and
/// gives in-flight requests ten seconds to finish.
async fn serve_http(
    listener: tokio::net::TcpListener,
    state: Arc<crate::http::Shared>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    // Replies go out as chains of buffers; without TCP_NODELAY the second segment waits for
    // the client's delayed ACK (about 40 ms). Accepted sockets inherit it from the listener.
    set_nodelay(&listener)?;
    let acceptor = TcpAcceptor::try_from(listener)?;
    let limits = &state.limits;
    let policy = crate::edge::ConnectionLimits::new(
        crate::edge::fuse_config(limits.body_seconds),
        limits.connections_per_address,
        !state.trust_proxy,
    );
    let mut server = Server::new(acceptor).fuse_policy(policy);
    // Request heads (request line, URL and headers, with their line ends) are capped at
    // exactly 64 KiB: `max_header_size` counts the parsed head, where `max_buf_size` alone
    // bounds a read buffer that may grow past it before it is checked (heads up to 128 KiB
    // got through). Past the cap, and on a request line that does not parse, hyper itself
    // answers (431 or 400, no body) and closes: it offers no hook to write that reply.
    server
        .http1_mut()
        .max_buf_size(64 * 1024)
        .max_header_size(MAX_HEAD_BYTES);
    let handle = server.handle();
    let hub = state.hub.clone();
    tokio::spawn(async move {
        shutdown.await;
        hub.close_all();
        handle.stop_graceful(Duration::from_secs(10));
    });
    server
        .try_serve(crate::http::router(state, crate::web::router()))
        .await
}

/// Serves `GET /metrics` (the Prometheus text format, no key) on a listener of its own.
async fn serve_metrics(listener: tokio::net::TcpListener, node: Node) -> std::io::Result<()> {
    let (state, store) = (node.state.clone(), node.store.clone());
    let gauges = crate::metrics::Gauges {
        writer_queue_depth: {
            let write = state.write.clone();
            Box::new(move || write.queued() as u64)
        },
        accounts_loaded: {
            let read = state.read.clone();
            Box::new(move || read.loaded() as u64)
        },
        live_sockets: {
            let hub = state.hub.clone();
            Box::new(move || hub.open() as u64)
        },
        store_bytes: Box::new(move || store.size_bytes().unwrap_or(0)),
        writer_up: {
            let write = state.write.clone();
            Box::new(move || u64::from(write.stopped().is_none()))
        },
    };
    let registry = Arc::new(crate::metrics::registry(state.metrics.clone(), gauges));
    let router = Router::with_path("metrics").get(MetricsRoute(registry));
    let acceptor = TcpAcceptor::try_from(listener)?;
    Server::new(acceptor).try_serve(router).await
}

/// The scrape: the registry encoded when asked.
struct MetricsRoute(Arc<prometheus_client::registry::Registry>);

#[salvo::async_trait]
impl Handler for MetricsRoute {
    async fn handle(&self, _: &mut Request, _: &mut Depot, res: &mut Response, _: &mut FlowCtrl) {
        use salvo::http::{HeaderValue, header};
        let registry = self.0.clone();
        let text = tokio::task::spawn_blocking(move || crate::metrics::render(&registry))
            .await
            .unwrap_or_default();
        res.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/openmetrics-text; version=1.0.0; charset=utf-8"),
        );
        res.render(text);
    }
}

/// Saves allowance counters every few seconds, so a restart loses at most that much.
async fn save_usage_periodically(state: Arc<AppState>) {
    let mut tick = tokio::time::interval(Duration::from_secs(2));
    loop {
        tick.tick().await;
        state.save_usage().await;
    }
}

/// Drops the documents of accounts nobody read or wrote for ten minutes, so memory follows
/// the active accounts, not all of them.
async fn evict_idle_documents(state: Arc<AppState>) {
    let mut tick = tokio::time::interval(Duration::from_secs(60));
    loop {
        tick.tick().await;
        let dropped = state.read.evict_idle(10 * 60 * 1000);
        if dropped > 0 {
            tracing::debug!(dropped, "idle account documents dropped");
        }
    }
}

/// Indexes, off the writer and the request path, what accounts wrote since their last
/// search once they have been quiet for a few seconds, so the next search finds the index
/// current (and the index on disk outlives a restart current).
async fn settle_search_indexes(state: Arc<AppState>) {
    let mut tick = tokio::time::interval(Duration::from_secs(5));
    loop {
        tick.tick().await;
        let read = state.read.clone();
        let _ = tokio::task::spawn_blocking(move || read.settle_search(5_000)).await;
    }
}

/// While the store cannot take writes (a full disk), tries a tiny write every two seconds,
/// so health returns to `normal` by itself once there is room again.
async fn recheck_while_read_only(state: Arc<AppState>) {
    let mut tick = tokio::time::interval(Duration::from_secs(2));
    loop {
        tick.tick().await;
        if state.write.read_only() {
            let probe = write_model::Request {
                account: None,
                key_id: None,
                command: write_model::Command::Probe,
            };
            if state.submit(probe).await.is_ok() {
                tracing::info!("the store takes writes again");
            }
        }
    }
}

/// Forgets the address throttles' windows that have ended, so their memory follows the
/// addresses of the last window only.
async fn sweep_throttles(state: Arc<AppState>) {
    let mut tick = tokio::time::interval(Duration::from_secs(10));
    loop {
        tick.tick().await;
        state.bad_keys.sweep();
        state.discovery.sweep();
    }
}

/// Every second, takes off the keys whose expiry has passed: their unused tickets die and
/// their open sockets close with 4401, as on a revoke. (A request with an expired key is
/// refused from the moment itself; this is for what outlives a request.)
async fn expire_keys(state: Arc<AppState>) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tick.tick().await;
        for key_id in state.keys.expire(write_model::clock::wall_ms()) {
            tracing::info!(key = %key_id, "a key expired");
            state.hub.revoke(&key_id);
        }
    }
}

fn set_nodelay(listener: &tokio::net::TcpListener) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let on: libc::c_int = 1;
    // SAFETY: a valid socket descriptor and a c_int option of the right size.
    let rc = unsafe {
        libc::setsockopt(
            listener.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_NODELAY,
            (&on as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Resolves on SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).expect("SIGTERM can be watched");
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}
