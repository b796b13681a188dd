//! Stable error codes (issue 20): every JSON error carries `code` from one table, the
//! discovery document lists the table, and the OpenAPI error schema names it as an enum.
//! Each code a client can provoke is provoked here once, and named.

use serde_json::{Value, json};

use crate::harness::*;

#[tokio::test]
async fn each_error_a_client_can_provoke_carries_its_code() {
    let s = Server::start_with(&["--limit-tags-per-task", "1"]).await;
    let api = s.api();
    let (pid, cid) = api.board().await;
    let tid = str_of(&api.new_task(&cid, "Card").await["id"]);

    api.post_text("/tasks", "{")
        .await
        .expect_code(400, "invalid_json");
    s.with_header("Bearer wb_nope")
        .get("/projects")
        .await
        .expect_code(401, "bad_key");
    api.get("/tasks/t_missing")
        .await
        .expect_code(404, "not_found");
    api.raw()
        .send(reqwest::Method::PUT, "/api/v1/projects", None)
        .await
        .expect_code(405, "method_not_allowed");
    api.patch(
        &format!("/tasks/{tid}"),
        json!({"title": {"before": "Other", "after": "New"}}),
    )
    .await
    .expect_code(409, "conflict");
    api.post(
        "/tasks",
        json!({"columnId": cid, "title": "x", "titel": "y"}),
    )
    .await
    .expect_code(422, "unknown_field");
    api.get("/projects?colour=red")
        .await
        .expect_code(422, "unknown_field");
    api.patch(&format!("/tasks/{tid}"), json!({"deadline": "2026-02-30"}))
        .await
        .expect_code(422, "invalid_value");
    api.get("/changes?since=soon")
        .await
        .expect_code(422, "invalid_value");
    api.post(&format!("/tasks/{tid}/tags"), json!({"text": "one"}))
        .await
        .expect_ok(201);
    api.post(&format!("/tasks/{tid}/tags"), json!({"text": "two"}))
        .await
        .expect_code(422, "limit_reached");
    api.get(&format!("/projects/{pid}x"))
        .await
        .expect_code(404, "not_found");
}

#[tokio::test]
async fn the_discovery_document_and_the_openapi_schema_list_the_same_codes() {
    let s = Server::start().await;
    let table: Vec<&str> = workboard::http::error::ErrorCode::TABLE
        .iter()
        .map(|(c, _, _)| c.as_str())
        .collect();
    let doc = s.api().get("").await.expect(200).clone();
    let listed: Vec<&str> = doc["errors"]["codes"]
        .as_array()
        .expect("errors.codes")
        .iter()
        .map(|c| c["code"].as_str().expect("a code"))
        .collect();
    assert_eq!(listed, table, "the discovery document's codes");
    let openapi = s.api().get("/openapi.json").await.expect(200).clone();
    let enumerated: Vec<&str> =
        openapi["components"]["schemas"]["Error"]["properties"]["code"]["enum"]
            .as_array()
            .unwrap_or_else(|| {
                panic!(
                    "the Error schema's code is no enum: {}",
                    openapi["components"]["schemas"]["Error"]
                )
            })
            .iter()
            .map(|c: &Value| c.as_str().expect("a code"))
            .collect();
    assert_eq!(enumerated, table, "the OpenAPI Error schema's codes");
    // The body limit in the document is the one in force.
    let text = openapi.to_string();
    assert!(
        text.contains("body limit of 32 MiB"),
        "the 413 names the limit"
    );
}

#[tokio::test]
async fn the_body_limit_in_the_document_follows_the_configured_one() {
    let s = Server::start_with(&["--limit-body-bytes", "65536"]).await;
    let openapi = s.api().get("/openapi.json").await.expect(200).to_string();
    assert!(openapi.contains("body limit of 64 KiB"), "{openapi:.0}");
    assert!(!openapi.contains("32 MiB"));
}
