//! Task field rules: trimming, the description limit, priority, effort, deadline and
//! deadline time, `columnId` and `parentId` checks, tags, unknown fields and snake_case.

use serde_json::{Value, json};

use crate::harness::*;

/// Creates a board and one task; returns (api, columnId, taskId).
async fn one_task(s: &Server) -> (Api, String, String) {
    let api = s.api();
    let (_, cid) = api.board().await;
    let tid = str_of(&api.new_task(&cid, "Task").await["id"]);
    (api, cid, tid)
}

async fn patch_task(api: &Api, tid: &str, body: Value) -> Reply {
    api.patch(&format!("/tasks/{tid}"), body).await
}

#[tokio::test]
async fn title_is_cut_at_250_and_location_at_200_characters() {
    let s = Server::start().await;
    let (api, cid, tid) = one_task(&s).await;
    let task = api
        .create_task(
            json!({ "columnId": cid, "title": "é".repeat(260), "location": "😀".repeat(201) }),
        )
        .await;
    assert_eq!(task["title"], json!("é".repeat(250)));
    assert_eq!(task["location"], json!("😀".repeat(200)));
    let task = api
        .create_task(json!({ "columnId": cid, "title": " keep spaces ", "location": " x " }))
        .await;
    assert_eq!(task["title"], json!(" keep spaces "));
    assert_eq!(task["location"], json!(" x "));

    let r = patch_task(
        &api,
        &tid,
        json!({ "title": "t".repeat(300), "location": "l".repeat(250) }),
    )
    .await;
    let task = r.expect_ok(200)["task"].clone();
    assert_eq!(char_count(&task["title"]), 250);
    assert_eq!(char_count(&task["location"]), 200);
    assert_eq!(api.task(&tid).await, task);
}

#[tokio::test]
async fn an_empty_or_missing_title_is_422() {
    let s = Server::start().await;
    let (api, cid, tid) = one_task(&s).await;
    api.post("/tasks", json!({ "columnId": cid, "title": "" }))
        .await
        .expect_field_error(422, "title");
    api.post("/tasks", json!({ "columnId": cid }))
        .await
        .expect_field_error(422, "title");
    patch_task(&api, &tid, json!({ "title": "" }))
        .await
        .expect_field_error(422, "title");
    patch_task(&api, &tid, json!({ "title": null }))
        .await
        .expect_field_error(422, "title");
    assert_eq!(api.task(&tid).await["title"], json!("Task"));
}

#[tokio::test]
async fn a_description_over_262144_characters_is_422_and_the_old_one_stands() {
    let s = Server::start().await;
    let (api, cid, tid) = one_task(&s).await;
    // Counted in characters, not bytes: 262,144 two-byte characters fit.
    let full = "é".repeat(262_144);
    let r = patch_task(&api, &tid, json!({ "description": full })).await;
    r.expect_ok(200);
    assert_eq!(char_count(&api.task(&tid).await["description"]), 262_144);
    let before = api.task(&tid).await;

    let r = patch_task(
        &api,
        &tid,
        json!({ "description": "x".repeat(262_145), "title": "Changed" }),
    )
    .await;
    r.expect_field_error(422, "description");
    assert_eq!(
        api.task(&tid).await,
        before,
        "the old description and title stand"
    );

    let body = json!({ "columnId": cid, "title": "Long", "description": "x".repeat(262_145) });
    api.post("/tasks", body)
        .await
        .expect_field_error(422, "description");
    let project = api.project(&str_of(&before["projectId"])).await;
    assert_eq!(task_ids(&project), vec![tid]);
}

#[tokio::test]
async fn priority_defaults_to_4_is_clamped_and_must_be_an_integer() {
    let s = Server::start().await;
    let (api, cid, tid) = one_task(&s).await;
    for (sent, kept) in [(1, 1), (3, 3), (0, 1), (-5, 1), (9, 4), (1000, 4)] {
        let task = api
            .create_task(json!({ "columnId": cid, "title": "P", "priority": sent }))
            .await;
        assert_eq!(task["priority"], json!(kept), "priority {sent}");
    }
    let r = patch_task(&api, &tid, json!({ "priority": 0 })).await;
    assert_eq!(r.expect_ok(200)["task"]["priority"], json!(1));
    let r = patch_task(&api, &tid, json!({ "priority": 9 })).await;
    assert_eq!(r.expect_ok(200)["task"]["priority"], json!(4));
    patch_task(&api, &tid, json!({ "priority": 2 }))
        .await
        .expect_ok(200);
    for bad in [json!(2.5), json!("2"), json!(true)] {
        patch_task(&api, &tid, json!({ "priority": bad }))
            .await
            .expect_field_error(422, "priority");
        let body = json!({ "columnId": cid, "title": "Bad", "priority": bad });
        api.post("/tasks", body)
            .await
            .expect_field_error(422, "priority");
    }
    assert_eq!(api.task(&tid).await["priority"], json!(2));
}

