//! Folds the write-ahead log back into the database on a thread of its own, so the writer
//! never stops its commits to do it (SQLite would otherwise run the checkpoint inside the
//! commit that crosses its threshold). The writer taps after each commit; taps that come
//! while a checkpoint runs fold into the next one.

use std::path::Path;
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};
use rusqlite::Connection;

use crate::error::WriteError;
use crate::store::{self, Durability};

/// The least time between two checkpoints: enough commits to make each one worth its sync.
const PAUSE: Duration = Duration::from_millis(100);

/// The writer's side: a tap after each commit.
pub struct Tap(Sender<()>);

impl Tap {
    /// Asks for a checkpoint soon; never blocks.
    pub fn committed(&self) {
        // Full: a checkpoint is already due. Disconnected: the checkpointer stopped.
        let _ = self.0.try_send(());
    }
}

/// Starts the checkpointer on its own connection; it stops when the tap is dropped.
pub fn start(path: &Path, durability: Durability) -> Result<(Tap, JoinHandle<()>), WriteError> {
    let conn = store::open(path, durability)?;
    let (tap, taps) = crossbeam_channel::bounded(1);
    let thread = std::thread::Builder::new()
        .name("workboard-checkpoint".into())
        .spawn(move || run(conn, taps))
        .map_err(|e| WriteError::Internal(e.to_string()))?;
    Ok((Tap(tap), thread))
}

fn run(conn: Connection, taps: Receiver<()>) {
    while taps.recv().is_ok() {
        // PASSIVE never waits on the writer or a reader; what it cannot copy yet waits for
        // the next tap.
        if let Err(e) = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(())) {
            tracing::warn!(error = %e, "a background checkpoint failed");
        }
        std::thread::sleep(PAUSE);
    }
}
