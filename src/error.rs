//! The binary's one error type, [`Error`]: why something the binary does on its own account
//! failed. Starting a node (the data folder, the store, the pepper), the operator's commands
//! (backup, restore, copy, import files), the control socket, and the CLI's input and output
//! all fail with it, and it is said once on stderr (the process exits non-zero) or put into
//! the operator's reply.
//!
//! What it is not: the models keep their own errors (`write_model::WriteError`,
//! `read_model::ReadError`), carried here whole as causes; and a request's failure is not an
//! error of the binary but a reply, the interface's envelope `{ok:false,error,code}`, whose
//! codes are the table in [`crate::http::error`]. That table is the interface; this type is
//! the binary's inside. This module sits at the bottom of `src/`: it imports no module of
//! the binary.

use std::path::{Path, PathBuf};

use write_model::WriteError;
use write_model::command::trello::TrelloError;

/// Why something the binary does failed; each variant's text is what the operator reads.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Said in words where no typed cause exists: a folder with no store, a pepper that does
    /// not match its store, a backup that is not one, another server holding the folder.
    #[error("{0}")]
    Message(String),
    /// A file that could not be read or written, named.
    #[error("{}: {source}", path.display())]
    File {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The store could not be opened, read or written while a node starts or an operator's
    /// command runs.
    #[error("the store: {0}")]
    Store(#[source] WriteError),
    /// A write the write model refused or failed, in its own words (an import's command).
    #[error(transparent)]
    Write(#[from] WriteError),
    /// A file given as a Trello board that is not one, or whose content does not fit (what,
    /// for each card or list): nothing was imported.
    #[error("{0}")]
    Trello(TrelloError),
    /// The running server's control socket could not be reached.
    #[error("the running server could not be reached through {path}: {source}")]
    Connect {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// The server closed the control socket before answering: it stopped or crashed
    /// mid-request.
    #[error("the server stopped before it answered")]
    NoAnswer,
    /// The server's answer on the control socket was not one.
    #[error("the server's answer could not be read: {0}")]
    BadAnswer(String),
    /// Input and output of the CLI itself (a listener, stdout, a file it writes), in the
    /// system's words.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// A line the CLI prints that could not be serialised.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
}

impl Error {
    pub fn new(message: impl Into<String>) -> Self {
        Error::Message(message.into())
    }

    /// A file that could not be read or written, named.
    pub fn file(path: &Path, source: std::io::Error) -> Self {
        Error::File {
            path: path.to_owned(),
            source,
        }
    }

    pub fn store(e: WriteError) -> Self {
        Error::Store(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_reads_as_the_operator_read_it_before() {
        let file = Error::file(
            Path::new("/d/pepper"),
            std::io::Error::from(std::io::ErrorKind::NotFound),
        );
        assert_eq!(file.to_string(), "/d/pepper: entity not found");
        assert!(std::error::Error::source(&file).is_some());
        let store = Error::store(WriteError::Internal("disk".into()));
        assert!(store.to_string().starts_with("the store: "));
        assert!(std::error::Error::source(&store).is_some());
        assert_eq!(
            Error::NoAnswer.to_string(),
            "the server stopped before it answered"
        );
        let trello = Error::Trello(TrelloError::NotTrello {
            missing: "`lists` is missing".into(),
        });
        assert_eq!(
            trello.to_string(),
            "the file is not a Trello board export: `lists` is missing"
        );
    }
}
