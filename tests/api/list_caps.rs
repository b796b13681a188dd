//! Every list a caller sends has a cap (issue 32, "A fair writer"; contract: Limits): a list
//! at its cap is taken, one entry past it answers 422 `limit_reached` naming the field, and
//! nothing is written. The caps are the specification's limits, set small here by their flags
//! so that a list just past each is cheap to send.

use serde_json::{Value, json};

use crate::harness::*;

const CAP: usize = 3;

async fn small_limits() -> Server {
    let cap = CAP.to_string();
    let mut args = Vec::new();
    for limit in [
        "--limit-checklist-items-per-task",
        "--limit-tags-per-task",
        "--limit-comments-per-task",
        "--limit-columns-per-project",
        "--limit-tasks-per-batch",
        "--limit-positions-per-request",
    ] {
        args.push(limit);
        args.push(cap.as_str());
    }
    Server::start_with(&args).await
}

/// `n` entries made by `entry`.
fn list(n: usize, entry: impl Fn(usize) -> Value) -> Value {
    Value::Array((0..n).map(entry).collect())
}

/// The reply is 422 `limit_reached` naming `field`.
#[track_caller]
fn refused(r: &crate::client::Reply, field: &str) {
    r.expect_field_error(422, field);
    r.expect_code(422, "limit_reached");
}

#[tokio::test]
async fn a_checklist_order_names_at_most_the_checklist_limit_of_ids() {
    let s = small_limits().await;
    let api = s.api();
    let (_, cid) = api.board().await;
    let tid = str_of(&api.new_task(&cid, "Card").await["id"]);
    let items = api
        .post(
            &format!("/tasks/{tid}/checklist"),
            json!({ "items": list(CAP, |i| json!({ "text": format!("item {i}") })) }),
        )
        .await
        .expect_ok(201)
        .clone();
    let mut ids: Vec<Value> = api.task(&tid).await["checklist"]
        .as_array()
        .expect("a checklist")
        .iter()
        .map(|i| i["id"].clone())
        .collect();
    assert_eq!(ids.len(), CAP, "{items}");
    ids.reverse();
    let order = format!("/tasks/{tid}/checklist/order");
    // One id past the cap, even an unknown one, is refused, and nothing moves.
    let before = api.task(&tid).await;
    let mut past = ids.clone();
    past.push(json!("k_unknown"));
    refused(&api.post(&order, json!({ "ids": past })).await, "ids");
    // A list far past it is refused the same way (a million ids once ran on the writer).
    let many = list(50, |i| json!(format!("k_{i}")));
    refused(&api.post(&order, json!({ "ids": many })).await, "ids");
    assert_eq!(api.task(&tid).await, before);
    // At the cap, the order is taken.
    api.post(&order, json!({ "ids": ids.clone() }))
        .await
        .expect_ok(200);
    let now: Vec<Value> = api.task(&tid).await["checklist"]
        .as_array()
        .expect("a checklist")
        .iter()
        .map(|i| i["id"].clone())
        .collect();
    assert_eq!(now, ids);
}

#[tokio::test]
async fn the_items_form_holds_at_most_the_checklist_limit() {
    let s = small_limits().await;
    let api = s.api();
    let (_, cid) = api.board().await;
    let tid = str_of(&api.new_task(&cid, "Card").await["id"]);
    let path = format!("/tasks/{tid}/checklist");
    let item = |i: usize| json!({ "text": format!("item {i}") });
    refused(
        &api.post(&path, json!({ "items": list(CAP + 1, item) }))
            .await,
        "items",
    );
    assert_eq!(api.task(&tid).await["checklist"], json!([]));
    api.post(&path, json!({ "items": list(CAP, item) }))
        .await
        .expect_ok(201);
}

#[tokio::test]
async fn a_card_create_holds_each_list_at_its_limit() {
    let s = small_limits().await;
    let api = s.api();
    let (_, cid) = api.board().await;
    let card = |field: &str, n: usize| {
        let mut body = json!({ "columnId": cid, "title": "Card" });
        match field {
            "checklist" => body["checklist"] = list(n, |i| json!({ "text": format!("i{i}") })),
            "comments" => body["comments"] = list(n, |i| json!({ "text": format!("c{i}") })),
            "tags" => body["tags"] = list(n, |i| json!(format!("tag{i}"))),
            "tagIds" => {
                body["tags"] = list(CAP, |i| json!(format!("tag{i}")));
                body["tagIds"] = list(n, |i| json!(format!("g_tag{i}")));
            }
            other => unreachable!("{other}"),
        }
        body
    };
    for field in ["checklist", "comments", "tags", "tagIds"] {
        refused(&api.post("/tasks", card(field, CAP + 1)).await, field);
        api.post("/tasks", card(field, CAP)).await.expect_ok(201);
    }
}

#[tokio::test]
async fn a_batch_positions_and_a_projects_columns_hold_at_their_limits() {
    let s = small_limits().await;
    let api = s.api();
    let (_, cid) = api.board().await;
    let entry = |i: usize| json!({ "columnId": cid, "title": format!("Card {i}") });
    refused(
        &api.post("/tasks", json!({ "tasks": list(CAP + 1, entry) }))
            .await,
        "tasks",
    );
    let made = api
        .post("/tasks", json!({ "tasks": list(CAP, entry) }))
        .await
        .expect_ok(201)
        .clone();
    let ids: Vec<String> = made["ids"]
        .as_array()
        .expect("the batch's ids")
        .iter()
        .map(str_of)
        .collect();
    let position = |i: usize| json!({ "id": ids[i % ids.len()], "position": 10 + i });
    refused(
        &api.patch(
            "/tasks/positions",
            json!({ "positions": list(CAP + 1, position) }),
        )
        .await,
        "positions",
    );
    api.patch(
        "/tasks/positions",
        json!({ "positions": list(CAP, position) }),
    )
    .await
    .expect_ok(200);
    let column = |i: usize| json!(format!("List {i}"));
    refused(
        &api.post(
            "/projects",
            json!({ "name": "Too wide", "columns": list(CAP + 1, column) }),
        )
        .await,
        "columns",
    );
    api.post(
        "/projects",
        json!({ "name": "Wide", "columns": list(CAP, column) }),
    )
    .await
    .expect_ok(201);
}
