//! Comments, and the rules a card's checklist, tags and comments share (issue 3): the same
//! limits on task create, client-supplied item ids, 404 for items of a deleted card or another account,
//! unknown fields on the item routes.

use serde_json::{Value, json};

use crate::card_items::{add, added, one_task, positions_are_indexes};
use crate::harness::*;

#[tokio::test]
async fn task_create_applies_the_same_limits_to_tags_checklist_and_comments() {
    let s = Server::start().await;
    let (api, cid, tid) = one_task(&s).await;
    let pid = str_of(&api.task(&tid).await["projectId"]);
    let before = api.account().await;
    let n = |k: usize, f: &dyn Fn(usize) -> Value| (0..k).map(f).collect::<Vec<_>>();
    let bad_bodies = [
        ("tags", json!({ "tags": ["1", "2", "3", "4", "5", "6"] })),
        ("tags", json!({ "tags": ["ok", ""] })),
        (
            "checklist",
            json!({ "checklist": n(101, &|i| json!({ "text": format!("i{i}") })) }),
        ),
        ("checklist", json!({ "checklist": [{ "text": "" }] })),
        (
            "comments",
            json!({ "comments": n(201, &|i| json!({ "text": format!("c{i}") })) }),
        ),
        (
            "comments",
            json!({ "comments": [{ "text": "x".repeat(16_385) }] }),
        ),
        ("comments", json!({ "comments": [{ "text": "" }] })),
    ];
    for (what, extra) in bad_bodies {
        let mut body = json!({ "columnId": cid, "title": "Over" });
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        let r = api.post("/tasks", body).await;
        assert_eq!(r.status, 422, "{what}: {}", r.text);
        r.expect_error(422);
    }
    assert_eq!(
        api.account().await,
        before,
        "a refused create wrote something"
    );

    let body = json!({
        "columnId": cid, "title": "At limits", "tags": ["a", "b", "c", "d", "T".repeat(45)],
        "checklist": n(100, &|i| json!({ "text": if i == 0 { "é".repeat(600) } else { format!("i{i}") }, "done": i % 2 == 1 })),
        "comments": [{ "text": "z".repeat(16_384) }],
    });
    let task = api.create_task(body).await;
    assert_eq!(task["tags"][4], json!("T".repeat(40)));
    assert_eq!(task["tagIds"].as_array().unwrap().len(), 5);
    assert_eq!(task["checklist"].as_array().unwrap().len(), 100);
    assert_eq!(task["checklist"][0]["text"], json!("é".repeat(500)));
    assert_eq!(task["checklist"][3]["done"], json!(true));
    positions_are_indexes(&task["checklist"]);
    assert_eq!(char_count(&task["comments"][0]["text"]), 16_384);
    assert!(find_task(&api.project(&pid).await, &str_of(&task["id"])).is_some());
}

#[tokio::test]
async fn client_item_ids_need_their_prefix_and_are_unique_in_the_account() {
    let s = Server::start().await;
    let (api, cid, tid) = one_task(&s).await;
    let other_task = str_of(&api.new_task(&cid, "Other").await["id"]);
    let (k, _) = added(
        &api,
        &tid,
        "checklist",
        json!({ "id": "k_mine", "text": "Mine" }),
    )
    .await;
    let (g, _) = added(
        &api,
        &tid,
        "tags",
        json!({ "id": "g_mine", "text": "mine" }),
    )
    .await;
    let (m, _) = added(
        &api,
        &tid,
        "comments",
        json!({ "id": "m_mine", "text": "Mine" }),
    )
    .await;
    assert_eq!(
        (k.as_str(), g.as_str(), m.as_str()),
        ("k_mine", "g_mine", "m_mine")
    );
    let before = api.account().await;

    for (what, bad) in [
        ("checklist", "g_wrong"),
        ("checklist", "t_wrong"),
        ("checklist", "k_"),
        ("checklist", "k_a b"),
        ("tags", "k_wrong"),
        ("tags", "plain"),
        ("comments", "g_wrong"),
        ("comments", "m_!"),
    ] {
        add(&api, &other_task, what, json!({ "id": bad, "text": "New" }))
            .await
            .expect_field_error(422, "id");
    }
    let long = format!("k_{}", "a".repeat(65));
    add(
        &api,
        &other_task,
        "checklist",
        json!({ "id": long, "text": "New" }),
    )
    .await
    .expect_field_error(422, "id");
    // Already used in the account, on another card: 409.
    for (what, id) in [
        ("checklist", "k_mine"),
        ("tags", "g_mine"),
        ("comments", "m_mine"),
    ] {
        add(
            &api,
            &other_task,
            what,
            json!({ "id": id, "text": "Different" }),
        )
        .await
        .expect_field_error(409, "id");
    }
    let body = json!({ "columnId": cid, "title": "Dup", "checklist": [{ "id": "k_mine", "text": "Other" }] });
    api.post("/tasks", body).await.expect_error(409);
    let body =
        json!({ "columnId": cid, "title": "Bad", "comments": [{ "id": "k_x", "text": "c" }] });
    api.post("/tasks", body).await.expect_error(422);
    let body = json!({ "columnId": cid, "title": "Bad", "tags": ["a"], "tagIds": ["k_a"] });
    api.post("/tasks", body).await.expect_error(422);
    let body = json!({ "columnId": cid, "title": "Dup", "tags": ["other"], "tagIds": ["g_mine"] });
    api.post("/tasks", body).await.expect_error(409);
    let body = json!({ "columnId": cid, "title": "Dup", "comments": [{ "id": "m_mine", "text": "Other" }] });
    api.post("/tasks", body).await.expect_error(409);
    assert_eq!(api.account().await, before);
    // A fresh id on create is kept.
    let body = json!({ "columnId": cid, "title": "Ids", "tags": ["t"], "tagIds": ["g_fresh"],
        "checklist": [{ "id": "k_fresh", "text": "c" }], "comments": [{ "id": "m_fresh", "text": "m" }] });
    let task = api.create_task(body).await;
    assert_eq!(task["tagIds"], json!(["g_fresh"]));
    assert_eq!(task["checklist"][0]["id"], json!("k_fresh"));
    assert_eq!(task["comments"][0]["id"], json!("m_fresh"));

    // Ids are unique within an account, not across accounts.
    let (other_key, _) = s.issue_key(None).await;
    let other = s.api_for(&other_key);
    let (_, their_col) = other.board().await;
    let theirs = str_of(&other.new_task(&their_col, "Theirs").await["id"]);
    let (id, _) = added(
        &other,
        &theirs,
        "checklist",
        json!({ "id": "k_mine", "text": "Theirs" }),
    )
    .await;
    assert_eq!(id, "k_mine");
    assert_eq!(api.task(&tid).await["checklist"][0]["text"], json!("Mine"));
}

