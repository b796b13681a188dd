//! Keys (issue 4): `GET /keys`, `POST /keys`, `DELETE /keys/:id`, the live-keys limit,
//! revocation at once, the last key kept, `lastUsedAt` batched in memory, and the CLI's
//! `keys list` showing the same records.

use reqwest::Method;
use serde_json::{Value, json};

use crate::harness::*;

const KEY_FIELDS: &[&str] = &[
    "id",
    "label",
    "prefix",
    "createdAt",
    "lastUsedAt",
    "current",
    "access",
    "expiresAt",
];

/// `GET /keys`: the reply (asserted 200 and shape-checked) and its `keys`.
async fn list(api: &Api) -> (Reply, Vec<Value>) {
    let r = api.get("/keys").await;
    let body = r.expect_ok(200).clone();
    assert_keys(&body, &["ok", "keys"]);
    let keys = body["keys"].as_array().expect("keys array").clone();
    for k in &keys {
        assert_keys(k, KEY_FIELDS);
        assert!(str_of(&k["id"]).starts_with("y_"), "key id {k}");
        assert!(k["createdAt"].is_i64(), "createdAt {k}");
        assert!(
            k["lastUsedAt"].is_null() || k["lastUsedAt"].is_i64(),
            "lastUsedAt {k}"
        );
        assert!(k["current"].is_boolean(), "current {k}");
        assert!(k["label"].is_null() || k["label"].is_string(), "label {k}");
    }
    (r, keys)
}

/// `POST /keys {label}` by `api`: (id, key), shape-checked.
async fn add_key(api: &Api, label: &str) -> (String, String) {
    let r = api.post("/keys", json!({ "label": label })).await;
    let body = r.expect_ok(201);
    assert_keys(
        body,
        &[
            "ok",
            "id",
            "key",
            "label",
            "createdAt",
            "access",
            "expiresAt",
        ],
    );
    assert_eq!(body["label"], json!(label));
    let key = str_of(&body["key"]);
    assert!(
        key.starts_with("wb_") && key.len() >= 46,
        "key format {key}"
    );
    (str_of(&body["id"]), key)
}

fn find<'a>(keys: &'a [Value], id: &str) -> &'a Value {
    keys.iter()
        .find(|k| k["id"] == json!(id))
        .unwrap_or_else(|| panic!("{id} not listed in {keys:?}"))
}

fn sorted_ids(keys: &[Value]) -> Vec<String> {
    let mut ids: Vec<String> = keys.iter().map(|k| str_of(&k["id"])).collect();
    ids.sort();
    ids
}

#[tokio::test]
async fn list_shows_every_live_key_with_its_prefix_and_marks_the_caller_never_the_key() {
    let s = Server::start().await;
    let api = s.api();
    let t0 = now_ms();
    let (phone_id, phone) = add_key(&api, "phone").await;
    assert_ne!(phone, s.key);

    let (r, keys) = list(&api).await;
    assert_eq!(keys.len(), 2, "{}", r.text);
    for secret in [&s.key, &phone] {
        assert!(
            !r.text.contains(secret.as_str()),
            "GET /keys shows a key: {}",
            r.text
        );
        // Not even the part after the service prefix.
        assert!(
            !r.text.contains(&secret[3..]),
            "GET /keys shows a key's body: {}",
            r.text
        );
    }
    let me: Vec<&Value> = keys
        .iter()
        .filter(|k| k["current"] == json!(true))
        .collect();
    assert_eq!(me.len(), 1, "exactly one key is the caller: {}", r.text);
    assert_eq!(me[0]["prefix"], json!(&s.key[..8]));
    let first_id = str_of(&me[0]["id"]);
    let record = find(&keys, &phone_id);
    assert_eq!(record["current"], json!(false));
    assert_eq!(record["prefix"], json!(&phone[..8]));
    assert_eq!(record["label"], json!("phone"));
    let created = record["createdAt"].as_i64().unwrap();
    assert!(
        created >= t0 - 1_000 && created <= now_ms() + 1_000,
        "createdAt {created}"
    );

    // Seen from the new key, `current` moves to it.
    let (r, keys) = list(&s.api_for(&phone)).await;
    assert!(!r.text.contains(&s.key) && !r.text.contains(&phone));
    assert_eq!(find(&keys, &phone_id)["current"], json!(true));
    assert_eq!(find(&keys, &first_id)["current"], json!(false));
}

