//! Deletion and the recycle bin (issue 3): one entry per DELETE, `GET /bin`, restoring by
//! `POST /bin/:id/restore` or `PATCH cancelledAt: null`, restores that cannot land, the window
//! of 20 entries, and `POST /purge`.

use reqwest::Method;
use serde_json::{Value, json};

use crate::harness::*;

/// The entries of `GET /bin`, shape-checked.
pub(crate) async fn bin(api: &Api) -> Vec<Value> {
    let r = api.get("/bin").await;
    let body = r.expect_ok(200);
    assert_keys(body, &["ok", "entries"]);
    let entries = body["entries"].as_array().expect("entries").clone();
    for e in &entries {
        assert_keys(e, &["id", "kind", "deletedAt", "label", "count"]);
        assert!(str_of(&e["id"]).starts_with("d_"), "entry id {e}");
        assert!(e["deletedAt"].is_i64() && e["count"].is_i64(), "{e}");
    }
    entries
}

/// The newest bin entry, checked against kind, label and count.
#[track_caller]
fn expect_entry(entry: &Value, kind: &str, label: &str, count: i64) -> String {
    assert_eq!(
        (
            entry["kind"].clone(),
            entry["label"].clone(),
            entry["count"].clone()
        ),
        (json!(kind), json!(label), json!(count)),
        "{entry}"
    );
    str_of(&entry["id"])
}

pub(crate) async fn restore(api: &Api, entry: &str) -> Reply {
    api.send(Method::POST, &format!("/bin/{entry}/restore"), None)
        .await
}

async fn purge(api: &Api) -> Reply {
    api.send(Method::POST, "/purge", None).await
}

#[track_caller]
pub(crate) fn expect_restored(r: &Reply, entry: &str, head: &str, count: i64) {
    let body = r.expect_ok(200);
    assert_keys(body, &["ok", "id", "restored"]);
    assert!(
        body["id"] == json!(entry) || body["id"] == json!(head),
        "{}",
        r.text
    );
    assert_eq!(body["restored"], json!(count), "{}", r.text);
}

pub(crate) async fn sub(api: &Api, cid: &str, parent: &str, title: &str) -> String {
    let body = json!({ "columnId": cid, "title": title, "parentId": parent });
    str_of(&api.create_task(body).await["id"])
}

async fn used(api: &Api) -> (i64, i64) {
    let r = api.get("/usage").await;
    let b = r.expect_ok(200);
    (
        b["used"].as_i64().expect("used"),
        b["purgeable"].as_i64().expect("purgeable"),
    )
}