#[tokio::test]
async fn effort_is_easy_medium_hard_or_null() {
    let s = Server::start().await;
    let (api, cid, tid) = one_task(&s).await;
    for effort in ["easy", "medium", "hard"] {
        let r = patch_task(&api, &tid, json!({ "effort": effort })).await;
        assert_eq!(r.expect_ok(200)["task"]["effort"], json!(effort));
        let task = api
            .create_task(json!({ "columnId": cid, "title": "E", "effort": effort }))
            .await;
        assert_eq!(task["effort"], json!(effort));
    }
    for bad in [json!("extreme"), json!(""), json!(2)] {
        patch_task(&api, &tid, json!({ "effort": bad }))
            .await
            .expect_field_error(422, "effort");
    }
    assert_eq!(api.task(&tid).await["effort"], json!("hard"));
    let r = patch_task(&api, &tid, json!({ "effort": null })).await;
    assert_eq!(r.expect_ok(200)["task"]["effort"], json!(null));
}

#[tokio::test]
async fn deadline_must_be_a_real_yyyy_mm_dd_date() {
    let s = Server::start().await;
    let (api, cid, tid) = one_task(&s).await;
    for good in ["2024-02-29", "2023-12-31", "2000-02-29", "2025-01-01"] {
        let r = patch_task(&api, &tid, json!({ "deadline": good })).await;
        assert_eq!(r.expect_ok(200)["task"]["deadline"], json!(good));
    }
    for bad in [
        "2023-02-29",
        "2024-2-1",
        "2024-02-1",
        "2024-13-01",
        "2024-04-31",
        "1900-02-29",
        "2024-02-29T10:00",
        "29.02.2024",
        "",
        "tomorrow",
    ] {
        let r = patch_task(&api, &tid, json!({ "deadline": bad })).await;
        r.expect_field_error(422, "deadline");
        let body = json!({ "columnId": cid, "title": "Bad", "deadline": bad });
        api.post("/tasks", body)
            .await
            .expect_field_error(422, "deadline");
    }
    assert_eq!(api.task(&tid).await["deadline"], json!("2025-01-01"));
    let r = patch_task(&api, &tid, json!({ "deadline": null })).await;
    assert_eq!(r.expect_ok(200)["task"]["deadline"], json!(null));
}

#[tokio::test]
async fn deadline_time_must_be_strict_24_hour_hh_mm() {
    let s = Server::start().await;
    let (api, cid, tid) = one_task(&s).await;
    for good in ["09:30", "00:00", "23:59", "12:05"] {
        let r = patch_task(&api, &tid, json!({ "deadlineTime": good })).await;
        assert_eq!(r.expect_ok(200)["task"]["deadlineTime"], json!(good));
    }
    for bad in [
        "9:30", "24:00", "12:60", "09:30:00", "0930", "09:3", "9:30 am", "", "25:00",
    ] {
        let r = patch_task(&api, &tid, json!({ "deadlineTime": bad })).await;
        r.expect_field_error(422, "deadlineTime");
        let body = json!({ "columnId": cid, "title": "Bad", "deadlineTime": bad });
        api.post("/tasks", body)
            .await
            .expect_field_error(422, "deadlineTime");
    }
    assert_eq!(api.task(&tid).await["deadlineTime"], json!("12:05"));
}

#[tokio::test]
async fn deadline_and_deadline_time_are_independent() {
    let s = Server::start().await;
    let (api, cid, tid) = one_task(&s).await;
    let day_only = api
        .create_task(json!({ "columnId": cid, "title": "D", "deadline": "2024-05-01" }))
        .await;
    assert_eq!(
        (
            day_only["deadline"].clone(),
            day_only["deadlineTime"].clone()
        ),
        (json!("2024-05-01"), json!(null))
    );
    let time_only = api
        .create_task(json!({ "columnId": cid, "title": "T", "deadlineTime": "18:00" }))
        .await;
    assert_eq!(
        (
            time_only["deadline"].clone(),
            time_only["deadlineTime"].clone()
        ),
        (json!(null), json!("18:00"))
    );

    let pair = |t: &Value| (t["deadline"].clone(), t["deadlineTime"].clone());
    let r = patch_task(
        &api,
        &tid,
        json!({ "deadline": "2024-06-01", "deadlineTime": "08:15" }),
    )
    .await;
    assert_eq!(
        pair(&r.expect_ok(200)["task"]),
        (json!("2024-06-01"), json!("08:15"))
    );
    let r = patch_task(&api, &tid, json!({ "deadline": null })).await;
    assert_eq!(
        pair(&r.expect_ok(200)["task"]),
        (json!(null), json!("08:15"))
    );
    let r = patch_task(&api, &tid, json!({ "deadline": "2024-07-01" })).await;
    assert_eq!(
        pair(&r.expect_ok(200)["task"]),
        (json!("2024-07-01"), json!("08:15"))
    );
    let r = patch_task(&api, &tid, json!({ "deadlineTime": null })).await;
    assert_eq!(
        pair(&r.expect_ok(200)["task"]),
        (json!("2024-07-01"), json!(null))
    );
    assert_eq!(
        pair(&api.task(&tid).await),
        (json!("2024-07-01"), json!(null))
    );
}

