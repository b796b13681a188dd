//! Whether the writer thread still runs. It stops on a panic outside any one command (a
//! command's own panic only fails that command): in the store's code around a group, or in
//! what follows a commit (applying it to the read side, answering). Its cause is logged and
//! kept, so health, every write and the metrics tell the truth instead of waiting on a
//! thread that is gone.

use std::any::Any;
use std::sync::{Arc, OnceLock};

/// Why the writer stopped, once it has; shared by the writer and every handle.
#[derive(Clone, Default)]
pub(super) struct Stopped(Arc<OnceLock<String>>);

impl Stopped {
    pub(super) fn get(&self) -> Option<&str> {
        self.0.get().map(String::as_str)
    }

    /// Marks the writer stopped and logs why (the first cause is kept).
    pub(super) fn stop(&self, cause: String, during: &str) {
        tracing::error!(%cause, during, "the writer has stopped; writes answer 503 until the node restarts");
        let _ = self.0.set(cause);
    }
}

/// A panic's message, as `panic!` formatted it.
pub(super) fn panic_message(payload: &(dyn Any + Send)) -> String {
    match payload.downcast_ref::<&str>() {
        Some(s) => format!("panicked: {s}"),
        None => match payload.downcast_ref::<String>() {
            Some(s) => format!("panicked: {s}"),
            None => "panicked (no message)".to_owned(),
        },
    }
}

/// TEST FAULT INJECTION, compiled into debug builds only (never into a release build, so no
/// key holder can reach it): when the environment variable `WORKBOARD_TEST_WRITER_PANIC_ON`
/// is set at start, the writer panics after committing a group that holds a card with
/// exactly that title, in the step that hands the group to the read side. The tests use it
/// to show that such a death is answered (health 503, writes 503, the metric, the log).
#[cfg(debug_assertions)]
#[derive(Default)]
pub(super) struct Fault {
    panic_on: Option<String>,
}

#[cfg(debug_assertions)]
impl Fault {
    pub(super) const VAR: &str = "WORKBOARD_TEST_WRITER_PANIC_ON";

    pub(super) fn from_env() -> Fault {
        Fault {
            panic_on: std::env::var(Self::VAR).ok().filter(|t| !t.is_empty()),
        }
    }

    /// Panics when the committed effects hold a card titled as the variable says.
    pub(super) fn after_commit(&self, effects: &[crate::change::Effect]) {
        use crate::change::{Effect, RecordChange};
        use crate::records::Record;
        let Some(title) = &self.panic_on else { return };
        let hit = effects.iter().any(|e| match e {
            Effect::Records(cs) => cs
                .records
                .iter()
                .any(|r| matches!(r, RecordChange::Live(Record::Task(t)) if t.title == *title)),
            Effect::Key(_) => false,
        });
        if hit {
            panic!(
                "test fault injection ({}): a committed card is titled {title:?}",
                Self::VAR
            );
        }
    }
}
