//! Bulk writes (issue 3): the batch form of `POST /tasks`, `PATCH /tasks/positions`, and the
//! read-only `order` of every task read.

use serde_json::{Value, json};

use crate::harness::*;

fn rev(task: &Value) -> i64 {
    task["rev"]
        .as_i64()
        .unwrap_or_else(|| panic!("rev is not an integer: {task}"))
}

fn pos(task: &Value) -> f64 {
    task["position"]
        .as_f64()
        .unwrap_or_else(|| panic!("position is not a number: {task}"))
}

/// Ids of the tasks of one column of a project read, in read order.
fn column_tasks(project: &Value, cid: &str) -> Vec<String> {
    let columns = project["columns"].as_array().expect("columns");
    let column = columns
        .iter()
        .find(|c| c["id"] == json!(cid))
        .expect("column");
    ids(&column["tasks"])
}

async fn batch(api: &Api, tasks: Vec<Value>) -> Reply {
    api.post("/tasks", json!({ "tasks": tasks })).await
}

async fn positions(api: &Api, entries: Value) -> Reply {
    api.patch("/tasks/positions", json!({ "positions": entries }))
        .await
}

#[tokio::test]
async fn a_batch_answers_created_rev_and_ids_in_the_order_sent_and_lands_above() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, cid) = api.board().await;
    let c2 = api.new_column(&pid, "Two").await;
    let existing = api
        .create_task(json!({ "columnId": cid, "title": "E", "position": 3.0 }))
        .await;
    let eid = str_of(&existing["id"]);

    let r = batch(&api, vec![
        json!({ "id": "t_a", "columnId": cid, "title": "A" }),
        json!({ "columnId": cid, "title": "B", "tags": ["x"], "checklist": [{ "text": "step" }] }),
        json!({ "columnId": c2, "title": "In two" }),
        json!({ "column_id": cid, "title": "C", "priority": 1 }),
    ])
    .await;
    let body = r.expect_ok(201).clone();
    assert_keys(&body, &["ok", "created", "rev", "ids"]);
    assert_eq!(body["created"], json!(4));
    let new_ids: Vec<String> = body["ids"]
        .as_array()
        .expect("ids")
        .iter()
        .map(str_of)
        .collect();
    assert_eq!(new_ids.len(), 4);
    assert_eq!(new_ids[0], "t_a");
    assert!(new_ids.iter().all(|id| id.starts_with("t_")), "{new_ids:?}");
    let batch_rev = body["rev"].as_i64().expect("rev");
    assert!(batch_rev > rev(&existing));

    let project = api.project(&pid).await;
    let want: Vec<String> = [&new_ids[0], &new_ids[1], &new_ids[3], &eid]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(
        column_tasks(&project, &cid),
        want,
        "first entry topmost, above E"
    );
    assert_eq!(column_tasks(&project, &c2), vec![new_ids[2].clone()]);
    for id in &new_ids {
        let task = find_task(&project, id).unwrap();
        assert_eq!(rev(&task), batch_rev, "{id} carries the batch's rev");
        assert_eq!(api.task(id).await, task);
    }
    let b = find_task(&project, &new_ids[1]).unwrap();
    assert_eq!(
        (b["tags"].clone(), b["checklist"][0]["text"].clone()),
        (json!(["x"]), json!("step"))
    );
    assert_eq!(
        find_task(&project, &new_ids[3]).unwrap()["priority"],
        json!(1)
    );
    assert!(pos(&find_task(&project, &new_ids[3]).unwrap()) < pos(&existing));
}

#[tokio::test]
async fn batch_entries_with_a_position_keep_it() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, cid) = api.board().await;
    let e = api
        .create_task(json!({ "id": "t_e", "columnId": cid, "title": "E", "position": 0.0 }))
        .await;
    let r = batch(
        &api,
        vec![
            json!({ "id": "t_x", "columnId": cid, "title": "X", "position": 10.5 }),
            json!({ "id": "t_y", "columnId": cid, "title": "Y" }),
            json!({ "id": "t_z", "columnId": cid, "title": "Z", "position": -5 }),
        ],
    )
    .await;
    r.expect_ok(201);
    assert_eq!(pos(&api.task("t_x").await), 10.5);
    assert_eq!(pos(&api.task("t_z").await), -5.0);
    assert!(
        pos(&api.task("t_y").await) < pos(&e),
        "Y lands above the existing card"
    );
    let order = column_tasks(&api.project(&pid).await, &cid);
    assert_eq!(order.last().map(String::as_str), Some("t_x"));
    assert!(order.iter().position(|i| i == "t_y") < order.iter().position(|i| i == "t_e"));
}

