//! What the card index holds: its schema, the two analyzers (text folded for case and
//! accents, split into words, no stemming; tags folded whole), and a card as an index
//! document, its Markdown description read as the text it shows.

use domain::records::Task;
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, STORED, STRING, Schema, TantivyDocument,
    TextFieldIndexing, TextOptions,
};
use tantivy::tokenizer::{
    AsciiFoldingFilter, LowerCaser, RawTokenizer, RemoveLongFilter, SimpleTokenizer, TextAnalyzer,
};
use tantivy::{Index, Term};

/// The analyzer of every text field and of the words of a query.
pub const TEXT_TOKENIZER: &str = "wb_text";
/// The analyzer of whole tags, for `tag:NAME`.
pub const TAG_TOKENIZER: &str = "wb_tag";
/// Words longer than this (in bytes) are not indexed: they are hashes and pasted blobs.
pub const MAX_WORD_BYTES: usize = 40;
/// `completed` of an open card: above every real stamp, so "open or finished since X" is one
/// range.
pub const OPEN: i64 = i64::MAX;

/// Words: split at anything not a letter or digit, lower-cased, accents folded to ASCII.
pub fn text_analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(MAX_WORD_BYTES))
        .filter(LowerCaser)
        .filter(AsciiFoldingFilter)
        .build()
}

/// A whole tag, lower-cased and folded like words.
pub fn tag_analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(RawTokenizer::default())
        .filter(LowerCaser)
        .filter(AsciiFoldingFilter)
        .build()
}

/// The searchable text fields, in the order highlights list them, with their names in a
/// reply and their weight in the score.
pub const TEXT_FIELDS: [(&str, f32); 6] = [
    ("title", 2.0),
    ("description", 1.0),
    ("location", 1.0),
    ("tags", 1.5),
    ("checklist", 1.0),
    ("comments", 1.0),
];

/// The index's fields.
#[derive(Debug, Clone, Copy)]
pub struct Fields {
    pub id: Field,
    /// Title, description, location, tags, checklist, comments: [`TEXT_FIELDS`] in order.
    pub text: [Field; 6],
    pub tag: Field,
    pub project: Field,
    pub column: Field,
    pub completed: Field,
    pub updated: Field,
    /// A hash of the id: the last tie-break of the order, stable across rebuilds.
    pub key: Field,
}

impl Fields {
    pub fn schema() -> (Schema, Fields) {
        let mut b = Schema::builder();
        let id = b.add_text_field("id", STRING | STORED);
        let words = TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(TEXT_TOKENIZER)
                .set_index_option(IndexRecordOption::WithFreqsAndPositions),
        );
        let text = TEXT_FIELDS.map(|(name, _)| b.add_text_field(name, words.clone()));
        let tag = b.add_text_field(
            "tag",
            TextOptions::default().set_indexing_options(
                TextFieldIndexing::default()
                    .set_tokenizer(TAG_TOKENIZER)
                    .set_index_option(IndexRecordOption::Basic),
            ),
        );
        let project = b.add_text_field("project", STRING);
        let column = b.add_text_field("column", STRING);
        let completed = b.add_i64_field("completed", INDEXED | FAST);
        let updated = b.add_i64_field("updated", FAST);
        let key = b.add_u64_field("key", FAST);
        let fields = Fields {
            id,
            text,
            tag,
            project,
            column,
            completed,
            updated,
            key,
        };
        (b.build(), fields)
    }

    pub fn title(&self) -> Field {
        self.text[0]
    }

    pub fn id_term(&self, id: &str) -> Term {
        Term::from_field_text(self.id, id)
    }

    /// A card as an index document.
    pub fn document(&self, t: &Task) -> TantivyDocument {
        let mut doc = TantivyDocument::new();
        doc.add_text(self.id, &t.id);
        for (field, value) in self.text.iter().zip(texts(t)) {
            for v in value.iter().filter(|v| !v.is_empty()) {
                doc.add_text(*field, v);
            }
        }
        for tag in &t.tags {
            doc.add_text(self.tag, &tag.text);
        }
        doc.add_text(self.project, &t.project_id);
        doc.add_text(self.column, &t.column_id);
        doc.add_i64(self.completed, t.completed_at.unwrap_or(OPEN));
        doc.add_i64(self.updated, t.updated_at);
        doc.add_u64(self.key, order_key(&t.id));
        doc
    }
}