#[tokio::test]
async fn items_of_a_deleted_card_or_another_account_are_404() {
    let s = Server::start().await;
    let (api, _, tid) = one_task(&s).await;
    let (k, _) = added(&api, &tid, "checklist", json!({ "text": "A" })).await;
    let (g, _) = added(&api, &tid, "tags", json!({ "text": "t" })).await;
    let (m, _) = added(&api, &tid, "comments", json!({ "text": "c" })).await;
    let kept = api.task(&tid).await;

    // Another account: every route answers 404 and nothing changes.
    let (other_key, _) = s.issue_key(None).await;
    let other = s.api_for(&other_key);
    let probe = |a: Api, tid: String| async move {
        for what in ["checklist", "tags", "comments"] {
            add(&a, &tid, what, json!({ "text": "x" }))
                .await
                .expect_error(404);
        }
        add(&a, &tid, "checklist", json!({ "items": [{ "text": "x" }] }))
            .await
            .expect_error(404);
        add(&a, &tid, "checklist/order", json!({ "ids": [] }))
            .await
            .expect_error(404);
    };
    probe(other.clone(), tid.clone()).await;
    other
        .patch(&format!("/checklist/{k}"), json!({ "done": true }))
        .await
        .expect_error(404);
    other
        .delete(&format!("/checklist/{k}"))
        .await
        .expect_error(404);
    other.delete(&format!("/tags/{g}")).await.expect_error(404);
    other
        .delete(&format!("/comments/{m}"))
        .await
        .expect_error(404);
    assert_eq!(api.task(&tid).await, kept);
    probe(api.clone(), "t_nothere".to_string()).await;

    // A card in the bin: its items answer 404 too.
    api.delete(&format!("/tasks/{tid}")).await.expect_ok(200);
    probe(api.clone(), tid.clone()).await;
    api.patch(&format!("/checklist/{k}"), json!({ "done": true }))
        .await
        .expect_error(404);
    api.delete(&format!("/checklist/{k}"))
        .await
        .expect_error(404);
    api.delete(&format!("/tags/{g}")).await.expect_error(404);
    api.delete(&format!("/comments/{m}"))
        .await
        .expect_error(404);

    // Restored, the card has every item as before.
    let r = api
        .patch(&format!("/tasks/{tid}"), json!({ "cancelledAt": null }))
        .await;
    let back = r.expect_ok(200)["task"].clone();
    for field in ["checklist", "tags", "tagIds", "comments"] {
        assert_eq!(back[field], kept[field], "{field} after restore");
    }
}

