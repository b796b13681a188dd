//! Files in and out, the same for the CLI and the HTTP interface: an import file (Workboard's
//! own export, or one board of Trello's JSON export) read into one import command, and the
//! export formats.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use write_model::command::trello::{self, Problem, Problems, TrelloError};
use write_model::{Command, Limits, WriteError};

use crate::error::Error;

/// What an import file is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// Workboard's own export (`GET /export`).
    #[default]
    Workboard,
    /// One board of Trello's JSON export.
    Trello,
}

impl Source {
    pub fn parse(s: &str) -> Option<Source> {
        match s {
            "workboard" => Some(Source::Workboard),
            "trello" => Some(Source::Trello),
            _ => None,
        }
    }
}

/// The export formats: `json` is the whole-account document that imports back; `csv` and
/// `ndjson` are one row per card, for analysis.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum ExportFormat {
    #[default]
    Json,
    Csv,
    Ndjson,
}

impl ExportFormat {
    pub fn parse(s: &str) -> Option<ExportFormat> {
        match s {
            "json" => Some(ExportFormat::Json),
            "csv" => Some(ExportFormat::Csv),
            "ndjson" => Some(ExportFormat::Ndjson),
            _ => None,
        }
    }

    /// The row format, for all but `json`.
    pub fn rows(self) -> Option<read_model::export::Format> {
        match self {
            ExportFormat::Json => None,
            ExportFormat::Csv => Some(read_model::export::Format::Csv),
            ExportFormat::Ndjson => Some(read_model::export::Format::Ndjson),
        }
    }
}

/// An import file read into the command that imports it, with what a lenient Trello import
/// leaves out. Why a file is not taken is [`Error::Write`] (not JSON, not an export, a value
/// the write model refuses) or [`Error::Trello`] (not a Trello board, or what in it does not
/// fit: the first ones, and how many more); nothing else.
pub fn prepare(
    bytes: &[u8],
    source: Source,
    lenient: bool,
    limits: &Limits,
) -> Result<(Command, Problems), Error> {
    match source {
        Source::Workboard if lenient => Err(WriteError::invalid(
            "lenient",
            "`lenient` applies to Trello imports only: a Workboard export imports whole or not at all",
        )
        .into()),
        Source::Workboard => Ok((
            write_model::Command::import(bytes, limits)?,
            Problems::default(),
        )),
        Source::Trello => {
            let now = write_model::clock::wall_ms();
            let converted = trello::convert(bytes, limits, lenient, now).map_err(|e| match e {
                TrelloError::BadJson(m) => {
                    Error::Write(WriteError::BadJson(format!("the file is not JSON: {m}")))
                }
                other => Error::Trello(other),
            })?;
            let command = write_model::Command::import(&converted.document, limits)?;
            Ok((command, converted.skipped))
        }
    }
}

/// A problem as JSON: `{card, list, message}`, each name as Trello had it (`null` when the
/// problem is not a card's or a list's).
pub fn problem_json(p: &Problem) -> Value {
    json!({"card": p.card, "list": p.list, "message": p.message})
}
