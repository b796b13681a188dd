//! The processor's group handling, run on a store of its own: failures and their
//! replays, and the ledger's copies of records.

use parking_lot::Mutex;

use super::*;
use crate::command::project::CreateProject;
use crate::ids::{ColumnId, ProjectId, TaskId};
use crate::store::sqlite::{SqliteStore, test_count_rows};
use crate::store::{Durability, Loaded, ReadStore};

struct Fixture {
    processor: Processor,
    applied: Arc<Mutex<usize>>,
    /// The same store, read as the rest of the service reads it.
    store: SqliteStore,
    path: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

/// A processor on a fresh store whose accounts hold at most `storage_bytes`.
fn fixture(storage_bytes: u64) -> Fixture {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let applied = Arc::new(Mutex::new(0));
    let counted = applied.clone();
    let path = dir.path().join("store.db");
    let store = SqliteStore::open(&path, Durability::Normal).expect("a store");
    let processor = Processor {
        writer: crate::store::sqlite::test_writer(&path),
        limits: Arc::new(Limits {
            storage_bytes,
            name_chars: 1_000,
            ..Limits::default()
        }),
        clocks: Arc::new(Clocks::default()),
        sink: Box::new(move |effects| *counted.lock() += effects.len()),
        read_only: Arc::new(AtomicBool::new(false)),
        ledger: Ledger::default(),
        observer: Box::new(|_, _| {}),
        shared: false,
        stopped: Stopped::default(),
        pruning: Default::default(),
        drained: Arc::new(AtomicUsize::new(0)),
        #[cfg(debug_assertions)]
        fault: stopped::Fault::default(),
    };
    Fixture {
        processor,
        applied,
        store,
        path,
        _dir: dir,
    }
}

type Results = Arc<Mutex<Vec<(usize, Result<Outcome, WriteError>)>>>;

/// Runs `requests` as one group; the results in the order sent.
fn group(processor: &mut Processor, requests: Vec<Request>) -> Vec<Result<Outcome, WriteError>> {
    let results: Results = Arc::new(Mutex::new(Vec::new()));
    let envelopes = requests
        .into_iter()
        .enumerate()
        .map(|(i, request)| {
            let results = results.clone();
            Envelope {
                request,
                keyed: None,
                reply: Box::new(move |r| results.lock().push((i, r))),
            }
        })
        .collect();
    processor.apply_group(envelopes, Vec::new());
    let mut results = std::mem::take(&mut *results.lock());
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

fn account(processor: &mut Processor) -> String {
    let created = group(
        processor,
        vec![Request {
            account: Some(crate::ids::IdKind::Account.generate()),
            key_id: None,
            command: Command::CreateAccount,
        }],
    );
    match created.into_iter().next() {
        Some(Ok(Outcome::AccountCreated { id })) => id,
        other => panic!("no account: {other:?}"),
    }
}

fn create_project(account: &str, id: &str, name_len: usize, limits: &Limits) -> Request {
    let body = serde_json::json!({ "id": id, "name": "n".repeat(name_len) }).to_string();
    Request {
        account: Some(account.to_owned()),
        key_id: Some("k_test".into()),
        command: CreateProject::parse(body.as_bytes(), limits).expect("a valid body"),
    }
}

/// The ids of every record the account holds, sorted.
fn ids(f: &Fixture, account: &str) -> Vec<String> {
    let mut ids = Vec::new();
    f.store
        .load_account(account, &mut |row| match row {
            Loaded::Project(p) => ids.push(p.value.id),
            Loaded::Column(c) => ids.push(c.value.id),
            Loaded::Task(t) => ids.push(t.value.id),
            Loaded::Marker(_) => {}
        })
        .unwrap();
    ids.sort();
    ids
}

fn undo_steps(f: &Fixture) -> i64 {
    test_count_rows(&f.path, "undo")
}

#[test]
fn a_command_failing_after_its_writes_leaves_nothing_and_its_group_stands() {
    let mut f = fixture(600);
    let (a, b) = (account(&mut f.processor), account(&mut f.processor));
    let limits = f.processor.limits.clone();
    *f.applied.lock() = 0;
    // The middle create writes its record, then finds the account full.
    let results = group(
        &mut f.processor,
        vec![
            create_project(&a, "b_first", 10, &limits),
            create_project(&b, "b_too_big", 700, &limits),
            create_project(&b, "b_too_big_too", 800, &limits),
            create_project(&b, "b_fits", 10, &limits),
            create_project(&a, "b_last", 10, &limits),
        ],
    );
    let created = |r: &Result<Outcome, WriteError>| matches!(r, Ok(Outcome::Created { .. }));
    assert!(created(&results[0]), "{:?}", results[0]);
    assert!(
        matches!(results[1], Err(WriteError::StorageFull)),
        "{:?}",
        results[1]
    );
    assert!(
        matches!(results[2], Err(WriteError::StorageFull)),
        "{:?}",
        results[2]
    );
    assert!(created(&results[3]), "{:?}", results[3]);
    assert!(created(&results[4]), "{:?}", results[4]);
    assert_eq!(ids(&f, &a), ["b_first", "b_last"]);
    assert_eq!(ids(&f, &b), ["b_fits"]);
    assert_eq!(undo_steps(&f), 3, "one step per create that stood");
    assert_eq!(
        *f.applied.lock(),
        3,
        "the read side hears of the three creates only"
    );
    let rev = |account: &str| -> i64 {
        let (rev, _) = f
            .store
            .load_account(account, &mut |_| {})
            .unwrap()
            .expect("the account exists");
        rev
    };
    assert_eq!((rev(&a), rev(&b)), (2, 1));
}

#[test]
fn a_command_failing_before_it_writes_keeps_its_neighbours() {
    let mut f = fixture(1 << 20);
    let a = account(&mut f.processor);
    let limits = f.processor.limits.clone();
    let results = group(
        &mut f.processor,
        vec![
            create_project(&a, "b_one", 10, &limits),
            Request {
                account: Some(a.clone()),
                key_id: None,
                command: Command::DeleteProject(ProjectId::named("b_missing")),
            },
            create_project(&a, "b_two", 10, &limits),
        ],
    );
    assert!(
        matches!(results[1], Err(WriteError::NotFound)),
        "{:?}",
        results[1]
    );
    assert!(results[0].is_ok() && results[2].is_ok(), "{results:?}");
    assert_eq!(ids(&f, &a), ["b_one", "b_two"]);
}

fn request(account: &str, command: Command) -> Request {
    Request {
        account: Some(account.to_owned()),
        key_id: Some("k_test".into()),
        command,
    }
}

/// A card `id` made in column `c_c` with no position given.
fn create_card(account: &str, id: &str, limits: &Limits) -> Request {
    let body = format!(r#"{{"id":"{id}","columnId":"c_c","title":"t"}}"#);
    request(
        account,
        crate::command::task::CreateTask::parse(body.as_bytes(), limits).unwrap(),
    )
}

/// A fresh account holding project `b_p` with one column, `c_c`.
fn board(storage_bytes: u64) -> (Fixture, String) {
    let mut f = fixture(storage_bytes);
    let a = account(&mut f.processor);
    let body = r#"{"id":"b_p","name":"one","columns":[{"id":"c_c","name":"col"}]}"#;
    let project = CreateProject::parse(body.as_bytes(), &f.processor.limits).unwrap();
    let made = group(&mut f.processor, vec![request(&a, project)]);
    assert!(made[0].is_ok(), "{made:?}");
    (f, a)
}

/// The ledger's copy of a record it must be keeping.
fn kept<'f>(f: &'f Fixture, account: &str, id: &str) -> &'f crate::records::Record {
    let (record, _) = f
        .processor
        .ledger
        .record(account, id)
        .unwrap_or_else(|| panic!("{id} is not kept"));
    record
}

/// Every record the ledger keeps for `account` is what the store holds, in the bin or not.
fn assert_ledger_matches_store(f: &Fixture, account: &str, ids: &[&str]) {
    for id in ids {
        let Some((_, kept)) = f.processor.ledger.record(account, id) else {
            continue;
        };
        let stored = f.processor.writer.tx().get_row(account, id).unwrap();
        assert_eq!(
            (kept.body.as_ref(), kept.bin_entry()),
            stored.as_ref().map_or((None, None), |(_, row)| (
                row.body.as_ref(),
                row.bin_entry()
            )),
            "the ledger's copy of {id} is not the store's"
        );
    }
}

#[test]
fn the_ledgers_projects_and_columns_follow_only_what_stands() {
    let (mut f, a) = board(2_000);
    let limits = f.processor.limits.clone();
    assert_ledger_matches_store(&f, &a, &["b_p", "c_c"]);
    // The rename stands; the card touches the project and its column's account, then
    // finds the account full: the group is replayed and only the rename is kept.
    let rename =
        Command::update_project(ProjectId::named("b_p"), br#"{"name":"two"}"#, &limits).unwrap();
    let card = format!(
        r#"{{"columnId":"c_c","title":"t","description":"{}"}}"#,
        "d".repeat(3_000)
    );
    let card = crate::command::task::CreateTask::parse(card.as_bytes(), &limits).unwrap();
    let results = group(
        &mut f.processor,
        vec![request(&a, rename), request(&a, card)],
    );
    assert!(results[0].is_ok(), "{results:?}");
    assert!(
        matches!(results[1], Err(WriteError::StorageFull)),
        "{results:?}"
    );
    // The replay starts the ledger over; a read fills it again from the store.
    let recolumn =
        Command::update_column(ColumnId::named("c_c"), br#"{"name":"c2"}"#, &limits).unwrap();
    let results = group(&mut f.processor, vec![request(&a, recolumn)]);
    assert!(results[0].is_ok(), "{results:?}");
    assert_ledger_matches_store(&f, &a, &["b_p", "c_c"]);
    let crate::records::Record::Project(project) = kept(&f, &a, "b_p") else {
        panic!("b_p is not kept as a project");
    };
    assert_eq!(project.name, "two");
    // Deleting the project drops its copy.
    let results = group(
        &mut f.processor,
        vec![request(&a, Command::DeleteProject(ProjectId::named("b_p")))],
    );
    assert!(results[0].is_ok(), "{results:?}");
    assert_ledger_matches_store(&f, &a, &["b_p", "c_c"]);
}

#[test]
fn the_ledgers_cards_follow_their_edits_and_leave_with_a_bulk_write() {
    let (mut f, a) = board(10_000_000);
    let limits = f.processor.limits.clone();
    let create = |id: &str| create_card(&a, id, &limits);
    let cards: Vec<String> = (0..70).map(|i| format!("t_card{i:02}")).collect();
    let made = group(
        &mut f.processor,
        cards.iter().map(|id| create(id)).collect(),
    );
    assert!(made.iter().all(Result::is_ok), "{made:?}");
    let retitle = |title: &str| {
        let body = format!(r#"{{"title":"{title}"}}"#);
        request(
            &a,
            crate::command::Command::update_task(
                TaskId::named("t_card00"),
                body.as_bytes(),
                &limits,
            )
            .unwrap(),
        )
    };
    // An edit leaves the card's copy as the store has it, and the next edit starts from it.
    let edited = group(&mut f.processor, vec![retitle("two"), retitle("three")]);
    assert!(edited.iter().all(Result::is_ok), "{edited:?}");
    let crate::records::Record::Task(card) = kept(&f, &a, "t_card00") else {
        panic!("t_card00 is not kept as a card");
    };
    assert_eq!(card.title, "three");
    let ids: Vec<&str> = cards.iter().map(String::as_str).collect();
    assert_ledger_matches_store(&f, &a, &ids);
    // Deleting the column bins it with its 70 cards in one request, too many to hand over:
    // the copies kept before must not outlive it.
    let deleted = group(
        &mut f.processor,
        vec![request(&a, Command::DeleteColumn(ColumnId::named("c_c")))],
    );
    assert!(deleted[0].is_ok(), "{deleted:?}");
    assert_ledger_matches_store(&f, &a, &ids);
}

#[test]
fn a_keys_history_keeps_its_limit_inside_a_group_and_across_groups() {
    let mut f = fixture(1 << 20);
    let a = account(&mut f.processor);
    let limits = f.processor.limits.clone();
    let keep = limits.undo_steps;
    let creates = |from: usize, to: usize| -> Vec<Request> {
        (from..to)
            .map(|i| create_project(&a, &format!("b_{i:02}"), 4, &limits))
            .collect()
    };
    // One group stores more steps than the history keeps: the oldest go at its commit.
    let made = group(&mut f.processor, creates(0, keep + 5));
    assert!(made.iter().all(Result::is_ok), "{made:?}");
    assert_eq!(undo_steps(&f), keep as i64);
    // Then, in one group, three more steps and undos one past the history's length: each
    // undo finds the newest step left, and none reaches a step pushed out.
    let mut requests = creates(keep + 5, keep + 8);
    requests.extend((0..=keep).map(|_| request(&a, Command::Undo)));
    let results = group(&mut f.processor, requests);
    let undone: Vec<String> = results[3..]
        .iter()
        .filter_map(|r| match r {
            Ok(Outcome::Undone { id, .. }) => Some(id.clone()),
            _ => None,
        })
        .collect();
    let newest_first: Vec<String> = (8..keep + 8).rev().map(|i| format!("b_{i:02}")).collect();
    assert_eq!(undone, newest_first);
    assert!(
        matches!(results.last(), Some(Ok(Outcome::NothingToUndo))),
        "{:?}",
        results.last()
    );
    assert_eq!(undo_steps(&f), 0);
    // Numbers go on from where the history is: a new step is undone next.
    let results = group(
        &mut f.processor,
        vec![
            create_project(&a, "b_new", 4, &limits),
            request(&a, Command::Undo),
        ],
    );
    assert!(
        matches!(&results[1], Ok(Outcome::Undone { id, .. }) if id == "b_new"),
        "{results:?}"
    );
}

#[test]
fn commands_on_one_card_in_one_group_each_build_on_the_last() {
    use crate::command::items::ItemCommand;
    use crate::command::task::CreateTask;
    let (mut f, a) = board(1 << 20);
    let limits = f.processor.limits.clone();
    let create = CreateTask::parse(
        br#"{"id":"t_card","columnId":"c_c","title":"Trip"}"#,
        &limits,
    );
    let made = group(&mut f.processor, vec![request(&a, create.unwrap())]);
    assert!(made[0].is_ok(), "{made:?}");
    // As the web client sends them when fields are saved one after another: a field write,
    // a tag and a checklist item, all in one commit group.
    let id = || TaskId::named("t_card");
    let results = group(
        &mut f.processor,
        vec![
            request(
                &a,
                Command::update_task(id(), br#"{"location":"Lisbon"}"#, &limits).unwrap(),
            ),
            request(
                &a,
                ItemCommand::parse_tag(id(), br#"{"text":"travel"}"#, &limits).unwrap(),
            ),
            request(
                &a,
                ItemCommand::parse_checklist(
                    id(),
                    br#"{"id":"k_one","text":"Passports"}"#,
                    &limits,
                )
                .unwrap(),
            ),
            request(
                &a,
                Command::update_task(id(), br#"{"priority":2}"#, &limits).unwrap(),
            ),
        ],
    );
    assert!(results.iter().all(Result::is_ok), "{results:?}");
    let crate::records::Record::Task(card) = kept(&f, &a, "t_card") else {
        panic!("not a card");
    };
    assert_eq!(card.location, "Lisbon");
    assert_eq!(
        card.tags
            .iter()
            .map(|t| t.text.as_str())
            .collect::<Vec<_>>(),
        ["travel"]
    );
    assert_eq!(card.checklist.len(), 1);
    assert_eq!(card.priority, 2);
    assert_ledger_matches_store(&f, &a, &["t_card", "b_p", "c_c"]);
}

/// Every least position the ledger keeps for `account` is what the store answers; how many
/// it keeps.
fn assert_tops_match_store(f: &Fixture, account: &str) -> usize {
    let tops = f.processor.ledger.tops(account);
    for ((kind, parent), least) in &tops {
        let parent = (*kind != crate::records::Kind::Project).then_some(parent.as_str());
        let stored = f.processor.writer.tx().min_position(account, *kind, parent);
        assert_eq!(
            Some(*least),
            stored.ok(),
            "the least position of {kind:?} under {parent:?}"
        );
    }
    tops.len()
}

#[test]
fn a_card_made_without_a_position_goes_on_top_as_its_column_changes() {
    use crate::records::{Kind, Record};
    let (mut f, a) = board(10_000_000);
    let limits = f.processor.limits.clone();
    let create = |id: &str| create_card(&a, id, &limits);
    let update = |id: &str, body: &str| {
        request(
            &a,
            Command::update_task(TaskId::named(id), body.as_bytes(), &limits).unwrap(),
        )
    };
    let column = crate::command::column::CreateColumn::parse(
        br#"{"id":"c_d","projectId":"b_p","name":"d"}"#,
        &limits,
    )
    .unwrap();
    let position = |f: &Fixture, id: &str| match f.processor.writer.tx().get_row(&a, id) {
        Ok(Some((Record::Task(t), _))) => t.position,
        other => panic!("{id} is not a card: {other:?}"),
    };
    let top = |f: &Fixture| {
        let least = f
            .processor
            .writer
            .tx()
            .min_position(&a, Kind::Task, Some("c_c"));
        least.unwrap().map_or(0.0, |least| least - 1.0)
    };
    let run = |f: &mut Fixture, requests: Vec<Request>| {
        let ran = group(&mut f.processor, requests);
        assert!(ran.iter().all(Result::is_ok), "{ran:?}");
        assert_tops_match_store(f, &a)
    };

    // Two creates in one group, then one more: each goes above the last.
    let kept = run(&mut f, vec![create("t_1"), create("t_2")]);
    assert!(kept > 0, "the column's least position is kept");
    assert!(position(&f, "t_2") < position(&f, "t_1"));
    let expected = top(&f);
    run(&mut f, vec![create("t_3")]);
    assert_eq!(position(&f, "t_3"), expected);

    // The card on top leaves for another column, is deleted, moves down, comes back from
    // the bin: each time the next card goes just above what is left.
    let moves: Vec<Vec<Request>> = vec![
        vec![request(&a, column), update("t_3", r#"{"columnId":"c_d"}"#)],
        vec![request(&a, Command::DeleteTask(TaskId::named("t_2")))],
        vec![update("t_1", r#"{"position":100}"#)],
        vec![update("t_2", r#"{"cancelledAt":null}"#)],
        vec![update("t_2", r#"{"position":-50}"#)],
    ];
    for (n, requests) in moves.into_iter().enumerate() {
        run(&mut f, requests);
        let expected = top(&f);
        let id = format!("t_after_move_{n}");
        run(&mut f, vec![create(&id)]);
        assert_eq!(position(&f, &id), expected, "after move {n}");
    }
}

#[test]
fn a_panic_after_the_commit_stops_the_writer_and_every_sender_hears_why() {
    let mut f = fixture(1 << 20);
    let owner = account(&mut f.processor);
    f.processor.sink = Box::new(|_| panic!("the read side broke"));
    let limits = f.processor.limits.clone();
    let results = group(
        &mut f.processor,
        vec![create_project(&owner, "b_afterpanic", 4, &limits)],
    );
    match &results[..] {
        [Err(WriteError::WriterStopped(cause))] => {
            assert!(cause.contains("the read side broke"), "{cause}")
        }
        other => panic!("expected writer_stopped, got {other:?}"),
    }
    let cause = f
        .processor
        .stopped
        .get()
        .expect("the writer says it stopped");
    assert!(cause.contains("the read side broke"), "{cause}");
    // The group had committed: the store holds it, as a retry will find.
    assert_eq!(ids(&f, &owner), ["b_afterpanic"]);
}
