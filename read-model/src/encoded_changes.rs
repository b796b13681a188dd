//! The compressed `GET /changes` reply, made without holding the document's lock while it
//! is serialised or compressed: under the lock a plan is taken (the head, serialised, for it
//! is small beside the cards; per project group its kept runs (`runs`), or the
//! shared cards the reply sends of it; the bin's cards), and the reply is joined from it
//! after the lock is let go, making a project's compressed run then if it is the first
//! reply in that encoding to send it. The reply is the same, byte for byte, as the plain
//! one ([`AccountDoc::changes`]) taken at the moment of the plan.

use std::sync::Arc;

use ahash::AHashMap;
use bytes::Bytes;
use domain::records::Task;

use crate::changes::{ChangesParts, ChangesQuery, element};
use crate::doc::{AccountDoc, ProjectEntry};
use crate::encoded::{Encoding, Joiner};
use crate::runs::{Listed, Runs};
use crate::shape::TaskView;

impl AccountDoc {
    /// The full changes reply in `encoding`, taken under the document's lock as a plan that
    /// [`EncodedPlan::finish`] joins after the lock is let go: the head, serialised (it is
    /// small beside the cards), and per project group either its runs, where the reply sends
    /// every card the view holds in the project, or its cards; the bin's cards; the runs of
    /// the projects `taskIds` lists. A run not yet made in `encoding` comes with the cards
    /// listed to make it (pointers to the document's shared cards).
    pub fn changes_plan(
        &self,
        q: &ChangesQuery,
        now: i64,
        cutoff: i64,
        window_ms: i64,
        encoding: Encoding,
        threshold: usize,
    ) -> EncodedPlan {
        let taken = self.take(q, cutoff);
        let head = Self::head(&taken).into_chain();
        // A project whose cards and ids runs are both to be made is listed once.
        let mut lists: AHashMap<String, Listed> = AHashMap::new();
        let mut run = |entry: &ProjectEntry, runs: Arc<Runs>, made: bool| {
            let listed = (!made).then(|| {
                (lists.entry(entry.project.id.clone()))
                    .or_insert_with(|| self.listed(entry, q.view, cutoff))
                    .clone()
            });
            RunPlan { runs, listed }
        };
        let mut groups = Vec::new();
        let mut cards = taken.cards.into_iter().peekable();
        while let Some((task, order)) = cards.next() {
            let mut group = vec![(task, order)];
            while let Some(next) = cards.next_if(|(t, _)| t.project_id == group[0].0.project_id) {
                group.push(next);
            }
            let project = group[0].0.project_id.as_str();
            let runs = (self.projects.get(project))
                .map(|entry| (entry, self.runs(entry, q.view, now, cutoff, window_ms)));
            groups.push(match runs {
                // The reply sends every card the view holds in the project: its run.
                Some((entry, runs)) if runs.count == group.len() => {
                    let made = runs.cards.made(encoding);
                    Group::Whole(run(entry, runs, made), group)
                }
                _ => Group::Part(group),
            });
        }
        let mut ids = Vec::new();
        for id in &taken.id_projects {
            let Some(entry) = self.projects.get(*id) else {
                continue;
            };
            let runs = self.runs(entry, q.view, now, cutoff, window_ms);
            if runs.count == 0 {
                continue;
            }
            let made = runs.ids.made(encoding);
            ids.push(run(entry, runs, made));
        }
        let middle = format!("],\"now\":{now},\"taskIds\":[");
        let tail = Self::tail(q, cutoff);
        // A card is at least `{}` and an id `""`: a reply of `least` bytes or more is
        // compressed, and a shorter one may not be, so its plain form is taken now too (the
        // few cards and ids it can hold make it cheap).
        let elements = (groups.iter().map(Group::len).sum::<usize>())
            + taken.binned_cards.len()
            + (ids.iter().map(|r| r.runs.count).sum::<usize>());
        let least =
            (head.iter().map(Bytes::len).sum::<usize>()) + middle.len() + tail.len() + 2 * elements;
        let plain = (least < threshold).then(|| self.changes(q, now, cutoff));
        EncodedPlan {
            encoding,
            threshold,
            head,
            groups,
            binned: taken.binned_cards,
            middle,
            ids,
            tail,
            plain,
        }
    }
}

