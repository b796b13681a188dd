//! The search against documents built from change records: ranking, the query language, the
//! `completed` views, paging, changes reaching the index, the index on disk, and a random
//! run checked against a plain scan of the cards.

use domain::RecordChange;
use domain::records::{ChecklistItem, Comment, Kind, Record, Tag, Task};
use parking_lot::RwLock;

use super::*;
use crate::doc::AccountDoc;
use crate::doc::tests::{project, seeded, task};

const DAY: i64 = 86_400_000;
const NOW: i64 = 1_000 * DAY;

struct Account {
    doc: RwLock<AccountDoc>,
    index: AccountIndex,
    rev: i64,
}

impl Account {
    fn new(dir: Option<std::path::PathBuf>) -> Account {
        let mut a = Account {
            doc: RwLock::new(AccountDoc::default()),
            index: AccountIndex::new(dir),
            rev: 0,
        };
        a.apply(vec![
            RecordChange::Live(project("b_1")),
            RecordChange::Live(project("b_2")),
        ]);
        a
    }

    fn apply(&mut self, records: Vec<RecordChange>) {
        self.rev += 1;
        self.doc.write().apply(self.rev, self.rev, records);
    }

    fn put(&mut self, t: Task) {
        self.apply(vec![RecordChange::Live(Record::Task(t))]);
    }

    fn page(&self, q: &str, view: Completed, limit: usize, after: Option<Cursor>) -> Found {
        let request = SearchRequest {
            query: SearchQuery::parse(q).unwrap_or_else(|e| panic!("{q:?}: {e}")),
            view,
            limit,
            after,
        };
        let searcher = self.index.searcher(&self.doc).expect("a searcher");
        run(&searcher, self.index.fields(), &request, NOW - 30 * DAY).expect("a search")
    }

    /// The ids of every hit, best first.
    fn ids(&self, q: &str, view: Completed) -> Vec<String> {
        let found = self.page(q, view, MAX_LIMIT, None);
        assert_eq!(found.total, found.hits.len(), "{q}: every hit fits a page");
        found.hits.into_iter().map(|(id, _)| id).collect()
    }

    fn all(&self, q: &str) -> Vec<String> {
        self.ids(q, Completed::All)
    }

    /// The hits' ids sorted, where the order is not the point.
    fn set(&self, q: &str) -> Vec<String> {
        let mut ids = self.all(q);
        ids.sort();
        ids
    }
}

fn card(id: usize, title: &str, updated_at: i64) -> Task {
    let mut t = task(id, "b_1", id as f64, None);
    t.title = title.into();
    t.updated_at = updated_at;
    t
}

fn ids(list: &[usize]) -> Vec<String> {
    list.iter().map(|i| format!("t_{i}")).collect()
}

#[test]
fn a_title_match_ranks_above_matches_elsewhere_and_ties_go_to_the_newest() {
    let mut a = Account::new(None);
    let mut described = card(1, "Monthly books", 50);
    described.description = "invoice invoice invoice: the invoice and the invoice".into();
    a.put(described);
    let mut commented = card(2, "Call Anna", 60);
    commented.comments = vec![Comment {
        id: "m_1".into(),
        text: "about the invoice".into(),
        created_at: 1,
    }];
    a.put(commented);
    a.put(card(
        3,
        "A very long title that mentions the invoice once among many other words",
        10,
    ));
    a.put(card(4, "Send report", 20));
    a.put(card(5, "Send report", 30));
    let hits = a.all("invoice");
    assert_eq!(hits[0], "t_3", "the title match first: {hits:?}");
    assert_eq!(hits.len(), 3);
    // Equal scores: the newest first.
    assert_eq!(a.all("report"), ids(&[5, 4]));
    // The score shown is BM25 alone, without the title's tier.
    let found = a.page("invoice", Completed::All, 10, None);
    assert!(
        found.hits.iter().all(|(_, s)| *s > 0.0 && *s < 100.0),
        "{:?}",
        found.hits
    );
}

#[test]
fn words_fold_case_and_accents_and_markdown_reads_as_text() {
    let mut a = Account::new(None);
    let mut t = card(1, "ÉCOLE", 1);
    t.description = "Meet at the **Café** — see [the map](https://zzzmaps.example/x).".into();
    t.location = "Zürich".into();
    a.put(t);
    for q in [
        "ecole",
        "École",
        "cafe",
        "CAFÉ",
        "zurich",
        "the map",
        "café zürich",
    ] {
        assert_eq!(a.all(q), ids(&[1]), "{q}");
    }
    assert!(a.all("zzzmaps").is_empty(), "link targets are not text");
    assert!(a.all("schools").is_empty(), "no stemming");
}

