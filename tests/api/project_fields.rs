//! Project fields: name and folder trimming, archive and pin, photo validation, the
//! `?name=` search, the `completed=` values and the 100-projects limit.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

use crate::harness::*;

#[tokio::test]
async fn names_are_cut_to_40_unicode_characters_and_nothing_else_is_stripped() {
    let s = Server::start().await;
    let api = s.api();
    let cases = [
        ("é".repeat(45), "é".repeat(40)),
        ("😀".repeat(41), "😀".repeat(40)),
        (
            format!("{}😀😀", "a".repeat(39)),
            format!("{}😀", "a".repeat(39)),
        ),
        ("x".repeat(40), "x".repeat(40)),
        ("  padded  ".to_string(), "  padded  ".to_string()),
    ];
    for (sent, kept) in &cases {
        let project = api.create_project(json!({ "name": sent })).await;
        assert_eq!(project["name"], json!(kept), "sent {sent:?}");
        assert_eq!(
            api.project(&str_of(&project["id"])).await["name"],
            json!(kept)
        );
    }
    let pid = api.new_project("short").await;
    let r = api
        .patch(
            &format!("/projects/{pid}"),
            json!({ "name": "ü".repeat(60) }),
        )
        .await;
    assert_eq!(r.expect_ok(200)["project"]["name"], json!("ü".repeat(40)));
}

#[tokio::test]
async fn an_empty_or_missing_name_is_422_and_the_old_name_stands() {
    let s = Server::start().await;
    let api = s.api();
    for body in [
        json!({ "name": "" }),
        json!({}),
        json!({ "name": null }),
        json!({ "name": 7 }),
    ] {
        api.post("/projects", body)
            .await
            .expect_field_error(422, "name");
    }
    assert!(api.projects("").await.is_empty());
    let pid = api.new_project("Keep").await;
    for body in [json!({ "name": "" }), json!({ "name": null })] {
        api.patch(&format!("/projects/{pid}"), body)
            .await
            .expect_field_error(422, "name");
    }
    assert_eq!(api.project(&pid).await["name"], json!("Keep"));
}

#[tokio::test]
async fn folder_is_trimmed_to_40_and_empty_reads_back_null() {
    let s = Server::start().await;
    let api = s.api();
    let p = api
        .create_project(json!({ "name": "F", "folder": "ß".repeat(41) }))
        .await;
    assert_eq!(p["folder"], json!("ß".repeat(40)));
    let p = api
        .create_project(json!({ "name": "G", "folder": "" }))
        .await;
    assert_eq!(p["folder"], json!(null));
    let p = api
        .create_project(json!({ "name": "H", "folder": null }))
        .await;
    assert_eq!(p["folder"], json!(null));

    let pid = api
        .create_project(json!({ "name": "I", "folder": "Work" }))
        .await["id"]
        .clone();
    let path = format!("/projects/{}", str_of(&pid));
    let r = api.patch(&path, json!({ "folder": "" })).await;
    assert_eq!(r.expect_ok(200)["project"]["folder"], json!(null));
    api.patch(&path, json!({ "folder": "Home" }))
        .await
        .expect_ok(200);
    assert_eq!(api.project(&str_of(&pid)).await["folder"], json!("Home"));
    let r = api.patch(&path, json!({ "folder": null })).await;
    assert_eq!(r.expect_ok(200)["project"]["folder"], json!(null));
    assert_eq!(api.project(&str_of(&pid)).await["folder"], json!(null));
}

#[tokio::test]
async fn archive_and_pin_are_set_and_cleared_independently() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, cid) = api.board().await;
    let tid = str_of(&api.new_task(&cid, "Survives archiving").await["id"]);
    let path = format!("/projects/{pid}");
    let t1 = 1_700_000_000_000i64;
    let t2 = 1_700_000_123_456i64;

    let r = api.patch(&path, json!({ "archivedAt": t1 })).await;
    assert_eq!(r.expect_ok(200)["project"]["archivedAt"], json!(t1));
    let listed = api.projects("").await;
    assert_eq!(listed.len(), 1, "an archived project is still read");
    assert_eq!(listed[0]["archivedAt"], json!(t1));
    assert_eq!(
        task_ids(&listed[0]),
        vec![tid.clone()],
        "archiving moves nothing"
    );

    let r = api.patch(&path, json!({ "pinnedAt": t2 })).await;
    let project = r.expect_ok(200)["project"].clone();
    assert_eq!(project["pinnedAt"], json!(t2));
    assert_eq!(project["archivedAt"], json!(t1));

    let r = api.patch(&path, json!({ "archivedAt": null })).await;
    let project = r.expect_ok(200)["project"].clone();
    assert_eq!(project["archivedAt"], json!(null));
    assert_eq!(project["pinnedAt"], json!(t2));
    assert_eq!(task_ids(&project), vec![tid]);

    let r = api.patch(&path, json!({ "pinnedAt": null })).await;
    assert_eq!(r.expect_ok(200)["project"]["pinnedAt"], json!(null));
    let read = api.project(&pid).await;
    assert_eq!(
        (read["archivedAt"].clone(), read["pinnedAt"].clone()),
        (json!(null), json!(null))
    );

    let p = api
        .create_project(json!({ "name": "Pinned", "pinnedAt": t2, "archivedAt": t1 }))
        .await;
    assert_eq!(
        (p["pinnedAt"].clone(), p["archivedAt"].clone()),
        (json!(t2), json!(t1))
    );
    api.patch(&path, json!({ "archivedAt": "yesterday" }))
        .await
        .expect_field_error(422, "archivedAt");
}

