//! Undo (issue 4): `POST /undo` walks back the calling key's own last 20 steps, one request
//! per step; what is and is not a step; 409 when a field moved or the record went; steps
//! survive a restart and never touch another key's changes.

use reqwest::Method;
use serde_json::{Value, json};

use crate::harness::*;

async fn undo(api: &Api) -> Reply {
    api.send(Method::POST, "/undo", None).await
}

/// Asserts `{ok:true, undone:true, change:{kind, id, fields}}`; returns `fields`, sorted.
#[track_caller]
fn expect_undone(r: &Reply, kind: &str, id: &str) -> Vec<String> {
    let body = r.expect_ok(200);
    assert_keys(body, &["ok", "undone", "change"]);
    assert_eq!(body["undone"], json!(true), "{}", r.text);
    let change = &body["change"];
    assert_keys(change, &["kind", "id", "fields"]);
    assert_eq!(
        (&change["kind"], &change["id"]),
        (&json!(kind), &json!(id)),
        "{}",
        r.text
    );
    let mut fields: Vec<String> = change["fields"]
        .as_array()
        .unwrap_or_else(|| panic!("fields is not an array: {}", r.text))
        .iter()
        .map(str_of)
        .collect();
    fields.sort();
    fields
}

#[track_caller]
fn expect_nothing(r: &Reply) {
    assert_eq!(
        r.expect(200),
        &json!({ "ok": true, "undone": false }),
        "{}",
        r.text
    );
}

#[track_caller]
fn expect_conflict(r: &Reply, field: &str, current: Value) {
    let body = r.expect_field_error(409, field);
    assert_keys(body, &["ok", "error", "code", "field", "current"]);
    assert_eq!(body["current"], current, "{}", r.text);
}

async fn patch_task(api: &Api, tid: &str, body: Value) -> Value {
    api.patch(&format!("/tasks/{tid}"), body)
        .await
        .expect_ok(200)["task"]
        .clone()
}

async fn bin_len(api: &Api) -> usize {
    api.get("/bin").await.expect_ok(200)["entries"]
        .as_array()
        .expect("entries")
        .len()
}

/// A second key of the same account.
async fn second_key(s: &Server) -> Api {
    let r = s.api().post("/keys", json!({ "label": "second" })).await;
    s.api_for(&str_of(&r.expect_ok(201)["key"]))
}

#[tokio::test]
async fn undo_puts_back_a_field_write_then_walks_back_through_the_creates() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, cid) = api.board().await;
    let tid = str_of(&api.new_task(&cid, "Before").await["id"]);
    let before = api.task(&tid).await;
    let after = patch_task(
        &api,
        &tid,
        json!({ "title": "After", "priority": 1, "effort": "hard" }),
    )
    .await;

    let fields = expect_undone(&undo(&api).await, "task", &tid);
    assert_eq!(fields, ["effort", "priority", "title"]);
    let now = api.task(&tid).await;
    for f in [
        "title",
        "priority",
        "effort",
        "description",
        "position",
        "columnId",
        "tags",
    ] {
        assert_eq!(now[f], before[f], "{f} after undo");
    }
    assert!(
        now["rev"].as_i64() > after["rev"].as_i64(),
        "an undo is a write: rev must rise"
    );

    // Undo is not a step: the next undo goes one step further back (the task's create),
    // destroying the record without a bin entry.
    expect_undone(&undo(&api).await, "task", &tid);
    api.get(&format!("/tasks/{tid}")).await.expect_error(404);
    assert_eq!(bin_len(&api).await, 0, "undoing a create used a bin slot");
    expect_undone(&undo(&api).await, "column", &cid);
    assert_eq!(api.project(&pid).await["columns"], json!([]));
    expect_undone(&undo(&api).await, "project", &pid);
    api.get(&format!("/projects/{pid}")).await.expect_error(404);
    assert!(api.projects("").await.is_empty());
    assert_eq!(bin_len(&api).await, 0);
    expect_nothing(&undo(&api).await);
    expect_nothing(&undo(&api).await);
}

