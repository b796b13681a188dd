//! The request's line in the log, written straight to the log's writer: formatted into a
//! buffer each thread keeps, with no allocation per field, and handed to the writer in one
//! call. It reads exactly as the line the tracing formatter would write for the event
//! `workboard::request` (method, path, status, micros) inside the request's span
//! (request_id, route), in text or JSON, and `RUST_LOG` still decides whether it is written.
//!
//! Why not the tracing event: on the idle poll the event's dispatch, field visitors and
//! formatter cost more than the rest of Workboard's work on the request. Every other line
//! still goes through tracing, inside the request's span.

use std::cell::RefCell;
use std::io::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use tracing_subscriber::fmt::MakeWriter;

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum LogFormat {
    /// One line of text per event, its request's span (`request{id=.. route=..}`) first.
    #[default]
    Text,
    /// One JSON object per line, its request's span under `span`.
    Json,
}

/// Hands one whole line to the log's writer.
type WriteLine = Box<dyn Fn(&[u8]) + Send + Sync>;

/// Where request lines go, as the process's log was started.
struct Sink {
    format: LogFormat,
    write: WriteLine,
}

static SINK: OnceLock<Sink> = OnceLock::new();

/// Whether request lines go through the tracing event instead (the load bench's before and
/// after of this module, in one run).
static THROUGH_TRACING: AtomicBool = AtomicBool::new(false);

/// Writes request lines through the tracing event, as before this module (`true`), or
/// straight to the writer (`false`, the default). For the load bench's comparison only.
#[doc(hidden)]
pub fn through_tracing(on: bool) {
    THROUGH_TRACING.store(on, Ordering::Relaxed);
}

/// The log's writer, shared by the tracing subscriber and the request lines.
pub(crate) struct Shared<W>(pub(crate) Arc<W>);

impl<'a, W: MakeWriter<'a>> MakeWriter<'a> for Shared<W> {
    type Writer = W::Writer;

    fn make_writer(&'a self) -> Self::Writer {
        self.0.make_writer()
    }
}

/// Sends request lines to `writer`. A terminal's log (`ansi`) keeps the tracing event, whose
/// colours this module does not copy.
pub(crate) fn install<W>(writer: Arc<W>, ansi: bool, format: LogFormat)
where
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    if ansi {
        return;
    }
    let _ = SINK.set(Sink {
        format,
        write: Box::new(move |line| {
            // A log that cannot be written is not the request's failure.
            let _ = writer.make_writer().write_all(line);
        }),
    });
}

/// One request's line.
pub struct Line<'a> {
    pub request_id: &'a str,
    /// The route template, without its leading `/`.
    pub route: &'a str,
    pub method: &'a str,
    pub path: &'a str,
    pub status: u16,
    pub micros: u64,
}

/// Writes the line, when the log takes `workboard::request` at `info`. Call it inside the
/// request's span, so a `RUST_LOG` naming the span decides as it would for the event.
pub fn write(line: &Line<'_>) {
    if !tracing::enabled!(target: "workboard::request", tracing::Level::INFO) {
        return;
    }
    let sink = SINK
        .get()
        .filter(|_| !THROUGH_TRACING.load(Ordering::Relaxed));
    let Some(sink) = sink else {
        tracing::info!(
            target: "workboard::request",
            method = %line.method,
            path = %line.path,
            status = line.status,
            micros = line.micros,
        );
        return;
    };
    thread_local! {
        /// The line's buffer and the text of the second it last stamped.
        static BUF: RefCell<(Vec<u8>, i64, [u8; 19])> = const { RefCell::new((Vec::new(), i64::MIN, [0; 19])) };
    }
    BUF.with_borrow_mut(|(buf, second, stamp)| {
        buf.clear();
        let now = jiff::Timestamp::now();
        if now.as_second() != *second {
            *second = now.as_second();
            let text = now.strftime("%Y-%m-%dT%H:%M:%S").to_string();
            stamp.copy_from_slice(&text.as_bytes()[..19]);
        }
        let micros = (now.subsec_nanosecond() / 1_000) as u32;
        match sink.format {
            LogFormat::Text => text(buf, stamp, micros, line),
            LogFormat::Json => json(buf, stamp, micros, line),
        }
        (sink.write)(buf);
    });
}

