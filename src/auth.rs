//! Authentication: keys are stored only as HMAC-SHA256(pepper, key); the cache maps digests
//! to their key, account, access and expiry, kept current from the writer's key changes, and
//! hands the expiry timer the keys whose moment has passed. Also the two address-based
//! throttles: bad keys (401s) and keyless discovery.

use std::collections::BTreeSet;
use std::net::IpAddr;
use std::time::{Duration, Instant};

use ahash::AHashMap;
use parking_lot::{Mutex, RwLock};
use subtle::ConstantTimeEq;
use write_model::KeyChange;
use write_model::store::{KeyAccess, LiveKey};

pub const KEY_PREFIX: &str = "wb_";

/// Who a valid key belongs to, and what it may do until when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub account: String,
    pub key_id: String,
    pub access: KeyAccess,
    /// When the key stops working (ms); `None`: never.
    pub expires_at: Option<i64>,
}

impl Caller {
    /// A key as the store holds it: its digest, and who it belongs to.
    fn of(key: LiveKey) -> (Vec<u8>, Caller) {
        let LiveKey {
            digest,
            id,
            account,
            access,
            expires_at,
        } = key;
        (
            digest,
            Caller {
                account,
                key_id: id,
                access,
                expires_at,
            },
        )
    }

    fn works_at(&self, now_ms: i64) -> bool {
        self.expires_at.is_none_or(|at| at > now_ms)
    }
}

/// Live keys by digest, and those that expire by when.
#[derive(Default)]
pub struct KeyCache {
    by_digest: RwLock<AHashMap<[u8; 32], Caller>>,
    /// `(expires_at, key id, digest)` of every cached key that expires.
    expiring: Mutex<BTreeSet<(i64, String, [u8; 32])>>,
    /// Raised by every revocation: a key read from the store is cached only if no key was
    /// revoked while it was being read (it might have been that one).
    revocations: std::sync::atomic::AtomicU64,
}

impl KeyCache {
    /// Caches a key the store holds (at start).
    pub fn insert(&self, key: LiveKey) {
        let (digest, caller) = Caller::of(key);
        self.put(&digest, caller);
    }

