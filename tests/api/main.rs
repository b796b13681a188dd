//! Integration tests for Workboard: one binary that starts the real server on a free port
//! with a fresh data folder per test and speaks HTTP/JSON to it.
//!
//! `harness` starts servers and wraps the HTTP client; each other module covers one part of
//! the contract (issue 2, "The service stands").

mod auth;
mod cli;
mod client;
mod columns;
mod consistency;
mod guarded;
mod harness;
mod project_fields;
mod projects;
mod restart;
mod routing;
mod task_fields;
mod tasks;
