//! Convergence (issue 5, Tests): a simulated sync client keeps a local copy of the account
//! through `/changes` (`since`, `holding`, `manifest=changed`) and the socket's nudges, while
//! other keys make a few hundred random concurrent writes. Once the writers stop and the
//! client catches up one last time, its copy must equal a full read, field for field. And a
//! bare poller that feeds `now` back as `since` sees every acknowledged write (contract:
//! Consistency).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};
use tokio::task::JoinSet;

use crate::changes::{DAY, changes, entries, find, now_of};
use crate::harness::*;
use crate::live::{Socket, next_nudge, open};

const WRITERS: u64 = 3;
const WRITES_PER_WRITER: usize = 100;

type Records = BTreeMap<String, Value>;

/// The client's copy: projects and lists as `/changes` sends them, cards without `order`.
#[derive(Default)]
struct Replica {
    projects: Records,
    lists: Records,
    cards: Records,
    since: Option<i64>,
    polls: usize,
    /// Card records the feed delivered over the whole run, deleted ones included.
    cards_received: usize,
    /// Each poll's `since` and `now`, and whether it was the idle reply: shown when the
    /// copy does not converge, to find the poll that stepped over a write.
    history: Vec<(i64, i64, bool)>,
    /// A copy that held a card or list without its parents: noted (with the poll it came
    /// after) and asserted once the run is over, so the history can be shown.
    orphans: Vec<String>,
}

/// `order` is computed when a reply is serialised, and `/changes` does not re-send a card
/// whose `order` moved only because a neighbour moved; a client cannot keep it current from
/// the feed, so neither copy keeps it.
fn card_without_order(card: &Value) -> Value {
    let mut card = card.clone();
    card.as_object_mut().expect("card").remove("order");
    card
}

impl Replica {
    /// One catch-up, applying the contract's rules for a client on the narrow manifest.
    async fn sync(&mut self, api: &Api) {
        let query = match self.since {
            Some(since) => format!(
                "?manifest=changed&since={since}&holding={}",
                self.cards.len()
            ),
            None => "?manifest=changed".to_string(),
        };
        let reply = changes(api, &query).await;
        self.polls += 1;
        let now = now_of(&reply);
        if let Some(since) = self.since {
            assert!(now >= since, "now went back from {since} to {now}");
        }
        self.history.push((
            self.since.unwrap_or(0),
            now,
            reply.get("unchanged").is_some(),
        ));
        self.since = Some(now);
        if reply.get("unchanged").is_some() {
            assert_keys(&reply, &["unchanged", "now"]);
            return;
        }
        assert_eq!(reply["scoped"], json!(true), "{reply}");
        let mut scoped: BTreeSet<String> = BTreeSet::new();
        for project in entries(&reply, "projects") {
            let id = str_of(&project["id"]);
            if project.get("deletedAt").is_some() {
                self.projects.remove(&id);
                self.lists.retain(|_, l| l["projectId"] != json!(id));
                self.cards.retain(|_, c| c["projectId"] != json!(id));
            } else {
                self.projects.insert(id.clone(), project);
                scoped.insert(id);
            }
        }
        for list in entries(&reply, "lists") {
            let id = str_of(&list["id"]);
            if list.get("deletedAt").is_some() {
                self.lists.remove(&id);
                self.cards.retain(|_, c| c["columnId"] != json!(id));
            } else {
                self.lists.insert(id, list);
            }
        }
        for card in entries(&reply, "cards") {
            self.cards_received += 1;
            let id = str_of(&card["id"]);
            if card["cancelledAt"].is_null() {
                self.cards.insert(id, card_without_order(&card));
            } else {
                self.cards.remove(&id);
            }
        }
        let manifest: BTreeSet<String> = reply["taskIds"]
            .as_array()
            .unwrap_or_else(|| panic!("taskIds: {reply}"))
            .iter()
            .map(str_of)
            .collect();
        let cutoff = reply["cutoff"].as_i64().expect("cutoff");
        self.cards.retain(|id, c| {
            let gone = scoped.contains(&str_of(&c["projectId"])) && !manifest.contains(id);
            let aged = c["completedAt"].as_i64().is_some_and(|done| done < cutoff);
            !gone && !aged
        });
        // A reply is one snapshot, so the copy never holds a card or list without its parents.
        let held = |records: &Records, id: &Value| records.contains_key(id.as_str().unwrap_or(""));
        let poll = self.history.len();
        for (id, card) in &self.cards {
            let placed =
                held(&self.lists, &card["columnId"]) && held(&self.projects, &card["projectId"]);
            if !placed {
                self.orphans.push(format!(
                    "after poll {poll}: {id} is held without its list or project: {card}"
                ));
            }
        }
        for (id, list) in &self.lists {
            if !held(&self.projects, &list["projectId"]) {
                self.orphans
                    .push(format!("after poll {poll}: {id} held without its project"));
            }
        }
    }
}

