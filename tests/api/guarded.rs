//! Guarded updates: `{before, after}` lands only while the field holds `before`; otherwise
//! 409 with the current value and nothing in the request is written.

use serde_json::json;

use crate::harness::*;

/// A board with one task titled "Task"; returns (api, projectId, columnId, taskId).
async fn setup(s: &Server) -> (Api, String, String, String) {
    let api = s.api();
    let (pid, cid) = api.board().await;
    let tid = str_of(&api.new_task(&cid, "Task").await["id"]);
    (api, pid, cid, tid)
}

#[tokio::test]
async fn a_guard_lands_while_the_field_holds_before_and_409s_after() {
    let s = Server::start().await;
    let (api, _, _, tid) = setup(&s).await;
    let path = format!("/tasks/{tid}");
    let before = api.task(&tid).await;

    let guard = json!({ "title": { "before": "Task", "after": "Renamed" } });
    let r = api.patch(&path, guard.clone()).await;
    let task = r.expect_ok(200)["task"].clone();
    assert_eq!(task["title"], json!("Renamed"));
    assert!(task["rev"].as_i64() > before["rev"].as_i64());

    let r = api.patch(&path, guard).await;
    let body = r.expect_field_error(409, "title");
    assert_eq!(body["current"], json!("Renamed"));
    assert_eq!(api.task(&tid).await, task, "a failed guard wrote something");
}

#[tokio::test]
async fn a_failed_guard_writes_nothing_else_in_the_request() {
    let s = Server::start().await;
    let (api, pid, cid, tid) = setup(&s).await;
    let other_col = api.new_column(&pid, "Other").await;
    let before = api.task(&tid).await;
    let body = json!({
        "title": { "before": "Wrong", "after": "X" },
        "priority": 1,
        "deadline": "2024-01-01",
        "columnId": other_col,
        "tags": ["new"],
    });
    let r = api.patch(&format!("/tasks/{tid}"), body).await;
    assert_eq!(r.expect_field_error(409, "title")["current"], json!("Task"));
    assert_eq!(api.task(&tid).await, before);
    assert_eq!(before["columnId"], json!(cid));

    // Two guards, the first holds and the second fails: neither lands.
    let body = json!({
        "title": { "before": "Task", "after": "Landed?" },
        "deadline": { "before": "2020-01-01", "after": "2021-01-01" },
    });
    let r = api.patch(&format!("/tasks/{tid}"), body).await;
    assert_eq!(
        r.expect_field_error(409, "deadline")["current"],
        json!(null)
    );
    assert_eq!(api.task(&tid).await, before);
}

#[tokio::test]
async fn the_409_names_the_first_failing_field_in_documented_order() {
    let s = Server::start().await;
    let (api, _, _, tid) = setup(&s).await;
    // `priority` comes first in the body, `title` first in the route's field order.
    let body = r#"{"priority":{"before":1,"after":2},"title":{"before":"Wrong","after":"X"}}"#;
    let r = api.patch_text(&format!("/tasks/{tid}"), body).await;
    assert_eq!(r.expect_field_error(409, "title")["current"], json!("Task"));
    let body = r#"{"deadlineTime":{"before":"10:00","after":"11:00"},"effort":{"before":"easy","after":"hard"}}"#;
    let r = api.patch_text(&format!("/tasks/{tid}"), body).await;
    assert_eq!(r.expect_field_error(409, "effort")["current"], json!(null));
}

#[tokio::test]
async fn guards_are_per_field_so_clients_editing_different_fields_do_not_collide() {
    let s = Server::start().await;
    let (key_a, account) = s.issue_key(None).await;
    let (key_b, same) = s.issue_key(Some(&account)).await;
    assert_eq!(account, same);
    let a = s.api_for(&key_a);
    let b = s.api_for(&key_b);
    let (_, cid) = a.board().await;
    let tid = str_of(&a.new_task(&cid, "Shared").await["id"]);
    let path = format!("/tasks/{tid}");

    // Both clients read the same card, then each edits its own field.
    let seen_a = a.task(&tid).await;
    let seen_b = b.task(&tid).await;
    assert_eq!(seen_a, seen_b);
    let r = a
        .patch(
            &path,
            json!({ "title": { "before": seen_a["title"], "after": "A's title" } }),
        )
        .await;
    r.expect_ok(200);
    let r = b
        .patch(
            &path,
            json!({ "priority": { "before": seen_b["priority"], "after": 1 } }),
        )
        .await;
    let task = r.expect_ok(200)["task"].clone();
    assert_eq!(task["title"], json!("A's title"));
    assert_eq!(task["priority"], json!(1));

    // B's stale view of the title now collides, and says what A wrote.
    let r = b
        .patch(
            &path,
            json!({ "title": { "before": seen_b["title"], "after": "B's title" } }),
        )
        .await;
    assert_eq!(
        r.expect_field_error(409, "title")["current"],
        json!("A's title")
    );
    assert_eq!(a.task(&tid).await, task);
}

