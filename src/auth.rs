//! Authentication: keys are stored only as HMAC-SHA256(pepper, key); the cache maps digests
//! to their key and account, kept current from the writer's key changes. Also the two
//! address-based throttles: bad keys (401s) and keyless discovery.

use std::net::IpAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use ahash::AHashMap;
use hmac::{Hmac, Mac};
use parking_lot::{Mutex, RwLock};
use sha2::Sha256;
use subtle::ConstantTimeEq;
use write_model::KeyChange;

pub const KEY_PREFIX: &str = "wb_";

/// The secret that keys are hashed with. Its `Debug` never shows it.
pub struct Pepper([u8; 32]);

impl std::fmt::Debug for Pepper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Pepper(<redacted>)")
    }
}

impl Pepper {
    /// Reads the pepper file, creating it (mode 0600) with 32 random bytes if missing.
    pub fn load_or_create(path: &Path) -> std::io::Result<Pepper> {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        if let Ok(bytes) = std::fs::read(path) {
            let arr: [u8; 32] = bytes
                .try_into()
                .map_err(|_| std::io::Error::other("the pepper file is not 32 bytes"))?;
            return Ok(Pepper(arr));
        }
        let mut secret = [0u8; 32];
        getrandom::fill(&mut secret).map_err(|e| std::io::Error::other(e.to_string()))?;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)?;
        f.write_all(&secret)?;
        f.sync_all()?;
        Ok(Pepper(secret))
    }

    pub fn digest(&self, key: &str) -> [u8; 32] {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.0).expect("HMAC takes any key length");
        mac.update(key.as_bytes());
        mac.finalize().into_bytes().into()
    }
}

/// A new key: `wb_` and 43 URL-safe characters (258 bits) from the OS generator.
pub fn new_key() -> String {
    format!("{KEY_PREFIX}{}", write_model::ids::random_token(43))
}

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
        let k = new_key();
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
