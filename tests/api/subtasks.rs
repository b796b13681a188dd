//! Subtasks (issue 3): `parentId` one level deep inside one project, the completion cascade,
//! and moves of parents and subtasks.

use serde_json::{Value, json};

use crate::harness::*;

fn rev(task: &Value) -> i64 {
    task["rev"]
        .as_i64()
        .unwrap_or_else(|| panic!("rev is not an integer: {task}"))
}

async fn patch_task(api: &Api, tid: &str, body: Value) -> Reply {
    api.patch(&format!("/tasks/{tid}"), body).await
}

async fn sub_of(api: &Api, cid: &str, parent: &str, title: &str) -> String {
    let body = json!({ "columnId": cid, "title": title, "parentId": parent });
    let task = api.create_task(body).await;
    assert_eq!(task["parentId"], json!(parent), "create reply of {title}");
    str_of(&task["id"])
}

/// The column of a project read holding `tid`.
fn column_of(project: &Value, tid: &str) -> String {
    for column in project["columns"].as_array().expect("columns") {
        if ids(&column["tasks"]).contains(&tid.to_string()) {
            return str_of(&column["id"]);
        }
    }
    panic!("{tid} is in no column of {project}");
}

#[tokio::test]
async fn parent_id_on_create_or_patch_makes_a_subtask_and_null_lifts_it() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, c1) = api.board().await;
    let c2 = api.new_column(&pid, "Doing").await;
    let parent = str_of(&api.new_task(&c1, "Parent").await["id"]);
    // A subtask may sit in another column of the parent's project.
    let sub = sub_of(&api, &c2, &parent, "Sub").await;
    let lone = str_of(&api.new_task(&c2, "Lone").await["id"]);

    let r = patch_task(&api, &lone, json!({ "parentId": parent })).await;
    let patched = r.expect_ok(200)["task"].clone();
    assert_eq!(patched["parentId"], json!(parent));
    assert_eq!(api.task(&lone).await, patched);

    // Subtasks sit in their own column's tasks with parentId set.
    let project = api.project(&pid).await;
    assert_eq!(column_of(&project, &sub), c2);
    assert_eq!(column_of(&project, &lone), c2);
    for id in [&sub, &lone] {
        assert_eq!(find_task(&project, id).unwrap()["parentId"], json!(parent));
    }
    assert_eq!(
        find_task(&project, &parent).unwrap()["parentId"],
        json!(null)
    );

    // null lifts it to the top level; snake_case works too.
    let r = patch_task(&api, &sub, json!({ "parentId": null })).await;
    assert_eq!(r.expect_ok(200)["task"]["parentId"], json!(null));
    let r = patch_task(&api, &lone, json!({ "parent_id": null })).await;
    assert_eq!(r.expect_ok(200)["task"]["parentId"], json!(null));
    let project = api.project(&pid).await;
    assert!(
        tasks_of(&project).iter().all(|t| t["parentId"].is_null()),
        "{project}"
    );
    // Once it has no subtasks left, the former parent can itself become a subtask.
    let r = patch_task(&api, &parent, json!({ "parentId": sub })).await;
    assert_eq!(r.expect_ok(200)["task"]["parentId"], json!(sub));
}

#[tokio::test]
async fn a_subtask_cannot_be_a_parent() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, cid) = api.board().await;
    let parent = str_of(&api.new_task(&cid, "Parent").await["id"]);
    let sub = sub_of(&api, &cid, &parent, "Sub").await;
    let lone = str_of(&api.new_task(&cid, "Lone").await["id"]);
    let before = api.account().await;

    let body = json!({ "columnId": cid, "title": "Deep", "parentId": sub });
    api.post("/tasks", body)
        .await
        .expect_field_error(422, "parentId");
    patch_task(&api, &lone, json!({ "parentId": sub }))
        .await
        .expect_field_error(422, "parentId");
    // Also when other fields ride along: nothing of the request lands.
    patch_task(&api, &lone, json!({ "title": "Changed", "parentId": sub }))
        .await
        .expect_field_error(422, "parentId");
    assert_eq!(
        api.account().await,
        before,
        "a refused write changed something"
    );
    assert_eq!(task_ids(&api.project(&pid).await).len(), 3);
}

