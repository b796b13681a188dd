//! The project-name index: tantivy, in RAM, rebuilt at start. A name is indexed whole (a raw
//! tokenizer with a lowercase filter), so `?name=` is a case-folded match of the whole name.
//! The writer thread updates it and reloads the reader before a write is acknowledged.

use parking_lot::Mutex;
use tantivy::collector::DocSetCollector;
use tantivy::query::{BooleanQuery, Occur, Query, TermQuery};
use tantivy::schema::{
    Field, IndexRecordOption, STRING, Schema, TantivyDocument, TextFieldIndexing, TextOptions,
    Value,
};
use tantivy::tokenizer::{LowerCaser, RawTokenizer, TextAnalyzer};
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, Term, doc};

const TOKENIZER: &str = "whole_name_lowercase";

pub struct NameIndex {
    writer: Mutex<IndexWriter>,
    reader: IndexReader,
    account: Field,
    key: Field,
    id: Field,
    name: Field,
}

impl NameIndex {
    pub fn new() -> tantivy::Result<Self> {
        let mut schema = Schema::builder();
        let account = schema.add_text_field("account", STRING);
        let key = schema.add_text_field("key", STRING);
        let id = schema.add_text_field("id", STRING | tantivy::schema::STORED);
        let name_options = TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(TOKENIZER)
                .set_index_option(IndexRecordOption::Basic),
        );
        let name = schema.add_text_field("name", name_options);
        let index = Index::create_in_ram(schema.build());
        index.tokenizers().register(
            TOKENIZER,
            TextAnalyzer::builder(RawTokenizer::default())
                .filter(LowerCaser)
                .build(),
        );
        let writer = index.writer_with_num_threads(1, 15_000_000)?;
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        Ok(NameIndex {
            writer: Mutex::new(writer),
            reader,
            account,
            key,
            id,
            name,
        })
    }

    fn key_term(&self, account: &str, id: &str) -> Term {
        Term::from_field_text(self.key, &format!("{account}/{id}"))
    }

    /// Stages a project's name (replacing any earlier one).
    pub fn put(&self, account: &str, id: &str, name: &str) {
        let writer = self.writer.lock();
        writer.delete_term(self.key_term(account, id));
        let _ = writer.add_document(doc!(
            self.account => account,
            self.key => format!("{account}/{id}"),
            self.id => id,
            self.name => name,
        ));
    }

    /// Stages the removal of a project's name.
    pub fn remove(&self, account: &str, id: &str) {
        self.writer.lock().delete_term(self.key_term(account, id));
    }

    /// Stages the account's names as `projects` (id, name) holds them, dropping any other:
    /// on a store other nodes write, names an account's document was loaded with.
    pub fn replace_account<'a>(
        &self,
        account: &str,
        projects: impl Iterator<Item = (&'a str, &'a str)>,
    ) {
        {
            let writer = self.writer.lock();
            writer.delete_term(Term::from_field_text(self.account, account));
        }
        for (id, name) in projects {
            self.put(account, id, name);
        }
    }

    /// Makes staged changes visible to searches.
    pub fn publish(&self) -> tantivy::Result<()> {
        self.writer.lock().commit()?;
        self.reader.reload()
    }

    /// Ids of the account's projects whose whole name equals `name`, ignoring case.
    pub fn search(&self, account: &str, name: &str) -> tantivy::Result<Vec<String>> {
        let searcher = self.reader.searcher();
        let query = BooleanQuery::new(vec![
            (
                Occur::Must,
                Box::new(TermQuery::new(
                    Term::from_field_text(self.account, account),
                    IndexRecordOption::Basic,
                )) as Box<dyn Query>,
            ),
            (
                Occur::Must,
                Box::new(TermQuery::new(
                    Term::from_field_text(self.name, &name.to_lowercase()),
                    IndexRecordOption::Basic,
                )),
            ),
        ]);
        let hits = searcher.search(&query, &DocSetCollector)?;
        let mut ids = Vec::with_capacity(hits.len());
        for address in hits {
            let doc: TantivyDocument = searcher.doc(address)?;
            if let Some(id) = doc.get_first(self.id).and_then(|v| v.as_str()) {
                ids.push(id.to_owned());
            }
        }
        Ok(ids)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_whole_names_ignoring_case_within_an_account() {
        let idx = NameIndex::new().unwrap();
        idx.put("a_1", "b_1", "Alpha Beta");
        idx.put("a_1", "b_2", "alpha");
        idx.put("a_1", "b_3", "ALPHA");
        idx.put("a_2", "b_4", "Alpha");
        idx.publish().unwrap();
        let mut hits = idx.search("a_1", "Alpha").unwrap();
        hits.sort();
        assert_eq!(hits, ["b_2", "b_3"]);
        idx.remove("a_1", "b_2");
        idx.put("a_1", "b_3", "Gamma");
        idx.publish().unwrap();
        assert!(idx.search("a_1", "alpha").unwrap().is_empty());
        assert_eq!(idx.search("a_1", "gamma").unwrap(), ["b_3"]);
    }
}
