//! Lines for the person at the terminal (the CLI's `account: ...`, warnings, summaries), on
//! stderr beside the log.
//!
//! The log writes stderr's descriptor through a `File`, outside std's stderr lock (see
//! `main.rs`), so that request lines never queue for that lock. `eprintln!` writes one line
//! in several calls, and a log line could land inside it (a script reading `account: ` then
//! read a log line's timestamp). Each line here is formatted first and written in one call.

use std::io::Write as _;

/// Writes `args` and a newline to stderr in one call. A failed write is dropped, as
/// `eprintln!` would panic instead; a message nobody can read is no reason to stop.
pub fn line(args: std::fmt::Arguments<'_>) {
    let mut text = args.to_string();
    text.push('\n');
    let _ = std::io::stderr().write_all(text.as_bytes());
}

/// `eprintln!`, written in one call: see the module's docs.
#[macro_export]
macro_rules! tell {
    ($($arg:tt)*) => {
        $crate::terminal::line(format_args!($($arg)*))
    };
}
