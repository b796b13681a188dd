//! Isolation between accounts (issue 7, Isolation and secrets; contract: Authentication and
//! abuse, Identifiers): every operation of the OpenAPI document that takes a path id answers a
//! foreign id exactly as a missing one (404, the same body), and changes nothing; the
//! account-wide routes and the live socket show only the caller's account.

use std::collections::BTreeSet;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use reqwest::Method;
use serde_json::{Value, json};

use crate::harness::*;
use crate::live::{NUDGE_WAIT, next_nudge, open};

/// How long A's socket is watched to show that B's writes send it nothing. There is no event
/// for "no message"; nudges arrive well within this.
const SILENCE: std::time::Duration = std::time::Duration::from_secs(1);

/// One record of each kind in account B, by the path segment that names its kind.
struct Foreign {
    by_segment: Vec<(&'static str, String)>,
    /// A checklist item of B's task, for the reorder body.
    item: String,
}

impl Foreign {
    fn id(&self, segment: &str) -> &str {
        self.by_segment
            .iter()
            .find(|(s, _)| *s == segment)
            .map(|(_, id)| id.as_str())
            .unwrap_or_else(|| {
                panic!("the OpenAPI document has a route on `{segment}/{{id}}` this test has no foreign record for; add one")
            })
    }

    fn all(&self) -> Vec<String> {
        self.by_segment.iter().map(|(_, id)| id.clone()).collect()
    }
}

/// Fills account B with one record of every kind that has an id route.
async fn fill_b(b: &Api) -> Foreign {
    let project = b
        .create_project(
            json!({ "name": "Shared name", "folder": "B-only folder", "columns": ["B-only list"] }),
        )
        .await;
    let pid = str_of(&project["id"]);
    let column = str_of(&project["columns"][0]["id"]);
    let other_column = b.new_column(&pid, "B-only second list").await;
    let task = b
        .create_task(json!({
            "columnId": column, "title": "B-only card", "description": "B-only secret text",
            "tags": ["b-only-tag"], "checklist": [{ "text": "B-only item" }],
            "comments": [{ "text": "B-only comment" }],
        }))
        .await;
    let binned = str_of(&b.new_task(&other_column, "B-only binned card").await["id"]);
    b.delete(&format!("/tasks/{binned}")).await.expect_ok(200);
    let bin = b.get("/bin").await.expect_ok(200)["entries"][0]["id"].clone();
    let key = b.post("/keys", json!({ "label": "B-only key" })).await;
    let key = str_of(&key.expect_ok(201)["id"]);
    let item = str_of(&task["checklist"][0]["id"]);
    Foreign {
        by_segment: vec![
            ("projects", pid),
            ("columns", column),
            ("tasks", str_of(&task["id"])),
            ("checklist", item.clone()),
            ("tags", str_of(&task["tagIds"][0])),
            ("comments", str_of(&task["comments"][0]["id"])),
            ("keys", key),
            ("bin", str_of(&bin)),
        ],
        item,
    }
}

/// An id of the same prefix and length that nobody uses.
fn missing_like(id: &str, rng: &mut StdRng) -> String {
    const ABC: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let (prefix, rest) = id.split_at(2);
    let tail: String = (0..rest.len())
        .map(|_| ABC[rng.random_range(0..ABC.len())] as char)
        .collect();
    format!("{prefix}{tail}")
}

/// A valid body for each write that takes one; a new write route must be added here.
fn body_for(method: &str, template: &str, foreign: &Foreign) -> Option<Value> {
    let body = match (method, template.trim_start_matches("/api/v1")) {
        ("patch", "/projects/{id}") | ("patch", "/columns/{id}") => {
            json!({ "name": "Renamed by A" })
        }
        ("patch", "/tasks/{id}") => json!({ "title": "Renamed by A" }),
        ("patch", "/checklist/{id}") => json!({ "text": "Renamed by A", "done": true }),
        ("post", "/tasks/{id}/tags") => json!({ "text": "added by A" }),
        ("post", "/tasks/{id}/comments") => json!({ "text": "added by A" }),
        ("post", "/tasks/{id}/checklist") => json!({ "text": "added by A" }),
        ("post", "/tasks/{id}/checklist/order") => json!({ "ids": [foreign.item] }),
        (m, t) => panic!(
            "{} {t} takes a body this test does not know; add one",
            m.to_uppercase()
        ),
    };
    Some(body)
}

/// Every (method, path template, takes a body) of the document with an `{id}` in its path.
async fn id_operations(s: &Server) -> Vec<(String, String, bool)> {
    let doc = s
        .anon()
        .raw()
        .get("/api/v1/openapi.json")
        .await
        .expect(200)
        .clone();
    let mut ops = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        if !path.contains("{id}") {
            continue;
        }
        for (method, op) in item.as_object().expect("path item") {
            if ["get", "post", "patch", "put", "delete"].contains(&method.as_str()) {
                ops.push((
                    method.clone(),
                    path.clone(),
                    op.get("requestBody").is_some(),
                ));
            }
        }
    }
    ops
}

