//! Idempotency keys on the writer's side: a write sent with a key is looked up in the
//! writer's transaction before it runs, and its result is remembered in the same
//! transaction as its own writes (a row of the `idempotency` table), so a reply lost to a
//! crash between the commit and the answer is still there for the retry.
//!
//! The interface decides which requests carry a key and how a refusal reads
//! ([`Keyed::refusal`]); this module decides what a lookup finds ([`Remembered`]), writes
//! the row, and keeps the table within its bounds ([`Pruning`]): each API key's rows older
//! than the retention, and those past its newest `idempotency_keys_per_key`, go in small
//! batches between groups, never inside a command.
//!
//! A success is remembered first as its [`Outcome`] (the ids of what it wrote), since its
//! reply is shaped by the interface after the commit. Once the interface has shaped the
//! first reply it hands it back ([`FirstReply`], `WriteModel::remember_reply`), and the
//! writer's next group puts it in the row (one UPDATE): a retry then answers that reply
//! byte for byte. Only a reply lost to a crash between the commit and that group, or one
//! past [`MAX_REPLY_BYTES`], is answered from the outcome, shaped again when it is read.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::AtomicI64;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

pub use crate::outcome::Remembered;
// The rows live with the store that keeps them; their old paths still read.
pub use crate::store::remembered::{FirstReply, MAX_REPLY_BYTES, RememberedRow, reply_result};

use crate::error::WriteError;
use crate::limits::Limits;
use crate::outcome::Outcome;
use crate::store::Tx;

/// What the interface sends with a write that carries an `Idempotency-Key`.
pub struct Keyed {
    /// The API key that sent it: idempotency keys are scoped to it.
    pub key_id: String,
    /// The idempotency key, as the client spelled it inside any quotes.
    pub key: String,
    /// A digest of the request (method, path and body): the same key for another request is
    /// refused.
    pub fingerprint: Vec<u8>,
    /// Whether the request may only replay: its API key's write allowance is spent, and a
    /// replay counts as a read. A key not used before then answers [`Remembered::NotRun`].
    pub replay_only: bool,
    /// How a refusal of the writer reads (status and body), or `None` for a fault of the
    /// service (5xx), which is not remembered: its retry runs again.
    #[allow(clippy::type_complexity)]
    pub refusal: Box<dyn Fn(&WriteError) -> Option<(u16, String)> + Send>,
    /// Where the writer leaves the row it remembered a success in, on an engine that names
    /// its rows (SQLite's rowid; 0 until then, and on PostgreSQL): the first reply handed
    /// back names it ([`FirstReply::row`]), so its write finds the row without a lookup.
    pub row: Arc<AtomicI64>,
}

impl std::fmt::Debug for Keyed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Keyed")
            .field("key_id", &self.key_id)
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

/// A remembered result as stored (the row's `result`).
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
enum Stored {
    Outcome(Outcome),
    Refusal {
        status: u16,
        body: String,
    },
    Reply {
        status: u16,
        content_type: String,
        body: String,
    },
}

/// The largest value a remembered outcome keeps (an undo conflict's `current`).
pub const MAX_VALUE_BYTES: usize = 16 * 1024;

/// How long a key is remembered, in ms.
pub fn retention_ms(limits: &Limits) -> i64 {
    (limits.idempotency_seconds as i64).saturating_mul(1000)
}

/// The result remembered for `keyed`, if its key was used within the retention.
pub fn lookup(
    tx: &dyn Tx,
    account: &str,
    keyed: &Keyed,
    limits: &Limits,
    now: i64,
) -> Result<Option<Remembered>, WriteError> {
    let since = now.saturating_sub(retention_ms(limits));
    let Some(row) = tx.remembered(account, &keyed.key_id, &keyed.key, since)? else {
        return Ok(None);
    };
    if row.fingerprint != keyed.fingerprint {
        return Ok(Some(Remembered::OtherRequest));
    }
    Ok(Some(match serde_json::from_str::<Stored>(&row.result)? {
        Stored::Outcome(o) => Remembered::Outcome(Box::new(o)),
        Stored::Refusal { status, body } => Remembered::Refusal { status, body },
        Stored::Reply {
            status,
            content_type,
            body,
        } => Remembered::Reply {
            status,
            content_type,
            body,
        },
    }))
}

