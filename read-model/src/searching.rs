//! The read model's searches: a page of an account's matching cards, its index for callers
//! that query tantivy directly, and the settling of indexes that took writes and went quiet.

use bytes::Bytes;
use domain::clock::wall_ms;

use crate::{ReadError, ReadModel, SharedDoc, changes, search};

impl ReadModel {
    /// `GET /search`: one page of the account's cards that match, best first, as the reply's
    /// JSON. Brings the account's index current first (it blocks on indexing when writes
    /// came since the last search: callers on an async runtime move it off its workers).
    pub fn search(
        &self,
        account: &str,
        request: &search::SearchRequest,
    ) -> Result<Vec<Bytes>, ReadError> {
        let now = self.now(account);
        let cutoff = changes::cutoff(request.view, now, self.window_ms);
        let slot = self.doc(account)?;
        let find = || -> Result<search::Found, ReadError> {
            let searcher = slot.search.searcher(&slot.doc)?;
            search::run(&searcher, slot.search.fields(), request, cutoff)
                .map_err(|e| ReadError::Search(e.into()))
        };
        let found = match find() {
            Ok(found) => found,
            Err(e) => {
                // An index that fails while searched (a file damaged or gone) is built anew,
                // once.
                tracing::warn!(error = %e, "a search failed; rebuilding the account's index");
                slot.search.reset();
                find()?
            }
        };
        let taken = search::take(&slot.doc.read(), &found);
        let body = search::render(&taken, &found, &request.query);
        Ok(vec![Bytes::from(body)])
    }

    /// The account's search index brought current, and its fields: what a search runs on,
    /// for callers that query tantivy directly (the load bench's ceiling).
    pub fn search_index(
        &self,
        account: &str,
    ) -> Result<(tantivy::Searcher, search::fields::Fields), ReadError> {
        let slot = self.doc(account)?;
        let searcher = slot.search.searcher(&slot.doc)?;
        Ok((searcher, *slot.search.fields()))
    }

    /// Whether a search of the account can run at once: its index is open and lacks no
    /// write. Otherwise the search indexes first, which may take a while.
    pub fn search_is_current(&self, account: &str) -> bool {
        let slot = self.accounts.read().get(account).cloned();
        slot.is_some_and(|s| s.search.is_current(&s.doc))
    }

    /// Brings current the open search indexes of accounts that took writes and then none
    /// for `quiet_ms`, so the next search, or the next start, finds them current. Returns
    /// how many it brought current.
    pub fn settle_search(&self, quiet_ms: i64) -> usize {
        let now = wall_ms();
        let slots: Vec<SharedDoc> = self.accounts.read().values().cloned().collect();
        let mut settled = 0;
        for slot in slots {
            let due = {
                let doc = slot.doc.read();
                doc.search.any() && now - doc.max_stamp >= quiet_ms
            };
            if due && slot.search.is_open() {
                match slot.search.searcher(&slot.doc) {
                    Ok(_) => settled += 1,
                    Err(e) => tracing::warn!(error = %e, "a search index could not settle"),
                }
            }
        }
        settled
    }
}