#[tokio::test]
async fn deleting_a_task_takes_its_subtasks_as_one_bin_entry_and_restore_brings_all_back() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, c1) = api.board().await;
    let c2 = api.new_column(&pid, "Other").await;
    let body = json!({ "columnId": c1, "title": "Parent", "tags": ["x"],
        "checklist": [{ "text": "step" }], "comments": [{ "text": "note" }] });
    let parent = str_of(&api.create_task(body).await["id"]);
    let s1 = sub(&api, &c1, &parent, "Sub 1").await;
    let s2 = sub(&api, &c2, &parent, "Sub 2").await;
    let kept = str_of(&api.new_task(&c1, "Kept").await["id"]);
    let project_before = api.project(&pid).await;
    assert_eq!(bin(&api).await, Vec::<Value>::new());

    let t0 = now_ms();
    let r = api.delete(&format!("/tasks/{parent}")).await;
    assert_eq!(
        r.expect_ok(200),
        &json!({ "ok": true, "id": parent, "deleted": 3 })
    );
    let entries = bin(&api).await;
    assert_eq!(entries.len(), 1, "one DELETE, one entry: {entries:?}");
    let entry = expect_entry(&entries[0], "task", "Parent", 3);
    let deleted_at = entries[0]["deletedAt"].as_i64().unwrap();
    assert!(
        deleted_at >= t0 - 5_000 && deleted_at <= now_ms() + 5_000,
        "{deleted_at}"
    );
    for tid in [&parent, &s1, &s2] {
        api.get(&format!("/tasks/{tid}")).await.expect_error(404);
    }
    assert_eq!(task_ids(&api.project(&pid).await), vec![kept.clone()]);
    for q in ["", "?completed=all", "?completed=recent"] {
        let all: Vec<String> = api.projects(q).await.iter().flat_map(task_ids).collect();
        assert_eq!(all, vec![kept.clone()], "GET /projects{q}");
    }

    let r = restore(&api, &entry).await;
    expect_restored(&r, &entry, &parent, 3);
    assert_eq!(
        bin(&api).await,
        Vec::<Value>::new(),
        "a restore removes the entry"
    );
    let project = api.project(&pid).await;
    for before in tasks_of(&project_before) {
        let id = str_of(&before["id"]);
        let after = find_task(&project, &id).unwrap_or_else(|| panic!("{id} not restored"));
        assert_eq!(after["cancelledAt"], json!(null));
        if id == kept {
            assert_eq!(after, before);
            continue;
        }
        assert!(
            after["rev"].as_i64() > before["rev"].as_i64(),
            "restored {id} not stamped anew"
        );
        assert!(after["updatedAt"].as_i64().unwrap() >= deleted_at);
        assert_eq!(project["updatedAt"], after["updatedAt"], "project stamp");
        for field in [
            "columnId",
            "parentId",
            "title",
            "tags",
            "tagIds",
            "checklist",
            "comments",
            "position",
        ] {
            assert_eq!(after[field], before[field], "{id}.{field}");
        }
    }
    restore(&api, &entry).await.expect_error(404);
    restore(&api, "d_unknown").await.expect_error(404);
}

