//! Folding the write-ahead log back into the database file, mostly off the writer thread.
//!
//! SQLite's own automatic checkpoint runs inside the commit that crosses its threshold: that
//! group's commands wait while it copies up to a thousand frames and syncs the log and the
//! database.
//!
//! Here a checkpoint thread with its own connection copies frames (a `PASSIVE` checkpoint,
//! which never blocks the writer) each time the log has grown by [`BACKGROUND_EVERY`] frames.
//! The log can only start over from its beginning once a checkpoint has copied every frame,
//! which a checkpoint running beside a busy writer rarely manages, so the writer folds the
//! few frames left itself once the log reaches [`WRITER_FOLDS_AT`], after answering its group.

use std::cell::Cell;
use std::path::Path;
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender, TrySendError};
use rusqlite::{Connection, hooks::Wal};

use super::Durability;
use crate::error::WriteError;
use crate::store::Engine;

/// Frames of new log after which the checkpoint thread copies them into the database.
pub const BACKGROUND_EVERY: i32 = 1_000;
/// Frames in the log at which the writer folds what the checkpoint thread has not yet
/// copied, so that the log starts over (4,000 frames of 4 KiB: a 16 MiB log file at most).
pub const WRITER_FOLDS_AT: i32 = 4_000;

thread_local! {
    /// Frames in the log after the last commit on this thread's connection. The hook runs on
    /// the committing thread, and only the writer's connection has it.
    static LOG_FRAMES: Cell<i32> = const { Cell::new(0) };
}

fn note_log_frames(_: &Wal, frames: std::ffi::c_int) -> rusqlite::Result<()> {
    LOG_FRAMES.with(|f| f.set(frames));
    Ok(())
}

/// The writer's side: watches the log after each commit and starts checkpoints.
pub struct Checkpoints {
    /// Wakes the checkpoint thread; `None` where no thread runs (the processor's unit tests
    /// keep SQLite's automatic checkpoint).
    wake: Option<Sender<()>>,
    /// The log size after the previous commit. The thread is woken each time the log
    /// crosses a multiple of [`BACKGROUND_EVERY`]; after the log starts over, the count is
    /// smaller and the next crossing comes from zero again.
    last_frames: i32,
    /// Joined on drop, after `wake` is gone, so the thread has let go of the store by the
    /// time the writer has.
    thread: Option<JoinHandle<()>>,
}

