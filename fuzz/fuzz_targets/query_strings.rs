//! The query strings of `/projects` and `/changes`: decoded pairs in, a typed query or a 422
//! naming the parameter out, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use workboard::http::query::Query;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let pairs: Vec<(&str, &str)> = text
        .split('&')
        .map(|pair| pair.split_once('=').unwrap_or((pair, "")))
        .collect();
    let query = Query::from_pairs(pairs);
    let _ = query.projects(40);
    if let Ok(changes) = query.changes() {
        // What passed must be what the contract allows.
        if let Some(since) = query.get("since") {
            assert!(since.bytes().all(|b| b.is_ascii_digit()));
            assert!(changes.since.is_some());
        }
    }
});
