//! The command processor: one named OS thread owns the only write connection. It drains what
//! is queued, runs the commands in one transaction, commits once (group commit), hands the
//! effects to the read side, and only then answers each sender. A command that fails after
//! writing sends its group round again with a savepoint per command, so a failure never
//! leaves half of itself behind and never takes its neighbours down with it.
//!
//! Accounts share the writer fairly ([`fair`]): each holds at most its share of the queue,
//! and a drained queue runs round-robin between them. A panic outside any one command stops
//! the writer, and the handles say so ([`stopped`]) rather than wait on a thread that is gone.
//! Callers hold a [`WriteModel`] ([`handle`]), which starts the thread and queues commands.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crossbeam_channel::Receiver;

use crate::change::Effect;
use crate::clock::{Clocks, StampClock};
use crate::command::undo;
use crate::command::{self, Command, Ctx, Finished, Outcome, Request};
use crate::error::WriteError;
use crate::idempotency::{self, FirstReply, Keyed, Pruning, Remembered};
use crate::ledger::Ledger;
use crate::limits::Limits;
use crate::store::shared::LoggedChange;
use crate::store::{Tx, Writer};

mod envelope;
mod fair;
#[cfg(feature = "floor")]
mod floor;
mod handle;
mod keys;
mod stopped;

pub use envelope::Reply;
pub use handle::WriteModel;

use envelope::Envelope;

use fair::Lanes;
use stopped::{Stopped, panic_message};

/// The most commands one commit groups.
const MAX_GROUP: usize = 256;
/// How long handed-back first replies wait for a write to share its group before they
/// commit in one of their own.
const REPLIES_LINGER: std::time::Duration = std::time::Duration::from_millis(20);

