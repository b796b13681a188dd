//! The command processor: one named OS thread owns the only write connection. It drains what
//! is queued, runs the commands in one transaction, commits once (group commit), hands the
//! effects to the read side, and only then answers each sender. A command that fails after
//! writing sends its group round again with a savepoint per command, so a failure never
//! leaves half of itself behind and never takes its neighbours down with it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender};

use crate::change::Effect;
use crate::clock::{Clocks, StampClock};
use crate::command::{self, Command, Ctx, Finished, Outcome, Request};
use crate::error::WriteError;
use crate::ledger::Ledger;
use crate::limits::Limits;
use crate::store::shared::LoggedChange;
use crate::store::{Store, Tx, Writer};
use crate::undo;

#[cfg(feature = "floor")]
mod floor;

/// The most commands one commit groups.
const MAX_GROUP: usize = 256;

/// Called with a committed group's effects, on the writer thread, before any reply. It may
/// take what it keeps (the records) out of them.
pub type EffectSink = Box<dyn FnMut(&mut [Effect]) + Send>;
/// Receives a command's result.
pub type Reply = Box<dyn FnOnce(Result<Outcome, WriteError>) + Send>;
/// Told of each group that committed: how many commands it held and how long its
/// transaction took, from its first command to its commit (for the metrics).
pub type CommitObserver = Box<dyn Fn(usize, std::time::Duration) + Send>;

struct Envelope {
    request: Request,
    reply: Reply,
}

/// The handle callers use to submit commands. Cloning is cheap.
#[derive(Clone)]
pub struct WriteModel {
    queue: Sender<Envelope>,
    limits: Arc<Limits>,
    read_only: Arc<AtomicBool>,
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
        let read_only = Arc::new(AtomicBool::new(false));
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
        };
        let thread = std::thread::Builder::new()
            .name("workboard-writer".into())
            .spawn(move || processor.run(inbox))
            .map_err(|e| WriteError::Internal(e.to_string()))?;
        Ok((
            WriteModel {
                queue,
                limits,
                read_only,
            },
            thread,
        ))
    }

    /// Queues a command; `reply` runs on the writer thread once it is committed and visible,
    /// or at once with [`WriteError::Overloaded`] when the queue is full (nothing written).
    pub fn submit(&self, request: Request, reply: Reply) {
        match self.queue.try_send(Envelope { request, reply }) {
            Ok(()) => {}
            Err(crossbeam_channel::TrySendError::Full(env)) => {
                (env.reply)(Err(WriteError::Overloaded));
            }
            Err(crossbeam_channel::TrySendError::Disconnected(env)) => {
                (env.reply)(Err(WriteError::Unavailable(
                    "the writer has stopped".into(),
                )));
            }
        }
    }

    /// Queues a command, waiting for room in the queue (the operator's commands and the
    /// shutdown's checkpoint, which are not refused under load). Blocks this thread.
    pub fn submit_waiting(&self, request: Request, reply: Reply) {
        if let Err(crossbeam_channel::SendError(env)) = self.queue.send(Envelope { request, reply })
        {
            (env.reply)(Err(WriteError::Unavailable(
                "the writer has stopped".into(),
            )));
        }
    }

    /// How many commands wait for the writer.
    pub fn queued(&self) -> usize {
        self.queue.len()
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
        rx.recv()
            .unwrap_or_else(|_| Err(WriteError::Unavailable("the writer has stopped".into())))
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

struct Processor {
    /// The only write connection to the store.
    writer: Box<dyn Writer>,
    limits: Arc<Limits>,
    clocks: Arc<Clocks>,
    sink: EffectSink,
    read_only: Arc<AtomicBool>,
    /// Every account's counters, written back once per group.
    ledger: Ledger,
    observer: CommitObserver,
    /// Whether other nodes write the store too: each group then logs its change sets.
    shared: bool,
}

type Settle = Option<(Arc<StampClock>, i64)>;

/// How the commands of a group are kept apart. A group first runs `Shared`: no savepoints,
/// since almost every command that fails does so before it writes. If one fails after
/// writing, the group is rolled back and runs again with a savepoint per command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Isolation {
    Shared,
    Savepoints,
}

/// What a group that committed leaves: each command's result, the effects to apply and the
/// stamps to settle.
struct Ran {
    results: Vec<Result<Outcome, WriteError>>,
    effects: Vec<Effect>,
    settles: Vec<(Arc<StampClock>, i64)>,
}

enum GroupFailed {
    /// A command failed after writing in a `Shared` group; nothing of it stays.
    Replay,
    /// The transaction could not begin.
    Begin(Box<WriteError>),
    /// The commit failed; the results the commands had reached.
    Commit(Vec<Result<Outcome, WriteError>>, Box<WriteError>),
}

