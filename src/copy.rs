//! Moving an install: `workboard copy --from SOURCE --to TARGET` copies a whole store
//! between engines (SQLite to PostgreSQL and back), keys, undo steps and the bin included,
//! from one snapshot of the source into an empty target, in one transaction. A data folder's
//! pepper comes along to a data folder; a PostgreSQL target is told which pepper its nodes
//! need.

use std::path::PathBuf;
use std::time::Instant;

use write_model::WriteError;
use write_model::store::copy::Rows;
use write_model::store::{self, Durability, Location};

use crate::config::{DB_FILE, PEPPER_FILE, prepare_data_dir};
use crate::error::Error;

/// What a copy moved.
#[derive(Debug, Clone, Copy, Default)]
pub struct Copied {
    pub rows: u64,
    pub seconds: f64,
}

/// A copy's end: a data folder (its SQLite store and its pepper) or a database URL.
pub enum End {
    Folder(PathBuf),
    Database(String),
}

impl End {
    pub fn parse(text: &str) -> End {
        match Location::parse(text) {
            Location::Postgres(url) => End::Database(url),
            Location::Sqlite(path) => End::Folder(path),
        }
    }

    fn location(&self) -> Location {
        match self {
            End::Folder(data) => Location::Sqlite(data.join(DB_FILE)),
            End::Database(url) => Location::Postgres(url.clone()),
        }
    }
}

/// Copies every row of the store at `from` into the empty store at `to`; `progress` hears
/// of each batch. The schema's version row stays the target's own.
pub fn between(
    from: &Location,
    to: &Location,
    durability: Durability,
    progress: &mut dyn FnMut(&Rows),
) -> Result<Copied, WriteError> {
    let started = Instant::now();
    let source = store::open(from, durability)?;
    let target = store::open(to, durability)?;
    if target.holds_data()? {
        return Err(WriteError::invalid(
            "to",
            format!("{to} already holds data; a copy goes into an empty store"),
        ));
    }
    let mut loader = target.loader()?;
    let mut rows = 0u64;
    source.copy_out(&mut |batch| {
        let batch = match batch {
            Rows::Meta(meta) => Rows::Meta(
                meta.into_iter()
                    .filter(|m| m.name != "schema-version")
                    .collect(),
            ),
            other => other,
        };
        rows += batch.len() as u64;
        progress(&batch);
        loader.load(batch)
    })?;
    loader.commit()?;
    Ok(Copied {
        rows,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// `workboard copy`: the store, and a data folder's pepper when both ends are folders.
pub fn run(
    from: &str,
    to: &str,
    durability: Durability,
    progress: &mut dyn FnMut(&Rows),
) -> Result<Copied, Error> {
    let (from, to) = (End::parse(from), End::parse(to));
    if let End::Folder(data) = &from
        && !data.join(DB_FILE).exists()
    {
        return Err(Error::new(format!("{} holds no store", data.display())));
    }
    if let End::Folder(data) = &to {
        prepare_data_dir(data)?;
    }
    let copied =
        between(&from.location(), &to.location(), durability, progress).map_err(Error::store)?;
    match (&from, &to) {
        (End::Folder(source), End::Folder(target)) => {
            let pepper = std::fs::read(source.join(PEPPER_FILE))
                .map_err(|e| Error::file(&source.join(PEPPER_FILE), e))?;
            if !target.join(PEPPER_FILE).exists() {
                crate::pepper::write_atomically(&target.join(PEPPER_FILE), &pepper)?;
            }
        }
        (End::Folder(source), End::Database(_)) => crate::tell!(
            "start the nodes of the target with this pepper: --pepper-file {}",
            source.join(PEPPER_FILE).display()
        ),
        (End::Database(_), End::Folder(target)) => crate::tell!(
            "put the pepper the source's nodes use at {}",
            target.join(PEPPER_FILE).display()
        ),
        (End::Database(_), End::Database(_)) => {}
    }
    Ok(copied)
}
