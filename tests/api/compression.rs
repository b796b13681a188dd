//! Compressed replies (issue 24): `Accept-Encoding` negotiated on JSON replies (gzip and
//! zstd; gzip wins ties; br, identity or nothing get today's bytes), `Content-Encoding` and
//! `Vary: Accept-Encoding`, every encoding decoding to the identity body (on the largest
//! account too), and weak ETags that hold across encodings.

use std::io::Read;

use serde_json::{Value, json};

use crate::harness::*;

#[allow(dead_code)] // the tests use the largest account only
#[path = "../../fixtures/generator/mod.rs"]
mod generator;

fn decode(encoding: Option<&str>, body: &[u8]) -> Vec<u8> {
    match encoding {
        None => body.to_vec(),
        Some("gzip") => {
            // One member: a reader that stops after the first (as browsers do) gets it all.
            let mut out = Vec::new();
            flate2::read::GzDecoder::new(body)
                .read_to_end(&mut out)
                .expect("a gzip body");
            out
        }
        Some("zstd") => zstd::stream::decode_all(body).expect("a zstd body"),
        Some(other) => panic!("unexpected Content-Encoding {other}"),
    }
}

/// A JSON document without its `now` and `cutoff`, which move between requests.
fn without_now(bytes: &[u8]) -> Value {
    let mut v: Value = serde_json::from_slice(bytes).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}",
            String::from_utf8_lossy(&bytes[..bytes.len().min(300)])
        )
    });
    if let Some(o) = v.as_object_mut() {
        o.remove("now");
        o.remove("cutoff");
    }
    v
}

/// GETs `path` in `accept` and checks the reply: `Vary`, the expected `Content-Encoding`,
/// and a body that decodes to `identity` (both without `now`). Returns the encoded size.
async fn same_in(
    api: &Api,
    path: &str,
    accept: &str,
    expect: Option<&str>,
    identity: &Value,
) -> usize {
    let (status, headers, body) = api.get_raw(path, &[("accept-encoding", accept)]).await;
    assert_eq!(status, 200, "{path} in {accept}");
    let vary = headers
        .get_all("vary")
        .iter()
        .map(|v| v.to_str().unwrap().to_ascii_lowercase())
        .collect::<Vec<_>>()
        .join(",");
    assert!(vary.contains("accept-encoding"), "{path}: Vary {vary:?}");
    let encoding = headers
        .get("content-encoding")
        .map(|v| v.to_str().unwrap().to_owned());
    assert_eq!(encoding.as_deref(), expect, "{path} in {accept}");
    // Not `assert_eq!`: a whole account printed twice helps nobody.
    let decoded = without_now(&decode(expect, &body));
    assert!(
        &decoded == identity,
        "{path} in {accept}: the decoded body differs"
    );
    body.len()
}

async fn identity(api: &Api, path: &str) -> (Value, usize) {
    let (status, headers, body) = api.get_raw(path, &[]).await;
    assert_eq!(status, 200, "{path}");
    assert!(headers.get("content-encoding").is_none(), "{path}");
    (without_now(&body), body.len())
}

/// Every whole-account read, the change feed, the export and a record, in every encoding.
async fn every_read_decodes_to_its_identity_body(api: &Api, pid: &str, tid: &str, mid: i64) {
    for path in [
        // Part of the project's cards: sent as the request makes them, not from its runs.
        format!("/changes?since={mid}"),
        format!("/changes?since={mid}&manifest=changed&completed=all"),
        "/changes?manifest=changed".into(),
        "/projects".to_string(),
        "/projects?completed=all".into(),
        format!("/projects/{pid}"),
        "/changes".into(),
        "/changes?completed=all".into(),
        "/export".into(),
        format!("/tasks/{tid}"),
    ] {
        let (plain, size) = identity(api, &path).await;
        for (accept, expect) in [
            ("identity", None),
            ("br", None),
            ("gzip", Some("gzip")),
            ("zstd", Some("zstd")),
            ("gzip, deflate, br, zstd", Some("gzip")),
            ("zstd;q=1.0, gzip;q=0.5", Some("zstd")),
        ] {
            let expect = if size < 1024 { None } else { expect };
            let sent = same_in(api, &path, accept, expect, &plain).await;
            if expect.is_some() {
                assert!(
                    sent * 3 < size,
                    "{path} in {accept}: {sent} of {size} bytes"
                );
            }
        }
    }
}