#[test]
fn phrases_prefixes_exclusions_and_filters_narrow_the_hits() {
    let mut a = Account::new(None);
    let mut t1 = card(1, "Water the garden plants", 1);
    t1.tags = vec![Tag {
        id: "g_1".into(),
        text: "Jardín".into(),
    }];
    a.put(t1);
    let mut t2 = card(2, "Plants need water", 2);
    t2.checklist = vec![ChecklistItem {
        id: "k_1".into(),
        text: "buy planters".into(),
        done: false,
    }];
    a.put(t2);
    let mut t3 = task(3, "b_2", 0.0, None);
    t3.title = "Planning the garden".into();
    t3.column_id = "c_other".into();
    t3.updated_at = 3;
    a.put(t3);

    assert_eq!(a.all("\"water the garden\""), ids(&[1]));
    assert_eq!(a.all("plants water"), ids(&[2, 1]));
    assert_eq!(a.set("plan*"), ids(&[1, 2, 3]));
    assert_eq!(a.set("\"the gar\"*"), ids(&[1, 3]));
    assert_eq!(a.all("garden -planning"), ids(&[1]));
    assert_eq!(a.all("garden -\"water the\""), ids(&[3]));
    assert_eq!(a.all("tag:jardin"), ids(&[1]));
    assert_eq!(a.all("tag:JARDÍN garden"), ids(&[1]));
    assert_eq!(a.all("garden -tag:jardin"), ids(&[3]));
    assert_eq!(a.all("garden project:b_2"), ids(&[3]));
    assert_eq!(a.all("project:b_1"), ids(&[2, 1]));
    assert_eq!(a.set("garden project:b_1 project:b_2"), ids(&[1, 3]));
    assert_eq!(a.all("column:c_other"), ids(&[3]));
    assert_eq!(
        a.all("garden column:c_other project:b_1"),
        Vec::<String>::new()
    );
    assert_eq!(a.all("planters"), ids(&[2]));
}

#[test]
fn the_completed_views_match_the_reads() {
    let mut a = Account::new(None);
    a.put(card(1, "pay rent", 1));
    let mut recent = card(2, "pay rent", 2);
    recent.completed_at = Some(NOW - 3 * DAY);
    a.put(recent);
    let mut old = card(3, "pay rent", 3);
    old.completed_at = Some(NOW - 60 * DAY);
    a.put(old);
    assert_eq!(a.ids("rent", Completed::None), ids(&[1]));
    assert_eq!(a.ids("rent", Completed::Recent), ids(&[2, 1]));
    assert_eq!(a.ids("rent", Completed::All), ids(&[3, 2, 1]));
}

#[test]
fn a_change_reaches_the_next_search_and_deleted_cards_leave() {
    let mut a = Account::new(None);
    a.put(card(1, "old words", 1));
    a.put(card(2, "other words", 2));
    assert_eq!(a.all("words"), ids(&[2, 1]));
    a.put(card(1, "new title", 3));
    assert_eq!(a.all("words"), ids(&[2]));
    assert_eq!(a.all("new"), ids(&[1]));
    a.apply(vec![RecordChange::Binned {
        record: Record::Task(card(1, "new title", 4)),
        entry: "d_1".into(),
        deleted_at: 4,
    }]);
    assert!(a.all("new").is_empty(), "a binned card leaves");
    a.put(card(1, "new title", 5));
    assert_eq!(a.all("new"), ids(&[1]), "a restored card is back");
    a.apply(vec![RecordChange::Destroyed {
        kind: Kind::Task,
        id: "t_1".into(),
    }]);
    assert!(a.all("new").is_empty(), "a destroyed card leaves");
}

