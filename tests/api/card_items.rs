//! A card's checklist and tags (issue 3): their routes, shapes and limits. Comments and the
//! rules all three share are in `card_item_rules`.

use serde_json::{Value, json};

use crate::harness::*;

fn rev(task: &Value) -> i64 {
    task["rev"]
        .as_i64()
        .unwrap_or_else(|| panic!("rev is not an integer: {task}"))
}

/// A board and one task; returns (api, columnId, taskId).
pub(crate) async fn one_task(s: &Server) -> (Api, String, String) {
    let api = s.api();
    let (_, cid) = api.board().await;
    let tid = str_of(&api.new_task(&cid, "Card").await["id"]);
    (api, cid, tid)
}

/// POST `/tasks/:tid/{what}` (`checklist`, `tags`, `comments`, `checklist/order`).
pub(crate) async fn add(api: &Api, tid: &str, what: &str, body: Value) -> Reply {
    api.post(&format!("/tasks/{tid}/{what}"), body).await
}

/// Adds one item, asserts `201 {ok, id, task}`, returns (item id, task).
pub(crate) async fn added(api: &Api, tid: &str, what: &str, body: Value) -> (String, Value) {
    let r = add(api, tid, what, body).await;
    let reply = r.expect_ok(201).clone();
    assert_keys(&reply, &["ok", "id", "task"]);
    assert_eq!(
        api.task(tid).await,
        reply["task"],
        "the next read differs from the reply"
    );
    (str_of(&reply["id"]), reply["task"].clone())
}

fn texts(checklist: &Value) -> Vec<String> {
    checklist
        .as_array()
        .expect("checklist")
        .iter()
        .map(|i| str_of(&i["text"]))
        .collect()
}

/// Asserts every item's `position` is its index.
#[track_caller]
pub(crate) fn positions_are_indexes(checklist: &Value) {
    for (i, item) in checklist.as_array().expect("checklist").iter().enumerate() {
        assert_eq!(
            item["position"],
            json!(i),
            "position of item {i}: {checklist}"
        );
    }
}

#[tokio::test]
async fn a_checklist_item_answers_201_and_reads_as_id_text_done_position() {
    let s = Server::start().await;
    let (api, _, tid) = one_task(&s).await;
    let rev0 = rev(&api.task(&tid).await);
    let (k1, task) = added(&api, &tid, "checklist", json!({ "text": "First" })).await;
    assert!(k1.starts_with("k_"), "{k1}");
    assert!(rev(&task) > rev0);
    let item = &task["checklist"][0];
    assert_keys(item, &["id", "text", "done", "position"]);
    assert_eq!(
        item,
        &json!({ "id": k1, "text": "First", "done": false, "position": 0 })
    );
    let (k2, task) = added(
        &api,
        &tid,
        "checklist",
        json!({ "text": "Second", "done": true }),
    )
    .await;
    assert_eq!(
        task["checklist"][1],
        json!({ "id": k2, "text": "Second", "done": true, "position": 1 })
    );
    let project = api.project(&str_of(&task["projectId"])).await;
    assert_eq!(find_task(&project, &tid).unwrap(), task);
}

#[tokio::test]
async fn a_checklist_position_inserts_at_the_index_and_shifts_later_items_down() {
    let s = Server::start().await;
    let (api, _, tid) = one_task(&s).await;
    for t in ["A", "B", "C"] {
        added(&api, &tid, "checklist", json!({ "text": t })).await;
    }
    let cases = [
        (
            json!({ "text": "X", "position": 1 }),
            vec!["A", "X", "B", "C"],
        ),
        (
            json!({ "text": "Top", "position": 0 }),
            vec!["Top", "A", "X", "B", "C"],
        ),
        (
            json!({ "text": "End", "position": 5 }),
            vec!["Top", "A", "X", "B", "C", "End"],
        ),
        (
            json!({ "text": "Far", "position": 99 }),
            vec!["Top", "A", "X", "B", "C", "End", "Far"],
        ),
        (
            json!({ "text": "Last" }),
            vec!["Top", "A", "X", "B", "C", "End", "Far", "Last"],
        ),
    ];
    for (body, want) in cases {
        let (id, task) = added(&api, &tid, "checklist", body.clone()).await;
        assert_eq!(texts(&task["checklist"]), want, "after {body}");
        positions_are_indexes(&task["checklist"]);
        let at = want.iter().position(|t| *t == body["text"]).unwrap();
        assert_eq!(task["checklist"][at]["id"], json!(id));
    }
}

