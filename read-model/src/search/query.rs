//! The search query language, read into typed clauses before anything touches the index:
//! words (all must match, in any order), `"a phrase"`, a trailing `*` for a prefix, `-` to
//! exclude, and the filters `tag:NAME`, `project:b_ID` and `column:c_ID`. Words are folded
//! as the index folds them (see [`super::fields`]); whatever cannot be read is a
//! [`QueryError`] that says what was wrong, for a 422 naming `q`.

use tantivy::tokenizer::{TextAnalyzer, TokenStream};

use super::fields::{tag_analyzer, text_analyzer};

/// The longest query, in characters, after trimming.
pub const MAX_QUERY_CHARS: usize = 500;
/// The fewest characters a prefix (`plan*`) keeps before its `*`, after folding.
pub const MIN_PREFIX_CHARS: usize = 2;

/// Why a query could not be read, in words for the person who typed it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct QueryError(pub String);

fn err<T>(message: impl Into<String>) -> Result<T, QueryError> {
    Err(QueryError(message.into()))
}

/// Text to find in a card, as folded tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TextClause {
    /// One word.
    Term(String),
    /// Two or more words in this order (a quoted phrase, or a word with inner punctuation
    /// such as `e-mail`).
    Phrase(Vec<String>),
    /// Words in this order, the last one a prefix (`plan*`, `"release pla"*`).
    Prefix { phrase: Vec<String>, prefix: String },
}

impl TextClause {
    /// Every whole word the clause names, and its prefix if it has one: what a snippet marks.
    pub fn words(&self) -> (&[String], Option<&str>) {
        match self {
            TextClause::Term(t) => (std::slice::from_ref(t), None),
            TextClause::Phrase(p) => (p, None),
            TextClause::Prefix { phrase, prefix } => (phrase, Some(prefix)),
        }
    }
}

/// A filter on where a card is or what it carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Filter {
    /// The card carries this tag (folded: case and accents).
    Tag(String),
    Project(String),
    Column(String),
}

/// A query read whole. Text clauses must all match (`must`) or none (`must_not`); filters of
/// one kind are alternatives and each kind given must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SearchQuery {
    pub must: Vec<TextClause>,
    pub must_not: Vec<TextClause>,
    pub filters: Vec<Filter>,
    pub excluded: Vec<Filter>,
}

impl SearchQuery {
    /// Reads `q`: 1 to [`MAX_QUERY_CHARS`] characters after trimming.
    pub fn parse(q: &str) -> Result<SearchQuery, QueryError> {
        let q = q.trim();
        if q.is_empty() {
            return err("the query is empty: give a word, a phrase or a filter");
        }
        let chars = q.chars().count();
        if chars > MAX_QUERY_CHARS {
            return err(format!(
                "the query is {chars} characters long; at most {MAX_QUERY_CHARS} are read"
            ));
        }
        let mut reader = Reader {
            text: text_analyzer(),
            tags: tag_analyzer(),
            query: SearchQuery::default(),
        };
        let mut rest = q;
        loop {
            rest = rest.trim_start();
            if rest.is_empty() {
                break;
            }
            rest = reader.item(rest)?;
        }
        let query = reader.query;
        if query.must.is_empty() && query.filters.is_empty() {
            return err(if query.must_not.is_empty() && query.excluded.is_empty() {
                "the query has no word to search for (punctuation and words over 40 characters are not indexed)"
            } else {
                "the query only excludes: add a word, a phrase or a filter to search for"
            });
        }
        Ok(query)
    }
}

struct Reader {
    text: TextAnalyzer,
    tags: TextAnalyzer,
    query: SearchQuery,
}

/// Splits `s` at the first whitespace: the item and what follows it.
fn split_word(s: &str) -> (&str, &str) {
    match s.find(char::is_whitespace) {
        Some(at) => s.split_at(at),
        None => (s, ""),
    }
}

/// A quoted string at the start of `s` (which begins with `"`): its content and the rest.
fn quoted(s: &str) -> Result<(&str, &str), QueryError> {
    match s[1..].find('"') {
        Some(end) => Ok((&s[1..1 + end], &s[end + 2..])),
        None => err("a quote is opened and never closed: close the phrase with `\"`"),
    }
}

