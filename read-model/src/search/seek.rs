//! A query wrapper whose scorer always stays in a valid state. tantivy's phrase scorers
//! assert, in debug builds, that `seek_danger` never aims behind their current document, yet
//! a union or an exclusion may do just that after a miss left them ahead (the method's own
//! contract allows it); debug builds, the tests', then panic. The wrapper answers such a seek
//! from where the scorer stands and otherwise moves it only with `seek` and `advance`.

use tantivy::query::{EnableScoring, Explanation, Query, Scorer, Weight};
use tantivy::{DocId, DocSet, Score, SegmentReader, TERMINATED, Term};

/// `query`, its scorers kept valid (for phrase and prefix clauses).
#[derive(Debug)]
pub struct ValidSeek(pub Box<dyn Query>);

impl Clone for ValidSeek {
    fn clone(&self) -> Self {
        ValidSeek(self.0.box_clone())
    }
}

impl Query for ValidSeek {
    fn weight(&self, enable_scoring: EnableScoring<'_>) -> tantivy::Result<Box<dyn Weight>> {
        Ok(Box::new(ValidSeekWeight(self.0.weight(enable_scoring)?)))
    }

    fn query_terms<'a>(&'a self, visitor: &mut dyn FnMut(&'a Term, bool)) {
        self.0.query_terms(visitor)
    }
}

struct ValidSeekWeight(Box<dyn Weight>);

impl Weight for ValidSeekWeight {
    fn scorer(&self, reader: &SegmentReader, boost: Score) -> tantivy::Result<Box<dyn Scorer>> {
        Ok(Box::new(ValidSeekScorer(self.0.scorer(reader, boost)?)))
    }

    fn explain(&self, reader: &SegmentReader, doc: DocId) -> tantivy::Result<Explanation> {
        self.0.explain(reader, doc)
    }
}

struct ValidSeekScorer(Box<dyn Scorer>);

impl DocSet for ValidSeekScorer {
    fn advance(&mut self) -> DocId {
        self.0.advance()
    }

    fn seek(&mut self, target: DocId) -> DocId {
        let doc = self.0.doc();
        if target <= doc {
            doc
        } else {
            self.0.seek(target)
        }
    }

    fn seek_danger(&mut self, target: DocId) -> tantivy::SeekDangerResult {
        use tantivy::SeekDangerResult::{Found, SeekLowerBound};
        if target == TERMINATED {
            return SeekLowerBound(TERMINATED);
        }
        // Every seek so far aimed lower than `target`, and the scorer stands on the first
        // match at or after the last one: so the first match at or after `target` is where
        // it stands, or further on.
        match self.seek(target) {
            doc if doc == target => Found,
            doc => SeekLowerBound(doc),
        }
    }

    fn doc(&self) -> DocId {
        self.0.doc()
    }

    fn size_hint(&self) -> u32 {
        self.0.size_hint()
    }

    fn cost(&self) -> u64 {
        self.0.cost()
    }
}

impl Scorer for ValidSeekScorer {
    fn score(&mut self) -> Score {
        self.0.score()
    }
}