#[tokio::test]
async fn deleting_a_column_takes_its_cards_and_their_subtasks_wherever_they_sit() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, a) = api.board().await;
    let b = api.new_column(&pid, "B").await;
    let p = str_of(&api.new_task(&a, "P").await["id"]);
    let q = str_of(&api.new_task(&b, "Q").await["id"]);
    let s_in_a = sub(&api, &a, &p, "S in A").await;
    let s_in_b = sub(&api, &b, &p, "S of P in B").await;
    let x_in_a = sub(&api, &a, &q, "X in A, parent Q in B").await;
    let before = api.project(&pid).await;

    let r = api.delete(&format!("/columns/{a}")).await;
    assert_eq!(
        r.expect_ok(200),
        &json!({ "ok": true, "id": a, "deleted": 5 })
    );
    let entries = bin(&api).await;
    assert_eq!(entries.len(), 1);
    let entry = expect_entry(&entries[0], "column", "To do", 5);
    let project = api.project(&pid).await;
    assert_eq!(ids(&project["columns"]), vec![b.clone()]);
    assert_eq!(
        task_ids(&project),
        vec![q.clone()],
        "Q stays, P's subtask in B goes"
    );
    for tid in [&p, &s_in_a, &s_in_b, &x_in_a] {
        api.get(&format!("/tasks/{tid}")).await.expect_error(404);
    }

    expect_restored(&restore(&api, &entry).await, &entry, &a, 5);
    let project = api.project(&pid).await;
    let mut want = task_ids(&before);
    want.sort();
    let mut got = task_ids(&project);
    got.sort();
    assert_eq!(got, want);
    assert_eq!(find_task(&project, &s_in_b).unwrap()["columnId"], json!(b));
    assert_eq!(find_task(&project, &x_in_a).unwrap()["parentId"], json!(q));
    assert_eq!(project["columns"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn deleting_a_project_is_one_entry_and_the_bin_lists_newest_first() {
    let s = Server::start().await;
    let api = s.api();
    let project = api
        .create_project(json!({ "name": "Doomed", "columns": ["A", "B"] }))
        .await;
    let pid = str_of(&project["id"]);
    let col_a = str_of(&project["columns"][0]["id"]);
    let parent = str_of(&api.new_task(&col_a, "Parent").await["id"]);
    sub(&api, &str_of(&project["columns"][1]["id"]), &parent, "Sub").await;
    let (_, other_col) = api.board().await;
    let lone = str_of(&api.new_task(&other_col, "Lone").await["id"]);
    let other_col_name = "To do";

    api.delete(&format!("/tasks/{lone}")).await.expect_ok(200);
    let r = api.delete(&format!("/projects/{pid}")).await;
    assert_eq!(r.expect_ok(200)["deleted"], json!(5));
    api.delete(&format!("/columns/{other_col}"))
        .await
        .expect_ok(200);
    let entries = bin(&api).await;
    assert_eq!(entries.len(), 3);
    expect_entry(&entries[0], "column", other_col_name, 1);
    let project_entry = expect_entry(&entries[1], "project", "Doomed", 5);
    expect_entry(&entries[2], "task", "Lone", 1);
    let stamps: Vec<i64> = entries
        .iter()
        .map(|e| e["deletedAt"].as_i64().unwrap())
        .collect();
    assert!(
        stamps.windows(2).all(|w| w[0] >= w[1]),
        "newest first: {stamps:?}"
    );
    api.get(&format!("/projects/{pid}")).await.expect_error(404);
    api.get(&format!("/tasks/{parent}")).await.expect_error(404);

    // Another account sees none of it and cannot restore it.
    let (other_key, _) = s.issue_key(None).await;
    let other = s.api_for(&other_key);
    assert_eq!(bin(&other).await, Vec::<Value>::new());
    restore(&other, &project_entry).await.expect_error(404);
    assert_eq!(bin(&api).await.len(), 3);

    // Any key of the account may restore.
    let r = api.post("/keys", json!({ "label": "second" })).await;
    let second = s.api_for(&str_of(&r.expect_ok(201)["key"]));
    expect_restored(
        &restore(&second, &project_entry).await,
        &project_entry,
        &pid,
        5,
    );
    let back = api.project(&pid).await;
    assert_eq!(back["name"], json!("Doomed"));
    assert_eq!(tasks_of(&back).len(), 2);
    assert_eq!(bin(&api).await.len(), 2);
}

#[tokio::test]
async fn patch_cancelled_at_null_restores_the_entry_the_card_heads() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, cid) = api.board().await;
    let parent = str_of(&api.new_task(&cid, "Parent").await["id"]);
    let s1 = sub(&api, &cid, &parent, "Sub").await;
    api.delete(&format!("/tasks/{parent}")).await.expect_ok(200);

    // A subtask deleted with its parent does not head the entry.
    let r = api
        .patch(&format!("/tasks/{s1}"), json!({ "cancelledAt": null }))
        .await;
    r.expect_field_error(422, "cancelledAt");
    api.get(&format!("/tasks/{s1}")).await.expect_error(404);
    assert_eq!(bin(&api).await.len(), 1);

    let r = api
        .patch(&format!("/tasks/{parent}"), json!({ "cancelledAt": null }))
        .await;
    let body = r.expect_ok(200);
    assert_keys(body, &["ok", "task"]);
    assert_eq!(body["task"]["cancelledAt"], json!(null));
    assert_eq!(body["task"]["id"], json!(parent));
    assert_eq!(api.task(&parent).await, body["task"]);
    assert_eq!(api.task(&s1).await["parentId"], json!(parent));
    assert_eq!(bin(&api).await, Vec::<Value>::new());
    assert_eq!(task_ids(&api.project(&pid).await).len(), 2);
}

#[tokio::test]
async fn patch_cancelled_at_to_a_time_deletes_like_delete() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, cid) = api.board().await;
    let parent = str_of(&api.new_task(&cid, "Parent").await["id"]);
    let s1 = sub(&api, &cid, &parent, "Sub").await;
    let r = api
        .patch(
            &format!("/tasks/{parent}"),
            json!({ "cancelledAt": now_ms() }),
        )
        .await;
    r.expect_ok(200);
    for tid in [&parent, &s1] {
        api.get(&format!("/tasks/{tid}")).await.expect_error(404);
    }
    assert!(task_ids(&api.project(&pid).await).is_empty());
    let entries = bin(&api).await;
    assert_eq!(entries.len(), 1);
    let entry = expect_entry(&entries[0], "task", "Parent", 2);
    expect_restored(&restore(&api, &entry).await, &entry, &parent, 2);
    assert_eq!(api.task(&s1).await["cancelledAt"], json!(null));
}

