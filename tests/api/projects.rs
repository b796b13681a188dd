//! Projects: create, read, update, delete, their shape, ordering, client ids, unknown fields,
//! snake_case spellings and invalid JSON.

use serde_json::json;

use crate::harness::*;

const PROJECT_KEYS: &[&str] = &[
    "id",
    "name",
    "folder",
    "position",
    "archivedAt",
    "pinnedAt",
    "photo",
    "updatedAt",
    "columns",
];
const COLUMN_KEYS: &[&str] = &[
    "id",
    "projectId",
    "name",
    "description",
    "position",
    "archivedAt",
    "updatedAt",
    "tasks",
];

#[tokio::test]
async fn create_answers_201_with_the_whole_project_as_read() {
    let s = Server::start().await;
    let api = s.api();
    let started = now_ms();
    let r = api.post("/projects", json!({ "name": "Alpha" })).await;
    let body = r.expect_ok(201);
    let id = str_of(&body["id"]);
    assert!(id.starts_with("b_") && id.len() > 2, "project id {id}");
    let project = &body["project"];
    assert_keys(project, PROJECT_KEYS);
    assert_eq!(project["id"], json!(id));
    assert_eq!(project["name"], json!("Alpha"));
    assert_eq!(project["folder"], json!(null));
    assert_eq!(project["archivedAt"], json!(null));
    assert_eq!(project["pinnedAt"], json!(null));
    assert_eq!(project["photo"], json!(null));
    assert_eq!(project["columns"], json!([]));
    assert!(project["position"].as_f64().is_some_and(f64::is_finite));
    let updated = project["updatedAt"].as_i64().expect("updatedAt integer ms");
    assert!(
        (started - 60_000..=now_ms() + 60_000).contains(&updated),
        "updatedAt {updated}"
    );

    assert_eq!(
        api.project(&id).await,
        *project,
        "create reply differs from the read"
    );
    let doc = api.get("/projects").await;
    let doc = doc.expect(200);
    assert_eq!(doc["version"], json!(1));
    let now = doc["now"].as_i64().expect("now integer ms");
    assert!(
        (now - now_ms()).abs() < 60_000,
        "now {now} is not the server clock"
    );
    assert_eq!(doc["projects"], json!([project]));
}

#[tokio::test]
async fn create_with_columns_given_as_names_or_objects() {
    let s = Server::start().await;
    let api = s.api();
    let body = json!({
        "name": "Kanban",
        "columns": [
            "To do",
            { "name": "Doing", "description": "in flight" },
            { "id": "c_done", "name": "Done", "archivedAt": 1_700_000_000_000i64 },
        ],
    });
    let project = api.create_project(body).await;
    let pid = str_of(&project["id"]);
    let columns = project["columns"].as_array().expect("columns");
    assert_eq!(columns.len(), 3);
    let names: Vec<_> = columns.iter().map(|c| c["name"].clone()).collect();
    assert_eq!(
        names,
        vec![json!("To do"), json!("Doing"), json!("Done")],
        "sent order kept"
    );
    for column in columns {
        assert_keys(column, COLUMN_KEYS);
        assert_eq!(column["projectId"], json!(pid));
        assert_eq!(column["tasks"], json!([]));
        assert!(str_of(&column["id"]).starts_with("c_"));
    }
    assert_eq!(columns[0]["description"], json!(null));
    assert_eq!(columns[1]["description"], json!("in flight"));
    assert_eq!(columns[2]["id"], json!("c_done"));
    assert_eq!(columns[2]["archivedAt"], json!(1_700_000_000_000i64));
    assert_eq!(api.project(&pid).await, project);
    // The column is a real column: cards can be created in it.
    api.new_task(&str_of(&columns[1]["id"]), "Card").await;
}

