//! Restores that cannot land (issue 3; contract: Deleting, the recycle bin, restoring): the
//! card's column or parent deleted meanwhile, the project at its column limit, the account at
//! its project limit. Each answers 422 naming the field and keeps the entry. Also what
//! `/changes` shows of deletions and restores.

use serde_json::{Value, json};

use crate::bin::{bin, expect_restored, restore, sub};
use crate::harness::*;

#[tokio::test]
async fn a_restore_whose_column_or_parent_went_meanwhile_is_422_naming_it() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, a) = api.board().await;
    let b = api.new_column(&pid, "B").await;
    let t = str_of(&api.new_task(&a, "In A").await["id"]);
    let parent = str_of(&api.new_task(&b, "Parent").await["id"]);
    let s1 = sub(&api, &b, &parent, "Sub").await;

    api.delete(&format!("/tasks/{t}")).await.expect_ok(200);
    let t_entry = str_of(&bin(&api).await[0]["id"]);
    api.delete(&format!("/columns/{a}")).await.expect_ok(200);
    let a_entry = str_of(&bin(&api).await[0]["id"]);
    restore(&api, &t_entry)
        .await
        .expect_field_error(422, "columnId");
    let r = api
        .patch(&format!("/tasks/{t}"), json!({ "cancelledAt": null }))
        .await;
    r.expect_field_error(422, "columnId");
    assert_eq!(
        bin(&api).await.len(),
        2,
        "a refused restore keeps its entry"
    );
    api.get(&format!("/tasks/{t}")).await.expect_error(404);
    expect_restored(&restore(&api, &a_entry).await, &a_entry, &a, 1);
    expect_restored(&restore(&api, &t_entry).await, &t_entry, &t, 1);
    assert_eq!(api.task(&t).await["columnId"], json!(a));

    api.delete(&format!("/tasks/{s1}")).await.expect_ok(200);
    let s_entry = str_of(&bin(&api).await[0]["id"]);
    api.delete(&format!("/tasks/{parent}")).await.expect_ok(200);
    let p_entry = str_of(&bin(&api).await[0]["id"]);
    restore(&api, &s_entry)
        .await
        .expect_field_error(422, "parentId");
    api.get(&format!("/tasks/{s1}")).await.expect_error(404);
    restore(&api, &p_entry).await.expect_ok(200);
    restore(&api, &s_entry).await.expect_ok(200);
    assert_eq!(api.task(&s1).await["parentId"], json!(parent));
}

#[tokio::test]
async fn a_column_restored_into_a_full_project_is_422_naming_project_id() {
    let s = Server::start_with(&["--limit-columns-per-project", "2"]).await;
    let api = s.api();
    let project = api
        .create_project(json!({ "name": "Two", "columns": ["A", "B"] }))
        .await;
    let pid = str_of(&project["id"]);
    let b = str_of(&project["columns"][1]["id"]);
    api.new_task(&b, "Card in B").await;
    api.post("/columns", json!({ "projectId": pid, "name": "C" }))
        .await
        .expect_error(422);

    api.delete(&format!("/columns/{b}")).await.expect_ok(200);
    let b_entry = str_of(&bin(&api).await[0]["id"]);
    // A column in the bin does not count toward the limit.
    let c = str_of(
        &api.create_column(json!({ "projectId": pid, "name": "C" }))
            .await["id"],
    );
    restore(&api, &b_entry)
        .await
        .expect_field_error(422, "projectId");
    assert_eq!(
        api.project(&pid).await["columns"].as_array().unwrap().len(),
        2
    );
    assert_eq!(bin(&api).await.len(), 1);

    api.delete(&format!("/columns/{c}")).await.expect_ok(200);
    expect_restored(&restore(&api, &b_entry).await, &b_entry, &b, 2);
    assert_eq!(tasks_of(&api.project(&pid).await).len(), 1);
}

#[tokio::test]
async fn a_project_restored_over_the_account_limit_is_422_naming_id() {
    let s = Server::start_with(&["--limit-projects-per-account", "2"]).await;
    let api = s.api();
    api.new_project("One").await;
    let two = api.new_project("Two").await;
    api.post("/projects", json!({ "name": "Three" }))
        .await
        .expect_error(422);
    api.delete(&format!("/projects/{two}")).await.expect_ok(200);
    let entry = str_of(&bin(&api).await[0]["id"]);
    // A project in the bin does not count toward the limit; an archived one does.
    let three = api.new_project("Three").await;
    restore(&api, &entry).await.expect_field_error(422, "id");
    let archive = json!({ "archivedAt": now_ms() });
    api.patch(&format!("/projects/{three}"), archive)
        .await
        .expect_ok(200);
    restore(&api, &entry).await.expect_field_error(422, "id");
    api.get(&format!("/projects/{two}")).await.expect_error(404);
    assert_eq!(api.projects("").await.len(), 2);

    api.delete(&format!("/projects/{three}"))
        .await
        .expect_ok(200);
    expect_restored(&restore(&api, &entry).await, &entry, &two, 1);
    assert_eq!(api.project(&two).await["name"], json!("Two"));
}

