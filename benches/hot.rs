//! Criterion benches of the hot functions behind every request: command validation, the
//! read model's apply, fragment serialisation, the changes computation, the holding check,
//! one PATCH through the writer, and a commit group of them. Accounts come from the seeded
//! fixture generator.

#[allow(dead_code)] // the load bench and the criterion benches each use part of it
#[path = "../fixtures/generator/mod.rs"]
mod generator;

// The server's allocator (jemalloc, set in the `workboard` library), so the writer's numbers
// here are the server's.
use workboard as _;

use std::hint::black_box;
use std::sync::Arc;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use generator::{Fixture, Spec};
use read_model::Completed;
use read_model::changes::{ChangesQuery, cutoff};
use read_model::doc::AccountDoc;
use write_model::command::task;
use write_model::ids::TaskId;
use write_model::records::Record;
use write_model::{
    ChangeSet, Clocks, Command, Durability, Limits, RecordChange, Request, WriteModel,
};

const WINDOW_MS: i64 = 30 * 86_400_000;

fn fixture(cards: usize) -> Fixture {
    Fixture::generate(&Spec::one_project(cards))
}

fn create_body(column: &str) -> String {
    format!(
        "{{\"columnId\":\"{column}\",\"title\":\"Call the plumber about the kitchen sink\",\
         \"description\":\"Ask for a quote first; the landlord pays above 200.\",\
         \"priority\":2,\"effort\":\"easy\",\"deadline\":\"2026-03-14\",\"deadlineTime\":\"09:30\",\
         \"tags\":[\"home\",\"phone\"],\"checklist\":[{{\"text\":\"find the number\"}},{{\"text\":\"call\"}}]}}"
    )
}

fn validation(c: &mut Criterion) {
    let limits = Limits::default();
    let column = "c_AbCdEfGhIjKlMnOpQrStUv";
    let create = create_body(column);
    let mut g = c.benchmark_group("validate");
    g.bench_function("CreateTask::parse", |b| {
        b.iter(|| task::CreateTask::parse(black_box(create.as_bytes()), &limits).expect("valid"))
    });
    let update = br#"{"title":"Call the plumber again","priority":1}"#;
    let id = TaskId::named("t_AbCdEfGhIjKlMnOpQrStUv");
    g.bench_function("parse_update", |b| {
        b.iter(|| Command::update_task(id.clone(), black_box(update), &limits).expect("valid"))
    });
    let guarded = br#"{"title":{"before":"Call the plumber","after":"Call the plumber again"}}"#;
    g.bench_function("parse_update (guarded)", |b| {
        b.iter(|| Command::update_task(id.clone(), black_box(guarded), &limits).expect("valid"))
    });
    let batch = format!("{{\"tasks\":[{}]}}", vec![create.as_str(); 200].join(","));
    g.bench_function("parse_batch (200)", |b| {
        b.iter(|| Command::create_tasks(black_box(batch.as_bytes()), &limits).expect("valid"))
    });
    g.finish();
}

/// A change set that rewrites one card's title, as the writer emits after a PATCH.
fn one_card_change(fx: &Fixture, doc: &AccountDoc) -> ChangeSet {
    let mut card = fx.open_tasks().next().expect("an open card").clone();
    card.title = "Patched by the bench".into();
    ChangeSet {
        account: "a_bench".into(),
        rev: doc.rev,
        stamp: doc.max_stamp,
        records: vec![RecordChange::Live(Record::Task(card))],
        names_changed: false,
    }
}

fn next(cs: &mut ChangeSet) {
    cs.rev += 1;
    cs.stamp += 1;
    if let Some(RecordChange::Live(Record::Task(t))) = cs.records.first_mut() {
        t.rev = cs.rev;
        t.updated_at = cs.stamp;
    }
}

fn apply(c: &mut Criterion) {
    let fx = fixture(1_000);
    let mut doc = AccountDoc::from_snapshot(fx.snapshot());
    let mut cs = one_card_change(&fx, &doc);
    let mut g = c.benchmark_group("apply");
    g.bench_function("AccountDoc::apply one card (1,000 cards)", |b| {
        b.iter(|| {
            next(&mut cs);
            // The writer hands over a change set it built; here, a copy of the same one.
            doc.apply(cs.rev, cs.stamp, black_box(cs.records.clone()));
        })
    });
    g.finish();
}

