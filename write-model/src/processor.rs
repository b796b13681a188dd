//! The command processor: one named OS thread owns the only write connection. It drains what
//! is queued, runs each command in its own savepoint inside one transaction, commits once
//! (group commit), hands the effects to the read side, and only then answers each sender.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender};
use rusqlite::Connection;

use crate::change::Effect;
use crate::clock::{Clocks, StampClock};
use crate::command::{self, Command, Ctx, Outcome, Request};
use crate::error::WriteError;
use crate::ledger::Ledger;
use crate::limits::Limits;
use crate::store::{self, Durability};
use crate::undo;

/// The most commands one commit groups.
const MAX_GROUP: usize = 256;

/// Called with a committed group's effects, on the writer thread, before any reply.
pub type EffectSink = Box<dyn FnMut(&[Effect]) + Send>;
/// Receives a command's result.
pub type Reply = Box<dyn FnOnce(Result<Outcome, WriteError>) + Send>;

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
    /// Opens the store and starts the processor thread.
    pub fn start(
        path: &Path,
        durability: Durability,
        limits: Arc<Limits>,
        clocks: Arc<Clocks>,
        sink: EffectSink,
    ) -> Result<(WriteModel, JoinHandle<()>), WriteError> {
        let conn = store::open(path, durability)?;
        let (queue, inbox) = crossbeam_channel::unbounded();
        let read_only = Arc::new(AtomicBool::new(false));
        let processor = Processor {
            conn,
            limits: limits.clone(),
            clocks,
            sink,
            read_only: read_only.clone(),
            ledger: Ledger::default(),
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

    /// Queues a command; `reply` runs on the writer thread once it is committed and visible.
    pub fn submit(&self, request: Request, reply: Reply) {
        if let Err(crossbeam_channel::SendError(env)) = self.queue.send(Envelope { request, reply })
        {
            (env.reply)(Err(WriteError::Unavailable(
                "the writer has stopped".into(),
            )));
        }
    }

    /// Submits and waits on this thread (the CLI, tests).
    pub fn execute_blocking(&self, request: Request) -> Result<Outcome, WriteError> {
        let (tx, rx) = crossbeam_channel::bounded(1);
        self.submit(
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
    conn: Connection,
    limits: Arc<Limits>,
    clocks: Arc<Clocks>,
    sink: EffectSink,
    read_only: Arc<AtomicBool>,
    /// Every account's counters, written back once per group.
    ledger: Ledger,
}

type Settle = Option<(Arc<StampClock>, i64)>;

impl Processor {
    fn run(mut self, inbox: Receiver<Envelope>) {
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
            if !writes.is_empty() {
                self.apply_group(writes);
            }
            for env in checkpoints {
                (env.reply)(self.fold_log().map(|()| Outcome::Saved));
            }
        }
        tracing::info!("writer stopped: every handle is gone");
    }

    /// Folds the whole log into the database and empties it, waiting out readers that still
    /// hold old frames (the pragma reports them as busy rather than failing).
    fn fold_log(&self) -> Result<(), WriteError> {
        let mut tries = 0;
        loop {
            let busy = self
                .conn
                .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
                    r.get::<_, i64>(0)
                });
            match busy {
                Ok(0) => return Ok(()),
                Ok(_) | Err(_) if tries < 500 => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                Ok(_) => return Err(WriteError::Unavailable("the log stayed busy".into())),
                Err(e) => return Err(e.into()),
            }
        }
    }

    fn apply_group(&mut self, group: Vec<Envelope>) {
        let mut results: Vec<(Reply, Result<Outcome, WriteError>)> =
            Vec::with_capacity(group.len());
        let mut effects: Vec<Effect> = Vec::new();
        let mut settles: Vec<(Arc<StampClock>, i64)> = Vec::new();
        let committed = match self.conn.transaction() {
            Ok(mut tx) => {
                for env in group {
                    let (result, fx, settle) = run_one(
                        &mut tx,
                        &self.limits,
                        &self.clocks,
                        &mut self.ledger,
                        &env.request,
                    );
                    if result.is_ok() {
                        effects.extend(fx);
                        settles.extend(settle);
                    }
                    results.push((env.reply, result));
                }
                self.ledger
                    .write_back(&tx)
                    .and_then(|()| tx.commit().map_err(WriteError::from))
            }
            Err(e) => {
                let e = WriteError::from(e);
                for env in group {
                    results.push((env.reply, Err(WriteError::Unavailable(e.to_string()))));
                }
                Err(e)
            }
        };
        self.read_only.store(
            matches!(&committed, Err(WriteError::Unavailable(_)))
                || results
                    .iter()
                    .any(|(_, r)| matches!(r, Err(WriteError::Unavailable(_)))),
            Ordering::Relaxed,
        );
        match committed {
            Ok(()) => {
                (self.sink)(&effects);
                for (clock, stamp) in settles {
                    clock.finish(stamp, true);
                }
                for (reply, result) in results {
                    reply(result);
                }
            }
            Err(e) => {
                tracing::error!(error = %e, "a commit failed; the group is refused");
                self.ledger.forget();
                for (clock, stamp) in settles {
                    clock.finish(stamp, false);
                }
                for (reply, result) in results {
                    reply(result.and(Err(WriteError::Unavailable(e.to_string()))));
                }
            }
        }
    }
}

/// Runs one command in its own savepoint: a failure rolls back only its own writes.
fn run_one(
    tx: &mut rusqlite::Transaction<'_>,
    limits: &Limits,
    clocks: &Clocks,
    ledger: &mut Ledger,
    request: &Request,
) -> (Result<Outcome, WriteError>, Vec<Effect>, Settle) {
    let sp = match tx.savepoint() {
        Ok(sp) => sp,
        Err(e) => return (Err(e.into()), Vec::new(), None),
    };
    let account = request.account.clone().unwrap_or_default();
    let mut ctx = Ctx::new(&sp, account.clone(), limits, clocks, ledger);
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let outcome = command::execute(&mut ctx, request)?;
        ctx.settle_storage()?;
        if let Some(key) = &request.key_id
            && ctx.changed()
            && undo::undoable(&request.command)
        {
            undo::record(&ctx, key, &outcome)?;
        }
        Ok(outcome)
    }))
    .unwrap_or_else(|_| Err(WriteError::Internal("a command panicked".into())));
    match outcome {
        Ok(outcome) => {
            let done = ctx.finish();
            match sp.commit() {
                Ok(()) => {
                    if let Some(counters) = done.counters {
                        ledger.set(&account, counters);
                    }
                    (Ok(outcome), done.effects, done.settle)
                }
                Err(e) => {
                    if let Some((clock, stamp)) = done.settle {
                        clock.finish(stamp, false);
                    }
                    (Err(e.into()), Vec::new(), None)
                }
            }
        }
        Err(e) => {
            ctx.abandon();
            drop(sp);
            (Err(e), Vec::new(), None)
        }
    }
}
