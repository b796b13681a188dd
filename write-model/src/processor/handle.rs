//! The handle callers hold: it starts the writer thread, and queues each command within the
//! queue's bound and its account's share, or refuses it at once (overloaded, stopped).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;

use crossbeam_channel::Sender;

use super::fair::Shares;
#[cfg(debug_assertions)]
use super::stopped;
use super::stopped::{Stopped, panic_message};
use super::{CommitObserver, EffectSink, Envelope, Processor, Reply};
use crate::clock::Clocks;
use crate::command::{Outcome, Request};
use crate::error::WriteError;
use crate::idempotency::{FirstReply, Keyed};
use crate::ledger::Ledger;
use crate::limits::Limits;
use crate::store::Store;

/// The handle callers use to submit commands. Cloning is cheap.
#[derive(Clone)]
pub struct WriteModel {
    queue: Sender<Envelope>,
    /// First replies of keyed successes, for their rows: as long as the queue, and a reply
    /// that finds it full is dropped (its row keeps the outcome).
    replies: Sender<FirstReply>,
    limits: Arc<Limits>,
    read_only: Arc<AtomicBool>,
    /// Each account's commands queued or running, against its share.
    shares: Arc<Shares>,
    /// Commands the writer has drained from the queue and not yet run.
    drained: Arc<AtomicUsize>,
    stopped: Stopped,
}

impl WriteModel {
    /// Opens the store's write connection and starts the processor thread.
    pub fn start(
        store: &dyn Store,
        limits: Arc<Limits>,
        clocks: Arc<Clocks>,
        sink: EffectSink,
        observer: CommitObserver,
    ) -> Result<(WriteModel, JoinHandle<()>), WriteError> {
        let writer = store.open_writer()?;
        // Bounded, so that under overload a write is refused at once (503) rather than wait
        // in a queue that only grows, with every write behind it.
        let (queue, inbox) = crossbeam_channel::bounded(limits.writer_queue.max(1));
        let (replies, handed) = crossbeam_channel::bounded(limits.writer_queue.max(1));
        let read_only = Arc::new(AtomicBool::new(false));
        let stopped = Stopped::default();
        let drained = Arc::new(AtomicUsize::new(0));
        let processor = Processor {
            writer,
            limits: limits.clone(),
            clocks,
            sink,
            read_only: read_only.clone(),
            ledger: if store.is_shared() {
                Ledger::locking()
            } else {
                Ledger::default()
            },
            shared: store.is_shared(),
            observer,
            stopped: stopped.clone(),
            pruning: Default::default(),
            drained: drained.clone(),
            #[cfg(debug_assertions)]
            fault: stopped::Fault::from_env(),
        };
        let guard = stopped.clone();
        let thread = std::thread::Builder::new()
            .name("workboard-writer".into())
            .spawn(move || {
                // The last guard: a panic that no inner one caught (the store's code around
                // a group) stops the writer, said and kept, never silently.
                if let Err(payload) =
                    catch_unwind(AssertUnwindSafe(|| processor.run(inbox, handed)))
                {
                    guard.stop(panic_message(&*payload), "running a group");
                }
            })
            .map_err(|e| WriteError::Internal(e.to_string()))?;
        let per_account = limits.writer_queue_per_account.min(limits.writer_queue);
        Ok((
            WriteModel {
                queue,
                replies,
                limits,
                read_only,
                shares: Shares::new(per_account),
                drained,
                stopped,
            },
            thread,
        ))
    }

    /// Queues a command; `reply` runs on the writer thread once it is committed and visible,
    /// or at once with [`WriteError::Overloaded`] when the queue is full or the command's
    /// account holds its share of it (nothing written), or with
    /// [`WriteError::WriterStopped`] once the writer has stopped.
    pub fn submit(&self, request: Request, reply: Reply) {
        self.submit_keyed(request, None, reply)
    }

    /// Queues a command as [`WriteModel::submit`] does, with the idempotency key it was
    /// sent with: a key used before answers [`Outcome::Remembered`] and runs nothing.
    pub fn submit_keyed(&self, request: Request, keyed: Option<Keyed>, reply: Reply) {
        if let Some(cause) = self.stopped.get() {
            return reply(Err(WriteError::WriterStopped(cause.to_owned())));
        }
        // The account's place is given back when the command is answered (or dropped).
        let reply = match &request.account {
            Some(account) => match self.shares.take(account) {
                Some(ticket) => Box::new(move |result| {
                    drop(ticket);
                    reply(result)
                }),
                None => return reply(Err(WriteError::Overloaded)),
            },
            None => reply,
        };
        match self.queue.try_send(Envelope {
            request,
            keyed,
            reply,
        }) {
            Ok(()) => {}
            Err(crossbeam_channel::TrySendError::Full(env)) => {
                (env.reply)(Err(WriteError::Overloaded));
            }
            Err(crossbeam_channel::TrySendError::Disconnected(env)) => {
                (env.reply)(Err(self.gone()));
            }
        }
    }

    /// Hands the writer the first reply of a success sent with a key, for its row: put
    /// there in the writer's next group, with the writes queued then (one UPDATE; with no
    /// write within 20 ms, in a group of its own). Never waits: with the queue of replies
    /// full or the writer stopped it is dropped, and the row keeps the outcome.
    pub fn remember_reply(&self, reply: FirstReply) {
        if self.stopped.get().is_some() {
            return;
        }
        let _ = self.replies.try_send(reply);
    }

    /// The error a write gets from a writer that is gone.
    pub fn gone(&self) -> WriteError {
        WriteError::WriterStopped(
            self.stopped
                .get()
                .unwrap_or("the writer thread has ended")
                .to_owned(),
        )
    }

    /// Why the writer stopped, once it has: no write lands until the node restarts.
    pub fn stopped(&self) -> Option<&str> {
        self.stopped.get()
    }

    /// Queues a command, waiting for room in the queue (the operator's commands and the
    /// shutdown's checkpoint, which are not refused under load). Blocks this thread.
    pub fn submit_waiting(&self, request: Request, reply: Reply) {
        if let Err(crossbeam_channel::SendError(env)) = self.queue.send(Envelope {
            request,
            keyed: None,
            reply,
        }) {
            (env.reply)(Err(self.gone()));
        }
    }

    /// How many commands wait for the writer.
    pub fn queued(&self) -> usize {
        self.queue.len() + self.drained.load(Ordering::Relaxed)
    }

    /// Submits, waiting for room, and waits for the result on this thread (the CLI, tests).
    pub fn execute_blocking(&self, request: Request) -> Result<Outcome, WriteError> {
        let (tx, rx) = crossbeam_channel::bounded(1);
        self.submit_waiting(
            request,
            Box::new(move |r| {
                let _ = tx.send(r);
            }),
        );
        rx.recv().unwrap_or_else(|_| Err(self.gone()))
    }

    /// Whether the last commit failed because the store cannot take writes (a full disk, a
    /// read-only folder). Cleared by the next commit that succeeds.
    pub fn read_only(&self) -> bool {
        self.read_only.load(Ordering::Relaxed)
    }

    pub fn limits(&self) -> &Arc<Limits> {
        &self.limits
    }
}