#[tokio::test]
async fn get_by_id_reads_one_project_and_404s_for_an_unknown_id() {
    let s = Server::start().await;
    let api = s.api();
    let a = api.new_project("A").await;
    let b = api.new_project("B").await;
    assert_eq!(api.project(&a).await["name"], json!("A"));
    assert_eq!(api.project(&b).await["name"], json!("B"));
    let r = api.get(&format!("/projects/{a}")).await;
    assert_eq!(r.expect(200)["version"], json!(1));
    assert!(r.body["now"].is_i64());
    api.get("/projects/b_unknown").await.expect_error(404);
    api.get("/projects/not-even-an-id").await.expect_error(404);
}

#[tokio::test]
async fn patch_answers_the_whole_project_and_the_next_read_shows_it() {
    let s = Server::start().await;
    let api = s.api();
    let created = api
        .create_project(json!({ "name": "Before", "columns": ["X"] }))
        .await;
    let pid = str_of(&created["id"]);
    let body = json!({ "name": "After", "folder": "Work", "position": 12.75 });
    let r = api.patch(&format!("/projects/{pid}"), body).await;
    let project = r.expect_ok(200)["project"].clone();
    assert_keys(&project, PROJECT_KEYS);
    assert_eq!(project["name"], json!("After"));
    assert_eq!(project["folder"], json!("Work"));
    assert_eq!(project["position"].as_f64(), Some(12.75));
    assert_eq!(
        project["columns"].as_array().unwrap().len(),
        1,
        "columns kept"
    );
    assert!(project["updatedAt"].as_i64().unwrap() >= created["updatedAt"].as_i64().unwrap());
    assert_eq!(api.project(&pid).await, project);

    // A write that changes nothing stamps nothing.
    let r = api
        .patch(&format!("/projects/{pid}"), json!({ "name": "After" }))
        .await;
    assert_eq!(r.expect_ok(200)["project"], project);
    assert_eq!(api.project(&pid).await["updatedAt"], project["updatedAt"]);

    api.patch("/projects/b_unknown", json!({ "name": "x" }))
        .await
        .expect_error(404);
}

#[tokio::test]
async fn delete_counts_descendants_and_removes_everything_under_it() {
    let s = Server::start().await;
    let api = s.api();
    let project = api
        .create_project(json!({ "name": "Doomed", "columns": ["A", "B"] }))
        .await;
    let pid = str_of(&project["id"]);
    let keep = api.new_project("Kept").await;
    let col_a = str_of(&project["columns"][0]["id"]);
    let col_b = str_of(&project["columns"][1]["id"]);
    let parent = str_of(&api.new_task(&col_a, "Parent").await["id"]);
    let sub = api
        .create_task(json!({ "columnId": col_b, "title": "Sub", "parentId": parent }))
        .await;
    let done = api
        .create_task(json!({ "columnId": col_b, "title": "Done", "completedAt": days_ago(1) }))
        .await;

    let r = api.delete(&format!("/projects/{pid}")).await;
    let body = r.expect_ok(200);
    assert_eq!(body["id"], json!(pid));
    assert_eq!(body["deleted"], json!(6), "1 project + 2 columns + 3 tasks");

    api.get(&format!("/projects/{pid}")).await.expect_error(404);
    let left = api.projects("?completed=all").await;
    assert_eq!(ids(&json!(left)), vec![keep.clone()]);
    for tid in [parent, str_of(&sub["id"]), str_of(&done["id"])] {
        api.get(&format!("/tasks/{tid}")).await.expect_error(404);
    }
    api.patch(&format!("/columns/{col_a}"), json!({ "name": "x" }))
        .await
        .expect_error(404);
    api.post("/tasks", json!({ "columnId": col_a, "title": "x" }))
        .await
        .expect_field_error(422, "columnId");
    api.patch(&format!("/projects/{pid}"), json!({ "name": "x" }))
        .await
        .expect_error(404);
    api.delete(&format!("/projects/{pid}"))
        .await
        .expect_error(404);
    api.delete("/projects/b_unknown").await.expect_error(404);
}

