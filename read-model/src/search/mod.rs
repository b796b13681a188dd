//! Card search (`GET /search`): one tantivy index per account, kept from the change records
//! the document applies ([`index`]), a query language read before the index is touched
//! ([`query`]), and snippets with the matched words marked ([`highlight`]).
//!
//! Ranking: BM25 over title, description, location, tags, checklist and comments (title
//! weighted 2, tags 1.5, the rest 1). A card whose title holds a word of the query ranks
//! above every card that matches elsewhere only; ties go to the newest `updatedAt`, then to a
//! fixed order of ids. Paging continues after the last hit shown (a cursor holds its place in
//! that order), so a card never shows twice while the account does not change.

pub mod fields;
pub mod highlight;
pub mod index;
pub mod query;
mod rank;
mod reply;
mod seek;

pub use reply::{render, take};

use std::ops::Bound;

use tantivy::query::{
    BooleanQuery, BoostQuery, ConstScoreQuery, Occur, PhrasePrefixQuery, PhraseQuery, Query,
    RangeQuery, TermQuery,
};
use tantivy::schema::{Field, IndexRecordOption, Value};
use tantivy::{Score, Searcher, TantivyDocument, Term};

use crate::Completed;
use fields::{Fields, OPEN, TEXT_FIELDS};
pub use index::AccountIndex;
use query::{Filter, SearchQuery, TextClause};

/// The most hits a page holds, and how many it holds unless asked.
pub const MAX_LIMIT: usize = 100;
pub const DEFAULT_LIMIT: usize = 20;
/// The most words a prefix expands to in each field.
pub const PREFIX_EXPANSIONS: u32 = 200;
/// Added to the score of a card whose title matches: above any score text alone reaches.
const TITLE_TIER: Score = 100_000.0;

/// A search as the route read it.
#[derive(Debug, Clone)]
pub struct SearchRequest {
    pub query: SearchQuery,
    pub view: Completed,
    pub limit: usize,
    pub after: Option<Cursor>,
}

/// A place in the ranked order: the last hit of a page.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cursor(rank::Key);

impl Cursor {
    /// The cursor a reply gave, or `None` for anything else.
    pub fn parse(s: &str) -> Option<Cursor> {
        if s.len() != 40 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let score = Score::from_bits(u32::from_str_radix(&s[..8], 16).ok()?);
        let updated = u64::from_str_radix(&s[8..24], 16).ok()? as i64;
        let key = u64::from_str_radix(&s[24..], 16).ok()?;
        score.is_finite().then_some(Cursor(rank::Key {
            score,
            updated,
            key,
        }))
    }

    pub fn encode(&self) -> String {
        let k = &self.0;
        format!(
            "{:08x}{:016x}{:016x}",
            k.score.to_bits(),
            k.updated as u64,
            k.key
        )
    }
}

/// One page of hits, best first.
pub struct Found {
    pub total: usize,
    /// Card ids with the score a reply shows.
    pub hits: Vec<(String, Score)>,
    pub next: Option<Cursor>,
}

type Clauses = Vec<(Occur, Box<dyn Query>)>;

/// The score a reply shows: BM25, without the title tier.
fn shown_score(score: Score) -> Score {
    if score >= TITLE_TIER {
        score - TITLE_TIER
    } else {
        score
    }
}

/// Runs a search on a searcher brought current. `cutoff` is where the `recent` window starts.
pub fn run(
    searcher: &Searcher,
    fields: &Fields,
    request: &SearchRequest,
    cutoff: i64,
) -> tantivy::Result<Found> {
    let query = build(fields, &request.query, request.view, cutoff);
    let collector = rank::Ranked {
        limit: request.limit + 1,
        after: request.after.map(|c| c.0),
    };
    let (total, ranked) = searcher.search(&query, &collector)?;
    let next = (ranked.len() > request.limit).then(|| Cursor(ranked[request.limit - 1].0));
    let mut hits = Vec::with_capacity(request.limit);
    for (key, address) in ranked.into_iter().take(request.limit) {
        let doc: TantivyDocument = searcher.doc(address)?;
        if let Some(id) = doc.get_first(fields.id).and_then(|v| v.as_str()) {
            hits.push((id.to_owned(), shown_score(key.score)));
        }
    }
    Ok(Found { total, hits, next })
}

