//! The idempotency keys this node is running a write for: a second request with a key in
//! flight is refused (409, by [`super::idempotency`]'s hoop). A leaf of `http/`, held in
//! [`super::Shared`].

use ahash::AHashSet;
use parking_lot::Mutex;

/// The keys this node is running a write for, per API key.
#[derive(Default)]
pub struct InFlight(Mutex<AHashSet<(String, String)>>);

/// A key's place among the writes in flight; dropped (the request answered or abandoned),
/// the key is free again.
pub struct Entered<'a> {
    set: &'a InFlight,
    entry: Option<(String, String)>,
}

impl InFlight {
    pub fn enter(&self, key_id: &str, key: &str) -> Option<Entered<'_>> {
        let entry = (key_id.to_owned(), key.to_owned());
        if !self.0.lock().insert(entry.clone()) {
            return None;
        }
        Some(Entered {
            set: self,
            entry: Some(entry),
        })
    }
}

impl Drop for Entered<'_> {
    fn drop(&mut self) {
        if let Some(entry) = self.entry.take() {
            self.set.0.lock().remove(&entry);
        }
    }
}