#[tokio::test]
async fn project_and_column_field_writes_are_undone_one_request_at_a_time() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, cid) = api.board().await;
    let project0 = api.project(&pid).await;
    let archived = now_ms();
    api.patch(
        &format!("/projects/{pid}"),
        json!({ "archivedAt": archived }),
    )
    .await
    .expect_ok(200);
    let body = json!({ "name": "Renamed", "folder": "Work", "pinnedAt": archived });
    api.patch(&format!("/projects/{pid}"), body)
        .await
        .expect_ok(200);
    let body = json!({ "name": "Doing", "description": "Words" });
    api.patch(&format!("/columns/{cid}"), body)
        .await
        .expect_ok(200);

    assert_eq!(
        expect_undone(&undo(&api).await, "column", &cid),
        ["description", "name"]
    );
    let project = api.project(&pid).await;
    assert_eq!(
        project["columns"][0]["name"],
        project0["columns"][0]["name"]
    );
    assert_eq!(
        project["columns"][0]["description"],
        project0["columns"][0]["description"]
    );
    assert_eq!(
        project["name"],
        json!("Renamed"),
        "a column undo touched the project"
    );

    assert_eq!(
        expect_undone(&undo(&api).await, "project", &pid),
        ["folder", "name", "pinnedAt"]
    );
    let project = api.project(&pid).await;
    for f in ["name", "folder", "pinnedAt"] {
        assert_eq!(project[f], project0[f], "{f}");
    }
    assert_eq!(
        project["archivedAt"],
        json!(archived),
        "the earlier step must still stand"
    );

    assert_eq!(
        expect_undone(&undo(&api).await, "project", &pid),
        ["archivedAt"]
    );
    assert_eq!(api.project(&pid).await["archivedAt"], json!(null));
}

#[tokio::test]
async fn adding_tags_comments_and_checklist_items_and_patching_an_item_are_steps() {
    let s = Server::start().await;
    let api = s.api();
    let (_, cid) = api.board().await;
    let tid = str_of(&api.new_task(&cid, "Card").await["id"]);
    let add = |what: &'static str, body: Value| {
        let api = api.clone();
        let path = format!("/tasks/{tid}/{what}");
        async move { api.post(&path, body).await.expect_ok(201).clone() }
    };
    add("tags", json!({ "text": "urgent" })).await;
    add("comments", json!({ "text": "a note" })).await;
    let item = str_of(&add("checklist", json!({ "text": "step" })).await["id"]);
    api.patch(&format!("/checklist/{item}"), json!({ "done": true }))
        .await
        .expect_ok(200);

    let fields = expect_undone(&undo(&api).await, "task", &tid);
    assert!(fields.contains(&"checklist".to_string()), "{fields:?}");
    let task = api.task(&tid).await;
    assert_eq!(task["checklist"][0]["id"], json!(item));
    assert_eq!(task["checklist"][0]["done"], json!(false));

    expect_undone(&undo(&api).await, "task", &tid);
    assert_eq!(api.task(&tid).await["checklist"], json!([]));
    expect_undone(&undo(&api).await, "task", &tid);
    assert_eq!(api.task(&tid).await["comments"], json!([]));
    let fields = expect_undone(&undo(&api).await, "task", &tid);
    assert!(fields.contains(&"tags".to_string()), "{fields:?}");
    let task = api.task(&tid).await;
    assert_eq!((&task["tags"], &task["tagIds"]), (&json!([]), &json!([])));
    // Next comes the task's create.
    expect_undone(&undo(&api).await, "task", &tid);
    api.get(&format!("/tasks/{tid}")).await.expect_error(404);
}