/// Registers the analyzers on an index (they are not stored with it).
pub fn register(index: &Index) {
    index.tokenizers().register(TEXT_TOKENIZER, text_analyzer());
    index.tokenizers().register(TAG_TOKENIZER, tag_analyzer());
}

/// A card's text, field by field as [`TEXT_FIELDS`] names them; a field may hold several
/// values (one per tag, item or comment).
pub fn texts(t: &Task) -> [Vec<std::borrow::Cow<'_, str>>; 6] {
    use std::borrow::Cow::Borrowed;
    [
        vec![Borrowed(t.title.as_str())],
        vec![markdown_text(&t.description).into()],
        vec![Borrowed(t.location.as_str())],
        t.tags.iter().map(|g| Borrowed(g.text.as_str())).collect(),
        t.checklist
            .iter()
            .map(|i| Borrowed(i.text.as_str()))
            .collect(),
        t.comments
            .iter()
            .map(|c| Borrowed(c.text.as_str()))
            .collect(),
    ]
}

/// FNV-1a of the id: the same number for the same id on every run and build.
pub fn order_key(id: &str) -> u64 {
    id.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Markdown as the text a reader sees: the words of paragraphs, headings, lists, tables,
/// code and link texts, without the markup, the link targets or raw HTML.
pub fn markdown_text(markdown: &str) -> String {
    if markdown.is_empty() {
        return String::new();
    }
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut out = String::with_capacity(markdown.len());
    let gap = |out: &mut String| {
        if !out.is_empty() && !out.ends_with(['\n', ' ']) {
            out.push(' ');
        }
    };
    for event in Parser::new_ext(markdown, options) {
        match event {
            Event::Text(t) | Event::Code(t) => out.push_str(&t),
            Event::SoftBreak | Event::HardBreak | Event::Rule => gap(&mut out),
            Event::TaskListMarker(done) => out.push_str(if done { "[x] " } else { "[ ] " }),
            Event::Start(Tag::Item | Tag::TableCell) => gap(&mut out),
            Event::End(
                TagEnd::Paragraph
                | TagEnd::Heading(_)
                | TagEnd::CodeBlock
                | TagEnd::Item
                | TagEnd::TableRow
                | TagEnd::TableHead
                | TagEnd::BlockQuote(_),
            ) if !out.is_empty() && !out.ends_with('\n') => out.push('\n'),
            _ => {}
        }
    }
    out.truncate(out.trim_end().len());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_reads_as_its_text() {
        let md = "# Plan\n\nWater **the** [plants](https://example.com/x) daily.\n\n- [x] pots\n- soil\n\n| a | b |\n|---|---|\n| c | d |\n\n```\nlet x = 1;\n```\n<b>raw</b>";
        let text = markdown_text(md);
        assert!(
            text.starts_with("Plan\nWater the plants daily.\n"),
            "{text}"
        );
        assert!(text.contains("[x] pots"), "{text}");
        assert!(text.contains("soil"), "{text}");
        assert!(text.contains("c d") || text.contains("c  d"), "{text}");
        assert!(text.contains("let x = 1;"), "{text}");
        assert!(!text.contains("example.com"), "{text}");
        assert!(!text.contains('*') && !text.contains('#'), "{text}");
        assert!(!text.contains("<b>"), "{text}");
    }

    #[test]
    fn the_order_key_is_stable() {
        assert_eq!(order_key("t_a"), order_key("t_a"));
        assert_ne!(order_key("t_a"), order_key("t_b"));
        assert_eq!(order_key(""), 0xcbf2_9ce4_8422_2325);
    }
}