#[test]
fn pages_cover_every_hit_once_in_order() {
    let mut a = Account::new(None);
    let mut next = seeded(7);
    for i in 0..47 {
        let title = if next(3) == 0 {
            "shared shared"
        } else {
            "shared"
        };
        a.put(card(i, title, next(5) as i64));
    }
    let whole = a.all("shared");
    assert_eq!(whole.len(), 47);
    let mut paged = Vec::new();
    let mut after = None;
    loop {
        let page = a.page("shared", Completed::All, 10, after);
        assert_eq!(page.total, 47);
        paged.extend(page.hits.into_iter().map(|(id, _)| id));
        match page.next {
            Some(c) => after = Some(Cursor::parse(&c.encode()).expect("a cursor reads back")),
            None => break,
        }
    }
    assert_eq!(paged, whole);
}

/// Every page of `q` at `limit` hits, concatenated.
fn paged(a: &Account, q: &str, limit: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut after = None;
    loop {
        let page = a.page(q, Completed::All, limit, after);
        out.extend(page.hits.into_iter().map(|(id, _)| id));
        match page.next {
            Some(c) => after = Some(c),
            None => return out,
        }
    }
}

#[test]
fn many_tied_hits_page_alike_at_any_page_size() {
    let mut a = Account::new(None);
    let mut next = seeded(11);
    for i in 0..700 {
        // Three distinct scores, hundreds of hits tied on each, some on `updatedAt` too.
        let title = ["tied", "tied words", "tied three words"][next(3) as usize];
        a.put(card(i, title, next(40) as i64));
    }
    let by_7 = paged(&a, "tied", 7);
    assert_eq!(by_7.len(), 700);
    let mut unique = by_7.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 700, "no hit twice");
    assert_eq!(paged(&a, "tied", 100), by_7);
    assert_eq!(paged(&a, "tied", 1)[..50], by_7[..50]);
}

#[test]
fn cursors_read_back_and_nothing_else_reads() {
    let c = Cursor(rank::Key {
        score: 1.5,
        updated: -3,
        key: u64::MAX,
    });
    assert_eq!(Cursor::parse(&c.encode()), Some(c));
    for bad in [
        "",
        "x",
        &"g".repeat(40),
        &"0".repeat(39),
        "7fc00000000000000000000000000000000000000",
    ] {
        assert_eq!(Cursor::parse(bad), None, "{bad}");
    }
}

#[test]
fn an_index_on_disk_is_kept_while_current_and_rebuilt_when_behind_or_missing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a_1");
    let mut a = Account::new(Some(path.clone()));
    a.put(card(1, "alpha", 1));
    assert_eq!(a.all("alpha"), ids(&[1]));
    assert!(path.join("meta.json").exists());

    // A restart: the document loads at the same revision; the index is current as it is.
    let mut doc = std::mem::take(&mut *a.doc.write());
    doc.search = Default::default();
    drop(a);
    let payload = tantivy::Index::open_in_dir(&path)
        .unwrap()
        .load_metas()
        .unwrap()
        .payload;
    assert_eq!(payload, Some(format!("workboard layout 1 rev {}", doc.rev)));
    assert!(matches!(
        doc.take_search_work(doc.rev, false),
        index::Work::Current
    ));
    doc.search = Default::default();
    let mut b = Account {
        rev: doc.rev,
        doc: RwLock::new(doc),
        index: AccountIndex::new(Some(path.clone())),
    };
    assert_eq!(b.all("alpha"), ids(&[1]));

    // Writes while no index was open: the next search indexes them.
    b.put(card(2, "alpha beta", 9));
    let c = Account {
        doc: RwLock::new(std::mem::take(&mut *b.doc.write())),
        index: AccountIndex::new(Some(path.clone())),
        rev: b.rev,
    };
    assert_eq!(c.set("alpha"), ids(&[1, 2]));

    // The folder deleted under an open index: the next commit fails and the index is
    // rebuilt from the document.
    std::fs::remove_dir_all(&path).unwrap();
    let mut c = c;
    c.put(card(3, "alpha gamma", 10));
    assert_eq!(c.set("alpha"), ids(&[1, 2, 3]));
    assert!(path.join("meta.json").exists());

    // A damaged folder: rebuilt on open.
    std::fs::write(path.join("meta.json"), b"not json").unwrap();
    let d = Account {
        doc: RwLock::new(std::mem::take(&mut *c.doc.write())),
        index: AccountIndex::new(Some(path.clone())),
        rev: c.rev,
    };
    assert_eq!(d.all("gamma"), ids(&[3]));
}

