//! Columns: create, update, delete, shape, name and description limits, the 20-columns
//! limit and `projectId` checks.

use serde_json::json;

use crate::harness::*;

const COLUMN_KEYS: &[&str] = &[
    "id",
    "projectId",
    "name",
    "description",
    "position",
    "archivedAt",
    "updatedAt",
];

#[tokio::test]
async fn create_answers_201_with_the_column() {
    let s = Server::start().await;
    let api = s.api();
    let pid = api.new_project("P").await;
    let r = api
        .post("/columns", json!({ "projectId": pid, "name": "Backlog" }))
        .await;
    let body = r.expect_ok(201);
    let cid = str_of(&body["id"]);
    assert!(cid.starts_with("c_"), "column id {cid}");
    let column = body["column"].clone();
    let mut keys = COLUMN_KEYS.to_vec();
    if column.get("tasks").is_some() {
        keys.push("tasks");
        assert_eq!(column["tasks"], json!([]));
    }
    assert_keys(&column, &keys);
    assert_eq!(column["id"], json!(cid));
    assert_eq!(column["projectId"], json!(pid));
    assert_eq!(column["name"], json!("Backlog"));
    assert_eq!(column["description"], json!(null));
    assert_eq!(column["archivedAt"], json!(null));
    assert!(column["position"].as_f64().is_some());
    assert!(column["updatedAt"].is_i64());

    // Read inside its project, the same column carries a `tasks` array.
    let project = api.project(&pid).await;
    let read = project["columns"][0].clone();
    let mut with_tasks = keys.clone();
    if !with_tasks.contains(&"tasks") {
        with_tasks.push("tasks");
    }
    assert_keys(&read, &with_tasks);
    assert_eq!(read["tasks"], json!([]));
    for key in COLUMN_KEYS {
        assert_eq!(read[*key], column[*key], "{key}");
    }
    assert_eq!(
        project["updatedAt"], column["updatedAt"],
        "the project's stamp moves with it"
    );

    let full = json!({
        "id": "c_custom", "projectId": pid, "name": "Full", "description": "About",
        "position": 0.5, "archivedAt": 1_700_000_000_000i64,
    });
    let column = api.create_column(full).await;
    assert_eq!(column["id"], json!("c_custom"));
    assert_eq!(column["description"], json!("About"));
    assert_eq!(column["position"].as_f64(), Some(0.5));
    assert_eq!(column["archivedAt"], json!(1_700_000_000_000i64));
    api.post(
        "/columns",
        json!({ "id": "b_wrong", "projectId": pid, "name": "x" }),
    )
    .await
    .expect_field_error(422, "id");
}