/// A compressed changes reply taken under the document's lock (see
/// [`AccountDoc::changes_plan`]), to be made after it is let go.
pub struct EncodedPlan {
    encoding: Encoding,
    threshold: usize,
    head: Vec<Bytes>,
    groups: Vec<Group>,
    binned: Vec<Arc<Task>>,
    middle: String,
    ids: Vec<RunPlan>,
    tail: String,
    /// The reply uncompressed, when it may be under the threshold.
    plain: Option<ChangesParts>,
}

/// One project's cards in a compressed changes reply.
enum Group {
    /// All the cards the view holds in the project, sent as its run (the cards are kept
    /// for the count only).
    Whole(RunPlan, Vec<(Arc<Task>, usize)>),
    /// Some of them, serialised for this reply.
    Part(Vec<(Arc<Task>, usize)>),
}

impl Group {
    fn len(&self) -> usize {
        match self {
            Group::Whole(_, cards) | Group::Part(cards) => cards.len(),
        }
    }
}

/// A project's runs, with its cards listed if the run the reply sends is not made yet in
/// its encoding.
struct RunPlan {
    runs: Arc<Runs>,
    listed: Option<Listed>,
}

/// What a plan's reply is, once made.
pub enum Finished {
    /// Compressed, in the plan's encoding.
    Encoded(Vec<Bytes>),
    /// Under the threshold: sent as it is.
    Plain(ChangesParts),
}

