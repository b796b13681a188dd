//! A stand-in for the writer's own work, for the load bench's diagnostics only: built with
//! the `floor` feature (off by default, so never in a build that serves) and switched on by
//! `LOAD_WRITER_FLOOR_US=N`.
//!
//! A group made only of card PATCHes is answered as landed without being applied, after one
//! flush of a scratch file as large as a PATCH group's log frames and `N` microseconds of CPU
//! per command. Everything else runs as in service: HTTP, authentication, the hand-off to
//! this thread, and the reply read from the read model (which shows the card as it was). So
//! the bench measures what the rest of the system leaves for the writer's own work: the
//! throughput a writer costing `N` us per PATCH plus one disk flush per group could reach.

use std::io::{Seek, SeekFrom, Write};
use std::time::{Duration, Instant};

use super::envelope::Envelope;
use crate::command::{Command, Outcome};
use crate::records::Kind;

/// Bytes flushed per group: the 30-odd WAL frames (page and header) a group of about 23
/// PATCHes on the 1,000-card account writes.
const FLUSHED: usize = 30 * (4096 + 24);

pub(super) struct Floor {
    per_command: Duration,
    scratch: std::fs::File,
    frames: Vec<u8>,
}

impl Floor {
    /// The stand-in, if `LOAD_WRITER_FLOOR_US` asks for one.
    pub(super) fn from_env() -> Option<Floor> {
        let micros: u64 = std::env::var("LOAD_WRITER_FLOOR_US").ok()?.parse().ok()?;
        let path = std::env::temp_dir().join(format!("workboard-floor-{}", std::process::id()));
        let scratch = std::fs::OpenOptions::new()
            .create(true)
            .truncate(true)
            .write(true)
            .open(&path)
            // A diagnostic that silently fell back to the real writer would mislabel its run.
            .expect("the stand-in's scratch file opens");
        // Unlinked at once: the open handle keeps it until the writer stops.
        let _ = std::fs::remove_file(&path);
        tracing::warn!(micros, "diagnostic: the writer stands in for card PATCHes");
        Some(Floor {
            per_command: Duration::from_micros(micros),
            scratch,
            frames: vec![0x5a; FLUSHED],
        })
    }

    /// Answers `group` if every command in it is a card PATCH; hands it back otherwise.
    pub(super) fn stand_in(&mut self, group: Vec<Envelope>) -> Vec<Envelope> {
        let patched: Vec<String> = group
            .iter()
            .filter_map(|e| match &e.request.command {
                Command::UpdateTask(id, _) => Some(id.as_str().to_owned()),
                _ => None,
            })
            .collect();
        if patched.is_empty() || patched.len() < group.len() {
            return group;
        }
        // Overwritten in place, as SQLite reuses its log from the start after a checkpoint.
        let flushed = self
            .scratch
            .seek(SeekFrom::Start(0))
            .and_then(|_| self.scratch.write_all(&self.frames))
            .and_then(|()| self.scratch.sync_all());
        if let Err(e) = flushed {
            tracing::error!(error = %e, "diagnostic: the stand-in's flush failed");
        }
        for (envelope, id) in group.into_iter().zip(patched) {
            let started = Instant::now();
            while started.elapsed() < self.per_command {
                std::hint::spin_loop();
            }
            (envelope.reply)(Ok(Outcome::Updated {
                kind: Kind::Task,
                id,
            }));
        }
        Vec::new()
    }
}
