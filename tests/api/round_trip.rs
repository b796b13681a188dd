//! Round trip (specification, Task rule 5): every field a read returns can be sent back on a
//! create, so a card read from one account and created in another with the same ids lands
//! exactly as it left, field for field, except `rev` and `updatedAt`.

use serde_json::{Value, json};

use crate::harness::*;

const DESCRIPTION: &str = "# Plan\n\nSome *emphasis* and a [link](https://example.com).\n\n\
| Step | Owner | Done |\n|---|:---:|---:|\n| Draft | Ann | yes |\n| Review \\| sign | Bo | no |\n\n\
```rust\nfn main() {\n    let x = \"quoted\";\n    println!(\"{x}\");\n}\n```\n\n- item\n  - nested\n";

/// Builds the source board in `api`: project `b_rt` with columns `c_rt` and `c_rt2`, a full
/// parent card `t_rt_parent` and two subtasks. Returns the ids of the cards.
async fn build_source(api: &Api) -> Vec<&'static str> {
    let project = json!({ "id": "b_rt", "name": "Round trip",
        "columns": [{ "id": "c_rt", "name": "Doing" }, { "id": "c_rt2", "name": "Later" }] });
    api.create_project(project).await;
    let parent = json!({
        "id": "t_rt_parent", "columnId": "c_rt", "title": "Ship the release ✈",
        "description": DESCRIPTION, "priority": 2, "effort": "hard", "deadline": "2024-02-29",
        "deadlineTime": "07:05", "location": "Café ☕, 2nd floor", "position": 1.5,
        "tags": ["alpha", "Beta"],
    });
    api.create_task(parent).await;
    let add = |what: &'static str, body: Value| {
        let api = api.clone();
        async move {
            let r = api.post(&format!("/tasks/t_rt_parent/{what}"), body).await;
            str_of(&r.expect_ok(201)["id"])
        }
    };
    add("tags", json!({ "text": "gamma" })).await;
    let k1 = add("checklist", json!({ "text": "Build" })).await;
    add("checklist", json!({ "text": "Test", "done": true })).await;
    let k3 = add("checklist", json!({ "text": "Tag" })).await;
    api.post(
        "/tasks/t_rt_parent/checklist/order",
        json!({ "ids": [k3, k1] }),
    )
    .await
    .expect_ok(200);
    api.patch(&format!("/checklist/{k1}"), json!({ "done": true }))
        .await
        .expect_ok(200);
    add(
        "comments",
        json!({ "text": "First comment\nwith two lines" }),
    )
    .await;
    add("comments", json!({ "text": "Second, with `code`" })).await;

    let finished = json!({
        "id": "t_rt_done_sub", "columnId": "c_rt2", "title": "Finished subtask",
        "parentId": "t_rt_parent", "completedAt": days_ago(5), "deadlineTime": "18:30",
        "position": -2.25, "tags": ["sub"], "checklist": [{ "text": "only", "done": true }],
    });
    api.create_task(finished).await;
    let open = json!({
        "id": "t_rt_open_sub", "columnId": "c_rt", "title": "Open subtask",
        "parentId": "t_rt_parent", "effort": "easy", "position": 9,
        "comments": [{ "text": "on the subtask" }],
    });
    api.create_task(open).await;
    // Completing the parent stamps the open subtask too.
    api.patch(
        "/tasks/t_rt_parent",
        json!({ "completedAt": now_ms() - 3_600_000 }),
    )
    .await
    .expect_ok(200);
    vec!["t_rt_parent", "t_rt_done_sub", "t_rt_open_sub"]
}

/// The cards of project `b_rt` in a whole-account document, by id.
fn cards_in(doc: &Value, wanted: &[&str]) -> Vec<Value> {
    let project = doc["projects"]
        .as_array()
        .expect("projects")
        .iter()
        .find(|p| p["id"] == json!("b_rt"))
        .unwrap_or_else(|| panic!("b_rt missing from {doc}"))
        .clone();
    wanted
        .iter()
        .map(|id| find_task(&project, id).unwrap_or_else(|| panic!("{id} missing")))
        .collect()
}

/// A task read without `rev` and `updatedAt`.
fn comparable(task: &Value) -> Value {
    let mut t = task.clone();
    let map = t.as_object_mut().expect("task object");
    map.remove("rev");
    map.remove("updatedAt");
    t
}