impl Drop for Checkpoints {
    fn drop(&mut self) {
        self.wake = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Checkpoints {
    /// Takes over checkpointing of `conn`, the writer's connection (SQLite's automatic
    /// checkpoint stops: it is a log hook too), and starts the checkpoint thread on a
    /// connection of its own.
    pub fn start(
        conn: &Connection,
        path: &Path,
        durability: Durability,
    ) -> Result<Checkpoints, WriteError> {
        let own = open_for_checkpoints(path, durability)?;
        let (wake, woken) = crossbeam_channel::bounded(1);
        let thread = std::thread::Builder::new()
            .name("workboard-checkpoint".into())
            .spawn(move || copy_when_woken(&own, &woken))
            .map_err(|e| WriteError::Internal(e.to_string()))?;
        conn.wal_hook(Some(note_log_frames));
        Ok(Checkpoints {
            wake: Some(wake),
            last_frames: 0,
            thread: Some(thread),
        })
    }

    /// No checkpoint thread: SQLite checkpoints inside commits, as it does by default.
    pub fn inline() -> Checkpoints {
        Checkpoints {
            wake: None,
            last_frames: 0,
            thread: None,
        }
    }

    /// Called on the writer thread after a group has committed and been answered.
    pub fn after_commit(&mut self, conn: &Connection) {
        let Some(wake) = &self.wake else { return };
        let frames = LOG_FRAMES.with(Cell::get);
        let crossed = frames / BACKGROUND_EVERY > self.last_frames / BACKGROUND_EVERY;
        self.last_frames = frames;
        if frames >= WRITER_FOLDS_AT {
            // Copies what the checkpoint thread has not, so the next transaction can start
            // the log over. Busy (the thread is mid-copy) is fine: the next commit retries.
            if let Err(e) = passive_checkpoint(conn) {
                tracing::warn!(error = %e, "the writer could not fold the log");
            }
        } else if crossed {
            match wake.try_send(()) {
                Ok(()) | Err(TrySendError::Full(())) => {}
                Err(TrySendError::Disconnected(())) => {
                    tracing::error!("the checkpoint thread has stopped; the writer folds the log");
                    self.wake = None;
                    conn.wal_hook(None);
                    let _ = conn.pragma_update(None, "wal_autocheckpoint", 1_000);
                }
            }
        }
    }
}

fn open_for_checkpoints(path: &Path, durability: Durability) -> Result<Connection, WriteError> {
    // A checkpoint syncs the log before copying and the database after, as its connection's
    // `synchronous` says; the log is already in WAL mode (the writer opened it).
    let conn = super::connect(path, durability)?;
    conn.pragma_update(None, "cache_size", -256).db()?;
    Ok(conn)
}

/// The checkpoint thread: copies the log into the database each time it is woken, until the
/// writer is gone.
fn copy_when_woken(conn: &Connection, woken: &Receiver<()>) {
    while woken.recv().is_ok() {
        if let Err(e) = passive_checkpoint(conn) {
            tracing::warn!(error = %e, "a checkpoint failed; the next one retries");
        }
    }
}

/// Copies every frame no reader still needs, without waiting for readers or the writer.
fn passive_checkpoint(conn: &Connection) -> rusqlite::Result<()> {
    conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    /// Bytes of one frame of log: its header and a 4 KiB page.
    const FRAME: u64 = 24 + 4096;

    fn file_len(path: &Path) -> u64 {
        std::fs::metadata(path).map_or(0, |m| m.len())
    }

    /// Commits `pages` pages of new rows, then lets `checkpoints` look at the log, as the
    /// writer does after each group.
    fn commit_pages(
        conn: &mut Connection,
        checkpoints: &mut Checkpoints,
        next: &mut i64,
        pages: i64,
    ) {
        let tx = conn.transaction().unwrap();
        for _ in 0..pages {
            *next += 1;
            tx.execute(
                "INSERT INTO scratch (n, b) VALUES (?1, zeroblob(3500))",
                [*next],
            )
            .unwrap();
        }
        tx.commit().unwrap();
        checkpoints.after_commit(conn);
    }

    fn store() -> (tempfile::TempDir, std::path::PathBuf, Connection) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("store.db");
        let conn = super::super::open_connection(&path, Durability::Full).unwrap();
        conn.execute_batch("CREATE TABLE scratch (n INTEGER PRIMARY KEY, b BLOB NOT NULL)")
            .unwrap();
        (dir, path, conn)
    }

    #[test]
    fn the_checkpoint_thread_copies_the_log_into_the_database_while_the_writer_goes_on() {
        let (_dir, path, mut conn) = store();
        let mut checkpoints = Checkpoints::start(&conn, &path, Durability::Full).unwrap();
        let before = file_len(&path);
        let mut next = 0;
        // About 1,500 frames: past the thread's threshold, short of the writer's own fold.
        for _ in 0..150 {
            commit_pages(&mut conn, &mut checkpoints, &mut next, 10);
        }
        assert!(LOG_FRAMES.with(Cell::get) < WRITER_FOLDS_AT);
        // Woken at 1,000 frames, the thread copies what they hold: more than 500 pages of
        // rows. Without it the database file would not grow until the writer folds.
        let copied = 500 * 4096;
        let deadline = Instant::now() + Duration::from_secs(20);
        while file_len(&path) < before + copied && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(
            file_len(&path) >= before + copied,
            "the database file grew from {before} to only {} bytes",
            file_len(&path)
        );
    }

    #[test]
    fn the_log_starts_over_instead_of_growing_and_loses_nothing() {
        let (_dir, path, mut conn) = store();
        let wal = path.with_extension("db-wal");
        let mut checkpoints = Checkpoints::start(&conn, &path, Durability::Full).unwrap();
        let mut next = 0;
        let mut restarts = 0;
        let mut last = 0;
        // Three times the writer's threshold.
        for _ in 0..(3 * WRITER_FOLDS_AT / 20) {
            commit_pages(&mut conn, &mut checkpoints, &mut next, 20);
            let frames = LOG_FRAMES.with(Cell::get);
            if frames < last {
                restarts += 1;
            }
            last = frames;
        }
        assert!(restarts >= 2, "the log started over {restarts} times");
        // The fold happens once the log holds WRITER_FOLDS_AT frames, so it never holds
        // more than that plus one commit.
        let most = (WRITER_FOLDS_AT as u64 + 20 + 1) * FRAME + 32;
        assert!(
            file_len(&wal) <= most,
            "the log file is {} bytes",
            file_len(&wal)
        );
        drop(checkpoints); // joins the thread
        drop(conn);
        let reopened = Connection::open(&path).unwrap();
        let (count, max): (i64, i64) = reopened
            .query_row("SELECT count(*), max(n) FROM scratch", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap();
        assert_eq!((count, max), (next, next));
    }
}
