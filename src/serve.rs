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

/// Serves `node` on `listener` (and the operator's `control` socket, if given) until
/// `shutdown` resolves; then drains in-flight requests, saves the allowance counters and
/// folds the store's log, so a restart finds everything acknowledged in place.
pub async fn run(
    node: Node,
    listener: tokio::net::TcpListener,
    control: Option<tokio::net::UnixListener>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let state = node.state.clone();
    let chores = [
        tokio::spawn(save_usage_periodically(state.clone())),
        tokio::spawn(evict_idle_documents(state.clone())),
    ];
    let control = control.map(|c| tokio::spawn(crate::control::serve(c, node.admin.clone())));
    let served = serve_http(listener, state.clone(), shutdown).await;
    for chore in chores {
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

/// The HTTP side: serves the route tree until `shutdown`, then closes every socket and
/// gives in-flight requests ten seconds to finish.
async fn serve_http(
    listener: tokio::net::TcpListener,
    state: Arc<AppState>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    use salvo::fuse::FuseConfig;
    // Replies go out as chains of buffers; without TCP_NODELAY the second segment waits for
    // the client's delayed ACK (about 40 ms). Accepted sockets inherit it from the listener.
    set_nodelay(&listener)?;
    let acceptor = TcpAcceptor::try_from(listener)?;
    // Slow and idle clients time out; WebSocket upgrades relax these (the socket pings).
    let fuse = FuseConfig::default()
        .with_http1_header_timeout(Duration::from_secs(10))
        .with_connection_idle_timeout(Duration::from_secs(120))
        .with_write_stall_timeout(Duration::from_secs(30))
        .with_request_body_timeout(Duration::from_secs(60));
    let mut server = Server::new(acceptor).fuse_config(fuse);
    // Request heads (request line, URL and headers) are capped at 64 KiB.
    server.http1_mut().max_buf_size(64 * 1024);
    let handle = server.handle();
    let hub = state.hub.clone();
    tokio::spawn(async move {
        shutdown.await;
        hub.close_all();
        handle.stop_graceful(Duration::from_secs(10));
    });
    server.try_serve(crate::http::router(state)).await
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