#[tokio::test]
async fn a_new_key_reaches_the_same_account_at_once_and_the_body_may_be_empty() {
    let s = Server::start().await;
    let api = s.api();
    let pid = api.new_project("Shared").await;

    // No body at all, an empty body, and `{}` all issue a key without a label.
    let mut issued = Vec::new();
    for r in [
        api.send(Method::POST, "/keys", None).await,
        api.post_text("/keys", "").await,
        api.post("/keys", json!({})).await,
    ] {
        let body = r.expect_ok(201);
        assert_keys(
            body,
            &[
                "ok",
                "id",
                "key",
                "label",
                "createdAt",
                "access",
                "expiresAt",
            ],
        );
        assert_eq!(body["label"], json!(null), "{}", r.text);
        issued.push(str_of(&body["key"]));
    }
    let mut name = "Shared".to_string();
    for (i, key) in issued.iter().enumerate() {
        let other = s.api_for(key);
        assert_eq!(other.project(&pid).await["name"], json!(name));
        name = format!("Renamed by key {i}");
        other
            .patch(&format!("/projects/{pid}"), json!({ "name": name }))
            .await
            .expect_ok(200);
        assert_eq!(api.project(&pid).await["name"], json!(name));
    }
    let (_, keys) = list(&api).await;
    assert_eq!(keys.len(), 4);
    let distinct: std::collections::HashSet<String> = issued.iter().cloned().collect();
    assert_eq!(distinct.len(), 3, "every key is new");
}

#[tokio::test]
async fn an_unknown_field_or_a_bad_label_is_422_and_issues_nothing() {
    let s = Server::start().await;
    let api = s.api();
    let r = api
        .post("/keys", json!({ "label": "ok", "scope": "read" }))
        .await;
    let body = r.expect_field_error(422, "scope");
    let accepted = body["accepted"]
        .as_array()
        .expect("accepted lists the route's fields");
    assert!(accepted.contains(&json!("label")), "{}", r.text);
    api.post("/keys", json!({ "label": 7 }))
        .await
        .expect_error(422);
    api.post_text("/keys", "{not json").await.expect_error(400);
    let (_, keys) = list(&api).await;
    assert_eq!(keys.len(), 1, "a refused POST /keys issued a key");
}

#[tokio::test]
async fn an_account_holds_at_most_the_limit_of_live_keys_and_discovery_reports_it() {
    let s = Server::start_with(&["--limit-keys-per-account", "3"]).await;
    let api = s.api();
    let doc = api.raw().get("/api/v1").await;
    assert_eq!(
        doc.expect(200)["limits"]["keys-per-account"],
        json!(3),
        "{}",
        doc.text
    );

    let (second, _) = add_key(&api, "two").await;
    add_key(&api, "three").await;
    let r = api.post("/keys", json!({ "label": "four" })).await;
    r.expect_error(422);
    let (_, keys) = list(&api).await;
    assert_eq!(keys.len(), 3, "the refused key was issued anyway");
    assert!(keys.iter().all(|k| k["label"] != json!("four")));

    // Revoked keys are not live: revoking one frees a slot.
    api.delete(&format!("/keys/{second}")).await.expect_ok(200);
    add_key(&api, "four").await;
    api.post("/keys", json!({})).await.expect_error(422);
    assert_eq!(list(&api).await.1.len(), 3);
}

