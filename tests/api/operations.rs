//! Operations (issue 19): a backup restores whole, with its pepper; a store with keys never
//! starts with a missing or different pepper; the pepper and the data folder are kept
//! private; only `serve` and `keys issue` make a store; offline commands apply the limits
//! as `serve` does; the control socket caps its lines; the CLI says what happened when the
//! server stops mid-import.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::json;

use crate::harness::*;

/// `workboard backup --out PATH`, answering the backup folder.
async fn backup(s: &Server, out: &Path) {
    let done = s
        .cli(&["backup", "--out", out.to_str().expect("utf-8 path")])
        .await;
    done.success();
    assert!(
        done.stderr.contains("backed up: ") && done.stderr.contains(" records, "),
        "the summary line: {}",
        done.stderr
    );
}

#[tokio::test]
async fn a_restored_backup_serves_every_key_record_bin_entry_and_undo_step() {
    let s = Server::start().await;
    let api = s.api();
    let (second_key, _) = s.issue_key(Some(&account_of(&s).await)).await;
    let (_, cid) = api.board().await;
    let kept = str_of(&api.new_task(&cid, "Kept").await["id"]);
    let binned = str_of(&api.new_task(&cid, "Binned").await["id"]);
    api.delete(&format!("/tasks/{binned}")).await.expect_ok(200);
    api.patch(&format!("/tasks/{kept}"), json!({"title": "Renamed"}))
        .await
        .expect_ok(200);
    let before = api.account().await;
    let bin_before = api.get("/bin").await.expect_ok(200)["entries"].clone();

    let out = tempfile::tempdir().expect("temp dir");
    let folder = out.path().join("backup");
    backup(&s, &folder).await;
    for file in ["workboard.db", "pepper", "manifest.json"] {
        assert!(folder.join(file).is_file(), "the backup lacks {file}");
    }
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(folder.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["format"], json!(1));
    let engine = if on_postgres() {
        "postgresql"
    } else {
        "sqlite"
    };
    assert_eq!(manifest["engine"], json!(engine));
    assert_eq!(
        std::fs::metadata(folder.join("pepper"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o600
    );
    // A backup never goes over another.
    let again = s.cli(&["backup", "--out", folder.to_str().unwrap()]).await;
    assert!(
        !again.status.success(),
        "a second backup into the same folder"
    );

    let root = empty_root();
    let data = root.path().join("data");
    let restored = cli(&data, &["restore", folder.to_str().unwrap()]).await;
    restored.success();
    assert!(
        restored.stderr.contains("restored: "),
        "{}",
        restored.stderr
    );
    let copy = Server::start_existing(root, s.key.clone()).await;
    let api2 = copy.api();
    assert_eq!(api2.account().await, before, "every record");
    copy.api_for(&second_key).get("/projects").await.expect(200);
    assert_eq!(
        api2.get("/bin").await.expect_ok(200)["entries"],
        bin_before,
        "every bin entry"
    );
    // The undo step of the rename stands: the first key undoes it on the copy.
    let undone = api2.post("/undo", json!({})).await;
    assert_eq!(undone.expect_ok(200)["undone"], json!(true));
    assert_eq!(api2.task(&kept).await["title"], json!("Kept"));
}

#[tokio::test]
async fn restore_refuses_a_data_folder_that_holds_a_store() {
    let s = Server::start().await;
    let out = tempfile::tempdir().expect("temp dir");
    let folder = out.path().join("backup");
    backup(&s, &folder).await;
    let mut other = Server::start().await;
    let refused = other.cli(&["restore", folder.to_str().unwrap()]).await;
    assert!(!refused.status.success());
    assert!(refused.stderr.contains("stop it"), "{}", refused.stderr);
    other.kill().await;
    let refused = other.cli(&["restore", folder.to_str().unwrap()]).await;
    assert!(!refused.status.success());
    assert!(
        refused.stderr.contains("already holds a store"),
        "{}",
        refused.stderr
    );
    // Its own key still works: nothing was overwritten.
    other.restart().await;
    other.api().get("/projects").await.expect(200);
}

/// `serve` on `data`, expected to refuse to start: its stderr.
async fn refused_start(data: &Path) -> String {
    let out = cli(data, &["serve", "--addr", "127.0.0.1:0"]).await;
    assert!(
        !out.status.success(),
        "serve started: {}\n{}",
        out.stdout,
        out.stderr
    );
    out.stderr
}

#[tokio::test]
async fn a_store_with_keys_never_starts_with_a_missing_or_different_pepper() {
    let mut s = Server::start().await;
    s.kill().await;
    let data = s.data_dir();
    let pepper = data.join("pepper");
    let original = std::fs::read(&pepper).unwrap();

    std::fs::remove_file(&pepper).unwrap();
    let said = refused_start(&data).await;
    assert!(
        said.contains(pepper.to_str().unwrap()),
        "names the file: {said}"
    );
    assert!(
        !pepper.exists(),
        "no new pepper is made for a store with keys"
    );
    for command in [
        vec!["keys", "list", "--account", "a_x"],
        vec!["export", "--account", "a_x"],
        vec!["keys", "issue"],
    ] {
        let out = cli(&data, &command).await;
        assert!(!out.status.success(), "{command:?} ran without the pepper");
        assert!(out.stderr.contains("pepper"), "{command:?}: {}", out.stderr);
    }

    std::fs::write(&pepper, [7u8; 32]).unwrap();
    std::fs::set_permissions(&pepper, std::fs::Permissions::from_mode(0o600)).unwrap();
    let said = refused_start(&data).await;
    assert!(
        said.contains(pepper.to_str().unwrap()) && said.contains("not the one"),
        "{said}"
    );

    std::fs::write(&pepper, &original).unwrap();
    s.restart().await;
    s.api().get("/projects").await.expect(200);
}

#[tokio::test]
async fn a_pepper_or_data_folder_open_to_others_is_tightened_at_start() {
    let mut s = Server::start().await;
    s.kill().await;
    let data = s.data_dir();
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(data.join("pepper"), std::fs::Permissions::from_mode(0o644)).unwrap();
    s.restart().await;
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&data), 0o700);
    assert_eq!(mode(&data.join("pepper")), 0o600);
    s.api().get("/projects").await.expect(200);
}