#[tokio::test]
async fn a_card_with_subtasks_cannot_become_a_subtask_nor_its_own_parent() {
    let s = Server::start().await;
    let api = s.api();
    let (_, cid) = api.board().await;
    let parent = str_of(&api.new_task(&cid, "Parent").await["id"]);
    let sub = sub_of(&api, &cid, &parent, "Sub").await;
    let lone = str_of(&api.new_task(&cid, "Lone").await["id"]);
    let before = api.account().await;

    patch_task(&api, &parent, json!({ "parentId": lone }))
        .await
        .expect_field_error(422, "parentId");
    for tid in [&lone, &parent, &sub] {
        patch_task(&api, tid, json!({ "parentId": tid }))
            .await
            .expect_field_error(422, "parentId");
    }
    // A create naming its own id as parent: that card does not exist yet.
    let body = json!({ "id": "t_self", "columnId": cid, "title": "Self", "parentId": "t_self" });
    api.post("/tasks", body)
        .await
        .expect_field_error(422, "parentId");
    api.get("/tasks/t_self").await.expect_error(404);
    assert_eq!(api.account().await, before);
}

#[tokio::test]
async fn the_parent_must_be_a_live_card_of_the_same_project_and_account() {
    let s = Server::start().await;
    let api = s.api();
    let (_, cid) = api.board().await;
    let (_, elsewhere) = api.board().await;
    let lone = str_of(&api.new_task(&cid, "Lone").await["id"]);
    let far = str_of(&api.new_task(&elsewhere, "Far").await["id"]);
    let binned = str_of(&api.new_task(&cid, "Binned").await["id"]);
    api.delete(&format!("/tasks/{binned}")).await.expect_ok(200);
    let (other_key, _) = s.issue_key(None).await;
    let other = s.api_for(&other_key);
    let (_, their_col) = other.board().await;
    let theirs = str_of(&other.new_task(&their_col, "Theirs").await["id"]);
    let before = api.account().await;

    for bad in ["t_nothere", binned.as_str(), theirs.as_str(), far.as_str()] {
        let body = json!({ "columnId": cid, "title": "X", "parentId": bad });
        api.post("/tasks", body)
            .await
            .expect_field_error(422, "parentId");
        patch_task(&api, &lone, json!({ "parentId": bad }))
            .await
            .expect_field_error(422, "parentId");
    }
    // A create into another project than the parent's.
    let lone_in_elsewhere = json!({ "columnId": elsewhere, "title": "X", "parentId": lone });
    let r = api.post("/tasks", lone_in_elsewhere).await;
    let body = r.expect_error(422);
    assert!(
        body["field"] == json!("parentId") || body["field"] == json!("columnId"),
        "{}",
        r.text
    );
    assert_eq!(api.account().await, before);
    assert_eq!(other.task(&theirs).await["parentId"], json!(null));
}

