//! Tasks: create, read, update, delete, the whole task shape, `rev`, `order`, `updatedAt`,
//! moving between columns, the completed filter and client ids.

use serde_json::{Value, json};

use crate::harness::*;

const TASK_KEYS: &[&str] = &[
    "id",
    "projectId",
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
    "completedAt",
    "cancelledAt",
    "repeat",
    "rev",
    "order",
    "updatedAt",
    "tags",
    "tagIds",
    "checklist",
    "comments",
];

fn rev(task: &Value) -> i64 {
    task["rev"]
        .as_i64()
        .unwrap_or_else(|| panic!("rev is not an integer: {task}"))
}

#[tokio::test]
async fn create_answers_201_with_the_whole_task_as_read() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, cid) = api.board().await;
    let r = api
        .post("/tasks", json!({ "columnId": cid, "title": "Write tests" }))
        .await;
    let body = r.expect_ok(201);
    let tid = str_of(&body["id"]);
    assert!(tid.starts_with("t_"), "task id {tid}");
    let task = body["task"].clone();
    assert_keys(&task, TASK_KEYS);
    assert_eq!(task["id"], json!(tid));
    assert_eq!(task["projectId"], json!(pid));
    assert_eq!(task["columnId"], json!(cid));
    assert_eq!(task["title"], json!("Write tests"));
    for empty in ["description", "location"] {
        assert!(
            task[empty].is_null() || task[empty] == json!(""),
            "{empty}: {}",
            task[empty]
        );
    }
    assert_eq!(task["priority"], json!(4), "priority defaults to 4");
    for null in [
        "effort",
        "deadline",
        "deadlineTime",
        "parentId",
        "completedAt",
        "cancelledAt",
    ] {
        assert_eq!(task[null], json!(null), "{null}");
    }
    for empty in ["tags", "tagIds", "checklist", "comments"] {
        assert_eq!(task[empty], json!([]), "{empty}");
    }
    assert!(rev(&task) > 0);
    assert_eq!(task["order"], json!(0));
    assert!(task["position"].as_f64().is_some());
    assert!(task["updatedAt"].is_i64());

    let r = api.get(&format!("/tasks/{tid}")).await;
    assert_keys(r.expect_ok(200), &["ok", "task"]);
    assert_eq!(
        r.body["task"], task,
        "GET /tasks/:id differs from the create reply"
    );
    let project = api.project(&pid).await;
    assert_eq!(
        find_task(&project, &tid),
        Some(task.clone()),
        "the project read differs"
    );
    assert_eq!(project["columns"][0]["tasks"], json!([task]));
    assert_eq!(project["updatedAt"], task["updatedAt"]);
}

#[tokio::test]
async fn every_field_lands_on_create_and_reads_back() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, cid) = api.board().await;
    let parent = str_of(&api.new_task(&cid, "Parent").await["id"]);
    let done_at = days_ago(3);
    let body = json!({
        "id": "t_full",
        "columnId": cid,
        "title": "Full",
        "description": "# Heading\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```rust\nfn main() {}\n```",
        "priority": 2,
        "effort": "medium",
        "deadline": "2024-02-29",
        "deadlineTime": "09:30",
        "location": "Room 4",
        "parentId": parent,
        "position": 7.5,
        "tags": ["urgent", "home"],
        "completedAt": done_at,
    });
    let task = api.create_task(body.clone()).await;
    for key in [
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
        "tags",
        "completedAt",
    ] {
        assert_eq!(task[key], body[key], "{key}");
    }
    assert_eq!(task["position"].as_f64(), Some(7.5));
    assert_eq!(task["projectId"], json!(pid));
    let tag_ids = task["tagIds"].as_array().expect("tagIds");
    assert_eq!(tag_ids.len(), 2);
    assert!(
        tag_ids
            .iter()
            .all(|t| t.as_str().is_some_and(|t| t.starts_with("g_")))
    );
    assert_eq!(api.task("t_full").await, task);
}

