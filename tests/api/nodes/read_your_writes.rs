//! Read-your-writes across nodes (contract: Consistency): once a write is acknowledged on
//! one node, every read and every changes reply after it shows it, on every node of the
//! shared store. Each test writes through node B and reads through node A right after B's
//! reply, many times in a row, with no waiting in between: the reads must not depend on A
//! having heard B's announcement yet. A key revoked on B is likewise refused on A at once.
//!
//! These tests need a PostgreSQL server (`WORKBOARD_TEST_DATABASE`), as the rest of `nodes`.

use serde_json::{Value, json};

use super::two_nodes;
use crate::changes::{changes, find, now_of};
use crate::harness::*;

/// How many writes each test makes and reads back at once.
const ROUNDS: usize = 100;
/// How many keys are issued, learned and revoked (each round is three writes and reads).
const KEY_ROUNDS: usize = 40;

/// A write made through B and what A must then read: `marker` somewhere in each read when
/// `present`, nowhere when not (a deletion).
struct Wrote {
    what: String,
    task: String,
    marker: String,
    present: bool,
}

/// The reads A answers right after a write: the whole account, the project, the changes
/// since before the write, and the card itself; all sent at once. Answers what each read
/// missed.
async fn misses(on_a: &Api, project: &str, since: i64, w: &Wrote) -> Vec<String> {
    let task_path = format!("/tasks/{}", w.task);
    let project_path = format!("/projects/{project}?completed=all");
    let changes_path = format!("/changes?since={since}&completed=all");
    let (whole, one, changed, task) = tokio::join!(
        on_a.get("/projects?completed=all"),
        on_a.get(&project_path),
        on_a.get(&changes_path),
        on_a.get(&task_path),
    );
    let mut missed = Vec::new();
    // A deleted card stays in the changes, marked (contract: Recycle bin), so the changes
    // are asked for the title only of a card that is there.
    let mut reads = vec![("the whole account", &whole), ("the project", &one)];
    if w.present {
        reads.push(("the changes since before it", &changed));
    }
    for (read, reply) in reads {
        let shows = reply.expect(200).to_string().contains(&w.marker);
        if shows != w.present {
            missed.push(format!("{}: {read} did not show it", w.what));
        }
    }
    if w.present {
        if task.status != 200 || task.body["task"]["title"] != json!(w.marker) {
            missed.push(format!(
                "{}: the card read {} {}",
                w.what, task.status, task.text
            ));
        }
        if find(changed.expect(200), "cards", &w.task).is_none() {
            missed.push(format!("{}: the changes since carry no card", w.what));
        }
    } else {
        let changed = changed.expect(200);
        if find(changed, "cards", &w.task).is_none_or(|card| card["cancelledAt"].is_null()) {
            missed.push(format!(
                "{}: the changes since carry no deleted card",
                w.what
            ));
        }
        if changed["taskIds"]
            .as_array()
            .is_none_or(|ids| ids.contains(&json!(w.task)))
        {
            missed.push(format!("{}: the changes' manifest still lists it", w.what));
        }
    }
    if !w.present && task.status != 404 {
        missed.push(format!(
            "{}: the deleted card read {} {}",
            w.what, task.status, task.text
        ));
    }
    missed
}

#[tokio::test]
async fn every_read_on_one_node_shows_a_write_just_acknowledged_on_the_other() {
    let (a, b) = two_nodes(&[]).await;
    let (on_a, on_b) = (a.api(), b.api());
    let (project, column) = on_b.board().await;
    let mut card = str_of(&on_b.new_task(&column, "first").await["id"]);
    let mut missed = Vec::new();
    for n in 0..ROUNDS {
        let since = now_of(&changes(&on_a, "").await);
        // Delimited, so no title holds another.
        let marker = format!("title {n}!");
        // A PATCH of a field, a create and a delete in turn, each acknowledged by B.
        let wrote = match n % 3 {
            0 => {
                on_b.patch(&format!("/tasks/{card}"), json!({ "title": marker }))
                    .await
                    .expect_ok(200);
                Wrote {
                    what: format!("round {n}, a PATCH"),
                    task: card.clone(),
                    marker,
                    present: true,
                }
            }
            1 => {
                card = str_of(&on_b.new_task(&column, &marker).await["id"]);
                Wrote {
                    what: format!("round {n}, a create"),
                    task: card.clone(),
                    marker,
                    present: true,
                }
            }
            _ => {
                let gone = card.clone();
                let title = on_b.task(&gone).await["title"].as_str().map(str::to_owned);
                on_b.delete(&format!("/tasks/{gone}")).await.expect_ok(200);
                card = str_of(&on_b.new_task(&column, "next").await["id"]);
                Wrote {
                    what: format!("round {n}, a delete"),
                    task: gone,
                    marker: title.expect("the card's title"),
                    present: false,
                }
            }
        };
        let round = misses(&on_a, &project, since, &wrote).await;
        if !round.is_empty() {
            missed.push(round.join("\n"));
        }
    }
    assert!(
        missed.is_empty(),
        "{} of {ROUNDS} writes on B were missed by reads on A sent after B's reply:\n{}",
        missed.len(),
        missed.join("\n")
    );
}

#[tokio::test]
async fn a_holding_poll_on_one_node_answers_at_once_with_a_write_acknowledged_on_the_other() {
    let (a, b) = two_nodes(&[]).await;
    let (on_a, on_b) = (a.api(), b.api());
    let (_, column) = on_b.board().await;
    let card = str_of(&on_b.new_task(&column, "held").await["id"]);
    // One open card: a client holding it polls with `holding=1`.
    let mut since = now_of(&changes(&on_a, "").await);
    let mut missed = Vec::new();
    for n in 0..ROUNDS {
        let title = format!("held {n}");
        on_b.patch(&format!("/tasks/{card}"), json!({ "title": title }))
            .await
            .expect_ok(200);
        let reply: Value = changes(&on_a, &format!("?since={since}&holding=1")).await;
        match find(&reply, "cards", &card) {
            Some(sent) if sent["title"] == json!(title) => {}
            _ => missed.push(format!("round {n}: {reply}")),
        }
        since = now_of(&reply);
    }
    assert!(
        missed.is_empty(),
        "{} of {ROUNDS} holding polls on A sent after B's reply missed its PATCH:\n{}",
        missed.len(),
        missed.join("\n")
    );
}

#[tokio::test]
async fn a_key_revoked_on_one_node_is_refused_at_once_on_the_other() {
    let (a, b) = two_nodes(&[]).await;
    let on_b = b.api();
    let mut missed = Vec::new();
    for n in 0..KEY_ROUNDS {
        let issued = on_b
            .post("/keys", json!({ "label": format!("round {n}") }))
            .await
            .expect_ok(201)
            .clone();
        let (id, key) = (str_of(&issued["id"]), str_of(&issued["key"]));
        // A learns the key (a key another node issued works at once).
        let with_key = a.api_for(&key);
        with_key.get("/projects").await.expect(200);
        on_b.delete(&format!("/keys/{id}")).await.expect_ok(200);
        let after = with_key.get("/projects").await;
        if after.status != 401 {
            missed.push(format!("round {n}: {} {}", after.status, after.text));
        }
    }
    assert!(
        missed.is_empty(),
        "{} of {KEY_ROUNDS} keys revoked on B still read on A right after B's reply:\n{}",
        missed.len(),
        missed.join("\n")
    );
}