#[tokio::test]
async fn a_subtask_or_a_parent_cannot_move_to_another_project() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, c1) = api.board().await;
    let c2 = api.new_column(&pid, "Doing").await;
    let (pid2, elsewhere) = api.board().await;
    let parent = str_of(&api.new_task(&c1, "Parent").await["id"]);
    let sub = sub_of(&api, &c1, &parent, "Sub").await;
    let before = api.account().await;

    for tid in [&parent, &sub] {
        patch_task(&api, tid, json!({ "columnId": elsewhere }))
            .await
            .expect_field_error(422, "columnId");
        patch_task(
            &api,
            tid,
            json!({ "column_id": elsewhere, "title": "Moved" }),
        )
        .await
        .expect_field_error(422, "columnId");
    }
    assert_eq!(
        api.account().await,
        before,
        "a refused move changed something"
    );

    // Inside the project both move freely and stay linked.
    let r = patch_task(&api, &sub, json!({ "columnId": c2 })).await;
    let moved = r.expect_ok(200)["task"].clone();
    assert_eq!(
        (moved["columnId"].clone(), moved["parentId"].clone()),
        (json!(c2), json!(parent))
    );

    // Lifted, the subtask may leave; then the parent has no subtask and may leave too.
    patch_task(&api, &sub, json!({ "parentId": null }))
        .await
        .expect_ok(200);
    let r = patch_task(&api, &sub, json!({ "columnId": elsewhere })).await;
    assert_eq!(r.expect_ok(200)["task"]["projectId"], json!(pid2));
    let r = patch_task(&api, &parent, json!({ "columnId": elsewhere })).await;
    assert_eq!(r.expect_ok(200)["task"]["projectId"], json!(pid2));
}

#[tokio::test]
async fn moving_a_parent_to_another_column_does_not_move_its_subtasks() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, c1) = api.board().await;
    let c2 = api.new_column(&pid, "Done").await;
    let parent = str_of(&api.new_task(&c1, "Parent").await["id"]);
    let sub1 = sub_of(&api, &c1, &parent, "Sub 1").await;
    let sub2 = sub_of(&api, &c1, &parent, "Sub 2").await;
    let sub_revs = [rev(&api.task(&sub1).await), rev(&api.task(&sub2).await)];

    let r = patch_task(&api, &parent, json!({ "columnId": c2 })).await;
    assert_eq!(r.expect_ok(200)["task"]["columnId"], json!(c2));
    let project = api.project(&pid).await;
    assert_eq!(column_of(&project, &parent), c2);
    for (sub, old_rev) in [(&sub1, sub_revs[0]), (&sub2, sub_revs[1])] {
        assert_eq!(column_of(&project, sub), c1, "{sub} moved with its parent");
        let read = find_task(&project, sub).unwrap();
        assert_eq!(read["columnId"], json!(c1));
        assert_eq!(read["parentId"], json!(parent));
        assert_eq!(
            rev(&read),
            old_rev,
            "{sub} was written by the parent's move"
        );
    }
}

#[tokio::test]
async fn completing_a_parent_stamps_its_open_subtasks_with_the_same_time() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, c1) = api.board().await;
    let c2 = api.new_column(&pid, "Elsewhere").await;
    let parent = str_of(&api.new_task(&c1, "Parent").await["id"]);
    let open1 = sub_of(&api, &c1, &parent, "Open 1").await;
    let open2 = sub_of(&api, &c2, &parent, "Open 2 in another column").await;
    let early = days_ago(3);
    let body =
        json!({ "columnId": c1, "title": "Finished", "parentId": parent, "completedAt": early });
    let finished = api.create_task(body).await;
    let fin = str_of(&finished["id"]);
    let bystander = str_of(&api.new_task(&c1, "Not a subtask").await["id"]);

    let at = now_ms() - 12_345;
    let r = patch_task(&api, &parent, json!({ "completedAt": at })).await;
    let done = r.expect_ok(200)["task"].clone();
    assert_eq!(done["completedAt"], json!(at));
    for sub in [&open1, &open2] {
        let read = api.task(sub).await;
        assert_eq!(read["completedAt"], json!(at), "{sub} not stamped");
        assert_eq!(
            read["updatedAt"], done["updatedAt"],
            "one request, one stamp"
        );
        assert!(rev(&read) > rev(&finished));
    }
    let fin_read = api.task(&fin).await;
    assert_eq!(
        fin_read["completedAt"],
        json!(early),
        "a finished subtask keeps its time"
    );
    assert_eq!(
        rev(&fin_read),
        rev(&finished),
        "a finished subtask is not written"
    );
    assert_eq!(api.task(&bystander).await["completedAt"], json!(null));

    // Reopening reopens only the parent.
    let subs_before = [api.task(&open1).await, api.task(&open2).await];
    let r = patch_task(&api, &parent, json!({ "completedAt": null })).await;
    assert_eq!(r.expect_ok(200)["task"]["completedAt"], json!(null));
    assert_eq!(api.task(&open1).await, subs_before[0]);
    assert_eq!(api.task(&open2).await, subs_before[1]);

    // Reopen one subtask; completing the parent again (open → completed) stamps it anew,
    // and a guarded completion cascades the same way.
    patch_task(&api, &open1, json!({ "completedAt": null }))
        .await
        .expect_ok(200);
    let again = now_ms() - 999;
    let guarded = json!({ "completedAt": { "before": null, "after": again } });
    patch_task(&api, &parent, guarded).await.expect_ok(200);
    assert_eq!(api.task(&open1).await["completedAt"], json!(again));
    assert_eq!(
        api.task(&open2).await["completedAt"],
        json!(at),
        "finished keeps its own"
    );
}