#[tokio::test]
async fn new_columns_land_at_the_top_and_reads_sort_by_position_then_id() {
    let s = Server::start().await;
    let api = s.api();
    let pid = api.new_project("P").await;
    let a = api
        .create_column(json!({ "projectId": pid, "name": "A", "position": 3.5 }))
        .await;
    let b = api
        .create_column(json!({ "projectId": pid, "name": "B" }))
        .await;
    assert_eq!(b["position"].as_f64(), Some(2.5), "lowest sibling minus 1");
    let c = json!({ "id": "c_a", "projectId": pid, "name": "C", "position": 3.5 });
    api.create_column(c).await;
    let project = api.project(&pid).await;
    let order: Vec<_> = project["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].clone())
        .collect();
    // A and C share 3.5; C's id `c_a` sorts before any generated `c_...` id only if smaller,
    // so compare against the ids themselves.
    let a_id = str_of(&a["id"]);
    let expected = if "c_a" < a_id.as_str() {
        ["B", "C", "A"]
    } else {
        ["B", "A", "C"]
    };
    assert_eq!(order, expected.map(|n| json!(n)).to_vec());

    let r = api
        .patch(
            &format!("/columns/{}", str_of(&b["id"])),
            json!({ "position": 9.0 }),
        )
        .await;
    r.expect_ok(200);
    let project = api.project(&pid).await;
    assert_eq!(project["columns"][2]["name"], json!("B"));
}

#[tokio::test]
async fn patch_answers_the_whole_column_and_the_next_read_shows_it() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, cid) = api.board().await;
    let tid = str_of(&api.new_task(&cid, "Stays").await["id"]);
    let t = 1_700_000_000_000i64;
    let body =
        json!({ "name": "Renamed", "description": "Words", "position": 4.25, "archivedAt": t });
    let r = api.patch(&format!("/columns/{cid}"), body).await;
    let column = r.expect_ok(200)["column"].clone();
    assert_eq!(column["id"], json!(cid));
    assert_eq!(column["projectId"], json!(pid));
    assert_eq!(column["name"], json!("Renamed"));
    assert_eq!(column["description"], json!("Words"));
    assert_eq!(column["position"].as_f64(), Some(4.25));
    assert_eq!(column["archivedAt"], json!(t));

    let project = api.project(&pid).await;
    let read = &project["columns"][0];
    for key in COLUMN_KEYS {
        assert_eq!(read[*key], column[*key], "{key}");
    }
    assert_eq!(
        task_ids(&project),
        vec![tid],
        "an archived column keeps its cards"
    );
    assert_eq!(project["updatedAt"], column["updatedAt"]);

    let r = api
        .patch(
            &format!("/columns/{cid}"),
            json!({ "archivedAt": null, "description": null }),
        )
        .await;
    let column = r.expect_ok(200)["column"].clone();
    assert_eq!(column["archivedAt"], json!(null));
    assert_eq!(column["description"], json!(null));

    // A column cannot be moved to another project, and unknown fields are refused.
    let r = api
        .patch(&format!("/columns/{cid}"), json!({ "projectId": pid }))
        .await;
    r.expect_field_error(422, "projectId");
    let r = api
        .patch(
            &format!("/columns/{cid}"),
            json!({ "name": "X", "colour": "red" }),
        )
        .await;
    let accepted = r.expect_field_error(422, "colour")["accepted"].clone();
    for field in ["name", "description", "position", "archivedAt"] {
        assert!(
            accepted.as_array().unwrap().contains(&json!(field)),
            "{field} in {accepted}"
        );
    }
    assert_eq!(
        api.project(&pid).await["columns"][0]["name"],
        json!("Renamed")
    );
}

#[tokio::test]
async fn delete_removes_the_column_and_counts_its_tasks() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, cid) = api.board().await;
    let other = api.new_column(&pid, "Other").await;
    let t1 = str_of(&api.new_task(&cid, "One").await["id"]);
    let t2 = api
        .create_task(json!({ "columnId": cid, "title": "Two", "completedAt": days_ago(2) }))
        .await;
    let kept = str_of(&api.new_task(&other, "Kept").await["id"]);

    let r = api.delete(&format!("/columns/{cid}")).await;
    let body = r.expect_ok(200);
    assert_eq!(body["id"], json!(cid));
    assert_eq!(body["deleted"], json!(3), "the column and its two tasks");

    let project = api.project(&pid).await;
    assert_eq!(ids(&project["columns"]), vec![other]);
    assert_eq!(task_ids(&project), vec![kept]);
    api.get(&format!("/tasks/{t1}")).await.expect_error(404);
    api.get(&format!("/tasks/{}", str_of(&t2["id"])))
        .await
        .expect_error(404);
    api.patch(&format!("/columns/{cid}"), json!({ "name": "x" }))
        .await
        .expect_error(404);
    api.delete(&format!("/columns/{cid}"))
        .await
        .expect_error(404);

    let empty = api.new_column(&pid, "Empty").await;
    let r = api.delete(&format!("/columns/{empty}")).await;
    assert_eq!(r.expect_ok(200)["deleted"], json!(1));
}

#[tokio::test]
async fn names_are_cut_to_40_characters_and_may_not_be_empty() {
    let s = Server::start().await;
    let api = s.api();
    let pid = api.new_project("P").await;
    let column = api
        .create_column(json!({ "projectId": pid, "name": "ñ".repeat(41) }))
        .await;
    assert_eq!(column["name"], json!("ñ".repeat(40)));
    let cid = str_of(&column["id"]);
    let r = api
        .patch(
            &format!("/columns/{cid}"),
            json!({ "name": "🧱".repeat(50) }),
        )
        .await;
    assert_eq!(r.expect_ok(200)["column"]["name"], json!("🧱".repeat(40)));

    api.post("/columns", json!({ "projectId": pid, "name": "" }))
        .await
        .expect_field_error(422, "name");
    api.post("/columns", json!({ "projectId": pid }))
        .await
        .expect_field_error(422, "name");
    api.patch(&format!("/columns/{cid}"), json!({ "name": "" }))
        .await
        .expect_field_error(422, "name");
    let project = api.project(&pid).await;
    assert_eq!(ids(&project["columns"]), vec![cid]);
    assert_eq!(project["columns"][0]["name"], json!("🧱".repeat(40)));
}

