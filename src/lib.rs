//! Workboard: a self-hosted work-board service with a sync-grade HTTP/JSON interface.
//!
//! The flow of a request, and where each step lives:
//! - [`http`]: salvo routes; authentication ([`auth`]) and replies in the contract's envelope.
//! - A write becomes a typed command (`write_model::command`) and goes to the single writer
//!   thread (`write_model::processor`), which commits it and emits change records.
//! - The read model (`read_model`) applies those records before the writer replies, and
//!   serves every read from cached, serialised fragments.
//! - [`server`] wires it together at start-up; [`admin`] holds the operator's commands that
//!   the CLI ([`cli`]) runs directly or through a running server's control socket.

pub mod admin;
pub mod allowance;
pub mod auth;
pub mod cli;
pub mod discovery;
pub mod http;
pub mod live;
pub mod server;
pub mod state;
pub mod web;