#[tokio::test]
async fn only_serve_and_keys_issue_make_a_store() {
    let root = empty_root();
    let data = root.path().join("data");
    let export_file = root.path().join("export.json");
    std::fs::write(&export_file, r#"{"version":1,"projects":[]}"#).unwrap();
    let out_folder = root.path().join("backup");
    let cases: Vec<Vec<&str>> = vec![
        vec!["export", "--account", "a_x"],
        vec!["import", export_file.to_str().unwrap(), "--account", "a_x"],
        vec!["backup", "--out", out_folder.to_str().unwrap()],
        vec!["keys", "list", "--account", "a_x"],
        vec!["keys", "revoke", "y_x"],
    ];
    for args in &cases {
        let out = cli(&data, args).await;
        assert!(!out.status.success(), "{args:?} succeeded on no store");
        assert!(
            out.stderr.contains("holds no store"),
            "{args:?}: {}",
            out.stderr
        );
        assert!(!crate::stored::exists(&data), "{args:?} made a store");
    }
    // Nor in a folder that exists but holds nothing.
    std::fs::create_dir_all(&data).unwrap();
    let out = cli(&data, &["keys", "list", "--account", "a_x"]).await;
    assert!(out.stderr.contains("holds no store"), "{}", out.stderr);
    assert!(!crate::stored::exists(&data));
    // keys issue makes one.
    issue_key(&data, None, None).await;
    assert!(crate::stored::exists(&data));
}

#[tokio::test]
async fn offline_commands_apply_the_limits_as_serve_does() {
    let mut s = Server::start().await;
    let account = account_of(&s).await;
    s.kill().await;
    let data = s.data_dir();
    let refused = cli(
        &data,
        &[
            "keys",
            "issue",
            "--account",
            &account,
            "--limit-keys-per-account",
            "1",
        ],
    )
    .await;
    assert!(!refused.status.success(), "{}", refused.stdout);
    assert!(refused.stderr.contains("at most 1"), "{}", refused.stderr);
    // The environment variable does the same.
    let mut cmd = command();
    cmd.args(["keys", "issue", "--account", &account, "--data"])
        .arg(&data)
        .env("WORKBOARD_LIMIT_KEYS_PER_ACCOUNT", "1");
    let out = cmd.output().await.expect("run the CLI");
    assert!(!out.status.success());
    let export = root_file(&s, "big.json");
    std::fs::write(
        &export,
        json!({"version": 1, "projects": [{"name": "N".repeat(30)}]}).to_string(),
    )
    .unwrap();
    let full = cli(
        &data,
        &[
            "import",
            export.to_str().unwrap(),
            "--account",
            &account,
            "--limit-storage-bytes",
            "10",
        ],
    )
    .await;
    assert!(!full.status.success());
    assert!(full.stderr.contains("storage"), "{}", full.stderr);
}

fn root_file(s: &Server, name: &str) -> std::path::PathBuf {
    s.root().join(name)
}

/// The account of the server's first key: its first start prints `account: a_...` on
/// stderr, which the harness keeps in the log.
async fn account_of(s: &Server) -> String {
    account_from_log(s).unwrap_or_else(|| panic!("no account in the log"))
}

fn account_from_log(s: &Server) -> Option<String> {
    let log = s.log();
    let at = log.find("account: ")?;
    Some(
        log[at + "account: ".len()..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
            .collect(),
    )
}

#[tokio::test]
async fn the_control_socket_refuses_an_over_long_line() {
    use tokio::io::AsyncWriteExt;
    let s = Server::start_with(&["--limit-body-bytes", "1024"]).await;
    let mut socket = tokio::net::UnixStream::connect(s.data_dir().join("control.sock"))
        .await
        .expect("the control socket");
    // Past the cap (the body limit and 1 MiB): refused, skipped rather than buffered, and
    // the connection goes on taking requests.
    let chunk = vec![b'x'; 64 * 1024];
    for _ in 0..20 {
        socket
            .write_all(&chunk)
            .await
            .expect("the socket takes the line");
    }
    socket.write_all(b"\n").await.unwrap();
    let mut reader = tokio::io::BufReader::new(socket);
    let mut reply = String::new();
    tokio::time::timeout(
        std::time::Duration::from_secs(10),
        tokio::io::AsyncBufReadExt::read_line(&mut reader, &mut reply),
    )
    .await
    .expect("an answer")
    .expect("a line");
    assert!(reply.contains("longer than"), "reply: {reply:.200}");
    let mut socket = reader.into_inner();
    socket
        .write_all(b"{\"op\":\"list-keys\",\"account\":\"a_none\"}\n")
        .await
        .unwrap();
    let mut reader = tokio::io::BufReader::new(socket);
    let mut reply = String::new();
    tokio::io::AsyncBufReadExt::read_line(&mut reader, &mut reply)
        .await
        .unwrap();
    assert!(
        reply.contains("keys"),
        "the next request is answered: {reply}"
    );
    s.api().get("/projects").await.expect(200);
}

#[tokio::test]
async fn an_import_the_server_never_answers_says_what_landed() {
    use std::os::unix::net::UnixListener;
    // A folder that holds a store, "served" by a process that takes the import and stops.
    let mut s = Server::start().await;
    s.kill().await;
    let data = s.data_dir();
    let lock = std::fs::File::options()
        .write(true)
        .open(data.join("serve.lock"))
        .unwrap();
    lock.try_lock().expect("the lock");
    let _ = std::fs::remove_file(data.join("control.sock"));
    let listener = UnixListener::bind(data.join("control.sock")).unwrap();
    let server = std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(&mut conn), &mut line).ok();
        drop(conn);
    });
    let file = s.root().join("export.json");
    std::fs::write(&file, r#"{"version":1,"projects":[]}"#).unwrap();
    let out = cli(
        &data,
        &["import", file.to_str().unwrap(), "--account", "a_x"],
    )
    .await;
    server.join().unwrap();
    assert!(!out.status.success());
    assert!(
        out.stderr.contains("stopped before it answered") && out.stderr.contains("all or nothing"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("EOF"), "{}", out.stderr);
}