/// The writer thread on a temporary store (`synchronous=NORMAL`) holding one fixture
/// account, with no read model behind it: the writer's own cost per command.
struct LoadedWriter {
    write: WriteModel,
    thread: std::thread::JoinHandle<()>,
    limits: Arc<Limits>,
    account: String,
    _dir: tempfile::TempDir,
}

impl LoadedWriter {
    fn load(fx: &Fixture) -> LoadedWriter {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let limits = Arc::new(Limits::default());
        let store = write_model::store::open(
            &write_model::store::Location::Sqlite(dir.path().join("hot.db")),
            Durability::Normal,
        )
        .expect("a store");
        let (write, thread) = WriteModel::start(
            &*store,
            limits.clone(),
            Arc::new(Clocks::default()),
            Box::new(|_| {}),
            Box::new(|_, _| {}),
        )
        .expect("the writer starts");
        let loaded = LoadedWriter {
            write,
            thread,
            limits,
            account: "a_bench".to_owned(),
            _dir: dir,
        };
        loaded.run(Command::CreateAccount);
        // Ten projects per import: one import command's cost grows faster than its size.
        for export in fx.export_chunks(10) {
            loaded.run(Command::import(&export, &loaded.limits).expect("the fixture imports"));
        }
        loaded
    }

    /// Runs a command from no key (so no undo step) and waits for it.
    fn run(&self, command: Command) {
        self.write
            .execute_blocking(Request {
                account: Some(self.account.clone()),
                key_id: None,
                command,
            })
            .expect("the command lands");
    }

    fn stop(self) {
        drop(self.write);
        let _ = self.thread.join();
    }
}

/// One PATCH at a time through the writer, at two account sizes, and a commit group of them.
fn writer(c: &mut Criterion) {
    let fx = fixture(1_000);
    let loaded = LoadedWriter::load(&fx);
    writer_patch(c, &loaded, &fx, "1,000 cards");
    grouped_patches(c, &loaded, &fx);
    loaded.stop();
    let fx = Fixture::generate(&Spec::largest());
    let loaded = LoadedWriter::load(&fx);
    writer_patch(c, &loaded, &fx, "largest account");
    loaded.stop();
}

/// A PATCH of a card's title, the `n`th of a run (each title differs, so each writes).
fn title_patch(card: &str, n: usize, limits: &Limits) -> Command {
    let body = format!("{{\"title\":\"Patched {n:08}\"}}");
    Command::update_task(TaskId::named(card), body.as_bytes(), limits).expect("valid")
}

fn writer_patch(c: &mut Criterion, loaded: &LoadedWriter, fx: &Fixture, label: &str) {
    let card = fx.open_tasks().next().expect("an open card").id.clone();
    let mut n = 0usize;
    c.benchmark_group("writer").bench_function(
        format!("PATCH title via execute_blocking ({label}, NORMAL)"),
        |b| {
            b.iter_batched(
                || {
                    n += 1;
                    title_patch(&card, n, &loaded.limits)
                },
                |command| loaded.run(command),
                BatchSize::SmallInput,
            )
        },
    );
}

/// The commands of one group in the load bench's PATCH run at 64 connections.
const GROUP: usize = 23;