fn data_url(mime: &str, b64: &str) -> String {
    format!("data:{mime};base64,{b64}")
}

/// A real PNG padded with zero bytes after its end so the data URL is `len` characters long
/// (within 3, as base64 comes in groups of 4).
fn png_of_length(len: usize) -> String {
    let prefix = "data:image/png;base64,";
    let mut bytes = STANDARD.decode(PNG_B64).unwrap();
    let b64_len = (len - prefix.len()) / 4 * 4;
    bytes.resize(b64_len / 4 * 3, 0);
    let url = format!("{prefix}{}", STANDARD.encode(&bytes));
    assert_eq!(url.len(), prefix.len() + b64_len);
    url
}

#[tokio::test]
async fn png_jpeg_and_webp_photos_are_kept_and_null_removes_them() {
    let s = Server::start().await;
    let api = s.api();
    let png = data_url("image/png", PNG_B64);
    let jpeg = data_url("image/jpeg", JPEG_B64);
    let webp = data_url("image/webp", WEBP_B64);
    let p = api
        .create_project(json!({ "name": "Photo", "photo": png }))
        .await;
    assert_eq!(p["photo"], json!(png));
    let pid = str_of(&p["id"]);
    assert_eq!(api.project(&pid).await["photo"], json!(png));
    for photo in [&jpeg, &webp] {
        let r = api
            .patch(&format!("/projects/{pid}"), json!({ "photo": photo }))
            .await;
        assert_eq!(r.expect_ok(200)["project"]["photo"], json!(photo));
        assert_eq!(api.project(&pid).await["photo"], json!(photo));
    }
    let r = api
        .patch(&format!("/projects/{pid}"), json!({ "photo": null }))
        .await;
    assert_eq!(r.expect_ok(200)["project"]["photo"], json!(null));
    assert_eq!(api.project(&pid).await["photo"], json!(null));

    // Up to 24,576 characters is accepted.
    let big = png_of_length(24_576);
    assert!(big.len() > 24_570 && big.len() <= 24_576);
    let r = api
        .patch(&format!("/projects/{pid}"), json!({ "photo": big }))
        .await;
    assert_eq!(r.expect_ok(200)["project"]["photo"], json!(big));
}

#[tokio::test]
async fn a_photo_that_is_not_a_valid_image_data_url_is_422_and_nothing_is_saved() {
    let s = Server::start().await;
    let api = s.api();
    let too_big = png_of_length(24_580);
    assert!(too_big.len() > 24_576);
    let bad: Vec<(&str, String)> = vec![
        ("not a data url", "hello".to_string()),
        ("a link", "https://example.com/a.png".to_string()),
        ("text", data_url("text/plain", "aGVsbG8gd29ybGQ=")),
        ("gif", data_url("image/gif", GIF_B64)),
        ("bad base64", data_url("image/png", "iVBORw0KGgo!!!!AAAA")),
        ("png declared, jpeg bytes", data_url("image/png", JPEG_B64)),
        ("jpeg declared, png bytes", data_url("image/jpeg", PNG_B64)),
        (
            "webp declared, text bytes",
            data_url("image/webp", "aGVsbG8gd29ybGQ="),
        ),
        (
            "not base64 encoded",
            format!("data:image/png,{}", "x".repeat(20)),
        ),
        ("over 24,576 characters", too_big),
    ];
    for (what, photo) in &bad {
        let r = api
            .post("/projects", json!({ "name": "Bad photo", "photo": photo }))
            .await;
        assert_eq!(r.status, 422, "{what}: {}", r.text);
        r.expect_field_error(422, "photo");
    }
    assert!(
        api.projects("").await.is_empty(),
        "a refused photo created a project"
    );
    api.post("/projects", json!({ "name": "Num", "photo": 5 }))
        .await
        .expect_field_error(422, "photo");

    let png = data_url("image/png", PNG_B64);
    let p = api
        .create_project(json!({ "name": "Kept", "photo": png }))
        .await;
    let pid = str_of(&p["id"]);
    for (what, photo) in &bad {
        let r = api
            .patch(
                &format!("/projects/{pid}"),
                json!({ "name": "Renamed", "photo": photo }),
            )
            .await;
        assert_eq!(r.status, 422, "{what}: {}", r.text);
    }
    assert_eq!(
        api.project(&pid).await,
        p,
        "a refused photo changed the project"
    );
}

