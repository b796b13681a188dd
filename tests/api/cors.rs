//! Browser apps on other origins (issue 24): `--cors-origin` (and `WORKBOARD_CORS_ORIGINS`)
//! lists the origins; a preflight is answered before authentication and never counted; a
//! listed origin's replies expose the headers a client needs; an origin not listed, or a
//! server with none, gets no CORS headers at all. (tests/e2e/cors.test.mjs calls the
//! interface from a page on another port in Chromium.)

use reqwest::Method;
use serde_json::json;

use crate::harness::*;

const APP: &str = "http://app.example:3000";

fn cors_headers(h: &reqwest::header::HeaderMap) -> Vec<String> {
    h.keys()
        .map(|k| k.as_str().to_owned())
        .filter(|k| k.starts_with("access-control-"))
        .collect()
}

fn header(h: &reqwest::header::HeaderMap, name: &str) -> String {
    h.get(name)
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default()
}

fn vary(h: &reqwest::header::HeaderMap) -> String {
    h.get_all("vary")
        .iter()
        .map(|v| v.to_str().unwrap().to_ascii_lowercase())
        .collect::<Vec<_>>()
        .join(",")
}

async fn preflight(api: &Api, origin: &str) -> (u16, reqwest::header::HeaderMap) {
    let (status, headers, _) = api
        .raw_request(
            Method::OPTIONS,
            "/projects",
            &[
                ("origin", origin),
                ("access-control-request-method", "POST"),
                (
                    "access-control-request-headers",
                    "authorization, content-type",
                ),
            ],
        )
        .await;
    (status, headers)
}

async fn reads_used(api: &Api) -> u64 {
    api.get("/usage").await.expect_ok(200)["reads"]["used"]
        .as_u64()
        .unwrap()
}

#[tokio::test]
async fn a_listed_origin_gets_its_preflight_and_exposed_headers_uncounted() {
    let s = Server::start_with(&[
        "--cors-origin",
        APP,
        "--cors-origin",
        "https://other.example",
    ])
    .await;
    let api = s.api();
    let before = reads_used(&api).await;

    // Preflights need no key and are never counted.
    let (status, h) = preflight(&s.anon(), APP).await;
    assert_eq!(status, 204);
    assert_eq!(header(&h, "access-control-allow-origin"), APP);
    let methods = header(&h, "access-control-allow-methods");
    for m in ["GET", "POST", "PATCH", "DELETE"] {
        assert!(methods.contains(m), "{methods}");
    }
    let allowed = header(&h, "access-control-allow-headers").to_ascii_lowercase();
    for name in ["authorization", "content-type", "if-none-match"] {
        assert!(allowed.contains(name), "{allowed}");
    }
    assert!(header(&h, "access-control-max-age").parse::<u32>().unwrap() > 0);
    assert!(h.get("access-control-allow-credentials").is_none());
    assert!(vary(&h).contains("origin"));
    let (status, _) = preflight(&api, APP).await;
    assert_eq!(status, 204);
    assert_eq!(reads_used(&api).await, before + 1, "only /usage counted");

    // The real request: its origin allowed, the headers a client reads exposed.
    let (status, h, _) = api.get_raw("/projects", &[("origin", APP)]).await;
    assert_eq!(status, 200);
    assert_eq!(header(&h, "access-control-allow-origin"), APP);
    let exposed = header(&h, "access-control-expose-headers").to_ascii_lowercase();
    for name in [
        "etag",
        "ratelimit-remaining",
        "ratelimit-limit",
        "ratelimit-reset",
        "retry-after",
        "x-request-id",
    ] {
        assert!(exposed.contains(name), "{exposed}");
    }
    assert!(vary(&h).contains("origin"));
    // Errors carry them too, so an app can read why it was refused.
    let (status, h, _) = s
        .with_header("Bearer wb_nope")
        .get_raw("/projects", &[("origin", APP)])
        .await;
    assert_eq!(status, 401);
    assert_eq!(header(&h, "access-control-allow-origin"), APP);
    // The second listed origin works the same, from the environment too.
    let env = Server::start_with_env(&[(
        "WORKBOARD_CORS_ORIGINS",
        "https://a.example,https://b.example",
    )])
    .await;
    let (_, h, _) = env
        .api()
        .get_raw("/projects", &[("origin", "https://b.example")])
        .await;
    assert_eq!(
        header(&h, "access-control-allow-origin"),
        "https://b.example"
    );
}

#[tokio::test]
async fn an_origin_not_listed_gets_no_cors_headers_and_its_preflight_is_not_counted() {
    let s = Server::start_with(&["--cors-origin", APP]).await;
    let api = s.api();
    let before = reads_used(&api).await;
    let (status, h) = preflight(&api, "https://evil.example").await;
    assert_eq!(status, 204);
    assert_eq!(cors_headers(&h), Vec::<String>::new());
    let (_, h, _) = api
        .get_raw("/projects", &[("origin", "https://evil.example")])
        .await;
    assert_eq!(cors_headers(&h), Vec::<String>::new());
    assert!(vary(&h).contains("origin"), "the answer depends on Origin");
    assert_eq!(
        reads_used(&api).await,
        before + 2,
        "the GET and /usage, not the preflight"
    );
    // Outside /api: nothing.
    let http = reqwest::Client::new();
    let r = http
        .request(Method::OPTIONS, s.url("/"))
        .header("origin", APP)
        .header("access-control-request-method", "GET")
        .send()
        .await
        .unwrap();
    assert_eq!(cors_headers(r.headers()), Vec::<String>::new());

    // With no origin listed (the default), no CORS header anywhere, and no Vary: Origin.
    let plain = Server::start().await;
    let (_, h) = preflight(&plain.api(), APP).await;
    assert_eq!(cors_headers(&h), Vec::<String>::new());
    let (_, h, _) = plain.api().get_raw("/projects", &[("origin", APP)]).await;
    assert_eq!(cors_headers(&h), Vec::<String>::new());
    assert!(!vary(&h).contains("origin"));
    let _ = json!({});
}

#[tokio::test]
async fn a_malformed_origin_is_refused_at_start() {
    let out = cli(
        &empty_root().path().join("data"),
        &["serve", "--cors-origin", "https://app.example/"],
    )
    .await;
    assert!(!out.status.success());
    assert!(out.stderr.contains("origin"), "{}", out.stderr);
}