#[tokio::test]
async fn a_completed_parent_changing_its_time_does_not_cascade() {
    let s = Server::start().await;
    let api = s.api();
    let (_, cid) = api.board().await;
    let parent = str_of(&api.new_task(&cid, "Parent").await["id"]);
    let sub = sub_of(&api, &cid, &parent, "Sub").await;
    let first = now_ms() - 50_000;
    patch_task(&api, &parent, json!({ "completedAt": first }))
        .await
        .expect_ok(200);
    assert_eq!(api.task(&sub).await["completedAt"], json!(first));
    patch_task(&api, &sub, json!({ "completedAt": null }))
        .await
        .expect_ok(200);
    let open_sub = api.task(&sub).await;
    // completed → completed is not "open → completed": no cascade.
    patch_task(&api, &parent, json!({ "completedAt": first + 1 }))
        .await
        .expect_ok(200);
    assert_eq!(api.task(&sub).await, open_sub);
}

#[tokio::test]
async fn a_create_with_completed_at_never_cascades() {
    let s = Server::start().await;
    let api = s.api();
    let (_, cid) = api.board().await;
    let done = days_ago(5);
    let body =
        json!({ "id": "t_par", "columnId": cid, "title": "Done parent", "completedAt": done });
    api.create_task(body).await;
    let sub = sub_of(&api, &cid, "t_par", "Open sub").await;
    assert_eq!(api.task(&sub).await["completedAt"], json!(null));
    assert_eq!(api.task("t_par").await["completedAt"], json!(done));

    // In one batch: a finished parent followed by its open subtask.
    let batch = json!({ "tasks": [
        { "id": "t_bp", "columnId": cid, "title": "Batch parent", "completedAt": done },
        { "id": "t_bs", "columnId": cid, "title": "Batch sub", "parentId": "t_bp" },
    ] });
    api.post("/tasks", batch).await.expect_ok(201);
    assert_eq!(api.task("t_bs").await["completedAt"], json!(null));
    assert_eq!(api.task("t_bs").await["parentId"], json!("t_bp"));
}

#[tokio::test]
async fn a_guarded_parent_id_lands_only_while_it_holds_before() {
    let s = Server::start().await;
    let api = s.api();
    let (_, cid) = api.board().await;
    let parent = str_of(&api.new_task(&cid, "Parent").await["id"]);
    let lone = str_of(&api.new_task(&cid, "Lone").await["id"]);
    let guard = json!({ "parentId": { "before": null, "after": parent } });
    let r = patch_task(&api, &lone, guard.clone()).await;
    assert_eq!(r.expect_ok(200)["task"]["parentId"], json!(parent));
    let r = patch_task(&api, &lone, guard).await;
    assert_eq!(
        r.expect_field_error(409, "parentId")["current"],
        json!(parent)
    );
    let r = patch_task(
        &api,
        &lone,
        json!({ "parentId": { "before": parent, "after": null } }),
    )
    .await;
    assert_eq!(r.expect_ok(200)["task"]["parentId"], json!(null));
}
