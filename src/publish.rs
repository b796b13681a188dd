//! What happens to a committed group's effects, on the writer thread, before any of its
//! senders hears back: the read model applies the records first, then the key cache and the
//! live sockets learn of them. So a reply is never ahead of what reads show, a client that
//! reacts to a nudge sees the change, and a revoked key stops working before its revoke is
//! answered.

use std::sync::Arc;

use read_model::ReadModel;
use write_model::processor::EffectSink;
use write_model::{Effect, KeyChange};

use crate::auth::KeyCache;
use crate::live::Hub;

/// The writer's sink for a node's read model, key cache and sockets.
pub fn sink(read: Arc<ReadModel>, keys: Arc<KeyCache>, hub: Arc<Hub>) -> EffectSink {
    Box::new(move |effects: &mut [Effect]| {
        read.apply(effects);
        for effect in effects.iter() {
            match effect {
                Effect::Records(cs) => hub.notify(&cs.account, cs.stamp),
                Effect::Key(change) => {
                    keys.apply(change);
                    if let KeyChange::Revoked { id, .. } = change {
                        hub.revoke(id);
                    }
                }
            }
        }
    })
}