    /// How many revocations the cache has taken: see [`KeyCache::insert_unless_revoked`].
    pub fn revocations(&self) -> u64 {
        self.revocations.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Caches a key read from the store, unless a revocation came since `revocations` was
    /// read (the key read might be the one revoked). Answers whether it was cached.
    pub fn insert_unless_revoked(&self, key: LiveKey, revocations: u64) -> bool {
        let (digest, caller) = Caller::of(key);
        let Ok(d) = <[u8; 32]>::try_from(digest.as_slice()) else {
            return false;
        };
        let expires_at = caller.expires_at.map(|at| (at, caller.key_id.clone()));
        {
            let mut map = self.by_digest.write();
            if self.revocations() != revocations {
                return false;
            }
            map.insert(d, caller);
        }
        if let Some((at, id)) = expires_at {
            self.expiring.lock().insert((at, id, d));
        }
        true
    }

    /// Makes the cache hold exactly `keys` (the store's live keys, after the follower lost
    /// touch with the other nodes for a while); answers the ids of the keys it dropped.
    /// `None`, and nothing changed, when a revocation came since `revocations` was read
    /// (before `keys` were): `keys` may hold the key revoked, so the caller reads them again.
    pub fn replace_all(&self, keys: Vec<LiveKey>, revocations: u64) -> Option<Vec<String>> {
        let mut fresh = AHashMap::with_capacity(keys.len());
        let mut expiring = BTreeSet::new();
        for key in keys {
            let (digest, caller) = Caller::of(key);
            if let Ok(d) = <[u8; 32]>::try_from(digest.as_slice()) {
                if let Some(at) = caller.expires_at {
                    expiring.insert((at, caller.key_id.clone(), d));
                }
                fresh.insert(d, caller);
            }
        }
        let dropped = {
            let mut map = self.by_digest.write();
            if self.revocations() != revocations {
                return None;
            }
            self.revocations
                .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
            let dropped = map
                .iter()
                .filter(|(d, _)| !fresh.contains_key(*d))
                .map(|(_, c)| c.key_id.clone())
                .collect();
            *map = fresh;
            dropped
        };
        *self.expiring.lock() = expiring;
        Some(dropped)
    }

    fn put(&self, digest: &[u8], caller: Caller) {
        let Ok(d) = <[u8; 32]>::try_from(digest) else {
            return;
        };
        if let Some(at) = caller.expires_at {
            self.expiring.lock().insert((at, caller.key_id.clone(), d));
        }
        self.by_digest.write().insert(d, caller);
    }

    pub fn apply(&self, change: &KeyChange) {
        match change {
            KeyChange::Issued {
                id,
                account,
                digest,
                access,
                expires_at,
            } => self.put(
                digest,
                Caller {
                    account: account.clone(),
                    key_id: id.clone(),
                    access: *access,
                    expires_at: *expires_at,
                },
            ),
            KeyChange::Revoked { digest, .. } => {
                self.revocations
                    .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
                if let Ok(d) = <[u8; 32]>::try_from(digest.as_slice())
                    && let Some(gone) = self.by_digest.write().remove(&d)
                    && let Some(at) = gone.expires_at
                {
                    self.expiring.lock().remove(&(at, gone.key_id, d));
                }
            }
        }
    }

    /// The caller a digest belongs to, while its key works: an expired key is refused from
    /// its moment on, whether or not the timer has taken it off yet. The map finds a
    /// candidate; the final comparison is constant-time, so timing tells nothing about how
    /// close a guess came.
    pub fn find(&self, digest: &[u8; 32], now_ms: i64) -> Option<Caller> {
        let map = self.by_digest.read();
        let (stored, caller) = map.get_key_value(digest)?;
        (bool::from(stored.ct_eq(digest)) && caller.works_at(now_ms)).then(|| caller.clone())
    }

    /// Whether the cache holds the digest at all, expired or not.
    pub fn knows(&self, digest: &[u8; 32]) -> bool {
        self.by_digest.read().contains_key(digest)
    }

    /// Takes off every key that expired by `now_ms` and returns their ids, so their tickets
    /// and sockets can go too (the expiry timer calls it every second).
    pub fn expire(&self, now_ms: i64) -> Vec<String> {
        let mut expiring = self.expiring.lock();
        let mut gone = Vec::new();
        while let Some(first) = expiring.first()
            && first.0 <= now_ms
        {
            let (_, id, digest) = expiring.pop_first().expect("a first entry");
            self.by_digest.write().remove(&digest);
            gone.push(id);
        }
        gone
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
    fn an_expired_key_is_refused_at_its_moment_and_taken_off_by_the_timer() {
        let cache = KeyCache::default();
        let key = |id: &str, digest: u8, expires_at| LiveKey {
            digest: vec![digest; 32],
            id: id.into(),
            account: "a_1".into(),
            access: KeyAccess::Read,
            expires_at,
        };
        cache.insert(key("y_soon", 1, Some(1_000)));
        cache.insert(key("y_later", 2, Some(5_000)));
        cache.insert(key("y_never", 3, None));
        assert!(cache.find(&[1; 32], 999).is_some());
        assert_eq!(cache.find(&[1; 32], 1_000), None, "refused at its moment");
        assert_eq!(cache.expire(999), Vec::<String>::new());
        assert_eq!(cache.expire(1_000), vec!["y_soon".to_string()]);
        assert_eq!(cache.find(&[1; 32], 0), None, "taken off");
        // A revoked key leaves the timer's list too.
        cache.apply(&KeyChange::Revoked {
            id: "y_later".into(),
            digest: vec![2; 32],
        });
        assert_eq!(cache.expire(i64::MAX), Vec::<String>::new());
        assert_eq!(
            cache.find(&[3; 32], i64::MAX).map(|c| c.access),
            Some(KeyAccess::Read)
        );
    }

    #[test]
    fn live_keys_read_before_a_revocation_do_not_put_the_revoked_key_back() {
        let cache = KeyCache::default();
        let key = LiveKey {
            digest: vec![7; 32],
            id: "y_gone".into(),
            account: "a_1".into(),
            access: KeyAccess::Full,
            expires_at: None,
        };
        cache.insert(key.clone());
        // A heal reads the live keys (the key still among them), then the revocation lands.
        let revocations = cache.revocations();
        cache.apply(&KeyChange::Revoked {
            id: "y_gone".into(),
            digest: vec![7; 32],
        });
        assert_eq!(cache.replace_all(vec![key.clone()], revocations), None);
        assert_eq!(cache.find(&[7; 32], 0), None, "not put back");
        // Read again after it, the keys replace the cache's.
        let revocations = cache.revocations();
        assert_eq!(cache.replace_all(vec![], revocations), Some(vec![]));
        assert!(cache.replace_all(vec![key], cache.revocations()).is_some());
        assert!(cache.find(&[7; 32], 0).is_some());
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