#[tokio::test]
async fn deletions_of_tasks_columns_and_projects_are_undone_from_the_bin() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, c1) = api.board().await;
    let c2 = api.new_column(&pid, "Later").await;
    let parent = str_of(&api.new_task(&c1, "Parent").await["id"]);
    let sub = str_of(
        &api.create_task(json!({ "columnId": c1, "title": "Sub", "parentId": parent }))
            .await["id"],
    );
    let in_c2 = str_of(&api.new_task(&c2, "In c2").await["id"]);
    let other = api.new_project("Other").await;
    let before = api.account().await;

    api.delete(&format!("/tasks/{parent}")).await.expect_ok(200);
    api.delete(&format!("/columns/{c2}")).await.expect_ok(200);
    api.delete(&format!("/projects/{other}"))
        .await
        .expect_ok(200);
    assert_eq!(bin_len(&api).await, 3);

    expect_undone(&undo(&api).await, "project", &other);
    assert_eq!(api.project(&other).await["name"], json!("Other"));
    assert_eq!(bin_len(&api).await, 2, "the restored entry left the bin");
    expect_undone(&undo(&api).await, "column", &c2);
    assert_eq!(api.task(&in_c2).await["columnId"], json!(c2));
    assert_eq!(bin_len(&api).await, 1);
    expect_undone(&undo(&api).await, "task", &parent);
    assert_eq!(api.task(&sub).await["parentId"], json!(parent));
    assert_eq!(bin_len(&api).await, 0);

    // Everything is back as it was, but for stamps.
    assert_eq!(unstamped(api.account().await), unstamped(before));
}

/// A read without its stamps (`updatedAt`, `rev`), which a restore sets anew.
fn unstamped(mut v: Value) -> Value {
    if let Some(map) = v.as_object_mut() {
        map.retain(|k, _| k != "updatedAt" && k != "rev");
        map.values_mut().for_each(|x| *x = unstamped(x.take()));
    } else if let Some(list) = v.as_array_mut() {
        list.iter_mut().for_each(|x| *x = unstamped(x.take()));
    }
    v
}

#[tokio::test]
async fn writes_that_are_not_steps_are_skipped_and_undo_reaches_the_step_before() {
    let s = Server::start().await;
    let api = s.api();
    // Another key builds the board, so the first key's history holds only what follows.
    let setup = second_key(&s).await;
    let (_, cid) = setup.board().await;
    let body = json!({ "columnId": cid, "title": "Original", "tags": ["a"],
        "comments": [{ "text": "c" }], "checklist": [{ "text": "one" }, { "text": "two" }] });
    let task = setup.create_task(body).await;
    let tid = str_of(&task["id"]);
    let (k1, k2) = (
        str_of(&task["checklist"][0]["id"]),
        str_of(&task["checklist"][1]["id"]),
    );

    patch_task(&api, &tid, json!({ "title": "Changed" })).await;
    let r = api
        .patch(
            "/tasks/positions",
            json!({ "positions": [{ "id": tid, "position": 42.5 }] }),
        )
        .await;
    assert_eq!(r.expect_ok(200)["moved"], json!(1), "{}", r.text);
    api.post(
        &format!("/tasks/{tid}/checklist/order"),
        json!({ "ids": [k2, k1] }),
    )
    .await
    .expect_ok(200);
    api.delete(&format!("/tags/{}", str_of(&task["tagIds"][0])))
        .await
        .expect_ok(200);
    api.delete(&format!("/comments/{}", str_of(&task["comments"][0]["id"])))
        .await
        .expect_ok(200);
    api.delete(&format!("/checklist/{k1}")).await.expect_ok(200);
    patch_task(&api, &tid, json!({ "title": "Changed" })).await; // changes nothing
    api.post("/keys", json!({ "label": "not a step" }))
        .await
        .expect_ok(201);
    api.send(Method::POST, "/purge", None).await.expect_ok(200);

    assert_eq!(expect_undone(&undo(&api).await, "task", &tid), ["title"]);
    let now = api.task(&tid).await;
    assert_eq!(now["title"], json!("Original"));
    assert_eq!(
        now["position"].as_f64(),
        Some(42.5),
        "bulk positions were undone"
    );
    assert_eq!(
        ids(&now["checklist"]),
        vec![k2],
        "the checklist order or delete was undone"
    );
    assert_eq!(
        (&now["tags"], &now["comments"]),
        (&json!([]), &json!([])),
        "a permanent delete came back"
    );
    expect_nothing(&undo(&api).await);
    assert_eq!(api.task(&tid).await["title"], json!("Original"));
}

