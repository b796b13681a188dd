//! The `Idempotency-Key` header itself (issue 35): its quoted and bare spellings are one key
//! and malformed ones answer 400 naming it; CORS lets browsers send it and read
//! `Idempotent-Replayed`; the discovery and OpenAPI documents describe it and its codes.

use reqwest::Method;
use serde_json::json;

use crate::harness::*;
use crate::idempotency::{Keyed, replayed, titles};

#[tokio::test]
async fn quoted_and_bare_are_one_key_and_malformed_keys_answer_400_naming_the_header() {
    let server = Server::start().await;
    let (api, client) = (server.api(), Keyed::of(&server, &server.key));
    let (_, column) = api.board().await;
    let body = json!({"columnId": column, "title": "A"}).to_string();
    let post = |key: Vec<u8>| {
        let (client, body) = (client.clone(), body.clone());
        async move {
            client
                .try_send(Method::POST, "/tasks", Some(&body), Some(&key))
                .await
                .expect("a reply")
        }
    };
    post(br#""a \"quoted\" key""#.to_vec()).await.expect_ok(201);
    let bare = post(br#"a "quoted" key"#.to_vec()).await;
    assert!(
        replayed(&bare),
        "the bare spelling is the same key: {}",
        bare.text
    );
    let longest = vec![b'x'; 255];
    post(longest).await.expect_ok(201);
    for bad in [
        b"".to_vec(),
        b"\"\"".to_vec(),
        vec![b'x'; 256],
        b"caf\xc3\xa9".to_vec(),
        b"tab\there".to_vec(),
        b"\"unterminated".to_vec(),
        b"\"bad \\n escape\"".to_vec(),
    ] {
        let reply = post(bad.clone()).await;
        let body = reply.expect_code(400, "bad_idempotency_key");
        assert!(
            body["error"]
                .as_str()
                .unwrap_or_default()
                .contains("Idempotency-Key"),
            "{:?}: {}",
            String::from_utf8_lossy(&bad),
            reply.text
        );
    }
    // Two headers: which one was meant is not guessed.
    let twice = reqwest::Client::new()
        .post(server.url("/api/v1/tasks"))
        .header("authorization", format!("Bearer {}", server.key))
        .header("idempotency-key", "one")
        .header("idempotency-key", "two")
        .header("content-type", "application/json")
        .body(body.clone())
        .send()
        .await
        .expect("a reply");
    assert_eq!(twice.status().as_u16(), 400);
    assert_eq!(titles(&api).await, vec!["A", "A"], "no malformed key wrote");
}

#[tokio::test]
async fn cors_allows_the_header_and_exposes_the_replay_mark() {
    let origin = "https://app.example";
    let server = Server::start_with(&["--cors-origin", origin]).await;
    let preflight = reqwest::Client::new()
        .request(Method::OPTIONS, server.url("/api/v1/tasks"))
        .header("origin", origin)
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "idempotency-key")
        .send()
        .await
        .expect("a preflight");
    let allowed = preflight.headers()["access-control-allow-headers"]
        .to_str()
        .expect("text")
        .to_ascii_lowercase();
    assert!(allowed.contains("idempotency-key"), "{allowed}");
    let reply = server
        .api()
        .send_with(Method::GET, "/usage", &[("origin", origin)])
        .await;
    let exposed = reply
        .header("access-control-expose-headers")
        .unwrap_or_default();
    assert!(
        exposed.to_ascii_lowercase().contains("idempotent-replayed"),
        "{exposed}"
    );
}

#[tokio::test]
async fn the_documents_describe_the_header_and_its_codes() {
    let server = Server::start().await;
    let discovery = server.anon().get("").await.expect(200).clone();
    let idempotency = &discovery["idempotency"];
    assert!(
        idempotency["header"]
            .as_str()
            .unwrap_or_default()
            .contains("Idempotency-Key")
    );
    assert!(idempotency["retentionSeconds"].as_u64() >= Some(86_400));
    let codes = discovery["errors"].to_string();
    for code in [
        "bad_idempotency_key",
        "idempotency_key_in_flight",
        "idempotency_key_reused",
    ] {
        assert!(codes.contains(code), "{code} in the discovery document");
    }
    let openapi = server.anon().get("/openapi.json").await.expect(200).clone();
    let patch = &openapi["paths"]["/api/v1/tasks/{id}"]["patch"];
    let names: Vec<&str> = patch["parameters"]
        .as_array()
        .expect("parameters")
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert!(names.contains(&"Idempotency-Key"), "{names:?}");
    assert!(patch["responses"]["200"]["headers"]["Idempotent-Replayed"].is_object());
    assert!(
        patch["responses"]["422"]["description"]
            .as_str()
            .unwrap_or_default()
            .contains("idempotency_key_reused")
    );
    assert!(openapi.to_string().contains("idempotency_key_in_flight"));
}
