//! Live-socket tickets: single use, good for the ticket lifetime. A node alone keeps them in
//! memory. Nodes sharing a store keep them there (a SHA-256 digest of each, never the
//! ticket), so a ticket obtained on one node opens a socket on any: redeeming deletes it in
//! one statement, so two nodes cannot both take it, and revoking a key deletes its tickets
//! in the revoking transaction.

use std::sync::Arc;

use ahash::AHashMap;
use parking_lot::Mutex;
use sha2::{Digest, Sha256};
use write_model::WriteError;
use write_model::store::shared::SharedStore;
use write_model::store::{Store, TicketRow};

struct Ticket {
    account: String,
    key_id: String,
    expires_at: i64,
}

/// Where a node keeps its tickets.
pub struct Tickets(Kept);

enum Kept {
    Memory(Mutex<AHashMap<String, Ticket>>),
    Shared(Arc<dyn SharedStore>),
}

fn digest(ticket: &str) -> Vec<u8> {
    Sha256::digest(ticket.as_bytes()).to_vec()
}

impl Tickets {
    /// Kept in memory, or in `store` when other nodes share it.
    pub fn for_store(store: &Arc<dyn Store>) -> Tickets {
        Tickets(match store.clone().shared() {
            Some(shared) => Kept::Shared(shared),
            None => Kept::Memory(Mutex::default()),
        })
    }

    /// A new ticket for the key, good until `expires_at` (it may block on the store).
    pub fn issue(
        &self,
        account: &str,
        key_id: &str,
        expires_at: i64,
        now_ms: i64,
    ) -> Result<String, WriteError> {
        let ticket = write_model::ids::random_token(32);
        match &self.0 {
            Kept::Memory(tickets) => {
                let mut tickets = tickets.lock();
                tickets.retain(|_, t| t.expires_at > now_ms);
                tickets.insert(
                    ticket.clone(),
                    Ticket {
                        account: account.to_owned(),
                        key_id: key_id.to_owned(),
                        expires_at,
                    },
                );
            }
            Kept::Shared(store) => store.put_ticket(
                &TicketRow {
                    account: account.to_owned(),
                    digest: digest(&ticket),
                    key_id: key_id.to_owned(),
                    expires_at,
                },
                now_ms,
            )?,
        }
        Ok(ticket)
    }

    /// Whether a ticket would be accepted now, without using it up.
    pub fn is_good(&self, ticket: &str, now_ms: i64) -> Result<bool, WriteError> {
        Ok(match &self.0 {
            Kept::Memory(tickets) => tickets
                .lock()
                .get(ticket)
                .is_some_and(|t| t.expires_at > now_ms),
            Kept::Shared(store) => store
                .ticket(&digest(ticket), false)?
                .is_some_and(|t| t.expires_at > now_ms),
        })
    }

    /// Uses a ticket up: the account and key it was issued to, if it is still good.
    pub fn redeem(
        &self,
        ticket: &str,
        now_ms: i64,
    ) -> Result<Option<(String, String)>, WriteError> {
        let found = match &self.0 {
            Kept::Memory(tickets) => tickets
                .lock()
                .remove(ticket)
                .map(|t| (t.account, t.key_id, t.expires_at)),
            Kept::Shared(store) => store
                .ticket(&digest(ticket), true)?
                .map(|t| (t.account, t.key_id, t.expires_at)),
        };
        Ok(found
            .filter(|(_, _, expires_at)| *expires_at > now_ms)
            .map(|(account, key_id, _)| (account, key_id)))
    }

    /// A revoked key's tickets die (in the store, the revoking transaction deleted them).
    pub fn revoke(&self, key_id: &str) {
        if let Kept::Memory(tickets) = &self.0 {
            tickets.lock().retain(|_, t| t.key_id != key_id);
        }
    }
}