/// Creates the empty project and columns with the source's ids in a fresh account.
async fn fresh_account(s: &Server) -> Api {
    let (key, _) = s.issue_key(None).await;
    let api = s.api_for(&key);
    let project = json!({ "id": "b_rt", "name": "Round trip",
        "columns": [{ "id": "c_rt", "name": "Doing" }, { "id": "c_rt2", "name": "Later" }] });
    api.create_project(project).await;
    api
}

#[track_caller]
fn assert_same_cards(old: &[Value], new: &[Value]) {
    assert_eq!(old.len(), new.len());
    for (o, n) in old.iter().zip(new) {
        let (o, n) = (comparable(o), comparable(n));
        for key in o.as_object().unwrap().keys() {
            assert_eq!(n[key], o[key], "{} differs in {key}", o["id"]);
        }
        assert_eq!(n, o, "{} differs", o["id"]);
    }
}

#[tokio::test]
async fn a_full_task_read_created_in_another_account_lands_field_for_field() {
    let s = Server::start().await;
    let api = s.api();
    let wanted = build_source(&api).await;
    let old = cards_in(
        &api.get("/projects?completed=all").await.expect(200).clone(),
        &wanted,
    );
    // The source really carries everything the round trip must keep.
    let parent = &old[0];
    assert_eq!(parent["tags"], json!(["alpha", "Beta", "gamma"]));
    assert_eq!(parent["checklist"].as_array().unwrap().len(), 3);
    assert_eq!(parent["checklist"][0]["text"], json!("Tag"));
    assert_eq!(parent["comments"].as_array().unwrap().len(), 2);
    assert!(parent["completedAt"].is_i64());
    assert_eq!(old[2]["completedAt"], parent["completedAt"]);
    assert_ne!(old[1]["completedAt"], parent["completedAt"]);
    assert_eq!(old[1]["parentId"], json!("t_rt_parent"));

    let api_b = fresh_account(&s).await;
    for card in &old {
        let r = api_b.post("/tasks", card.clone()).await;
        let created = r.expect_ok(201)["task"].clone();
        assert_eq!(created["id"], card["id"]);
    }
    let new = cards_in(
        &api_b
            .get("/projects?completed=all")
            .await
            .expect(200)
            .clone(),
        &wanted,
    );
    assert_same_cards(&old, &new);
    for id in &wanted {
        assert_eq!(
            comparable(&api_b.task(id).await),
            comparable(&api.task(id).await)
        );
    }
    // Sending the same reads again is a safe retry: 200, nothing changes.
    let landed = api_b.account().await;
    for card in &old {
        api_b.post("/tasks", card.clone()).await.expect_ok(200);
    }
    assert_eq!(api_b.account().await, landed);
    // The source is untouched by the copy.
    let again = cards_in(
        &api.get("/projects?completed=all").await.expect(200).clone(),
        &wanted,
    );
    assert_eq!(again, old);
}

#[tokio::test]
async fn a_board_read_created_back_as_one_batch_lands_field_for_field() {
    let s = Server::start().await;
    let api = s.api();
    let wanted = build_source(&api).await;
    let old = cards_in(&api.account().await, &wanted);

    // The parent comes first in the batch, its subtasks name it.
    let api_b = fresh_account(&s).await;
    let r = api_b.post("/tasks", json!({ "tasks": old.clone() })).await;
    let body = r.expect_ok(201);
    assert_eq!(body["ids"], json!(wanted));
    let new = cards_in(&api_b.account().await, &wanted);
    assert_same_cards(&old, &new);
}

#[tokio::test]
async fn an_exported_card_created_back_lands_field_for_field() {
    let s = Server::start().await;
    let api = s.api();
    let wanted = build_source(&api).await;
    let export = api.get("/export").await.expect(200).clone();
    let old = cards_in(&export, &wanted);
    assert_same_cards(&old, &cards_in(&api.account().await, &wanted));

    let api_b = fresh_account(&s).await;
    for card in &old {
        api_b.post("/tasks", card.clone()).await.expect_ok(201);
    }
    assert_same_cards(&old, &cards_in(&api_b.account().await, &wanted));
}