/// A full read flattened to the client's maps.
async fn full_read(api: &Api) -> (Records, Records, Records) {
    let (mut projects, mut lists, mut cards) = (Records::new(), Records::new(), Records::new());
    for mut project in api.projects("?completed=recent").await {
        let columns = project
            .as_object_mut()
            .unwrap()
            .remove("columns")
            .expect("columns");
        for mut column in columns.as_array().unwrap().clone() {
            let tasks = column
                .as_object_mut()
                .unwrap()
                .remove("tasks")
                .expect("tasks");
            for task in tasks.as_array().unwrap() {
                cards.insert(str_of(&task["id"]), card_without_order(task));
            }
            lists.insert(str_of(&column["id"]), column);
        }
        projects.insert(str_of(&project["id"]), project);
    }
    (projects, lists, cards)
}

/// Fails with the ids missing, extra and the first records that differ.
#[track_caller]
fn assert_converged(what: &str, client: &Records, server: &Records) {
    let missing: Vec<String> = server
        .iter()
        .filter(|(k, _)| !client.contains_key(*k))
        .map(|(k, v)| format!("{k} (updatedAt {})", v["updatedAt"]))
        .collect();
    let extra: Vec<&String> = client.keys().filter(|k| !server.contains_key(*k)).collect();
    let differing: Vec<String> = server
        .iter()
        .filter(|(k, v)| client.get(*k).is_some_and(|c| c != *v))
        .take(3)
        .map(|(k, v)| format!("\n  {k}\n    client: {}\n    server: {v}", client[k]))
        .collect();
    assert!(
        missing.is_empty() && extra.is_empty() && differing.is_empty(),
        "{what}: the client's copy differs from a full read\n missing: {missing:?}\n extra: \
         {extra:?}\n differing:{}",
        differing.join("")
    );
}

/// Ids the writers know of; stale ones are fine (the server answers 404 or 422).
#[derive(Default)]
struct Known {
    projects: Vec<String>,
    columns: Vec<String>,
    cards: Vec<String>,
    deleted_cards: Vec<String>,
}

#[derive(Clone, Copy)]
enum Kind {
    Project,
    Column,
    Card,
    DeletedCard,
}

impl Known {
    fn of(&mut self, kind: Kind) -> &mut Vec<String> {
        match kind {
            Kind::Project => &mut self.projects,
            Kind::Column => &mut self.columns,
            Kind::Card => &mut self.cards,
            Kind::DeletedCard => &mut self.deleted_cards,
        }
    }
}

type Shared = Arc<Mutex<Known>>;

fn pick(known: &Shared, rng: &mut StdRng, kind: Kind) -> Option<String> {
    known.lock().unwrap().of(kind).choose(rng).cloned()
}

fn remember(known: &Shared, kind: Kind, id: String) {
    known.lock().unwrap().of(kind).push(id);
}

