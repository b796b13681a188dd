//! Integration tests for Workboard: one binary that starts the real server on a free port
//! with a fresh data folder per test and speaks HTTP/JSON to it.
//!
//! `harness` starts servers and wraps the HTTP client; each other module covers one part of
//! the contract (issue 2, "The service stands"; issue 3, "Cards in depth": `subtasks`,
//! `card_items`, `card_item_rules`, `bin`, `bin_restore`, `bulk`, `round_trip`).

mod allowance;
mod auth;
mod backup;
mod bin;
mod bin_restore;
mod bodies;
mod bulk;
mod calendar;
mod calendar_keys;
mod card_item_rules;
mod card_items;
mod changes;
mod cli;
mod client;
mod columns;
mod compression;
mod consistency;
mod convergence;
mod cors;
mod crash;
mod docs;
mod edge;
mod engines;
mod error_codes;
mod export_import;
mod exports;
mod fairness;
mod field_table;
mod guarded;
mod harness;
mod idempotency;
mod idempotency_allowance;
mod idempotency_bounds;
mod idempotency_crash;
mod idempotency_header;
mod idempotency_replay;
mod isolation;
mod key_access;
mod keys;
mod limits_caps;
mod list_caps;
mod live;
mod nodes;
mod observability;
mod operations;
mod project_fields;
mod projects;
mod quota;
mod read_only;
mod recurring;
mod restart;
mod round_trip;
mod route_table;
mod routing;
mod search;
mod secrets;
mod shutdown;
mod storage;
mod stored;
mod subtasks;
mod task_fields;
mod tasks;
mod trello_import;
mod undo;
mod wait;
