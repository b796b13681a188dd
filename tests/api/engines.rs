//! The two engines side by side (issue 21): `workboard copy` moves a whole store from one
//! engine to the other and back, keys, undo steps and the bin included; a target that holds
//! data is refused; a store whose schema is newer than the build is refused on either engine;
//! nodes racing onto one empty PostgreSQL database print one first key between them.
//!
//! These tests need a PostgreSQL server on either pass (`WORKBOARD_TEST_DATABASE`; the test
//! command starts one). On the SQLite pass the copy goes SQLite -> PostgreSQL -> SQLite; on
//! the PostgreSQL pass PostgreSQL -> SQLite -> PostgreSQL.

use std::process::Stdio;
use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use crate::harness::*;

/// What a filled account looks like from outside: its export, bin, and the key's reads.
struct Account {
    key: String,
    export: Value,
    bin: Value,
}

/// An account's export without its `now`, the moment it was made.
async fn export_of(api: &Api) -> Value {
    let mut export = api.get("/export").await.expect(200).clone();
    export
        .as_object_mut()
        .expect("an export is an object")
        .remove("now");
    export
}

/// Fills the server's first account and a second one with cards, a deletion in the bin and
/// an undo step, and reads each back.
async fn fill(s: &Server) -> Vec<Account> {
    let (second_key, _) = s.issue_key(None).await;
    let mut accounts = Vec::new();
    for key in [s.key.clone(), second_key] {
        let api = s.api_for(&key);
        let (project, column) = api.board().await;
        for n in 0..5 {
            api.new_task(&column, &format!("card {n}")).await;
        }
        let doomed = api.new_task(&column, "to the bin").await;
        api.delete(&format!("/tasks/{}", str_of(&doomed["id"])))
            .await
            .expect_ok(200);
        api.patch(&format!("/projects/{project}"), json!({"name": "Renamed"}))
            .await
            .expect_ok(200);
        accounts.push(Account {
            export: export_of(&api).await,
            bin: api.get("/bin").await.expect_ok(200).clone(),
            key,
        });
    }
    accounts
}

/// Checks a server holds every account as it was: the same export and bin under the same
/// key, and the latest change undoes.
async fn expect_same(s: &Server, accounts: &[Account], what: &str) {
    for account in accounts {
        let api = s.api_for(&account.key);
        assert_eq!(
            export_of(&api).await,
            account.export,
            "{what}: the export differs"
        );
        assert_eq!(
            api.get("/bin").await.expect_ok(200),
            &account.bin,
            "{what}: the bin differs"
        );
    }
}

/// `workboard copy --from FROM --to TO`, with extra flags.
async fn copy(from: &str, to: &str) -> CliOutput {
    workboard(&["copy", "--from", from, "--to", to]).await
}

/// The pepper flag a node on `root` needs to use the pepper of `source`'s data folder.
fn pepper_of(source: &Server) -> String {
    source
        .data_dir()
        .join("pepper")
        .to_string_lossy()
        .into_owned()
}

#[tokio::test]
async fn a_copy_to_the_other_engine_and_back_serves_the_same_accounts_keys_bin_and_undo() {
    let this = Engine::of_this_run();
    let mut source = Server::start().await;
    let accounts = fill(&source).await;
    source.kill().await;
    let pepper = pepper_of(&source);

    let there = root_on(this.other());
    let out = copy(&store_of(source.root()), &store_of(there.path())).await;
    out.success();
    assert!(
        out.stderr.contains("copied"),
        "progress and a summary go to stderr: {}",
        out.stderr
    );
    let back = root_on(this);
    copy(&store_of(there.path()), &store_of(back.path()))
        .await
        .success();

    let (across, printed) = Server::start_on(there, &["--pepper-file", &pepper]).await;
    assert_eq!(printed, None, "a copied store holds accounts: no first key");
    expect_same(&across, &accounts, "on the other engine").await;

    let (home, printed) = Server::start_on(back, &["--pepper-file", &pepper]).await;
    assert_eq!(printed, None, "a copied store holds accounts: no first key");
    expect_same(&home, &accounts, "back home").await;
    for account in &accounts {
        let api = home.api_for(&account.key);
        // The last step was the rename; undo puts the name back.
        api.send(Method::POST, "/undo", None).await.expect_ok(200);
        let projects = api.projects("").await;
        assert_eq!(projects[0]["name"], json!("Board"), "{projects:?}");
        // The bin entry restores.
        let entry = str_of(&account.bin["entries"][0]["id"]);
        api.send(Method::POST, &format!("/bin/{entry}/restore"), None)
            .await
            .expect_ok(200);
    }
}

