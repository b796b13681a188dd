//! Opening a node: the data folder and its lock, the store, the pepper that goes with it,
//! and the two models wired together through [`crate::publish`]. What a node is made of is
//! one [`Node`]; serving it is [`crate::run`].

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use read_model::ReadModel;
use write_model::store::{self, Durability, Location, Store};
use write_model::{Clocks, Limits, WriteModel};

use crate::admin::Admin;
use crate::auth::KeyCache;
use crate::error::Error;
use crate::live::Hub;
use crate::metrics::Metrics;
use crate::pepper;
use crate::state::{AppState, Parts};

pub const DB_FILE: &str = "workboard.db";
pub const LOCK_FILE: &str = "serve.lock";
pub const CONTROL_SOCKET: &str = "control.sock";
pub const PEPPER_FILE: &str = "pepper";
/// Each account's card search index, in a folder of its own (rebuilt when missing).
pub const SEARCH_FOLDER: &str = "search";

/// How a node is configured: the settings every command shares.
#[derive(Debug, Clone)]
pub struct NodeConfig {
    /// The node's own files: the lock, the control socket, the SQLite store, the pepper.
    pub data: PathBuf,
    pub durability: Durability,
    pub limits: Limits,
    pub trust_proxy: bool,
    /// The pepper file (`DATA/pepper` unless told otherwise).
    pub pepper_file: Option<PathBuf>,
    /// A PostgreSQL URL; `None` keeps the store in the data folder (SQLite).
    pub database: Option<String>,

    /// The origins browser apps may call the interface from (serve's own; none by default).
    pub cors_origins: Vec<String>,
}

impl NodeConfig {
    pub fn location(&self) -> Location {
        match &self.database {
            Some(url) => Location::Postgres(url.clone()),
            None => Location::Sqlite(self.data.join(DB_FILE)),
        }
    }

    pub fn pepper_path(&self) -> PathBuf {
        self.pepper_file
            .clone()
            .unwrap_or_else(|| self.data.join(PEPPER_FILE))
    }

    /// Whether a store exists at this node's location.
    pub fn store_exists(&self) -> Result<bool, Error> {
        store::exists(&self.location()).map_err(Error::store)
    }
}

/// Whether opening a node may make a new, empty store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Creating {
    /// `serve` and `keys issue` make a store where there is none.
    Allowed,
    /// Every other command needs one already.
    Refused,
}

/// Creates the data folder (0700) if missing, tightens one that others can enter, and makes
/// every file created after this 0600.
pub fn prepare_data_dir(data: &Path) -> Result<(), Error> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    // SAFETY: umask only changes this process's file-creation mask.
    unsafe {
        libc::umask(0o077);
    }
    match std::fs::metadata(data) {
        Ok(meta) if meta.permissions().mode() & 0o077 != 0 => {
            std::fs::set_permissions(data, std::fs::Permissions::from_mode(0o700))
                .map_err(|e| Error::file(data, e))?;
            tracing::warn!(folder = %data.display(), "the data folder was open to others; its mode is now 0700");
        }
        Ok(_) => {}
        Err(_) => std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(data)
            .map_err(|e| Error::file(data, e))?,
    }
    Ok(())
}

/// Takes the data folder's lock; `None` when another process holds it.
pub fn try_lock(data: &Path) -> Result<Option<File>, Error> {
    let path = data.join(LOCK_FILE);
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| Error::file(&path, e))?;
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(e)) => Err(Error::file(&path, e)),
    }
}

/// Everything a running Workboard node is made of.
#[derive(Clone)]
pub struct Node {
    pub state: Arc<AppState>,
    pub admin: Arc<Admin>,
    pub store: Arc<dyn Store>,
    pub clocks: Arc<Clocks>,
}

impl Node {
    /// Opens the node's store (making it only when `creating` allows), settles its pepper,
    /// and starts the writer with the read model behind it.
    pub fn open(config: &NodeConfig, creating: Creating) -> Result<Node, Error> {
        if creating == Creating::Refused && !config.store_exists()? {
            return Err(Error::new(format!(
                "{} holds no store (start `workboard serve` there, or issue a key, to make one)",
                config.location()
            )));
        }
        let store = store::open(&config.location(), config.durability).map_err(Error::store)?;
        let pepper = Arc::new(pepper::settle(&*store, &config.pepper_path())?);
        let limits = Arc::new(config.limits.clone());
        let clocks = Arc::new(match store.is_shared() {
            true => Clocks::shared(),
            false => Clocks::default(),
        });
        let read = Arc::new(
            ReadModel::open(store.clone(), clocks.clone(), &limits)
                .map_err(|e| Error::new(e.to_string()))?
                .with_search_folder(config.data.join(SEARCH_FOLDER)),
        );
        let keys = Arc::new(KeyCache::default());
        for key in store.live_keys().map_err(Error::store)? {
            keys.insert(key);
        }
        let saved_allowances = store.saved_allowances().map_err(Error::store)?;
        let hub = Arc::new(Hub::new(
            limits.sockets_per_account,
            limits.ticket_seconds,
            crate::tickets::Tickets::for_store(&store),
        ));
        let sink = crate::publish::sink(read.clone(), keys.clone(), hub.clone());
        let openapi = crate::http::openapi_json(&limits);
        let metrics = Arc::new(Metrics::new(
            crate::http::RouteTable::from_openapi(&openapi).templates(),
        ));
        let observer = {
            let metrics = metrics.clone();
            Box::new(move |commands: usize, took: std::time::Duration| {
                metrics.group_size.observe(commands as f64);
                metrics.commit_seconds.observe(took.as_secs_f64());
            })
        };
        let (write, _writer_thread) =
            WriteModel::start(&*store, limits, clocks.clone(), sink, observer)
                .map_err(Error::store)?;
        let admin = Arc::new(Admin {
            write: write.clone(),
            read: read.clone(),
            pepper: pepper.clone(),
            store: store.clone(),
        });
        let state = Arc::new(AppState::new(Parts {
            write,
            read,
            keys,
            pepper,
            trust_proxy: config.trust_proxy,
            saved_allowances,
            hub,
            metrics,
            openapi,
            store: store.clone(),
            cors_origins: config.cors_origins.clone(),
        }));
        Ok(Node {
            state,
            admin,
            store,
            clocks,
        })
    }

    /// Issues the first key of a store with no account yet and prints it once on stdout.
    ///
    /// Several nodes may start together on one empty PostgreSQL database: each claims the
    /// `first-key` entry in the store's meta table with a random token, and only the node
    /// whose token was kept issues and prints the key.
    pub fn first_key_if_new(&self) -> Result<(), Error> {
        if !self.store.account_ids().map_err(Error::store)?.is_empty() {
            return Ok(());
        }
        let mut token = [0u8; 16];
        getrandom::fill(&mut token).map_err(|e| Error::new(e.to_string()))?;
        let kept = self
            .store
            .claim_meta("first-key", &token)
            .map_err(Error::store)?;
        if kept != token {
            crate::tell!("another node issued this store's first key");
            return Ok(());
        }
        let (key, account, _) = self
            .admin
            .issue_key(None, Some("first key".into()))
            .map_err(Error::store)?;
        println!("key: {key}");
        crate::tell!("account: {account}");
        Ok(())
    }
}
