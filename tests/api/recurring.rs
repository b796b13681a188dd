//! Recurring cards (issue 36): a card's `repeat` is checked like every field; completing a
//! repeating card leaves it as history and makes its next occurrence in the same step (right
//! after it, open, the next deadline), named by the PATCH reply as `next`, carried by
//! `/changes` and the socket, taken back whole by one undo, and refused whole (413) when it
//! would not fit; a batch, an export and an import carry `repeat` as it is.

use reqwest::Method;
use serde_json::{Value, json};

use crate::changes::{changes, now_of, sent};
use crate::harness::*;
use crate::live::{NUDGE_WAIT, next_nudge, open};

/// Milliseconds of a UTC moment written `2026-11-27T10:00:00Z`.
fn ms(at: &str) -> i64 {
    at.parse::<jiff::Timestamp>().unwrap().as_millisecond()
}

fn weekly() -> Value {
    json!({ "every": 1, "unit": "week", "from": "deadline" })
}

async fn patch(api: &Api, tid: &str, body: Value) -> Reply {
    api.patch(&format!("/tasks/{tid}"), body).await
}

/// Completes `tid` at `at`; returns the reply's body (200 asserted).
async fn complete(api: &Api, tid: &str, at: &str) -> Value {
    patch(api, tid, json!({ "completedAt": ms(at) }))
        .await
        .expect_ok(200)
        .clone()
}