/// One commit group of PATCHes from one key that records undo steps (the load bench's
/// connections share their account's key), as the server's writer takes them under load:
/// the writer is held on a gate command's reply while the group queues, so the time from
/// releasing it to the last reply is one group's apply, undo steps and commit
/// (`synchronous=NORMAL`, so no disk flush in it).
fn grouped_patches(c: &mut Criterion, loaded: &LoadedWriter, fx: &Fixture) {
    use std::sync::mpsc;
    use std::time::{Duration, Instant};
    let (write, limits) = (&loaded.write, &*loaded.limits);
    // Edited in turn, as the load bench's editors go through the account's open cards.
    let cards: Vec<String> = fx.open_tasks().map(|t| t.id.clone()).collect();
    let mut n = 0usize;
    let mut patch = || {
        n += 1;
        let command = title_patch(&cards[n % cards.len()], n, limits);
        Request {
            account: Some(loaded.account.clone()),
            key_id: Some("y_bench".to_owned()),
            command,
        }
    };
    c.benchmark_group("writer").bench_function(
        format!("{GROUP} PATCHes in one group, undo recorded (1,000 cards, NORMAL)"),
        |b| {
            b.iter_custom(|iters| {
                let mut spent = Duration::ZERO;
                for _ in 0..iters {
                    let (entered, gate_entered) = mpsc::channel::<()>();
                    let (release, gate_released) = mpsc::channel::<()>();
                    write.submit(
                        patch(),
                        Box::new(move |r| {
                            r.expect("the gate lands");
                            let _ = entered.send(());
                            let _ = gate_released.recv();
                        }),
                    );
                    gate_entered.recv().expect("the writer runs the gate");
                    let (done, replies) = mpsc::channel();
                    for _ in 0..GROUP {
                        let done = done.clone();
                        write.submit(
                            patch(),
                            Box::new(move |r| {
                                let _ = done.send(r);
                            }),
                        );
                    }
                    let started = Instant::now();
                    release.send(()).expect("the gate waits");
                    for _ in 0..GROUP {
                        replies.recv().expect("a reply").expect("the PATCH lands");
                    }
                    spent += started.elapsed();
                }
                spent
            })
        },
    );
}

fn fragments(c: &mut Criterion) {
    let fx = fixture(1_000);
    let snapshot = || AccountDoc::from_snapshot(fx.snapshot());
    let project = fx.projects[0].id.clone();
    let now = fx.spec.now + 1;
    let mut g = c.benchmark_group("fragment");
    g.bench_function("cold (1,000-card project)", |b| {
        b.iter_batched(
            snapshot,
            |doc| {
                doc.fragment(&project, Completed::None, now, WINDOW_MS)
                    .expect("the project")
            },
            BatchSize::LargeInput,
        )
    });
    let mut doc = snapshot();
    doc.fragment(&project, Completed::None, now, WINDOW_MS);
    g.bench_function("cached (1,000-card project)", |b| {
        b.iter(|| doc.fragment(black_box(&project), Completed::None, now, WINDOW_MS))
    });
    let mut cs = one_card_change(&fx, &doc);
    g.bench_function("after a one-card change (apply + render)", |b| {
        b.iter(|| {
            next(&mut cs);
            doc.apply(cs.rev, cs.stamp, cs.records.clone());
            doc.fragment(&project, Completed::None, now, WINDOW_MS)
        })
    });
    g.finish();
}

fn changes(c: &mut Criterion) {
    let fx = fixture(10_000);
    let doc = AccountDoc::from_snapshot(fx.snapshot());
    let now = fx.spec.now + 1;
    let view = Completed::Recent;
    let cut = cutoff(view, now, WINDOW_MS);
    // A small window: the stamps of the ten most recent changes.
    let mut stamps: Vec<i64> = fx.tasks.iter().map(|t| t.updated_at).collect();
    stamps.sort_unstable_by(|a, b| b.cmp(a));
    let since = stamps[9];
    let query = |scoped| ChangesQuery {
        since: Some(since),
        view,
        scoped,
        holding: None,
    };
    let mut g = c.benchmark_group("changes");
    g.bench_function("AccountDoc::changes, 10 cards of 10,000", |b| {
        b.iter(|| {
            doc.changes(black_box(&query(false)), now, cut)
                .collect::<Vec<_>>()
        })
    });
    g.bench_function(
        "AccountDoc::changes, 10 cards of 10,000 (manifest=changed)",
        |b| {
            b.iter(|| {
                doc.changes(black_box(&query(true)), now, cut)
                    .collect::<Vec<_>>()
            })
        },
    );
    let holding = ChangesQuery {
        since: Some(now),
        view,
        scoped: false,
        holding: Some(doc.live_cards(view, cut) as u64),
    };
    assert!(doc.unchanged(&holding, cut), "an idle poll short-circuits");
    g.bench_function("AccountDoc::unchanged (10,000 cards)", |b| {
        b.iter(|| doc.unchanged(black_box(&holding), cut))
    });
    g.finish();
}

criterion_group!(hot, validation, apply, writer, fragments, changes);
criterion_main!(hot);
