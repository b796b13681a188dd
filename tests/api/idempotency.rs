//! Idempotency keys (issue 35): every write under `/api` retried with its `Idempotency-Key`
//! answers the remembered status and body with `Idempotent-Replayed: true` and writes
//! nothing (the whole account and the bin read the same before and after); the same key
//! for another request answers 422; concurrent retries never write twice; a refusal of the
//! writer is remembered and one at the edge is not. The first reply replayed byte for byte,
//! and retries on another node, are `idempotency_replay.rs`; expiry, the bound and
//! revocation `idempotency_bounds.rs`; the header's spellings, CORS and the documents
//! `idempotency_header.rs`; replays against the allowances `idempotency_allowance.rs`.

use reqwest::Method;
use reqwest::header::HeaderValue;
use serde_json::{Value, json};
use tokio::task::JoinSet;

use crate::harness::*;

/// A client of one server and one API key that sends `Idempotency-Key`.
#[derive(Clone)]
pub struct Keyed {
    http: reqwest::Client,
    base: String,
    auth: String,
}

impl Keyed {
    pub fn of(server: &Server, key: &str) -> Keyed {
        Keyed {
            http: reqwest::Client::new(),
            base: server.url("/api/v1"),
            auth: format!("Bearer {key}"),
        }
    }

    /// Sends `body` (raw text) to `path` with the header as given (`None`: no header).
    pub async fn try_send(
        &self,
        method: Method,
        path: &str,
        body: Option<&str>,
        key: Option<&[u8]>,
    ) -> Result<Reply, String> {
        let what = format!("{method} {path}");
        let mut req = self
            .http
            .request(method, format!("{}{path}", self.base))
            .header("authorization", &self.auth);
        if let Some(key) = key {
            let value = HeaderValue::from_bytes(key).map_err(|e| format!("{what}: {e}"))?;
            req = req.header("idempotency-key", value);
        }
        if let Some(body) = body {
            req = req
                .header("content-type", "application/json")
                .body(body.to_owned());
        }
        let resp = req.send().await.map_err(|e| format!("{what}: {e}"))?;
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let text = resp.text().await.map_err(|e| format!("{what}: {e}"))?;
        let body = serde_json::from_str(&text).unwrap_or(Value::Null);
        Ok(Reply {
            what,
            status,
            headers,
            text,
            body,
        })
    }

    pub async fn send(&self, method: Method, path: &str, body: Option<Value>, key: &str) -> Reply {
        let body = body.map(|b| b.to_string());
        self.try_send(method, path, body.as_deref(), Some(key.as_bytes()))
            .await
            .unwrap_or_else(|e| panic!("{e}"))
    }
}

/// Whether a reply says it was remembered.
pub fn replayed(reply: &Reply) -> bool {
    reply.header("idempotent-replayed").as_deref() == Some("true")
}

/// Everything a write can change that a client reads: the whole account, every card
/// finished or not, and the bin (`now` left out).
async fn state(api: &Api) -> Value {
    let mut doc = api.get("/projects?completed=all").await.expect(200).clone();
    doc.as_object_mut().expect("an object").remove("now");
    let bin = api.get("/bin").await.expect(200).clone();
    json!({"account": doc, "bin": bin})
}

/// Sends a write with a fresh key, then again with the same key (the second time in the
/// draft's quoted spelling): the retry answers the same status and bytes, marked as
/// remembered, and changes nothing a client can read. Answers the first reply.
async fn once(client: &Keyed, api: &Api, method: Method, path: &str, body: Option<Value>) -> Reply {
    let key = format!("k-{}", rand::random::<u64>());
    let first = client.send(method.clone(), path, body.clone(), &key).await;
    assert!(
        !replayed(&first),
        "{}: a first request is not a replay",
        first.what
    );
    let before = state(api).await;
    let retry = client.send(method, path, body, &format!("\"{key}\"")).await;
    assert_eq!(
        (retry.status, &retry.text),
        (first.status, &first.text),
        "{}: the retry answers what the first answered",
        first.what
    );
    assert!(
        replayed(&retry),
        "{}: a retry is marked Idempotent-Replayed: true",
        retry.what
    );
    assert_eq!(
        state(api).await,
        before,
        "{}: a retry writes nothing",
        retry.what
    );
    first
}

