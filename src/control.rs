//! The control socket: a Unix socket in the data folder (mode 0600) through which the CLI's
//! commands reach a running server, so their writes go through its one writer. One JSON
//! line each way per request, each line capped in length.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::Arc;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};

use crate::admin::{Admin, AdminReply, AdminRequest};

/// The longest request line the socket takes: an import carries a whole export file, which
/// the HTTP interface caps at its body limit; a little more leaves room for the envelope.
pub fn line_cap(admin: &Admin) -> usize {
    admin.write.limits().body_bytes + (1 << 20)
}

/// Binds the control socket (mode 0600); done before the server says it is listening, so a
/// CLI command right after start finds it.
pub fn bind(path: &Path) -> std::io::Result<tokio::net::UnixListener> {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::remove_file(path);
    let listener = tokio::net::UnixListener::bind(path)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    Ok(listener)
}

/// Answers the CLI over the control socket while the server runs.
pub async fn serve(listener: tokio::net::UnixListener, admin: Arc<Admin>) -> std::io::Result<()> {
    loop {
        let (stream, _) = listener.accept().await?;
        tokio::spawn(answer(stream, admin.clone()));
    }
}

/// Answers one connection's requests, a line each, until it closes. A line over the cap is
/// refused and the rest of it skipped as it arrives, never buffered whole.
async fn answer(stream: tokio::net::UnixStream, admin: Arc<Admin>) {
    let cap = line_cap(&admin);
    let (read, mut write) = stream.into_split();
    let mut read = tokio::io::BufReader::new(read);
    loop {
        let mut line = Vec::new();
        let n = match (&mut read)
            .take(cap as u64 + 1)
            .read_until(b'\n', &mut line)
            .await
        {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let over = n > cap && line.last() != Some(&b'\n');
        let reply = if over {
            drop(line);
            if skip_line(&mut read).await.is_err() {
                return;
            }
            AdminReply::Failed {
                error: format!("the request is longer than the control socket's {cap} bytes"),
            }
        } else {
            match serde_json::from_slice::<AdminRequest>(&line) {
                Ok(request) => {
                    let admin = admin.clone();
                    tokio::task::spawn_blocking(move || admin.handle(request))
                        .await
                        .unwrap_or(AdminReply::Failed {
                            error: "the operation failed".into(),
                        })
                }
                Err(e) => AdminReply::Failed {
                    error: format!("bad request: {e}"),
                },
            }
        };
        let mut out = serde_json::to_vec(&reply).unwrap_or_default();
        out.push(b'\n');
        if write.write_all(&out).await.is_err() {
            return;
        }
    }
}

/// Reads and drops the rest of a line, a buffer at a time.
async fn skip_line<R: tokio::io::AsyncBufRead + Unpin>(read: &mut R) -> std::io::Result<()> {
    loop {
        let buf = read.fill_buf().await?;
        if buf.is_empty() {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        match buf.iter().position(|b| *b == b'\n') {
            Some(at) => {
                read.consume(at + 1);
                return Ok(());
            }
            None => {
                let len = buf.len();
                read.consume(len);
            }
        }
    }
}

/// Why a request to a running server got no answer.
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    #[error("the running server could not be reached through {path}: {source}")]
    Connect {
        path: String,
        source: std::io::Error,
    },
    /// The server closed the socket before answering: it stopped or crashed mid-request.
    #[error("the server stopped before it answered")]
    NoAnswer,
    #[error("the server's answer could not be read: {0}")]
    BadAnswer(String),
}

/// Sends one request to the server holding `data` and waits for its answer.
pub fn request(data: &Path, request: &AdminRequest) -> Result<AdminReply, ControlError> {
    let path = data.join(crate::node::CONTROL_SOCKET);
    let connect = |source| ControlError::Connect {
        path: path.display().to_string(),
        source,
    };
    let mut stream = UnixStream::connect(&path).map_err(connect)?;
    let mut line =
        serde_json::to_vec(request).map_err(|e| ControlError::BadAnswer(e.to_string()))?;
    line.push(b'\n');
    stream
        .write_all(&line)
        .map_err(|_| ControlError::NoAnswer)?;
    let mut reply = String::new();
    match BufReader::new(stream).read_line(&mut reply) {
        Ok(0) | Err(_) => return Err(ControlError::NoAnswer),
        Ok(_) => {}
    }
    serde_json::from_str(&reply).map_err(|e| ControlError::BadAnswer(e.to_string()))
}