impl Reader {
    /// Reads one item at the start of `s`, returning what follows it.
    fn item<'a>(&mut self, s: &'a str) -> Result<&'a str, QueryError> {
        let (negated, s) = match s.strip_prefix('-') {
            Some(rest) if rest.is_empty() || rest.starts_with(char::is_whitespace) => {
                return err("`-` must be followed by a word, a phrase or a filter to exclude");
            }
            Some(rest) => (true, rest),
            None => (false, s),
        };
        if s.starts_with('"') {
            let (phrase, mut rest) = quoted(s)?;
            let prefix = rest.starts_with('*');
            if prefix {
                rest = &rest[1..];
            }
            if phrase.trim().is_empty() {
                return err("a phrase is empty: put words between the quotes");
            }
            self.text_clause(negated, phrase, prefix)?;
            return Ok(rest);
        }
        if let Some((name, value)) = s.split_once(':')
            && let Some(kind) = FilterKind::named(name)
        {
            let (value, rest) = if value.starts_with('"') {
                quoted(value)?
            } else {
                split_word(value)
            };
            let filter = kind.read(value, &self.tags)?;
            if negated {
                self.query.excluded.push(filter);
            } else {
                self.query.filters.push(filter);
            }
            return Ok(rest);
        }
        let (word, rest) = split_word(s);
        if word.starts_with('"') || word.contains('"') {
            return err(format!(
                "`{word}`: a quote starts a phrase only at the beginning of a word"
            ));
        }
        let (word, prefix) = match word.strip_suffix('*') {
            Some(w) => (w, true),
            None => (word, false),
        };
        if word.contains('*') {
            return err(format!("`{word}`: `*` may only end a word, as in `plan*`"));
        }
        if prefix && word.is_empty() {
            return err("`*` must follow the start of a word, as in `plan*`");
        }
        self.text_clause(negated, word, prefix)?;
        Ok(rest)
    }

    /// Folds `text` into tokens and records it as a word, a phrase or a prefix.
    fn text_clause(&mut self, negated: bool, text: &str, prefix: bool) -> Result<(), QueryError> {
        let mut tokens = tokens(&mut self.text, text);
        let clause = match (tokens.len(), prefix) {
            (0, _) => return Ok(()),
            (_, true) => {
                let last = tokens.pop().expect("one token at least");
                if last.chars().count() < MIN_PREFIX_CHARS {
                    return err(format!(
                        "`{text}*`: a prefix needs at least {MIN_PREFIX_CHARS} letters or digits before `*`"
                    ));
                }
                TextClause::Prefix {
                    phrase: tokens,
                    prefix: last,
                }
            }
            (1, false) => TextClause::Term(tokens.pop().expect("one token")),
            (_, false) => TextClause::Phrase(tokens),
        };
        if negated {
            self.query.must_not.push(clause);
        } else {
            self.query.must.push(clause);
        }
        Ok(())
    }
}

/// The tokens `analyzer` makes of `text`.
pub(crate) fn tokens(analyzer: &mut TextAnalyzer, text: &str) -> Vec<String> {
    let mut stream = analyzer.token_stream(text);
    let mut out = Vec::new();
    while let Some(token) = stream.next() {
        out.push(token.text.clone());
    }
    out
}

#[derive(Debug, Clone, Copy)]
enum FilterKind {
    Tag,
    Project,
    Column,
}

impl FilterKind {
    fn named(name: &str) -> Option<FilterKind> {
        match name.to_ascii_lowercase().as_str() {
            "tag" => Some(FilterKind::Tag),
            "project" => Some(FilterKind::Project),
            "column" => Some(FilterKind::Column),
            _ => None,
        }
    }