#[tokio::test]
async fn patch_answers_the_whole_task_and_raises_rev_on_every_write() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, cid) = api.board().await;
    let task = api.new_task(&cid, "First").await;
    let tid = str_of(&task["id"]);
    let mut last = rev(&task);
    let writes = [
        json!({ "title": "Second" }),
        json!({ "priority": 1 }),
        json!({ "effort": "hard", "location": "Desk" }),
        json!({ "deadline": "2025-01-31" }),
        json!({ "description": "More words" }),
        json!({ "position": -4.5 }),
    ];
    for write in &writes {
        let r = api.patch(&format!("/tasks/{tid}"), write.clone()).await;
        let patched = r.expect_ok(200)["task"].clone();
        assert_keys(&patched, TASK_KEYS);
        for (k, v) in write.as_object().unwrap() {
            if k == "position" {
                assert_eq!(patched[k].as_f64(), v.as_f64());
            } else {
                assert_eq!(&patched[k], v, "{k}");
            }
        }
        assert!(rev(&patched) > last, "rev did not rise after {write}");
        last = rev(&patched);
        assert_eq!(
            api.task(&tid).await,
            patched,
            "the next read differs from the reply"
        );
        assert_eq!(api.project(&pid).await["updatedAt"], patched["updatedAt"]);
    }
    // A write that changes nothing raises nothing.
    let before = api.task(&tid).await;
    let r = api
        .patch(
            &format!("/tasks/{tid}"),
            json!({ "title": "Second", "priority": 1 }),
        )
        .await;
    assert_eq!(r.expect_ok(200)["task"], before);
    assert_eq!(api.task(&tid).await, before);

    // `rev` is the account's counter: a new task elsewhere takes a higher one.
    let other = api
        .new_task(&api.new_column(&pid, "Other").await, "Other")
        .await;
    assert!(rev(&other) > last);
    api.patch("/tasks/t_unknown", json!({ "title": "x" }))
        .await
        .expect_error(404);
}

#[tokio::test]
async fn delete_removes_the_task_and_its_subtasks() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, cid) = api.board().await;
    let parent = str_of(&api.new_task(&cid, "Parent").await["id"]);
    let sub1 = api
        .create_task(json!({ "columnId": cid, "title": "Sub 1", "parentId": parent }))
        .await;
    let sub2 = api
        .create_task(json!({ "columnId": cid, "title": "Sub 2", "parentId": parent }))
        .await;
    let kept = str_of(&api.new_task(&cid, "Kept").await["id"]);
    let single = str_of(&api.new_task(&cid, "Single").await["id"]);

    let r = api.delete(&format!("/tasks/{single}")).await;
    assert_eq!(
        r.expect_ok(200),
        &json!({ "ok": true, "id": single, "deleted": 1 })
    );
    let r = api.delete(&format!("/tasks/{parent}")).await;
    let body = r.expect_ok(200);
    assert_eq!(body["id"], json!(parent));
    assert_eq!(body["deleted"], json!(3));

    for tid in [&parent, &str_of(&sub1["id"]), &str_of(&sub2["id"]), &single] {
        api.get(&format!("/tasks/{tid}")).await.expect_error(404);
        api.patch(&format!("/tasks/{tid}"), json!({ "title": "x" }))
            .await
            .expect_error(404);
        api.delete(&format!("/tasks/{tid}")).await.expect_error(404);
    }
    assert_eq!(task_ids(&api.project(&pid).await), vec![kept]);
}

#[tokio::test]
async fn new_tasks_land_at_the_top_and_columns_read_by_position_then_id() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, cid) = api.board().await;
    let a = api
        .create_task(json!({ "columnId": cid, "title": "A", "position": 7.5 }))
        .await;
    let b = api.new_task(&cid, "B").await;
    assert_eq!(b["position"].as_f64(), Some(6.5), "lowest sibling minus 1");
    api.create_task(json!({ "id": "t_zz", "columnId": cid, "title": "Z", "position": 7.5 }))
        .await;
    api.create_task(json!({ "id": "t_00", "columnId": cid, "title": "0", "position": 7.5 }))
        .await;
    let mut tied = vec![str_of(&a["id"]), "t_zz".to_string(), "t_00".to_string()];
    tied.sort();
    let mut expected = vec![str_of(&b["id"])];
    expected.extend(tied);
    assert_eq!(task_ids(&api.project(&pid).await), expected);
}