#[tokio::test]
async fn before_without_after_is_422() {
    let s = Server::start().await;
    let (api, pid, cid, tid) = setup(&s).await;
    let before = api.account().await;
    let r = api
        .patch(
            &format!("/tasks/{tid}"),
            json!({ "title": { "before": "Task" } }),
        )
        .await;
    r.expect_error(422);
    let r = api
        .patch(
            &format!("/projects/{pid}"),
            json!({ "name": { "before": "Board" } }),
        )
        .await;
    r.expect_error(422);
    let r = api
        .patch(
            &format!("/columns/{cid}"),
            json!({ "name": { "before": "To do" } }),
        )
        .await;
    r.expect_error(422);
    assert_eq!(api.account().await, before);
}

#[tokio::test]
async fn before_is_normalised_like_a_written_value() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, cid) = api.board().await;
    let long = "é".repeat(260);
    let task = api
        .create_task(json!({ "columnId": cid, "title": long, "priority": 9 }))
        .await;
    let tid = str_of(&task["id"]);
    let path = format!("/tasks/{tid}");

    // The stored title is the first 250 characters; a guard sending the full text matches.
    let r = api
        .patch(
            &path,
            json!({ "title": { "before": long, "after": "Short" } }),
        )
        .await;
    assert_eq!(r.expect_ok(200)["task"]["title"], json!("Short"));
    // Priority 9 was stored as 4; a guard on 9 matches 4.
    let r = api
        .patch(&path, json!({ "priority": { "before": 9, "after": 2 } }))
        .await;
    assert_eq!(r.expect_ok(200)["task"]["priority"], json!(2));
    // A folder of "" is null.
    let r = api
        .patch(
            &format!("/projects/{pid}"),
            json!({ "folder": { "before": "", "after": "Work" } }),
        )
        .await;
    assert_eq!(r.expect_ok(200)["project"]["folder"], json!("Work"));
    // `after` is normalised too.
    let empty = api.task(&tid).await["location"].clone();
    let r = api
        .patch(
            &path,
            json!({ "location": { "before": empty, "after": "x".repeat(300) } }),
        )
        .await;
    assert_eq!(char_count(&r.expect_ok(200)["task"]["location"]), 200);
}

#[tokio::test]
async fn guards_work_on_nullable_fields_snake_case_and_tags() {
    let s = Server::start().await;
    let (api, _, _, tid) = setup(&s).await;
    let path = format!("/tasks/{tid}");
    let g = json!({ "deadline": { "before": null, "after": "2024-03-01" } });
    let r = api.patch(&path, g.clone()).await;
    assert_eq!(r.expect_ok(200)["task"]["deadline"], json!("2024-03-01"));
    let r = api.patch(&path, g).await;
    assert_eq!(
        r.expect_field_error(409, "deadline")["current"],
        json!("2024-03-01")
    );

    let r = api
        .patch(
            &path,
            json!({ "deadline_time": { "before": null, "after": "06:00" } }),
        )
        .await;
    assert_eq!(r.expect_ok(200)["task"]["deadlineTime"], json!("06:00"));
    let at = now_ms();
    let r = api
        .patch(
            &path,
            json!({ "completedAt": { "before": null, "after": at } }),
        )
        .await;
    assert_eq!(r.expect_ok(200)["task"]["completedAt"], json!(at));
    let r = api
        .patch(
            &path,
            json!({ "completedAt": { "before": null, "after": at + 1 } }),
        )
        .await;
    assert_eq!(
        r.expect_field_error(409, "completedAt")["current"],
        json!(at)
    );

    api.patch(&path, json!({ "tags": ["a", "b"] }))
        .await
        .expect_ok(200);
    let r = api
        .patch(
            &path,
            json!({ "tags": { "before": ["b", "a"], "after": ["c"] } }),
        )
        .await;
    assert_eq!(
        r.expect_field_error(409, "tags")["current"],
        json!(["a", "b"])
    );
    let r = api
        .patch(
            &path,
            json!({ "tags": { "before": ["a", "b"], "after": ["c"] } }),
        )
        .await;
    assert_eq!(r.expect_ok(200)["task"]["tags"], json!(["c"]));
}

