//! The edge under overload and abuse, before a request reaches a route:
//! - connections per client address are capped (an IPv6 /64 counts as one address): past the
//!   cap a new connection is closed at once, so one host cannot take every socket;
//! - the timeouts of a connection (its head, its idleness, a stalled write, gaps in a body);
//! - the process's open-files limit raised to what the system allows.
//!
//! A request body must also arrive in time; that deadline is the body reader's
//! (`http::common::body`), which answers 408.

use std::sync::Arc;
use std::time::Duration;

use ahash::AHashMap;
use parking_lot::Mutex;
use salvo::conn::ConnCtrl;
use salvo::fuse::{ArcConnObserver, ConnObserver, FuseAction, FuseConfig, FuseInfo, FusePolicy};

use crate::auth::AddressKey;

/// How long a client may take to send a request's head.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// The connection timeouts every connection gets (WebSocket upgrades relax them; the socket
/// pings instead).
pub fn fuse_config(body_seconds: u32) -> FuseConfig {
    FuseConfig::default()
        .with_http1_header_timeout(HEADER_TIMEOUT)
        .with_connection_idle_timeout(Duration::from_secs(120))
        .with_write_stall_timeout(Duration::from_secs(30))
        // A body whose frames stop coming for as long as a whole small body may take.
        .with_request_body_timeout(Duration::from_secs(u64::from(body_seconds.max(1))))
}

/// Admits connections while their address holds fewer than the cap; each admitted
/// connection holds a slot until it closes.
pub struct ConnectionLimits {
    config: FuseConfig,
    cap: usize,
    open: Arc<Mutex<AHashMap<AddressKey, usize>>>,
    /// Behind a trusted proxy every connection comes from the proxy: no cap applies (the
    /// proxy is the one to cap its clients).
    enforced: bool,
}

impl ConnectionLimits {
    pub fn new(config: FuseConfig, cap: usize, enforced: bool) -> Self {
        ConnectionLimits {
            config,
            cap,
            open: Arc::default(),
            enforced,
        }
    }
}

#[salvo::async_trait]
impl FusePolicy for ConnectionLimits {
    async fn decide(&self, info: &FuseInfo) -> FuseAction {
        if !self.enforced {
            return FuseAction::Accept(self.config);
        }
        let Some(ip) = info.remote_addr.ip() else {
            return FuseAction::Accept(self.config);
        };
        let mut open = self.open.lock();
        let held = open.entry(AddressKey::of(ip)).or_insert(0);
        if *held >= self.cap {
            return FuseAction::Reject;
        }
        *held += 1;
        FuseAction::Accept(self.config)
    }

    fn observe(&self, info: &FuseInfo, _ctrl: &ConnCtrl) -> Option<ArcConnObserver> {
        let ip = info.remote_addr.ip().filter(|_| self.enforced)?;
        Some(Arc::new(Slot {
            open: self.open.clone(),
            key: AddressKey::of(ip),
        }))
    }
}

/// An admitted connection's place in its address's count, given back when it closes.
struct Slot {
    open: Arc<Mutex<AHashMap<AddressKey, usize>>>,
    key: AddressKey,
}

impl ConnObserver for Slot {}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self.open.lock();
        if let Some(held) = open.get_mut(&self.key) {
            *held = held.saturating_sub(1);
            if *held == 0 {
                open.remove(&self.key);
            }
        }
    }
}

/// Raises the process's open-files soft limit to its hard limit, so a burst of clients meets
/// the cap per address before it meets the process's own limit. Answers the limit in force.
pub fn raise_open_files_limit() -> std::io::Result<u64> {
    // SAFETY: getrlimit and setrlimit only read and write the struct they are given.
    unsafe {
        let mut limit: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max;
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(limit.rlim_cur as u64)
    }
}
