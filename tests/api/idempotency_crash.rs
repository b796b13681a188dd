//! Idempotency keys through kill -9 (issue 35, "Crash"): four clients replay queues of mixed
//! writes, each with its own `Idempotency-Key` (creates with and without client ids,
//! comments, tags, checklist items, PATCH toggles of `completedAt`, moves between lists,
//! descriptions). The server is killed with SIGKILL while they send, three times, and
//! restarted on the same data; each client resends from the last few writes it had an
//! answer for (each must replay) through the one it was unsure of, and goes on. In the end
//! every write is applied exactly once: no card, comment, tag or checklist item twice, and
//! every field as the last write meant. On either engine.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};
use tokio::task::JoinSet;

use crate::harness::*;
use crate::idempotency::{Keyed, replayed};

const LANES: usize = 4;
const OPS_PER_LANE: usize = 100;
const CARDS_PER_LANE: usize = 3;
const KILLS: usize = 3;
/// Writes each client resends from before the one it was unsure of: each was answered
/// before the kill, so each must replay.
const RESEND: usize = 3;
const FLAGS: &[&str] = &[
    "--limit-writes-per-day",
    "10000000",
    "--limit-reads-per-day",
    "10000000",
    "--limit-tags-per-task",
    "100",
];
/// A fixed completion stamp, so the expected value is known.
const DONE_AT: i64 = 1_767_225_600_000;

/// One write of a client's queue.
#[derive(Clone, Debug)]
struct Op {
    key: String,
    method: Method,
    path: String,
    body: Value,
}

/// What the queues mean for one card in the end.
#[derive(Default, Clone, Debug, PartialEq)]
struct Card {
    comments: Vec<String>,
    tags: Vec<String>,
    checklist: Vec<String>,
    completed_at: Value,
    column: String,
    description: String,
}

/// The queue of lane `lane` and what it means: the titles it creates, and each card's end.
fn queue(lane: usize, columns: &[String; 2]) -> (Vec<Op>, Vec<String>, Vec<(String, Card)>) {
    let cards: Vec<String> = (0..CARDS_PER_LANE)
        .map(|c| format!("t_l{lane}c{c}"))
        .collect();
    let mut ends: Vec<Card> = (0..CARDS_PER_LANE)
        .map(|_| Card {
            completed_at: Value::Null,
            column: columns[0].clone(),
            ..Card::default()
        })
        .collect();
    let mut ops = Vec::new();
    let mut titles = Vec::new();
    for i in 0..OPS_PER_LANE {
        let at = (i / 8) % CARDS_PER_LANE;
        let card = &cards[at];
        let end = &mut ends[at];
        let tag = format!("l{lane}-{i}");
        let (method, path, body) = match i % 8 {
            0 => {
                titles.push(format!("with-id-{tag}"));
                let id = format!("t_new{lane}x{i}");
                let body =
                    json!({"id": id, "columnId": columns[0], "title": format!("with-id-{tag}")});
                (Method::POST, "/tasks".to_owned(), body)
            }
            1 => {
                titles.push(format!("no-id-{tag}"));
                let body = json!({"columnId": columns[1], "title": format!("no-id-{tag}")});
                (Method::POST, "/tasks".to_owned(), body)
            }
            2 => {
                end.comments.push(format!("comment {tag}"));
                let body = json!({"text": format!("comment {tag}")});
                (Method::POST, format!("/tasks/{card}/comments"), body)
            }
            3 => {
                end.tags.push(format!("tag{tag}"));
                let body = json!({"text": format!("tag{tag}")});
                (Method::POST, format!("/tasks/{card}/tags"), body)
            }
            4 => {
                end.checklist.push(format!("item {tag}"));
                let body = json!({"text": format!("item {tag}")});
                (Method::POST, format!("/tasks/{card}/checklist"), body)
            }
            5 => {
                // A toggle: a replay landing twice would be undone by the next one.
                end.completed_at = match end.completed_at {
                    Value::Null => json!(DONE_AT),
                    _ => Value::Null,
                };
                let body = json!({"completedAt": end.completed_at});
                (Method::PATCH, format!("/tasks/{card}"), body)
            }
            6 => {
                end.column = match end.column == columns[0] {
                    true => columns[1].clone(),
                    false => columns[0].clone(),
                };
                (
                    Method::PATCH,
                    format!("/tasks/{card}"),
                    json!({"columnId": end.column}),
                )
            }
            _ => {
                end.description = format!("description {tag}");
                let body = json!({"description": end.description});
                (Method::PATCH, format!("/tasks/{card}"), body)
            }
        };
        ops.push(Op {
            key: format!("crash-{tag}"),
            method,
            path,
            body,
        });
    }
    (ops, titles, cards.into_iter().zip(ends).collect())
}

