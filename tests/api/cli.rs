//! The command line beside a running server: keys issue/list/revoke through its socket,
//! export, the folder lock, the data folder's modes, configuration by environment, and
//! keys never stored or logged in clear.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::*;

#[tokio::test]
async fn keys_issue_gives_a_working_key_at_once_for_a_new_or_given_account() {
    let s = Server::start().await;
    let (key, account) = s.issue_key(None).await;
    assert_ne!(key, s.key);
    let fresh = s.api_for(&key);
    assert!(
        fresh.projects("").await.is_empty(),
        "a new account starts empty"
    );
    let pid = fresh.new_project("Shared").await;

    let (second, same) = s.issue_key(Some(&account)).await;
    assert_eq!(same, account);
    assert_ne!(second, key);
    assert_eq!(
        s.api_for(&second).project(&pid).await["name"],
        json!("Shared")
    );
    // The first account does not see it.
    s.api()
        .get(&format!("/projects/{pid}"))
        .await
        .expect_error(404);
    assert!(s.api().projects("").await.is_empty());
}

/// The `keys list` records of an account.
async fn list_keys(s: &Server, account: &str) -> Vec<Value> {
    let out = s.cli(&["keys", "list", "--account", account]).await;
    out.success();
    out.json_lines()
}

#[tokio::test]
async fn keys_list_shows_records_without_the_key() {
    let s = Server::start().await;
    let (laptop, account) = issue_key(&s.data_dir(), None, Some("laptop")).await;
    let (phone, _) = issue_key(&s.data_dir(), Some(&account), Some("phone")).await;
    let out = s.cli(&["keys", "list", "--account", &account]).await;
    out.success();
    assert!(
        !out.stdout.contains(&laptop) && !out.stdout.contains(&phone),
        "keys list shows a key"
    );
    let records = out.json_lines();
    assert_eq!(records.len(), 2, "{}", out.stdout);
    for (label, key) in [("laptop", &laptop), ("phone", &phone)] {
        let record = records
            .iter()
            .find(|r| r["label"] == json!(label))
            .expect(label);
        assert_keys(
            record,
            &[
                "id",
                "label",
                "prefix",
                "createdAt",
                "lastUsedAt",
                "access",
                "expiresAt",
            ],
        );
        assert!(str_of(&record["id"]).starts_with("y_"), "{record}");
        assert_eq!(record["prefix"], json!(&key[..8]));
        let created = record["createdAt"].as_i64().expect("createdAt ms");
        assert!((created - now_ms()).abs() < 60_000);
        assert!(record["lastUsedAt"].is_null() || record["lastUsedAt"].is_i64());
    }
}

#[tokio::test]
async fn keys_revoke_stops_a_key_at_once() {
    let s = Server::start().await;
    let (keep, account) = issue_key(&s.data_dir(), None, Some("keep")).await;
    let (doomed, _) = issue_key(&s.data_dir(), Some(&account), Some("doomed")).await;
    let pid = s.api_for(&doomed).new_project("Made by doomed").await;

    let id = list_keys(&s, &account)
        .await
        .into_iter()
        .find(|r| r["label"] == json!("doomed"))
        .unwrap()["id"]
        .clone();
    let out = s.cli(&["keys", "revoke", id.as_str().unwrap()]).await;
    out.success();
    let reply = out.json_lines().pop().expect("revoke printed nothing");
    assert_eq!(reply, json!({ "ok": true, "id": id }));

    s.api_for(&doomed).get("/projects").await.expect_error(401);
    s.api_for(&doomed)
        .post("/projects", json!({ "name": "x" }))
        .await
        .expect_error(401);
    assert_eq!(
        s.api_for(&keep).project(&pid).await["name"],
        json!("Made by doomed")
    );
    let left: Vec<Value> = list_keys(&s, &account)
        .await
        .iter()
        .map(|r| r["id"].clone())
        .collect();
    assert!(!left.contains(&id), "a revoked key is still listed");
    assert_eq!(left.len(), 1);
}