    fn read(self, value: &str, tags: &TextAnalyzer) -> Result<Filter, QueryError> {
        let name = match self {
            FilterKind::Tag => "tag",
            FilterKind::Project => "project",
            FilterKind::Column => "column",
        };
        if value.trim().is_empty() {
            return err(format!(
                "`{name}:` needs a value right after the colon, as in `{}`",
                match self {
                    FilterKind::Tag => "tag:urgent",
                    FilterKind::Project => "project:b_...",
                    FilterKind::Column => "column:c_...",
                }
            ));
        }
        let id = |prefix: &str, what: &str| {
            let rest = value.strip_prefix(prefix).unwrap_or_default();
            let valid = !rest.is_empty()
                && rest.len() <= 64
                && rest
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
            if valid {
                Ok(value.to_owned())
            } else {
                err(format!(
                    "`{name}:{value}`: `{name}:` takes a {what} id (`{prefix}...`)"
                ))
            }
        };
        match self {
            FilterKind::Tag => {
                let mut analyzer = tags.clone();
                match tokens(&mut analyzer, value.trim()).pop() {
                    Some(tag) => Ok(Filter::Tag(tag)),
                    None => err(format!("`tag:{value}` names no tag")),
                }
            }
            FilterKind::Project => id("b_", "project").map(Filter::Project),
            FilterKind::Column => id("c_", "column").map(Filter::Column),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn term(t: &str) -> TextClause {
        TextClause::Term(t.into())
    }

    fn phrase(words: &[&str]) -> TextClause {
        TextClause::Phrase(words.iter().map(|w| w.to_string()).collect())
    }

    #[test]
    fn words_are_folded_for_case_and_accents() {
        let q = SearchQuery::parse("  Café  ÉCOLE naïve ").unwrap();
        assert_eq!(q.must, [term("cafe"), term("ecole"), term("naive")]);
    }

    #[test]
    fn phrases_prefixes_exclusions_and_filters_are_read() {
        let q = SearchQuery::parse(
            r#""Water the plants" plan* -weeds -"old pots" tag:Jardín project:b_1 column:c_x-2 -tag:done "release pla"*"#,
        )
        .unwrap();
        assert_eq!(
            q.must,
            [
                phrase(&["water", "the", "plants"]),
                TextClause::Prefix {
                    phrase: vec![],
                    prefix: "plan".into()
                },
                TextClause::Prefix {
                    phrase: vec!["release".into()],
                    prefix: "pla".into()
                },
            ]
        );
        assert_eq!(q.must_not, [term("weeds"), phrase(&["old", "pots"])]);
        assert_eq!(
            q.filters,
            [
                Filter::Tag("jardin".into()),
                Filter::Project("b_1".into()),
                Filter::Column("c_x-2".into())
            ]
        );
        assert_eq!(q.excluded, [Filter::Tag("done".into())]);
    }

    #[test]
    fn inner_punctuation_makes_a_phrase_and_other_colons_are_words() {
        let q = SearchQuery::parse("e-mail 10:30 https://example.com tag:\"two words\"").unwrap();
        assert_eq!(
            q.must,
            [
                phrase(&["e", "mail"]),
                phrase(&["10", "30"]),
                phrase(&["https", "example", "com"]),
            ]
        );
        assert_eq!(q.filters, [Filter::Tag("two words".into())]);
    }

    #[test]
    fn a_query_of_filters_alone_is_read() {
        let q = SearchQuery::parse("tag:web").unwrap();
        assert!(q.must.is_empty());
        assert_eq!(q.filters, [Filter::Tag("web".into())]);
    }

    #[test]
    fn what_cannot_be_read_says_what_was_wrong() {
        let cases = [
            ("", "empty"),
            ("   ", "empty"),
            ("\"open phrase", "never closed"),
            ("\"\"", "phrase is empty"),
            ("- word", "`-` must be followed"),
            ("word -", "`-` must be followed"),
            ("*", "`*` must follow"),
            ("pl*n", "`*` may only end a word"),
            ("a*", "at least 2"),
            ("tag:", "needs a value"),
            ("project:", "needs a value"),
            ("project:c_1", "takes a project id"),
            ("column:b_1", "takes a column id"),
            ("project:b_", "takes a project id"),
            ("project:b_a/b", "takes a project id"),
            ("-weeds", "only excludes"),
            ("-tag:done", "only excludes"),
            ("!!! —", "no word"),
            ("wo\"rd", "quote starts a phrase"),
        ];
        for (q, expected) in cases {
            match SearchQuery::parse(q) {
                Err(QueryError(message)) => {
                    assert!(message.contains(expected), "{q:?}: {message}")
                }
                Ok(parsed) => panic!("{q:?} was read as {parsed:?}"),
            }
        }
        let long = "x".repeat(MAX_QUERY_CHARS + 1);
        assert!(
            SearchQuery::parse(&long)
                .unwrap_err()
                .0
                .contains("at most 500")
        );
        let fits = format!("  {}  ", "é".repeat(MAX_QUERY_CHARS));
        assert!(SearchQuery::parse(&fits).is_err_and(|e| e.0.contains("no word")));
    }
}