#[tokio::test]
async fn column_id_missing_unknown_or_another_accounts_is_422_naming_it() {
    let s = Server::start().await;
    let (api, cid, tid) = one_task(&s).await;
    let (other_key, _) = s.issue_key(None).await;
    let other = s.api_for(&other_key);
    let (their_pid, theirs) = other.board().await;

    api.post("/tasks", json!({ "title": "No column" }))
        .await
        .expect_field_error(422, "columnId");
    let r = api
        .post("/tasks", json!({ "columnId": "c_nothere", "title": "X" }))
        .await;
    r.expect_field_error(422, "columnId");
    let r = api
        .post("/tasks", json!({ "columnId": theirs, "title": "X" }))
        .await;
    r.expect_field_error(422, "columnId");
    patch_task(&api, &tid, json!({ "columnId": theirs }))
        .await
        .expect_field_error(422, "columnId");
    patch_task(&api, &tid, json!({ "columnId": null }))
        .await
        .expect_field_error(422, "columnId");

    assert!(task_ids(&other.project(&their_pid).await).is_empty());
    assert_eq!(api.task(&tid).await["columnId"], json!(cid));
}

#[tokio::test]
async fn subtasks_go_one_level_deep_within_one_project() {
    let s = Server::start().await;
    let (api, cid, parent) = one_task(&s).await;
    let sub = api
        .create_task(json!({ "columnId": cid, "title": "Sub", "parentId": parent }))
        .await;
    assert_eq!(sub["parentId"], json!(parent));
    let sub = str_of(&sub["id"]);
    let lone = str_of(&api.new_task(&cid, "Lone").await["id"]);

    // A subtask cannot be a parent; a parent cannot become a subtask.
    let r = api
        .post(
            "/tasks",
            json!({ "columnId": cid, "title": "Deep", "parentId": sub }),
        )
        .await;
    r.expect_field_error(422, "parentId");
    patch_task(&api, &lone, json!({ "parentId": sub }))
        .await
        .expect_field_error(422, "parentId");
    patch_task(&api, &parent, json!({ "parentId": lone }))
        .await
        .expect_field_error(422, "parentId");
    patch_task(&api, &lone, json!({ "parentId": lone }))
        .await
        .expect_field_error(422, "parentId");
    let r = api
        .post(
            "/tasks",
            json!({ "columnId": cid, "title": "X", "parentId": "t_nothere" }),
        )
        .await;
    r.expect_field_error(422, "parentId");

    // A subtask lives in its parent's project.
    let (_, elsewhere) = api.board().await;
    let r = api
        .post(
            "/tasks",
            json!({ "columnId": elsewhere, "title": "X", "parentId": parent }),
        )
        .await;
    assert_eq!(r.status, 422, "{}", r.text);
    patch_task(&api, &sub, json!({ "columnId": elsewhere }))
        .await
        .expect_field_error(422, "columnId");
    patch_task(&api, &parent, json!({ "columnId": elsewhere }))
        .await
        .expect_field_error(422, "columnId");

    let r = patch_task(&api, &lone, json!({ "parentId": parent })).await;
    assert_eq!(r.expect_ok(200)["task"]["parentId"], json!(parent));
    let r = patch_task(&api, &sub, json!({ "parentId": null })).await;
    assert_eq!(r.expect_ok(200)["task"]["parentId"], json!(null));
    assert_eq!(api.task(&sub).await["parentId"], json!(null));
}

#[tokio::test]
async fn completing_a_parent_completes_its_open_subtasks_only() {
    let s = Server::start().await;
    let api = s.api();
    let (_, cid) = api.board().await;
    let parent = str_of(&api.new_task(&cid, "Parent").await["id"]);
    let open = api
        .create_task(json!({ "columnId": cid, "title": "Open", "parentId": parent }))
        .await;
    let early = days_ago(2);
    let done =
        json!({ "columnId": cid, "title": "Done", "parentId": parent, "completedAt": early });
    let done = api.create_task(done).await;
    let (open, done) = (str_of(&open["id"]), str_of(&done["id"]));

    let at = now_ms();
    api.patch(&format!("/tasks/{parent}"), json!({ "completedAt": at }))
        .await
        .expect_ok(200);
    assert_eq!(api.task(&open).await["completedAt"], json!(at));
    assert_eq!(api.task(&done).await["completedAt"], json!(early));

    api.patch(&format!("/tasks/{parent}"), json!({ "completedAt": null }))
        .await
        .expect_ok(200);
    assert_eq!(api.task(&parent).await["completedAt"], json!(null));
    assert_eq!(
        api.task(&open).await["completedAt"],
        json!(at),
        "subtasks are untouched"
    );
}

