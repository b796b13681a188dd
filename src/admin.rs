//! The operator's operations (issue, list and revoke keys; export; import), the same whether
//! the CLI runs them on the store itself or a running server runs them for it over the
//! control socket.

use std::sync::Arc;

use bytes::Bytes;
use read_model::{Completed, ReadModel};
use serde::{Deserialize, Serialize};
use write_model::command::account::{Expiry, IssueKey, RevokeKey};
use write_model::ids::{IdKind, KeyId};
use write_model::store::{KeyAccess, KeyRecord, Store};
use write_model::{Command, Outcome, Request, WriteError, WriteModel};

use crate::error::Error;
use crate::pepper::{Pepper, new_key};
use crate::transfer::{ExportFormat, Source};

/// What the control socket carries, one JSON line each way.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub enum AdminRequest {
    IssueKey {
        account: Option<String>,
        label: Option<String>,
        #[serde(default)]
        access: KeyAccess,
        #[serde(default)]
        expires_at: Option<i64>,
    },
    ListKeys {
        account: String,
    },
    RevokeKey {
        id: String,
    },
    Export {
        account: String,
    },
    /// An analytic export (CSV, NDJSON): the reply line is followed by the rows, raw, and
    /// the socket closes after them.
    ExportRows {
        account: String,
        format: ExportFormat,
    },
    Import {
        account: String,
        export: String,
        #[serde(default)]
        from: Source,
        #[serde(default)]
        lenient: bool,
    },
    Backup {
        out: std::path::PathBuf,
    },
}

/// Externally tagged, so the export travels as raw JSON without being re-parsed.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AdminReply {
    Issued {
        key: String,
        account: String,
        id: String,
    },
    Keys {
        keys: Vec<KeyRecord>,
    },
    Revoked {
        id: String,
    },
    Export {
        export: Box<serde_json::value::RawValue>,
    },
    Imported {
        projects: usize,
        #[serde(default)]
        columns: usize,
        tasks: usize,
        #[serde(default)]
        project_ids: Vec<String>,
        /// What a lenient Trello import left out, each naming its card and list.
        #[serde(default)]
        skipped: Vec<String>,
    },
    /// The rows of an analytic export follow this line.
    Rows {
        cards: usize,
    },
    BackedUp {
        out: std::path::PathBuf,
        records: u64,
        bytes: u64,
        seconds: f64,
    },
    Failed {
        error: String,
    },
}

pub struct Admin {
    pub write: WriteModel,
    pub read: Arc<ReadModel>,
    pub pepper: Arc<Pepper>,
    pub store: Arc<dyn Store>,
}

impl Admin {
    pub fn handle(&self, request: AdminRequest) -> AdminReply {
        let result = match request {
            AdminRequest::IssueKey {
                account,
                label,
                access,
                expires_at,
            } => self
                .issue_key_with(account, label, access, expires_at)
                .map(|(key, account, id)| AdminReply::Issued { key, account, id }),
            AdminRequest::ListKeys { account } => self
                .list_keys(&account)
                .map(|keys| AdminReply::Keys { keys }),
            AdminRequest::RevokeKey { id } => {
                self.revoke_key(&id).map(|id| AdminReply::Revoked { id })
            }
            AdminRequest::Export { account } => self.export(&account).and_then(|bytes| {
                let text = String::from_utf8(bytes.to_vec())
                    .map_err(|e| WriteError::Internal(e.to_string()))?;
                let raw = serde_json::value::RawValue::from_string(text)?;
                Ok(AdminReply::Export { export: raw })
            }),
            AdminRequest::ExportRows { account, format } => self
                .export_rows(&account, format)
                .map(|rows| AdminReply::Rows { cards: rows.len() }),
            AdminRequest::Import {
                account,
                export,
                from,
                lenient,
            } => self
                .import(&account, export.as_bytes(), from, lenient)
                .or_else(|e| match e {
                    Error::Write(e) => Err(e),
                    other => Ok(AdminReply::Failed {
                        error: other.to_string(),
                    }),
                }),
            AdminRequest::Backup { out } => self.backup(&out).map(|summary| AdminReply::BackedUp {
                out,
                records: summary.records,
                bytes: summary.bytes,
                seconds: summary.seconds,
            }),
        };
        result.unwrap_or_else(|e| AdminReply::Failed {
            error: e.to_string(),
        })
    }