/// A full build of more cards than one of its segments holds: every card is found, and the
/// index on disk is one segment that says which revision it reflects.
#[test]
fn a_build_in_many_segments_ends_as_one_that_finds_every_card() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a_1");
    let mut a = Account::new(Some(path.clone()));
    let cards = 2 * index::FULL_BUILD_SEGMENT_CARDS + 7;
    a.apply(
        (1..=cards)
            .map(|i| {
                let word = if i % 3 == 0 { "third" } else { "other" };
                RecordChange::Live(Record::Task(card(i, &format!("bulk {word}"), i as i64)))
            })
            .collect(),
    );
    assert_eq!(a.page("bulk", Completed::All, 1, None).total, cards);
    assert_eq!(a.page("third", Completed::All, 1, None).total, cards / 3);
    let index = tantivy::Index::open_in_dir(&path).unwrap();
    assert_eq!(index.searchable_segment_ids().unwrap().len(), 1);
    assert_eq!(
        index.load_metas().unwrap().payload,
        Some(format!("workboard layout 1 rev {}", a.rev))
    );
}

/// Random writes, deletes and restores, each followed now and then by a search, checked
/// against a plain scan of the live cards: the index never misses or keeps a card.
#[test]
fn searches_agree_with_a_scan_after_random_changes() {
    const WORDS: [&str; 8] = [
        "red", "green", "blue", "plum", "pear", "fig", "kiwi", "lime",
    ];
    let mut a = Account::new(None);
    let mut next = seeded(0x5EA2C4);
    for step in 0..1500i64 {
        let id = next(40) as usize;
        let mut t = task(id, ["b_1", "b_2"][next(2) as usize], 0.0, None);
        t.title = WORDS[next(8) as usize].into();
        t.description = (0..next(3))
            .map(|_| WORDS[next(8) as usize])
            .collect::<Vec<_>>()
            .join(" ");
        t.updated_at = step;
        if next(4) == 0 {
            t.completed_at = Some(step);
        }
        let change = match next(6) {
            0 => RecordChange::Binned {
                record: Record::Task(t),
                entry: format!("d_{step}"),
                deleted_at: step,
            },
            1 => RecordChange::Destroyed {
                kind: Kind::Task,
                id: t.id,
            },
            _ => RecordChange::Live(Record::Task(t)),
        };
        a.apply(vec![change]);
        if next(5) == 0 {
            // A word, with or without a phrase excluded, or a phrase: exclusions and phrases
            // over several fields are where tantivy's scorers seek out of order.
            let (w1, w2, w3) = (
                WORDS[next(8) as usize],
                WORDS[next(8) as usize],
                WORDS[next(8) as usize],
            );
            let has = |t: &Task, w: &str| t.title == w || t.description.split(' ').any(|x| x == w);
            let phrase = |t: &Task, a: &str, b: &str| {
                let words: Vec<&str> = t.description.split(' ').collect();
                words.windows(2).any(|p| p == [a, b])
            };
            type Keep<'a> = Box<dyn Fn(&Task) -> bool + 'a>;
            let prefixed = |t: &Task, p: &str| {
                t.title.starts_with(p) || t.description.split(' ').any(|x| x.starts_with(p))
            };
            let (q, keep): (String, Keep<'_>) = match next(6) {
                0 => (w1.to_owned(), Box::new(move |t| has(t, w1))),
                3 => (
                    format!("{w1} -{w2}"),
                    Box::new(move |t| has(t, w1) && !has(t, w2)),
                ),
                4 => (
                    format!("{w1} {w2}"),
                    Box::new(move |t| has(t, w1) && has(t, w2)),
                ),
                5 => {
                    let p = &w2[..2];
                    (
                        format!("{w1} -{p}*"),
                        Box::new(move |t| has(t, w1) && !prefixed(t, p)),
                    )
                }
                1 => (
                    format!("{w1} -\"{w2} {w3}\""),
                    Box::new(move |t| has(t, w1) && !phrase(t, w2, w3)),
                ),
                _ => (
                    format!("\"{w2} {w3}\""),
                    Box::new(move |t| phrase(t, w2, w3)),
                ),
            };
            let mut expected: Vec<String> = (a.doc.read().tasks.values())
                .filter(|t| t.completed_at.is_none() && keep(t))
                .map(|t| t.id.clone())
                .collect();
            expected.sort();
            let mut got = a.ids(&q, Completed::None);
            got.sort();
            assert_eq!(got, expected, "step {step}, {q}");
        }
    }
}
