//! Highlights: for each field of a hit that holds a word of the query, snippets of its text
//! with those words wrapped in `<mark>` and everything else HTML-escaped, so a client can put
//! a snippet into a page as it is. Words are found with the index's own analyzer, so a
//! snippet marks exactly the words the search matched (accents and case folded, prefixes
//! included).

use std::borrow::Cow;
use std::ops::Range;

use ahash::AHashSet;
use tantivy::tokenizer::{TextAnalyzer, TokenStream};

use super::fields::{TEXT_FIELDS, text_analyzer};
use super::query::SearchQuery;

/// The most characters of text a snippet shows (marks and escapes not counted).
pub const SNIPPET_CHARS: usize = 160;
/// Characters shown before the first marked word when a snippet starts inside the text.
const LEAD_CHARS: usize = 30;
/// The most snippets one field gives (one per matching tag, item or comment).
pub const SNIPPETS_PER_FIELD: usize = 3;

/// The words a snippet marks: the whole words and prefixes of the query's text clauses (an
/// excluded word never shows in a hit, so it has nothing to mark).
pub struct Marker {
    analyzer: TextAnalyzer,
    words: AHashSet<String>,
    prefixes: Vec<String>,
}

impl Marker {
    pub fn new(query: &SearchQuery) -> Marker {
        let mut words = AHashSet::new();
        let mut prefixes = Vec::new();
        for clause in &query.must {
            let (whole, prefix) = clause.words();
            words.extend(whole.iter().cloned());
            prefixes.extend(prefix.map(str::to_owned));
        }
        Marker {
            analyzer: text_analyzer(),
            words,
            prefixes,
        }
    }

    /// Byte ranges of the marked words of `text`.
    fn matches(&mut self, text: &str) -> Vec<Range<usize>> {
        let mut stream = self.analyzer.token_stream(text);
        let mut out = Vec::new();
        while let Some(t) = stream.next() {
            if self.words.contains(&t.text) || self.prefixes.iter().any(|p| t.text.starts_with(p)) {
                out.push(t.offset_from..t.offset_to);
            }
        }
        out
    }

    /// A snippet of `text` if it holds a marked word.
    pub fn snippet(&mut self, text: &str) -> Option<String> {
        let marks = self.matches(text);
        let first = marks.first()?.start;
        let (start, end) = window(text, first);
        let mut out = String::with_capacity(end - start + 32);
        if start > 0 {
            out.push('…');
        }
        let mut at = start;
        let mut last_space = start > 0;
        for m in marks.iter().filter(|m| m.start >= start && m.end <= end) {
            escape_into(&mut out, &text[at..m.start], &mut last_space);
            out.push_str("<mark>");
            escape_into(&mut out, &text[m.clone()], &mut last_space);
            out.push_str("</mark>");
            at = m.end;
        }
        escape_into(&mut out, &text[at..end], &mut last_space);
        if end < text.len() {
            out.truncate(out.trim_end().len());
            out.push('…');
        }
        Some(out)
    }

    /// Every field of a card that holds a marked word, with its snippets, in the order of
    /// [`TEXT_FIELDS`].
    pub fn highlights(
        &mut self,
        texts: &[Vec<Cow<'_, str>>; 6],
    ) -> Vec<(&'static str, Vec<String>)> {
        let mut out = Vec::new();
        for ((name, _), values) in TEXT_FIELDS.iter().zip(texts) {
            let snippets: Vec<String> = values
                .iter()
                .filter_map(|v| self.snippet(v))
                .take(SNIPPETS_PER_FIELD)
                .collect();
            if !snippets.is_empty() {
                out.push((*name, snippets));
            }
        }
        out
    }
}

/// The byte range a snippet shows: the whole text when it is short, else
/// [`SNIPPET_CHARS`] characters from a little before the first mark, starting at a word.
fn window(text: &str, first: usize) -> (usize, usize) {
    if text.chars().count() <= SNIPPET_CHARS {
        return (0, text.len());
    }
    let mut start = text[..first]
        .char_indices()
        .rev()
        .nth(LEAD_CHARS - 1)
        .map_or(0, |(i, _)| i);
    if start > 0 {
        // Begin at the next word rather than inside one.
        if let Some(space) = text[start..first].find(char::is_whitespace) {
            start += space;
            start += text[start..].len() - text[start..].trim_start().len();
        }
    }
    let end = text[start..]
        .char_indices()
        .nth(SNIPPET_CHARS)
        .map_or(text.len(), |(i, _)| start + i);
    (start, end)
}

/// Appends `text` HTML-escaped, every run of whitespace (line breaks included) as one space.
fn escape_into(out: &mut String, text: &str, last_space: &mut bool) {
    for c in text.chars() {
        if c.is_whitespace() {
            if !*last_space {
                out.push(' ');
            }
            *last_space = true;
            continue;
        }
        *last_space = false;
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marker(q: &str) -> Marker {
        Marker::new(&SearchQuery::parse(q).unwrap())
    }

    #[test]
    fn marks_folded_words_and_prefixes_and_escapes_the_rest() {
        let mut m = marker("cafe plan*");
        assert_eq!(
            m.snippet("The <b>Café</b> & planning\nnotes").unwrap(),
            "The &lt;b&gt;<mark>Café</mark>&lt;/b&gt; &amp; <mark>planning</mark> notes"
        );
        assert_eq!(m.snippet("nothing here"), None);
    }

    #[test]
    fn a_long_text_shows_a_window_around_the_first_mark() {
        let mut m = marker("needle");
        let text = format!(
            "{} needle {}",
            "hay stack ".repeat(40),
            "straw bale ".repeat(40)
        );
        let s = m.snippet(&text).unwrap();
        assert!(s.starts_with('…') && s.ends_with('…'), "{s}");
        assert!(s.contains("<mark>needle</mark>"), "{s}");
        let shown = s.replace("<mark>", "").replace("</mark>", "");
        assert!(shown.chars().count() <= SNIPPET_CHARS + 2, "{shown}");
        assert!(
            shown.starts_with("…hay") || shown.starts_with("…stack"),
            "{shown}"
        );
    }

    #[test]
    fn each_field_gives_its_own_snippets() {
        let mut m = marker("soil");
        let texts: [Vec<Cow<'_, str>>; 6] = [
            vec!["Buy soil".into()],
            vec!["".into()],
            vec!["".into()],
            vec![],
            vec!["soil".into(), "pots".into(), "more soil".into()],
            vec![],
        ];
        let h = m.highlights(&texts);
        assert_eq!(
            h,
            [
                ("title", vec!["Buy <mark>soil</mark>".to_owned()]),
                (
                    "checklist",
                    vec![
                        "<mark>soil</mark>".to_owned(),
                        "more <mark>soil</mark>".to_owned()
                    ]
                ),
            ]
        );
    }
}