#[tokio::test]
async fn a_revoked_key_answers_401_at_once_and_leaves_the_list() {
    let s = Server::start().await;
    let api = s.api();
    let (id, key) = add_key(&api, "laptop").await;
    let laptop = s.api_for(&key);
    let pid = laptop.new_project("Made on the laptop").await;

    let r = api.delete(&format!("/keys/{id}")).await;
    let body = r.expect_ok(200);
    assert_eq!(body, &json!({ "ok": true, "id": id }));
    laptop.get("/projects").await.expect_error(401);
    laptop.get("/keys").await.expect_error(401);
    laptop
        .post("/projects", json!({ "name": "x" }))
        .await
        .expect_error(401);
    laptop
        .send(Method::POST, "/undo", None)
        .await
        .expect_error(401);
    // What the key made stays; the key does not.
    assert_eq!(api.project(&pid).await["name"], json!("Made on the laptop"));
    let (_, keys) = list(&api).await;
    assert!(
        keys.iter().all(|k| k["id"] != json!(id)),
        "a revoked key is listed"
    );
    assert_eq!(keys.len(), 1);
    // Revoking it again: it is gone.
    api.delete(&format!("/keys/{id}")).await.expect_error(404);

    // A key may revoke itself, and then it is refused at once too.
    let (own, key) = add_key(&api, "self").await;
    let me = s.api_for(&key);
    assert_eq!(
        me.delete(&format!("/keys/{own}")).await.expect_ok(200)["id"],
        json!(own)
    );
    me.get("/projects").await.expect_error(401);
    assert_eq!(list(&api).await.1.len(), 1);
}

#[tokio::test]
async fn revoking_the_accounts_last_key_is_422_and_revokes_nothing() {
    let s = Server::start().await;
    let api = s.api();
    let (_, keys) = list(&api).await;
    let own = str_of(&keys[0]["id"]);
    api.delete(&format!("/keys/{own}")).await.expect_error(422);
    api.get("/projects").await.expect(200);
    assert_eq!(list(&api).await.1.len(), 1);

    // With two keys, one can go; the one left cannot.
    let (spare, spare_key) = add_key(&api, "spare").await;
    s.api_for(&spare_key)
        .delete(&format!("/keys/{own}"))
        .await
        .expect_ok(200);
    api.get("/projects").await.expect_error(401);
    let spare_api = s.api_for(&spare_key);
    spare_api
        .delete(&format!("/keys/{spare}"))
        .await
        .expect_error(422);
    let (_, keys) = list(&spare_api).await;
    assert_eq!(sorted_ids(&keys), vec![spare.clone()]);
    spare_api.get("/projects").await.expect(200);
}

#[tokio::test]
async fn another_accounts_key_id_is_404_and_that_key_keeps_working() {
    let s = Server::start().await;
    let api = s.api();
    let (other_key, _) = s.issue_key(None).await;
    let other = s.api_for(&other_key);
    // Give the other account two keys, so a revoke there would be allowed for its owner.
    add_key(&other, "second").await;
    let (r, other_keys) = list(&other).await;
    assert_eq!(other_keys.len(), 2, "{}", r.text);
    let other_id = str_of(&find_current(&other_keys)["id"]);

    api.delete(&format!("/keys/{other_id}"))
        .await
        .expect_error(404);
    api.delete("/keys/y_doesnotexist").await.expect_error(404);
    other.get("/projects").await.expect(200);
    assert_eq!(list(&other).await.1.len(), 2);
    // Neither account lists the other's keys.
    let (_, mine) = list(&api).await;
    assert_eq!(mine.len(), 1);
    assert!(
        mine.iter()
            .all(|k| other_keys.iter().all(|o| o["id"] != k["id"]))
    );
}

fn find_current(keys: &[Value]) -> &Value {
    keys.iter()
        .find(|k| k["current"] == json!(true))
        .unwrap_or_else(|| panic!("no current key in {keys:?}"))
}

