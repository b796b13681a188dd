//! Online backup (issue 7, Faults; issue 19, "A backup restores whole"): `workboard backup
//! --out PATH` while the server runs and writers write gives a backup folder holding a sound
//! store and the pepper, and `workboard restore PATH --data DIR` makes a data folder that
//! serves the same account with the same key.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::json;
use tempfile::TempDir;
use tokio::sync::watch;
use tokio::task::JoinSet;

use crate::crash::integrity;
use crate::harness::*;

const FLAGS: &[&str] = &[
    "--limit-writes-per-day",
    "1000000",
    "--limit-reads-per-day",
    "1000000",
];

/// `workboard backup --out PATH` against the server's folder; asserts success and answers
/// the backup's store file.
async fn backup(s: &Server, out: &Path) -> std::path::PathBuf {
    let out_arg = out.to_str().expect("utf-8 path");
    let done = s.cli(&["backup", "--out", out_arg]).await;
    done.success();
    let lines = done.json_lines();
    assert_eq!(
        lines.last().map(|l| l["ok"].clone()),
        Some(json!(true)),
        "{}",
        done.stdout
    );
    let store = out.join("workboard.db");
    assert!(
        store.is_file() && out.join("pepper").is_file(),
        "the backup folder {} lacks its store or its pepper",
        out.display()
    );
    store
}

/// A data folder made by `workboard restore` from the backup folder `backup`.
async fn restored_folder(backup: &Path) -> TempDir {
    let root = empty_root();
    let data = root.path().join("data");
    let backup_arg = backup.to_str().expect("utf-8 path");
    cli(&data, &["restore", backup_arg]).await.success();
    root
}

/// Every card id of a whole-account read.
fn card_ids(doc: &serde_json::Value) -> Vec<String> {
    let mut all: Vec<String> = doc["projects"]
        .as_array()
        .expect("projects")
        .iter()
        .flat_map(task_ids)
        .collect();
    all.sort();
    all
}

#[tokio::test]
async fn a_backup_taken_under_writes_is_sound_and_a_restored_copy_serves_the_same_account() {
    let s = Server::start_with(FLAGS).await;
    let api = s.api();
    let (_, cid) = api.board().await;
    let stop = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(Mutex::new(Vec::<String>::new()));
    let acked = Arc::new(Mutex::new(Vec::<String>::new()));
    let progress = Arc::new(watch::Sender::new(0usize));
    let mut writers = JoinSet::new();
    for w in 0..4 {
        let (api, cid) = (api.clone(), cid.clone());
        let (stop, sent, acked) = (stop.clone(), sent.clone(), acked.clone());
        let progress = progress.clone();
        writers.spawn(async move {
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                n += 1;
                let id = format!("t_bk{w}n{n}");
                sent.lock().push(id.clone());
                let body = json!({ "id": id, "columnId": cid, "title": format!("W{w} {n}"), "description": "x".repeat(2000) });
                api.post("/tasks", body).await.expect_ok(201);
                acked.lock().push(id);
                progress.send_modify(|n| *n += 1);
            }
        });
    }
    // Let the writers get going, so the backup runs among their commits.
    let mut writing = progress.subscribe();
    tokio::time::timeout(Duration::from_secs(10), writing.wait_for(|n| *n >= 40))
        .await
        .expect("the writers are not writing")
        .expect("the writers' progress");
    let out = tempfile::tempdir().expect("temp dir");
    let during_folder = out.path().join("during");
    let acked_before: Vec<String> = acked.lock().clone();
    let during = backup(&s, &during_folder).await;
    let acked_meanwhile = acked.lock().len();
    stop.store(true, Ordering::Relaxed);
    while let Some(joined) = writers.join_next().await {
        joined.expect("a writer failed");
    }
    let sent: Vec<String> = sent.lock().clone();
    assert!(
        acked_meanwhile > acked_before.len(),
        "no write landed while the backup ran; the test did not exercise an online backup"
    );

    assert_eq!(
        integrity(&during),
        "ok",
        "integrity_check of the backup taken under writes"
    );
    let copy = Server::start_existing(restored_folder(&during_folder).await, s.key.clone()).await;
    let doc = copy
        .api()
        .get("/projects?completed=all")
        .await
        .expect(200)
        .clone();
    let in_copy = card_ids(&doc);
    for id in &acked_before {
        assert!(
            in_copy.binary_search(id).is_ok(),
            "{id} was acknowledged before the backup began, yet the backup lacks it"
        );
    }
    for id in &in_copy {
        assert!(
            sent.contains(id),
            "the backup holds a card nobody wrote: {id}"
        );
    }
    // Each card in the copy is whole, as written.
    let last = acked_before.last().expect("some cards");
    let card = copy.api().task(last).await;
    assert_eq!(card["description"], json!("x".repeat(2000)));
    drop(copy);

    // The final stretch: nothing is written, so the copy must read exactly as the original.
    let before = api.account().await;
    let keys_before = api.get("/keys").await.expect_ok(200)["keys"].clone();
    let quiet_folder = out.path().join("quiet");
    let quiet = backup(&s, &quiet_folder).await;
    assert_eq!(
        integrity(&quiet),
        "ok",
        "integrity_check of the quiet backup"
    );
    let copy = Server::start_existing(restored_folder(&quiet_folder).await, s.key.clone()).await;
    let restored = copy.api();
    assert_eq!(
        restored.account().await,
        before,
        "the restored copy reads differently"
    );
    let mut keys = restored.get("/keys").await.expect_ok(200)["keys"].clone();
    let mut keys_was = keys_before.clone();
    // `lastUsedAt` moves with every request; the records are otherwise the same.
    for list in [&mut keys, &mut keys_was] {
        for k in list.as_array_mut().expect("keys") {
            k.as_object_mut().unwrap().remove("lastUsedAt");
        }
    }
    assert_eq!(keys, keys_was, "the restored copy holds other keys");
    // The original goes on independently of the copy.
    api.new_task(&cid, "After the backup").await;
    assert_eq!(card_ids(&restored.account().await), card_ids(&before));
}

#[tokio::test]
async fn a_backup_without_a_running_server_is_sound_too() {
    let mut s = Server::start().await;
    let api = s.api();
    let (_, cid) = api.board().await;
    api.new_task(&cid, "Kept").await;
    let before = api.account().await;
    s.kill().await;
    let out = tempfile::tempdir().expect("temp dir");
    let folder = out.path().join("offline");
    let file = backup(&s, &folder).await;
    assert_eq!(integrity(&file), "ok");
    // The manifest counts the records the copy holds: the project, its list and the card.
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(folder.join("manifest.json")).expect("manifest"))
            .expect("the manifest is JSON");
    assert_eq!(manifest["records"], json!(3), "{manifest}");
    let copy = Server::start_existing(restored_folder(&folder).await, s.key.clone()).await;
    assert_eq!(copy.api().account().await, before);
}
