//! The writer's side of idempotency keys inside a group: a refusal remembered beside the
//! command's writes, the sweep of keys past their bounds, and the first replies handed back
//! (see `crate::idempotency` for what is remembered and why).

use super::{Isolation, Processor};
use crate::error::WriteError;
use crate::idempotency::{self, FirstReply, Keyed};
use crate::store::Tx;

impl Processor {
    /// Remembers a refusal of a write sent with an idempotency key, unless it is a fault of
    /// the service; answers the refusal. In `Shared` isolation the row goes straight into
    /// the transaction (a failure there sends the group round again: `Err`); with
    /// savepoints, in one of its own, so a failure only loses the memory of the refusal.
    pub(super) fn remember_refusal(
        &mut self,
        isolation: Isolation,
        account: &str,
        keyed: &Keyed,
        e: WriteError,
        now: i64,
    ) -> Result<WriteError, ()> {
        let result = Err(e);
        let row = idempotency::row_of(account, keyed, &result, now);
        let Err(e) = result else {
            unreachable!("a refusal stays one")
        };
        let row = match row {
            Ok(Some(row)) => row,
            Ok(None) => return Ok(e),
            Err(failed) => {
                tracing::warn!(error = %failed, "a refusal could not be remembered");
                return Ok(e);
            }
        };
        match isolation {
            Isolation::Shared => match self.writer.tx().remember(&row).map(drop) {
                Ok(()) => {}
                Err(_) => return Err(()),
            },
            Isolation::Savepoints => {
                let kept = self
                    .writer
                    .savepoint()
                    .and_then(|()| self.writer.tx().remember(&row).map(drop))
                    .and_then(|()| self.writer.tx().flush());
                let settled = match kept {
                    Ok(()) => self.writer.release(),
                    Err(failed) => {
                        tracing::warn!(error = %failed, "a refusal could not be remembered");
                        self.writer.rollback_to()
                    }
                };
                if settled.is_err() {
                    return Err(());
                }
            }
        }
        self.pruning
            .added(account, &keyed.key_id, self.limits.idempotency_keys_per_key);
        Ok(e)
    }

    /// Sweeps idempotency keys past their retention or their API key's bound, when due, in
    /// a savepoint of the group's transaction: a sweep that fails is dropped (and tried
    /// again later), never the group.
    pub(super) fn prune_keys(&mut self) {
        if !self.pruning.due() {
            return;
        }
        let now = crate::clock::wall_ms();
        if self.writer.savepoint().is_err() {
            return;
        }
        let swept = self
            .pruning
            .sweep(self.writer.tx(), &self.limits, now)
            .and_then(|()| self.writer.tx().flush());
        let settled = match swept {
            Ok(()) => self.writer.release(),
            Err(e) => {
                tracing::warn!(error = %e, "idempotency keys could not be swept; later");
                self.writer.rollback_to()
            }
        };
        if let Err(e) = settled {
            tracing::warn!(error = %e, "the sweep's savepoint could not be settled");
        }
    }

    /// Puts handed-back first replies in their rows. In `Shared` isolation they go
    /// straight into the group's transaction, as its commands do (a savepoint per group
    /// cost a copy of every page the replies touched): one that fails sends the group round
    /// again (`Err`). With savepoints, they go in one of their own, and replies that fail
    /// are dropped (their rows keep the outcome), never the group.
    pub(super) fn remember_replies(
        &mut self,
        replies: &[FirstReply],
        isolation: Isolation,
    ) -> Result<(), ()> {
        if replies.is_empty() {
            return Ok(());
        }
        let put = |tx: &dyn Tx| {
            replies
                .iter()
                .try_for_each(|reply| tx.remember_reply(reply))
                .and_then(|()| tx.flush())
        };
        if isolation == Isolation::Shared {
            return put(self.writer.tx()).map_err(|_| ());
        }
        if self.writer.savepoint().is_err() {
            return Ok(());
        }
        let settled = match put(self.writer.tx()) {
            Ok(()) => self.writer.release(),
            Err(e) => {
                tracing::warn!(error = %e, "first replies could not be remembered");
                self.writer.rollback_to()
            }
        };
        if let Err(e) = settled {
            tracing::warn!(error = %e, "the first replies' savepoint could not be settled");
        }
        Ok(())
    }
}