#[tokio::test]
async fn a_second_serve_on_the_same_folder_exits_non_zero_with_a_message() {
    let s = Server::start().await;
    let mut cmd = command();
    cmd.args(["serve", "--addr", "127.0.0.1:0", "--data"])
        .arg(s.data_dir());
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let out = tokio::time::timeout(Duration::from_secs(20), cmd.output())
        .await
        .expect("the second serve is still running after 20 s")
        .expect("run second serve");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the second serve succeeded");
    assert!(
        !stdout.contains("listening:"),
        "the second serve listened: {stdout}"
    );
    assert!(
        !stdout.contains("key:"),
        "the second serve issued a key: {stdout}"
    );
    assert!(!stderr.trim().is_empty(), "no message on stderr");
    // The first server is unharmed.
    s.api()
        .post("/projects", json!({ "name": "Still here" }))
        .await
        .expect_ok(201);
}

/// Every path under `dir`, folders included.
fn walk(dir: &Path, into: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read data folder") {
        let path = entry.expect("entry").path();
        into.push(path.clone());
        if path.is_dir() {
            walk(&path, into);
        }
    }
}

#[tokio::test]
async fn the_data_folder_is_0700_and_its_files_are_private() {
    let s = Server::start().await;
    let (_, cid) = s.api().board().await;
    s.api().new_task(&cid, "Something to store").await;
    s.issue_key(None).await;

    let mode = std::fs::metadata(s.data_dir())
        .expect("data folder")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700, "data folder mode {:o}", mode & 0o777);
    let mut paths = Vec::new();
    walk(&s.data_dir(), &mut paths);
    assert!(!paths.is_empty());
    for path in paths {
        let mode = std::fs::symlink_metadata(&path)
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(
            mode & 0o077,
            0,
            "{} is open to others: {:o}",
            path.display(),
            mode & 0o777
        );
    }
}

#[tokio::test]
async fn keys_are_neither_stored_nor_logged_in_clear() {
    let s = Server::start().await;
    let (second, _) = s.issue_key(None).await;
    s.api().new_project("Something").await;
    s.api_for(&second).new_project("Else").await;
    s.with_header("Bearer wb_not-a-real-key-but-still-secret")
        .get("/projects")
        .await;

    let mut paths = Vec::new();
    walk(&s.data_dir(), &mut paths);
    for path in paths.iter().filter(|p| p.is_file()) {
        let bytes = std::fs::read(path).unwrap();
        for key in [&s.key, &second] {
            let secret = &key.as_bytes()[3..];
            assert!(
                !bytes.windows(secret.len()).any(|w| w == secret),
                "{} holds a key in clear",
                path.display()
            );
        }
    }
    let log = s.log();
    assert!(
        !log.contains(&s.key[3..]) && !log.contains(&second[3..]),
        "a key reached the log"
    );
    assert!(
        !log.contains("not-a-real-key-but-still-secret"),
        "a presented key reached the log"
    );
}

#[tokio::test]
async fn a_key_issued_before_the_first_serve_means_serve_prints_none() {
    let root = empty_root();
    let data = root.path().join("data");
    let (key, _) = issue_key(&data, None, None).await;
    let mode = std::fs::metadata(&data)
        .expect("the CLI creates the folder")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700);

    let s = Server::start_existing(root, key.clone()).await;
    s.api().get("/projects").await.expect(200);
    s.api().new_project("Works").await;
}

#[tokio::test]
async fn data_addr_and_limits_can_be_set_by_environment() {
    let s = Server::start_with_env(&[("WORKBOARD_LIMIT_PROJECTS_PER_ACCOUNT", "2")]).await;
    assert!(s.data_dir().is_dir(), "WORKBOARD_DATA was not used");
    let api = s.api();
    let doc = api.raw().get("/api/v1").await;
    assert_eq!(doc.expect(200)["limits"]["projects-per-account"], json!(2));
    api.new_project("One").await;
    api.new_project("Two").await;
    api.post("/projects", json!({ "name": "Three" }))
        .await
        .expect_error(422);
}

