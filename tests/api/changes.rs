//! The change feed (issue 5; specification: Catching up; contract: Consistency, Deleting):
//! `since`, the three windows, `manifest=changed`, the `holding` short-circuit, deletion
//! markers, the query checks, and ageing out of the 30-day window. Read-your-writes through
//! the feed is in `live` (with the nudge of each write) and `convergence` (under load).

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::*;

pub const DAY: i64 = 86_400_000;
const REPLY_KEYS: &[&str] = &[
    "projects", "lists", "cards", "now", "taskIds", "window", "cutoff",
];

/// `GET /changes{query}`, asserted 200.
pub async fn changes(api: &Api, query: &str) -> Value {
    api.get(&format!("/changes{query}"))
        .await
        .expect(200)
        .clone()
}

/// `GET /changes?since={since}{rest}`, asserted 200.
async fn since(api: &Api, since: i64, rest: &str) -> Value {
    changes(api, &format!("?since={since}{rest}")).await
}

pub fn now_of(reply: &Value) -> i64 {
    reply["now"]
        .as_i64()
        .unwrap_or_else(|| panic!("`now` is not an integer: {reply}"))
}

/// The entries of `list` (`projects`, `lists`, `cards`) of a changes reply.
pub fn entries(reply: &Value, list: &str) -> Vec<Value> {
    reply[list]
        .as_array()
        .unwrap_or_else(|| panic!("`{list}` is not an array: {reply}"))
        .clone()
}

pub fn find<'a>(reply: &'a Value, list: &str, id: &str) -> Option<&'a Value> {
    reply[list]
        .as_array()?
        .iter()
        .find(|e| e["id"] == json!(id))
}

/// `find`, or a failure naming what is missing.
#[track_caller]
pub fn sent<'a>(reply: &'a Value, list: &str, id: &str) -> &'a Value {
    find(reply, list, id).unwrap_or_else(|| panic!("{id} is not in `{list}`: {reply}"))
}

fn set<S: AsRef<str>>(ids: impl IntoIterator<Item = S>) -> BTreeSet<String> {
    ids.into_iter().map(|s| s.as_ref().to_string()).collect()
}

/// Asserts the ids of `list` (`projects`, `lists`, `cards`, `taskIds`), in any order.
#[track_caller]
pub fn assert_ids(reply: &Value, list: &str, want: &[&str]) {
    let entries = reply[list]
        .as_array()
        .unwrap_or_else(|| panic!("`{list}`: {reply}"));
    let have = set(entries.iter().map(|e| str_of(e.get("id").unwrap_or(e))));
    assert_eq!(have, set(want), "`{list}` of {reply}");
}

fn without(record: &Value, key: &str) -> Value {
    let mut record = record.clone();
    record.as_object_mut().expect("object").remove(key);
    record
}

/// A reply to an idle poll: `{unchanged: true, now}` and nothing else.
#[track_caller]
fn unchanged(reply: &Value) -> bool {
    if reply.get("unchanged").is_none() {
        return false;
    }
    assert_keys(reply, &["unchanged", "now"]);
    reply["unchanged"] == json!(true)
}

/// A full reply, with its manifest.
fn full(reply: &Value) -> bool {
    reply.get("unchanged").is_none() && reply["taskIds"].is_array()
}

/// Asserts a 2xx reply and returns its body.
#[track_caller]
pub fn ok(r: Reply) -> Value {
    assert!(r.status / 100 == 2, "{}: {}", r.what, r.text);
    r.body
}

#[tokio::test]
async fn a_full_reply_carries_the_read_shapes_without_nested_children() {
    let s = Server::start().await;
    let api = s.api();
    let t0 = now_ms();
    let body = json!({ "name": "Sync", "folder": "Work", "columns": ["A", "B"] });
    let created = api.create_project(body).await;
    let (pid, cid) = (str_of(&created["id"]), str_of(&created["columns"][0]["id"]));
    let body = json!({ "columnId": cid, "title": "Card", "tags": ["x"],
        "checklist": [{ "text": "one" }], "comments": [{ "text": "hi" }] });
    let tid = str_of(&api.create_task(body).await["id"]);

    let reply = changes(&api, "").await;
    assert_keys(&reply, REPLY_KEYS);
    let now = now_of(&reply);
    assert!(now >= t0 && now <= now_ms() + 1_000, "now {now}");
    assert_eq!(reply["window"], json!("recent"));
    assert_eq!(reply["cutoff"], json!(now - 30 * DAY), "cutoff");

    let full = api.project(&pid).await;
    assert_eq!(reply["projects"], json!([without(&full, "columns")]));
    for column in full["columns"].as_array().unwrap() {
        let list = sent(&reply, "lists", column["id"].as_str().unwrap());
        assert_eq!(list, &without(column, "tasks"));
    }
    assert_eq!(entries(&reply, "lists").len(), 2);
    assert_eq!(reply["cards"], json!([find_task(&full, &tid).unwrap()]));
    assert_ids(&reply, "taskIds", &[&tid]);
}

