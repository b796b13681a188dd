//! Card search (issue 23; contract: Additions, Search): `GET /search` finds the caller's
//! cards by every text field, ranks and pages them, reads its query language or answers 422
//! naming `q`, sees every acknowledged write at once, never shows another account's card,
//! counts against the allowance with ETag/304, and rebuilds an index that was deleted.

use serde_json::{Value, json};

use crate::harness::*;

/// `GET /search?{query}` answered 200: the reply.
async fn search(api: &Api, query: &str) -> Value {
    api.get(&format!("/search?{query}"))
        .await
        .expect_ok(200)
        .clone()
}

/// The ids of the hits of `q` (URL-encoded here), best first.
async fn hits(api: &Api, q: &str) -> Vec<String> {
    hits_q(api, &format!("q={}", encode(q))).await
}

async fn hits_q(api: &Api, query: &str) -> Vec<String> {
    let reply = search(api, query).await;
    reply["hits"]
        .as_array()
        .expect("hits")
        .iter()
        .map(|h| str_of(&h["task"]["id"]))
        .collect()
}

/// Percent-encodes a query value.
pub fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn id(task: &Value) -> String {
    str_of(&task["id"])
}

/// Waits until the clock is past the card's `updatedAt`, so the next write stamps later
/// (two requests in one millisecond may share a stamp).
async fn past(task: &Value) {
    let stamp = task["updatedAt"].as_i64().expect("updatedAt");
    while now_ms() <= stamp {
        tokio::task::yield_now().await;
    }
}

#[tokio::test]
async fn finds_cards_by_every_field_with_the_read_shape_and_marked_snippets() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, cid) = api.board().await;
    let card = api
        .create_task(json!({
            "columnId": cid,
            "title": "Repot the <b>Ficus</b>",
            "description": "Use **terracotta** pots, see [the guide](https://zzguide.example/pots).",
            "location": "Balcony",
            "tags": ["Jardín"],
            "checklist": [{"text": "buy compost"}, {"text": "water after"}],
            "comments": [{"text": "the neighbours' cuttings too"}],
        }))
        .await;
    api.new_task(&cid, "Unrelated card").await;
    for q in [
        "ficus",
        "FICUS",
        "terracotta",
        "balcony",
        "jardin",
        "compost",
        "neighbours",
        "cuttings",
    ] {
        assert_eq!(hits(&api, q).await, [id(&card)], "{q}");
    }
    assert!(
        hits(&api, "zzguide").await.is_empty(),
        "link targets are not text"
    );

    let reply = search(&api, "q=ficus+compost").await;
    assert_eq!(reply["total"], json!(1));
    assert!(reply.get("cursor").is_none(), "one page: no cursor");
    let hit = &reply["hits"][0];
    assert_keys(hit, &["task", "projectId", "score", "highlights"]);
    assert_eq!(hit["projectId"], json!(pid));
    assert!(hit["score"].as_f64().unwrap() > 0.0);
    // The card exactly as a read shapes it.
    assert_eq!(hit["task"], api.task(&id(&card)).await);
    assert_eq!(
        hit["highlights"],
        json!({
            "title": ["Repot the &lt;b&gt;<mark>Ficus</mark>&lt;/b&gt;"],
            "checklist": ["buy <mark>compost</mark>"],
        })
    );
    let reply = search(&api, "q=terracotta+neighbours+balcony+jard*").await;
    let h = &reply["hits"][0]["highlights"];
    assert_eq!(
        h["description"],
        json!(["Use <mark>terracotta</mark> pots, see the guide."])
    );
    assert_eq!(h["location"], json!(["<mark>Balcony</mark>"]));
    assert_eq!(h["tags"], json!(["<mark>Jardín</mark>"]));
    assert_eq!(
        h["comments"],
        json!(["the <mark>neighbours</mark>&#39; cuttings too"])
    );
    // The unversioned alias is the same route.
    let again = api.unversioned().get("/search?q=ficus").await;
    assert_eq!(
        again.expect_ok(200)["hits"][0]["task"]["id"],
        json!(id(&card))
    );
}

