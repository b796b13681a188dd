//! Metrics and logs (issue 19): `/metrics` on a listener of its own, with the families
//! dashboards rely on and route templates (never raw ids) as labels; JSON logs whose every
//! request line carries its request id and route; no key, ticket, pepper or query string in
//! any log.

use serde_json::{Value, json};

use crate::harness::*;

/// The metrics text of the server's metrics listener.
async fn scrape(s: &Server) -> String {
    let addr = s
        .metrics_addr
        .as_deref()
        .expect("started with --metrics-addr");
    let r = reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap()
        .get(format!("http://{addr}/metrics"))
        .send()
        .await
        .expect("a scrape");
    assert_eq!(r.status(), 200);
    r.text().await.expect("the text")
}

/// The value of the sample `line_start` (a name with its labels), if present.
fn sample(text: &str, line_start: &str) -> Option<f64> {
    text.lines()
        .find(|l| l.starts_with(line_start))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

#[tokio::test]
async fn metrics_name_every_family_by_route_template_on_their_own_listener() {
    let s = Server::start_with(&[
        "--metrics-addr",
        "127.0.0.1:0",
        "--limit-reads-per-day",
        "40",
    ])
    .await;
    let api = s.api();
    let (_, cid) = api.board().await;
    let tid = str_of(&api.new_task(&cid, "Card").await["id"]);
    api.patch(&format!("/tasks/{tid}"), json!({"title": "New"}))
        .await
        .expect_ok(200);
    api.patch(
        &format!("/tasks/{tid}"),
        json!({"title": {"before": "Old", "after": "x"}}),
    )
    .await
    .expect_error(409);
    api.patch(&format!("/tasks/{tid}"), json!({"nope": 1}))
        .await
        .expect_error(422);
    api.unversioned()
        .get(&format!("/tasks/{tid}"))
        .await
        .expect(200);
    s.with_header("Bearer wb_wrong")
        .get("/projects")
        .await
        .expect_error(401);
    let _socket = crate::live::open(&s, &api).await;
    while api.get("/projects").await.status != 429 {}

    let text = scrape(&s).await;
    let has = |line: &str| {
        assert!(sample(&text, line).is_some(), "no `{line}` in\n{text}");
        sample(&text, line).unwrap()
    };
    assert_eq!(
        has(
            r#"workboard_http_requests_total{route="/api/v1/tasks/{id}",method="PATCH",status="200"}"#
        ),
        1.0
    );
    assert_eq!(
        has(
            r#"workboard_http_requests_total{route="/api/v1/tasks/{id}",method="GET",status="200"}"#
        ),
        1.0,
        "the unversioned alias counts under the versioned template"
    );
    has(
        r#"workboard_http_request_duration_seconds_count{route="/api/v1/tasks/{id}",method="PATCH"}"#,
    );
    assert!(!text.contains(&tid), "a raw id in a label");
    assert!(has(r#"workboard_writes_total{outcome="committed"}"#) >= 4.0);
    assert_eq!(has(r#"workboard_writes_total{outcome="conflict"}"#), 1.0);
    assert_eq!(has(r#"workboard_writes_total{outcome="refused"}"#), 1.0);
    has(r#"workboard_writes_total{outcome="failed"}"#);
    assert!(has("workboard_write_group_size_count") >= 4.0);
    assert!(has("workboard_commit_duration_seconds_count") >= 4.0);
    has("workboard_writer_queue_depth");
    assert_eq!(has("workboard_accounts_loaded"), 1.0);
    assert_eq!(has("workboard_live_sockets"), 1.0);
    assert!(has(r#"workboard_allowance_exhausted_total{kind="reads"}"#) >= 1.0);
    assert_eq!(has("workboard_bad_key_total"), 1.0);
    assert!(has("workboard_store_bytes") > 0.0);
    // Never on the interface's own address.
    s.anon().raw().get("/metrics").await.expect_error(404);
}

#[tokio::test]
async fn json_logs_carry_each_requests_id_and_route_and_no_secret() {
    let s = Server::start_with(&["--log-format", "json"]).await;
    let api = s.api();
    let (_, cid) = api.board().await;
    api.new_task(&cid, "Logged").await;
    api.get("/projects?completed=all&name=Board")
        .await
        .expect(200);
    let ticket = crate::live::ticket(&api).await;
    let url = s
        .url(&format!("/api/v1/live?ticket={ticket}"))
        .replacen("http://", "ws://", 1);
    let _socket = tokio_tungstenite::connect_async(url.as_str())
        .await
        .expect("a socket");
    let log = s.log();
    let mut requests = 0;
    // Every line but the first start's `account: a_...` (its human output, not the log).
    for line in log
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with("account: "))
    {
        let v: Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        if v["target"] == json!("workboard::request") {
            requests += 1;
            assert!(v["span"]["request_id"].is_string(), "{line}");
            assert!(
                v["span"]["route"]
                    .as_str()
                    .is_some_and(|r| r.starts_with('/')),
                "{line}"
            );
        }
    }
    assert!(requests >= 5, "{log}");
    let pepper = std::fs::read(s.data_dir().join("pepper")).unwrap();
    let hex: String = pepper.iter().map(|b| format!("{b:02x}")).collect();
    for secret in [s.key.as_str(), ticket.as_str(), hex.as_str()] {
        assert!(!log.contains(secret), "a secret in the log");
    }
    assert!(!log.contains("completed=all"), "a query string in the log");
    assert!(!log.contains("ticket="), "a query string in the log");
}