/// Sends `ops` from `from` on until the server stops answering; answers where the client
/// stands: the first write it has no answer for. Each write with an answer must have
/// landed (2xx); those before `answered` (answered before an earlier kill) must replay.
async fn drive(
    client: Keyed,
    ops: Arc<Vec<Op>>,
    from: usize,
    answered: usize,
    acked: Arc<AtomicUsize>,
) -> usize {
    for (i, op) in ops.iter().enumerate().skip(from) {
        let body = op.body.to_string();
        let sent = client
            .try_send(
                op.method.clone(),
                &op.path,
                Some(&body),
                Some(op.key.as_bytes()),
            )
            .await;
        let Ok(reply) = sent else {
            return i;
        };
        assert!(
            (200..300).contains(&reply.status),
            "{} {}: {}",
            op.method,
            op.path,
            reply.text
        );
        if i < answered {
            assert!(
                replayed(&reply),
                "an answered write replays: {}",
                reply.what
            );
        }
        acked.fetch_add(1, Ordering::Relaxed);
    }
    ops.len()
}

#[tokio::test]
async fn every_write_of_queues_replayed_through_kill_9_lands_exactly_once() {
    let mut server = Server::start_with(FLAGS).await;
    let api = server.api();
    let project = api.new_project("crash").await;
    let columns = [
        api.new_column(&project, "A").await,
        api.new_column(&project, "B").await,
    ];
    let mut queues = Vec::new();
    let mut titles = Vec::new();
    let mut ends = Vec::new();
    for lane in 0..LANES {
        let (ops, made, cards) = queue(lane, &columns);
        for (id, _) in &cards {
            api.create_task(json!({"id": id, "columnId": columns[0], "title": id}))
                .await;
        }
        queues.push(Arc::new(ops));
        titles.extend(made);
        ends.extend(cards);
    }
    let mut at = [0usize; LANES];
    let mut answered = [0usize; LANES];
    for round in 0..=KILLS {
        let client = Keyed::of(&server, &server.key);
        let acked = Arc::new(AtomicUsize::new(0));
        let mut lanes = JoinSet::new();
        for lane in 0..LANES {
            let from = at[lane].saturating_sub(RESEND);
            let (client, ops, acked) = (client.clone(), queues[lane].clone(), acked.clone());
            let before = answered[lane];
            lanes.spawn(async move { (lane, drive(client, ops, from, before, acked).await) });
        }
        if round < KILLS {
            // Mid-stream: once a fair share of this round's writes have been answered.
            let goal = (LANES * OPS_PER_LANE / (KILLS + 2)).max(1);
            until("writes under way", Duration::from_secs(60), async || {
                let n = acked.load(Ordering::Relaxed);
                if n >= goal { Ok(()) } else { Err(n) }
            })
            .await;
            server.kill().await;
        }
        while let Some(done) = lanes.join_next().await {
            let (lane, stood) = done.expect("a lane");
            at[lane] = stood;
            answered[lane] = answered[lane].max(stood);
            eprintln!("round {round} lane {lane} stood at {stood}");
        }
        if round < KILLS {
            server.restart().await;
        }
    }
    assert!(
        at.iter().all(|&a| a == OPS_PER_LANE),
        "every queue sent: {at:?}"
    );
    // Read back: every card once, and each as its queue meant.
    let api = server.api();
    let doc = api.get("/projects?completed=all").await.expect(200).clone();
    let tasks: Vec<Value> = doc["projects"][0]["columns"]
        .as_array()
        .expect("columns")
        .iter()
        .flat_map(|c| c["tasks"].as_array().cloned().unwrap_or_default())
        .collect();
    let mut seen: Vec<String> = tasks.iter().map(|t| str_of(&t["title"])).collect();
    seen.sort();
    let mut expected: Vec<String> = titles.clone();
    expected.extend(ends.iter().map(|(id, _)| id.clone()));
    expected.sort();
    assert_eq!(seen, expected, "every card exactly once");
    for (id, end) in &ends {
        let card = tasks
            .iter()
            .find(|t| t["id"] == json!(id))
            .unwrap_or_else(|| panic!("{id}"));
        let texts = |list: &Value, key: &str| -> Vec<String> {
            list.as_array()
                .expect("a list")
                .iter()
                .map(|v| str_of(if key.is_empty() { v } else { &v[key] }))
                .collect()
        };
        let got = Card {
            comments: texts(&card["comments"], "text"),
            tags: texts(&card["tags"], ""),
            checklist: texts(&card["checklist"], "text"),
            completed_at: card["completedAt"].clone(),
            column: str_of(&card["columnId"]),
            description: card["description"].as_str().unwrap_or_default().to_owned(),
        };
        let mut want = end.clone();
        let mut got = got;
        want.comments.sort();
        got.comments.sort();
        want.tags.sort();
        got.tags.sort();
        assert_eq!(got, want, "{id}");
    }
    assert_eq!(crate::stored::integrity(&server.data_dir()), "ok");
}