/// The row that remembers `result`, or `None` when it is not remembered (a fault of the
/// service, or an outcome that is itself a replay).
pub fn row_of(
    account: &str,
    keyed: &Keyed,
    result: &Result<Outcome, WriteError>,
    now: i64,
) -> Result<Option<RememberedRow>, WriteError> {
    let stored = match result {
        Ok(Outcome::Remembered(_)) => return Ok(None),
        // The one outcome that may carry a large value: past the bound, its `current` goes.
        Ok(Outcome::UndoConflict { field, current })
            if current.to_string().len() > MAX_VALUE_BYTES =>
        {
            Stored::Outcome(Outcome::UndoConflict {
                field: field.clone(),
                current: serde_json::Value::Null,
            })
        }
        Ok(outcome) => Stored::Outcome(outcome.clone()),
        Err(e) => match (keyed.refusal)(e) {
            Some((status, body)) => Stored::Refusal { status, body },
            None => return Ok(None),
        },
    };
    Ok(Some(RememberedRow {
        account: account.to_owned(),
        key_id: keyed.key_id.clone(),
        key: keyed.key.clone(),
        fingerprint: keyed.fingerprint.clone(),
        created_at: now,
        result: serde_json::to_string(&stored)?,
    }))
}

/// How often every API key that remembered results is swept.
const SWEEP_EVERY: Duration = Duration::from_secs(60);
/// The most rows an API key adds before it is swept sooner.
const MOST_ADDED_BEFORE_A_SWEEP: usize = 2048;

/// How many rows an API key may add before it is swept sooner, under a bound of `keep`: a
/// fifth of the bound, at most [`MOST_ADDED_BEFORE_A_SWEEP`]. A sweep reads the key's
/// rows to count them, so a busy key pays that once per this many writes; between two sweeps
/// it holds at most this many past its bound.
pub fn sweep_after(keep: usize) -> usize {
    (keep / 5).clamp(1, MOST_ADDED_BEFORE_A_SWEEP)
}

/// The writer's bookkeeping for pruning: when the last sweep of every key ran, and how many
/// rows each API key added since it was last swept (see `Tx::prune_remembered` for what a
/// sweep reads on each engine).
pub struct Pruning {
    last_sweep: Instant,
    /// Rows added since its last sweep, per account and API key.
    added: HashMap<(String, String), usize>,
    /// Whether some API key added [`sweep_after`] rows since its last sweep.
    full: bool,
}

impl Default for Pruning {
    fn default() -> Self {
        Pruning {
            last_sweep: Instant::now(),
            added: HashMap::new(),
            full: false,
        }
    }
}

impl Pruning {
    /// Counts a row remembered for `key_id` of `account`, under a bound of `keep`.
    pub fn added(&mut self, account: &str, key_id: &str, keep: usize) {
        let entry = (account.to_owned(), key_id.to_owned());
        let n = self.added.entry(entry).or_default();
        *n += 1;
        self.full |= *n >= sweep_after(keep);
    }

    /// Whether a sweep is due (once a minute, or once a key added enough rows).
    pub fn due(&self) -> bool {
        self.full || self.last_sweep.elapsed() >= SWEEP_EVERY
    }

    /// Sweeps inside the open transaction: of the API keys that added enough rows (once a
    /// minute, of every one that added any), the expired rows and those past the bound.
    pub fn sweep(&mut self, tx: &dyn Tx, limits: &Limits, now: i64) -> Result<(), WriteError> {
        let timely = self.last_sweep.elapsed() >= SWEEP_EVERY;
        let after = sweep_after(limits.idempotency_keys_per_key);
        let busy: Vec<(&str, &str)> = self
            .added
            .iter()
            .filter(|(_, n)| timely || **n >= after)
            .map(|((account, key_id), _)| (account.as_str(), key_id.as_str()))
            .collect();
        let expired = now.saturating_sub(retention_ms(limits));
        tx.prune_remembered(expired, &busy, limits.idempotency_keys_per_key)?;
        if timely {
            self.last_sweep = Instant::now();
            self.added.clear();
        } else {
            self.added.retain(|_, n| *n < after);
        }
        self.full = false;
        Ok(())
    }
}