#[tokio::test]
async fn a_batch_holds_1_to_200_entries() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, cid) = api.board().await;
    let entry = |i: usize| json!({ "columnId": cid, "title": format!("T{i}") });
    batch(&api, vec![]).await.expect_error(422);
    batch(&api, (0..201).map(entry).collect())
        .await
        .expect_error(422);
    assert!(
        task_ids(&api.project(&pid).await).is_empty(),
        "a refused batch wrote cards"
    );
    let r = batch(&api, (0..200).map(entry).collect()).await;
    let body = r.expect_ok(201);
    assert_eq!(body["created"], json!(200));
    assert_eq!(body["ids"].as_array().unwrap().len(), 200);
    let project = api.project(&pid).await;
    let titles: Vec<Value> = tasks_of(&project)
        .iter()
        .map(|t| t["title"].clone())
        .collect();
    let want: Vec<Value> = (0..200).map(|i| json!(format!("T{i}"))).collect();
    assert_eq!(titles, want, "sent order is read order");
    let r = batch(&api, vec![entry(0)]).await;
    assert_eq!(r.expect_ok(201)["created"], json!(1));
}

#[tokio::test]
async fn one_bad_entry_refuses_the_batch_naming_its_index_and_writes_nothing() {
    let s = Server::start().await;
    let api = s.api();
    let (_, cid) = api.board().await;
    api.new_task(&cid, "Existing").await;
    let before = api.account().await;
    let ok = |t: &str| json!({ "columnId": cid, "title": t });
    let cases: Vec<(Vec<Value>, i64, Option<&str>)> = vec![
        (
            vec![ok("a"), ok("b"), json!({ "columnId": cid, "title": "" })],
            2,
            Some("title"),
        ),
        (
            vec![ok("a"), json!({ "columnId": "c_nothere", "title": "x" })],
            1,
            Some("columnId"),
        ),
        (
            vec![
                json!({ "columnId": cid, "title": "x", "assignee": "bob" }),
                ok("b"),
            ],
            0,
            Some("assignee"),
        ),
        (
            vec![
                ok("a"),
                ok("b"),
                ok("c"),
                json!({ "columnId": cid, "title": "d", "tags": ["1", "2", "3", "4", "5", "6"] }),
            ],
            3,
            Some("tags"),
        ),
        (
            vec![
                ok("a"),
                json!({ "columnId": cid, "title": "x", "deadline": "2023-02-29" }),
            ],
            1,
            Some("deadline"),
        ),
        (
            vec![
                json!({ "id": "t_p", "columnId": cid, "title": "P" }),
                json!({ "id": "t_s", "columnId": cid, "title": "S", "parentId": "t_p" }),
                json!({ "columnId": cid, "title": "Too deep", "parentId": "t_s" }),
            ],
            2,
            Some("parentId"),
        ),
        (
            vec![
                ok("a"),
                json!({ "columnId": cid, "title": "x", "comments": [{ "text": "y".repeat(16_385) }] }),
            ],
            1,
            None,
        ),
        (vec![ok("a"), json!("not an object")], 1, None),
    ];
    for (tasks, index, field) in cases {
        let sent = json!(tasks);
        let r = batch(&api, tasks).await;
        let body = r.expect_error(422);
        assert_eq!(body["index"], json!(index), "{sent}: {}", r.text);
        if let Some(field) = field {
            assert_eq!(body["field"], json!(field), "{sent}: {}", r.text);
        }
        assert_eq!(api.account().await, before, "{sent} wrote something");
    }
    api.get("/tasks/t_p").await.expect_error(404);
    for bad in [
        json!({ "tasks": "x" }),
        json!({ "tasks": [ok("a")], "title": "x" }),
    ] {
        api.post("/tasks", bad).await.expect_error(422);
    }
    assert_eq!(api.account().await, before);
}

#[tokio::test]
async fn a_batch_entry_whose_id_is_taken_is_refused_naming_its_index() {
    let s = Server::start().await;
    let api = s.api();
    let (_, cid) = api.board().await;
    let taken = json!({ "id": "t_taken", "columnId": cid, "title": "Taken" });
    api.create_task(taken).await;
    let before = api.account().await;
    let ok = |t: &str| json!({ "columnId": cid, "title": t });
    // An id held by a card with other fields: 409 naming entry 1, nothing written.
    let clash = json!({ "id": "t_taken", "columnId": cid, "title": "Other" });
    let r = batch(&api, vec![ok("a"), clash]).await;
    let body = r.expect_field_error(409, "id");
    assert_eq!(
        body["index"],
        json!(1),
        "the offending entry is not named: {}",
        r.text
    );
    assert_eq!(api.account().await, before);
    // Two entries naming the same new id: refused whole, the second named.
    let twice = vec![
        json!({ "id": "t_twice", "columnId": cid, "title": "One" }),
        json!({ "id": "t_twice", "columnId": cid, "title": "Two" }),
    ];
    let r = batch(&api, twice).await;
    assert!(r.status == 409 || r.status == 422, "{}", r.text);
    assert_eq!(r.body["index"], json!(1), "{}", r.text);
    assert_eq!(api.account().await, before);
    api.get("/tasks/t_twice").await.expect_error(404);
}