#[tokio::test]
async fn a_card_created_with_cancelled_at_lands_in_the_bin() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, cid) = api.board().await;
    let earlier = api
        .delete(&format!(
            "/tasks/{}",
            str_of(&api.new_task(&cid, "Old").await["id"])
        ))
        .await;
    earlier.expect_ok(200);
    let body = json!({ "id": "t_gone", "columnId": cid, "title": "Born deleted", "cancelledAt": days_ago(1) });
    let r = api.post("/tasks", body).await;
    r.expect_ok(201);
    api.get("/tasks/t_gone").await.expect_error(404);
    assert!(task_ids(&api.project(&pid).await).is_empty());
    let entries = bin(&api).await;
    assert_eq!(entries.len(), 2, "a new entry of its own");
    expect_entry(&entries[0], "task", "Born deleted", 1);
    let r = api
        .patch("/tasks/t_gone", json!({ "cancelledAt": null }))
        .await;
    assert_eq!(r.expect_ok(200)["task"]["cancelledAt"], json!(null));
    assert_eq!(
        task_ids(&api.project(&pid).await),
        vec!["t_gone".to_string()]
    );
    expect_entry(&bin(&api).await[0], "task", "Old", 1);
}

#[tokio::test]
async fn the_21st_deletion_destroys_the_oldest_entry_at_once() {
    let s = Server::start().await;
    let api = s.api();
    let (_, cid) = api.board().await;
    let big = "x".repeat(50_000);
    api.create_task(
        json!({ "id": "t_n00", "columnId": cid, "title": "Oldest", "description": big }),
    )
    .await;
    for i in 1..=20 {
        api.create_task(
            json!({ "id": format!("t_n{i:02}"), "columnId": cid, "title": format!("N{i}") }),
        )
        .await;
    }
    api.delete("/tasks/t_n00").await.expect_ok(200);
    let oldest = str_of(&bin(&api).await[0]["id"]);
    for i in 1..20 {
        api.delete(&format!("/tasks/t_n{i:02}"))
            .await
            .expect_ok(200);
    }
    let entries = bin(&api).await;
    assert_eq!(entries.len(), 20);
    assert_eq!(entries[19]["id"], json!(oldest));
    let (used_before, _) = used(&api).await;

    api.delete("/tasks/t_n20").await.expect_ok(200);
    let entries = bin(&api).await;
    assert_eq!(entries.len(), 20, "the window holds 20");
    assert!(
        !ids(&json!(entries)).contains(&oldest),
        "the oldest entry is still listed"
    );
    assert_eq!(entries[19]["label"], json!("N1"));
    let (used_after, _) = used(&api).await;
    assert!(
        used_after < used_before - 40_000,
        "space not freed at once: {used_before} → {used_after}"
    );
    restore(&api, &oldest).await.expect_error(404);
    api.patch("/tasks/t_n00", json!({ "cancelledAt": null }))
        .await
        .expect_error(404);

    // Destroyed for good: its id is free again, while a card still in the bin holds its own.
    let task = api
        .create_task(json!({ "id": "t_n00", "columnId": cid, "title": "Reborn" }))
        .await;
    assert_eq!(task["title"], json!("Reborn"));
    assert_ne!(task["description"], json!(big));
    api.post(
        "/tasks",
        json!({ "id": "t_n01", "columnId": cid, "title": "Clash" }),
    )
    .await
    .expect_field_error(409, "id");
}

