//! One account can never hurt another at the writer (issue 32, "A fair writer", "Health
//! tells the truth"): an account flooding the writer's queue is refused (503 `overloaded`)
//! past its share while another account's writes, sent in the same moment, land; and a
//! writer that has stopped is said so, by health, by every write and by the metrics, with the
//! cause in the log.

use std::time::Duration;

use serde_json::json;
use tokio::task::JoinSet;

use crate::harness::*;

/// Each account's share of the writer's queue in the flood test; the queue holds many more.
const SHARE: usize = 4;

#[tokio::test]
async fn an_account_flooding_the_writer_is_refused_while_another_accounts_writes_land() {
    let share = SHARE.to_string();
    let s = Server::start_with(&[
        "--limit-writer-queue",
        "64",
        "--limit-writer-queue-per-account",
        &share,
        "--limit-writes-per-day",
        "100000",
        "--limit-reads-per-day",
        "100000",
    ])
    .await;
    let a = s.api();
    let (key_b, _) = s.issue_key(None).await;
    let b = s.api_for(&key_b);
    let (_, cid_a) = a.board().await;
    let (_, cid_b) = b.board().await;
    let (mut a_landed, mut a_refused, mut b_landed) = (Vec::new(), 0, Vec::new());
    for round in 0..10 {
        // A sends many more writes at once than its share; B, in the same moment, fewer.
        let mut flood = creates(&a, &cid_a, &format!("t_a{round}x"), 96, "Flood");
        let mut victim = creates(&b, &cid_b, &format!("t_b{round}x"), SHARE - 1, "Victim");
        while let Some(done) = victim.join_next().await {
            let (id, r) = done.expect("a request");
            r.expect_ok(201);
            b_landed.push(id);
        }
        while let Some(done) = flood.join_next().await {
            let (id, r) = done.expect("a request");
            match r.status {
                201 => a_landed.push(id),
                503 => {
                    r.expect_code(503, "overloaded");
                    assert!(
                        r.header("retry-after")
                            .is_some_and(|v| v.parse::<u64>().is_ok()),
                        "a 503 says when to retry"
                    );
                    a_refused += 1;
                }
                other => panic!("{id}: {other} {}", r.text),
            }
        }
        if a_refused > 0 && round >= 1 {
            break;
        }
    }
    assert!(
        a_refused > 0,
        "96 writes at once from one account never passed its share of {SHARE}"
    );
    // Nothing acknowledged is lost, on either side.
    let held_a = task_ids(&a.project(&str_of(&a.projects("").await[0]["id"])).await);
    for id in &a_landed {
        assert!(
            held_a.contains(id),
            "{id} was acknowledged, yet is not held"
        );
    }
    let held_b = task_ids(&b.project(&str_of(&b.projects("").await[0]["id"])).await);
    for id in &b_landed {
        assert!(
            held_b.contains(id),
            "{id} was acknowledged, yet is not held"
        );
    }
}

/// `n` card creates sent at once by `api` into column `cid`, with ids `{prefix}0` onwards;
/// each finishes with its id and reply.
fn creates(api: &Api, cid: &str, prefix: &str, n: usize, title: &str) -> JoinSet<(String, Reply)> {
    let mut set = JoinSet::new();
    for i in 0..n {
        let (api, id) = (api.clone(), format!("{prefix}{i}"));
        let body = json!({"id": id, "columnId": cid, "title": title});
        set.spawn(async move {
            let r = api.post("/tasks", body).await;
            (id, r)
        });
    }
    set
}

#[tokio::test]
async fn the_share_per_account_is_a_limit_the_discovery_document_reports() {
    let s = Server::start_with(&["--limit-writer-queue-per-account", "7"]).await;
    let doc = s.api().raw().get("/api/v1").await.expect(200).clone();
    let limits = &doc["limits"];
    assert_eq!(limits["writer-queue-per-account"], json!(7), "{limits}");
}

/// The card title that makes a debug build's writer panic after its commit.
const FAULT_TITLE: &str = "Break the writer";

async fn scrape(s: &Server) -> String {
    let addr = s.metrics_addr.as_deref().expect("a metrics listener");
    reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("a client")
        .get(format!("http://{addr}/metrics"))
        .send()
        .await
        .expect("a scrape")
        .text()
        .await
        .expect("its text")
}

#[tokio::test]
async fn a_writer_that_stops_is_answered_503_by_health_and_every_write_and_shown_by_metrics() {
    // The fault that stops the writer is injected through a variable that only a debug build
    // reads (`processor/stopped.rs`); a release build of the tests has no way to stop it.
    if !cfg!(debug_assertions) {
        return;
    }
    let s = Server::start_with_env(&[
        ("WORKBOARD_TEST_WRITER_PANIC_ON", FAULT_TITLE),
        ("WORKBOARD_METRICS_ADDR", "127.0.0.1:0"),
    ])
    .await;
    let api = s.api();
    let health = s.anon().raw();
    let (pid, cid) = api.board().await;
    assert_eq!(
        health.get("/api/health").await.expect(200)["mode"],
        json!("normal")
    );
    assert!(scrape(&s).await.contains("workboard_writer_up 1"));

    // The write commits, then what follows its commit panics: the writer stops, and the
    // sender hears so rather than waiting.
    api.post("/tasks", json!({"columnId": cid, "title": FAULT_TITLE}))
        .await
        .expect_code(503, "writer_stopped");
    let r = health.get("/api/health").await;
    let body = r.expect_code(503, "writer_stopped");
    assert_eq!(body["mode"], json!("stopped"), "{}", r.text);
    for r in [
        api.post("/tasks", json!({"columnId": cid, "title": "After"}))
            .await,
        api.post("/projects", json!({"name": "After"})).await,
        api.patch(&format!("/projects/{pid}"), json!({"name": "Renamed"}))
            .await,
    ] {
        r.expect_code(503, "writer_stopped");
    }
    assert!(
        scrape(&s).await.contains("workboard_writer_up 0"),
        "the metric shows the stopped writer"
    );
    // Reads go on.
    api.get("/projects").await.expect(200);
    // The log says why.
    s.log_shows(
        &["the writer has stopped", "test fault injection"],
        Duration::from_secs(5),
    )
    .await;

    // A restart brings the writer back; the write in flight when it stopped had committed.
    let mut s = s;
    s.restart().await;
    let health = s.anon().raw();
    assert_eq!(
        health.get("/api/health").await.expect(200)["mode"],
        json!("normal")
    );
    let api = s.api();
    let titles: Vec<String> = tasks_of(&api.project(&pid).await)
        .iter()
        .map(|t| str_of(&t["title"]))
        .collect();
    assert_eq!(titles, [FAULT_TITLE]);
    api.post("/projects", json!({"name": "After restart"}))
        .await
        .expect_ok(201);
}
