//! Backups that restore whole. A backup is one folder holding everything a restore needs:
//! - `workboard.db`: the whole store as one SQLite database, copied in one step from a
//!   single snapshot while writes go on;
//! - `pepper`: the secret the keys' digests were made with (without it no key works);
//! - `manifest.json`: what the backup is (its format, the engine it came from, when, and
//!   how many records and bytes).
//!
//! The folder is written under a temporary name and renamed into place once complete, so a
//! backup that exists is whole. It holds the pepper: keep it as safe as the keys it opens.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use write_model::WriteError;
use write_model::store::{self, Location, Store};

use crate::config::{NodeConfig, prepare_data_dir, try_lock};
use crate::error::Error;
use crate::pepper::Pepper;

pub const STORE_FILE: &str = "workboard.db";
pub const PEPPER_FILE: &str = "pepper";
pub const MANIFEST_FILE: &str = "manifest.json";
/// The backup folder's layout version.
const FORMAT: u32 = 1;

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    pub format: u32,
    /// The engine the store was copied from (`sqlite`, `postgresql`).
    pub engine: String,
    pub created_at: i64,
    pub records: u64,
    pub bytes: u64,
}

/// What a backup or restore did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    pub records: u64,
    pub bytes: u64,
    pub seconds: f64,
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} records, {} bytes, {:.2} s",
            self.records, self.bytes, self.seconds
        )
    }
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> WriteError + '_ {
    move |e| WriteError::Internal(format!("{}: {e}", path.display()))
}

fn sync_file(path: &Path) -> Result<(), WriteError> {
    std::fs::File::open(path)
        .and_then(|f| f.sync_all())
        .map_err(io(path))
}

/// Writes a backup of `store` with `pepper` into the folder `out`, which must not exist
/// yet (or be empty).
pub fn write(store: &dyn Store, pepper: &Pepper, out: &Path) -> Result<Summary, WriteError> {
    use std::os::unix::fs::DirBuilderExt;
    let started = Instant::now();
    if out.exists() && std::fs::read_dir(out).map_err(io(out))?.next().is_some() {
        return Err(WriteError::invalid(
            "out",
            format!(
                "{} exists and is not empty; a backup goes to a new folder",
                out.display()
            ),
        ));
    }
    let partial = partial_name(out);
    let _ = std::fs::remove_dir_all(&partial);
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&partial)
        .map_err(io(&partial))?;
    let db = partial.join(STORE_FILE);
    let records = store.snapshot_to(&db)?;
    sync_file(&db)?;
    crate::pepper::write_atomically(&partial.join(PEPPER_FILE), pepper.secret())
        .map_err(|e| WriteError::Internal(e.to_string()))?;
    let bytes = std::fs::metadata(&db).map_err(io(&db))?.len();
    let manifest = Manifest {
        format: FORMAT,
        engine: store.engine().to_owned(),
        created_at: write_model::clock::wall_ms(),
        records,
        bytes,
    };
    let manifest_path = partial.join(MANIFEST_FILE);
    let text =
        serde_json::to_vec_pretty(&manifest).map_err(|e| WriteError::Internal(e.to_string()))?;
    std::fs::write(&manifest_path, text).map_err(io(&manifest_path))?;
    sync_file(&manifest_path)?;
    sync_file(&partial)?;
    if out.exists() {
        std::fs::remove_dir(out).map_err(io(out))?;
    }
    std::fs::rename(&partial, out).map_err(io(out))?;
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        sync_file(parent)?;
    }
    Ok(Summary {
        records,
        bytes,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// `out` with `.partial` added: where a backup is written before it is whole.
fn partial_name(out: &Path) -> PathBuf {
    let mut name = out.as_os_str().to_owned();
    name.push(".partial");
    PathBuf::from(name)
}

/// A backup folder, checked: its manifest read, its store and pepper present.
pub struct Backup {
    pub folder: PathBuf,
    pub manifest: Manifest,
}

impl Backup {
    pub fn open(folder: &Path) -> Result<Backup, String> {
        let manifest_path = folder.join(MANIFEST_FILE);
        let text = std::fs::read(&manifest_path).map_err(|e| {
            format!(
                "{}: not a Workboard backup folder ({e})",
                manifest_path.display()
            )
        })?;
        let manifest: Manifest = serde_json::from_slice(&text)
            .map_err(|e| format!("{}: {e}", manifest_path.display()))?;
        if manifest.format != FORMAT {
            return Err(format!(
                "{}: backup format {} is not one this build reads ({FORMAT})",
                manifest_path.display(),
                manifest.format
            ));
        }
        for file in [STORE_FILE, PEPPER_FILE] {
            if !folder.join(file).is_file() {
                return Err(format!(
                    "{}: missing from the backup",
                    folder.join(file).display()
                ));
            }
        }
        Ok(Backup {
            folder: folder.to_owned(),
            manifest,
        })
    }

    pub fn store_file(&self) -> PathBuf {
        self.folder.join(STORE_FILE)
    }

    pub fn pepper(&self) -> Result<Vec<u8>, String> {
        let path = self.folder.join(PEPPER_FILE);
        std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))
    }
}