#[tokio::test]
async fn order_is_the_index_among_the_projects_tasks_by_position_then_id() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, c1) = api.board().await;
    let c2 = api.new_column(&pid, "Second").await;
    let other_project = api.board().await.1;
    let mk = |id: &str, col: &str, pos: f64| json!({ "id": id, "columnId": col, "title": id, "position": pos });
    api.create_task(mk("t_e", &c1, 5.0)).await;
    api.create_task(mk("t_a", &c1, 1.0)).await;
    api.create_task(mk("t_c", &c2, 3.0)).await;
    api.create_task(mk("t_b", &c2, 3.0)).await;
    api.create_task(mk("t_x", &other_project, 0.0)).await;
    let mut done = mk("t_d", &c1, 4.0);
    done["completedAt"] = json!(days_ago(100));
    api.create_task(done).await;

    let expect_orders = |project: &Value, want: &[(&str, i64)]| {
        for (id, order) in want {
            let task = find_task(project, id).unwrap_or_else(|| panic!("{id} missing"));
            assert_eq!(task["order"], json!(order), "order of {id}");
        }
    };
    let project = api.project(&pid).await;
    expect_orders(
        &project,
        &[("t_a", 0), ("t_b", 1), ("t_c", 2), ("t_d", 3), ("t_e", 4)],
    );
    assert_eq!(
        api.task("t_x").await["order"],
        json!(0),
        "order is per project"
    );
    assert_eq!(api.task("t_e").await["order"], json!(4));
    // The default read leaves the completed card out but it still counts.
    let open = api.project_q(&pid, "none").await;
    assert!(find_task(&open, "t_d").is_none());
    expect_orders(&open, &[("t_a", 0), ("t_e", 4)]);

    let rev_e = rev(&api.task("t_e").await);
    api.delete("/tasks/t_a").await.expect_ok(200);
    let project = api.project(&pid).await;
    expect_orders(&project, &[("t_b", 0), ("t_c", 1), ("t_d", 2), ("t_e", 3)]);
    assert_eq!(
        rev(&find_task(&project, "t_e").unwrap()),
        rev_e,
        "a moved order is not a change"
    );
    api.patch("/tasks/t_e", json!({ "position": 0.5 }))
        .await
        .expect_ok(200);
    expect_orders(
        &api.project(&pid).await,
        &[("t_e", 0), ("t_b", 1), ("t_c", 2), ("t_d", 3)],
    );
}

#[tokio::test]
async fn a_task_moves_between_columns_and_projects_with_column_id() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, c1) = api.board().await;
    let c2 = api.new_column(&pid, "Done").await;
    let task = api.new_task(&c1, "Mover").await;
    let tid = str_of(&task["id"]);

    let r = api
        .patch(&format!("/tasks/{tid}"), json!({ "columnId": c2 }))
        .await;
    let moved = r.expect_ok(200)["task"].clone();
    assert_eq!(moved["columnId"], json!(c2));
    assert!(rev(&moved) > rev(&task));
    let project = api.project(&pid).await;
    let col = |id: &str| {
        project["columns"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == json!(id))
            .unwrap()
            .clone()
    };
    assert_eq!(col(&c1)["tasks"], json!([]));
    assert_eq!(ids(&col(&c2)["tasks"]), vec![tid.clone()]);

    // To another project: the card's projectId follows, and both projects are stamped.
    let (pid2, c3) = api.board().await;
    let r = api
        .patch(&format!("/tasks/{tid}"), json!({ "column_id": c3 }))
        .await;
    let moved = r.expect_ok(200)["task"].clone();
    assert_eq!(moved["projectId"], json!(pid2));
    assert_eq!(moved["columnId"], json!(c3));
    assert!(task_ids(&api.project(&pid).await).is_empty());
    assert_eq!(task_ids(&api.project(&pid2).await), vec![tid.clone()]);
    assert_eq!(
        api.project(&pid).await["updatedAt"],
        moved["updatedAt"],
        "moved out stamps"
    );
    assert_eq!(
        api.project(&pid2).await["updatedAt"],
        moved["updatedAt"],
        "moved in stamps"
    );

    let r = api
        .patch(&format!("/tasks/{tid}"), json!({ "columnId": "c_nothere" }))
        .await;
    r.expect_field_error(422, "columnId");
    assert_eq!(api.task(&tid).await, moved);
}