#[tokio::test]
async fn a_column_whose_project_was_deleted_meanwhile_is_422_naming_project_id() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, cid) = api.board().await;
    api.new_task(&cid, "Card").await;
    api.delete(&format!("/columns/{cid}")).await.expect_ok(200);
    let col_entry = str_of(&bin(&api).await[0]["id"]);
    api.delete(&format!("/projects/{pid}")).await.expect_ok(200);
    let project_entry = str_of(&bin(&api).await[0]["id"]);
    restore(&api, &col_entry)
        .await
        .expect_field_error(422, "projectId");
    assert_eq!(bin(&api).await.len(), 2);
    expect_restored(
        &restore(&api, &project_entry).await,
        &project_entry,
        &pid,
        1,
    );
    expect_restored(&restore(&api, &col_entry).await, &col_entry, &cid, 2);
    assert_eq!(tasks_of(&api.project(&pid).await).len(), 1);
}

/// `GET /changes?since=..&completed=all`: (cards, lists, taskIds, now).
async fn changes(api: &Api, since: i64) -> (Vec<Value>, Vec<Value>, Vec<String>, i64) {
    let r = api
        .get(&format!("/changes?since={since}&completed=all"))
        .await;
    let b = r.expect(200);
    let list = |k: &str| b[k].as_array().cloned().unwrap_or_default();
    let task_ids = list("taskIds").iter().map(str_of).collect();
    (
        list("cards"),
        list("lists"),
        task_ids,
        b["now"].as_i64().expect("now"),
    )
}

#[tokio::test]
async fn changes_show_deleted_cards_with_cancelled_at_and_restored_ones_live() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, cid) = api.board().await;
    let parent = str_of(&api.new_task(&cid, "Parent").await["id"]);
    let s1 = sub(&api, &cid, &parent, "Sub").await;
    let (_, _, held, now0) = changes(&api, 0).await;
    assert!(held.contains(&parent) && held.contains(&s1));

    api.delete(&format!("/tasks/{parent}")).await.expect_ok(200);
    let (cards, _, held, now1) = changes(&api, now0).await;
    for id in [&parent, &s1] {
        let card = cards.iter().find(|c| c["id"] == json!(id));
        let card = card.unwrap_or_else(|| panic!("{id} missing from cards: {cards:?}"));
        assert!(card["cancelledAt"].is_i64(), "{card}");
        assert!(!held.contains(id), "{id} still in taskIds");
    }
    let entry = str_of(&bin(&api).await[0]["id"]);
    restore(&api, &entry).await.expect_ok(200);
    let (cards, _, held, _) = changes(&api, now1).await;
    for id in [&parent, &s1] {
        let card = cards
            .iter()
            .find(|c| c["id"] == json!(id))
            .expect("restored card");
        assert_eq!(card["cancelledAt"], json!(null));
        assert!(held.contains(id), "{id} not back in taskIds");
    }

    let col = api.new_column(&pid, "Doomed").await;
    let (_, _, _, now2) = changes(&api, 0).await;
    api.delete(&format!("/columns/{col}")).await.expect_ok(200);
    let (_, lists, _, _) = changes(&api, now2).await;
    let marker = lists
        .iter()
        .find(|l| l["id"] == json!(col))
        .expect("column marker");
    assert!(marker["deletedAt"].is_i64(), "{marker}");
}

#[tokio::test]
async fn a_restore_frees_its_slot_in_the_window_of_20() {
    let s = Server::start().await;
    let api = s.api();
    let (_, cid) = api.board().await;
    for i in 0..=20 {
        let body = json!({ "id": format!("t_w{i:02}"), "columnId": cid, "title": format!("W{i}") });
        api.create_task(body).await;
    }
    for i in 0..20 {
        api.delete(&format!("/tasks/t_w{i:02}"))
            .await
            .expect_ok(200);
    }
    let entries = bin(&api).await;
    let oldest = str_of(&entries[19]["id"]);
    let w10 = entries
        .iter()
        .find(|e| e["label"] == json!("W10"))
        .expect("W10 entry");
    restore(&api, &str_of(&w10["id"])).await.expect_ok(200);
    assert_eq!(bin(&api).await.len(), 19);

    // The freed slot takes the next deletion: nothing is destroyed.
    api.delete("/tasks/t_w20").await.expect_ok(200);
    let entries = bin(&api).await;
    assert_eq!(entries.len(), 20);
    assert_eq!(
        entries[19]["id"],
        json!(oldest),
        "the oldest went too early"
    );
    // The window is full again: the next deletion destroys the oldest.
    api.delete("/tasks/t_w10").await.expect_ok(200);
    let entries = bin(&api).await;
    assert_eq!(entries.len(), 20);
    assert!(!ids(&json!(entries)).contains(&oldest));
    assert_eq!(entries[19]["label"], json!("W1"));
    restore(&api, &oldest).await.expect_error(404);
}