#[tokio::test]
async fn the_items_form_appends_in_order_all_or_nothing() {
    let s = Server::start().await;
    let (api, _, tid) = one_task(&s).await;
    added(&api, &tid, "checklist", json!({ "text": "Existing" })).await;
    let r = add(
        &api,
        &tid,
        "checklist",
        json!({ "items": [
        { "text": "One" }, { "text": "Two", "done": true }, { "text": "Three" },
    ] }),
    )
    .await;
    let reply = r.expect_ok(201).clone();
    assert_keys(&reply, &["ok", "ids", "task"]);
    let task = reply["task"].clone();
    assert_eq!(
        texts(&task["checklist"]),
        vec!["Existing", "One", "Two", "Three"]
    );
    positions_are_indexes(&task["checklist"]);
    let new_ids: Vec<Value> = task["checklist"].as_array().unwrap()[1..]
        .iter()
        .map(|i| i["id"].clone())
        .collect();
    assert_eq!(reply["ids"], json!(new_ids), "ids in the order sent");
    assert_eq!(task["checklist"][2]["done"], json!(true));
    assert_eq!(task["checklist"][1]["done"], json!(false));
    assert_eq!(api.task(&tid).await, task);

    // An empty text in entry 2: 422 naming index 2, nothing added.
    let r = add(
        &api,
        &tid,
        "checklist",
        json!({ "items": [
        { "text": "ok" }, { "text": "fine" }, { "text": "" }, { "text": "after" },
    ] }),
    )
    .await;
    assert_eq!(r.expect_error(422)["index"], json!(2), "{}", r.text);
    assert_eq!(api.task(&tid).await, task);

    // Over 100 in total: refused whole; exactly 100 lands.
    let items = |n: usize| json!({ "items": (0..n).map(|i| json!({ "text": format!("i{i}") })).collect::<Vec<_>>() });
    add(&api, &tid, "checklist", items(97))
        .await
        .expect_error(422);
    assert_eq!(api.task(&tid).await, task);
    let r = add(&api, &tid, "checklist", items(96)).await;
    assert_eq!(
        r.expect_ok(201)["task"]["checklist"]
            .as_array()
            .unwrap()
            .len(),
        100
    );
    let full = api.task(&tid).await;
    add(&api, &tid, "checklist", json!({ "text": "101st" }))
        .await
        .expect_error(422);
    add(&api, &tid, "checklist", items(1))
        .await
        .expect_error(422);
    assert_eq!(api.task(&tid).await, full);
}

#[tokio::test]
async fn checklist_text_is_cut_at_500_characters_and_empty_text_is_422() {
    let s = Server::start().await;
    let (api, _, tid) = one_task(&s).await;
    let (kid, task) = added(&api, &tid, "checklist", json!({ "text": "é".repeat(600) })).await;
    assert_eq!(task["checklist"][0]["text"], json!("é".repeat(500)));
    let r = add(
        &api,
        &tid,
        "checklist",
        json!({ "items": [{ "text": "x".repeat(501) }] }),
    )
    .await;
    assert_eq!(
        char_count(&r.expect_ok(201)["task"]["checklist"][1]["text"]),
        500
    );
    let before = api.task(&tid).await;
    for bad in [
        json!({ "text": "" }),
        json!({ "done": true }),
        json!({ "text": 5 }),
        json!({ "text": "ok", "done": "yes" }),
    ] {
        add(&api, &tid, "checklist", bad).await.expect_error(422);
    }
    let path = format!("/checklist/{kid}");
    api.patch(&path, json!({ "text": "" }))
        .await
        .expect_error(422);
    assert_eq!(api.task(&tid).await, before);
    let r = api.patch(&path, json!({ "text": "y".repeat(700) })).await;
    assert_eq!(char_count(&r.expect_ok(200)["item"]["text"]), 500);
}