#[tokio::test]
async fn completed_cards_leave_default_reads_and_show_under_recent_or_all() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, cid) = api.board().await;
    let open = str_of(&api.new_task(&cid, "Open").await["id"]);
    let fresh = str_of(&api.new_task(&cid, "Fresh").await["id"]);
    let r = api
        .patch(
            &format!("/tasks/{fresh}"),
            json!({ "completedAt": now_ms() }),
        )
        .await;
    assert!(r.expect_ok(200)["task"]["completedAt"].is_i64());
    let recent = api
        .create_task(json!({ "columnId": cid, "title": "29 days", "completedAt": days_ago(29) }))
        .await;
    let old = api
        .create_task(json!({ "columnId": cid, "title": "40 days", "completedAt": days_ago(40) }))
        .await;
    let (recent, old) = (str_of(&recent["id"]), str_of(&old["id"]));

    let sorted = |mut v: Vec<String>| {
        v.sort();
        v
    };
    let seen = |project: &Value| sorted(task_ids(project));
    let all_projects = |projects: Vec<Value>| sorted(projects.iter().flat_map(task_ids).collect());

    let want_none = sorted(vec![open.clone()]);
    let want_recent = sorted(vec![open.clone(), fresh.clone(), recent.clone()]);
    let want_all = sorted(vec![
        open.clone(),
        fresh.clone(),
        recent.clone(),
        old.clone(),
    ]);
    assert_eq!(all_projects(api.projects("").await), want_none);
    assert_eq!(
        all_projects(api.projects("?completed=none").await),
        want_none
    );
    assert_eq!(
        all_projects(api.projects("?completed=recent").await),
        want_recent
    );
    assert_eq!(all_projects(api.projects("?completed=all").await), want_all);
    assert_eq!(seen(&api.project_q(&pid, "none").await), want_none);
    assert_eq!(seen(&api.project_q(&pid, "recent").await), want_recent);
    assert_eq!(seen(&api.project_q(&pid, "all").await), want_all);
    let r = api.get(&format!("/projects/{pid}")).await;
    assert_eq!(
        seen(&r.expect(200)["projects"][0]),
        want_none,
        "the default is none"
    );
    // A finished card is still readable by id.
    assert_eq!(api.task(&old).await["title"], json!("40 days"));

    // Reopening brings it back into the default read.
    api.patch(&format!("/tasks/{old}"), json!({ "completedAt": null }))
        .await
        .expect_ok(200);
    assert_eq!(
        all_projects(api.projects("").await),
        sorted(vec![open, old])
    );
}

#[tokio::test]
async fn a_client_task_id_is_checked_and_a_retry_is_safe() {
    let s = Server::start().await;
    let api = s.api();
    let (_, cid) = api.board().await;
    let body = json!({ "id": "t_mine-1", "columnId": cid, "title": "Named", "priority": 2 });
    let task = api.create_task(body.clone()).await;
    assert_eq!(task["id"], json!("t_mine-1"));
    let r = api.post("/tasks", body).await;
    assert_eq!(r.expect_ok(200)["task"], task);
    let r = api
        .post(
            "/tasks",
            json!({ "id": "t_mine-1", "columnId": cid, "title": "Other" }),
        )
        .await;
    let body = r.expect_field_error(409, "id");
    assert_eq!(body["current"]["title"], json!("Named"));
    assert_eq!(api.task("t_mine-1").await, task);

    for bad in ["b_x", "t_", "t_x y", "k_x"] {
        let r = api
            .post(
                "/tasks",
                json!({ "id": bad, "columnId": cid, "title": "Bad" }),
            )
            .await;
        r.expect_field_error(422, "id");
    }
    let r = api
        .post(
            "/tasks",
            json!({ "id": format!("t_{}", "a".repeat(65)), "columnId": cid, "title": "Long" }),
        )
        .await;
    r.expect_field_error(422, "id");
}