#[tokio::test]
async fn unknown_fields_on_item_routes_are_422_naming_them() {
    let s = Server::start().await;
    let (api, _, tid) = one_task(&s).await;
    let (k, _) = added(&api, &tid, "checklist", json!({ "text": "A" })).await;
    let before = api.task(&tid).await;
    for what in ["checklist", "tags", "comments"] {
        add(&api, &tid, what, json!({ "text": "x", "colour": "red" }))
            .await
            .expect_field_error(422, "colour");
    }
    add(
        &api,
        &tid,
        "checklist/order",
        json!({ "ids": [k], "colour": 1 }),
    )
    .await
    .expect_field_error(422, "colour");
    api.patch(
        &format!("/checklist/{k}"),
        json!({ "done": true, "colour": 1 }),
    )
    .await
    .expect_field_error(422, "colour");
    assert_eq!(api.task(&tid).await, before);
}

#[tokio::test]
async fn an_item_create_retried_with_the_same_id_and_fields_is_a_safe_200() {
    let s = Server::start().await;
    let (api, _, tid) = one_task(&s).await;
    let cases = [
        (
            "checklist",
            json!({ "id": "k_retry", "text": "Step", "done": true }),
        ),
        ("comments", json!({ "id": "m_retry", "text": "Note" })),
        ("tags", json!({ "id": "g_retry", "text": "label" })),
    ];
    for (what, body) in cases {
        let (id, task) = added(&api, &tid, what, body.clone()).await;
        let r = add(&api, &tid, what, body.clone()).await;
        let reply = r.expect_ok(200);
        assert_eq!(reply["id"], json!(id), "{what}: {}", r.text);
        assert_eq!(reply["task"], task, "{what}: a retry changed the card");
        assert_eq!(api.task(&tid).await, task);
    }
}

#[tokio::test]
async fn an_id_clash_409_carries_the_existing_record_as_read() {
    let s = Server::start().await;
    let (api, _, tid) = one_task(&s).await;
    let (k, _) = added(
        &api,
        &tid,
        "checklist",
        json!({ "id": "k_one", "text": "Step" }),
    )
    .await;
    let (m, _) = added(
        &api,
        &tid,
        "comments",
        json!({ "id": "m_one", "text": "Note" }),
    )
    .await;
    added(
        &api,
        &tid,
        "tags",
        json!({ "id": "g_one", "text": "label" }),
    )
    .await;
    let task = api.task(&tid).await;

    let r = add(&api, &tid, "checklist", json!({ "id": k, "text": "Other" })).await;
    let current = r.expect_field_error(409, "id")["current"].clone();
    assert_eq!(current, task["checklist"][0], "{}", r.text);
    let r = add(&api, &tid, "comments", json!({ "id": m, "text": "Other" })).await;
    let current = r.expect_field_error(409, "id")["current"].clone();
    assert_eq!(current, task["comments"][0], "{}", r.text);
}

#[tokio::test]
async fn a_task_id_clash_409_carries_the_task_as_read_with_its_items() {
    let s = Server::start().await;
    let (api, cid, tid) = one_task(&s).await;
    added(&api, &tid, "checklist", json!({ "text": "Step" })).await;
    added(&api, &tid, "comments", json!({ "text": "Note" })).await;
    added(&api, &tid, "tags", json!({ "text": "label" })).await;
    let task = api.task(&tid).await;
    let body = json!({ "id": tid, "columnId": cid, "title": "Other title" });
    let r = api.post("/tasks", body).await;
    let current = r.expect_field_error(409, "id")["current"].clone();
    assert_eq!(current, task, "{}", r.text);
}

#[tokio::test]
async fn comments_are_refused_over_16384_characters_and_at_most_200() {
    let s = Server::start().await;
    let (api, cid, tid) = one_task(&s).await;
    let t0 = now_ms();
    let (m1, task) = added(
        &api,
        &tid,
        "comments",
        json!({ "text": "é".repeat(16_384) }),
    )
    .await;
    assert!(m1.starts_with("m_"), "{m1}");
    let c = &task["comments"][0];
    assert_keys(c, &["id", "text", "createdAt"]);
    assert_eq!(
        (c["id"].clone(), char_count(&c["text"])),
        (json!(m1), 16_384)
    );
    let created = c["createdAt"].as_i64().expect("createdAt");
    assert!(
        created >= t0 - 5_000 && created <= now_ms() + 5_000,
        "createdAt {created}"
    );
    for bad in [
        json!({ "text": "x".repeat(16_385) }),
        json!({ "text": "" }),
        json!({}),
    ] {
        add(&api, &tid, "comments", bad).await.expect_error(422);
    }
    assert_eq!(
        api.task(&tid).await,
        task,
        "a refused comment was saved or trimmed"
    );

    let many: Vec<Value> = (0..200)
        .map(|i| json!({ "text": format!("c{i}") }))
        .collect();
    let full = api
        .create_task(json!({ "columnId": cid, "title": "Busy", "comments": many }))
        .await;
    assert_eq!(full["comments"].as_array().unwrap().len(), 200);
    let fid = str_of(&full["id"]);
    add(&api, &fid, "comments", json!({ "text": "201st" }))
        .await
        .expect_error(422);
    assert_eq!(api.task(&fid).await, full);
}
