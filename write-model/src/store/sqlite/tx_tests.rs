//! The write transaction's queries, checked against SQLite's own plans.

use super::*;
use crate::store::sqlite::load::BINNED_BYTES;

#[test]
fn sibling_queries_search_their_index() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let conn = super::super::open_connection(
        &dir.path().join("plan.db"),
        crate::store::Durability::Normal,
    )
    .expect("a store");
    for sql in [
        LIVE_IN_PROJECT,
        LIVE_IN_COLUMN,
        LIVE_SUBTASKS,
        COUNT_IN_PROJECT,
        COUNT_PROJECTS,
        MIN_PROJECT_POSITION,
        MIN_COLUMN_POSITION,
        MIN_TASK_POSITION,
        BINNED_BYTES,
        ENTRY_ROWS,
        ENTRY_BODIES,
    ] {
        let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
        let params = vec!["x"; stmt.parameter_count()];
        let plan: Vec<String> = stmt
            .query_map(rusqlite::params_from_iter(params), |r| r.get(3))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let named = sql
            .split("INDEXED BY ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .expect("the query names its index");
        // Past the account, each searches its index by the sibling's key too; projects
        // are an account's only entries in theirs.
        let search = if named == "projects_by_position" {
            format!("INDEX {named} (account=?)")
        } else {
            format!("INDEX {named} (account=? AND")
        };
        let searches_an_index = plan.iter().any(|step| step.contains(&search));
        assert!(searches_an_index, "{sql}\nis planned as {plan:?}");
    }
}