impl EncodedPlan {
    /// Serialises, compresses and joins the reply, holding no lock. A run made here belongs
    /// to the `Runs` taken under the lock; a write since then gave the project new, empty
    /// runs, so a run made from the older cards is never sent for the newer ones (see
    /// the `runs` module).
    pub fn finish(self) -> Finished {
        let encoding = self.encoding;
        let mut out = Joiner::new(encoding);
        for chunk in &self.head {
            out.fresh(chunk);
        }
        let mut first = true;
        let mut scratch = Vec::new();
        for group in &self.groups {
            match group {
                Group::Whole(plan, _) => {
                    let form = (plan.runs).cards_form(plan.listed.as_deref(), encoding);
                    if !std::mem::take(&mut first) {
                        out.fresh(b",");
                    }
                    out.form(form);
                }
                Group::Part(cards) => {
                    for (task, order) in cards {
                        let order = *order;
                        element(&mut scratch, &mut first, &TaskView { task, order });
                    }
                    out.fresh(&std::mem::take(&mut scratch));
                }
            }
        }
        for task in &self.binned {
            element(&mut scratch, &mut first, &TaskView { task, order: 0 });
        }
        out.fresh(&scratch);
        out.fresh(self.middle.as_bytes());
        let mut first = true;
        for plan in &self.ids {
            let form = (plan.runs).ids_form(plan.listed.as_deref(), encoding);
            if !std::mem::take(&mut first) {
                out.fresh(b",");
            }
            out.form(form);
        }
        out.fresh(self.tail.as_bytes());
        match self.plain {
            Some(plain) if out.identity_len() < self.threshold => Finished::Plain(plain),
            _ => Finished::Encoded(out.finish()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Completed;
    use crate::doc::tests::{apply_at as apply, project, task};
    use domain::RecordChange;
    use domain::records::Record;

    fn decoded(encoding: Encoding, finished: Finished) -> Vec<u8> {
        use std::io::Read;
        let Finished::Encoded(chain) = finished else {
            panic!("the reply is over the threshold");
        };
        let body = chain.concat();
        match encoding {
            Encoding::Gzip => {
                let mut out = Vec::new();
                flate2::read::GzDecoder::new(&body[..])
                    .read_to_end(&mut out)
                    .unwrap();
                out
            }
            _ => zstd::stream::decode_all(&body[..]).unwrap(),
        }
    }

    /// A compressed reply is planned under the lock and made after it: a write that lands
    /// between the two changes nothing in it (it is the reply of the moment of the plan,
    /// byte for byte the plain one), and the runs it made for the older cards are not sent
    /// for the newer ones.
    #[test]
    fn a_compressed_reply_is_made_from_its_plan_while_the_writer_applies_a_change() {
        let mut doc = AccountDoc::default();
        apply(
            &mut doc,
            1,
            vec![
                RecordChange::Live(project("p_a")),
                RecordChange::Live(project("p_b")),
            ],
        );
        // Since 5, p_a is sent whole (its run) and p_b in part; a card sits in the bin.
        let card = |i: usize, project: &str, stamp: i64| {
            let mut t = task(i, project, i as f64, None);
            t.title = format!("Card {i} as it was when the reply was planned");
            t.updated_at = stamp;
            t
        };
        let mut cards: Vec<RecordChange> = (0..300)
            .map(|i| RecordChange::Live(Record::Task(card(i, "p_a", 5))))
            .collect();
        cards.extend((300..500).map(|i| {
            let stamp = if i % 50 == 0 { 5 } else { 2 };
            RecordChange::Live(Record::Task(card(i, "p_b", stamp)))
        }));
        cards.push(RecordChange::Binned {
            record: Record::Task(card(900, "p_b", 5)),
            entry: "b_1".into(),
            deleted_at: 5,
        });
        apply(&mut doc, 5, cards);
        let q = ChangesQuery {
            since: Some(5),
            view: Completed::All,
            scoped: false,
            holding: None,
        };
        let plain = |doc: &AccountDoc| doc.changes(&q, 10, 0).collect::<Vec<Bytes>>().concat();
        let before = plain(&doc);
        let threshold = crate::encoded::THRESHOLD;
        let window = 30 * 86_400_000;
        let plans: Vec<(Encoding, EncodedPlan)> = [Encoding::Gzip, Encoding::Zstd]
            .into_iter()
            .map(|e| (e, doc.changes_plan(&q, 10, 0, window, e, threshold)))
            .collect();

        let (_, gzip) = &plans[0];
        assert!(matches!(
            &gzip.groups[..],
            [
                Group::Whole(
                    RunPlan {
                        listed: Some(_),
                        ..
                    },
                    _
                ),
                Group::Part(_)
            ]
        ));
        assert!(gzip.ids.len() == 2 && gzip.ids.iter().all(|r| r.listed.is_some()));
        assert!(gzip.plain.is_none());

        let mut renamed = card(7, "p_a", 6);
        renamed.title = "Renamed after the plan".into();
        let mut moved = card(333, "p_b", 6);
        moved.position = 1000.5;
        apply(
            &mut doc,
            6,
            vec![
                RecordChange::Live(Record::Task(renamed)),
                RecordChange::Live(Record::Task(moved)),
            ],
        );

        for (encoding, plan) in plans {
            assert_eq!(decoded(encoding, plan.finish()), before, "{encoding:?}");
        }
        let after = plain(&doc);
        assert_ne!(after, before);
        assert!(String::from_utf8_lossy(&after).contains("Renamed after the plan"));
        for encoding in [Encoding::Gzip, Encoding::Zstd] {
            let plan = doc.changes_plan(&q, 10, 0, window, encoding, threshold);
            assert_eq!(decoded(encoding, plan.finish()), after, "{encoding:?}");
        }
    }

    /// A reply under the threshold goes plain, as it was at the moment of the plan.
    #[test]
    fn a_small_reply_goes_plain_as_it_was_planned() {
        let mut doc = AccountDoc::default();
        let one = RecordChange::Live(Record::Task(task(1, "p_a", 1.0, None)));
        apply(&mut doc, 1, vec![RecordChange::Live(project("p_a")), one]);
        let q = ChangesQuery {
            since: None,
            view: Completed::All,
            scoped: false,
            holding: None,
        };
        let before: Vec<u8> = doc.changes(&q, 10, 0).collect::<Vec<Bytes>>().concat();
        let threshold = crate::encoded::THRESHOLD;
        let plan = doc.changes_plan(&q, 10, 0, 1, Encoding::Gzip, threshold);
        let mut renamed = task(1, "p_a", 1.0, None);
        renamed.title = "Renamed after the plan".into();
        apply(&mut doc, 2, vec![RecordChange::Live(Record::Task(renamed))]);
        let Finished::Plain(parts) = plan.finish() else {
            panic!("a reply of {} bytes is compressed", before.len());
        };
        assert_eq!(parts.collect::<Vec<Bytes>>().concat(), before);
    }
}