#[tokio::test]
async fn position_is_echoed_and_an_omitted_one_lands_at_the_top() {
    let s = Server::start().await;
    let api = s.api();
    let a = api
        .create_project(json!({ "name": "A", "position": 10.25 }))
        .await;
    assert_eq!(a["position"].as_f64(), Some(10.25));
    let b = api.create_project(json!({ "name": "B" })).await;
    assert_eq!(
        b["position"].as_f64(),
        Some(9.25),
        "lowest sibling position minus 1"
    );
    let c = api
        .create_project(json!({ "name": "C", "position": -1.125 }))
        .await;
    assert_eq!(c["position"].as_f64(), Some(-1.125));
    let d = api.create_project(json!({ "name": "D" })).await;
    assert_eq!(d["position"].as_f64(), Some(-2.125));
    let names: Vec<_> = api
        .projects("")
        .await
        .iter()
        .map(|p| p["name"].clone())
        .collect();
    assert_eq!(names, vec![json!("D"), json!("C"), json!("B"), json!("A")]);

    api.post("/projects", json!({ "name": "E", "position": "1" }))
        .await
        .expect_field_error(422, "position");
}

#[tokio::test]
async fn reads_are_sorted_by_position_then_id() {
    let s = Server::start().await;
    let api = s.api();
    for (id, position) in [("b_b", 5.0), ("b_c", 4.5), ("b_a", 5.0), ("b_d", 7.0)] {
        api.create_project(json!({ "id": id, "name": id, "position": position }))
            .await;
    }
    let order = ids(&json!(api.projects("").await));
    assert_eq!(order, vec!["b_c", "b_a", "b_b", "b_d"]);

    // Moving one between two others renumbers nothing else.
    api.patch("/projects/b_d", json!({ "position": 4.75 }))
        .await
        .expect_ok(200);
    let projects = api.projects("").await;
    assert_eq!(ids(&json!(projects)), vec!["b_c", "b_d", "b_a", "b_b"]);
    let positions: Vec<_> = projects
        .iter()
        .map(|p| p["position"].as_f64().unwrap())
        .collect();
    assert_eq!(positions, vec![4.5, 4.75, 5.0, 5.0]);
}

#[tokio::test]
async fn client_ids_need_the_project_prefix_and_1_to_64_safe_characters() {
    let s = Server::start().await;
    let api = s.api();
    let r = api
        .post("/projects", json!({ "id": "b_abc", "name": "Mine" }))
        .await;
    let body = r.expect_ok(201);
    assert_eq!(body["id"], json!("b_abc"));
    assert_eq!(body["project"]["id"], json!("b_abc"));
    let longest = format!("b_{}", "x-_9".repeat(16));
    api.create_project(json!({ "id": longest, "name": "Longest" }))
        .await;

    let too_long = format!("b_{}", "x".repeat(65));
    for bad in [
        json!("c_abc"),
        json!("t_abc"),
        json!("abc"),
        json!("b_"),
        json!("b_a b"),
        json!("b_a.b"),
        json!("b_é"),
        json!(too_long),
        json!(42),
    ] {
        let r = api
            .post("/projects", json!({ "id": bad, "name": "Bad" }))
            .await;
        r.expect_field_error(422, "id");
    }
    assert_eq!(
        api.projects("").await.len(),
        2,
        "a refused id created something"
    );
}

#[tokio::test]
async fn creating_an_existing_id_again_is_a_safe_retry_or_409() {
    let s = Server::start().await;
    let api = s.api();
    let body = json!({ "id": "b_retry", "name": "Same", "folder": "F", "position": 3.5 });
    let first = api.create_project(body.clone()).await;

    let r = api.post("/projects", body).await;
    assert_eq!(
        r.expect_ok(200)["project"],
        first,
        "a retry answers the existing record"
    );
    // Fields the body leaves out are not compared.
    let r = api
        .post("/projects", json!({ "id": "b_retry", "name": "Same" }))
        .await;
    assert_eq!(r.expect_ok(200)["project"], first);

    let r = api
        .post("/projects", json!({ "id": "b_retry", "name": "Different" }))
        .await;
    let body = r.expect_field_error(409, "id");
    assert_eq!(body["current"]["id"], json!("b_retry"));
    assert_eq!(body["current"]["name"], json!("Same"));
    assert_eq!(body["current"]["folder"], json!("F"));
    assert_eq!(api.projects("?completed=all").await, vec![first]);
}