#[tokio::test]
async fn checklist_order_rules() {
    let s = Server::start().await;
    let (api, cid, tid) = one_task(&s).await;
    let mut k = Vec::new();
    for t in ["A", "B", "C", "D"] {
        k.push(added(&api, &tid, "checklist", json!({ "text": t })).await.0);
    }
    let other = str_of(&api.new_task(&cid, "Other").await["id"]);
    let (foreign, _) = added(&api, &other, "checklist", json!({ "text": "Foreign" })).await;
    let other_before = api.task(&other).await;
    let rev0 = rev(&api.task(&tid).await);

    // Left-out items keep their relative place at the end; unknown ids are ignored.
    let r = add(
        &api,
        &tid,
        "checklist/order",
        json!({ "ids": [k[2], "k_never", foreign, k[0]] }),
    )
    .await;
    let reply = r.expect_ok(200).clone();
    assert_keys(&reply, &["ok", "task"]);
    let task = reply["task"].clone();
    assert_eq!(texts(&task["checklist"]), vec!["C", "A", "B", "D"]);
    positions_are_indexes(&task["checklist"]);
    assert!(rev(&task) > rev0);
    assert_eq!(api.task(&tid).await, task);
    assert_eq!(
        api.task(&other).await,
        other_before,
        "another card's item moved"
    );

    // The same order again changes nothing.
    let r = add(
        &api,
        &tid,
        "checklist/order",
        json!({ "ids": [k[2], k[0]] }),
    )
    .await;
    assert_eq!(r.expect_ok(200)["task"], task);
    assert_eq!(
        api.task(&tid).await,
        task,
        "rev or updatedAt moved on a no-op reorder"
    );

    let r = add(
        &api,
        &tid,
        "checklist/order",
        json!({ "ids": [k[3], k[1], k[0], k[2]] }),
    )
    .await;
    assert_eq!(
        texts(&r.expect_ok(200)["task"]["checklist"]),
        vec!["D", "B", "A", "C"]
    );
    // An id sent twice neither duplicates nor loses an item (or the request is refused).
    let before = api.task(&tid).await;
    let r = add(
        &api,
        &tid,
        "checklist/order",
        json!({ "ids": [k[2], k[2], k[0]] }),
    )
    .await;
    if r.status == 422 {
        assert_eq!(api.task(&tid).await, before);
    } else {
        let got = texts(&r.expect_ok(200)["task"]["checklist"]);
        assert_eq!(got, vec!["C", "A", "D", "B"]);
        positions_are_indexes(&api.task(&tid).await["checklist"]);
    }
    add(&api, &tid, "checklist/order", json!({ "order": [] }))
        .await
        .expect_error(422);
    add(&api, &tid, "checklist/order", json!({ "ids": "k_x" }))
        .await
        .expect_error(422);
}

#[tokio::test]
async fn patch_checklist_item_answers_the_item_and_honours_guards() {
    let s = Server::start().await;
    let (api, _, tid) = one_task(&s).await;
    added(&api, &tid, "checklist", json!({ "text": "Zero" })).await;
    let (kid, task) = added(&api, &tid, "checklist", json!({ "text": "One" })).await;
    let path = format!("/checklist/{kid}");

    let r = api
        .patch(&path, json!({ "text": "Uno", "done": true }))
        .await;
    let reply = r.expect_ok(200).clone();
    assert_keys(&reply, &["ok", "item"]);
    assert_eq!(
        reply["item"],
        json!({ "id": kid, "text": "Uno", "done": true, "position": 1 })
    );
    let read = api.task(&tid).await;
    assert_eq!(read["checklist"][1], reply["item"]);
    assert!(rev(&read) > rev(&task));
    let project = api.project(&str_of(&read["projectId"])).await;
    assert_eq!(
        project["updatedAt"], read["updatedAt"],
        "the project is stamped"
    );
    // A write that changes nothing stamps nothing.
    let r = api
        .patch(&path, json!({ "text": "Uno", "done": true }))
        .await;
    assert_eq!(r.expect_ok(200)["item"], reply["item"]);
    assert_eq!(api.task(&tid).await, read);

    let guard = json!({ "done": { "before": true, "after": false } });
    let r = api.patch(&path, guard.clone()).await;
    assert_eq!(r.expect_ok(200)["item"]["done"], json!(false));
    let after = api.task(&tid).await;
    let r = api.patch(&path, guard).await;
    assert_eq!(r.expect_field_error(409, "done")["current"], json!(false));
    let r = api
        .patch(
            &path,
            json!({ "text": { "before": "Wrong", "after": "X" }, "done": true }),
        )
        .await;
    assert_eq!(r.expect_field_error(409, "text")["current"], json!("Uno"));
    api.patch(&path, json!({ "done": "yes" }))
        .await
        .expect_field_error(422, "done");
    api.patch(&path, json!({ "position": 0 }))
        .await
        .expect_field_error(422, "position");
    assert_eq!(
        api.task(&tid).await,
        after,
        "a refused write changed something"
    );
    api.patch("/checklist/k_nothere", json!({ "done": true }))
        .await
        .expect_error(404);
}

