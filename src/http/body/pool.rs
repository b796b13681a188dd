//! The threads that parse large bodies (and convert imports): few, and at a lower scheduling
//! priority than the async workers. A flood of wide bodies from one account then takes the
//! CPU only when the small requests of every other account leave it idle: the kernel runs a
//! nice-10 thread about a tenth as often as a nice-0 one that wants the same core, where a
//! parse on tokio's blocking pool would share the core with the workers as an equal.

use std::panic::AssertUnwindSafe;
use std::sync::mpsc;

use parking_lot::Mutex;
use std::sync::Arc;

/// How much lower than the workers the parsing threads run (`nice` 10).
const NICENESS: i32 = 10;

type Job = Box<dyn FnOnce() + Send>;

/// A fixed set of low-priority threads taking parse jobs in turn.
pub struct ParsePool {
    jobs: Mutex<mpsc::Sender<Job>>,
}

impl ParsePool {
    pub fn new(threads: usize) -> ParsePool {
        let (sender, receiver) = mpsc::channel::<Job>();
        let receiver = Arc::new(Mutex::new(receiver));
        for i in 0..threads.max(1) {
            let receiver = receiver.clone();
            std::thread::Builder::new()
                .name(format!("workboard-parse-{i}"))
                .spawn(move || {
                    lower_own_priority();
                    loop {
                        // The lock is held only to take the next job, not while it runs.
                        let job = receiver.lock().recv();
                        match job {
                            Ok(job) => job(),
                            Err(_) => return,
                        }
                    }
                })
                .expect("a parsing thread starts");
        }
        ParsePool {
            jobs: Mutex::new(sender),
        }
    }

    /// Runs `work` on one of the pool's threads; `Err` carries a panic's message.
    pub async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, String> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move || {
            let result = std::panic::catch_unwind(AssertUnwindSafe(work)).map_err(|panic| {
                panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a parse panicked".into())
            });
            let _ = tx.send(result);
        });
        self.jobs
            .lock()
            .send(job)
            .map_err(|_| "the parsing threads have stopped".to_owned())?;
        rx.await
            .map_err(|_| "a parsing thread dropped its job".to_owned())?
    }
}

/// Lowers the calling thread's priority (Linux gives each thread its own nice value). A
/// failure only leaves the thread at the workers' priority, so it is not an error.
fn lower_own_priority() {
    // SAFETY: gettid and setpriority take plain integers and touch no memory of ours.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, tid, NICENESS);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_job_runs_on_a_low_priority_thread_and_a_panic_is_an_error() {
        let pool = ParsePool::new(1);
        let niceness = pool
            .run(|| unsafe {
                let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
                libc::getpriority(libc::PRIO_PROCESS, tid)
            })
            .await
            .expect("the job runs");
        assert_eq!(niceness, NICENESS);
        let panicked = pool.run(|| -> u8 { panic!("wide") }).await;
        assert_eq!(panicked, Err("wide".to_owned()));
        assert_eq!(pool.run(|| 7).await, Ok(7), "the thread outlives a panic");
    }
}