#[tokio::test]
async fn since_is_inclusive_and_a_card_change_brings_its_project_along() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, cid) = api.board().await;
    let a = str_of(&api.new_task(&cid, "A").await["id"]);
    let b = str_of(&api.new_task(&cid, "B").await["id"]);
    let n = now_of(&changes(&api, "").await);

    let idle = since(&api, n, "").await;
    for list in ["projects", "lists", "cards"] {
        assert_ids(&idle, list, &[]);
    }
    assert_ids(&idle, "taskIds", &[&a, &b]);

    let task = ok(api
        .patch(&format!("/tasks/{a}"), json!({ "title": "A2" }))
        .await)["task"]
        .clone();
    let stamp = task["updatedAt"].as_i64().unwrap();
    assert!(stamp >= n, "stamped {stamp} before the now {n}");
    for from in [n, stamp] {
        let reply = since(&api, from, "").await;
        assert_ids(&reply, "cards", &[&a]);
        assert_eq!(sent(&reply, "cards", &a), &api.task(&a).await);
        assert_ids(&reply, "projects", &[&pid]);
        assert_eq!(sent(&reply, "projects", &pid)["updatedAt"], json!(stamp));
        assert_ids(&reply, "lists", &[]);
    }
    let after = since(&api, stamp + 1, "").await;
    assert_ids(&after, "cards", &[]);
    assert_ids(&after, "projects", &[]);
}

#[tokio::test]
async fn a_card_moved_to_another_project_brings_both_projects() {
    let s = Server::start().await;
    let api = s.api();
    let (from, c1) = api.board().await;
    let (to, c2) = api.board().await;
    let (_, c3) = api.board().await;
    let moved = str_of(&api.new_task(&c1, "moving").await["id"]);
    api.new_task(&c3, "stays").await;
    let n = now_of(&changes(&api, "").await);
    let r = api
        .patch(&format!("/tasks/{moved}"), json!({ "columnId": c2 }))
        .await;
    let stamp = ok(r)["task"]["updatedAt"].clone();

    let reply = since(&api, n, "&manifest=changed").await;
    assert_ids(&reply, "projects", &[&from, &to]);
    for p in [&from, &to] {
        assert_eq!(sent(&reply, "projects", p)["updatedAt"], stamp, "{p}");
    }
    let card = sent(&reply, "cards", &moved);
    assert_eq!(card["projectId"], json!(to));
    assert_eq!(card["columnId"], json!(c2));
    assert_ids(&reply, "taskIds", &[&moved]);
}

#[tokio::test]
async fn a_card_is_not_sent_again_only_because_its_order_moved() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, cid) = api.board().await;
    let a = api.new_task(&cid, "A").await;
    let a_id = str_of(&a["id"]);
    assert_eq!(a["order"], json!(0));
    let n = now_of(&changes(&api, "").await);

    // A new card lands on top, so A's order moves from 0 to 1 without A being written.
    let b = str_of(&api.new_task(&cid, "B").await["id"]);
    assert_eq!(api.task(&a_id).await["order"], json!(1));
    let reply = since(&api, n, "").await;
    assert_ids(&reply, "cards", &[&b]);
    assert_ids(&reply, "projects", &[&pid]);

    // Moving B below A by bulk positions moves A's order back; only B is sent.
    let n = now_of(&reply);
    let positions = json!({ "positions": [{ "id": b, "position": 10 }] });
    let r = api.patch("/tasks/positions", positions).await;
    assert_eq!(ok(r)["moved"], json!(1));
    assert_eq!(api.task(&a_id).await["order"], json!(0));
    assert_ids(&since(&api, n, "").await, "cards", &[&b]);
}