/// Percent-encodes a query value.
fn enc(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn names(projects: &[Value]) -> Vec<String> {
    let mut names: Vec<String> = projects.iter().map(|p| str_of(&p["name"])).collect();
    names.sort();
    names
}

#[tokio::test]
async fn name_search_matches_the_whole_name_case_folded() {
    let s = Server::start().await;
    let api = s.api();
    for name in [
        "Alpha",
        "alpha",
        "ALPHA",
        "Alpha Beta",
        "Alphabet",
        "Beta",
        "Éclair",
    ] {
        api.new_project(name).await;
    }
    let found = api.projects(&format!("?name={}", enc("alpha"))).await;
    assert_eq!(
        names(&found),
        vec!["ALPHA", "Alpha", "alpha"],
        "not a word or prefix match"
    );
    let found = api.projects(&format!("?name={}", enc("ALPHA beta"))).await;
    assert_eq!(names(&found), vec!["Alpha Beta"]);
    let found = api.projects(&format!("?name={}", enc("beta"))).await;
    assert_eq!(names(&found), vec!["Beta"]);
    let found = api.projects(&format!("?name={}", enc("éCLAIR"))).await;
    assert_eq!(names(&found), vec!["Éclair"]);

    let r = api.get(&format!("/projects?name={}", enc("Gamma"))).await;
    let doc = r.expect(200);
    assert_eq!(doc["version"], json!(1));
    assert_eq!(doc["projects"], json!([]));

    // A match is the whole project as read.
    let beta = api
        .projects(&format!("?name={}", enc("Beta")))
        .await
        .remove(0);
    assert_eq!(api.project(&str_of(&beta["id"])).await, beta);
}

#[tokio::test]
async fn name_search_follows_renames_and_deletes_at_once() {
    let s = Server::start().await;
    let api = s.api();
    let pid = api.new_project("Old name").await;
    api.patch(&format!("/projects/{pid}"), json!({ "name": "New name" }))
        .await
        .expect_ok(200);
    assert!(
        api.projects(&format!("?name={}", enc("old name")))
            .await
            .is_empty()
    );
    let found = api.projects(&format!("?name={}", enc("new NAME"))).await;
    assert_eq!(ids(&json!(found)), vec![pid.clone()]);

    let other = api.new_project("New name").await;
    let found = api.projects(&format!("?name={}", enc("New name"))).await;
    assert_eq!(found.len(), 2, "repeated names return several");

    api.delete(&format!("/projects/{pid}")).await.expect_ok(200);
    let found = api.projects(&format!("?name={}", enc("New name"))).await;
    assert_eq!(ids(&json!(found)), vec![other]);
}

#[tokio::test]
async fn completed_accepts_none_recent_all_and_refuses_anything_else() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, _) = api.board().await;
    for value in ["none", "recent", "all"] {
        api.get(&format!("/projects?completed={value}"))
            .await
            .expect(200);
        api.get(&format!("/projects/{pid}?completed={value}"))
            .await
            .expect(200);
    }
    for value in ["yes", "30", "ALL", "some"] {
        let r = api.get(&format!("/projects?completed={value}")).await;
        r.expect_field_error(422, "completed");
        let r = api.get(&format!("/projects/{pid}?completed={value}")).await;
        r.expect_field_error(422, "completed");
    }
}

#[tokio::test]
async fn an_account_holds_at_most_100_projects_archived_ones_included() {
    let s = Server::start().await;
    let api = s.api();
    let mut first = String::new();
    for i in 0..100 {
        let id = api.new_project(&format!("P{i}")).await;
        if i == 0 {
            first = id;
        }
    }
    api.post("/projects", json!({ "name": "P100" }))
        .await
        .expect_error(422);
    api.post("/projects", json!({ "id": "b_extra", "name": "P100" }))
        .await
        .expect_error(422);
    assert_eq!(api.projects("").await.len(), 100);

    api.patch(
        &format!("/projects/{first}"),
        json!({ "archivedAt": now_ms() }),
    )
    .await
    .expect_ok(200);
    api.post("/projects", json!({ "name": "P100" }))
        .await
        .expect_error(422);

    api.delete(&format!("/projects/{first}"))
        .await
        .expect_ok(200);
    api.post("/projects", json!({ "name": "P100" }))
        .await
        .expect_ok(201);
    api.post("/projects", json!({ "name": "P101" }))
        .await
        .expect_error(422);
    assert_eq!(api.projects("").await.len(), 100);
}