#[tokio::test]
async fn one_keys_undo_never_touches_another_keys_changes() {
    let s = Server::start().await;
    let (a, b) = (s.api(), second_key(&s).await);
    let (_, cid) = a.board().await;
    let tid = str_of(&a.new_task(&cid, "Shared").await["id"]);
    let location0 = a.task(&tid).await["location"].clone();
    patch_task(&a, &tid, json!({ "location": "Desk" })).await;

    // B has done nothing, whatever A did.
    expect_nothing(&undo(&b).await);
    assert_eq!(a.task(&tid).await["location"], json!("Desk"));

    patch_task(&b, &tid, json!({ "priority": 2 })).await;
    patch_task(&a, &tid, json!({ "title": "By A" })).await;
    assert_eq!(expect_undone(&undo(&b).await, "task", &tid), ["priority"]);
    let task = a.task(&tid).await;
    assert_eq!(
        (&task["priority"], &task["title"]),
        (&json!(4), &json!("By A"))
    );
    expect_nothing(&undo(&b).await);

    assert_eq!(expect_undone(&undo(&a).await, "task", &tid), ["title"]);
    assert_eq!(expect_undone(&undo(&a).await, "task", &tid), ["location"]);
    let task = a.task(&tid).await;
    assert_eq!(
        (&task["title"], &task["location"]),
        (&json!("Shared"), &location0)
    );
}

#[tokio::test]
async fn undo_after_another_key_moved_the_field_is_409_and_the_step_is_dropped() {
    let s = Server::start().await;
    let (a, b) = (s.api(), second_key(&s).await);
    let (_, cid) = b.board().await;
    let tid = str_of(&b.new_task(&cid, "Start").await["id"]);

    patch_task(&a, &tid, json!({ "priority": 2 })).await;
    patch_task(&a, &tid, json!({ "title": "By A" })).await;
    patch_task(&b, &tid, json!({ "title": "By B" })).await;
    let before = a.task(&tid).await;
    expect_conflict(&undo(&a).await, "title", json!("By B"));
    assert_eq!(a.task(&tid).await, before, "a refused undo wrote something");
    // The step is gone: the next undo takes the one before it.
    assert_eq!(expect_undone(&undo(&a).await, "task", &tid), ["priority"]);
    let task = a.task(&tid).await;
    assert_eq!(
        (&task["priority"], &task["title"]),
        (&json!(4), &json!("By B"))
    );
    expect_nothing(&undo(&a).await);

    // Another field moving does not stand in the way: the check is per field written.
    patch_task(&a, &tid, json!({ "effort": "easy" })).await;
    patch_task(&b, &tid, json!({ "location": "Desk" })).await;
    assert_eq!(expect_undone(&undo(&a).await, "task", &tid), ["effort"]);
    let task = a.task(&tid).await;
    assert_eq!(
        (&task["effort"], &task["location"]),
        (&json!(null), &json!("Desk"))
    );
}

#[tokio::test]
async fn undo_of_a_step_whose_record_was_deleted_or_destroyed_is_409_on_id() {
    let s = Server::start().await;
    let (a, b) = (s.api(), second_key(&s).await);
    let (_, cid) = b.board().await;
    let t1 = str_of(&b.new_task(&cid, "One").await["id"]);
    let t2 = str_of(&b.new_task(&cid, "Two").await["id"]);

    patch_task(&a, &t1, json!({ "title": "One by A" })).await;
    a.delete(&format!("/tasks/{t2}")).await.expect_ok(200);
    a.send(Method::POST, "/purge", None).await.expect_ok(200);
    // The deletion's bin entry was purged: nothing to restore.
    expect_conflict(&undo(&a).await, "id", json!(null));
    a.get(&format!("/tasks/{t2}")).await.expect_error(404);

    b.delete(&format!("/tasks/{t1}")).await.expect_ok(200);
    expect_conflict(&undo(&a).await, "id", json!(null));
    a.get(&format!("/tasks/{t1}")).await.expect_error(404);
    assert_eq!(bin_len(&a).await, 1, "B's deletion must stand");
    expect_nothing(&undo(&a).await);
}

