//! Export and import (issue 5; specification: Reading; contract: Export, Running it):
//! `GET /export` is the whole account with every finished card as a download,
//! `workboard export` writes the same file, and `workboard import` recreates such a file in
//! another account exactly, all or nothing. The fixture `fixtures/sample-account.json` is a
//! realistic account in export form that must survive export → import → export unchanged.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::changes::{DAY, changes, entries, now_of};
use crate::harness::*;
use crate::live::{NUDGE_WAIT, next_nudge, open};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/sample-account.json");
/// What a re-import may change: the document's clock and the new account's own stamps.
const VOLATILE: &[&str] = &["now", "rev", "updatedAt"];

fn fixture() -> Value {
    let text = std::fs::read_to_string(FIXTURE).expect("read the fixture");
    serde_json::from_str(&text).expect("the fixture is JSON")
}

/// `v` without the volatile fields, at every depth.
fn stable(v: &Value) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| !VOLATILE.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), stable(v)))
                .collect::<Map<String, Value>>(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(stable).collect()),
        other => other.clone(),
    }
}

/// The path and values of the first difference between two documents, if any.
fn first_difference(a: &Value, b: &Value, path: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter().find_map(|k| {
                let (p, q) = (
                    x.get(k).unwrap_or(&Value::Null),
                    y.get(k).unwrap_or(&Value::Null),
                );
                if x.contains_key(k) != y.contains_key(k) {
                    return Some(format!("{path}.{k}: present only on one side ({p} / {q})"));
                }
                first_difference(p, q, &format!("{path}.{k}"))
            })
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (p, q))| first_difference(p, q, &format!("{path}[{i}]"))),
        _ if a == b => None,
        _ => Some(format!("{path}: {a} != {b}")),
    }
}

#[track_caller]
fn assert_same_but_volatile(a: &Value, b: &Value, what: &str) {
    if let Some(diff) = first_difference(&stable(a), &stable(b), "$") {
        panic!("{what} differ at {diff}");
    }
}

/// `YYYY-MM-DD` of a UTC instant (days-from-civil, inverted).
fn utc_date(ms: i64) -> String {
    let z = ms.div_euclid(DAY) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// `GET /export`, asserted 200, a JSON attachment named for the account and today.
async fn export(api: &Api, account: &str) -> Value {
    let before = now_ms();
    let r = api.get("/export").await;
    r.expect(200);
    assert!(
        r.content_type().starts_with("application/json"),
        "{}",
        r.content_type()
    );
    let disposition = r
        .header("content-disposition")
        .expect("Content-Disposition");
    let named = |ms| {
        format!(
            "attachment; filename=\"workboard-{account}-{}.json\"",
            utc_date(ms)
        )
    };
    assert!(
        disposition == named(before) || disposition == named(now_ms()),
        "Content-Disposition {disposition:?}, expected {:?}",
        named(before)
    );
    assert_keys(&r.body, &["version", "now", "projects"]);
    assert_eq!(r.body["version"], json!(1));
    r.body.clone()
}

async fn import(s: &Server, file: &Path, account: &str) -> CliOutput {
    let file = file.to_str().expect("utf-8 path");
    s.cli(&["import", file, "--account", account]).await
}

/// Imports `file` and checks the summary line against the document's counts.
async fn import_ok(s: &Server, file: &Path, account: &str, doc: &Value) {
    let out = import(s, file, account).await;
    out.success();
    let projects = doc["projects"].as_array().unwrap();
    let tasks: usize = projects.iter().map(|p| tasks_of(p).len()).sum();
    let columns: usize = (projects.iter())
        .map(|p| p["columns"].as_array().unwrap().len())
        .sum();
    let ids: Vec<&Value> = projects.iter().map(|p| &p["id"]).collect();
    let summary = json!({ "ok": true, "projects": projects.len(), "columns": columns,
        "tasks": tasks, "projectIds": ids, "skipped": [] });
    assert_eq!(out.json_lines().last(), Some(&summary), "{}", out.stdout);
}

fn write_json(dir: &Path, name: &str, doc: &Value) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_vec_pretty(doc).unwrap()).expect("write");
    path
}

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

