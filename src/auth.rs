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
    /// Raised by every revocation: a key read from the store is cached only if no key was
    /// revoked while it was being read (it might have been that one).
    revocations: std::sync::atomic::AtomicU64,
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
                self.revocations
                    .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
                if let Ok(d) = <[u8; 32]>::try_from(digest.as_slice()) {
                    self.by_digest.write().remove(&d);
                }
            }
        }
    }

    /// How many revocations the cache has taken: see [`KeyCache::insert_unless_revoked`].
    pub fn revocations(&self) -> u64 {
        self.revocations.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Caches a key read from the store, unless a revocation came since `revocations` was
    /// read (the key read might be the one revoked).
    pub fn insert_unless_revoked(&self, key: write_model::store::LiveKey, revocations: u64) {
        let mut map = self.by_digest.write();
        if self.revocations() != revocations {
            return;
        }
        if let Ok(d) = <[u8; 32]>::try_from(key.digest.as_slice()) {
            map.insert(
                d,
                Caller {
                    account: key.account,
                    key_id: key.id,
                },
            );
        }
    }

    /// Makes the cache hold exactly `keys` (the store's live keys, after the follower lost
    /// touch with the other nodes for a while); answers the ids of the keys it dropped.
    pub fn replace_all(&self, keys: Vec<write_model::store::LiveKey>) -> Vec<String> {
        let mut fresh = AHashMap::with_capacity(keys.len());
        for key in keys {
            if let Ok(d) = <[u8; 32]>::try_from(key.digest.as_slice()) {
                fresh.insert(
                    d,
                    Caller {
                        account: key.account,
                        key_id: key.id,
                    },
                );
            }
        }
        let mut map = self.by_digest.write();
        self.revocations
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        let dropped = map
            .iter()
            .filter(|(d, _)| !fresh.contains_key(*d))
            .map(|(_, c)| c.key_id.clone())
            .collect();
        *map = fresh;
        dropped
    }

    /// The caller a digest belongs to. The map finds a candidate; the final comparison is
    /// constant-time, so timing tells nothing about how close a guess came.
    pub fn find(&self, digest: &[u8; 32]) -> Option<Caller> {
        let map = self.by_digest.read();
        let (stored, caller) = map.get_key_value(digest)?;
        bool::from(stored.ct_eq(digest)).then(|| caller.clone())
    }
}

/// The part of a client address a throttle counts by: an IPv4 address whole, an IPv6 address
/// by its /64 (one host is usually given a whole /64, so counting single addresses would let
/// it rotate through them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AddressKey {
    V4([u8; 4]),
    V6Prefix([u8; 8]),
    /// Every address past the throttle's capacity, counted together.
    Overflow,
}

impl AddressKey {
    pub fn of(ip: IpAddr) -> AddressKey {
        match ip {
            IpAddr::V4(v4) => AddressKey::V4(v4.octets()),
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => AddressKey::V4(v4.octets()),
                None => {
                    let mut prefix = [0u8; 8];
                    prefix.copy_from_slice(&v6.octets()[..8]);
                    AddressKey::V6Prefix(prefix)
                }
            },
        }
    }
}

/// The most addresses a throttle keeps a window for; past it, new addresses share one
/// window, so a flood of distinct addresses costs bounded memory and is throttled together.
pub const THROTTLE_CAPACITY: usize = 65_536;

/// A fixed-window counter per client address, bounded in memory.
pub struct Throttle {
    limit: u32,
    window: Duration,
    capacity: usize,
    seen: Mutex<AHashMap<AddressKey, (Instant, u32)>>,
}

impl Throttle {
    pub fn new(limit: u32, window: Duration) -> Self {
        Throttle::with_capacity(limit, window, THROTTLE_CAPACITY)
    }

    pub fn with_capacity(limit: u32, window: Duration, capacity: usize) -> Self {
        Throttle {
            limit,
            window,
            capacity,
            seen: Mutex::new(AHashMap::new()),
        }
    }

    /// Counts one event from `ip`; `false` once the window's allowance is spent.
    pub fn allow(&self, ip: IpAddr) -> bool {
        let now = Instant::now();
        let mut seen = self.seen.lock();
        let mut key = AddressKey::of(ip);
        if !seen.contains_key(&key) && seen.len() >= self.capacity {
            seen.retain(|_, (start, _)| now.duration_since(*start) < self.window);
            if seen.len() >= self.capacity {
                key = AddressKey::Overflow;
            }
        }
        let slot = seen.entry(key).or_insert((now, 0));
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
            .get(&AddressKey::of(ip))
            .is_some_and(|(start, n)| now.duration_since(*start) < self.window && *n >= self.limit)
    }

    /// Forgets every window that has ended (run on a timer).
    pub fn sweep(&self) {
        let now = Instant::now();
        let mut seen = self.seen.lock();
        seen.retain(|_, (start, _)| now.duration_since(*start) < self.window);
        if seen.capacity() > 4 * seen.len().max(1024) {
            seen.shrink_to_fit();
        }
    }

    /// How many addresses have a window now.
    pub fn tracked(&self) -> usize {
        self.seen.lock().len()
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
    fn ipv6_addresses_count_by_their_64_and_a_flood_shares_one_window() {
        let t = Throttle::with_capacity(2, Duration::from_secs(60), 4);
        let a: IpAddr = "2001:db8:1:2::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2::ffff".parse().unwrap();
        assert!(t.allow(a) && t.allow(b));
        assert!(!t.allow(a), "one /64 is one address");
        // Past the capacity, new addresses share one window.
        for i in 0..10u8 {
            t.allow(IpAddr::from([10, 0, 0, i]));
        }
        assert!(t.tracked() <= 5);
        assert!(!t.allow(IpAddr::from([10, 0, 1, 1])));
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
