//! Authentication: keys are stored only as HMAC-SHA256(pepper, key); the cache maps digests
//! to their key and account, kept current from the writer's key changes. Also the two
//! address-based throttles: bad keys (401s) and keyless discovery.

use std::net::IpAddr;
use std::time::{Duration, Instant};

use ahash::AHashMap;
use parking_lot::{Mutex, RwLock};
use subtle::ConstantTimeEq;
use write_model::KeyChange;

pub const KEY_PREFIX: &str = "wb_";

/// Who a valid key belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub account: String,
    pub key_id: String,
}

/// Live keys by digest.
#[derive(Default)]
pub struct KeyCache {
    by_digest: RwLock<AHashMap<[u8; 32], Caller>>,
}

impl KeyCache {
    pub fn insert(&self, digest: &[u8], caller: Caller) {
        if let Ok(d) = <[u8; 32]>::try_from(digest) {
            self.by_digest.write().insert(d, caller);
        }
    }

    pub fn apply(&self, change: &KeyChange) {
        match change {
            KeyChange::Issued {
                id,
                account,
                digest,
            } => self.insert(
                digest,
                Caller {
                    account: account.clone(),
                    key_id: id.clone(),
                },
            ),
            KeyChange::Revoked { digest, .. } => {
                if let Ok(d) = <[u8; 32]>::try_from(digest.as_slice()) {
                    self.by_digest.write().remove(&d);
                }
            }
        }
    }

    /// The caller a digest belongs to. The map finds a candidate; the final comparison is
    /// constant-time, so timing tells nothing about how close a guess came.
    pub fn find(&self, digest: &[u8; 32]) -> Option<Caller> {
        let map = self.by_digest.read();
        let (stored, caller) = map.get_key_value(digest)?;
        bool::from(stored.ct_eq(digest)).then(|| caller.clone())
    }
}

/// A fixed-window counter per client address.
pub struct Throttle {
    limit: u32,
    window: Duration,
    seen: Mutex<AHashMap<IpAddr, (Instant, u32)>>,
}

impl Throttle {
    pub fn new(limit: u32, window: Duration) -> Self {
        Throttle {
            limit,
            window,
            seen: Mutex::new(AHashMap::new()),
        }
    }

    /// Counts one event from `ip`; `false` once the window's allowance is spent.
    pub fn allow(&self, ip: IpAddr) -> bool {
        let now = Instant::now();
        let mut seen = self.seen.lock();
        if seen.len() > 10_000 {
            seen.retain(|_, (start, _)| now.duration_since(*start) < self.window);
        }
        let slot = seen.entry(ip).or_insert((now, 0));
        if now.duration_since(slot.0) >= self.window {
            *slot = (now, 0);
        }
        if slot.1 >= self.limit {
            return false;
        }
        slot.1 += 1;
        true
    }

    /// Whether `ip` has spent the window's allowance, without counting.
    pub fn exhausted(&self, ip: IpAddr) -> bool {
        let now = Instant::now();
        self.seen
            .lock()
            .get(&ip)
            .is_some_and(|(start, n)| now.duration_since(*start) < self.window && *n >= self.limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_have_the_contract_format() {
        let k = crate::pepper::new_key();
        assert!(k.starts_with("wb_") && k.len() == 46);
        assert!(
            k[3..]
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        );
    }

    #[test]
    fn throttle_counts_per_window() {
        let t = Throttle::new(2, Duration::from_secs(60));
        let ip: IpAddr = "127.0.0.1".parse().unwrap();
        assert!(t.allow(ip) && t.allow(ip));
        assert!(!t.allow(ip));
        assert!(t.exhausted(ip));
        assert!(t.allow("127.0.0.2".parse().unwrap()));
    }
}
