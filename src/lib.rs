//! Workboard: a self-hosted work-board service with a sync-grade HTTP/JSON interface.
//!
//! The flow of a request, and where each step lives:
//! - [`http`]: salvo routes; authentication ([`auth`]) and replies in the contract's envelope.
//! - A write becomes a typed command (`write_model::command`) and goes to the single writer
//!   thread (`write_model::processor`), which commits it and emits change records.
//! - The read model (`read_model`) applies those records before the writer replies, and
//!   serves every read from cached, serialised fragments.
//! - [`node`] wires it together at start-up (store, pepper, the two models) and [`serve`]
//!   serves it; [`admin`] holds the operator's commands that the CLI ([`cli`]) runs directly
//!   or through a running server's control socket.

pub mod admin;
mod alloc;
pub mod allowance;
pub mod auth;
pub mod backup;
pub mod cli;
pub mod commands;
pub mod config;
pub mod control;
pub mod copy;
pub mod discovery;
pub mod edge;
pub mod error;
pub mod follow;
pub mod http;
#[cfg(test)]
mod layers;
pub mod live;
pub mod metrics;
pub mod node;
pub mod pepper;
pub mod publish;
pub mod request_log;
pub mod serve;
pub mod state;
pub mod terminal;
pub mod tickets;
pub mod transfer;
pub mod web;

pub use error::Error;
pub use request_log::LogFormat;
pub use serve::run;

/// Starts the process's log: `RUST_LOG` or `info`, one line per event (each request's line
/// comes from `http`), written to `writer`. Every line written while serving a request
/// carries that request's id and route template.
pub fn start_log<W>(writer: W, ansi: bool, format: LogFormat)
where
    W: for<'w> tracing_subscriber::fmt::MakeWriter<'w> + Send + Sync + 'static,
{
    let filter =
        tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into());
    // Request lines are written straight to the same writer (see `request_log`).
    let writer = std::sync::Arc::new(writer);
    request_log::install(writer.clone(), ansi, format);
    let log = tracing_subscriber::fmt()
        .with_writer(request_log::Shared(writer))
        .with_env_filter(filter);
    match format {
        LogFormat::Text => log.with_ansi(ansi).init(),
        LogFormat::Json => log
            .json()
            .with_current_span(true)
            .with_span_list(false)
            .init(),
    }
}