#[tokio::test]
async fn a_deleted_card_carries_cancelled_at_and_a_destroyed_one_just_leaves_task_ids() {
    let s = Server::start().await;
    let api = s.api();
    let (_, cid) = api.board().await;
    let (a, b, c) = ("t_a", "t_b", "t_c");
    for id in [a, b, c] {
        api.create_task(json!({ "id": id, "columnId": cid, "title": id }))
            .await;
    }
    let n = now_of(&changes(&api, "").await);

    ok(api.delete(&format!("/tasks/{a}")).await);
    let reply = since(&api, n, "").await;
    let at = sent(&reply, "cards", a)["cancelledAt"].as_i64();
    assert!(at.is_some_and(|at| at >= n), "cancelledAt {at:?}");
    assert_ids(&reply, "taskIds", &[b, c]);

    let n = now_of(&reply);
    ok(api
        .patch(&format!("/tasks/{a}"), json!({ "cancelledAt": null }))
        .await);
    let reply = since(&api, n, "").await;
    assert_eq!(sent(&reply, "cards", a)["cancelledAt"], json!(null));
    assert_ids(&reply, "taskIds", &[a, b, c]);

    ok(api.delete(&format!("/tasks/{b}")).await);
    let n = now_of(&changes(&api, "").await);
    ok(api.post("/purge", json!({})).await);
    for reply in [since(&api, n, "").await, changes(&api, "").await] {
        assert!(find(&reply, "cards", b).is_none(), "{reply}");
        assert_ids(&reply, "taskIds", &[a, c]);
    }
}

#[tokio::test]
async fn deleted_lists_and_projects_carry_deleted_at_and_their_markers_are_kept_for_good() {
    let mut s = Server::start().await;
    let api = s.api();
    let p = api
        .create_project(json!({ "name": "P", "columns": ["A", "B"] }))
        .await;
    let (pid, col_a) = (str_of(&p["id"]), str_of(&p["columns"][0]["id"]));
    let ta = str_of(&api.new_task(&col_a, "in A").await["id"]);
    let q = api
        .create_project(json!({ "name": "Q", "columns": ["Only"] }))
        .await;
    let (qid, col_q) = (str_of(&q["id"]), str_of(&q["columns"][0]["id"]));
    let tq = str_of(&api.new_task(&col_q, "in Q").await["id"]);
    let n = now_of(&changes(&api, "").await);

    ok(api.delete(&format!("/columns/{col_a}")).await);
    ok(api.delete(&format!("/projects/{qid}")).await);
    let reply = since(&api, n, "").await;
    let list = sent(&reply, "lists", &col_a);
    let list_deleted = list["deletedAt"]
        .as_i64()
        .expect("a deleted list carries deletedAt");
    assert!(list_deleted >= n);
    assert_eq!(list["name"], json!("A"), "sent whole: {list}");
    assert_eq!(list["projectId"], json!(pid));
    let project = sent(&reply, "projects", &qid);
    let project_deleted = project["deletedAt"].as_i64().expect("project deletedAt");
    assert_eq!(project["name"], json!("Q"), "sent whole");
    assert!(project_deleted >= list_deleted);
    for card in [&ta, &tq] {
        assert!(sent(&reply, "cards", card)["cancelledAt"].is_i64());
    }
    let pb = str_of(&p["columns"][1]["id"]);
    assert_ids(&reply, "taskIds", &[]);
    assert!(find(&reply, "lists", &pb).is_none(), "B is unchanged");

    // Destroyed by a purge, both leave markers: ids and deletedAt only, kept for good.
    ok(api.post("/purge", json!({})).await);
    let check = |reply: &Value| {
        let list = json!({ "id": col_a, "projectId": pid, "deletedAt": list_deleted });
        assert_eq!(sent(reply, "lists", &col_a), &list);
        let project = json!({ "id": qid, "deletedAt": project_deleted });
        assert_eq!(sent(reply, "projects", &qid), &project);
    };
    check(&changes(&api, "").await);
    check(&since(&api, list_deleted, "").await);
    s.restart().await;
    let api = s.api();
    check(&changes(&api, "").await);
    let late = since(&api, project_deleted + 1, "").await;
    assert!(find(&late, "projects", &qid).is_none(), "{late}");
}

#[tokio::test]
async fn a_list_pushed_out_of_the_bin_by_twenty_newer_deletions_leaves_a_marker() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, cid) = api.board().await;
    let doomed = api.new_column(&pid, "Doomed").await;
    let tasks: Vec<Value> = (0..20)
        .map(|i| json!({ "columnId": cid, "title": i.to_string() }))
        .collect();
    let created = ok(api.post("/tasks", json!({ "tasks": tasks })).await)["ids"].clone();
    ok(api.delete(&format!("/columns/{doomed}")).await);
    let deleted_at = sent(&changes(&api, "").await, "lists", &doomed)["deletedAt"].clone();
    for id in created.as_array().unwrap() {
        ok(api.delete(&format!("/tasks/{}", str_of(id))).await);
    }
    let marker = json!({ "id": doomed, "projectId": pid, "deletedAt": deleted_at });
    assert_eq!(sent(&changes(&api, "").await, "lists", &doomed), &marker);
}