#[tokio::test]
async fn a_batch_entry_may_name_an_earlier_entry_as_its_parent() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, cid) = api.board().await;
    let c2 = api.new_column(&pid, "Two").await;
    let r = batch(
        &api,
        vec![
            json!({ "id": "t_parent", "columnId": cid, "title": "Parent" }),
            json!({ "id": "t_kid1", "columnId": cid, "title": "Kid 1", "parentId": "t_parent" }),
            json!({ "id": "t_kid2", "columnId": c2, "title": "Kid 2", "parent_id": "t_parent" }),
        ],
    )
    .await;
    assert_eq!(
        r.expect_ok(201)["ids"],
        json!(["t_parent", "t_kid1", "t_kid2"])
    );
    for kid in ["t_kid1", "t_kid2"] {
        assert_eq!(api.task(kid).await["parentId"], json!("t_parent"));
    }
    assert_eq!(api.task("t_parent").await["parentId"], json!(null));
}

#[tokio::test]
async fn bulk_positions_move_cards_across_columns_and_projects_counting_real_moves() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, c1) = api.board().await;
    let c2 = api.new_column(&pid, "Two").await;
    let (pid2, c3) = api.board().await;
    let mk = |id: &str, col: &str, p: f64| json!({ "id": id, "columnId": col, "title": id, "position": p });
    for (id, col, p) in [
        ("t_a", &c1, 1.0),
        ("t_b", &c1, 2.0),
        ("t_c", &c2, 3.0),
        ("t_d", &c3, 4.0),
    ] {
        api.create_task(mk(id, col, p)).await;
    }
    let (other_key, _) = s.issue_key(None).await;
    let other = s.api_for(&other_key);
    let (_, their_col) = other.board().await;
    let theirs = other.create_task(mk("t_theirs", &their_col, 1.0)).await;
    let b_before = api.task("t_b").await;
    let rev_before = rev(&api.task("t_d").await);

    let r = positions(
        &api,
        json!([
            { "id": "t_a", "position": 5.25 },
            { "id": "t_b", "position": 2 },
            { "id": "t_c", "position": 0.5 },
            { "id": "t_d", "position": -3 },
            { "id": "t_unknown", "position": 1 },
            { "id": "t_theirs", "position": 99 },
        ]),
    )
    .await;
    let body = r.expect_ok(200).clone();
    assert_keys(&body, &["ok", "changed", "moved"]);
    assert_eq!(
        (body["changed"].clone(), body["moved"].clone()),
        (json!(true), json!(3))
    );
    assert_eq!(pos(&api.task("t_a").await), 5.25);
    assert_eq!(pos(&api.task("t_c").await), 0.5);
    let d = api.task("t_d").await;
    assert_eq!((pos(&d), d["columnId"].clone()), (-3.0, json!(c3)));
    assert!(rev(&d) > rev_before);
    // One request, one stamp and one rev for every card it moved.
    let a = api.task("t_a").await;
    assert_eq!(
        (rev(&a), a["updatedAt"].clone()),
        (rev(&d), d["updatedAt"].clone())
    );
    assert_eq!(api.project(&pid2).await["updatedAt"], d["updatedAt"]);
    assert_eq!(
        api.task("t_b").await,
        b_before,
        "a card already there costs nothing"
    );
    assert_eq!(
        other.task("t_theirs").await,
        theirs,
        "another account's card moved"
    );
    let orders: Vec<Value> = ["t_c", "t_b", "t_a"].iter().map(|id| json!(id)).collect();
    assert_eq!(task_ids(&api.project(&pid).await).len(), 3);
    let project = api.project(&pid).await;
    for (i, id) in orders.iter().enumerate() {
        assert_eq!(
            find_task(&project, id.as_str().unwrap()).unwrap()["order"],
            json!(i),
            "order of {id}"
        );
    }
    assert_eq!(task_ids(&api.project(&pid2).await), vec!["t_d".to_string()]);

    // Sent again, nothing moves: changed false, moved 0, nothing stamped.
    let before = api.account().await;
    let r = positions(
        &api,
        json!([{ "id": "t_a", "position": 5.25 }, { "id": "t_d", "position": -3.0 }]),
    )
    .await;
    assert_eq!(
        r.expect_ok(200),
        &json!({ "ok": true, "changed": false, "moved": 0 })
    );
    let r = positions(&api, json!([{ "id": "t_nothere", "position": 1 }])).await;
    assert_eq!(
        r.expect_ok(200),
        &json!({ "ok": true, "changed": false, "moved": 0 })
    );
    assert_eq!(api.account().await, before);
}

