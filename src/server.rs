//! Starting Workboard: the data folder, the lock that keeps a second server off it, the
//! pepper, the two models wired together, the control socket and the HTTP listener.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use read_model::ReadModel;
use salvo::conn::tcp::TcpAcceptor;
use salvo::prelude::*;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use write_model::command::account::live_key_digests;
use write_model::{Clocks, Durability, Effect, Limits, WriteModel, store};

use crate::admin::{Admin, AdminRequest};
use crate::auth::{Caller, KeyCache, Pepper};
use crate::live::Hub;
use crate::state::AppState;

pub const DB_FILE: &str = "workboard.db";
pub const LOCK_FILE: &str = "serve.lock";
pub const CONTROL_SOCKET: &str = "control.sock";
pub const PEPPER_FILE: &str = "pepper";

/// Creates the data folder (0700) and makes every file created after this 0600.
pub fn prepare_data_dir(data: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    // SAFETY: umask only changes this process's file-creation mask.
    unsafe {
        libc::umask(0o077);
    }
    if !data.exists() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(data)?;
    }
    Ok(())
}

/// Takes the data folder's lock; `None` when another process holds it.
pub fn try_lock(data: &Path) -> std::io::Result<Option<File>> {
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(data.join(LOCK_FILE))?;
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(e)) => Err(e),
    }
}

/// Everything a running Workboard is made of.
pub struct Services {
    pub state: Arc<AppState>,
    pub admin: Arc<Admin>,
}

pub fn open(
    data: &Path,
    durability: Durability,
    limits: Limits,
    trust_proxy: bool,
) -> anyhow_like::Result<Services> {
    let db_path = data.join(DB_FILE);
    drop(store::open(&db_path, durability)?);
    let limits = Arc::new(limits);
    let clocks = Arc::new(Clocks::default());
    let read = Arc::new(ReadModel::open(&db_path, clocks.clone(), &limits)?);
    let keys = Arc::new(KeyCache::default());
    let pepper = Arc::new(Pepper::load_or_create(&data.join(PEPPER_FILE))?);
    let saved_allowances = {
        let conn = store::open(&db_path, durability)?;
        for (digest, key_id, account) in live_key_digests(&conn)? {
            keys.insert(&digest, Caller { account, key_id });
        }
        write_model::command::account::saved_allowances(&conn)?
    };
    let hub = Arc::new(Hub::new(limits.sockets_per_account, limits.ticket_seconds));
    // After each commit: the read model first, then the nudges, so a client that reacts to
    // a nudge sees the change; a revoked key stops working before its revoke is answered.
    let sink = {
        let (read, keys, hub) = (read.clone(), keys.clone(), hub.clone());
        Box::new(move |effects: &mut [Effect]| {
            read.apply(effects);
            for effect in effects.iter() {
                match effect {
                    Effect::Records(cs) => hub.notify(&cs.account, cs.stamp),
                    Effect::Key(change) => {
                        keys.apply(change);
                        if let write_model::KeyChange::Revoked { id, .. } = change {
                            hub.revoke(id);
                        }
                    }
                }
            }
        })
    };
    let (write, _writer_thread) = WriteModel::start(&db_path, durability, limits, clocks, sink)?;
    let admin = Arc::new(Admin {
        write: write.clone(),
        read: read.clone(),
        pepper: pepper.clone(),
        db_path,
    });
    let state = Arc::new(AppState::new(
        write,
        read,
        keys,
        pepper,
        trust_proxy,
        saved_allowances,
        hub,
    ));
    Ok(Services { state, admin })
}

/// A minimal boxed error for start-up, where every failure ends the process with a message.
pub mod anyhow_like {
    pub type Error = Box<dyn std::error::Error + Send + Sync>;
    pub type Result<T> = std::result::Result<T, Error>;
}

/// Issues the first key of a new data folder and prints it once on stdout.
pub fn first_key_if_new(services: &Services, db_path: &Path) -> anyhow_like::Result<()> {
    let conn = rusqlite::Connection::open(db_path)?;
    if store::account_ids(&conn)?.is_empty() {
        let (key, account, _) = services.admin.issue_key(None, Some("first key".into()))?;
        println!("key: {key}");
        eprintln!("account: {account}");
    }
    Ok(())
}

/// Serves the interface on `listener` until `shutdown` resolves, then drains in-flight
/// requests.
pub async fn run(
    listener: tokio::net::TcpListener,
    state: Arc<AppState>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    use salvo::fuse::FuseConfig;
    use std::time::Duration;
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
        handle.stop_graceful(std::time::Duration::from_secs(10));
    });
    server.try_serve(crate::http::router(state)).await
}

/// Saves allowance counters every few seconds, so a restart loses at most that much.
pub async fn save_usage_periodically(state: Arc<AppState>) {
    let mut tick = tokio::time::interval(std::time::Duration::from_secs(2));
    loop {
        tick.tick().await;
        state.save_usage().await;
    }
}

/// Drops the documents of accounts nobody read or wrote for ten minutes, so memory follows
/// the active accounts, not all of them.
pub async fn evict_idle_documents(state: Arc<AppState>) {
    let mut tick = tokio::time::interval(std::time::Duration::from_secs(60));
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

/// Binds the control socket (mode 0600); done before the server says it is listening, so a
/// CLI command right after start finds it.
pub fn bind_control(path: &Path) -> std::io::Result<tokio::net::UnixListener> {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::remove_file(path);
    let listener = tokio::net::UnixListener::bind(path)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    Ok(listener)
}

/// Answers the CLI over the control socket while the server runs.
pub async fn serve_control(
    listener: tokio::net::UnixListener,
    admin: Arc<Admin>,
) -> std::io::Result<()> {
    loop {
        let (stream, _) = listener.accept().await?;
        let admin = admin.clone();
        tokio::spawn(async move {
            let (read, mut write) = stream.into_split();
            let mut lines = BufReader::new(read).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let reply = match serde_json::from_str::<AdminRequest>(&line) {
                    Ok(request) => {
                        let admin = admin.clone();
                        tokio::task::spawn_blocking(move || admin.handle(request))
                            .await
                            .unwrap_or(crate::admin::AdminReply::Failed {
                                error: "the operation failed".into(),
                            })
                    }
                    Err(e) => crate::admin::AdminReply::Failed {
                        error: format!("bad request: {e}"),
                    },
                };
                let mut out = serde_json::to_vec(&reply).unwrap_or_default();
                out.push(b'\n');
                if write.write_all(&out).await.is_err() {
                    break;
                }
            }
        });
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
