//! The command line: every flag also reads an environment variable (`WORKBOARD_...`).

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use write_model::{Durability, Limits};

use crate::config::NodeConfig;

#[derive(Debug, Parser)]
#[command(
    name = "workboard",
    version,
    about = "A self-hosted work-board service"
)]
pub struct Cli {
    #[command(flatten)]
    pub node: NodeArgs,
    /// How log lines are written: `text` or `json` (one object per line).
    #[arg(
        long,
        global = true,
        env = "WORKBOARD_LOG_FORMAT",
        value_enum,
        default_value = "text"
    )]
    pub log_format: crate::LogFormat,
    #[command(subcommand)]
    pub command: CliCommand,
}

/// The settings every command shares: where the node keeps its files and store, and the
/// limits in force (an offline command applies them exactly as `serve` does).
#[derive(Debug, Args)]
pub struct NodeArgs {
    /// The data folder: the store, the pepper, the lock and the control socket.
    #[arg(
        long,
        global = true,
        env = "WORKBOARD_DATA",
        default_value = "./workboard-data"
    )]
    pub data: PathBuf,
    /// `full`: an acknowledged write survives a power loss; `normal`: a process crash.
    #[arg(
        long,
        global = true,
        env = "WORKBOARD_DURABILITY",
        value_enum,
        default_value = "full"
    )]
    pub durability: DurabilityArg,
    /// The pepper file the keys' digests are made with (default: `DATA/pepper`).
    #[arg(long, global = true, env = "WORKBOARD_PEPPER_FILE")]
    pub pepper_file: Option<PathBuf>,
    /// The store: a PostgreSQL URL (`postgres://user@host:port/dbname`); without it, SQLite
    /// in the data folder.
    #[arg(long, global = true, env = "WORKBOARD_DATABASE")]
    pub database: Option<String>,
    /// PostgreSQL: how long opening a connection may take (ms; 0: no limit).
    #[arg(
        long,
        global = true,
        env = "WORKBOARD_PG_CONNECT_TIMEOUT_MS",
        default_value_t = 5_000
    )]
    pub pg_connect_timeout_ms: u64,
    /// PostgreSQL: silence on a connection before TCP keepalive probes start (ms; 0: the
    /// system's); three unanswered probes 10 s apart end it.
    #[arg(
        long,
        global = true,
        env = "WORKBOARD_PG_KEEPALIVE_IDLE_MS",
        default_value_t = 30_000
    )]
    pub pg_keepalive_idle_ms: u64,
    /// PostgreSQL: the longest one statement may run (ms; 0: no limit); a statement past it
    /// fails its request with 503. `workboard copy`, backups and schema upgrades are not bound.
    #[arg(
        long,
        global = true,
        env = "WORKBOARD_PG_STATEMENT_TIMEOUT_MS",
        default_value_t = 30_000
    )]
    pub pg_statement_timeout_ms: u64,
    #[command(flatten)]
    pub limits: LimitArgs,
}

impl NodeArgs {
    /// The timeouts of every PostgreSQL connection the process makes.
    pub fn pg_timeouts(&self) -> write_model::store::postgres::Timeouts {
        use std::time::Duration;
        write_model::store::postgres::Timeouts {
            connect: Duration::from_millis(self.pg_connect_timeout_ms),
            keepalive_idle: Duration::from_millis(self.pg_keepalive_idle_ms),
            statement: Duration::from_millis(self.pg_statement_timeout_ms),
        }
    }