/// The ids of a column's cards in the order reads show them (finished ones included).
async fn column_order(api: &Api, pid: &str, cid: &str) -> Vec<String> {
    let project = api.project_q(pid, "all").await;
    let column = project["columns"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == json!(cid))
        .expect("the column")
        .clone();
    column["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| str_of(&t["id"]))
        .collect()
}

#[tokio::test]
async fn repeat_is_checked_like_every_field_and_anything_else_names_it() {
    let s = Server::start().await;
    let api = s.api();
    let (_, cid) = api.board().await;
    let monthly = json!({ "every": 2, "unit": "month", "from": "completion" });
    // Bare, guarded, beside snake_case fields; read back as sent.
    let card = api
        .create_task(json!({ "columnId": cid, "title": "Rent", "repeat": monthly }))
        .await;
    assert_eq!(card["repeat"], monthly);
    let tid = str_of(&card["id"]);
    let plain = api.new_task(&cid, "Plain").await;
    assert_eq!(plain["repeat"], Value::Null, "the default is null");
    let guarded = json!({ "before": monthly, "after": weekly() });
    let r = patch(
        &api,
        &tid,
        json!({ "repeat": guarded, "deadline": "2026-12-01",
        "deadline_time": "09:30" }),
    )
    .await;
    assert_eq!(r.expect_ok(200)["task"]["repeat"], weekly());
    assert_eq!(api.task(&tid).await["repeat"], weekly());
    // A guard that no longer holds is 409 with the value now.
    let stale = json!({ "before": monthly, "after": null });
    let body = patch(&api, &tid, json!({ "repeat": stale }))
        .await
        .expect_field_error(409, "repeat")
        .clone();
    assert_eq!(body["current"], weekly());

    let bad = [
        json!({ "every": 0, "unit": "day", "from": "deadline" }),
        json!({ "every": 366, "unit": "day", "from": "deadline" }),
        json!({ "every": -1, "unit": "day", "from": "deadline" }),
        json!({ "every": 1.5, "unit": "day", "from": "deadline" }),
        json!({ "every": "1", "unit": "day", "from": "deadline" }),
        json!({ "every": 1, "unit": "fortnight", "from": "deadline" }),
        json!({ "every": 1, "unit": "Day", "from": "deadline" }),
        json!({ "every": 1, "unit": "day", "from": "start" }),
        json!({ "every": 1, "unit": "day" }),
        json!({ "every": 1, "unit": "day", "from": "deadline", "until": "2027-01-01" }),
        json!({}),
        json!("weekly"),
        json!(7),
        json!([1, "day", "deadline"]),
        json!(true),
    ];
    let before = api.account().await;
    for value in bad {
        let create = json!({ "columnId": cid, "title": "X", "deadline": "2026-12-01",
            "repeat": value });
        api.post("/tasks", create)
            .await
            .expect_field_error(422, "repeat");
        patch(&api, &tid, json!({ "repeat": value }))
            .await
            .expect_field_error(422, "repeat");
        let guarded = json!({ "repeat": { "before": weekly(), "after": value } });
        patch(&api, &tid, guarded)
            .await
            .expect_field_error(422, "repeat");
    }
    // From the deadline needs a deadline: on create, on update, and clearing it.
    let undated = json!({ "columnId": cid, "title": "X", "repeat": weekly() });
    api.post("/tasks", undated)
        .await
        .expect_field_error(422, "repeat");
    let batch = json!({ "tasks": [{ "columnId": cid, "title": "X", "repeat": weekly() }] });
    api.post("/tasks", batch)
        .await
        .expect_field_error(422, "repeat");
    patch(&api, &str_of(&plain["id"]), json!({ "repeat": weekly() }))
        .await
        .expect_field_error(422, "repeat");
    patch(&api, &tid, json!({ "deadline": null }))
        .await
        .expect_field_error(422, "deadline");
    patch(&api, &tid, json!({ "deadline": null, "repeat": weekly() }))
        .await
        .expect_field_error(422, "repeat");
    assert_eq!(
        api.account().await,
        before,
        "a refused write wrote something"
    );

    // Clearing both together, or counting from completion, leaves no deadline needed.
    let r = patch(&api, &tid, json!({ "deadline": null, "repeat": null })).await;
    assert_eq!(r.expect_ok(200)["task"]["repeat"], Value::Null);
    let r = patch(&api, &tid, json!({ "repeat": monthly })).await;
    assert_eq!(r.expect_ok(200)["task"]["repeat"], monthly);
}

#[tokio::test]
async fn completing_a_repeating_card_makes_the_next_one_right_after_it_in_one_step() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, cid) = api.board().await;
    let above = api
        .create_task(json!({ "columnId": cid, "title": "Above", "position": 1 }))
        .await;
    let below = api
        .create_task(json!({ "columnId": cid, "title": "Below", "position": 2 }))
        .await;
    let card = api
        .create_task(json!({
            "columnId": cid, "title": "Bins out", "position": 1.5,
            "description": "Both **bins**", "priority": 2, "effort": "hard",
            "location": "Kerb", "tags": ["home", "weekly"],
            "deadline": "2026-11-27", "deadlineTime": "07:15", "repeat": weekly(),
            "checklist": [{ "text": "Green bin", "done": true }, { "text": "Black bin" }],
            "comments": [{ "text": "Neighbours too" }],
        }))
        .await;
    let tid = str_of(&card["id"]);
    let mut ws = open(&s, &api).await;
    let n = now_of(&changes(&api, "").await);

    let reply = complete(&api, &tid, "2026-11-27T08:00:00Z").await;
    assert_keys(&reply, &["ok", "next", "task"]);
    // The finished card stays as it was, finished.
    let finished = &reply["task"];
    assert_eq!(finished["id"], json!(tid));
    assert_eq!(finished["completedAt"], json!(ms("2026-11-27T08:00:00Z")));
    for field in [
        "title",
        "deadline",
        "checklist",
        "comments",
        "tags",
        "position",
    ] {
        assert_eq!(finished[field], card[field], "{field} of the finished card");
    }
    assert_eq!(api.task(&tid).await, *finished);

    // The next one: a new card with the same fields, the next deadline, open.
    let next = reply["next"].clone();
    let next_id = str_of(&next["id"]);
    assert_ne!(next_id, tid);
    assert_eq!(
        api.task(&next_id).await,
        next,
        "the reply is the card as read"
    );
    for field in [
        "columnId",
        "projectId",
        "title",
        "description",
        "priority",
        "effort",
        "location",
        "tags",
        "deadlineTime",
        "repeat",
        "parentId",
    ] {
        assert_eq!(next[field], card[field], "{field} of the next card");
    }
    assert_eq!(next["deadline"], json!("2026-12-04"));
    assert_eq!(next["completedAt"], Value::Null);
    assert_eq!(
        next["comments"],
        json!([]),
        "comments stay with the finished card"
    );
    let items = next["checklist"].as_array().unwrap();
    let texts: Vec<&Value> = items.iter().map(|i| &i["text"]).collect();
    assert_eq!(texts, [&json!("Green bin"), &json!("Black bin")]);
    assert!(items.iter().all(|i| i["done"] == json!(false)), "{next}");
    assert_ne!(
        items[0]["id"], card["checklist"][0]["id"],
        "items of its own"
    );
    assert_ne!(next["tagIds"], card["tagIds"], "tags of its own");
    let order = column_order(&api, &pid, &cid).await;
    let ids = [&above["id"], &card["id"], &json!(next_id), &below["id"]].map(str_of);
    assert_eq!(
        order, ids,
        "the next card sits right after the finished one"
    );

    // The socket nudges, and the change feed carries both cards like any write.
    next_nudge(&mut ws, NUDGE_WAIT)
        .await
        .expect("no nudge for the completion");
    let feed = changes(&api, &format!("?since={n}&completed=all")).await;
    assert_eq!(
        sent(&feed, "cards", &next_id)["deadline"],
        json!("2026-12-04")
    );
    assert!(sent(&feed, "cards", &tid)["completedAt"].is_i64());

    // A card that does not repeat, or completing a finished card again, makes none.
    let plain = str_of(&api.new_task(&cid, "Once").await["id"]);
    let r = complete(&api, &plain, "2026-11-27T09:00:00Z").await;
    assert_keys(&r, &["ok", "task"]);
    let r = complete(&api, &tid, "2026-11-27T09:30:00Z").await;
    assert_keys(&r, &["ok", "task"]);
}