#[tokio::test]
async fn an_unknown_field_is_422_naming_it_and_listing_the_accepted_fields() {
    let s = Server::start().await;
    let api = s.api();
    let r = api
        .post("/projects", json!({ "name": "X", "colour": "red" }))
        .await;
    let body = r.expect_field_error(422, "colour");
    let accepted: Vec<&str> = body["accepted"]
        .as_array()
        .expect("accepted list")
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    for field in [
        "id",
        "name",
        "columns",
        "folder",
        "position",
        "pinnedAt",
        "photo",
        "archivedAt",
    ] {
        assert!(
            accepted.contains(&field),
            "{field} missing from accepted {accepted:?}"
        );
    }
    assert!(!accepted.contains(&"colour"));
    assert!(api.projects("").await.is_empty(), "nothing created");

    let pid = api.new_project("Kept").await;
    let r = api
        .patch(
            &format!("/projects/{pid}"),
            json!({ "name": "Changed", "owner": "me" }),
        )
        .await;
    let body = r.expect_field_error(422, "owner");
    let accepted: Vec<&str> = body["accepted"]
        .as_array()
        .expect("accepted list")
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    for field in [
        "name",
        "folder",
        "position",
        "archivedAt",
        "pinnedAt",
        "photo",
    ] {
        assert!(
            accepted.contains(&field),
            "{field} missing from accepted {accepted:?}"
        );
    }
    assert_eq!(
        api.project(&pid).await["name"],
        json!("Kept"),
        "valid fields beside it landed"
    );
}

#[tokio::test]
async fn snake_case_is_accepted_and_both_spellings_at_once_are_422() {
    let s = Server::start().await;
    let api = s.api();
    let project = api
        .create_project(json!({ "name": "Snake", "pinned_at": 1_700_000_000_000i64 }))
        .await;
    assert_eq!(project["pinnedAt"], json!(1_700_000_000_000i64));
    assert!(
        project.get("pinned_at").is_none(),
        "reads are camelCase only"
    );
    let pid = str_of(&project["id"]);

    let r = api
        .patch(
            &format!("/projects/{pid}"),
            json!({ "archived_at": 1_700_000_000_001i64 }),
        )
        .await;
    assert_eq!(
        r.expect_ok(200)["project"]["archivedAt"],
        json!(1_700_000_000_001i64)
    );

    let both = json!({ "name": "Both", "pinnedAt": 1, "pinned_at": 1 });
    let r = api.post("/projects", both).await;
    r.expect_error(422);
    let field = r.body["field"].as_str().unwrap_or_default();
    assert!(
        field == "pinnedAt" || field == "pinned_at",
        "field {field:?}"
    );
    let both = json!({ "archivedAt": null, "archived_at": null });
    api.patch(&format!("/projects/{pid}"), both)
        .await
        .expect_error(422);
    assert_eq!(api.projects("").await.len(), 1);
    assert_eq!(
        api.project(&pid).await["archivedAt"],
        json!(1_700_000_000_001i64)
    );
}

#[tokio::test]
async fn invalid_json_is_400_and_saves_nothing() {
    let s = Server::start().await;
    let api = s.api();
    api.post_text("/projects", "{\"name\": \"Broken\"")
        .await
        .expect_error(400);
    api.post_text("/projects", "name=Broken")
        .await
        .expect_error(400);
    api.post_text("/projects", "").await.expect_error(400);
    assert!(api.projects("").await.is_empty());

    let pid = api.new_project("Whole").await;
    api.patch_text(&format!("/projects/{pid}"), "{\"name\": ")
        .await
        .expect_error(400);
    api.post_text("/columns", &format!("{{\"projectId\": \"{pid}\", "))
        .await
        .expect_error(400);
    api.post_text("/tasks", "[").await.expect_error(400);
    let project = api.project(&pid).await;
    assert_eq!(project["name"], json!("Whole"));
    assert_eq!(project["columns"], json!([]));
}