#[tokio::test]
async fn a_completion_cascade_is_undone_whole() {
    let s = Server::start().await;
    let api = s.api();
    let (_, cid) = api.board().await;
    let parent = str_of(&api.new_task(&cid, "Parent").await["id"]);
    let sub = |title: &'static str, done: Value| {
        let api = api.clone();
        let body =
            json!({ "columnId": cid, "title": title, "parentId": parent, "completedAt": done });
        async move { str_of(&api.create_task(body).await["id"]) }
    };
    let open = sub("Open", json!(null)).await;
    let old = days_ago(2);
    let finished = sub("Finished", json!(old)).await;

    let at = now_ms();
    patch_task(&api, &parent, json!({ "completedAt": at })).await;
    assert_eq!(
        api.task(&open).await["completedAt"],
        json!(at),
        "the cascade did not run"
    );
    assert_eq!(api.task(&finished).await["completedAt"], json!(old));

    expect_undone(&undo(&api).await, "task", &parent);
    assert_eq!(api.task(&parent).await["completedAt"], json!(null));
    assert_eq!(
        api.task(&open).await["completedAt"],
        json!(null),
        "the cascade was not undone"
    );
    assert_eq!(api.task(&finished).await["completedAt"], json!(old));
}

#[tokio::test]
async fn a_batch_create_is_one_step() {
    let s = Server::start().await;
    let (a, setup) = (s.api(), second_key(&s).await);
    let (pid, cid) = setup.board().await;
    let tasks: Vec<Value> = (0..3)
        .map(|i| json!({ "columnId": cid, "title": format!("B{i}") }))
        .collect();
    let r = a.post("/tasks", json!({ "tasks": tasks })).await;
    let created: Vec<String> = r.expect_ok(201)["ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(str_of)
        .collect();
    assert_eq!(created.len(), 3);

    let r = undo(&a).await;
    let head = str_of(&r.expect_ok(200)["change"]["id"]);
    assert!(
        created.contains(&head),
        "the change names a created task: {}",
        r.text
    );
    expect_undone(&r, "task", &head);
    for id in &created {
        a.get(&format!("/tasks/{id}")).await.expect_error(404);
    }
    assert_eq!(task_ids(&a.project(&pid).await), Vec::<String>::new());
    assert_eq!(bin_len(&a).await, 0);
    expect_nothing(&undo(&a).await);
}

#[tokio::test]
async fn undo_reaches_back_20_steps_across_21_changes() {
    let s = Server::start().await;
    let (a, setup) = (s.api(), second_key(&s).await);
    let (_, cid) = setup.board().await;
    let tid = str_of(&setup.new_task(&cid, "T0").await["id"]);
    for i in 1..=21 {
        patch_task(&a, &tid, json!({ "title": format!("T{i}") })).await;
    }
    for i in 1..=20 {
        assert_eq!(
            expect_undone(&undo(&a).await, "task", &tid),
            ["title"],
            "undo #{i}"
        );
        assert_eq!(
            a.task(&tid).await["title"],
            json!(format!("T{}", 21 - i)),
            "after undo #{i}"
        );
    }
    expect_nothing(&undo(&a).await);
    assert_eq!(a.task(&tid).await["title"], json!("T1"));
}

#[tokio::test]
async fn steps_survive_a_restart() {
    let mut s = Server::start().await;
    let api = s.api();
    let (_, cid) = api.board().await;
    let tid = str_of(&api.new_task(&cid, "Before").await["id"]);
    patch_task(&api, &tid, json!({ "title": "After" })).await;
    s.restart().await;
    let api = s.api();
    assert_eq!(expect_undone(&undo(&api).await, "task", &tid), ["title"]);
    assert_eq!(api.task(&tid).await["title"], json!("Before"));
}