#[tokio::test]
async fn task_ids_cover_the_requested_window() {
    let s = Server::start().await;
    let api = s.api();
    let (_, cid) = api.board().await;
    for (id, done) in [
        ("t_open", None),
        ("t_recent", Some(days_ago(2))),
        ("t_old", Some(days_ago(40))),
    ] {
        api.create_task(json!({ "id": id, "columnId": cid, "title": id, "completedAt": done }))
            .await;
    }
    let recent: &[&str] = &["t_open", "t_recent"];
    for (query, window, want) in [
        ("", "recent", recent),
        ("?completed=recent", "recent", recent),
        ("?completed=all", "all", &["t_open", "t_recent", "t_old"]),
        ("?completed=none", "none", &["t_open"]),
    ] {
        let reply = changes(&api, query).await;
        assert_eq!(reply["window"], json!(window), "{query}");
        assert_ids(&reply, "taskIds", want);
        let cards = set(entries(&reply, "cards").iter().map(|c| str_of(&c["id"])));
        assert!(cards.is_superset(&set(want)), "{query}: {cards:?}");
        assert!(reply["cutoff"].is_i64(), "{query}: {reply}");
        if window == "recent" {
            assert_eq!(reply["cutoff"], json!(now_of(&reply) - 30 * DAY), "{query}");
        }
    }
    let r = api.get("/changes?completed=finished").await;
    r.expect_field_error(422, "completed");
}

#[tokio::test]
async fn manifest_changed_scopes_task_ids_to_the_projects_in_the_reply() {
    let s = Server::start().await;
    let api = s.api();
    let (p1, c1) = api.board().await;
    let (_, c2) = api.board().await;
    let a1 = str_of(&api.new_task(&c1, "a1").await["id"]);
    let a2 = str_of(&api.new_task(&c1, "a2").await["id"]);
    let b1 = str_of(&api.new_task(&c2, "b1").await["id"]);
    let n = now_of(&changes(&api, "").await);
    ok(api
        .patch(&format!("/tasks/{a1}"), json!({ "priority": 1 }))
        .await);

    let scoped = since(&api, n, "&manifest=changed").await;
    assert_keys(&scoped, &[REPLY_KEYS, &["scoped"]].concat());
    assert_eq!(scoped["scoped"], json!(true));
    assert_ids(&scoped, "projects", &[&p1]);
    assert_ids(&scoped, "taskIds", &[&a1, &a2]);

    let whole = since(&api, n, "").await;
    assert_keys(&whole, REPLY_KEYS);
    assert_ids(&whole, "taskIds", &[&a1, &a2, &b1]);
    api.get("/changes?manifest=all")
        .await
        .expect_field_error(422, "manifest");
}

#[tokio::test]
async fn holding_short_circuits_an_idle_poll_only_when_the_count_matches() {
    let s = Server::start().await;
    let api = s.api();
    let (_, cid) = api.board().await;
    let a = str_of(&api.new_task(&cid, "a").await["id"]);
    api.new_task(&cid, "b").await;
    api.new_task(&cid, "c").await;
    api.create_task(json!({ "columnId": cid, "title": "old", "completedAt": days_ago(40) }))
        .await;
    let n = now_of(&changes(&api, "").await);

    let idle = since(&api, n, "&holding=3").await;
    assert!(unchanged(&idle), "{idle}");
    let m = now_of(&idle);
    assert!(m >= n, "now went back from {n} to {m}");
    let again = since(&api, m, "&holding=3&manifest=changed").await;
    assert!(unchanged(&again), "the idle client stays idle: {again}");

    // A count that differs, no holding, or no since: the full reply. Each window counts its
    // own cards: 3 open, 3 recent, 4 in all.
    let differing = [
        "&holding=2",
        "&holding=4",
        "",
        "&holding=3&completed=all",
        "&holding=0&completed=none",
    ];
    for rest in differing {
        let reply = since(&api, n, rest).await;
        assert!(full(&reply), "{rest}: {reply}");
    }
    assert!(full(&changes(&api, "?holding=3").await), "no since");
    for rest in ["&holding=4&completed=all", "&holding=3&completed=none"] {
        assert!(unchanged(&since(&api, n, rest).await), "{rest}");
    }

    ok(api
        .patch(&format!("/tasks/{a}"), json!({ "title": "a2" }))
        .await);
    let moved = since(&api, m, "&holding=3").await;
    assert!(full(&moved), "a write since `since`: {moved}");
    assert_ids(&moved, "cards", &[&a]);
}

