//! The process-wide budget for bytes held in request bodies, each account's share of it, and
//! the low-priority threads that parse large bodies off the async workers ([`super::pool`]).

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use parking_lot::Mutex;

use super::pool::ParsePool;
use crate::http::reply::ApiError;

/// The process's bodies: the budget of bytes they may hold at once, each account's share of
/// it, and the threads that parse the large ones.
pub struct Bodies {
    budget: u64,
    /// The most one account's bodies may hold at once: a quarter of the budget, so one
    /// account that opens bodies and sends them slowly leaves the rest to the others.
    share: u64,
    held: Mutex<Holdings>,
    parsing: ParsePool,
}

/// What bodies hold now: in all, and by account.
#[derive(Default)]
struct Holdings {
    total: u64,
    by_account: HashMap<Arc<str>, u64>,
}

impl Bodies {
    pub fn new(budget: u64) -> Arc<Self> {
        // Half the cores (at least one) parse large bodies; the rest stay free for the async
        // workers that answer every other request.
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        Arc::new(Bodies {
            budget,
            share: budget / 4,
            held: Mutex::default(),
            parsing: ParsePool::new((cores / 2).max(1)),
        })
    }

    /// Bytes held in bodies now (for tests of the release).
    pub fn held(&self) -> u64 {
        self.held.lock().total
    }

    /// Takes `bytes` more of the budget (and of `account`'s share), or answers `false` with
    /// nothing taken.
    fn take(&self, account: Option<&Arc<str>>, bytes: u64) -> bool {
        let mut held = self.held.lock();
        let total = held.total.saturating_add(bytes);
        if total > self.budget {
            return false;
        }
        if let Some(account) = account {
            let mine = held.by_account.get(account).copied().unwrap_or(0);
            let after = mine.saturating_add(bytes);
            if after > self.share {
                return false;
            }
            held.by_account.insert(account.clone(), after);
        }
        held.total = total;
        true
    }

    fn give(&self, account: Option<&Arc<str>>, bytes: u64) {
        let mut held = self.held.lock();
        held.total = held.total.saturating_sub(bytes);
        if let Some(account) = account
            && let Some(mine) = held.by_account.get_mut(account)
        {
            *mine = mine.saturating_sub(bytes);
            if *mine == 0 {
                held.by_account.remove(account);
            }
        }
    }

    /// Runs `work` (parsing a large body) on a parsing thread, off the async workers and below
    /// their priority; waits for a thread when every one is busy.
    pub async fn off_workers<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, ApiError> {
        let fault = |e: &dyn std::fmt::Display| {
            ApiError::Write(write_model::WriteError::Internal(format!(
                "a body could not be parsed: {e}"
            )))
        };
        self.parsing.run(work).await.map_err(|e| fault(&e))
    }
}

/// A share of the budget, given back when dropped.
pub struct Reservation {
    bodies: Arc<Bodies>,
    account: Option<Arc<str>>,
    bytes: u64,
}

impl Reservation {
    pub(super) fn new(bodies: &Arc<Bodies>, account: Option<&str>, bytes: u64) -> Option<Self> {
        let account: Option<Arc<str>> = account.map(Arc::from);
        bodies.take(account.as_ref(), bytes).then(|| Reservation {
            bodies: bodies.clone(),
            account,
            bytes,
        })
    }

    /// Grows the share to `total` bytes, or answers `false` with it unchanged.
    pub(super) fn grow_to(&mut self, total: u64) -> bool {
        if total <= self.bytes {
            return true;
        }
        let more = total - self.bytes;
        if !self.bodies.take(self.account.as_ref(), more) {
            return false;
        }
        self.bytes = total;
        true
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.bodies.give(self.account.as_ref(), self.bytes);
    }
}

/// A body read whole, holding its share of the budget for as long as it (or the command
/// parsed from it, which the handler keeps beside it) lives.
pub struct Held {
    bytes: Bytes,
    _share: Reservation,
}

impl Held {
    /// The bytes read, holding `share` until dropped.
    pub(super) fn new(bytes: Bytes, share: Reservation) -> Self {
        Held {
            bytes,
            _share: share,
        }
    }

    pub fn bytes(&self) -> Bytes {
        self.bytes.clone()
    }
}

impl std::ops::Deref for Held {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_is_given_back_when_a_share_drops() {
        let bodies = Bodies::new(100);
        let mut a = Reservation::new(&bodies, None, 60).expect("fits");
        assert!(Reservation::new(&bodies, None, 50).is_none());
        assert!(a.grow_to(90));
        assert!(!a.grow_to(101));
        let b = Reservation::new(&bodies, None, 10).expect("fits");
        drop(a);
        assert_eq!(bodies.held(), 10);
        drop(b);
        assert_eq!(bodies.held(), 0);
    }

    #[test]
    fn one_account_holds_a_quarter_of_the_budget_at_most() {
        let bodies = Bodies::new(400);
        let mut a = Reservation::new(&bodies, Some("a"), 60).expect("fits");
        assert!(Reservation::new(&bodies, Some("a"), 50).is_none());
        assert!(!a.grow_to(101));
        let b = Reservation::new(&bodies, Some("b"), 100).expect("another account fits");
        assert!(a.grow_to(100));
        drop(a);
        assert!(Reservation::new(&bodies, Some("a"), 100).is_some());
        drop(b);
        assert_eq!(bodies.held(), 0);
        assert!(bodies.held.lock().by_account.is_empty());
    }
}