#[tokio::test]
async fn guards_work_on_project_and_column_fields() {
    let s = Server::start().await;
    let (api, pid, cid, _) = setup(&s).await;
    let project = api.project(&pid).await;

    let r = api
        .patch(
            &format!("/projects/{pid}"),
            json!({ "name": { "before": "Nope", "after": "X" }, "folder": "F" }),
        )
        .await;
    assert_eq!(r.expect_field_error(409, "name")["current"], json!("Board"));
    assert_eq!(api.project(&pid).await, project);
    let r = api
        .patch(
            &format!("/projects/{pid}"),
            json!({ "name": { "before": "Board", "after": "Renamed" } }),
        )
        .await;
    assert_eq!(r.expect_ok(200)["project"]["name"], json!("Renamed"));
    let t = 1_700_000_000_000i64;
    let r = api
        .patch(
            &format!("/projects/{pid}"),
            json!({ "archivedAt": { "before": t, "after": null } }),
        )
        .await;
    assert_eq!(
        r.expect_field_error(409, "archivedAt")["current"],
        json!(null)
    );

    let path = format!("/columns/{cid}");
    let r = api
        .patch(
            &path,
            json!({ "description": { "before": "old", "after": "new" } }),
        )
        .await;
    assert_eq!(
        r.expect_field_error(409, "description")["current"],
        json!(null)
    );
    let r = api
        .patch(
            &path,
            json!({ "description": { "before": null, "after": "new" } }),
        )
        .await;
    assert_eq!(r.expect_ok(200)["column"]["description"], json!("new"));
    let r = api
        .patch(
            &path,
            json!({ "name": { "before": "To do", "after": "Doing" } }),
        )
        .await;
    assert_eq!(r.expect_ok(200)["column"]["name"], json!("Doing"));
    let r = api
        .patch(
            &path,
            json!({ "name": { "before": "To do", "after": "Done" } }),
        )
        .await;
    assert_eq!(r.expect_field_error(409, "name")["current"], json!("Doing"));
}

/// The discovery document's decision: on a create there is no prior value to guard, so a
/// guard's `after` lands whatever its `before` says. `before` is still checked like a written
/// value, on a card's title as on an item's text, as the OpenAPI document's schemas say.
#[tokio::test]
async fn a_guard_on_a_create_lands_its_after_and_its_before_is_checked_like_a_value() {
    let s = Server::start().await;
    let (api, _, cid, tid) = setup(&s).await;
    let task = api
        .post(
            "/tasks",
            json!({ "columnId": cid, "title": { "before": "Other", "after": "Made" } }),
        )
        .await;
    assert_eq!(task.expect_ok(201)["task"]["title"], json!("Made"));
    let items = format!("/tasks/{tid}/tags");
    let tag = api
        .post(
            &items,
            json!({ "text": { "before": "Other", "after": "urgent" } }),
        )
        .await;
    assert_eq!(tag.expect_ok(201)["task"]["tags"], json!(["urgent"]));

    let untouched = api.task(&tid).await;
    let empty_before = |text: &str| json!({ "text": { "before": "", "after": text } });
    for path in ["tags", "comments", "checklist"] {
        let r = api
            .post(&format!("/tasks/{tid}/{path}"), empty_before("late"))
            .await;
        r.expect_field_error(422, "text");
    }
    let r = api
        .post(
            "/tasks",
            json!({ "columnId": cid, "title": { "before": "", "after": "Made" } }),
        )
        .await;
    r.expect_field_error(422, "title");
    assert_eq!(
        api.task(&tid).await,
        untouched,
        "a refused create wrote something"
    );
}