/// One random write; refusals a racing writer can cause (404, 409, 422) are expected.
async fn random_write(api: &Api, known: &Shared, rng: &mut StdRng) {
    let roll = rng.random_range(0..100);
    let card = pick(known, rng, Kind::Card);
    let column = pick(known, rng, Kind::Column);
    let project = pick(known, rng, Kind::Project);
    // Some completions and archives land 40 days back, outside the 30-day window.
    let stamp = now_ms() - if rng.random_bool(0.15) { 40 * DAY } else { 0 };
    let stamp_or_null = if rng.random_bool(0.5) {
        json!(stamp)
    } else {
        json!(null)
    };
    let (r, created) = match (roll, card, column, project) {
        (0..=19, _, Some(column), _) | (_, None, Some(column), _) => {
            let mut body = json!({ "columnId": column, "title": format!("card {roll}"),
                "priority": rng.random_range(1..=4) });
            if rng.random_bool(0.2) {
                body["parentId"] = json!(pick(known, rng, Kind::Card));
            }
            (api.post("/tasks", body).await, Some(Kind::Card))
        }
        (20..=55 | 75..=86, Some(card), column, _) => {
            let body = match roll {
                20..=39 => [
                    json!({ "title": format!("edited {roll}") }),
                    json!({ "priority": rng.random_range(1..=4), "effort": "hard" }),
                    json!({ "deadline": "2025-03-01", "deadlineTime": "08:00" }),
                    json!({ "description": "| a |\n|---|\n| b |", "location": "here" }),
                    json!({ "tags": ["red", format!("t{roll}")] }),
                ]
                .choose(rng)
                .unwrap()
                .clone(),
                40..=49 => json!({ "completedAt": stamp }),
                50..=55 => json!({ "completedAt": null }),
                75..=82 => json!({ "columnId": column }),
                _ => json!({ "position": rng.random_range(-50.0..50.0) }),
            };
            (api.patch(&format!("/tasks/{card}"), body).await, None)
        }
        (56..=65, Some(card), ..) => {
            let r = api.delete(&format!("/tasks/{card}")).await;
            if r.status == 200 {
                let mut k = known.lock().unwrap();
                k.cards.retain(|c| *c != card);
                k.deleted_cards.push(card);
            }
            (r, None)
        }
        (66..=70, ..) => {
            let bin = api.get("/bin").await.expect_ok(200)["entries"].clone();
            let Some(entry) = bin.as_array().unwrap().choose(rng) else {
                return;
            };
            let path = format!("/bin/{}/restore", str_of(&entry["id"]));
            (api.post(&path, json!({})).await, None)
        }
        (71..=74, ..) => {
            let Some(card) = pick(known, rng, Kind::DeletedCard) else {
                return;
            };
            let body = json!({ "cancelledAt": null });
            let r = api.patch(&format!("/tasks/{card}"), body).await;
            if r.status == 200 {
                remember(known, Kind::Card, card);
            }
            (r, None)
        }
        (87..=88, _, Some(column), _) => {
            let body = json!({ "archivedAt": stamp_or_null });
            (api.patch(&format!("/columns/{column}"), body).await, None)
        }
        (89..=90, _, _, Some(project)) => {
            let body = if rng.random_bool(0.5) {
                json!({ "archivedAt": stamp_or_null })
            } else {
                json!({ "pinnedAt": stamp_or_null, "folder": format!("f{roll}") })
            };
            (api.patch(&format!("/projects/{project}"), body).await, None)
        }
        (91..=93, Some(card), ..) => {
            let items = [("tags", "x"), ("checklist", "step"), ("comments", "note")];
            let (what, text) = *items.choose(rng).unwrap();
            let body = json!({ "text": text });
            (api.post(&format!("/tasks/{card}/{what}"), body).await, None)
        }
        (94..=95, _, _, Some(project)) => {
            let body = json!({ "projectId": project, "name": format!("col {roll}") });
            (api.post("/columns", body).await, Some(Kind::Column))
        }
        (96, ..) => {
            let body = json!({ "name": format!("project {roll}"), "columns": ["A", "B"] });
            let r = api.post("/projects", body).await;
            for c in r.body["project"]["columns"]
                .as_array()
                .into_iter()
                .flatten()
            {
                remember(known, Kind::Column, str_of(&c["id"]));
            }
            (r, Some(Kind::Project))
        }
        (97..=98, _, Some(column), _) if known.lock().unwrap().of(Kind::Column).len() > 4 => {
            let r = api.delete(&format!("/columns/{column}")).await;
            if r.status == 200 {
                known
                    .lock()
                    .unwrap()
                    .of(Kind::Column)
                    .retain(|c| *c != column);
            }
            (r, None)
        }
        // A project goes only while others remain, so the board never empties and the final
        // comparison has cards to compare.
        (99, _, _, Some(project)) if known.lock().unwrap().of(Kind::Project).len() > 2 => {
            let r = api.delete(&format!("/projects/{project}")).await;
            if r.status == 200 {
                known
                    .lock()
                    .unwrap()
                    .of(Kind::Project)
                    .retain(|p| *p != project);
            }
            (r, None)
        }
        _ => return,
    };
    let expected = matches!(r.status, 200 | 201 | 404 | 409 | 422);
    assert!(expected, "{} answered {}: {}", r.what, r.status, r.text);
    if let (201, Some(kind)) = (r.status, created) {
        remember(known, kind, str_of(&r.body["id"]));
    }
}

