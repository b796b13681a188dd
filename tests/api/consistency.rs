//! Read-your-writes, stamps and `rev` under concurrent writes.

use serde_json::{Value, json};
use tokio::task::JoinSet;

use crate::harness::*;

#[tokio::test]
async fn a_write_is_visible_in_the_very_next_read_from_any_key_of_the_account() {
    let s = Server::start().await;
    let (writer_key, account) = s.issue_key(None).await;
    let (reader_key, _) = s.issue_key(Some(&account)).await;
    let writer = s.api_for(&writer_key);
    let reader = s.api_for(&reader_key);

    for i in 0..15 {
        let name = format!("Project {i}");
        let pid = writer.new_project(&name).await;
        assert_eq!(reader.project(&pid).await["name"], json!(name));
        let found = reader.projects(&format!("?name=project%20{i}")).await;
        assert_eq!(
            ids(&json!(found)),
            vec![pid.clone()],
            "name search lags the write"
        );
        let cid = writer.new_column(&pid, "C").await;
        let tid = str_of(&writer.new_task(&cid, "T").await["id"]);
        assert_eq!(reader.task(&tid).await["title"], json!("T"));
        for j in 0..3 {
            let title = format!("v{i}.{j}");
            writer
                .patch(&format!("/tasks/{tid}"), json!({ "title": title }))
                .await
                .expect_ok(200);
            assert_eq!(reader.task(&tid).await["title"], json!(title));
            let project = reader.project(&pid).await;
            assert_eq!(find_task(&project, &tid).unwrap()["title"], json!(title));
        }
        writer.delete(&format!("/tasks/{tid}")).await.expect_ok(200);
        reader.get(&format!("/tasks/{tid}")).await.expect_error(404);
        assert!(task_ids(&reader.project(&pid).await).is_empty());
    }
}

#[tokio::test]
async fn concurrent_creates_all_land_with_distinct_revs() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, cid) = api.board().await;
    let mut set = JoinSet::new();
    for i in 0..40 {
        let api = api.clone();
        let cid = cid.clone();
        set.spawn(async move { api.new_task(&cid, &format!("Task {i}")).await });
    }
    let mut created: Vec<Value> = Vec::new();
    while let Some(task) = set.join_next().await {
        created.push(task.expect("task join"));
    }
    let mut revs: Vec<i64> = created.iter().map(|t| t["rev"].as_i64().unwrap()).collect();
    revs.sort();
    revs.dedup();
    assert_eq!(revs.len(), 40, "two writes share a rev");

    let project = api.project(&pid).await;
    let mut read = task_ids(&project);
    let mut sent: Vec<String> = created.iter().map(|t| str_of(&t["id"])).collect();
    read.sort();
    sent.sort();
    assert_eq!(read, sent);
    let latest = created
        .iter()
        .map(|t| t["updatedAt"].as_i64().unwrap())
        .max()
        .unwrap();
    assert_eq!(project["updatedAt"], json!(latest));
}

#[tokio::test]
async fn one_request_one_stamp_and_stamps_never_decrease() {
    let s = Server::start().await;
    let api = s.api();
    let project = api
        .create_project(json!({ "name": "P", "columns": ["A", "B", "C"] }))
        .await;
    for column in project["columns"].as_array().unwrap() {
        assert_eq!(
            column["updatedAt"], project["updatedAt"],
            "records of one request share a stamp"
        );
    }
    let cid = str_of(&project["columns"][0]["id"]);
    let tid = str_of(&api.new_task(&cid, "T").await["id"]);
    let mut last = 0;
    for i in 0..30 {
        let r = api
            .patch(&format!("/tasks/{tid}"), json!({ "priority": 1 + i % 4 }))
            .await;
        let stamp = r.expect_ok(200)["task"]["updatedAt"].as_i64().unwrap();
        assert!(stamp >= last, "stamp went back from {last} to {stamp}");
        last = stamp;
    }
}