impl Processor {
    fn run(mut self, inbox: Receiver<Envelope>) {
        #[cfg(feature = "floor")]
        let mut floor = floor::Floor::from_env();
        while let Ok(first) = inbox.recv() {
            let mut group = vec![first];
            while group.len() < MAX_GROUP {
                match inbox.try_recv() {
                    Ok(next) => group.push(next),
                    Err(_) => break,
                }
            }
            // A checkpoint runs outside any transaction, after the writes queued before it.
            let (checkpoints, writes): (Vec<_>, Vec<_>) = group
                .into_iter()
                .partition(|e| matches!(e.request.command, Command::Checkpoint));
            #[cfg(feature = "floor")]
            let writes = match floor.as_mut() {
                Some(floor) => floor.stand_in(writes),
                None => writes,
            };
            if !writes.is_empty() {
                self.apply_group(writes);
            }
            for env in checkpoints {
                (env.reply)(self.fold_log().map(|()| Outcome::Saved));
            }
        }
        tracing::info!("writer stopped: every handle is gone");
    }

    /// Folds the store's log, if it keeps one, into the store (on shutdown).
    fn fold_log(&mut self) -> Result<(), WriteError> {
        self.writer.fold_log()
    }

    fn apply_group(&mut self, group: Vec<Envelope>) {
        let (requests, replies): (Vec<Request>, Vec<Reply>) =
            group.into_iter().map(|e| (e.request, e.reply)).unzip();
        let started = std::time::Instant::now();
        let ran = match self.run_group(&requests, Isolation::Shared) {
            Err(GroupFailed::Replay) => self.run_group(&requests, Isolation::Savepoints),
            other => other,
        };
        let mut ran = match ran {
            Ok(ran) => ran,
            Err(failed) => {
                let (results, e) = match failed {
                    GroupFailed::Commit(results, e) => (results, *e),
                    GroupFailed::Begin(e) => (Vec::new(), *e),
                    GroupFailed::Replay => (
                        Vec::new(),
                        WriteError::Internal("a replayed group asked for a replay".into()),
                    ),
                };
                tracing::error!(error = %e, "a group could not commit; it is refused");
                self.read_only
                    .store(matches!(e, WriteError::Unavailable(_)), Ordering::Relaxed);
                let refused = || Err(WriteError::Unavailable(e.to_string()));
                let mut results = results.into_iter();
                for reply in replies {
                    // A command that failed on its own keeps its own answer.
                    reply(match results.next() {
                        Some(result) => result.and_then(|_| refused()),
                        None => refused(),
                    });
                }
                return;
            }
        };
        self.read_only.store(
            ran.results
                .iter()
                .any(|r| matches!(r, Err(WriteError::Unavailable(_)))),
            Ordering::Relaxed,
        );
        (self.observer)(requests.len(), started.elapsed());
        (self.sink)(&mut ran.effects);
        for (clock, stamp) in ran.settles {
            clock.finish(stamp, true);
        }
        for (reply, result) in replies.into_iter().zip(ran.results) {
            reply(result);
        }
        // After the answers, so no command waits on a fold of the log.
        self.writer.after_commit();
    }

    /// Forgets what the group's commands left in memory once its transaction is gone: the
    /// ledger's copies, and the stamps they took.
    fn rolled_back(&mut self, settles: Vec<(Arc<StampClock>, i64)>) {
        self.ledger.forget();
        for (clock, stamp) in settles {
            clock.finish(stamp, false);
        }
    }

    /// Runs every command of a group in one transaction and commits it. A failed commit
    /// refuses the whole group; in `Shared` isolation, a command that fails after writing
    /// rolls the transaction back and asks for a replay with savepoints.
    fn run_group(
        &mut self,
        requests: &[Request],
        isolation: Isolation,
    ) -> Result<Ran, GroupFailed> {
        let mut ran = Ran {
            results: Vec::with_capacity(requests.len()),
            effects: Vec::new(),
            settles: Vec::new(),
        };
        self.writer
            .begin()
            .map_err(|e| GroupFailed::Begin(Box::new(e)))?;
        // On a shared store, every account the group names is locked before any command
        // reads it, all at once and in order.
        let accounts: Vec<&str> = requests
            .iter()
            .filter_map(|r| r.account.as_deref())
            .collect();
        if let Err(e) = self.ledger.lock(self.writer.tx(), &accounts) {
            self.writer.rollback();
            self.rolled_back(Vec::new());
            return Err(GroupFailed::Begin(Box::new(e)));
        }
        for request in requests {
            let writes_before = self.writer.tx().writes();
            let (result, effects, settle) = run_one(
                &mut *self.writer,
                isolation,
                &self.limits,
                &self.clocks,
                &mut self.ledger,
                request,
            );
            if result.is_err()
                && isolation == Isolation::Shared
                && self.writer.tx().writes() != writes_before
            {
                // Its writes cannot be taken back alone: the group starts over.
                self.writer.rollback();
                self.rolled_back(ran.settles);
                return Err(GroupFailed::Replay);
            }
            if result.is_ok() {
                ran.effects.extend(effects);
                ran.settles.extend(settle);
            }
            ran.results.push(result);
        }
        // Writes the engine held back go out first: in `Shared` isolation, one that fails
        // cannot be told apart from the others, so the group runs again with savepoints,
        // where each command sends its own before its savepoint is released.
        if let Err(e) = self.writer.tx().flush() {
            self.writer.rollback();
            self.rolled_back(ran.settles);
            return match isolation {
                Isolation::Shared => Err(GroupFailed::Replay),
                Isolation::Savepoints => Err(GroupFailed::Commit(ran.results, Box::new(e))),
            };
        }
        let committed = self
            .ledger
            .write_back(self.writer.tx())
            .and_then(|()| self.log(&ran.effects))
            .and_then(|()| self.writer.commit());
        if let Err(e) = committed {
            self.writer.rollback();
            self.rolled_back(ran.settles);
            return Err(GroupFailed::Commit(ran.results, Box::new(e)));
        }
        self.ledger.unlock();
        Ok(ran)
    }