/// Copies a file to `to` through a temporary name, flushed, then renamed into place.
pub fn copy_file_atomically(from: &Path, to: &Path) -> Result<u64, String> {
    let mut temp = to.as_os_str().to_owned();
    temp.push(".partial");
    let temp = PathBuf::from(temp);
    let bytes = std::fs::copy(from, &temp).map_err(|e| format!("{}: {e}", temp.display()))?;
    std::fs::File::open(&temp)
        .and_then(|f| f.sync_all())
        .and_then(|()| std::fs::rename(&temp, to))
        .map_err(|e| format!("{}: {e}", to.display()))?;
    Ok(bytes)
}

/// Restores the backup in `folder` into the node `config` describes: its store and its
/// pepper, so that every key works. Refuses a data folder that already holds a store, and a
/// pepper file there that is not the backup's.
pub fn restore(folder: &Path, config: &NodeConfig) -> Result<Summary, Error> {
    let started = Instant::now();
    let backup = Backup::open(folder).map_err(Error::new)?;
    prepare_data_dir(&config.data)?;
    let Some(_lock) = try_lock(&config.data)? else {
        return Err(Error::new(format!(
            "a workboard server is serving {}; stop it before restoring",
            config.data.display()
        )));
    };
    let location = config.location();
    let taken = match &location {
        Location::Sqlite(path) => path.exists(),
        Location::Postgres(_) => store::open(&location, config.durability)
            .and_then(|s| s.holds_data())
            .map_err(Error::store)?,
    };
    if taken {
        return Err(Error::new(format!(
            "{location} already holds a store; restore into a new data folder or an empty database"
        )));
    }
    let secret = backup.pepper().map_err(Error::new)?;
    let pepper_path = config.pepper_path();
    match std::fs::read(&pepper_path) {
        Ok(existing) if existing != secret => {
            return Err(Error::new(format!(
                "{}: a different pepper is already there; restore into a new data folder",
                pepper_path.display()
            )));
        }
        _ => crate::pepper::write_atomically(&pepper_path, &secret)?,
    }
    let bytes = match &location {
        Location::Sqlite(path) => {
            copy_file_atomically(&backup.store_file(), path).map_err(Error::new)?
        }
        Location::Postgres(_) => {
            let from = Location::Sqlite(backup.store_file());
            crate::copy::between(&from, &location, config.durability, &mut |_| {})
                .map_err(Error::store)?;
            backup.manifest.bytes
        }
    };
    // The restored node must start as `serve` would: its pepper recognised by its store.
    let store = store::open(&config.location(), config.durability).map_err(Error::store)?;
    crate::pepper::settle(&*store, &pepper_path)?;
    Ok(Summary {
        records: backup.manifest.records,
        bytes,
        seconds: started.elapsed().as_secs_f64(),
    })
}