#[tokio::test]
async fn export_is_the_whole_account_with_every_finished_card_as_an_attachment() {
    let s = Server::start().await;
    let (key, account) = s.issue_key(None).await;
    let api = s.api_for(&key);
    let p = api
        .create_project(json!({ "name": "Export", "columns": ["A", "B"] }))
        .await;
    let (a, b) = (
        str_of(&p["columns"][0]["id"]),
        str_of(&p["columns"][1]["id"]),
    );
    let card = |id: &str, column: &str, extra: Value| {
        let mut body = json!({ "id": id, "columnId": column, "title": id });
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        body
    };
    api.create_task(card(
        "t_open",
        &a,
        json!({ "tags": ["x"], "checklist": [{ "text": "c" }] }),
    ))
    .await;
    api.create_task(card("t_recent", &b, json!({ "completedAt": days_ago(3) })))
        .await;
    let old = json!({ "completedAt": days_ago(45), "parentId": "t_open" });
    api.create_task(card("t_old_sub", &b, old)).await;
    api.create_task(card("t_binned", &a, json!({}))).await;
    api.delete("/tasks/t_binned").await.expect_ok(200);
    let gone = api.new_column(&str_of(&p["id"]), "Gone").await;
    api.create_task(card("t_in_gone", &gone, json!({}))).await;
    api.delete(&format!("/columns/{gone}")).await.expect_ok(200);
    let gone_project = api.new_project("Gone project").await;
    api.delete(&format!("/projects/{gone_project}"))
        .await
        .expect_ok(200);

    let doc = export(&api, &account).await;
    let mut whole = api.account().await;
    assert_same_but_volatile(&doc, &whole, "export and GET /projects?completed=all");
    whole["now"] = doc["now"].clone();
    assert_eq!(
        doc, whole,
        "the export is the completed=all read, rev and stamps included"
    );
    let text = doc.to_string();
    for id in ["t_open", "t_recent", "t_old_sub"] {
        assert!(text.contains(id), "{id} missing from the export");
    }
    for id in [
        "t_binned",
        "t_in_gone",
        gone.as_str(),
        gone_project.as_str(),
    ] {
        assert!(!text.contains(id), "{id} is in the bin, yet exported");
    }
    let default = api.get("/projects").await.expect(200).to_string();
    assert!(
        !default.contains("t_old_sub") && !default.contains("t_recent"),
        "default read"
    );
    api.get("/export?completed=all")
        .await
        .expect_field_error(422, "completed");
}

#[tokio::test]
async fn cli_export_writes_the_same_file_as_the_http_export() {
    let s = Server::start().await;
    let (key, account) = s.issue_key(None).await;
    let api = s.api_for(&key);
    let (_, cid) = api.board().await;
    api.create_task(json!({ "columnId": cid, "title": "old", "completedAt": days_ago(90) }))
        .await;
    let http = export(&api, &account).await;
    let dir = tmp();
    let out = dir.path().join("export.json");
    s.cli(&[
        "export",
        "--account",
        &account,
        "--out",
        out.to_str().unwrap(),
    ])
    .await
    .success();
    let mut file: Value =
        serde_json::from_slice(&std::fs::read(&out).expect("--out file")).unwrap();
    assert!(file["now"].is_i64(), "{file}");
    file["now"] = http["now"].clone();
    assert_eq!(file, http);
}

#[tokio::test]
async fn the_fixture_survives_import_export_import_export() {
    let s = Server::start().await;
    let source = fixture();
    let (key_a, account_a) = s.issue_key(None).await;
    import_ok(&s, Path::new(FIXTURE), &account_a, &source).await;
    // Through the running server, so the very next read shows it.
    let first = export(&s.api_for(&key_a), &account_a).await;
    assert_same_but_volatile(&source, &first, "the fixture and its first export");

    let dir = tmp();
    let file = write_json(dir.path(), "first.json", &first);
    let (key_b, account_b) = s.issue_key(None).await;
    import_ok(&s, &file, &account_b, &first).await;
    let second = export(&s.api_for(&key_b), &account_b).await;
    assert_same_but_volatile(&first, &second, "the two exports");
    // The same ids live in both accounts, which stay apart.
    let a = s.api_for(&key_a);
    let p = str_of(&first["projects"][0]["id"]);
    a.patch(&format!("/projects/{p}"), json!({ "name": "Renamed in A" }))
        .await
        .expect_ok(200);
    assert_same_but_volatile(
        &second,
        &export(&s.api_for(&key_b), &account_b).await,
        "B after A's write",
    );
}

#[tokio::test]
async fn an_import_with_one_bad_card_writes_nothing() {
    let s = Server::start().await;
    let dir = tmp();
    let base = fixture();
    let last_project = base["projects"].as_array().unwrap().len() - 1;
    let bad: [(&str, Value); 3] = [
        ("deadline", json!("2025-02-30")),
        ("deadlineTime", json!("9:30")),
        ("unknownField", json!(1)),
    ];
    for (field, value) in bad {
        // The last card of the file, so a non-atomic import would have written the rest.
        let mut doc = base.clone();
        let columns = doc["projects"][last_project]["columns"]
            .as_array_mut()
            .unwrap();
        let tasks = columns.last_mut().unwrap()["tasks"].as_array_mut().unwrap();
        tasks.last_mut().unwrap()[field] = value;
        let file = write_json(dir.path(), "bad.json", &doc);
        let (key, account) = s.issue_key(None).await;
        let out = import(&s, &file, &account).await;
        assert!(
            !out.status.success(),
            "a bad {field} imported: {}",
            out.stdout
        );
        assert!(
            !out.stderr.trim().is_empty(),
            "no message on stderr for a bad {field}"
        );
        let api = s.api_for(&key);
        assert_eq!(
            api.projects("?completed=all").await,
            Vec::<Value>::new(),
            "{field}"
        );
        // The same account then takes the good file whole.
        import_ok(&s, Path::new(FIXTURE), &account, &base).await;
        assert_same_but_volatile(
            &base,
            &export(&api, &account).await,
            "after a refused import",
        );
    }
}