#[tokio::test]
async fn the_next_deadline_counts_from_the_rhythm_or_from_completion() {
    let s = Server::start().await;
    let api = s.api();
    let (_, cid) = api.board().await;
    let card = |deadline: &str, repeat: Value| json!({ "columnId": cid, "title": "R", "deadline": deadline, "repeat": repeat });
    // (deadline, rule, finished at, next deadline)
    let cases = [
        // Finished three weeks late: the first Friday of the rhythm after that day.
        ("2026-11-06", weekly(), "2026-11-27T10:00:00Z", "2026-12-04"),
        // Finished early: one step after the deadline.
        ("2026-11-27", weekly(), "2026-11-20T10:00:00Z", "2026-12-04"),
        // From completion: ten days after the day it was finished.
        (
            "2026-11-06",
            json!({ "every": 10, "unit": "day", "from": "completion" }),
            "2026-11-27T23:59:00Z",
            "2026-12-07",
        ),
        // 29 February yearly: the last day of February in other years.
        (
            "2028-02-29",
            json!({ "every": 1, "unit": "year", "from": "deadline" }),
            "2028-02-29T12:00:00Z",
            "2029-02-28",
        ),
    ];
    for (deadline, rule, at, want) in cases {
        let tid = str_of(&api.create_task(card(deadline, rule.clone())).await["id"]);
        let reply = complete(&api, &tid, at).await;
        assert_eq!(
            reply["next"]["deadline"],
            json!(want),
            "{deadline} {rule} {at}"
        );
    }

    // Month ends: 31 January, then the last day of February, then 31 March again.
    let monthly = json!({ "every": 1, "unit": "month", "from": "deadline" });
    let mut tid = str_of(&api.create_task(card("2027-01-31", monthly)).await["id"]);
    let mut seen = Vec::new();
    for at in [
        "2027-01-31T10:00:00Z",
        "2027-02-28T10:00:00Z",
        "2027-03-31T10:00:00Z",
    ] {
        let next = complete(&api, &tid, at).await["next"].clone();
        seen.push(str_of(&next["deadline"]));
        tid = str_of(&next["id"]);
    }
    assert_eq!(seen, ["2027-02-28", "2027-03-31", "2027-04-30"]);
}

#[tokio::test]
async fn one_undo_takes_back_the_completion_and_its_occurrence_and_reopening_keeps_it() {
    let s = Server::start().await;
    let api = s.api();
    let (_, cid) = api.board().await;
    let body = json!({ "columnId": cid, "title": "Water plants", "deadline": "2026-11-27",
        "repeat": { "every": 3, "unit": "day", "from": "deadline" } });
    let tid = str_of(&api.create_task(body).await["id"]);
    let before = api.account().await;
    let next = complete(&api, &tid, "2026-11-27T10:00:00Z").await["next"].clone();
    let next_id = str_of(&next["id"]);
    assert_eq!(next["deadline"], json!("2026-11-30"));

    let r = api.send(Method::POST, "/undo", None).await;
    let change = r.expect_ok(200)["change"].clone();
    assert_eq!(change["id"], json!(tid));
    assert_eq!(change["fields"], json!(["completedAt"]));
    api.get(&format!("/tasks/{next_id}"))
        .await
        .expect_error(404);
    let mut after = api.account().await;
    // Only the revision and stamps moved: the card is open again and the occurrence gone.
    strip(&mut after);
    let mut want = before.clone();
    strip(&mut want);
    assert_eq!(after, want);

    // Reopening later is an edit of the finished card: the occurrence stays.
    let next_id = str_of(&complete(&api, &tid, "2026-11-27T11:00:00Z").await["next"]["id"]);
    let r = patch(&api, &tid, json!({ "completedAt": null })).await;
    assert_keys(r.expect_ok(200), &["ok", "task"]);
    assert_eq!(api.task(&next_id).await["deadline"], json!("2026-11-30"));
    assert_eq!(api.task(&tid).await["completedAt"], Value::Null);
}