#[tokio::test]
async fn since_holding_manifest_and_unknown_parameters_are_checked() {
    let s = Server::start().await;
    let api = s.api();
    for name in ["since", "holding"] {
        for bad in ["1.5", "-1", "1e3", "abc", "", "+5", "0x10", "%201"] {
            let r = api.get(&format!("/changes?{name}={bad}")).await;
            r.expect_field_error(422, name);
        }
    }
    for (query, field) in [("manifest=other", "manifest"), ("sinse=1", "sinse")] {
        let r = api.get(&format!("/changes?{query}")).await;
        r.expect_field_error(422, field);
    }
    let r = api
        .get("/changes?since=0&holding=0&manifest=changed&completed=all")
        .await;
    r.expect(200);
    // The unversioned alias is the same route.
    let r = api.unversioned().get("/changes?since=0").await;
    assert_keys(r.expect(200), REPLY_KEYS);
}

#[tokio::test]
async fn a_finished_card_ageing_out_of_the_window_ends_the_short_circuit_without_writes() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, cid) = api.board().await;
    let open = str_of(&api.new_task(&cid, "open").await["id"]);
    // It leaves the 30-day window 5 s from now.
    let done = now_of(&changes(&api, "").await) - 30 * DAY + 5_000;
    let body = json!({ "id": "t_ageing", "columnId": cid, "title": "ageing", "completedAt": done });
    api.create_task(body).await;
    let first = changes(&api, "").await;
    let n = now_of(&first);
    assert!(set(first["taskIds"].as_array().unwrap().iter().map(str_of)).contains("t_ageing"));
    let held = first["taskIds"].as_array().unwrap().len();
    let in_recent = async || find_task(&api.project_q(&pid, "recent").await, "t_ageing").is_some();
    assert!(in_recent().await, "completed=recent includes it");

    // Bounded poll: the card leaves the window at done + 30 days, with no write at all.
    let deadline = now_ms() + 12_000;
    let gone = loop {
        let reply = since(&api, n, &format!("&holding={held}")).await;
        let in_window = now_of(&reply) - 30 * DAY <= done;
        if full(&reply) {
            assert!(!in_window, "still in the window: {reply}");
            break reply;
        }
        assert!(in_window, "`unchanged` once out of the window");
        assert!(now_ms() < deadline, "the count never changed");
        // Time itself is what is tested: the card ages out with the clock, no event marks
        // it, and every read on the way must still answer `unchanged`.
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_ids(&gone, "taskIds", &[&open]);
    assert_ids(&gone, "cards", &[]);
    assert!(!in_recent().await, "completed=recent still has it");
    let all = api.project(&pid).await;
    assert!(find_task(&all, "t_ageing").is_some(), "completed=all");
}

/// A reply of many buffers (it is written out while it is sent) arrives as one document:
/// every card once, in the read shape with its `order`, and the manifest whole.
#[tokio::test]
async fn a_reply_larger_than_its_buffers_arrives_whole() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, cid) = api.board().await;
    let description = "A long description to make the reply large. ".repeat(24);
    for round in 0..4 {
        let tasks: Vec<Value> = (0..200)
            .map(|i| {
                json!({ "columnId": cid, "title": format!("Card {round}-{i}"),
                "description": description })
            })
            .collect();
        ok(api.post("/tasks", json!({ "tasks": tasks })).await);
    }
    let project = api.project(&pid).await;
    let read = tasks_of(&project);
    assert_eq!(read.len(), 800);
    let read_ids = ids(&json!(read));
    let read_ids: Vec<&str> = read_ids.iter().map(String::as_str).collect();
    for query in ["", "?manifest=changed", "?completed=all"] {
        let reply = changes(&api, query).await;
        let keys: &[&str] = if query.contains("manifest") {
            &[REPLY_KEYS, &["scoped"]].concat()
        } else {
            REPLY_KEYS
        };
        assert_keys(&reply, keys);
        let cards = entries(&reply, "cards");
        assert_eq!(cards.len(), 800, "{query}");
        assert_eq!(
            set(cards.iter().map(|c| str_of(&c["id"]))).len(),
            800,
            "{query}: a card twice"
        );
        for card in &read {
            assert_eq!(sent(&reply, "cards", &str_of(&card["id"])), card, "{query}");
        }
        assert_ids(&reply, "taskIds", &read_ids);
    }
}