#[tokio::test]
async fn export_prints_the_whole_account_with_every_finished_card() {
    let s = Server::start().await;
    let (key, account) = s.issue_key(None).await;
    let api = s.api_for(&key);
    let (_, cid) = api.board().await;
    api.new_task(&cid, "Open").await;
    api.create_task(json!({ "columnId": cid, "title": "Old", "completedAt": days_ago(90) }))
        .await;
    api.new_project("Second").await;
    s.api().new_project("Another account").await;
    let expected = api.account().await;

    let out = s.cli(&["export", "--account", &account]).await;
    out.success();
    let mut doc: Value = serde_json::from_str(out.stdout.trim()).expect("export is JSON");
    assert!(doc["now"].is_i64(), "export without now");
    doc.as_object_mut().unwrap().remove("now");
    assert_eq!(
        doc, expected,
        "export differs from GET /projects?completed=all"
    );

    let file = s.root().join("export.json");
    let out = s
        .cli(&[
            "export",
            "--account",
            &account,
            "--out",
            file.to_str().unwrap(),
        ])
        .await;
    out.success();
    let text = std::fs::read_to_string(&file).expect("export file written");
    let mut doc: Value = serde_json::from_str(&text).expect("export file is JSON");
    doc.as_object_mut().unwrap().remove("now");
    assert_eq!(doc, expected);
}

/// Every path under `root` with its mode, sorted.
fn listing(root: &Path) -> Vec<(String, u32)> {
    let mut all = Vec::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(dir) = todo.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                todo.push(path.clone());
            }
            all.push((
                path.to_string_lossy().into_owned(),
                meta.permissions().mode(),
            ));
        }
    }
    all.sort();
    all
}

#[tokio::test]
async fn a_command_refused_for_want_of_a_store_leaves_the_folder_as_it_was() {
    let root = empty_root();
    let data = root.path().join("data");
    let path = |name: &str| root.path().join(name).to_string_lossy().into_owned();
    let (rows, backup, import) = (path("rows.csv"), path("backup"), path("import.json"));
    std::fs::write(&import, r#"{"projects": []}"#).unwrap();
    let commands: Vec<Vec<&str>> = vec![
        vec!["export", "--account", "a_x"],
        vec![
            "export",
            "--account",
            "a_x",
            "--format",
            "csv",
            "--out",
            &rows,
        ],
        vec!["export", "--account", "a_x", "--format", "ndjson"],
        vec!["keys", "list", "--account", "a_x"],
        vec!["keys", "revoke", "y_x"],
        vec!["backup", "--out", &backup],
        vec!["import", &import, "--account", "a_x"],
    ];
    let refused = |args: &[&str], out: &CliOutput| {
        assert!(!out.status.success(), "{args:?} succeeded: {}", out.stdout);
        assert!(
            out.stderr.contains("holds no store"),
            "{args:?}: {}",
            out.stderr
        );
    };
    // A missing folder stays missing.
    for args in &commands {
        let before = listing(root.path());
        let out = cli(&data, args).await;
        refused(args, &out);
        assert!(!data.exists(), "{args:?} made {}", data.display());
        assert_eq!(listing(root.path()), before, "{args:?}");
    }
    // An empty folder stays empty, its mode untouched (even one open to others).
    std::fs::create_dir(&data).unwrap();
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).unwrap();
    for args in &commands {
        let before = listing(root.path());
        let out = cli(&data, args).await;
        refused(args, &out);
        assert_eq!(listing(root.path()), before, "{args:?}");
    }
    assert_eq!(std::fs::read_dir(&data).unwrap().count(), 0);
}