#[tokio::test]
async fn a_description_over_2000_characters_is_422_and_the_previous_value_stands() {
    let s = Server::start().await;
    let api = s.api();
    let pid = api.new_project("P").await;
    let full = "ö".repeat(2000);
    let column = api
        .create_column(json!({ "projectId": pid, "name": "C", "description": full }))
        .await;
    assert_eq!(column["description"], json!(full));
    let cid = str_of(&column["id"]);

    let r = api
        .patch(
            &format!("/columns/{cid}"),
            json!({ "description": "x".repeat(2001) }),
        )
        .await;
    r.expect_field_error(422, "description");
    let body = json!({ "name": "Renamed", "description": "ö".repeat(2001) });
    api.patch(&format!("/columns/{cid}"), body)
        .await
        .expect_field_error(422, "description");
    let read = api.project(&pid).await["columns"][0].clone();
    assert_eq!(read["description"], json!(full));
    assert_eq!(read["name"], json!("C"));

    let body = json!({ "projectId": pid, "name": "Long", "description": "x".repeat(2001) });
    api.post("/columns", body)
        .await
        .expect_field_error(422, "description");
    assert_eq!(
        api.project(&pid).await["columns"].as_array().unwrap().len(),
        1
    );
}

#[tokio::test]
async fn a_project_holds_at_most_20_columns_archived_ones_included() {
    let s = Server::start().await;
    let api = s.api();
    let names: Vec<String> = (0..20).map(|i| format!("C{i}")).collect();
    let project = api
        .create_project(json!({ "name": "Full", "columns": names }))
        .await;
    let pid = str_of(&project["id"]);
    assert_eq!(project["columns"].as_array().unwrap().len(), 20);
    api.post("/columns", json!({ "projectId": pid, "name": "C20" }))
        .await
        .expect_error(422);

    let first = str_of(&project["columns"][0]["id"]);
    api.patch(
        &format!("/columns/{first}"),
        json!({ "archivedAt": now_ms() }),
    )
    .await
    .expect_ok(200);
    api.post("/columns", json!({ "projectId": pid, "name": "C20" }))
        .await
        .expect_error(422);
    assert_eq!(
        api.project(&pid).await["columns"].as_array().unwrap().len(),
        20
    );

    api.delete(&format!("/columns/{first}"))
        .await
        .expect_ok(200);
    api.post("/columns", json!({ "projectId": pid, "name": "C20" }))
        .await
        .expect_ok(201);

    // Creating a project with 21 columns creates nothing at all.
    let names: Vec<String> = (0..21).map(|i| format!("C{i}")).collect();
    api.post("/projects", json!({ "name": "Too many", "columns": names }))
        .await
        .expect_error(422);
    assert_eq!(api.projects("").await.len(), 1);
}

#[tokio::test]
async fn project_id_missing_unknown_or_another_accounts_is_422_naming_it() {
    let s = Server::start().await;
    let api = s.api();
    let mine = api.new_project("Mine").await;
    let (other_key, _) = s.issue_key(None).await;
    let other = s.api_for(&other_key);
    let theirs = other.new_project("Theirs").await;

    api.post("/columns", json!({ "name": "C" }))
        .await
        .expect_field_error(422, "projectId");
    let r = api
        .post("/columns", json!({ "projectId": "b_nothere", "name": "C" }))
        .await;
    r.expect_field_error(422, "projectId");
    let r = api
        .post("/columns", json!({ "projectId": theirs, "name": "C" }))
        .await;
    r.expect_field_error(422, "projectId");
    assert_eq!(other.project(&theirs).await["columns"], json!([]));
    assert_eq!(api.project(&mine).await["columns"], json!([]));

    // snake_case is the same field.
    let column = api
        .create_column(json!({ "project_id": mine, "name": "Snake" }))
        .await;
    assert_eq!(column["projectId"], json!(mine));
}
