//! The control socket: a Unix socket in the data folder (mode 0600) through which the CLI's
//! commands reach a running server, so their writes go through its one writer. One JSON
//! line each way per request, each line capped in length.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::Arc;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};

use crate::admin::{Admin, AdminReply, AdminRequest};
use crate::error::Error;

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
                Ok(AdminRequest::ExportRows { account, format }) => {
                    // The rows follow the reply line, and the socket closes after them.
                    return stream_rows(&mut write, admin.clone(), account, format).await;
                }
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

/// Answers an analytic export: the reply line, then the rows as the export writes them, a
/// chunk at a time, never the whole file at once.
async fn stream_rows(
    write: &mut tokio::net::unix::OwnedWriteHalf,
    admin: Arc<Admin>,
    account: String,
    format: crate::transfer::ExportFormat,
) {
    let rows = tokio::task::spawn_blocking(move || admin.export_rows(&account, format)).await;
    let (reply, rows) = match rows {
        Ok(Ok(rows)) => (AdminReply::Rows { cards: rows.len() }, Some(rows)),
        Ok(Err(e)) => (
            AdminReply::Failed {
                error: e.to_string(),
            },
            None,
        ),
        Err(_) => (
            AdminReply::Failed {
                error: "the export failed".into(),
            },
            None,
        ),
    };
    let mut line = serde_json::to_vec(&reply).unwrap_or_default();
    line.push(b'\n');
    if write.write_all(&line).await.is_err() {
        return;
    }
    for chunk in rows.into_iter().flatten() {
        if write.write_all(&chunk).await.is_err() {
            return;
        }
    }
    let _ = write.shutdown().await;
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

/// Sends one request to the server holding `data` and waits for its answer; no answer is
/// [`Error::Connect`], [`Error::NoAnswer`] or [`Error::BadAnswer`].
pub fn request(data: &Path, request: &AdminRequest) -> Result<AdminReply, Error> {
    request_then(data, request, |_, _| Ok(()))
}

/// Sends a request whose answer line is followed by rows (`ExportRows`), and copies the
/// rows into `out` as they arrive.
pub fn request_rows(
    data: &Path,
    request: &AdminRequest,
    out: &mut dyn Write,
) -> Result<AdminReply, Error> {
    request_then(data, request, |reply, rest| match reply {
        AdminReply::Rows { .. } => std::io::copy(rest, out)
            .map(drop)
            .map_err(|_| Error::NoAnswer),
        _ => Ok(()),
    })
}

/// Sends one request and reads its answer line; `then` reads what follows it.
fn request_then(
    data: &Path,
    request: &AdminRequest,
    then: impl FnOnce(&AdminReply, &mut BufReader<UnixStream>) -> Result<(), Error>,
) -> Result<AdminReply, Error> {
    let path = data.join(crate::config::CONTROL_SOCKET);
    let connect = |source| Error::Connect {
        path: path.display().to_string(),
        source,
    };
    let mut stream = UnixStream::connect(&path).map_err(connect)?;
    let mut line = serde_json::to_vec(request).map_err(|e| Error::BadAnswer(e.to_string()))?;
    line.push(b'\n');
    stream.write_all(&line).map_err(|_| Error::NoAnswer)?;
    let mut reply = String::new();
    let mut reader = BufReader::new(stream);
    match reader.read_line(&mut reply) {
        Ok(0) | Err(_) => return Err(Error::NoAnswer),
        Ok(_) => {}
    }
    let reply = serde_json::from_str(&reply).map_err(|e| Error::BadAnswer(e.to_string()))?;
    then(&reply, &mut reader)?;
    Ok(reply)
}