#[tokio::test]
async fn every_id_route_answers_a_foreign_id_exactly_like_a_missing_one_and_changes_nothing() {
    let s = Server::start().await;
    let a = s.api();
    let (key_b, _) = s.issue_key(None).await;
    let b = s.api_for(&key_b);
    let foreign = fill_b(&b).await;
    let b_before = b.account().await;
    let b_bin = b.get("/bin").await.expect_ok(200)["entries"].clone();
    let b_keys = b.get("/keys").await.expect_ok(200)["keys"]
        .as_array()
        .unwrap()
        .len();

    let ops = id_operations(&s).await;
    let segments: BTreeSet<&str> = ops
        .iter()
        .map(|(_, p, _)| p.trim_start_matches("/api/v1/").split('/').next().unwrap())
        .collect();
    assert!(
        ops.len() >= 17,
        "the document lists only {} id operations: {ops:?}",
        ops.len()
    );
    assert_eq!(segments.len(), 8, "kinds with id routes: {segments:?}");

    let mut rng = StdRng::seed_from_u64(7);
    let not_found = json!({ "ok": false, "error": "not found", "code": "not_found" });
    for (method, template, has_body) in &ops {
        let segment = template
            .trim_start_matches("/api/v1/")
            .split('/')
            .next()
            .unwrap();
        let theirs = foreign.id(segment).to_string();
        let missing = missing_like(&theirs, &mut rng);
        let body = if *has_body {
            body_for(method, template, &foreign)
        } else {
            None
        };
        let m = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
        for prefix in ["/api/v1", "/api"] {
            let route = template.replacen("/api/v1", prefix, 1);
            let mut replies = Vec::new();
            for id in [&theirs, &missing] {
                let path = route.replace("{id}", id);
                let r = a
                    .raw()
                    .send(m.clone(), &path, body.as_ref().map(Value::to_string))
                    .await;
                replies.push(r);
            }
            let (f, g) = (&replies[0], &replies[1]);
            let what = format!("{} {route}", method.to_uppercase());
            assert_eq!(f.status, 404, "{what} with B's id {theirs}: {}", f.text);
            assert_eq!(
                g.status, 404,
                "{what} with a missing id {missing}: {}",
                g.text
            );
            assert_eq!(f.body, not_found, "{what} with B's id: {}", f.text);
            assert_eq!(
                f.text, g.text,
                "{what}: a foreign id and a missing one answer differently"
            );
            assert_eq!(
                f.content_type(),
                g.content_type(),
                "{what}: content types differ"
            );
        }
    }

    // None of A's attempts touched B.
    assert_eq!(
        b.account().await,
        b_before,
        "A's requests changed B's account"
    );
    assert_eq!(b.get("/bin").await.expect_ok(200)["entries"], b_bin);
    let keys = b.get("/keys").await.expect_ok(200)["keys"].clone();
    assert_eq!(
        keys.as_array().unwrap().len(),
        b_keys,
        "A's DELETE /keys/:id revoked B's key"
    );
    for id in foreign.all() {
        assert!(
            !a.account().await.to_string().contains(&id),
            "A's read shows B's {id}"
        );
    }
}

/// Asserts that no text of B (its ids, its distinctive strings) shows in `text`.
#[track_caller]
fn assert_no_b(text: &str, foreign: &Foreign, what: &str) {
    for id in foreign.all() {
        assert!(!text.contains(&id), "{what} shows B's id {id}: {text}");
    }
    assert!(!text.contains("B-only"), "{what} shows B's data: {text}");
}