#[tokio::test]
async fn purge_destroys_every_entry_and_reports_cards_and_bytes() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, cid) = api.board().await;
    let col = api.new_column(&pid, "Doomed").await;
    api.new_task(&col, "C1").await;
    api.new_task(&col, "C2").await;
    let parent = str_of(&api.new_task(&cid, "Parent").await["id"]);
    sub(&api, &cid, &parent, "Sub").await;
    let kept = str_of(&api.new_task(&cid, "Kept").await["id"]);
    let empty = api.new_project("Empty").await;
    let (used0, _) = used(&api).await;

    api.delete(&format!("/tasks/{parent}")).await.expect_ok(200);
    api.delete(&format!("/columns/{col}")).await.expect_ok(200);
    api.delete(&format!("/projects/{empty}"))
        .await
        .expect_ok(200);
    let entries: Vec<String> = bin(&api).await.iter().map(|e| str_of(&e["id"])).collect();
    assert_eq!(entries.len(), 3);
    let (used1, purgeable) = used(&api).await;
    assert!(purgeable > 0, "purgeable {purgeable}");
    assert!(
        used1 >= used0 - 100,
        "deleted records still count: {used0} → {used1}"
    );

    let r = purge(&api).await;
    let body = r.expect_ok(200).clone();
    assert_keys(&body, &["ok", "purged", "freed"]);
    assert_eq!(body["purged"], json!(4), "cards destroyed: {}", r.text);
    let freed = body["freed"].as_i64().expect("freed");
    assert!(freed > 0);
    let (used2, purgeable2) = used(&api).await;
    assert_eq!(used1 - used2, freed, "freed is what left the account");
    assert_eq!(purgeable2, 0);
    assert_eq!(bin(&api).await, Vec::<Value>::new());
    for e in &entries {
        restore(&api, e).await.expect_error(404);
    }
    api.patch(&format!("/tasks/{parent}"), json!({ "cancelledAt": null }))
        .await
        .expect_error(404);
    assert_eq!(task_ids(&api.project(&pid).await), vec![kept]);

    // Destroyed for good: the id is free again.
    let body = json!({ "id": parent, "columnId": cid, "title": "Again" });
    assert_eq!(api.create_task(body).await["title"], json!("Again"));

    let r = purge(&api).await;
    assert_eq!(
        r.expect_ok(200),
        &json!({ "ok": true, "purged": 0, "freed": 0 })
    );
}

#[tokio::test]
async fn a_subtask_deleted_alone_is_its_own_entry_and_comes_back_under_its_parent() {
    let s = Server::start().await;
    let api = s.api();
    let (_, cid) = api.board().await;
    let parent = api.new_task(&cid, "Parent").await;
    let parent_id = str_of(&parent["id"]);
    let s1 = sub(&api, &cid, &parent_id, "Sub").await;
    let r = api.delete(&format!("/tasks/{s1}")).await;
    assert_eq!(r.expect_ok(200)["deleted"], json!(1));
    assert_eq!(api.task(&parent_id).await, parent, "the parent was touched");
    let entry = expect_entry(&bin(&api).await[0], "task", "Sub", 1);
    expect_restored(&restore(&api, &entry).await, &entry, &s1, 1);
    assert_eq!(api.task(&s1).await["parentId"], json!(parent_id));
}

#[tokio::test]
async fn cancelled_at_null_on_a_card_heading_no_entry() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, cid) = api.board().await;
    let live = api.new_task(&cid, "Live").await;
    let lid = str_of(&live["id"]);
    // On a live card it changes nothing and opens no entry.
    let r = api
        .patch(&format!("/tasks/{lid}"), json!({ "cancelledAt": null }))
        .await;
    assert_eq!(r.expect_ok(200)["task"], live);
    assert_eq!(bin(&api).await, Vec::<Value>::new());

    // A card deleted with its column does not head the entry.
    let col = api.new_column(&pid, "Doomed").await;
    let inside = str_of(&api.new_task(&col, "Inside").await["id"]);
    api.delete(&format!("/columns/{col}")).await.expect_ok(200);
    let r = api
        .patch(&format!("/tasks/{inside}"), json!({ "cancelledAt": null }))
        .await;
    r.expect_field_error(422, "cancelledAt");
    api.get(&format!("/tasks/{inside}")).await.expect_error(404);
    assert_eq!(bin(&api).await.len(), 1);
    api.get("/bin?kind=task")
        .await
        .expect_field_error(422, "kind");
}