#[tokio::test]
async fn a_copy_into_a_store_that_holds_data_is_refused_and_leaves_it_alone() {
    let this = Engine::of_this_run();
    let mut source = Server::start().await;
    source
        .api()
        .post("/projects", json!({"name": "Source"}))
        .await
        .expect_ok(201);
    source.kill().await;
    for engine in [this, this.other()] {
        let target_root = root_on(engine);
        let (mut target, _) = Server::start_on(target_root, &[]).await;
        let before = export_of(&target.api()).await;
        target.kill().await;
        let out = copy(&store_of(source.root()), &store_of(target.root())).await;
        assert!(
            !out.status.success(),
            "{engine:?}: copy into a full store ran"
        );
        assert!(
            out.stderr.contains("already holds data"),
            "{engine:?}: {}",
            out.stderr
        );
        target.restart().await;
        assert_eq!(
            export_of(&target.api()).await,
            before,
            "{engine:?}: the refused copy changed the target"
        );
    }
}

#[tokio::test]
async fn a_copy_from_a_folder_without_a_store_is_refused() {
    let nothing = root_on(Engine::Sqlite);
    let there = root_on(Engine::Postgres);
    let out = copy(&store_of(nothing.path()), &store_of(there.path())).await;
    assert!(!out.status.success(), "{}", out.stdout);
    assert!(out.stderr.contains("holds no store"), "{}", out.stderr);
}

/// Marks the store of `root` as made by a newer build (schema version 99).
fn from_the_future(root: &std::path::Path) {
    match database_of(&root.join("data")) {
        Some(url) => {
            std::thread::spawn(move || {
                let mut client = postgres::Client::connect(&url, postgres::NoTls)
                    .expect("the test's database");
                client
                    .batch_execute(
                        "UPDATE meta SET value = convert_to('99', 'UTF8') WHERE name = 'schema-version'",
                    )
                    .expect("bump the schema version");
            })
            .join()
            .expect("the bump ran");
        }
        None => {
            let db = rusqlite::Connection::open(root.join("data").join("workboard.db"))
                .expect("open the store");
            db.execute(
                "UPDATE meta SET value = CAST('99' AS BLOB) WHERE name = 'schema-version'",
                [],
            )
            .expect("bump the schema version");
        }
    }
}

#[tokio::test]
async fn a_store_with_a_newer_schema_is_refused_by_every_command() {
    for engine in [Engine::Sqlite, Engine::Postgres] {
        let (mut s, _) = Server::start_on(root_on(engine), &[]).await;
        s.kill().await;
        from_the_future(s.root());
        let mut serve = command();
        serve
            .args(["serve", "--addr", "127.0.0.1:0", "--data"])
            .arg(s.data_dir());
        if let Some(url) = database_of(&s.data_dir()) {
            serve.args(["--database", &url]);
        }
        serve
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let out = tokio::time::timeout(Duration::from_secs(20), serve.output())
            .await
            .expect("serve on a newer store is still running after 20 s")
            .expect("run serve");
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(!out.status.success(), "{engine:?}: serve started: {stdout}");
        assert!(!stdout.contains("listening:"), "{engine:?}: {stdout}");
        assert!(
            stderr.contains("newer than this build knows"),
            "{engine:?}: {stderr}"
        );
        let listed = cli(&s.data_dir(), &["keys", "list", "--account", "a_any"]).await;
        assert!(!listed.status.success(), "{engine:?}: keys list ran");
        assert!(
            listed.stderr.contains("newer than this build knows"),
            "{engine:?}: {}",
            listed.stderr
        );
    }
}

#[tokio::test]
async fn nodes_starting_together_on_an_empty_database_print_one_first_key() {
    let database = fresh_database();
    let roots: Vec<_> = (0..3).map(|_| root_on(Engine::Sqlite)).collect();
    let pepper = roots[0].path().join("shared-pepper");
    std::fs::write(&pepper, [7u8; 32]).expect("write a pepper");
    let pepper = pepper.to_string_lossy().into_owned();
    for root in &roots {
        std::fs::write(root.path().join("database-url"), &database).expect("name the database");
    }
    let starts = roots.into_iter().map(|root| {
        let pepper = pepper.clone();
        tokio::spawn(async move { Server::start_on(root, &["--pepper-file", &pepper]).await })
    });
    let mut nodes = Vec::new();
    for start in starts {
        nodes.push(start.await.expect("a node started"));
    }
    let keys: Vec<String> = nodes.iter().filter_map(|(_, k)| k.clone()).collect();
    assert_eq!(keys.len(), 1, "first keys printed: {keys:?}");
    for (node, _) in &nodes {
        node.api_for(&keys[0]).get("/projects").await.expect(200);
    }
}