#[tokio::test]
async fn a_title_match_ranks_first_and_equal_scores_go_to_the_newest() {
    let s = Server::start().await;
    let api = s.api();
    let (_, cid) = api.board().await;
    let described = api
        .create_task(json!({"columnId": cid, "title": "Monthly books",
            "description": "invoice invoice invoice, then the invoice and one more invoice"}))
        .await;
    let titled = api
        .create_task(json!({"columnId": cid, "title": "A long title that names the invoice once among many other words"}))
        .await;
    assert_eq!(hits(&api, "invoice").await, [id(&titled), id(&described)]);
    let older = api.new_task(&cid, "Water plants").await;
    past(&older).await;
    let newer = api.new_task(&cid, "Water plants").await;
    assert_eq!(hits(&api, "plants").await, [id(&newer), id(&older)]);
    // A write makes a card the newest.
    past(&newer).await;
    api.patch(&format!("/tasks/{}", id(&older)), json!({"priority": 1}))
        .await
        .expect_ok(200);
    assert_eq!(hits(&api, "plants").await, [id(&older), id(&newer)]);
}

#[tokio::test]
async fn phrases_prefixes_exclusions_and_filters() {
    let s = Server::start().await;
    let api = s.api();
    let (p1, c1) = api.board().await;
    let p2 = api.new_project("Other").await;
    let c2 = api.new_column(&p2, "Later").await;
    let a = api
        .create_task(
            json!({"columnId": c1, "title": "Water the garden plants", "tags": ["Urgent"]}),
        )
        .await;
    let b = api.new_task(&c1, "Plants need water").await;
    let c = api.new_task(&c2, "Planning the garden").await;
    let sorted = |mut v: Vec<String>| {
        v.sort();
        v
    };
    let all = sorted(vec![id(&a), id(&b), id(&c)]);
    assert_eq!(hits(&api, "\"water the garden\"").await, [id(&a)]);
    assert_eq!(sorted(hits(&api, "plan*").await), all);
    assert_eq!(hits(&api, "garden -planning").await, [id(&a)]);
    assert_eq!(hits(&api, "garden -\"water the\"").await, [id(&c)]);
    assert_eq!(hits(&api, "tag:urgent").await, [id(&a)]);
    assert_eq!(hits(&api, "plants -tag:URGENT").await, [id(&b)]);
    assert_eq!(hits(&api, &format!("garden project:{p2}")).await, [id(&c)]);
    assert_eq!(hits(&api, &format!("column:{c1} -garden")).await, [id(&b)]);
    assert_eq!(
        sorted(hits(&api, &format!("garden project:{p1} project:{p2}")).await),
        sorted(vec![id(&a), id(&c)])
    );
    assert!(
        hits(&api, &format!("garden project:{p2} column:{c1}"))
            .await
            .is_empty()
    );
}

#[tokio::test]
async fn what_cannot_be_read_answers_422_naming_the_parameter() {
    let s = Server::start().await;
    let api = s.api();
    for (q, words) in [
        ("", "empty"),
        ("%20%20", "empty"),
        ("%22open", "never closed"),
        ("%22%22", "phrase is empty"),
        ("-", "`-` must be followed"),
        ("*", "`*` must follow"),
        ("pl*n", "may only end a word"),
        ("a*", "at least 2"),
        ("tag:", "needs a value"),
        ("project:c_1", "takes a project id"),
        ("-done", "only excludes"),
        ("%21%21%21", "no word"),
    ] {
        let r = api.get(&format!("/search?q={q}")).await;
        let body = r.expect_field_error(422, "q");
        assert_eq!(body["code"], json!("invalid_value"));
        let error = body["error"].as_str().unwrap();
        assert!(error.contains(words), "{q}: {error}");
    }
    let long = "x".repeat(501);
    api.get(&format!("/search?q={long}"))
        .await
        .expect_field_error(422, "q");
    let fits = format!("{}abcde", "abcd ".repeat(99));
    assert_eq!(fits.chars().count(), 500);
    api.get(&format!("/search?q=%20{}%20", encode(&fits)))
        .await
        .expect_ok(200);
    api.get("/search").await.expect_field_error(422, "q");
    for (query, field) in [
        ("q=x&limit=0", "limit"),
        ("q=x&limit=101", "limit"),
        ("q=x&limit=1.5", "limit"),
        ("q=x&cursor=abc", "cursor"),
        ("q=x&completed=finished", "completed"),
    ] {
        let r = api.get(&format!("/search?{query}")).await;
        r.expect_field_error(422, field);
        assert_eq!(r.body["code"], json!("invalid_value"), "{query}");
    }
    api.get("/search?q=x&page=2")
        .await
        .expect_code(422, "unknown_field");
}

