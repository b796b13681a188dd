//! Calendar keys (issue 36): a key with `access: "calendar"` fetches the calendar feed alone,
//! in the header or as `?key=` (calendar apps send no header); every other route answers it
//! 403 `calendar_key`; `?key=` anywhere else, or with another key, answers 403
//! `key_in_query`; it is listed, expires and is revoked like any key, never outranks its
//! parent, and never reaches the log.

use reqwest::Method;
use serde_json::{Value, json};

use crate::calendar::parse_feed;
use crate::harness::*;

/// `POST /keys` by `api` asking `body`: (id, key).
async fn issue(api: &Api, body: Value) -> (String, String) {
    let b = api.post("/keys", body).await.expect_ok(201).clone();
    (str_of(&b["id"]), str_of(&b["key"]))
}

/// A client with no header, for URLs that carry their key.
fn bare(s: &Server) -> Api {
    s.anon()
}

/// A board with one card that has a deadline; its id.
async fn one_card(api: &Api) -> String {
    let (_, column) = api.board().await;
    let card = api
        .create_task(
            json!({"columnId": column, "title": "Renew passport", "deadline": "2027-01-15"}),
        )
        .await;
    str_of(&card["id"])
}

#[tokio::test]
async fn a_calendar_key_fetches_the_feed_in_its_url_and_reaches_nothing_else() {
    let s = Server::start().await;
    let api = s.api();
    let card = one_card(&api).await;
    let r = api
        .post(
            "/keys",
            json!({"label": "phone calendar", "access": "calendar"}),
        )
        .await;
    let b = r.expect_ok(201);
    assert_eq!(b["access"], json!("calendar"));
    let (id, key) = (str_of(&b["id"]), str_of(&b["key"]));
    let listed = api.get("/keys").await;
    let row = listed.expect_ok(200)["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["id"] == json!(id))
        .cloned()
        .expect("the calendar key is listed");
    assert_eq!(
        (row["access"].clone(), row["label"].clone()),
        (json!("calendar"), json!("phone calendar"))
    );

    // In the URL, with no header: the feed, as the parser reads it.
    for path in [
        format!("/calendar.ics?key={key}"),
        format!("/calendar.ics?alarm=10&key={key}"),
    ] {
        let r = bare(&s).get(&path).await;
        r.expect(200);
        let events = parse_feed(&r.text)["events"].as_array().unwrap().clone();
        assert_eq!(events.len(), 1, "{path}");
        assert_eq!(events[0]["uid"], json!(format!("{card}@workboard")));
    }
    bare(&s)
        .unversioned()
        .get(&format!("/calendar.ics?key={key}"))
        .await
        .expect(200);
    // In the header too, and a full or read key's header works on the feed.
    let calendar = s.api_for(&key);
    calendar.get("/calendar.ics").await.expect(200);
    let (_, read_key) = issue(&api, json!({"access": "read"})).await;
    s.api_for(&read_key).get("/calendar.ics").await.expect(200);

    // Every other route, read or write, keyless documents included: 403 calendar_key, and
    // nothing is written.
    for (method, path, body) in [
        (Method::GET, "/projects", None),
        (Method::GET, &*format!("/tasks/{card}"), None),
        (Method::GET, "/changes", None),
        (Method::GET, "/export", None),
        (Method::GET, "/search?q=passport", None),
        (Method::GET, "/keys", None),
        (Method::GET, "/usage", None),
        (Method::POST, "/keys", Some(json!({"access": "calendar"}))),
        (Method::DELETE, &*format!("/keys/{id}"), None),
        (Method::POST, "/live/ticket", Some(json!({}))),
        (
            Method::PATCH,
            &*format!("/tasks/{card}"),
            Some(json!({"title": "x"})),
        ),
        (Method::POST, "/projects", Some(json!({"name": "Sneaky"}))),
        (Method::POST, "/undo", None),
    ] {
        calendar
            .send(method.clone(), path, body.map(|b| b.to_string()))
            .await
            .expect_code(403, "calendar_key");
    }
    for path in ["/api/v1", "/api/v1/openapi.json"] {
        calendar
            .raw()
            .get(path)
            .await
            .expect_code(403, "calendar_key");
    }
    assert_eq!(api.task(&card).await["title"], json!("Renew passport"));
    assert_eq!(api.projects("").await.len(), 1);
    assert!(
        api.get("/keys").await.body["keys"]
            .as_array()
            .unwrap()
            .iter()
            .any(|k| k["id"] == json!(id))
    );
}

#[tokio::test]
async fn a_key_in_the_query_is_taken_by_the_feed_alone_and_only_a_calendar_key() {
    let s = Server::start().await;
    let api = s.api();
    one_card(&api).await;
    let (_, key) = issue(&api, json!({"access": "calendar"})).await;
    let (_, read_key) = issue(&api, json!({"access": "read"})).await;
    // Anywhere but the feed, `?key=` is refused whatever else the request carries.
    for path in [
        format!("/projects?key={key}"),
        format!("/changes?key={}", s.key),
        format!("/keys?key={key}"),
    ] {
        bare(&s).get(&path).await.expect_code(403, "key_in_query");
        api.get(&path).await.expect_code(403, "key_in_query");
    }
    // A full or read key does not belong in a URL: the feed refuses it there.
    for k in [&s.key, &read_key] {
        bare(&s)
            .get(&format!("/calendar.ics?key={k}"))
            .await
            .expect_code(403, "key_in_query");
    }
    // A key both ways is not guessed at; a bad one is 401; none at all, the edge's 403.
    api.get(&format!("/calendar.ics?key={key}"))
        .await
        .expect_code(400, "bad_request");
    for bad in ["wb_nope", "nope", ""] {
        bare(&s)
            .get(&format!("/calendar.ics?key={bad}"))
            .await
            .expect_code(401, "bad_key");
    }
    let r = bare(&s).get("/calendar.ics").await;
    assert_eq!(r.status, 403);
    assert!(r.content_type().starts_with("text/html"), "{}", r.text);
}

#[tokio::test]
async fn a_calendar_key_is_revoked_and_expires_like_any_key_and_never_outranks_its_parent() {
    let s = Server::start().await;
    let api = s.api();
    one_card(&api).await;
    let (id, key) = issue(&api, json!({"access": "calendar"})).await;
    let url = format!("/calendar.ics?key={key}");
    bare(&s).get(&url).await.expect(200);
    api.delete(&format!("/keys/{id}")).await.expect_ok(200);
    bare(&s).get(&url).await.expect_code(401, "bad_key");

    // Made by a key that expires, it expires no later; a read key makes none.
    let limit = now_ms() + 3_600_000;
    let (_, short) = issue(&api, json!({"expiresAt": limit})).await;
    let b = s
        .api_for(&short)
        .post("/keys", json!({"access": "calendar"}))
        .await
        .expect_ok(201)
        .clone();
    assert_eq!(b["expiresAt"], json!(limit));
    s.api_for(&short)
        .post("/keys", json!({"access": "calendar", "expiresAt": null}))
        .await
        .expect_field_error(422, "expiresAt");
    let (_, read_key) = issue(&api, json!({"access": "read"})).await;
    s.api_for(&read_key)
        .post("/keys", json!({"access": "calendar"}))
        .await
        .expect_code(403, "read_only_key");

    // From its moment on, an expiring calendar key answers 401 like a revoked one.
    let expires = now_ms() + 1_500;
    let (_, key) = issue(&api, json!({"access": "calendar", "expiresAt": expires})).await;
    let url = format!("/calendar.ics?key={key}");
    bare(&s).get(&url).await.expect(200);
    let r = loop {
        let r = bare(&s).get(&url).await;
        if r.status != 200 || now_ms() > expires + 5_000 {
            break r;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    r.expect_code(401, "bad_key");
    assert!(now_ms() >= expires, "refused before its moment");
}

#[tokio::test]
async fn no_key_reaches_the_log_from_a_feed_url() {
    // Every level on, so no span or event of any crate can carry the query unseen.
    let s = Server::start_with_env(&[("RUST_LOG", "trace")]).await;
    let api = s.api();
    one_card(&api).await;
    let (_, key) = issue(&api, json!({"access": "calendar"})).await;
    let bad = "wb_NotAKeyButSecretLookingAAAAAAAAAAAAAAAAAAAAAAAA";
    bare(&s)
        .get(&format!("/calendar.ics?key={key}&alarm=15"))
        .await
        .expect(200);
    bare(&s)
        .get(&format!("/calendar.ics?key={key}&alarm=x"))
        .await
        .expect(422);
    bare(&s)
        .get(&format!("/projects?key={key}"))
        .await
        .expect(403);
    bare(&s)
        .get(&format!("/calendar.ics?key={bad}"))
        .await
        .expect(401);
    bare(&s)
        .get(&format!("/calendar.ics?key={}", s.key))
        .await
        .expect(403);
    api.get("/projects").await.expect(200);
    let log = s.log();
    assert!(
        log.contains("/api/v1/calendar.ics"),
        "the requests were logged:\n{log}"
    );
    for secret in [key.as_str(), bad, s.key.as_str()] {
        assert!(!log.contains(secret), "a key reached the log:\n{log}");
    }
    assert!(
        !log.contains("key="),
        "a query string reached the log:\n{log}"
    );
}