    /// On a shared store, logs the group's change sets and announces them and its key
    /// changes to the other nodes, in its transaction.
    fn log(&self, effects: &[Effect]) -> Result<(), WriteError> {
        if !self.shared || effects.is_empty() {
            return Ok(());
        }
        let mut changes = Vec::new();
        let mut keys = Vec::new();
        for effect in effects {
            match effect {
                Effect::Records(cs) => changes.push(LoggedChange::of(cs)?),
                Effect::Key(k) => keys.push(k.clone()),
            }
        }
        self.writer.tx().log_changes(&changes, &keys)
    }
}

/// Runs one command: straight in the group's transaction (`Shared`), or in its own
/// savepoint so that a failure rolls back only its own writes.
fn run_one(
    writer: &mut dyn Writer,
    isolation: Isolation,
    limits: &Limits,
    clocks: &Clocks,
    ledger: &mut Ledger,
    request: &Request,
) -> (Result<Outcome, WriteError>, Vec<Effect>, Settle) {
    let account = request.account.clone().unwrap_or_default();
    let (outcome, done) = match isolation {
        Isolation::Shared => {
            match execute(
                writer.tx(),
                account.clone(),
                limits,
                clocks,
                ledger,
                request,
            ) {
                Ok(ran) => ran,
                Err(e) => return (Err(e), Vec::new(), None),
            }
        }
        Isolation::Savepoints => {
            if let Err(e) = writer.savepoint() {
                return (Err(e), Vec::new(), None);
            }
            let mark = ledger.lock_mark();
            let ran = execute(
                writer.tx(),
                account.clone(),
                limits,
                clocks,
                ledger,
                request,
            )
            .and_then(|ran| match writer.tx().flush() {
                Ok(()) => Ok(ran),
                Err(e) => {
                    // Its held-back writes failed: the command failed, and takes back
                    // what it did.
                    if let Some((clock, stamp)) = &ran.1.settle {
                        clock.finish(*stamp, false);
                    }
                    Err(e)
                }
            });
            let (outcome, done) = match ran {
                Ok(ran) => ran,
                Err(e) => {
                    // Only this command's writes go, and the locks it took; the group's
                    // transaction stands.
                    if let Err(undone) = writer.rollback_to() {
                        return (Err(undone), Vec::new(), None);
                    }
                    ledger.unlock_to(mark);
                    return (Err(e), Vec::new(), None);
                }
            };
            if let Err(e) = writer.release() {
                if let Some((clock, stamp)) = done.settle {
                    clock.finish(stamp, false);
                }
                return (Err(e), Vec::new(), None);
            }
            (outcome, done)
        }
    };
    if let Some(counters) = done.counters {
        ledger.set(&account, counters);
    }
    if let (Some(seq), Some(key_id)) = (done.step, &request.key_id) {
        ledger.stepped(key_id, seq, limits.undo_steps as i64);
    }
    ledger.keep_records(&account, done.records);
    ledger.keep_tops(&account, done.tops);
    (Ok(outcome), done.effects, done.settle)
}

/// Executes one command on `conn`, with its undo step; a command that fails settles the
/// stamp it took (its caller undoes its writes).
fn execute(
    store: &dyn Tx,
    account: String,
    limits: &Limits,
    clocks: &Clocks,
    ledger: &mut Ledger,
    request: &Request,
) -> Result<(Outcome, Finished), WriteError> {
    let mut ctx = Ctx::new(store, account, limits, clocks, ledger);
    let records_step = request.key_id.is_some() && undo::undoable(&request.command);
    if records_step {
        ctx.keep_bodies();
    }
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let outcome = command::execute(&mut ctx, request)?;
        ctx.settle_storage()?;
        if let Some(key) = &request.key_id
            && ctx.changed()
            && records_step
        {
            undo::record(&mut ctx, key, &outcome)?;
        }
        Ok(outcome)
    }))
    .unwrap_or_else(|_| Err(WriteError::Internal("a command panicked".into())));
    match outcome {
        Ok(outcome) => Ok((outcome, ctx.finish())),
        Err(e) => {
            ctx.abandon();
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests;