#[tokio::test]
async fn delete_removes_an_item_for_good_and_a_second_delete_is_404() {
    let s = Server::start().await;
    let (api, _, tid) = one_task(&s).await;
    let (k0, _) = added(&api, &tid, "checklist", json!({ "text": "A" })).await;
    let (k1, _) = added(&api, &tid, "checklist", json!({ "text": "B" })).await;
    let (g, _) = added(&api, &tid, "tags", json!({ "text": "tag" })).await;
    let (m, _) = added(&api, &tid, "comments", json!({ "text": "note" })).await;
    let before = api.task(&tid).await;

    // An id of another kind on a route is not found, and nothing goes.
    api.delete(&format!("/checklist/{g}"))
        .await
        .expect_error(404);
    api.delete(&format!("/checklist/{m}"))
        .await
        .expect_error(404);
    api.delete(&format!("/tags/{k0}")).await.expect_error(404);
    api.delete(&format!("/comments/{g}"))
        .await
        .expect_error(404);
    api.patch(&format!("/checklist/{g}"), json!({ "done": true }))
        .await
        .expect_error(404);
    assert_eq!(api.task(&tid).await, before);

    let r = api.delete(&format!("/checklist/{k0}")).await;
    assert_eq!(
        r.expect_ok(200),
        &json!({ "ok": true, "id": k0, "deleted": 1 })
    );
    let task = api.task(&tid).await;
    assert_eq!(
        task["checklist"],
        json!([{ "id": k1, "text": "B", "done": false, "position": 0 }])
    );
    assert!(rev(&task) > rev(&before));
    api.delete(&format!("/checklist/{k0}"))
        .await
        .expect_error(404);
    api.patch(&format!("/checklist/{k0}"), json!({ "done": true }))
        .await
        .expect_error(404);

    let r = api.delete(&format!("/tags/{g}")).await;
    assert_eq!(
        r.expect_ok(200),
        &json!({ "ok": true, "id": g, "deleted": 1 })
    );
    let r = api.delete(&format!("/comments/{m}")).await;
    assert_eq!(
        r.expect_ok(200),
        &json!({ "ok": true, "id": m, "deleted": 1 })
    );
    let task = api.task(&tid).await;
    assert_eq!(
        (
            task["tags"].clone(),
            task["tagIds"].clone(),
            task["comments"].clone()
        ),
        (json!([]), json!([]), json!([]))
    );
    api.delete(&format!("/tags/{g}")).await.expect_error(404);
    api.delete(&format!("/comments/{m}"))
        .await
        .expect_error(404);
}

#[tokio::test]
async fn tags_go_to_the_end_are_cut_at_40_and_at_most_5() {
    let s = Server::start().await;
    let (api, _, tid) = one_task(&s).await;
    let (g1, _) = added(&api, &tid, "tags", json!({ "text": "Urgent" })).await;
    assert!(g1.starts_with("g_"), "{g1}");
    let (g2, task) = added(&api, &tid, "tags", json!({ "text": "é".repeat(45) })).await;
    assert_eq!(task["tags"], json!(["Urgent", "é".repeat(40)]));
    assert_eq!(task["tagIds"], json!([g1, g2]));

    // Equal ignoring case: 200 with the existing id, nothing changes.
    let r = add(&api, &tid, "tags", json!({ "text": "URGENT" })).await;
    let reply = r.expect_ok(200).clone();
    assert_eq!(reply["id"], json!(g1));
    assert_eq!(reply["task"], task);
    assert_eq!(
        api.task(&tid).await,
        task,
        "a duplicate tag changed the card"
    );
    // Case is ignored beyond ASCII too.
    let r = add(&api, &tid, "tags", json!({ "text": "É".repeat(40) })).await;
    assert_eq!(r.expect_ok(200)["id"], json!(g2), "{}", r.text);
    assert_eq!(api.task(&tid).await, task);

    add(&api, &tid, "tags", json!({ "text": "" }))
        .await
        .expect_error(422);
    add(&api, &tid, "tags", json!({})).await.expect_error(422);
    for t in ["c", "d", "e"] {
        added(&api, &tid, "tags", json!({ "text": t })).await;
    }
    let five = api.task(&tid).await;
    assert_eq!(five["tags"].as_array().unwrap().len(), 5);
    add(&api, &tid, "tags", json!({ "text": "sixth" }))
        .await
        .expect_error(422);
    assert_eq!(api.task(&tid).await, five);
    // At five, a duplicate is still the 200 no-op.
    assert_eq!(
        add(&api, &tid, "tags", json!({ "text": "C" }))
            .await
            .expect_ok(200)["task"],
        five
    );
}

#[tokio::test]
async fn patch_tags_replaces_the_list_and_a_kept_text_keeps_its_id() {
    let s = Server::start().await;
    let (api, _, tid) = one_task(&s).await;
    added(
        &api,
        &tid,
        "tags",
        json!({ "id": "g_alpha", "text": "alpha" }),
    )
    .await;
    added(&api, &tid, "tags", json!({ "text": "gamma" })).await;
    let r = api
        .patch(
            &format!("/tasks/{tid}"),
            json!({ "tags": ["beta", "alpha"] }),
        )
        .await;
    let task = r.expect_ok(200)["task"].clone();
    assert_eq!(task["tags"], json!(["beta", "alpha"]));
    assert_eq!(task["tagIds"][1], json!("g_alpha"));
    assert_ne!(task["tagIds"][0], json!("g_alpha"));
    api.delete("/tags/g_alpha").await.expect_ok(200);
    assert_eq!(api.task(&tid).await["tags"], json!(["beta"]));
}