/// Drops the fields every write moves, through a whole-account document.
fn strip(doc: &mut Value) {
    match doc {
        Value::Object(map) => {
            for volatile in ["rev", "updatedAt"] {
                map.remove(volatile);
            }
            map.values_mut().for_each(strip);
        }
        Value::Array(list) => list.iter_mut().for_each(strip),
        _ => {}
    }
}

#[tokio::test]
async fn subtasks_come_back_open_under_the_next_card() {
    let s = Server::start().await;
    let api = s.api();
    let (_, cid) = api.board().await;
    let body = json!({ "columnId": cid, "title": "Week review", "deadline": "2026-11-27",
        "repeat": weekly() });
    let tid = str_of(&api.create_task(body).await["id"]);
    let sub = |title: &str, position: i64, deadline: Value| {
        json!({ "columnId": cid, "title": title, "parentId": tid, "position": position,
            "deadline": deadline })
    };
    let inbox = str_of(&api.create_task(sub("Inbox", 10, json!("2026-11-26"))).await["id"]);
    let plan = str_of(&api.create_task(sub("Plan", 20, Value::Null)).await["id"]);
    complete(&api, &plan, "2026-11-25T10:00:00Z").await;

    let next = complete(&api, &tid, "2026-11-27T10:00:00Z").await["next"].clone();
    let next_id = str_of(&next["id"]);
    // The finished card keeps its subtasks, finished with it.
    for id in [&inbox, &plan] {
        let old = api.task(id).await;
        assert_eq!(old["parentId"], json!(tid));
        assert!(old["completedAt"].is_i64(), "{old}");
    }
    // The next one has copies of them, open, their deadlines moved as its own did.
    let project = api.project_q(&str_of(&next["projectId"]), "all").await;
    let copies: Vec<Value> = project["columns"][0]["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["parentId"] == json!(next_id))
        .cloned()
        .collect();
    let got: Vec<(Value, Value, Value)> = copies
        .iter()
        .map(|t| {
            (
                t["title"].clone(),
                t["deadline"].clone(),
                t["completedAt"].clone(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (json!("Inbox"), json!("2026-12-03"), Value::Null),
            (json!("Plan"), Value::Null, Value::Null),
        ]
    );
}

#[tokio::test]
async fn a_completion_whose_occurrence_would_not_fit_is_413_and_writes_nothing() {
    let s = Server::start_with(&["--limit-storage-bytes", "4000"]).await;
    let api = s.api();
    let (_, cid) = api.board().await;
    let body = json!({ "columnId": cid, "title": "Repeat me", "deadline": "2026-11-27",
        "repeat": weekly(), "checklist": [{ "text": "one" }, { "text": "two" }] });
    let tid = str_of(&api.create_task(body).await["id"]);
    let plain = str_of(&api.new_task(&cid, "Plain").await["id"]);
    let filler = str_of(&api.new_task(&cid, "Filler").await["id"]);
    // Room for a completion, not for a card.
    crate::storage::fill_to(&api, &filler, 3950).await;
    let before = api.account().await;
    let r = patch(
        &api,
        &tid,
        json!({ "completedAt": ms("2026-11-27T10:00:00Z") }),
    )
    .await;
    let body = r.expect_error(413);
    assert_eq!(body["limit"], json!("storage-bytes"), "{}", r.text);
    assert_eq!(
        api.account().await,
        before,
        "a refused completion wrote something"
    );
    // The same completion without the occurrence fits.
    complete(&api, &plain, "2026-11-27T10:00:00Z").await;
    let r = patch(
        &api,
        &tid,
        json!({ "repeat": null, "completedAt": ms("2026-11-27T10:00:00Z") }),
    )
    .await;
    assert_keys(r.expect_ok(200), &["ok", "task"]);
}

#[tokio::test]
async fn a_batch_an_export_and_an_import_carry_repeat_and_a_finished_create_makes_none() {
    let s = Server::start().await;
    let (key, _) = s.issue_key(None).await;
    let api = s.api_for(&key);
    let (pid, cid) = api.board().await;
    let daily = json!({ "every": 1, "unit": "day", "from": "completion" });
    let batch = json!({ "tasks": [
        { "columnId": cid, "title": "Open", "deadline": "2026-11-27", "repeat": weekly() },
        { "columnId": cid, "title": "Done", "repeat": daily,
          "completedAt": ms("2026-11-27T10:00:00Z") },
    ] });
    let ids = api.post("/tasks", batch).await.expect_ok(201)["ids"].clone();
    assert_eq!(
        column_order(&api, &pid, &cid).await.len(),
        2,
        "a finished create recurs not"
    );
    assert_eq!(api.task(&str_of(&ids[0])).await["repeat"], weekly());
    assert_eq!(api.task(&str_of(&ids[1])).await["repeat"], daily);

    let export = api.get("/export").await.expect(200).clone();
    let cards: Vec<Value> = export["projects"][0]["columns"][0]["tasks"]
        .as_array()
        .unwrap()
        .clone();
    let repeats: Vec<&Value> = cards.iter().map(|t| &t["repeat"]).collect();
    assert_eq!(repeats.len(), 2);
    assert!(
        repeats.contains(&&weekly()) && repeats.contains(&&daily),
        "{repeats:?}"
    );

    // The analytic exports: a column of its own holding the rule's JSON; NDJSON as read.
    let csv = api.get("/export?format=csv").await;
    csv.expect(200);
    let file = s.root().join("export.csv");
    std::fs::write(&file, &csv.text).unwrap();
    let rows = crate::exports::python_rows(&file).await;
    let cells: Vec<(String, Value)> = crate::exports::by_name(&rows)
        .iter()
        .map(|row| {
            let repeat = serde_json::from_str(&row["repeat"]).unwrap_or(Value::Null);
            (row["task_id"].clone(), repeat)
        })
        .collect();
    let ndjson = api.get("/export?format=ndjson").await;
    ndjson.expect(200);
    for id in ids.as_array().unwrap() {
        let repeat = api.task(&str_of(id)).await["repeat"].clone();
        let line = (ndjson.text.lines())
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .find(|l| l["taskId"] == *id)
            .expect("a line per card");
        assert_eq!(line["repeat"], repeat);
        assert!(cells.contains(&(str_of(id), repeat)), "{}", csv.text);
    }

    // Into another account, as it left.
    let (other_key, _) = s.issue_key(None).await;
    let other = s.api_for(&other_key);
    other
        .post_text("/import", &export.to_string())
        .await
        .expect_ok(201);
    for id in ids.as_array().unwrap() {
        let id = str_of(id);
        assert_eq!(
            other.task(&id).await["repeat"],
            api.task(&id).await["repeat"]
        );
    }
    assert_eq!(other.projects("?completed=all").await.len(), 1);
}

#[tokio::test]
async fn a_completion_sent_again_with_its_idempotency_key_makes_one_occurrence() {
    use crate::idempotency::{Keyed, replayed};
    let s = Server::start().await;
    let api = s.api();
    let (pid, cid) = api.board().await;
    let body = json!({ "columnId": cid, "title": "Pay rent", "deadline": "2026-11-30",
        "repeat": { "every": 1, "unit": "month", "from": "deadline" } });
    let tid = str_of(&api.create_task(body).await["id"]);
    let keyed = Keyed::of(&s, &s.key);
    let done = Some(json!({ "completedAt": ms("2026-11-30T18:00:00Z") }));
    let path = format!("/tasks/{tid}");
    let first = keyed
        .send(Method::PATCH, &path, done.clone(), "rent-11")
        .await;
    let again = keyed.send(Method::PATCH, &path, done, "rent-11").await;
    assert!(!replayed(&first) && replayed(&again), "{}", again.text);
    assert_eq!(again.expect_ok(200)["next"], first.expect_ok(200)["next"]);
    assert_eq!(first.body["next"]["deadline"], json!("2026-12-30"));
    assert_eq!(
        column_order(&api, &pid, &cid).await.len(),
        2,
        "one occurrence"
    );
}
