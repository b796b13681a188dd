//! Routing (`/api/v1/` and its `/api/` alias, other versions, unknown routes and query
//! parameters), the health route and the discovery document with its keyless burst limit.

use serde_json::{Value, json};

use crate::harness::*;

#[tokio::test]
async fn every_route_answers_under_api_v1_and_api_alike() {
    let s = Server::start().await;
    let v1 = s.api();
    let api = s.api().unversioned();

    let r = api.post("/projects", json!({ "name": "Alias" })).await;
    let pid = str_of(&r.expect_ok(201)["id"]);
    let via_v1 = v1.project(&pid).await;
    assert_eq!(via_v1, api.project(&pid).await);
    assert_eq!(via_v1["name"], json!("Alias"));

    let r = api
        .post("/columns", json!({ "projectId": pid, "name": "Col" }))
        .await;
    let cid = str_of(&r.expect_ok(201)["id"]);
    v1.patch(&format!("/columns/{cid}"), json!({ "name": "Col 2" }))
        .await
        .expect_ok(200);
    let r = api
        .patch(&format!("/columns/{cid}"), json!({ "description": "d" }))
        .await;
    assert_eq!(r.expect_ok(200)["column"]["name"], json!("Col 2"));

    let r = v1
        .post("/tasks", json!({ "columnId": cid, "title": "T" }))
        .await;
    let tid = str_of(&r.expect_ok(201)["id"]);
    let r = api
        .post("/tasks", json!({ "columnId": cid, "title": "U" }))
        .await;
    let uid = str_of(&r.expect_ok(201)["id"]);
    assert_eq!(api.task(&tid).await, v1.task(&tid).await);
    let r = api
        .patch(&format!("/tasks/{tid}"), json!({ "priority": 2 }))
        .await;
    assert_eq!(r.expect_ok(200)["task"]["priority"], json!(2));
    assert_eq!(v1.task(&tid).await["priority"], json!(2));
    api.patch(&format!("/projects/{pid}"), json!({ "folder": "F" }))
        .await
        .expect_ok(200);
    assert_eq!(v1.project(&pid).await["folder"], json!("F"));

    let mut whole_v1 = v1.get("/projects").await.expect(200).clone();
    let mut whole = api.get("/projects").await.expect(200).clone();
    whole_v1.as_object_mut().unwrap().remove("now");
    whole.as_object_mut().unwrap().remove("now");
    assert_eq!(whole_v1, whole);

    api.delete(&format!("/tasks/{tid}")).await.expect_ok(200);
    v1.get(&format!("/tasks/{tid}")).await.expect_error(404);
    v1.delete(&format!("/tasks/{uid}")).await.expect_ok(200);
    api.get(&format!("/tasks/{uid}")).await.expect_error(404);
    api.delete(&format!("/columns/{cid}")).await.expect_ok(200);
    v1.delete(&format!("/projects/{pid}")).await.expect_ok(200);
    api.get(&format!("/projects/{pid}")).await.expect_error(404);
}

#[tokio::test]
async fn another_version_is_403_without_header_401_with_bad_key_404_with_good_key() {
    let s = Server::start().await;
    for path in [
        "/api/v2/projects",
        "/api/v2",
        "/api/v0/projects",
        "/api/v11/tasks/t_x",
    ] {
        let r = s.anon().raw().get(path).await;
        assert_eq!(r.status, 403, "{path} without a header: {}", r.text);
        assert!(
            r.content_type().starts_with("text/html"),
            "{path}: {}",
            r.content_type()
        );

        let r = s
            .with_header("Bearer wb_not-a-key-at-all")
            .raw()
            .get(path)
            .await;
        r.expect_error(401);

        let r = s.api().raw().get(path).await;
        r.expect_error(404);
    }
    // A write to another version touches nothing.
    s.api()
        .raw()
        .post("/api/v2/projects", json!({ "name": "X" }))
        .await
        .expect_error(404);
    assert!(s.api().projects("").await.is_empty());
}

#[tokio::test]
async fn unknown_routes_are_404_in_the_envelope() {
    let s = Server::start().await;
    let raw = s.api().raw();
    let pid = s.api().new_project("P").await;
    for path in [
        "/api/v1/nope",
        "/api/nope",
        "/api/v1/projects/x/y/z",
        format!("/api/v1/projects/{pid}/nothing").as_str(),
        "/api/v1/tasks/t_missing",
        "/api/v1/projects/b_missing",
    ] {
        raw.get(path).await.expect_error(404);
    }
    raw.post("/api/v1/nope", json!({})).await.expect_error(404);
    raw.patch("/api/v1/columns/c_missing", json!({ "name": "x" }))
        .await
        .expect_error(404);
    raw.delete("/api/v1/columns/c_missing")
        .await
        .expect_error(404);
    // Without a header, the edge refuses before routing.
    let r = s.anon().raw().get("/api/v1/nope").await;
    assert_eq!(r.status, 403, "{}", r.text);
}