#[tokio::test]
async fn every_encoding_decodes_to_the_identity_body() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, cid) = api.board().await;
    let mut tid = String::new();
    let mut mid = 0;
    for i in 0..40 {
        if i == 20 {
            mid = api.get("/changes").await.expect(200)["now"]
                .as_i64()
                .unwrap();
        }
        let t = api
            .create_task(json!({
                "columnId": cid, "title": format!("Card {i} of the board"),
                "description": "Some **Markdown** that repeats, as card text does. ".repeat(3),
                "tags": ["web", "sync"], "completedAt": if i % 4 == 0 { json!(now_ms()) } else { json!(null) },
            }))
            .await;
        tid = str_of(&t["id"]);
    }
    // A long description makes one record reply large too.
    api.patch(
        &format!("/tasks/{tid}"),
        json!({"description": "A long card. ".repeat(200)}),
    )
    .await
    .expect_ok(200);
    every_read_decodes_to_its_identity_body(&api, &pid, &tid, mid).await;

    // A write after a compressed read: the fragment is rendered and compressed anew.
    api.patch(&format!("/tasks/{tid}"), json!({"title": "Renamed after"}))
        .await
        .expect_ok(200);
    let (plain, _) = identity(&api, "/projects").await;
    assert!(plain.to_string().contains("Renamed after"));
    for accept in ["gzip", "zstd"] {
        same_in(&api, "/projects", accept, Some(accept), &plain).await;
    }

    // Small replies and errors stay as they are, with Vary all the same.
    let (_, headers, body) = api
        .get_raw("/tasks/t_missing", &[("accept-encoding", "gzip")])
        .await;
    assert!(headers.get("content-encoding").is_none());
    assert!(headers.get("vary").is_some());
    assert_eq!(
        serde_json::from_slice::<Value>(&body).unwrap()["code"],
        json!("not_found")
    );
}

/// A compressed form is made for the first reply in its encoding and kept from the second
/// on (issue 37): the first, second and third replies in each encoding, in turns and in
/// every view (the views without finished cards are cut from the view with them all), and
/// again after a write, all decode to the identity body.
#[tokio::test]
async fn replies_asked_again_in_an_encoding_decode_the_same_each_time() {
    let s = Server::start().await;
    let api = s.api();
    let (_, cid) = api.board().await;
    for i in 0..60 {
        api.create_task(json!({
            "columnId": cid, "title": format!("Card {i} read again"),
            "description": "Text that repeats, as card text does. ".repeat(4),
            "completedAt": if i % 3 == 0 { json!(now_ms()) } else { json!(null) },
        }))
        .await;
    }
    let paths = [
        "/projects?completed=all",
        "/projects",
        "/projects?completed=recent",
        "/changes",
        "/changes?completed=all",
        "/export",
    ];
    for round in 0..2 {
        for path in paths {
            let (plain, size) = identity(&api, path).await;
            assert!(size > 1024, "{path}: {size} bytes");
            for accept in ["gzip", "zstd", "gzip", "zstd", "zstd", "gzip"] {
                same_in(&api, path, accept, Some(accept), &plain).await;
            }
        }
        let (all, _) = identity(&api, "/projects?completed=all").await;
        let (open, _) = identity(&api, "/projects").await;
        let cards = |v: &Value| v.to_string().matches("read again").count();
        assert_eq!((cards(&all), cards(&open)), (60, 40), "round {round}");
        // A write: the fragments and their forms are made anew.
        let t = api
            .create_task(json!({"columnId": cid, "title": "Written between rounds"}))
            .await;
        assert!(t["id"].is_string());
    }
}

#[tokio::test]
async fn a_weak_etag_holds_across_encodings_and_304_carries_vary() {
    let s = Server::start().await;
    let api = s.api();
    let (_, cid) = api.board().await;
    for i in 0..30 {
        api.new_task(&cid, &format!("Card number {i} with a title"))
            .await;
    }
    let (_, plain, _) = api.get_raw("/projects", &[]).await;
    let (_, gz, _) = api
        .get_raw("/projects", &[("accept-encoding", "gzip")])
        .await;
    let (_, zs, _) = api
        .get_raw("/projects", &[("accept-encoding", "zstd")])
        .await;
    let tag = plain.get("etag").unwrap().to_str().unwrap().to_owned();
    assert!(tag.starts_with("W/"), "{tag}");
    assert_eq!(gz.get("etag").unwrap(), tag.as_str());
    assert_eq!(zs.get("etag").unwrap(), tag.as_str());
    for accept in ["gzip", "zstd", "identity"] {
        let (status, headers, body) = api
            .get_raw(
                "/projects",
                &[("accept-encoding", accept), ("if-none-match", &tag)],
            )
            .await;
        assert_eq!(status, 304, "{accept}");
        assert!(body.is_empty());
        assert!(headers.get("content-encoding").is_none());
        let vary = headers
            .get("vary")
            .map(|v| v.to_str().unwrap().to_ascii_lowercase());
        assert!(
            vary.is_some_and(|v| v.contains("accept-encoding")),
            "{accept}"
        );
    }
}

#[tokio::test]
async fn the_largest_account_decodes_to_its_identity_body_in_every_encoding() {
    let s = Server::start().await;
    let (key, account) = s.issue_key(None).await;
    let fixture = generator::Fixture::generate(&generator::Spec::largest().at(now_ms()));
    for (i, chunk) in fixture.export_chunks(25).iter().enumerate() {
        let file = s.root().join(format!("largest-{i}.json"));
        std::fs::write(&file, chunk).unwrap();
        s.cli(&["import", file.to_str().unwrap(), "--account", &account])
            .await
            .success();
    }
    let api = s.api_for(&key);
    for path in ["/projects?completed=all", "/changes?completed=all"] {
        let (plain, size) = identity(&api, path).await;
        assert!(size > 10_000_000, "{path}: {size} bytes");
        for accept in ["gzip", "zstd"] {
            let sent = same_in(&api, path, accept, Some(accept), &plain).await;
            eprintln!("{path} in {accept}: {sent} of {size} bytes");
            assert!(sent * 3 < size, "{path} in {accept}: {sent} of {size}");
        }
    }
}