/// Runs the client until `stop`, syncing on every nudge and at least every 200 ms.
async fn run_client(api: Api, mut ws: Socket, stop: Arc<AtomicBool>) -> (Replica, usize) {
    let mut replica = Replica::default();
    let mut nudges = 0;
    replica.sync(&api).await;
    while !stop.load(Ordering::SeqCst) {
        if next_nudge(&mut ws, Duration::from_millis(200))
            .await
            .is_some()
        {
            nudges += 1;
        }
        replica.sync(&api).await;
    }
    (replica, nudges)
}

async fn converge(seed: u64) {
    let s = Server::start().await;
    converge_across(&[&s], seed).await;
}

/// The convergence run over `nodes` (one node, or several on one database): the writers
/// take turns among the nodes, the client follows on the last node, and its copy is checked
/// against a full read from the first. A node other than the writer's may be a moment
/// behind, so the client syncs until its copy matches, for at most two seconds.
pub(crate) async fn converge_across(nodes: &[&Server], seed: u64) {
    let (truth, follow) = (nodes[0], nodes[nodes.len() - 1]);
    let api = truth.api();
    let known: Shared = Arc::default();
    for p in 0..3 {
        let body = json!({ "name": format!("Start {p}"), "columns": ["To do", "Doing", "Done"] });
        let project = api.create_project(body).await;
        remember(&known, Kind::Project, str_of(&project["id"]));
        for column in project["columns"].as_array().unwrap() {
            let cid = str_of(&column["id"]);
            for i in 0..2 {
                let task = api.new_task(&cid, &format!("seed card {i}")).await;
                remember(&known, Kind::Card, str_of(&task["id"]));
            }
            remember(&known, Kind::Column, cid);
        }
    }

    let stop = Arc::new(AtomicBool::new(false));
    let follower = follow.api();
    let ws = open(follow, &follower).await;
    let client = tokio::spawn(run_client(follower.clone(), ws, stop.clone()));
    let mut writers = JoinSet::new();
    for w in 0..WRITERS {
        let r = api
            .post("/keys", json!({ "label": format!("writer {w}") }))
            .await;
        let node = nodes[w as usize % nodes.len()];
        let writer = node.api_for(&str_of(&r.expect_ok(201)["key"]));
        let known = known.clone();
        writers.spawn(async move {
            let mut rng = StdRng::seed_from_u64(seed * 100 + w);
            for _ in 0..WRITES_PER_WRITER {
                random_write(&writer, &known, &mut rng).await;
            }
        });
    }
    while let Some(done) = writers.join_next().await {
        done.expect("a writer failed");
    }
    stop.store(true, Ordering::SeqCst);
    let (mut replica, nudges) = client.await.expect("the client failed");
    let (projects, lists, cards) = full_read(&api).await;
    if nodes.len() > 1 {
        // The node the client follows catches up: a full read there comes to be the same.
        let (theirs_p, theirs_l, theirs_c) = within(Duration::from_secs(2), async || {
            let theirs = full_read(&follower).await;
            match (&theirs.0, &theirs.1, &theirs.2) == (&projects, &lists, &cards) {
                true => Ok(theirs),
                false => Err(theirs),
            }
        })
        .await
        .unwrap_or_else(|theirs| theirs);
        assert_converged("projects on the follower node", &theirs_p, &projects);
        assert_converged("lists on the follower node", &theirs_l, &lists);
        assert_converged("cards on the follower node", &theirs_c, &cards);
    }
    // A reply's `now` may trail the clock (a node's horizon, on PostgreSQL), leaving a write
    // stamped after it to the next poll: the client polls until its copy matches, and the
    // assertions below say what differs if it never does.
    let _ = within(Duration::from_secs(2), async || {
        replica.sync(&follower).await;
        match (&replica.projects, &replica.lists, &replica.cards) == (&projects, &lists, &cards) {
            true => Ok(()),
            false => Err(()),
        }
    })
    .await;
    let converged =
        (&replica.projects, &replica.lists, &replica.cards) == (&projects, &lists, &cards);
    if !converged || !replica.orphans.is_empty() {
        eprintln!("the client's polls (since, now, unchanged):");
        for (i, poll) in replica.history.iter().enumerate() {
            eprintln!("  {}: {poll:?}", i + 1);
        }
    }
    assert!(
        replica.orphans.is_empty(),
        "the client's copy broke apart:\n{}",
        replica.orphans.join("\n")
    );
    assert_converged("projects", &replica.projects, &projects);
    assert_converged("lists", &replica.lists, &lists);
    assert_converged("cards", &replica.cards, &cards);
    assert!(
        nudges > 0,
        "the socket never nudged during {} polls",
        replica.polls
    );
    // Random deletes can leave few cards at the end (a column delete takes many), so the
    // run's weight is measured by what the feed carried, not by what is left.
    assert!(
        replica.cards_received > 50,
        "the feed carried only {} card records; the test proves little",
        replica.cards_received
    );
    // An idle client holding the right count is told so.
    let since = replica.since.unwrap();
    let idle = changes(
        &follower,
        &format!("?manifest=changed&since={since}&holding={}", cards.len()),
    )
    .await;
    assert_eq!(idle["unchanged"], json!(true), "{idle}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_sync_client_converges_seed_1() {
    converge(1).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_sync_client_converges_seed_2() {
    converge(2).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_sync_client_converges_seed_3() {
    converge(3).await;
}

/// One poll: the `since` it sent and the reply.
struct Poll {
    since: Option<i64>,
    reply: Value,
}

#[tokio::test]
async fn a_poller_feeding_now_back_as_since_misses_no_acknowledged_write() {
    let s = Server::start().await;
    let api = s.api();
    let (_, cid) = api.board().await;
    let r = api.post("/keys", json!({ "label": "w" })).await;
    let writer_key = str_of(&r.expect_ok(201)["key"]);
    let mut writers = JoinSet::new();
    for w in 0..4 {
        let (api, cid) = (s.api_for(&writer_key), cid.clone());
        writers.spawn(async move {
            // (card, stamp) of every acknowledged write.
            let mut acks: Vec<(String, i64)> = Vec::new();
            for i in 0..12 {
                let task = api.new_task(&cid, &format!("w{w} {i}")).await;
                let id = str_of(&task["id"]);
                acks.push((id.clone(), task["updatedAt"].as_i64().unwrap()));
                for j in 0..2 {
                    let body = json!({ "title": format!("{j}") });
                    let r = api.patch(&format!("/tasks/{id}"), body).await;
                    let task = &r.expect_ok(200)["task"];
                    acks.push((id.clone(), task["updatedAt"].as_i64().unwrap()));
                }
            }
            acks
        });
    }
    let mut polls: Vec<Poll> = Vec::new();
    let mut since: Option<i64> = None;
    let mut held = 0;
    let mut acks = Vec::new();
    loop {
        let finished = writers.is_empty();
        let query = match since {
            Some(since) => format!("?since={since}&holding={held}"),
            None => String::new(),
        };
        let reply = changes(&api, &query).await;
        let now = now_of(&reply);
        if let Some(prev) = since {
            assert!(now >= prev, "now went back from {prev} to {now}");
        }
        if reply["taskIds"].is_array() {
            held = reply["taskIds"].as_array().unwrap().len();
        }
        polls.push(Poll { since, reply });
        since = Some(now);
        if finished {
            break;
        }
        // A poller's cadence, not a wait for anything: polls spaced in time are what is
        // tested, each window [since, now) falling among writes still landing.
        tokio::time::sleep(Duration::from_millis(5)).await;
        while let Some(done) = writers.try_join_next() {
            acks.extend(done.expect("writer"));
        }
    }
    assert_eq!(acks.len(), 4 * 12 * 3);
    // Each write falls in exactly one poll's [since, now); that reply must show it.
    for (id, stamp) in &acks {
        let poll = polls
            .iter()
            .find(|p| p.since.is_none_or(|s| s <= *stamp) && *stamp < now_of(&p.reply))
            .unwrap_or_else(|| panic!("no poll covers stamp {stamp}"));
        let card = find(&poll.reply, "cards", id);
        let seen = card.is_some_and(|c| c["updatedAt"].as_i64().unwrap() >= *stamp);
        let from = poll.since;
        assert!(
            seen,
            "{id} at {stamp} missed since {from:?}: {}",
            poll.reply
        );
    }
    assert!(polls.len() > 2, "the poller ran {} times", polls.len());
}
