//! The live socket: single-use tickets ([`crate::tickets`]), and per account a `watch` channel the writer's sink
//! nudges after each change is visible. A watch holds only the latest stamp, so nudges
//! coalesce and a slow socket never holds up a write; each socket task sends at its own pace.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use ahash::AHashMap;
use parking_lot::Mutex;
use salvo::websocket::{Message, WebSocket};
use tokio::sync::watch;

/// Close codes the socket may end with.
pub const CLOSE_REVOKED: u16 = 4401;
pub const CLOSE_GOING_AWAY: u16 = 1001;

const PING_EVERY: Duration = Duration::from_secs(30);
/// A socket that cannot take a frame within this long is dropped.
const SEND_TIMEOUT: Duration = Duration::from_secs(10);

struct Socket {
    account: String,
    key_id: String,
    close: watch::Sender<Option<u16>>,
}

pub struct Hub {
    nudges: Mutex<AHashMap<String, watch::Sender<i64>>>,
    tickets: crate::tickets::Tickets,
    sockets: Mutex<AHashMap<u64, Socket>>,
    next_socket: AtomicU64,
    per_account: usize,
    ticket_ms: i64,
}

/// A connected socket's subscription; dropping it unregisters the socket.
pub struct Subscription {
    hub: Arc<Hub>,
    id: u64,
    pub nudges: watch::Receiver<i64>,
    pub close: watch::Receiver<Option<u16>>,
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.hub.sockets.lock().remove(&self.id);
    }
}

impl Hub {
    pub fn new(per_account: usize, ticket_seconds: u32, tickets: crate::tickets::Tickets) -> Self {
        Hub {
            nudges: Mutex::default(),
            tickets,
            sockets: Mutex::default(),
            next_socket: AtomicU64::new(1),
            per_account,
            ticket_ms: i64::from(ticket_seconds) * 1000,
        }
    }

    fn open_sockets(&self, account: &str) -> usize {
        self.sockets
            .lock()
            .values()
            .filter(|s| s.account == account)
            .count()
    }

    /// Tells every socket of the account that something changed at `stamp`.
    pub fn notify(&self, account: &str, stamp: i64) {
        if let Some(tx) = self.nudges.lock().get(account) {
            tx.send_replace(stamp);
        }
    }

    /// A ticket good for one socket within the ticket lifetime, and never past `key_expires_at`
    /// (the key's own expiry); `None` when the account has its maximum of open sockets on
    /// this node. It may block on a shared store.
    pub fn issue_ticket(
        &self,
        account: &str,
        key_id: &str,
        now_ms: i64,
        key_expires_at: Option<i64>,
    ) -> Result<Option<(String, i64)>, write_model::WriteError> {
        if self.open_sockets(account) >= self.per_account {
            return Ok(None);
        }
        let expires_at = (now_ms + self.ticket_ms).min(key_expires_at.unwrap_or(i64::MAX));
        let ticket = self.tickets.issue(account, key_id, expires_at, now_ms)?;
        Ok(Some((ticket, expires_at)))
    }

    /// Whether a ticket would be accepted now, without using it up (it may block).
    pub fn ticket_is_good(
        &self,
        ticket: &str,
        now_ms: i64,
    ) -> Result<bool, write_model::WriteError> {
        self.tickets.is_good(ticket, now_ms)
    }

    /// Uses a ticket up: the account and key it was issued to, if it is still good (it may
    /// block).
    pub fn redeem(
        &self,
        ticket: &str,
        now_ms: i64,
    ) -> Result<Option<(String, String)>, write_model::WriteError> {
        self.tickets.redeem(ticket, now_ms)
    }

    /// Registers a socket; `None` when the account is at its maximum. The count and the
    /// insert happen under one lock, so sockets opening at once cannot pass the cap together.
    pub fn subscribe(self: &Arc<Self>, account: &str, key_id: &str) -> Option<Subscription> {
        let mut sockets = self.sockets.lock();
        if sockets.values().filter(|s| s.account == account).count() >= self.per_account {
            return None;
        }
        let nudges = self
            .nudges
            .lock()
            .entry(account.to_owned())
            .or_insert_with(|| watch::channel(0).0)
            .subscribe();
        let (close_tx, close) = watch::channel(None);
        let id = self.next_socket.fetch_add(1, Ordering::Relaxed);
        sockets.insert(
            id,
            Socket {
                account: account.to_owned(),
                key_id: key_id.to_owned(),
                close: close_tx,
            },
        );
        drop(sockets);
        Some(Subscription {
            hub: self.clone(),
            id,
            nudges,
            close,
        })
    }

    /// The accounts with a socket open on this node.
    pub fn accounts(&self) -> Vec<String> {
        let mut accounts: Vec<String> = self
            .sockets
            .lock()
            .values()
            .map(|s| s.account.clone())
            .collect();
        accounts.sort_unstable();
        accounts.dedup();
        accounts
    }

    /// The stamp of the account's last nudge on this node (0: none yet).
    pub fn last_nudge(&self, account: &str) -> i64 {
        self.nudges.lock().get(account).map_or(0, |tx| *tx.borrow())
    }

    /// Open sockets, for the metrics.
    pub fn open(&self) -> usize {
        self.sockets.lock().len()
    }

    /// A revoked or expired key's tickets die and its sockets close with 4401.
    pub fn revoke(&self, key_id: &str) {
        self.tickets.revoke(key_id);
        for s in self.sockets.lock().values().filter(|s| s.key_id == key_id) {
            s.close.send_replace(Some(CLOSE_REVOKED));
        }
    }

    /// Every socket gets a close frame (shutdown).
    pub fn close_all(&self) {
        for s in self.sockets.lock().values() {
            s.close.send_replace(Some(CLOSE_GOING_AWAY));
        }
    }
}

/// Serves one socket until it closes, is revoked, fails to keep up, or stops answering.
pub async fn serve_socket(mut ws: WebSocket, mut sub: Subscription) {
    let mut ping = tokio::time::interval(PING_EVERY);
    ping.tick().await;
    let mut awaiting_pong = false;
    // The subscription saw the value current when it was made (before the upgrade was
    // answered); a nudge sent since, while this task was starting, is still to be sent.
    loop {
        tokio::select! {
            incoming = ws.recv() => match incoming {
                None | Some(Err(_)) => break,
                Some(Ok(m)) if m.is_close() => break,
                Some(Ok(m)) if m.is_pong() => awaiting_pong = false,
                Some(Ok(_)) => {}
            },
            changed = sub.nudges.changed() => {
                if changed.is_err() {
                    break;
                }
                let at = *sub.nudges.borrow_and_update();
                let text = format!("{{\"type\":\"changed\",\"at\":{at}}}");
                if !send(&mut ws, Message::text(text)).await {
                    break;
                }
            }
            _ = ping.tick() => {
                if awaiting_pong || !send(&mut ws, Message::ping(Vec::new())).await {
                    break;
                }
                awaiting_pong = true;
            }
            _ = sub.close.changed() => {
                let code = sub.close.borrow().unwrap_or(CLOSE_GOING_AWAY);
                let reason = if code == CLOSE_REVOKED { "key revoked or expired" } else { "server stopping" };
                let _ = send(&mut ws, Message::close_with(code, reason)).await;
                break;
            }
        }
    }
}

async fn send(ws: &mut WebSocket, message: Message) -> bool {
    matches!(
        tokio::time::timeout(SEND_TIMEOUT, ws.send(message)).await,
        Ok(Ok(()))
    )
}