#[tokio::test]
async fn account_wide_reads_and_the_socket_show_only_the_callers_account() {
    let s = Server::start().await;
    let a = s.api();
    let mine = a
        .create_project(json!({ "name": "Shared name", "columns": ["Mine"] }))
        .await;
    let (pid, cid) = (str_of(&mine["id"]), str_of(&mine["columns"][0]["id"]));
    let gone = str_of(&a.new_task(&cid, "A's binned card").await["id"]);
    a.delete(&format!("/tasks/{gone}")).await.expect_ok(200);
    a.new_task(&cid, "A's card").await;

    let mut ws = open(&s, &a).await;
    let usage_before = a.get("/usage").await.expect_ok(200).clone();
    let since = changes_now(&a).await;

    let (key_b, _) = s.issue_key(None).await;
    let b = s.api_for(&key_b);
    let foreign = fill_b(&b).await;
    let m = next_nudge(&mut ws, SILENCE).await;
    assert!(m.is_none(), "B's writes nudged A's socket: {m:?}");

    let r = a.get(&format!("/changes?since={since}")).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_no_b(&r.text, &foreign, "A's changes since B wrote");
    assert!(
        r.body["unchanged"] == json!(true)
            || r.body["projects"].as_array().is_some_and(|p| p.is_empty()),
        "B's writes show in A's changes: {}",
        r.text
    );
    let r = a.get("/changes").await;
    assert_no_b(&r.expect(200).to_string(), &foreign, "A's full changes");
    let r = a.get("/export").await;
    assert_no_b(&r.expect(200).to_string(), &foreign, "A's export");
    let r = a.get("/projects?completed=all").await;
    assert_no_b(&r.expect(200).to_string(), &foreign, "A's whole read");

    let found = a.projects("?name=shared%20name").await;
    assert_eq!(
        ids(&json!(found)),
        vec![pid.clone()],
        "a name search finds only the caller's project"
    );
    let found = b.projects("?name=Shared%20Name").await;
    assert_eq!(ids(&json!(found)), vec![foreign.id("projects").to_string()]);
    assert!(a.projects("?name=B-only").await.is_empty());

    let usage = a.get("/usage").await.expect_ok(200).clone();
    assert_eq!(
        usage["used"], usage_before["used"],
        "B's records count against A's storage"
    );
    assert_eq!(
        usage["purgeable"], usage_before["purgeable"],
        "B's bin counts in A's purgeable"
    );
    assert_eq!(
        usage["writes"]["used"], usage_before["writes"]["used"],
        "B's writes count against A's key"
    );

    let bin = a.get("/bin").await.expect_ok(200).clone();
    assert_no_b(&bin.to_string(), &foreign, "A's bin");
    assert_eq!(
        bin["entries"].as_array().unwrap().len(),
        1,
        "A's bin: {bin}"
    );

    let keys = a.get("/keys").await.expect_ok(200).clone();
    assert_no_b(&keys.to_string(), &foreign, "A's keys");
    assert_eq!(
        keys["keys"].as_array().unwrap().len(),
        1,
        "A's keys: {keys}"
    );

    // A purge by B destroys only B's bin; A's entry stays restorable.
    b.post("/purge", json!({})).await.expect_ok(200);
    let entry = str_of(&bin["entries"][0]["id"]);
    let m = next_nudge(&mut ws, SILENCE).await;
    assert!(m.is_none(), "B's purge nudged A's socket: {m:?}");
    a.send(Method::POST, &format!("/bin/{entry}/restore"), None)
        .await
        .expect_ok(200);
    assert!(
        next_nudge(&mut ws, NUDGE_WAIT).await.is_some(),
        "A's own write nudges A's socket"
    );
    a.task(&gone).await;
}

/// The `now` of a changes reply: the `since` that shows only what comes after.
async fn changes_now(api: &Api) -> i64 {
    let r = api.get("/changes").await;
    r.expect(200)["now"]
        .as_i64()
        .unwrap_or_else(|| panic!("changes `now`: {}", r.text))
}