#[tokio::test]
async fn an_import_into_an_unknown_account_fails() {
    let s = Server::start().await;
    let out = import(&s, Path::new(FIXTURE), "a_doesNotExist").await;
    assert!(
        !out.status.success(),
        "imported into no account: {}",
        out.stdout
    );
    assert!(!out.stderr.trim().is_empty(), "no message on stderr");
    assert_eq!(
        s.api().projects("?completed=all").await,
        Vec::<Value>::new()
    );
    let out = s
        .cli(&["import", "/nonexistent/export.json", "--account", "a_x"])
        .await;
    assert!(!out.status.success(), "a missing file imported");
    let dir = tmp();
    let garbage = dir.path().join("garbage.json");
    std::fs::write(&garbage, "{\"version\": 1, \"projects\": [").unwrap();
    let (_, account) = s.issue_key(None).await;
    assert!(
        !import(&s, &garbage, &account).await.status.success(),
        "a cut-off file imported"
    );
}

#[tokio::test]
async fn an_import_meeting_an_id_in_use_with_other_content_writes_nothing() {
    let s = Server::start().await;
    let (key, account) = s.issue_key(None).await;
    let api = s.api_for(&key);
    // The file's last project, so a non-atomic import would have written the others first.
    let base = fixture();
    let taken = base["projects"].as_array().unwrap().last().unwrap()["id"].clone();
    api.create_project(json!({ "id": taken, "name": "Already here" }))
        .await;
    let before = api.account().await;
    let out = import(&s, Path::new(FIXTURE), &account).await;
    assert!(
        !out.status.success(),
        "imported over {taken}: {}",
        out.stdout
    );
    assert_eq!(
        api.account().await,
        before,
        "a refused import left records behind"
    );
}

#[tokio::test]
async fn an_import_through_the_server_nudges_sockets_and_reaches_the_change_feed() {
    let s = Server::start().await;
    let (key, account) = s.issue_key(None).await;
    let api = s.api_for(&key);
    let mut ws = open(&s, &api).await;
    let n = now_of(&changes(&api, "").await);
    let base = fixture();
    import_ok(&s, Path::new(FIXTURE), &account, &base).await;
    next_nudge(&mut ws, NUDGE_WAIT)
        .await
        .expect("no nudge for an import");
    let reply = changes(&api, &format!("?since={n}&completed=all")).await;
    let projects: Vec<Value> = base["projects"].as_array().unwrap().clone();
    let cards: usize = projects.iter().map(|p| tasks_of(p).len()).sum();
    assert_eq!(entries(&reply, "projects").len(), projects.len(), "{reply}");
    assert_eq!(entries(&reply, "cards").len(), cards);
    assert_eq!(reply["taskIds"].as_array().unwrap().len(), cards);
}

#[tokio::test]
async fn an_import_with_no_server_running_lands_in_the_store() {
    let mut s = Server::start().await;
    let (key, account) = s.issue_key(None).await;
    s.kill().await;
    import_ok(&s, Path::new(FIXTURE), &account, &fixture()).await;
    s.restart().await;
    let doc = export(&s.api_for(&key), &account).await;
    assert_same_but_volatile(&fixture(), &doc, "the fixture imported offline");
}

#[tokio::test]
async fn an_import_file_with_an_unknown_top_level_field_is_refused_naming_it() {
    let s = Server::start().await;
    let api = s.api();
    let before = api.account().await;
    let mut doc = fixture();
    doc["extra"] = json!({"anything": [1, 2, 3]});
    let r = api.post_text("/import", &doc.to_string()).await;
    let body = r.expect_field_error(422, "extra").clone();
    assert_eq!(body["code"], json!("unknown_field"));
    assert_eq!(body["accepted"], json!(["version", "now", "projects"]));
    // A file as wide as a body may be is refused at its first unknown key, as fast.
    let wide: String = (0..160_000)
        .map(|i| format!("\"k{i}\":0"))
        .collect::<Vec<_>>()
        .join(",");
    let r = api.post_text("/import", &format!("{{{wide}}}")).await;
    r.expect_field_error(422, "k0");
    assert_eq!(api.account().await, before, "nothing landed");
}
