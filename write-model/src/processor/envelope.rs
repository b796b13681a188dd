//! What the writer's queue carries: a command, the idempotency key it was sent with, and
//! where its result goes. Its own file so that the queue's parts ([`super::fair`], the
//! floor) and the thread share it without reaching into each other.

use crate::command::{Outcome, Request};
use crate::error::WriteError;
use crate::idempotency::Keyed;

/// Receives a command's result.
pub type Reply = Box<dyn FnOnce(Result<Outcome, WriteError>) + Send>;

pub(super) struct Envelope {
    pub(super) request: Request,
    /// The write's idempotency key, when it was sent with one.
    pub(super) keyed: Option<Keyed>,
    pub(super) reply: Reply,
}