#[tokio::test]
async fn an_unknown_query_parameter_is_422_naming_it() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, cid) = api.board().await;
    let tid = str_of(&api.new_task(&cid, "T").await["id"]);

    api.get("/projects?bogus=1")
        .await
        .expect_field_error(422, "bogus");
    api.get("/projects?completed=all&colour=red")
        .await
        .expect_field_error(422, "colour");
    api.get(&format!("/projects/{pid}?bogus=1"))
        .await
        .expect_field_error(422, "bogus");
    // `GET /tasks/:id` takes no query at all.
    api.get(&format!("/tasks/{tid}?completed=all"))
        .await
        .expect_field_error(422, "completed");
    api.unversioned()
        .get("/projects?x=1")
        .await
        .expect_field_error(422, "x");
    api.raw()
        .get("/api/v1?x=1")
        .await
        .expect_field_error(422, "x");
    api.raw()
        .get("/api/health?x=1")
        .await
        .expect_field_error(422, "x");

    // Writes refused for a query parameter write nothing.
    let before = api.account().await;
    api.post("/projects?dry=1", json!({ "name": "Q" }))
        .await
        .expect_field_error(422, "dry");
    api.post("/columns?x=1", json!({ "projectId": pid, "name": "Q" }))
        .await
        .expect_field_error(422, "x");
    api.post("/tasks?x=1", json!({ "columnId": cid, "title": "Q" }))
        .await
        .expect_field_error(422, "x");
    api.patch(&format!("/tasks/{tid}?x=1"), json!({ "title": "Q" }))
        .await
        .expect_field_error(422, "x");
    api.delete(&format!("/projects/{pid}?force=1"))
        .await
        .expect_field_error(422, "force");
    assert_eq!(api.account().await, before);
}

#[tokio::test]
async fn health_answers_without_a_key() {
    let s = Server::start().await;
    for path in ["/api/health", "/api/v1/health"] {
        let r = s.anon().raw().get(path).await;
        assert_eq!(
            r.expect(200),
            &json!({ "ok": true, "mode": "normal" }),
            "{path}"
        );
        let r = s.api().raw().get(path).await;
        assert_eq!(
            r.expect(200),
            &json!({ "ok": true, "mode": "normal" }),
            "{path} keyed"
        );
    }
}

/// Asserts the discovery document's required entries; returns its `limits`.
#[track_caller]
fn check_discovery(doc: &Value) -> Value {
    assert_eq!(doc["ok"], json!(true), "{doc}");
    assert!(
        !doc["name"].as_str().unwrap_or_default().is_empty(),
        "name: {doc}"
    );
    assert!(!doc["version"].is_null(), "version: {doc}");
    for entry in [
        "versioning",
        "authentication",
        "shape",
        "catchingUp",
        "fieldNames",
        "concurrency",
        "deletes",
        "endpoints",
        "fieldNotes",
        "limits",
        "storage",
        "errors",
    ] {
        let v = &doc[entry];
        let filled = match v {
            Value::String(s) => !s.trim().is_empty(),
            Value::Array(a) => !a.is_empty(),
            Value::Object(o) => !o.is_empty(),
            _ => false,
        };
        assert!(filled, "discovery entry {entry:?} missing or empty: {v}");
    }
    doc["limits"].clone()
}

#[tokio::test]
async fn discovery_answers_keyless_and_keyed_under_both_paths_with_the_limits_in_force() {
    let s = Server::start().await;
    let mut docs = Vec::new();
    for api in [s.anon().raw(), s.api().raw()] {
        for path in ["/api/v1", "/api"] {
            let r = api.get(path).await;
            let doc = r.expect(200);
            assert!(r.content_type().starts_with("application/json"), "{path}");
            let limits = check_discovery(doc);
            for (name, value) in DEFAULT_LIMITS {
                assert_eq!(limits[*name], json!(value), "limit {name} in {limits}");
            }
            docs.push(doc.clone());
        }
    }
    assert!(
        docs.windows(2).all(|w| w[0] == w[1]),
        "the four discovery replies differ"
    );
    let engine = if on_postgres() {
        "postgresql"
    } else {
        "sqlite"
    };
    assert_eq!(
        docs[0]["storage"]["engine"],
        json!(engine),
        "the storage entry names the engine in use: {}",
        docs[0]["storage"]
    );
}

#[tokio::test]
async fn lowered_limits_show_in_discovery_and_are_enforced() {
    let s = Server::start_with(&[
        "--limit-projects-per-account",
        "3",
        "--limit-columns-per-project",
        "2",
        "--limit-discovery-burst",
        "7",
        "--limit-bad-key-burst",
        "9",
    ])
    .await;
    let api = s.api();
    let limits = check_discovery(api.raw().get("/api/v1").await.expect(200));
    for (name, default) in DEFAULT_LIMITS {
        let expected = match *name {
            "projects-per-account" => 3,
            "columns-per-project" => 2,
            "discovery-burst" => 7,
            "bad-key-burst" => 9,
            _ => *default,
        };
        assert_eq!(limits[*name], json!(expected), "limit {name} in {limits}");
    }

    let pid = api.new_project("One").await;
    api.new_project("Two").await;
    api.new_project("Three").await;
    api.post("/projects", json!({ "name": "Four" }))
        .await
        .expect_error(422);
    assert_eq!(api.projects("").await.len(), 3);

    api.new_column(&pid, "A").await;
    api.new_column(&pid, "B").await;
    api.post("/columns", json!({ "projectId": pid, "name": "C" }))
        .await
        .expect_error(422);
    assert_eq!(
        api.project(&pid).await["columns"].as_array().unwrap().len(),
        2
    );
}