    /// The node these settings describe (`trust_proxy` is serve's own).
    pub fn config(&self, trust_proxy: bool) -> NodeConfig {
        NodeConfig {
            data: self.data.clone(),
            durability: match self.durability {
                DurabilityArg::Full => Durability::Full,
                DurabilityArg::Normal => Durability::Normal,
            },
            limits: self.limits.limits(),
            trust_proxy,
            pepper_file: self.pepper_file.clone(),
            database: self.database.clone(),
            cors_origins: Vec::new(),
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum CliCommand {
    /// Serve the interface.
    Serve(Box<ServeArgs>),
    /// Issue, list or revoke keys.
    #[command(subcommand)]
    Keys(KeysCommand),
    /// Recreate an export file's projects, columns and cards in an account, all or nothing;
    /// or, with `--from trello`, one board of Trello's JSON export as a new project.
    Import {
        file: PathBuf,
        #[arg(long, env = "WORKBOARD_ACCOUNT")]
        account: String,
        /// What the file is: `workboard` (an export of this service) or `trello`.
        #[arg(long, env = "WORKBOARD_FROM", value_enum, default_value = "workboard")]
        from: crate::transfer::Source,
        /// Trello only: leave out what does not fit, with a warning naming each card,
        /// instead of refusing the whole file.
        #[arg(long, env = "WORKBOARD_LENIENT")]
        lenient: bool,
    },
    /// Write a backup folder holding the whole store and its pepper, taken while the
    /// server goes on.
    Backup {
        #[arg(long, env = "WORKBOARD_OUT")]
        out: PathBuf,
    },
    /// Make a data folder from a backup folder: the store and its pepper, every key working.
    Restore {
        /// The backup folder `workboard backup --out` wrote.
        backup: PathBuf,
    },
    /// Move a whole store between engines: SQLite to PostgreSQL and back. SOURCE and TARGET
    /// are each a data folder or a PostgreSQL URL; the target must hold no data.
    Copy {
        #[arg(long = "from", env = "WORKBOARD_COPY_FROM")]
        from: String,
        #[arg(long = "to", env = "WORKBOARD_COPY_TO")]
        to: String,
    },
    /// Write an account's export file (the same as `GET /export`).
    Export {
        #[arg(long, env = "WORKBOARD_ACCOUNT")]
        account: String,
        #[arg(long, env = "WORKBOARD_OUT")]
        out: Option<PathBuf>,
        /// `json` (the file that imports back), or one row per card: `csv`, `ndjson`.
        #[arg(long, env = "WORKBOARD_FORMAT", value_enum, default_value = "json")]
        format: crate::transfer::ExportFormat,
    },
}

#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// Issue a key; without `--account`, for a new account. The key is the last line of stdout.
    Issue {
        #[arg(long, env = "WORKBOARD_ACCOUNT")]
        account: Option<String>,
        #[arg(long, env = "WORKBOARD_LABEL")]
        label: Option<String>,
        /// `full` (default), `read` (may read and open the live socket only) or `calendar`
        /// (may fetch the calendar feed only, also as `?key=` in its URL).
        #[arg(long, env = "WORKBOARD_KEY_ACCESS", value_enum, default_value = "full")]
        access: AccessArg,
        /// When the key stops working, in ms since the epoch; it never does unless given.
        #[arg(long, env = "WORKBOARD_KEY_EXPIRES_AT")]
        expires_at: Option<i64>,
    },
    /// List an account's live keys, one JSON object a line.
    List {
        #[arg(long, env = "WORKBOARD_ACCOUNT")]
        account: String,
    },
    /// Revoke a key by id.
    Revoke { id: String },
}

/// A key's access, as `keys issue --access` takes it.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum AccessArg {
    Full,
    Read,
    Calendar,
}

impl From<AccessArg> for write_model::store::KeyAccess {
    fn from(a: AccessArg) -> Self {
        match a {
            AccessArg::Full => write_model::store::KeyAccess::Full,
            AccessArg::Read => write_model::store::KeyAccess::Read,
            AccessArg::Calendar => write_model::store::KeyAccess::Calendar,
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum DurabilityArg {
    Full,
    Normal,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    #[arg(long, env = "WORKBOARD_ADDR", default_value = "127.0.0.1:8080")]
    pub addr: SocketAddr,
    /// Take the client address from `X-Forwarded-For` (behind a reverse proxy only).
    #[arg(long, env = "WORKBOARD_TRUST_PROXY")]
    pub trust_proxy: bool,
    /// Serve `GET /metrics` (Prometheus text, no key) on this address of its own; off
    /// unless given.
    #[arg(long, env = "WORKBOARD_METRICS_ADDR")]
    pub metrics_addr: Option<SocketAddr>,
    /// An origin (`https://app.example`) whose browser apps may call the interface; give
    /// it again for more. None by default: no CORS headers at all.
    #[arg(
        long = "cors-origin",
        env = "WORKBOARD_CORS_ORIGINS",
        value_delimiter = ',',
        value_parser = crate::http::cors::check_origin
    )]
    pub cors_origins: Vec<String>,
}

/// Declares one `--limit-NAME` flag (and `WORKBOARD_LIMIT_NAME`) per field of [`Limits`].
macro_rules! limit_args {
    ($($field:ident: $ty:ty => $flag:literal, $env:literal;)*) => {
        #[derive(Debug, Args, Default)]
        pub struct LimitArgs {
            $(
                #[arg(long = $flag, env = $env, global = true)]
                pub $field: Option<$ty>,
            )*
        }

        impl LimitArgs {
            /// The specification's defaults with the operator's overrides.
            pub fn limits(&self) -> Limits {
                let mut limits = Limits::default();
                $(if let Some(v) = self.$field { limits.$field = v; })*
                limits
            }
        }
    };
}

limit_args! {
    title_chars: usize => "limit-title-chars", "WORKBOARD_LIMIT_TITLE_CHARS";
    location_chars: usize => "limit-location-chars", "WORKBOARD_LIMIT_LOCATION_CHARS";
    name_chars: usize => "limit-name-chars", "WORKBOARD_LIMIT_NAME_CHARS";
    folder_chars: usize => "limit-folder-chars", "WORKBOARD_LIMIT_FOLDER_CHARS";
    tag_chars: usize => "limit-tag-chars", "WORKBOARD_LIMIT_TAG_CHARS";
    description_chars: usize => "limit-description-chars", "WORKBOARD_LIMIT_DESCRIPTION_CHARS";
    comment_chars: usize => "limit-comment-chars", "WORKBOARD_LIMIT_COMMENT_CHARS";
    checklist_item_chars: usize => "limit-checklist-item-chars", "WORKBOARD_LIMIT_CHECKLIST_ITEM_CHARS";
    column_description_chars: usize => "limit-column-description-chars", "WORKBOARD_LIMIT_COLUMN_DESCRIPTION_CHARS";
    photo_chars: usize => "limit-photo-chars", "WORKBOARD_LIMIT_PHOTO_CHARS";
    projects_per_account: usize => "limit-projects-per-account", "WORKBOARD_LIMIT_PROJECTS_PER_ACCOUNT";
    columns_per_project: usize => "limit-columns-per-project", "WORKBOARD_LIMIT_COLUMNS_PER_PROJECT";
    tags_per_task: usize => "limit-tags-per-task", "WORKBOARD_LIMIT_TAGS_PER_TASK";
    checklist_items_per_task: usize => "limit-checklist-items-per-task", "WORKBOARD_LIMIT_CHECKLIST_ITEMS_PER_TASK";
    comments_per_task: usize => "limit-comments-per-task", "WORKBOARD_LIMIT_COMMENTS_PER_TASK";
    tasks_per_batch: usize => "limit-tasks-per-batch", "WORKBOARD_LIMIT_TASKS_PER_BATCH";
    positions_per_request: usize => "limit-positions-per-request", "WORKBOARD_LIMIT_POSITIONS_PER_REQUEST";
    reads_per_day: u64 => "limit-reads-per-day", "WORKBOARD_LIMIT_READS_PER_DAY";
    writes_per_day: u64 => "limit-writes-per-day", "WORKBOARD_LIMIT_WRITES_PER_DAY";
    discovery_burst: u32 => "limit-discovery-burst", "WORKBOARD_LIMIT_DISCOVERY_BURST";
    discovery_burst_seconds: u32 => "limit-discovery-burst-seconds", "WORKBOARD_LIMIT_DISCOVERY_BURST_SECONDS";
    bad_key_burst: u32 => "limit-bad-key-burst", "WORKBOARD_LIMIT_BAD_KEY_BURST";
    undo_steps: usize => "limit-undo-steps", "WORKBOARD_LIMIT_UNDO_STEPS";
    recoverable_deletions: usize => "limit-recoverable-deletions", "WORKBOARD_LIMIT_RECOVERABLE_DELETIONS";
    storage_bytes: u64 => "limit-storage-bytes", "WORKBOARD_LIMIT_STORAGE_BYTES";
    body_bytes: usize => "limit-body-bytes", "WORKBOARD_LIMIT_BODY_BYTES";
    finished_window_days: u32 => "limit-finished-window-days", "WORKBOARD_LIMIT_FINISHED_WINDOW_DAYS";
    ticket_seconds: u32 => "limit-ticket-seconds", "WORKBOARD_LIMIT_TICKET_SECONDS";
    sockets_per_account: usize => "limit-sockets-per-account", "WORKBOARD_LIMIT_SOCKETS_PER_ACCOUNT";
    keys_per_account: usize => "limit-keys-per-account", "WORKBOARD_LIMIT_KEYS_PER_ACCOUNT";
    writer_queue: usize => "limit-writer-queue", "WORKBOARD_LIMIT_WRITER_QUEUE";
    writer_queue_per_account: usize => "limit-writer-queue-per-account", "WORKBOARD_LIMIT_WRITER_QUEUE_PER_ACCOUNT";
    connections_per_address: usize => "limit-connections-per-address", "WORKBOARD_LIMIT_CONNECTIONS_PER_ADDRESS";
    body_seconds: u32 => "limit-body-seconds", "WORKBOARD_LIMIT_BODY_SECONDS";
    body_bytes_per_second: u32 => "limit-body-bytes-per-second", "WORKBOARD_LIMIT_BODY_BYTES_PER_SECOND";
    body_budget_bytes: u64 => "limit-body-budget-bytes", "WORKBOARD_LIMIT_BODY_BUDGET_BYTES";
    idempotency_seconds: u64 => "limit-idempotency-seconds", "WORKBOARD_LIMIT_IDEMPOTENCY_SECONDS";
    idempotency_keys_per_key: usize => "limit-idempotency-keys-per-key", "WORKBOARD_LIMIT_IDEMPOTENCY_KEYS_PER_KEY";
}
