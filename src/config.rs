//! How a node is configured ([`NodeConfig`]) and its data folder: the files the folder
//! holds, its lock, its mode. Low in `src/`: the node, backup, restore, copy and the control
//! socket all name these files, and this module imports only the binary's error type.

use std::fs::File;
use std::path::{Path, PathBuf};

use write_model::Limits;
use write_model::store::{self, Durability, Location};

use crate::error::Error;

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