#[tokio::test]
async fn every_acknowledged_write_shows_at_once_and_deleted_cards_never_do() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, cid) = api.board().await;
    let card = api.new_task(&cid, "Quarterly zebra report").await;
    assert_eq!(hits(&api, "zebra").await, [id(&card)]);
    let path = format!("/tasks/{}", id(&card));
    api.patch(&path, json!({"title": "Quarterly okapi report"}))
        .await
        .expect_ok(200);
    assert!(hits(&api, "zebra").await.is_empty());
    assert_eq!(hits(&api, "okapi").await, [id(&card)]);
    api.post(
        &format!("{path}/comments"),
        json!({"text": "ask the giraffe"}),
    )
    .await
    .expect_ok(201);
    assert_eq!(hits(&api, "giraffe").await, [id(&card)]);

    // Finished: out of the default view, in `recent` and `all`.
    api.patch(&path, json!({"completedAt": now_ms()}))
        .await
        .expect_ok(200);
    assert!(hits(&api, "okapi").await.is_empty());
    for view in ["recent", "all"] {
        assert_eq!(
            hits_q(&api, &format!("q=okapi&completed={view}")).await,
            [id(&card)]
        );
    }
    api.patch(&path, json!({"completedAt": null}))
        .await
        .expect_ok(200);

    // An archived project's cards are found.
    api.patch(&format!("/projects/{pid}"), json!({"archivedAt": now_ms()}))
        .await
        .expect_ok(200);
    assert_eq!(hits(&api, "okapi").await, [id(&card)]);

    // Deleted: gone at once, back on restore, gone for good after a purge.
    api.delete(&path).await.expect_ok(200);
    assert!(hits_q(&api, "q=okapi&completed=all").await.is_empty());
    api.patch(&path, json!({"cancelledAt": null}))
        .await
        .expect_ok(200);
    assert_eq!(hits(&api, "okapi").await, [id(&card)]);
    api.delete(&format!("/projects/{pid}")).await.expect_ok(200);
    assert!(
        hits_q(&api, "q=okapi&completed=all").await.is_empty(),
        "binned with its project"
    );
    api.post("/purge", json!({})).await.expect_ok(200);
    assert!(
        hits_q(&api, "q=okapi&completed=all").await.is_empty(),
        "destroyed"
    );
}

#[tokio::test]
async fn a_search_never_returns_another_accounts_card() {
    let s = Server::start().await;
    let mine = s.api();
    let (other_key, _) = s.issue_key(None).await;
    let theirs = s.api_for(&other_key);
    let (my_project, my_column) = mine.board().await;
    let (their_project, their_column) = theirs.board().await;
    let my_card = mine
        .create_task(
            json!({"columnId": my_column, "title": "Shared secret words", "tags": ["both"]}),
        )
        .await;
    let their_card = theirs
        .create_task(
            json!({"columnId": their_column, "title": "Shared secret words", "tags": ["both"]}),
        )
        .await;
    for q in ["shared secret", "\"secret words\"", "sha*", "tag:both"] {
        assert_eq!(hits(&mine, q).await, [id(&my_card)], "{q}");
        assert_eq!(hits(&theirs, q).await, [id(&their_card)], "{q}");
    }
    // Naming the other account's project or list finds nothing, rather than telling it exists.
    assert!(
        hits(&mine, &format!("shared project:{their_project}"))
            .await
            .is_empty()
    );
    assert!(
        hits(&mine, &format!("shared column:{their_column}"))
            .await
            .is_empty()
    );
    assert_eq!(
        hits(&mine, &format!("shared project:{my_project}")).await,
        [id(&my_card)]
    );
}

#[tokio::test]
async fn pages_follow_the_cursor_without_repeats() {
    let s = Server::start().await;
    let api = s.api();
    let (_, cid) = api.board().await;
    let tasks: Vec<Value> = (0..25)
        .map(|i| json!({"columnId": cid, "title": format!("Kiwi number {i}")}))
        .collect();
    api.post("/tasks", json!({"tasks": tasks}))
        .await
        .expect_ok(201);
    let mut seen = Vec::new();
    let mut query = "q=kiwi&limit=10".to_owned();
    let mut pages = 0;
    loop {
        let reply = search(&api, &query).await;
        pages += 1;
        assert_eq!(reply["total"], json!(25));
        seen.extend(
            reply["hits"]
                .as_array()
                .unwrap()
                .iter()
                .map(|h| id(&h["task"])),
        );
        match reply["cursor"].as_str() {
            Some(c) => query = format!("q=kiwi&limit=10&cursor={c}"),
            None => break,
        }
    }
    assert_eq!(pages, 3);
    let mut unique = seen.clone();
    unique.sort();
    unique.dedup();
    assert_eq!((seen.len(), unique.len()), (25, 25));
    assert_eq!(
        seen,
        hits_q(&api, "q=kiwi&limit=100").await,
        "pages in the one order"
    );
}

