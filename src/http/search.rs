//! `GET /search`: full-text search of the caller's cards, a conditional read like the others
//! (its tag moves with every write of the account).

use salvo::http::StatusCode;
use salvo::prelude::*;

use super::common::{fresh, from_store, query_string};
use super::query::Query;
use super::reply::{ApiError, Reply};
use super::schema;
use super::{caller, state};

#[endpoint(tags("search"), security(("bearer" = [])), parameters(
    ("q" = schema::SearchText, Query, description = "The query, 1 to 500 characters after trimming: words (all must match, in any order; case and accents folded; no stemming), `\"a phrase\"`, `plan*` (a prefix of at least 2 characters), `-word` or `-\"a phrase\"` (excluded), and the filters `tag:NAME` (or `tag:\"two words\"`), `project:b_ID`, `column:c_ID` (`-` excludes them too). Filters of one kind are alternatives; every kind given must hold. Anything else with a colon reads as words. What cannot be read answers 422 naming `q` and what was wrong."),
    ("completed" = Option<schema::CompletedView>, Query, description = "`none` (default: open cards), `recent` (also cards finished in the last 30 days) or `all`"),
    ("limit" = Option<schema::SearchLimit>, Query, description = "Hits per page, 1 to 100, default 20"),
    ("cursor" = Option<String>, Query, description = "Opaque: the `cursor` of the previous page's reply; the next page starts after its last hit"),
), responses(schema::ReadErrors, (status_code = 200, description = "One page of hits, best first: BM25, a title match above matches elsewhere only, ties to the newest `updatedAt`", body = schema::SearchReply), (status_code = 304, description = "`If-None-Match` holds the current weak ETag: no body")))]
pub async fn search(req: &mut Request, depot: &mut Depot) -> Result<Reply, ApiError> {
    let request = Query::of(req).search()?;
    let (state, caller) = (state(depot), caller(depot));
    let etag = state.read.etag(
        &caller.account,
        request.view,
        &format!("search?{}", query_string(req)),
    )?;
    if fresh(req, &etag) {
        return Ok(Reply::not_modified(etag));
    }
    // A search that must index first (writes since the last one, or the index's first
    // opening) runs off the async workers; one on a current index is a quick read.
    let chunks = if state.read.search_is_current(&caller.account) {
        state.read.search(&caller.account, &request)?
    } else {
        let account = caller.account.clone();
        from_store(&state, move |read| read.search(&account, &request)).await?
    };
    Ok(Reply::chunks(StatusCode::OK, chunks).with_etag(etag))
}