#[tokio::test]
async fn tags_are_strings_at_most_5_and_patch_replaces_the_list() {
    let s = Server::start().await;
    let (api, cid, tid) = one_task(&s).await;
    let r = patch_task(&api, &tid, json!({ "tags": ["a", "b", "c"] })).await;
    let task = r.expect_ok(200)["task"].clone();
    assert_eq!(task["tags"], json!(["a", "b", "c"]));
    let tag_ids = task["tagIds"].as_array().unwrap().clone();
    assert_eq!(tag_ids.len(), 3);

    let r = patch_task(&api, &tid, json!({ "tags": ["c", "d"] })).await;
    let task = r.expect_ok(200)["task"].clone();
    assert_eq!(task["tags"], json!(["c", "d"]));
    assert_eq!(
        task["tagIds"][0], tag_ids[2],
        "a tag whose text stays keeps its id"
    );

    let six = json!(["1", "2", "3", "4", "5", "6"]);
    patch_task(&api, &tid, json!({ "tags": six }))
        .await
        .expect_field_error(422, "tags");
    let body = json!({ "columnId": cid, "title": "Six", "tags": six });
    api.post("/tasks", body)
        .await
        .expect_field_error(422, "tags");
    patch_task(&api, &tid, json!({ "tags": [""] }))
        .await
        .expect_error(422);
    assert_eq!(api.task(&tid).await["tags"], json!(["c", "d"]));
}

#[tokio::test]
async fn unknown_task_fields_are_422_and_read_only_fields_are_ignored_on_create() {
    let s = Server::start().await;
    let (api, cid, tid) = one_task(&s).await;
    let r = api
        .post(
            "/tasks",
            json!({ "columnId": cid, "title": "X", "assignee": "bob" }),
        )
        .await;
    let body = r.expect_field_error(422, "assignee");
    let accepted = body["accepted"].as_array().expect("accepted").clone();
    for field in [
        "id",
        "columnId",
        "title",
        "description",
        "priority",
        "effort",
        "deadline",
        "deadlineTime",
        "location",
        "parentId",
        "position",
        "tags",
        "completedAt",
        "cancelledAt",
    ] {
        assert!(
            accepted.contains(&json!(field)),
            "{field} missing from {accepted:?}"
        );
    }
    let r = patch_task(&api, &tid, json!({ "title": "Changed", "assignee": "bob" })).await;
    r.expect_field_error(422, "assignee");
    assert_eq!(api.task(&tid).await["title"], json!("Task"));

    // A read sent back on create lands as it left; read-only fields are ignored.
    let mut read = api.task(&tid).await;
    let project_id = read["projectId"].clone();
    read["id"] = json!("t_copy");
    read["rev"] = json!(999_999);
    read["order"] = json!(42);
    read["updatedAt"] = json!(1);
    read["projectId"] = json!("b_whatever");
    let copy = api.create_task(read).await;
    assert_eq!(copy["title"], json!("Task"));
    assert_eq!(copy["projectId"], project_id);
    assert_ne!(copy["rev"], json!(999_999));
    assert_ne!(copy["updatedAt"], json!(1));
}

#[tokio::test]
async fn snake_case_task_fields_are_accepted_and_both_spellings_are_422() {
    let s = Server::start().await;
    let (api, cid, tid) = one_task(&s).await;
    let done = days_ago(1);
    let body = json!({ "column_id": cid, "title": "Snake", "deadline_time": "07:45", "completed_at": done });
    let task = api.create_task(body).await;
    assert_eq!(task["columnId"], json!(cid));
    assert_eq!(task["deadlineTime"], json!("07:45"));
    assert_eq!(task["completedAt"], json!(done));
    assert!(task.get("deadline_time").is_none());

    let r = patch_task(
        &api,
        &tid,
        json!({ "deadline_time": "10:00", "parent_id": null }),
    )
    .await;
    assert_eq!(r.expect_ok(200)["task"]["deadlineTime"], json!("10:00"));
    let r = patch_task(
        &api,
        &tid,
        json!({ "deadlineTime": "11:00", "deadline_time": "11:00" }),
    )
    .await;
    r.expect_error(422);
    assert_eq!(api.task(&tid).await["deadlineTime"], json!("10:00"));
    let body = json!({ "columnId": cid, "column_id": cid, "title": "Both" });
    api.post("/tasks", body).await.expect_error(422);
}