    /// Issues a full key that never expires; without an account, creates one first.
    pub fn issue_key(
        &self,
        account: Option<String>,
        label: Option<String>,
    ) -> Result<(String, String, String), WriteError> {
        self.issue_key_with(account, label, KeyAccess::Full, None)
    }

    /// Issues a key with its access and expiry; without an account, creates one first.
    pub fn issue_key_with(
        &self,
        account: Option<String>,
        label: Option<String>,
        access: KeyAccess,
        expires_at: Option<i64>,
    ) -> Result<(String, String, String), WriteError> {
        if expires_at.is_some_and(|at| at <= write_model::clock::wall_ms()) {
            // Refused before a new account is made for it.
            return Err(WriteError::invalid(
                "expiresAt",
                "`--expires-at` is in the past; give a moment to come (ms since the epoch)",
            ));
        }
        let account = match account {
            Some(a) => a,
            None => {
                let id = IdKind::Account.generate();
                self.write.execute_blocking(Request {
                    account: Some(id.clone()),
                    key_id: None,
                    command: Command::CreateAccount,
                })?;
                id
            }
        };
        let key = new_key();
        let command = Command::IssueKey(IssueKey {
            digest: self.pepper.digest(&key).to_vec(),
            prefix: key.chars().take(8).collect(),
            label,
            access,
            expires_at: expires_at.map_or(Expiry::Unsaid, Expiry::At),
        });
        match self.write.execute_blocking(Request {
            account: Some(account.clone()),
            key_id: None,
            command,
        })? {
            Outcome::KeyIssued { id, .. } => Ok((key, account, id)),
            other => Err(WriteError::Internal(format!(
                "unexpected outcome {other:?}"
            ))),
        }
    }

    pub fn list_keys(&self, account: &str) -> Result<Vec<KeyRecord>, WriteError> {
        self.store.list_keys(account)
    }

    pub fn revoke_key(&self, id: &str) -> Result<String, WriteError> {
        let command = Command::RevokeKey(RevokeKey {
            key_id: KeyId::named(id),
        });
        match self.write.execute_blocking(Request {
            account: None,
            key_id: None,
            command,
        })? {
            Outcome::KeyRevoked { id } => Ok(id),
            other => Err(WriteError::Internal(format!(
                "unexpected outcome {other:?}"
            ))),
        }
    }

    /// The export file: the whole account with every finished card.
    pub fn export(&self, account: &str) -> Result<Bytes, WriteError> {
        let chunks = self
            .read
            .projects(account, Completed::All, None)
            .map_err(|e| WriteError::Internal(e.to_string()))?;
        Ok(Bytes::from(chunks.identity().concat()))
    }

    /// A backup of the whole store with its pepper (see [`crate::backup`]), taken while the
    /// writer goes on.
    pub fn backup(&self, out: &std::path::Path) -> Result<crate::backup::Summary, WriteError> {
        crate::backup::write(&*self.store, &self.pepper, out)
    }

    /// An analytic export's rows (CSV, NDJSON), written as they are pulled.
    pub fn export_rows(
        &self,
        account: &str,
        format: ExportFormat,
    ) -> Result<read_model::export::Rows, WriteError> {
        let format = format
            .rows()
            .ok_or_else(|| WriteError::invalid("format", "the JSON export is not in rows"))?;
        self.read
            .export_rows(account, format)
            .map_err(|e| WriteError::Internal(e.to_string()))
    }

    /// Recreates an import file's projects, columns and cards in an existing account: a
    /// Workboard export, or one Trello board (see [`crate::transfer`]).
    pub fn import(
        &self,
        account: &str,
        file: &[u8],
        from: Source,
        lenient: bool,
    ) -> Result<AdminReply, Error> {
        // The account is checked by the import itself, inside the writer's transaction.
        let (command, skipped) =
            crate::transfer::prepare(file, from, lenient, self.write.limits())?;
        match self.write.execute_blocking(Request {
            account: Some(account.to_owned()),
            key_id: None,
            command,
        })? {
            Outcome::Imported {
                projects,
                columns,
                tasks,
                project_ids,
            } => Ok(AdminReply::Imported {
                projects,
                columns,
                tasks,
                project_ids,
                skipped: skipped
                    .iter()
                    .map(ToString::to_string)
                    .chain((skipped.more > 0).then(|| format!("and {} more", skipped.more)))
                    .collect(),
            }),
            other => Err(WriteError::Internal(format!("unexpected outcome {other:?}")).into()),
        }
    }
}