/// Sends keyless discovery requests, alternating both paths, and returns their statuses.
async fn keyless_discovery(s: &Server, n: usize) -> Vec<u16> {
    let anon = s.anon().raw();
    let mut statuses = Vec::new();
    for i in 0..n {
        let path = if i % 2 == 0 { "/api/v1" } else { "/api" };
        statuses.push(anon.get(path).await.status);
    }
    statuses
}

#[tokio::test]
async fn keyless_discovery_allows_10_per_10_seconds_then_429() {
    let s = Server::start().await;
    assert_eq!(keyless_discovery(&s, 10).await, vec![200; 10]);
    let r = s.anon().raw().get("/api/v1").await;
    r.expect_error(429);
    assert!(r.header("retry-after").is_some(), "429 without Retry-After");
    assert!(
        r.body["resetsAt"].is_i64(),
        "429 without resetsAt: {}",
        r.text
    );
    s.anon().raw().get("/api").await.expect_error(429);

    // The limit is on keyless discovery only: keyed discovery and health still answer.
    check_discovery(s.api().raw().get("/api/v1").await.expect(200));
    for _ in 0..20 {
        s.anon().raw().get("/api/health").await.expect(200);
    }
}

#[tokio::test]
async fn a_lowered_discovery_burst_refuses_the_request_after_it() {
    let s = Server::start_with(&["--limit-discovery-burst", "3"]).await;
    assert_eq!(keyless_discovery(&s, 4).await, vec![200, 200, 200, 429]);
    s.api().raw().get("/api").await.expect(200);
}

#[tokio::test]
async fn head_answers_every_read_route_as_get_does_without_a_body() {
    use reqwest::Method;
    let s = Server::start().await;
    let api = s.api();
    let (pid, cid) = api.board().await;
    let tid = str_of(&api.new_task(&cid, "Heads up").await["id"]);
    let keyed = [
        "/projects".to_owned(),
        format!("/projects/{pid}"),
        format!("/tasks/{tid}"),
        "/bin".to_owned(),
        "/changes".to_owned(),
        "/export".to_owned(),
        "/export?format=csv".to_owned(),
        "/search?q=heads".to_owned(),
        "/usage".to_owned(),
        "/keys".to_owned(),
    ];
    let keyless = [
        "/api/health",
        "/api/v1/health",
        "/api/v1",
        "/api",
        "/api/v1/openapi.json",
    ];
    let mut asked: Vec<(Api, String)> = Vec::new();
    for path in &keyed {
        asked.push((api.clone(), path.clone()));
        asked.push((api.unversioned(), path.clone()));
    }
    for path in keyless {
        asked.push((s.anon().raw(), path.to_owned()));
    }
    for (api, path) in &asked {
        let (get_status, get_headers, get_body) = api.raw_request(Method::GET, path, &[]).await;
        let (status, headers, body) = api.raw_request(Method::HEAD, path, &[]).await;
        assert_eq!(get_status, 200, "GET {path}");
        assert_eq!(status, 200, "HEAD {path}: {headers:?}");
        assert!(body.is_empty(), "HEAD {path} sent a body of {}", body.len());
        for name in [
            "content-type",
            "etag",
            "content-disposition",
            "content-encoding",
        ] {
            assert_eq!(
                headers.get(name),
                get_headers.get(name),
                "HEAD {path}: {name}"
            );
        }
        // The GET body's length, where the GET reply says it (a streamed one does not).
        if let Some(length) = get_headers.get("content-length") {
            assert_eq!(
                length.to_str().unwrap(),
                get_body.len().to_string(),
                "GET {path}"
            );
            assert_eq!(headers.get("content-length"), Some(length), "HEAD {path}");
        }
    }

    // HEAD is a read: counted against the allowance like the GET it mirrors.
    let used = |b: &serde_json::Value| b["reads"]["used"].as_u64().unwrap();
    let before = used(api.get("/usage").await.expect_ok(200));
    api.raw_request(Method::HEAD, "/projects", &[]).await;
    assert_eq!(used(api.get("/usage").await.expect_ok(200)), before + 2);

    // An unknown path: 404 either way, and HEAD still sends no body.
    for path in ["/api/v1/nowhere", "/api/nowhere"] {
        let (status, _, body) = s.api().raw().raw_request(Method::HEAD, path, &[]).await;
        assert_eq!(status, 404, "HEAD {path}");
        assert!(body.is_empty());
    }
    let (status, _, _) = api
        .raw_request(Method::HEAD, &format!("/tasks/{tid}x"), &[])
        .await;
    assert_eq!(status, 404);
}