/// `2026-11-27T18:12:05.123456Z`, as the tracing formatter writes a time.
fn timestamp(buf: &mut Vec<u8>, stamp: &[u8; 19], micros: u32) {
    buf.extend_from_slice(stamp);
    buf.push(b'.');
    let mut digits = [b'0'; 6];
    let mut n = micros;
    for d in digits.iter_mut().rev() {
        *d = b'0' + (n % 10) as u8;
        n /= 10;
    }
    buf.extend_from_slice(&digits);
    buf.push(b'Z');
}

fn text(buf: &mut Vec<u8>, stamp: &[u8; 19], micros: u32, l: &Line<'_>) {
    timestamp(buf, stamp, micros);
    buf.extend_from_slice(b"  INFO request{request_id=");
    buf.extend_from_slice(l.request_id.as_bytes());
    buf.extend_from_slice(b" route=/");
    buf.extend_from_slice(l.route.as_bytes());
    buf.extend_from_slice(b"}: workboard::request: method=");
    buf.extend_from_slice(l.method.as_bytes());
    buf.extend_from_slice(b" path=");
    buf.extend_from_slice(l.path.as_bytes());
    let _ = writeln!(buf, " status={} micros={}", l.status, l.micros);
}

fn json(buf: &mut Vec<u8>, stamp: &[u8; 19], micros: u32, l: &Line<'_>) {
    let string = |buf: &mut Vec<u8>, s: &str| {
        let _ = serde_json::to_writer(&mut *buf, s);
    };
    buf.extend_from_slice(b"{\"timestamp\":\"");
    timestamp(buf, stamp, micros);
    buf.extend_from_slice(b"\",\"level\":\"INFO\",\"fields\":{\"method\":");
    string(buf, l.method);
    buf.extend_from_slice(b",\"path\":");
    string(buf, l.path);
    let _ = write!(
        buf,
        ",\"status\":{},\"micros\":{}}},\"target\":\"workboard::request\",\"span\":{{\"request_id\":",
        l.status, l.micros
    );
    string(buf, l.request_id);
    buf.extend_from_slice(b",\"route\":\"/");
    // The route template is the server's own text; escaped all the same, without its quotes.
    let start = buf.len();
    string(buf, l.route);
    buf.remove(start);
    buf.extend_from_slice(b",\"name\":\"request\"}}\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line() -> Line<'static> {
        Line {
            request_id: "abc_123",
            route: "api/v1/tasks/{id}",
            method: "PATCH",
            path: "/api/v1/tasks/t_\"x",
            status: 200,
            micros: 42,
        }
    }

    #[test]
    fn text_reads_as_the_tracing_formatter_writes_it() {
        let mut buf = Vec::new();
        text(&mut buf, b"2026-11-27T18:12:05", 7, &line());
        assert_eq!(
            String::from_utf8(buf).unwrap(),
            "2026-11-27T18:12:05.000007Z  INFO request{request_id=abc_123 route=/api/v1/tasks/{id}}: \
             workboard::request: method=PATCH path=/api/v1/tasks/t_\"x status=200 micros=42\n"
        );
    }

    #[test]
    fn json_is_one_object_per_line() {
        let mut buf = Vec::new();
        json(&mut buf, b"2026-11-27T18:12:05", 123456, &line());
        assert_eq!(buf.last(), Some(&b'\n'));
        let v: serde_json::Value = serde_json::from_slice(&buf).unwrap();
        assert_eq!(
            v,
            serde_json::json!({
                "timestamp": "2026-11-27T18:12:05.123456Z",
                "level": "INFO",
                "fields": {"method": "PATCH", "path": "/api/v1/tasks/t_\"x", "status": 200, "micros": 42},
                "target": "workboard::request",
                "span": {"request_id": "abc_123", "route": "/api/v1/tasks/{id}", "name": "request"},
            })
        );
    }
}