/// The tantivy query of a search.
pub fn build(fields: &Fields, q: &SearchQuery, view: Completed, cutoff: i64) -> BooleanQuery {
    let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
    for c in &q.must {
        clauses.push((Occur::Must, anywhere(fields, c)));
    }
    for c in &q.must_not {
        clauses.push((Occur::MustNot, anywhere(fields, c)));
    }
    // Filters of one kind are alternatives; each kind given must hold.
    let mut kinds: Vec<(std::mem::Discriminant<Filter>, Clauses)> = Vec::new();
    for f in &q.filters {
        let kind = std::mem::discriminant(f);
        let any = (Occur::Should, exact(fields, f));
        match kinds.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, alternatives)) => alternatives.push(any),
            None => kinds.push((kind, vec![any])),
        }
    }
    for (_, alternatives) in kinds {
        clauses.push((
            Occur::Must,
            filter(Box::new(BooleanQuery::new(alternatives))),
        ));
    }
    for f in &q.excluded {
        clauses.push((Occur::MustNot, exact(fields, f)));
    }
    match view {
        Completed::All => {}
        Completed::None => clauses.push((
            Occur::Must,
            filter(Box::new(TermQuery::new(
                Term::from_field_i64(fields.completed, OPEN),
                IndexRecordOption::Basic,
            ))),
        )),
        Completed::Recent => clauses.push((
            Occur::Must,
            filter(Box::new(RangeQuery::new(
                Bound::Included(Term::from_field_i64(fields.completed, cutoff)),
                Bound::Unbounded,
            ))),
        )),
    }
    if !q.must.is_empty() {
        let in_title = q
            .must
            .iter()
            .map(|c| (Occur::Should, in_field(c, fields.title(), 1.0)))
            .collect();
        clauses.push((
            Occur::Should,
            Box::new(ConstScoreQuery::new(
                Box::new(BooleanQuery::new(in_title)),
                TITLE_TIER,
            )),
        ));
    }
    BooleanQuery::new(clauses)
}

/// A filter's exact term on its field.
fn exact(fields: &Fields, f: &Filter) -> Box<dyn Query> {
    let term = match f {
        Filter::Tag(v) => Term::from_field_text(fields.tag, v),
        Filter::Project(v) => Term::from_field_text(fields.project, v),
        Filter::Column(v) => Term::from_field_text(fields.column, v),
    };
    Box::new(TermQuery::new(term, IndexRecordOption::Basic))
}

/// A clause that narrows the hits without changing their scores.
fn filter(q: Box<dyn Query>) -> Box<dyn Query> {
    Box::new(ConstScoreQuery::new(q, 0.0))
}

/// A text clause in any text field, each weighted as [`TEXT_FIELDS`] says.
fn anywhere(fields: &Fields, clause: &TextClause) -> Box<dyn Query> {
    let per_field = fields
        .text
        .iter()
        .zip(TEXT_FIELDS)
        .map(|(field, (_, weight))| (Occur::Should, in_field(clause, *field, weight)))
        .collect();
    Box::new(BooleanQuery::new(per_field))
}

/// A text clause in one field.
fn in_field(clause: &TextClause, field: Field, weight: Score) -> Box<dyn Query> {
    let term = |t: &String| Term::from_field_text(field, t);
    let q: Box<dyn Query> = match clause {
        TextClause::Term(t) => Box::new(TermQuery::new(term(t), IndexRecordOption::WithFreqs)),
        TextClause::Phrase(words) => Box::new(seek::ValidSeek(Box::new(PhraseQuery::new(
            words.iter().map(term).collect(),
        )))),
        TextClause::Prefix { phrase, prefix } => {
            let mut terms: Vec<Term> = phrase.iter().map(term).collect();
            terms.push(term(prefix));
            let mut q = PhrasePrefixQuery::new(terms);
            q.set_max_expansions(PREFIX_EXPANSIONS);
            Box::new(seek::ValidSeek(Box::new(q)))
        }
    };
    if weight == 1.0 {
        q
    } else {
        Box::new(BoostQuery::new(q, weight))
    }
}

#[cfg(test)]
mod tests;