#[tokio::test]
async fn last_used_at_moves_when_a_key_is_used_and_survives_a_restart() {
    let mut s = Server::start().await;
    let api = s.api();
    let (id, key) = add_key(&api, "script").await;
    let (_, keys) = list(&api).await;
    assert_eq!(
        find(&keys, &id)["lastUsedAt"],
        json!(null),
        "an unused key has no last use"
    );
    // The caller's own use is shown at once.
    let me = find_current(&keys)["lastUsedAt"]
        .as_i64()
        .expect("the caller was just used");
    assert!((me - now_ms()).abs() < 5_000, "lastUsedAt {me}");

    let before = now_ms();
    s.api_for(&key).get("/projects").await.expect(200);
    let (_, keys) = list(&api).await;
    let first = find(&keys, &id)["lastUsedAt"]
        .as_i64()
        .expect("lastUsedAt after a use");
    assert!(
        first >= before - 1_000 && first <= now_ms() + 1_000,
        "lastUsedAt {first}"
    );

    // Time itself is what is tested: a later use is stamped later, so the clock must move.
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    s.api_for(&key).get("/usage").await.expect(200);
    let (_, keys) = list(&api).await;
    let second = find(&keys, &id)["lastUsedAt"].as_i64().expect("lastUsedAt");
    assert!(
        second > first,
        "lastUsedAt did not move: {first} → {second}"
    );

    // Saved every ~2 s: once it is in the store, a kill -9 loses nothing. No route tells
    // saved from unsaved use: the store does.
    let saved = format!("SELECT last_used_at FROM keys WHERE id = '{id}'");
    let within = std::time::Duration::from_secs(15);
    until("the last use saved", within, async || {
        match s.stored_number(&saved) {
            Some(at) if at == second => Ok(()),
            seen => Err(seen),
        }
    })
    .await;
    s.restart().await;
    let (_, keys) = list(&s.api()).await;
    assert_eq!(
        find(&keys, &id)["lastUsedAt"],
        json!(second),
        "lastUsedAt lost on restart"
    );
}

#[tokio::test]
async fn the_cli_keys_list_shows_the_same_records_as_get_keys() {
    let s = Server::start().await;
    let (key, account) = issue_key(&s.data_dir(), None, Some("desk")).await;
    let api = s.api_for(&key);
    add_key(&api, "tablet").await;
    let (revoked, _) = add_key(&api, "gone").await;
    api.delete(&format!("/keys/{revoked}")).await.expect_ok(200);

    let (_, keys) = list(&api).await;
    let out = s.cli(&["keys", "list", "--account", &account]).await;
    out.success();
    assert!(!out.stdout.contains(&key), "keys list shows a key");
    let records = out.json_lines();
    assert_eq!(
        sorted_ids(&records),
        sorted_ids(&keys),
        "CLI: {}",
        out.stdout
    );
    assert_eq!(keys.len(), 2);
    for r in &records {
        let k = find(&keys, &str_of(&r["id"]));
        for field in ["label", "prefix", "createdAt", "access", "expiresAt"] {
            assert_eq!(r[field], k[field], "{field} of {}", r["id"]);
        }
    }
    // The first account's key is not among them.
    let (_, first) = list(&s.api()).await;
    assert!(records.iter().all(|r| r["id"] != first[0]["id"]));
}

/// Undo steps belong to their key and go with it (the undo module covers undo itself).
#[tokio::test]
async fn a_revoked_keys_undo_steps_go_with_it_and_leave_other_keys_alone() {
    let s = Server::start().await;
    let b = s.api();
    let (a_id, a_key) = add_key(&b, "doomed").await;
    let a = s.api_for(&a_key);
    let (_, cid) = b.board().await;
    let tid = str_of(&b.new_task(&cid, "Start").await["id"]);
    let path = format!("/tasks/{tid}");
    b.patch(&path, json!({ "location": "Desk" }))
        .await
        .expect_ok(200);
    a.patch(&path, json!({ "title": "By A" }))
        .await
        .expect_ok(200);
    b.delete(&format!("/keys/{a_id}")).await.expect_ok(200);
    a.send(Method::POST, "/undo", None).await.expect_error(401);

    // B's undo takes B's own last step; A's write stays.
    let r = b.send(Method::POST, "/undo", None).await;
    let change = &r.expect_ok(200)["change"];
    assert_eq!(
        (&change["id"], &change["fields"]),
        (&json!(tid), &json!(["location"])),
        "{}",
        r.text
    );
    let now = b.get(&format!("/tasks/{tid}")).await.expect_ok(200)["task"].clone();
    assert_eq!(now["title"], json!("By A"), "A's change was undone");
    assert_ne!(now["location"], json!("Desk"));
}