#[tokio::test]
async fn every_write_route_retried_with_its_key_replays_and_writes_once() {
    let server = Server::start().await;
    let (api, client) = (server.api(), Keyed::of(&server, &server.key));

    let project = once(
        &client,
        &api,
        Method::POST,
        "/projects",
        Some(json!({"name": "P"})),
    )
    .await;
    let project_id = str_of(&project.expect(201)["id"]);
    once(
        &client,
        &api,
        Method::PATCH,
        &format!("/projects/{project_id}"),
        Some(json!({"name": "P2"})),
    )
    .await
    .expect(200);
    let column = once(
        &client,
        &api,
        Method::POST,
        "/columns",
        Some(json!({"projectId": project_id, "name": "C"})),
    )
    .await;
    let column_id = str_of(&column.expect(201)["id"]);
    once(
        &client,
        &api,
        Method::PATCH,
        &format!("/columns/{column_id}"),
        Some(json!({"name": "C2"})),
    )
    .await
    .expect(200);
    // A create without a client id: the retry answers the id the first one made.
    let task = once(
        &client,
        &api,
        Method::POST,
        "/tasks",
        Some(json!({"columnId": column_id, "title": "T"})),
    )
    .await;
    let task_id = str_of(&task.expect(201)["id"]);
    let other = api.new_task(&column_id, "U").await;
    let other_id = str_of(&other["id"]);
    once(
        &client,
        &api,
        Method::PATCH,
        &format!("/tasks/{task_id}"),
        Some(json!({"completedAt": now_ms()})),
    )
    .await
    .expect(200);
    once(
        &client,
        &api,
        Method::PATCH,
        &format!("/tasks/{task_id}"),
        Some(json!({"completedAt": null})),
    )
    .await
    .expect(200);
    once(
        &client,
        &api,
        Method::PATCH,
        "/tasks/positions",
        Some(json!({"positions": [{"id": task_id, "position": 5.0}]})),
    )
    .await
    .expect(200);
    let tag = once(
        &client,
        &api,
        Method::POST,
        &format!("/tasks/{task_id}/tags"),
        Some(json!({"text": "red"})),
    )
    .await;
    let tag_id = str_of(&tag.expect(201)["id"]);
    let comment = once(
        &client,
        &api,
        Method::POST,
        &format!("/tasks/{task_id}/comments"),
        Some(json!({"text": "hi"})),
    )
    .await;
    let comment_id = str_of(&comment.expect(201)["id"]);
    let item = once(
        &client,
        &api,
        Method::POST,
        &format!("/tasks/{task_id}/checklist"),
        Some(json!({"text": "one"})),
    )
    .await;
    let item_id = str_of(&item.expect(201)["id"]);
    let second = api
        .post(
            &format!("/tasks/{task_id}/checklist"),
            json!({"text": "two"}),
        )
        .await
        .expect(201)
        .clone();
    let second_id = str_of(&second["id"]);
    once(
        &client,
        &api,
        Method::POST,
        &format!("/tasks/{task_id}/checklist/order"),
        Some(json!({"ids": [second_id, item_id]})),
    )
    .await
    .expect(200);
    once(
        &client,
        &api,
        Method::PATCH,
        &format!("/checklist/{item_id}"),
        Some(json!({"done": true})),
    )
    .await
    .expect(200);
    // Read back: one tag, one comment, two checklist items, the item done, once each.
    let card = api.task(&task_id).await;
    assert_eq!(card["tags"].as_array().map(Vec::len), Some(1), "{card}");
    assert_eq!(card["comments"].as_array().map(Vec::len), Some(1), "{card}");
    assert_eq!(
        card["checklist"].as_array().map(Vec::len),
        Some(2),
        "{card}"
    );
    assert_eq!(card["completedAt"], Value::Null, "{card}");
    let titled_t = api.project(&project_id).await["columns"][0]["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .filter(|t| t["title"] == "T")
        .count();
    assert_eq!(titled_t, 1, "one card made by the create and its retry");

    once(
        &client,
        &api,
        Method::DELETE,
        &format!("/checklist/{item_id}"),
        None,
    )
    .await
    .expect(200);
    once(
        &client,
        &api,
        Method::DELETE,
        &format!("/tags/{tag_id}"),
        None,
    )
    .await
    .expect(200);
    once(
        &client,
        &api,
        Method::DELETE,
        &format!("/comments/{comment_id}"),
        None,
    )
    .await
    .expect(200);
    once(
        &client,
        &api,
        Method::DELETE,
        &format!("/tasks/{other_id}"),
        None,
    )
    .await
    .expect(200);
    let entry = str_of(&api.get("/bin").await.expect(200)["entries"][0]["id"]);
    once(
        &client,
        &api,
        Method::POST,
        &format!("/bin/{entry}/restore"),
        None,
    )
    .await
    .expect(200);
    // Undo puts back what the last step changed, once: its retry undoes nothing more.
    api.patch(&format!("/tasks/{other_id}"), json!({"title": "U2"}))
        .await
        .expect(200);
    once(&client, &api, Method::POST, "/undo", None)
        .await
        .expect(200);
    assert_eq!(
        api.task(&other_id).await["title"],
        "U",
        "the step undone once"
    );
    once(
        &client,
        &api,
        Method::DELETE,
        &format!("/tasks/{other_id}"),
        None,
    )
    .await
    .expect(200);
    once(&client, &api, Method::POST, "/purge", None)
        .await
        .expect(200);
    // A key: its retry names the same key but never shows the secret again.
    let key = client
        .send(
            Method::POST,
            "/keys",
            Some(json!({"label": "phone"})),
            "key-1",
        )
        .await;
    let made = key.expect(201).clone();
    assert!(made["key"].is_string(), "{made}");
    let again = client
        .send(
            Method::POST,
            "/keys",
            Some(json!({"label": "phone"})),
            "key-1",
        )
        .await;
    assert!(replayed(&again));
    assert_eq!(again.expect(201)["id"], made["id"]);
    assert_eq!(
        again.body["key"],
        Value::Null,
        "the secret is never remembered"
    );
    // ...and the OpenAPI document says so: a client validating replies accepts that null.
    let openapi = api.get("/openapi.json").await.expect(200).clone();
    let key_schema = &openapi["components"]["schemas"]["KeyCreated"]["properties"]["key"];
    assert!(
        key_schema.to_string().contains("null"),
        "KeyCreated.key admits the replay's null: {key_schema}"
    );
    let keys = api.get("/keys").await.expect(200).clone();
    assert_eq!(
        keys["keys"].as_array().map(Vec::len),
        Some(2),
        "one key made: {keys}"
    );
    let key_id = str_of(&made["id"]);
    once(
        &client,
        &api,
        Method::DELETE,
        &format!("/keys/{key_id}"),
        None,
    )
    .await
    .expect(200);
    once(
        &client,
        &api,
        Method::DELETE,
        &format!("/columns/{column_id}"),
        None,
    )
    .await
    .expect(200);
    once(
        &client,
        &api,
        Method::DELETE,
        &format!("/projects/{project_id}"),
        None,
    )
    .await
    .expect(200);
}

/// The titles of every card of the account, finished or not.
pub async fn titles(api: &Api) -> Vec<String> {
    let doc = api.get("/projects?completed=all").await.expect(200).clone();
    let mut titles = Vec::new();
    for project in doc["projects"].as_array().expect("projects") {
        for column in project["columns"].as_array().expect("columns") {
            for task in column["tasks"].as_array().expect("tasks") {
                titles.push(str_of(&task["title"]));
            }
        }
    }
    titles
}

#[tokio::test]
async fn the_same_key_for_another_request_answers_422_and_another_api_key_is_another_request() {
    let server = Server::start().await;
    let (api, client) = (server.api(), Keyed::of(&server, &server.key));
    let (_, column) = api.board().await;
    let body = json!({"columnId": column, "title": "A"});
    client
        .send(Method::POST, "/tasks", Some(body.clone()), "same")
        .await
        .expect_ok(201);
    // Another body, another path, another method: each refused, nothing run.
    let other = json!({"columnId": column, "title": "B"});
    client
        .send(Method::POST, "/tasks", Some(other), "same")
        .await
        .expect_code(422, "idempotency_key_reused");
    client
        .send(
            Method::POST,
            "/projects",
            Some(json!({"name": "X"})),
            "same",
        )
        .await
        .expect_code(422, "idempotency_key_reused");
    assert_eq!(titles(&api).await, vec!["A"]);
    // The unversioned path is the same route: a replay.
    let unversioned = Keyed {
        base: server.url("/api"),
        ..client.clone()
    };
    let again = unversioned
        .send(Method::POST, "/tasks", Some(body.clone()), "same")
        .await;
    assert!(replayed(&again), "{}", again.text);
    // Another API key of the same account: its own request, which runs.
    let second = api.post("/keys", json!({})).await.expect(201).clone();
    let theirs = Keyed::of(&server, &str_of(&second["key"]));
    let fresh = theirs
        .send(Method::POST, "/tasks", Some(body), "same")
        .await;
    fresh.expect_ok(201);
    assert!(!replayed(&fresh));
    assert_eq!(titles(&api).await, vec!["A", "A"]);
}

#[tokio::test]
async fn concurrent_retries_answer_409_or_the_replay_and_never_write_twice() {
    let server = Server::start().await;
    let (api, client) = (server.api(), Keyed::of(&server, &server.key));
    let (_, column) = api.board().await;
    for round in 0..4 {
        let body = json!({"columnId": column, "title": format!("R{round}")});
        let key = format!("race-{round}");
        let mut sent = JoinSet::new();
        for _ in 0..16 {
            let (client, body, key) = (client.clone(), body.clone(), key.clone());
            sent.spawn(async move { client.send(Method::POST, "/tasks", Some(body), &key).await });
        }
        let mut ids = std::collections::BTreeSet::new();
        let mut fresh = 0;
        while let Some(reply) = sent.join_next().await {
            let reply = reply.expect("a sender");
            match reply.status {
                201 => {
                    fresh += usize::from(!replayed(&reply));
                    ids.insert(str_of(&reply.body["id"]));
                }
                409 => {
                    reply.expect_code(409, "idempotency_key_in_flight");
                    assert!(reply.header("retry-after").is_some());
                }
                _ => panic!("{}: {}", reply.status, reply.text),
            }
        }
        assert!(fresh <= 1, "one request ran, the others replayed or waited");
        assert!(ids.len() <= 1, "every success names one card: {ids:?}");
        // Whatever raced, a retry now replays the one card.
        let settled = client.send(Method::POST, "/tasks", Some(body), &key).await;
        assert!(replayed(&settled) || fresh == 0);
        let count = titles(&api)
            .await
            .iter()
            .filter(|t| **t == format!("R{round}"))
            .count();
        assert_eq!(count, 1, "round {round}: one card");
    }
}

#[tokio::test]
async fn a_refusal_of_the_writer_is_remembered_and_one_at_the_edge_is_not() {
    let server = Server::start().await;
    let (api, client) = (server.api(), Keyed::of(&server, &server.key));
    let (_, column) = api.board().await;
    let task = str_of(&api.new_task(&column, "G").await["id"]);
    // A guard that fails: 409, remembered byte for byte even once the guard would hold.
    let guarded = json!({"title": {"before": "not G", "after": "H"}});
    let path = format!("/tasks/{task}");
    let refused = client
        .send(Method::PATCH, &path, Some(guarded.clone()), "guard")
        .await;
    refused.expect_code(409, "conflict");
    api.patch(&path, json!({"title": "not G"}))
        .await
        .expect(200);
    let again = client
        .send(Method::PATCH, &path, Some(guarded), "guard")
        .await;
    assert!(replayed(&again));
    assert_eq!((again.status, &again.text), (409, &refused.text));
    assert_eq!(
        api.task(&task).await["title"],
        "not G",
        "the retry ran nothing"
    );
    // Not JSON: refused before the writer, not remembered; the same key then runs.
    let edge = client
        .try_send(Method::POST, "/tasks", Some("{not json"), Some(b"edge"))
        .await
        .expect("a reply");
    edge.expect_code(400, "invalid_json");
    let ran = client
        .send(
            Method::POST,
            "/tasks",
            Some(json!({"columnId": column, "title": "I"})),
            "edge",
        )
        .await;
    ran.expect_ok(201);
    assert!(!replayed(&ran));
}
