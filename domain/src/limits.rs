//! The limits in force: the specification's Limits table as defaults, each overridable by the
//! operator (`serve --limit-NAME`), reported by name in the discovery document.

use serde::Serialize;

/// Every limit the service enforces. Field names, in kebab-case, are the `--limit-NAME` flags
/// and the names the discovery document reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct Limits {
    pub title_chars: usize,
    pub location_chars: usize,
    pub name_chars: usize,
    pub folder_chars: usize,
    pub tag_chars: usize,
    pub description_chars: usize,
    pub comment_chars: usize,
    pub checklist_item_chars: usize,
    pub column_description_chars: usize,
    pub photo_chars: usize,
    pub projects_per_account: usize,
    pub columns_per_project: usize,
    pub tags_per_task: usize,
    pub checklist_items_per_task: usize,
    pub comments_per_task: usize,
    pub tasks_per_batch: usize,
    pub positions_per_request: usize,
    pub reads_per_day: u64,
    pub writes_per_day: u64,
    pub discovery_burst: u32,
    pub discovery_burst_seconds: u32,
    pub bad_key_burst: u32,
    pub undo_steps: usize,
    pub recoverable_deletions: usize,
    pub storage_bytes: u64,
    pub body_bytes: usize,
    pub finished_window_days: u32,
    pub ticket_seconds: u32,
    pub sockets_per_account: usize,
    pub keys_per_account: usize,
    /// Writes waiting for the writer; past it, a write answers 503 at once.
    pub writer_queue: usize,
    /// Writes one account may have queued or running at the writer (at most `writer_queue`);
    /// past it, that account's write answers 503 at once while other accounts' go on.
    pub writer_queue_per_account: usize,
    /// Open connections from one client address (an IPv6 /64 counts as one).
    pub connections_per_address: usize,
    /// A request body must arrive within this many seconds (a grace), plus a second for every
    /// `body_bytes_per_second` it declares (or, sent chunked, has sent so far): a body that
    /// arrives slower than that rate is cut off with 408 and its connection closed.
    pub body_seconds: u32,
    /// The least rate a body must keep after the grace: 1 MiB/s, so a 32 MiB import arrives
    /// within 42 s or is dropped, where holding it longer would cost more memory than it is
    /// worth (a slow uplink that needs more lowers this).
    pub body_bytes_per_second: u32,
    /// Bytes held in request bodies across the whole process (every account, every address,
    /// behind a proxy or not): a body is reserved its declared length, or grows its reservation
    /// chunk by chunk, before it is buffered; past the budget it is refused at once with 503
    /// `body_budget` and `Retry-After`. 256 MiB holds eight bodies at the largest cap at once.
    pub body_budget_bytes: u64,
    /// How long a write's idempotency key is remembered, in seconds (at least a day by the
    /// contract; smaller only for tests).
    pub idempotency_seconds: u64,
    /// Idempotency keys remembered per API key: past it, the oldest are forgotten.
    pub idempotency_keys_per_key: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            title_chars: 250,
            location_chars: 200,
            name_chars: 40,
            folder_chars: 40,
            tag_chars: 40,
            description_chars: 262_144,
            comment_chars: 16_384,
            checklist_item_chars: 500,
            column_description_chars: 2_000,
            photo_chars: 24_576,
            projects_per_account: 100,
            columns_per_project: 20,
            tags_per_task: 5,
            checklist_items_per_task: 100,
            comments_per_task: 200,
            tasks_per_batch: 200,
            positions_per_request: 1_000,
            reads_per_day: 9_000,
            writes_per_day: 3_000,
            discovery_burst: 10,
            discovery_burst_seconds: 10,
            bad_key_burst: 50,
            undo_steps: 20,
            recoverable_deletions: 20,
            storage_bytes: 16_777_216,
            body_bytes: 32 * 1024 * 1024,
            finished_window_days: 30,
            ticket_seconds: 60,
            sockets_per_account: 32,
            keys_per_account: 20,
            writer_queue: 2_048,
            writer_queue_per_account: 256,
            connections_per_address: 256,
            body_seconds: 10,
            body_bytes_per_second: 1024 * 1024,
            body_budget_bytes: 256 * 1024 * 1024,
            idempotency_seconds: 86_400,
            idempotency_keys_per_key: 10_000,
        }
    }
}

impl Limits {
    /// The finished-card window in milliseconds.
    pub fn finished_window_ms(&self) -> i64 {
        i64::from(self.finished_window_days) * 86_400_000
    }
}