/// Called with a committed group's effects, on the writer thread, before any reply. It may
/// take what it keeps (the records) out of them.
pub type EffectSink = Box<dyn FnMut(&mut [Effect]) + Send>;
/// Told of each group that committed: how many commands it held and how long its
/// transaction took, from its first command to its commit (for the metrics).
pub type CommitObserver = Box<dyn Fn(usize, std::time::Duration) + Send>;

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
    stopped: Stopped,
    /// When the idempotency keys past their retention or bound are next swept.
    pruning: Pruning,
    /// How many commands wait in the writer's lanes, for [`WriteModel::queued`].
    drained: Arc<AtomicUsize>,
    #[cfg(debug_assertions)]
    fault: stopped::Fault,
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
    fn run(mut self, inbox: Receiver<Envelope>, handed: Receiver<FirstReply>) {
        #[cfg(feature = "floor")]
        let mut floor = floor::Floor::from_env();
        // What was drained from the queue and waits its turn: at most a queue's worth, so
        // what the writer holds stays within twice the queue.
        let mut lanes = Lanes::default();
        let mut checkpoints = Vec::new();
        // First replies handed back, for the next group's rows.
        let mut replies: Vec<FirstReply> = Vec::new();
        let bound = self.limits.writer_queue.max(1);
        loop {
            if lanes.is_empty() && checkpoints.is_empty() && replies.is_empty() {
                crossbeam_channel::select! {
                    recv(inbox) -> env => match env {
                        Ok(env) => sort(env, &mut lanes, &mut checkpoints),
                        Err(_) => break,
                    },
                    recv(handed) -> reply => match reply {
                        Ok(reply) => replies.push(reply),
                        // Held by the same handles as the queue: every one is gone.
                        Err(_) => break,
                    },
                }
            }
            // Handed-back replies alone wait a moment for a write to ride with (under load
            // one comes at once): they commit alone only on a writer otherwise idle.
            if lanes.is_empty() && checkpoints.is_empty() && !replies.is_empty() {
                // Alone (or the last handle gone), they commit now.
                if let Ok(env) = inbox.recv_timeout(REPLIES_LINGER) {
                    sort(env, &mut lanes, &mut checkpoints);
                }
            }
            // A checkpoint runs outside any transaction, after the writes queued before it:
            // nothing more is drained until those have run.
            while checkpoints.is_empty() && lanes.len() < bound {
                match inbox.try_recv() {
                    Ok(env) => sort(env, &mut lanes, &mut checkpoints),
                    Err(_) => break,
                }
            }
            // After the writes: a reply handed back before a write was queued goes in that
            // write's group or an earlier one.
            let room = bound.saturating_sub(replies.len());
            replies.extend(handed.try_iter().take(room));
            let writes = lanes.take_group(MAX_GROUP);
            self.drained.store(lanes.len(), Ordering::Relaxed);
            if writes.is_empty() && replies.is_empty() {
                for env in checkpoints.drain(..) {
                    (env.reply)(self.fold_log().map(|()| Outcome::Saved));
                }
                continue;
            }
            #[cfg(feature = "floor")]
            let writes = match floor.as_mut() {
                Some(floor) => floor.stand_in(writes),
                None => writes,
            };
            if !self.apply_group(writes, std::mem::take(&mut replies)) {
                // Stopped: what waits is answered now, not left to hang.
                let cause = self.stopped.get().unwrap_or_default().to_owned();
                let waiting = lanes
                    .take_group(usize::MAX)
                    .into_iter()
                    .chain(checkpoints.drain(..))
                    .chain(inbox.try_iter());
                for env in waiting {
                    (env.reply)(Err(WriteError::WriterStopped(cause.clone())));
                }
                self.drained.store(0, Ordering::Relaxed);
                return;
            }
        }
        tracing::info!("writer stopped: every handle is gone");
    }

    /// Folds the store's log, if it keeps one, into the store (on shutdown).
    fn fold_log(&mut self) -> Result<(), WriteError> {
        self.writer.fold_log()
    }

    /// Runs and commits one group, applies it to the read side and answers each sender.
    /// `false` when the writer must stop: what follows the commit panicked. `handed` are
    /// first replies handed back, put in their rows in the same transaction.
    fn apply_group(&mut self, group: Vec<Envelope>, handed: Vec<FirstReply>) -> bool {
        let mut requests = Vec::with_capacity(group.len());
        let mut keyed = Vec::with_capacity(group.len());
        let mut replies: Vec<Reply> = Vec::with_capacity(group.len());
        for e in group {
            requests.push(e.request);
            keyed.push(e.keyed);
            replies.push(e.reply);
        }
        let started = std::time::Instant::now();
        let ran = match self.run_group(&requests, &keyed, &handed, Isolation::Shared) {
            Err(GroupFailed::Replay) => {
                self.run_group(&requests, &keyed, &handed, Isolation::Savepoints)
            }
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
                return true;
            }
        };
        self.read_only.store(
            ran.results
                .iter()
                .any(|r| matches!(r, Err(WriteError::Unavailable(_)))),
            Ordering::Relaxed,
        );
        // What follows the commit runs under a guard of its own: a panic here would leave
        // the read side behind the store, so the writer stops, says why, and answers.
        let applied = catch_unwind(AssertUnwindSafe(|| {
            #[cfg(debug_assertions)]
            self.fault.after_commit(&ran.effects);
            // A group of handed-back replies alone is no group of commands.
            if !requests.is_empty() {
                (self.observer)(requests.len(), started.elapsed());
            }
            (self.sink)(&mut ran.effects);
            for (clock, stamp) in ran.settles.drain(..) {
                clock.finish(stamp, true);
            }
        }));
        if let Err(payload) = applied {
            let cause = panic_message(&*payload);
            self.stopped
                .stop(cause.clone(), "applying a committed group to the read side");
            for reply in replies {
                reply(Err(WriteError::WriterStopped(cause.clone())));
            }
            return false;
        }
        let answered = catch_unwind(AssertUnwindSafe(|| {
            for (reply, result) in replies.into_iter().zip(ran.results) {
                reply(result);
            }
            // After the answers, so no command waits on a fold of the log.
            self.writer.after_commit();
        }));
        if let Err(payload) = answered {
            // The replies not yet sent are dropped: their senders hear the writer is gone.
            self.stopped
                .stop(panic_message(&*payload), "answering a committed group");
            return false;
        }
        true
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
        keyed: &[Option<Keyed>],
        replies: &[FirstReply],
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
        // The accounts of handed-back replies too: their rows are written under the same
        // locks, taken in the same order, as every other write of the account.
        let accounts: Vec<&str> = requests
            .iter()
            .filter_map(|r| r.account.as_deref())
            .chain(replies.iter().map(|r| r.account.as_str()))
            .collect();
        if let Err(e) = self.ledger.lock(self.writer.tx(), &accounts) {
            self.writer.rollback();
            self.rolled_back(Vec::new());
            return Err(GroupFailed::Begin(Box::new(e)));
        }
        self.prune_keys();
        // Before the commands: a retry in this group finds the reply.
        if self.remember_replies(replies, isolation).is_err() {
            self.writer.rollback();
            self.rolled_back(Vec::new());
            return Err(GroupFailed::Replay);
        }
        for (request, keyed) in requests.iter().zip(keyed) {
            let keyed = keyed.as_ref();
            let now = crate::clock::wall_ms();
            // A key used before answers what it answered then, and nothing runs. Looked up
            // here, after the account's lock: a retry racing its first request on another
            // node waits for it and finds its row.
            if let Some(keyed) = keyed {
                let account = request.account.as_deref().unwrap_or_default();
                match idempotency::lookup(self.writer.tx(), account, keyed, &self.limits, now) {
                    Ok(Some(found)) => {
                        ran.results.push(Ok(Outcome::Remembered(Box::new(found))));
                        continue;
                    }
                    Ok(None) if keyed.replay_only => {
                        let not_run = Box::new(Remembered::NotRun);
                        ran.results.push(Ok(Outcome::Remembered(not_run)));
                        continue;
                    }
                    Ok(None) => {}
                    Err(e) => {
                        ran.results.push(Err(e));
                        continue;
                    }
                }
            }
            let writes_before = self.writer.tx().writes();
            let (result, effects, settle) = run_one(
                &mut *self.writer,
                isolation,
                &self.limits,
                &self.clocks,
                &mut self.ledger,
                request,
                keyed.map(|k| (k, now)),
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
            let result = match (keyed, result) {
                (Some(keyed), Err(e)) => {
                    let account = request.account.as_deref().unwrap_or_default();
                    match self.remember_refusal(isolation, account, keyed, e, now) {
                        Ok(e) => Err(e),
                        Err(()) => {
                            self.writer.rollback();
                            self.rolled_back(ran.settles);
                            return Err(GroupFailed::Replay);
                        }
                    }
                }
                (Some(keyed), Ok(outcome)) => {
                    let account = request.account.as_deref().unwrap_or_default();
                    self.pruning.added(
                        account,
                        &keyed.key_id,
                        self.limits.idempotency_keys_per_key,
                    );
                    Ok(outcome)
                }
                (None, result) => result,
            };
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

/// Puts a drained command in its place: a checkpoint aside, a write in its account's lane.
fn sort(env: Envelope, lanes: &mut Lanes, checkpoints: &mut Vec<Envelope>) {
    if matches!(env.request.command, Command::Checkpoint) {
        checkpoints.push(env);
    } else {
        lanes.push(env);
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
    keyed: Option<(&Keyed, i64)>,
) -> (Result<Outcome, WriteError>, Vec<Effect>, Settle) {
    let account = request.account.clone().unwrap_or_default();
    // A result sent with an idempotency key is remembered with the command's own writes:
    // in its savepoint, or straight in the group's transaction.
    let remember = |tx: &dyn Tx, outcome: &Outcome| -> Result<(), WriteError> {
        let Some((keyed, now)) = keyed else {
            return Ok(());
        };
        let result = Ok(outcome.clone());
        if let Some(row) = idempotency::row_of(&account, keyed, &result, now)?
            && let Some(id) = tx.remember(&row)?
        {
            keyed.row.store(id, std::sync::atomic::Ordering::Release);
        }
        Ok(())
    };
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
                Ok(ran) => match remember(writer.tx(), &ran.0) {
                    Ok(()) => ran,
                    Err(e) => {
                        if let Some((clock, stamp)) = &ran.1.settle {
                            clock.finish(*stamp, false);
                        }
                        return (Err(e), Vec::new(), None);
                    }
                },
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
            .and_then(|ran| {
                match remember(writer.tx(), &ran.0).and_then(|()| writer.tx().flush()) {
                    Ok(()) => Ok(ran),
                    Err(e) => {
                        // Its held-back writes failed: the command failed, and takes back
                        // what it did.
                        if let Some((clock, stamp)) = &ran.1.settle {
                            clock.finish(*stamp, false);
                        }
                        Err(e)
                    }
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
    let records_step = request.key_id.is_some() && request.command.undoable();
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