#[tokio::test]
async fn searches_count_against_the_allowance_and_are_conditional() {
    let s = Server::start_with(&["--limit-reads-per-day", "12"]).await;
    let api = s.api();
    let (_, cid) = api.board().await; // 2 requests
    api.new_task(&cid, "Tomato seeds").await; // 3
    let first = api.get("/search?q=tomato").await; // 4
    first.expect_ok(200);
    let tag = first.header("etag").expect("an ETag");
    assert!(tag.starts_with("W/"), "{tag}");
    assert_eq!(first.header("ratelimit-remaining").as_deref(), Some("8"));
    let same = api
        .send_with(
            reqwest::Method::GET,
            "/search?q=tomato",
            &[("if-none-match", &tag)],
        )
        .await; // 5
    assert_eq!(same.status, 304);
    assert_eq!(same.header("ratelimit-remaining").as_deref(), Some("7"));
    // Another query, or a write, is another tag.
    let other = api.get("/search?q=seeds").await; // 6
    assert_ne!(other.header("etag"), Some(tag.clone()));
    api.new_task(&cid, "Tomato cages").await; // 7
    let after = api
        .send_with(
            reqwest::Method::GET,
            "/search?q=tomato",
            &[("if-none-match", &tag)],
        )
        .await; // 8
    assert_eq!(after.status, 200);
    assert_eq!(after.body["total"], json!(2));
    for _ in 0..4 {
        api.get("/search?q=tomato").await.expect_ok(200); // 9 to 12
    }
    api.get("/search?q=tomato")
        .await
        .expect_code(429, "allowance_exhausted");
}

/// The index folders of the server's data folder, each with its `meta.json`.
fn index_folders(s: &Server) -> Vec<std::path::PathBuf> {
    let root = s.data_dir().join("search");
    let Ok(entries) = std::fs::read_dir(&root) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("meta.json").exists())
        .collect()
}

#[tokio::test]
async fn a_deleted_index_is_rebuilt_from_the_store() {
    let mut s = Server::start().await;
    let api = s.api();
    let (_, cid) = api.board().await;
    let first = api.new_task(&cid, "Lemon tree").await;
    assert_eq!(hits(&api, "lemon").await, [id(&first)]);
    let folders = index_folders(&s);
    assert_eq!(folders.len(), 1, "one index for the one account");
    let name = folders[0]
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(name.starts_with("a_"), "named by its account: {name}");

    // Deleted while the server runs: the next write's commit fails and the index is rebuilt.
    std::fs::remove_dir_all(s.data_dir().join("search")).unwrap();
    let second = api.new_task(&cid, "Lemon curd").await;
    let mut found = hits(&api, "lemon").await;
    found.sort();
    let mut expected = vec![id(&first), id(&second)];
    expected.sort();
    assert_eq!(found, expected);
    assert_eq!(index_folders(&s).len(), 1, "rebuilt in its folder");

    // Deleted while the server is down: rebuilt on the first search after the start.
    s.kill().await;
    std::fs::remove_dir_all(s.data_dir().join("search")).unwrap();
    s.restart().await;
    let api = s.api();
    let mut found = hits(&api, "lemon").await;
    found.sort();
    assert_eq!(found, expected);

    // Damaged: rebuilt too.
    s.kill().await;
    let folder = index_folders(&s).pop().expect("the index is back");
    std::fs::write(folder.join("meta.json"), b"{ not json").unwrap();
    s.restart().await;
    let api = s.api();
    assert_eq!(hits(&api, "curd").await, [id(&second)]);
}

#[tokio::test]
async fn the_documents_describe_the_route_and_its_query() {
    let s = Server::start().await;
    let api = s.api();
    let doc = api.get("").await.expect_ok(200).clone();
    let listed = doc["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["method"] == json!("GET") && e["path"] == json!("/api/v1/search"));
    assert!(listed, "discovery lists GET /api/v1/search");
    for key in [
        "query",
        "stemming",
        "syntax",
        "ranking",
        "highlights",
        "paging",
        "completed",
    ] {
        assert!(doc["search"][key].is_string(), "search.{key}");
    }
    let openapi = s
        .anon()
        .raw()
        .get("/api/v1/openapi.json")
        .await
        .expect(200)
        .clone();
    let op = &openapi["paths"]["/api/v1/search"]["get"];
    let params: Vec<&str> = op["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert_eq!(params, ["q", "completed", "limit", "cursor"]);
    let q = &op["parameters"][0];
    assert_eq!(q["required"], json!(true));
    assert!(q["description"].as_str().unwrap().contains("tag:NAME"));
}