#[tokio::test]
async fn bulk_positions_refuse_guards_bad_values_and_more_than_1000_entries() {
    let s = Server::start().await;
    let api = s.api();
    let (_, cid) = api.board().await;
    api.create_task(json!({ "id": "t_a", "columnId": cid, "title": "A", "position": 1 }))
        .await;
    let before = api.account().await;
    let bad = [
        json!({ "positions": [{ "id": "t_a", "position": { "before": 1, "after": 2 } }] }),
        json!({ "positions": [{ "id": "t_a", "position": 2 }, { "id": "t_a", "position": "3" }] }),
        json!({ "positions": [{ "id": "t_a" }] }),
        json!({ "positions": [{ "position": 2 }] }),
        json!({ "positions": [{ "id": "t_a", "position": 2, "columnId": cid }] }),
        json!({ "positions": "t_a" }),
        json!({ "positions": [{ "id": "t_a", "position": 2 }], "title": "x" }),
        json!({ "title": "Not a task route" }),
    ];
    for body in bad {
        let r = api.patch("/tasks/positions", body.clone()).await;
        assert_eq!(r.status, 422, "{body}: {}", r.text);
        r.expect_error(422);
    }
    let many = |n: usize, last: f64| {
        let mut v: Vec<Value> = (0..n - 1)
            .map(|i| json!({ "id": format!("t_u{i}"), "position": i }))
            .collect();
        v.push(json!({ "id": "t_a", "position": last }));
        json!(v)
    };
    positions(&api, many(1001, 7.0)).await.expect_error(422);
    assert_eq!(
        api.account().await,
        before,
        "a refused request moved something"
    );
    let r = positions(&api, many(1000, 7.0)).await;
    assert_eq!(r.expect_ok(200)["moved"], json!(1));
    assert_eq!(pos(&api.task("t_a").await), 7.0);
    // The unversioned alias is the same route, not `PATCH /tasks/:id`.
    let r = api
        .unversioned()
        .patch(
            "/tasks/positions",
            json!({ "positions": [{ "id": "t_a", "position": 8 }] }),
        )
        .await;
    assert_eq!(r.expect_ok(200)["moved"], json!(1));
}

#[tokio::test]
async fn order_counts_completed_cards_and_leaves_deleted_ones_out() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, c1) = api.board().await;
    let c2 = api.new_column(&pid, "Two").await;
    let r = batch(&api, vec![
        json!({ "id": "t_1", "columnId": c2, "title": "1", "position": 1 }),
        json!({ "id": "t_2", "columnId": c1, "title": "2", "position": 2, "completedAt": days_ago(90) }),
        json!({ "id": "t_3", "columnId": c2, "title": "3", "position": 3 }),
        json!({ "id": "t_4", "columnId": c1, "title": "4", "position": 4 }),
    ])
    .await;
    r.expect_ok(201);
    let orders = |project: Value| -> Vec<(String, i64)> {
        let mut v: Vec<(String, i64)> = tasks_of(&project)
            .iter()
            .map(|t| (str_of(&t["id"]), t["order"].as_i64().expect("order")))
            .collect();
        v.sort_by_key(|(_, o)| *o);
        v
    };
    let o = |pairs: &[(&str, i64)]| {
        pairs
            .iter()
            .map(|(a, b)| (a.to_string(), *b))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        orders(api.project(&pid).await),
        o(&[("t_1", 0), ("t_2", 1), ("t_3", 2), ("t_4", 3)])
    );
    assert_eq!(api.task("t_4").await["order"], json!(3));

    api.delete("/tasks/t_1").await.expect_ok(200);
    assert_eq!(
        orders(api.project(&pid).await),
        o(&[("t_2", 0), ("t_3", 1), ("t_4", 2)])
    );
    let r = positions(&api, json!([{ "id": "t_4", "position": 0 }])).await;
    r.expect_ok(200);
    assert_eq!(
        orders(api.project(&pid).await),
        o(&[("t_4", 0), ("t_2", 1), ("t_3", 2)])
    );
    let r = api
        .patch("/tasks/t_1", json!({ "cancelledAt": null }))
        .await;
    assert_eq!(r.expect_ok(200)["task"]["order"], json!(1));
    assert_eq!(
        orders(api.project(&pid).await),
        o(&[("t_4", 0), ("t_1", 1), ("t_2", 2), ("t_3", 3)])
    );
}
