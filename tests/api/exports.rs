//! Analytic exports (issue 23): `GET /export?format=csv|ndjson` and `workboard export
//! --format`, one row per card, finished cards in and the bin out, streamed as attachments.
//! The CSV is read back with Python's `csv` module, as a spreadsheet user's script would.

use std::path::Path;

use serde_json::{Value, json};

use crate::harness::*;

const COLUMNS: &[&str] = &[
    "project_id",
    "project_name",
    "project_folder",
    "column_id",
    "column_name",
    "task_id",
    "parent_id",
    "title",
    "description",
    "priority",
    "effort",
    "deadline",
    "deadline_time",
    "location",
    "tags",
    "repeat",
    "checklist_done",
    "checklist_total",
    "comments",
    "position",
    "completed_at",
    "cancelled_at",
    "updated_at",
];

/// The CSV at `path` as Python's `csv` module reads it (strict), row by row.
pub(crate) async fn python_rows(path: &Path) -> Vec<Vec<String>> {
    let script = "import csv, json, sys\n\
        with open(sys.argv[1], newline='', encoding='utf-8') as f:\n\
        \x20   print(json.dumps(list(csv.reader(f, strict=True))))\n";
    let out = tokio::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(path)
        .output()
        .await
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "python's csv module could not read the file: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("python printed JSON")
}

/// Rows as maps from the header's names.
pub(crate) fn by_name(rows: &[Vec<String>]) -> Vec<std::collections::HashMap<String, String>> {
    let header = &rows[0];
    rows[1..]
        .iter()
        .map(|r| header.iter().cloned().zip(r.iter().cloned()).collect())
        .collect()
}

fn is_iso_ms(s: &str) -> bool {
    let b = s.as_bytes();
    s.len() == 24
        && s.ends_with('Z')
        && b[4] == b'-'
        && b[10] == b'T'
        && b[19] == b'.'
        && s.parse::<jiff::Timestamp>().is_ok()
}

/// An account with the cards the checks need: awkward titles, a formula, a finished card, a
/// deleted one, one in an archived project, one with everything filled in.
async fn seed(api: &Api) -> (String, String) {
    let pid = api
        .create_project(json!({"name": "=cmd|' /C calc'!A0", "folder": "Work"}))
        .await["id"]
        .clone();
    let pid = str_of(&pid);
    let cid = api.new_column(&pid, "To do").await;
    let full = api
        .create_task(json!({
            "columnId": cid,
            "title": "Comma, \"quote\"\nand a new line",
            "description": "Line one\nline two, with \"quotes\"",
            "priority": 2,
            "effort": "hard",
            "deadline": "2026-12-01",
            "deadlineTime": "09:30",
            "location": "-5 degrees outside",
            "tags": ["web", "urgent"],
            "checklist": [{"text": "one", "done": true}, {"text": "two"}],
            "comments": [{"text": "a comment"}],
            "position": -2.5,
        }))
        .await;
    api.new_task(&cid, "=HYPERLINK(\"http://evil.example\",\"click\")")
        .await;
    api.new_task(&cid, "+1 plus").await;
    api.new_task(&cid, "@SUM(A1:A9)").await;
    let done = api.new_task(&cid, "Finished long ago").await;
    api.patch(
        &format!("/tasks/{}", str_of(&done["id"])),
        json!({"completedAt": days_ago(90)}),
    )
    .await
    .expect_ok(200);
    let binned = api.new_task(&cid, "Deleted card").await;
    api.delete(&format!("/tasks/{}", str_of(&binned["id"])))
        .await
        .expect_ok(200);
    let archived = api.new_project("Old board").await;
    let old_col = api.new_column(&archived, "Done").await;
    api.new_task(&old_col, "In an archived project").await;
    api.patch(
        &format!("/projects/{archived}"),
        json!({"archivedAt": now_ms()}),
    )
    .await
    .expect_ok(200);
    (pid, str_of(&full["id"]))
}

#[tokio::test]
async fn csv_is_rfc_4180_one_row_per_card_and_never_a_formula() {
    let s = Server::start().await;
    let (key, account) = s.issue_key(None).await;
    let api = s.api_for(&key);
    let (pid, full_id) = seed(&api).await;
    let r = api.get("/export?format=csv").await;
    r.expect(200);
    assert!(
        r.content_type().starts_with("text/csv"),
        "{}",
        r.content_type()
    );
    let disposition = r.header("content-disposition").unwrap_or_default();
    assert!(
        disposition.starts_with("attachment; filename=\"workboard-")
            && disposition.contains(&account)
            && disposition.ends_with(".csv\""),
        "{disposition}"
    );
    assert!(r.text.contains("\r\n"), "RFC 4180 line ends");
    let file = s.root().join("export.csv");
    std::fs::write(&file, &r.text).unwrap();
    let rows = python_rows(&file).await;
    assert_eq!(rows[0], COLUMNS);
    let cards = by_name(&rows);
    // Every live card, finished and archived included; the deleted one not.
    assert_eq!(cards.len(), 6, "{cards:#?}");
    assert!(cards.iter().all(|c| c["title"] != "Deleted card"));
    assert!(cards.iter().any(|c| c["title"] == "In an archived project"));

    let full = cards.iter().find(|c| c["task_id"] == full_id).unwrap();
    assert_eq!(full["project_id"], pid);
    assert_eq!(
        full["project_name"], "'=cmd|' /C calc'!A0",
        "a formula-like name is defused"
    );
    assert_eq!(full["project_folder"], "Work");
    assert_eq!(full["column_name"], "To do");
    assert_eq!(full["title"], "Comma, \"quote\"\nand a new line");
    assert_eq!(full["description"], "Line one\nline two, with \"quotes\"");
    assert_eq!(full["priority"], "2");
    assert_eq!(full["effort"], "hard");
    assert_eq!(full["deadline"], "2026-12-01");
    assert_eq!(full["deadline_time"], "09:30");
    assert_eq!(full["location"], "'-5 degrees outside");
    assert_eq!(full["tags"], "web;urgent");
    assert_eq!(
        (
            &full["checklist_done"][..],
            &full["checklist_total"][..],
            &full["comments"][..]
        ),
        ("1", "2", "1")
    );
    assert_eq!(full["position"], "-2.5", "numbers are written as numbers");
    assert_eq!(full["parent_id"], "");
    assert_eq!(
        (&full["completed_at"][..], &full["cancelled_at"][..]),
        ("", "")
    );
    assert!(is_iso_ms(&full["updated_at"]), "{}", full["updated_at"]);
    for formula in [
        "=HYPERLINK(\"http://evil.example\",\"click\")",
        "+1 plus",
        "@SUM(A1:A9)",
    ] {
        assert!(
            cards.iter().any(|c| c["title"] == format!("'{formula}")),
            "{formula} is prefixed"
        );
    }
    let done = cards
        .iter()
        .find(|c| c["title"] == "Finished long ago")
        .unwrap();
    assert!(is_iso_ms(&done["completed_at"]), "{}", done["completed_at"]);

    // The same file from the CLI, through the running server and from the store alone.
    let through = s.root().join("cli.csv");
    let out = s
        .cli(&[
            "export",
            "--account",
            &account,
            "--format",
            "csv",
            "--out",
            through.to_str().unwrap(),
        ])
        .await;
    out.success();
    assert!(out.stderr.contains("exported: 6 cards"), "{}", out.stderr);
    assert_eq!(std::fs::read_to_string(&through).unwrap(), r.text);
    let mut s = s;
    s.kill().await;
    let alone = s
        .cli(&["export", "--account", &account, "--format", "csv"])
        .await;
    alone.success();
    assert_eq!(alone.stdout, r.text);
}

#[tokio::test]
async fn ndjson_is_one_object_per_card_with_its_checklist_and_comments() {
    let s = Server::start().await;
    let (key, account) = s.issue_key(None).await;
    let api = s.api_for(&key);
    let (pid, full_id) = seed(&api).await;
    let r = api.get("/export?format=ndjson").await;
    r.expect(200);
    assert!(r.content_type().starts_with("application/x-ndjson"));
    let disposition = r.header("content-disposition").unwrap_or_default();
    assert!(disposition.ends_with(".ndjson\""), "{disposition}");
    let lines: Vec<Value> = r
        .text
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    assert_eq!(lines.len(), 6);
    assert!(r.text.ends_with('\n'));
    let full = lines
        .iter()
        .find(|l| l["taskId"] == json!(full_id))
        .unwrap();
    assert_keys(
        full,
        &[
            "projectId",
            "projectName",
            "projectFolder",
            "columnId",
            "columnName",
            "taskId",
            "parentId",
            "title",
            "description",
            "priority",
            "effort",
            "deadline",
            "deadlineTime",
            "location",
            "tags",
            "repeat",
            "checklistDone",
            "checklistTotal",
            "checklist",
            "comments",
            "position",
            "completedAt",
            "cancelledAt",
            "updatedAt",
        ],
    );
    assert_eq!(full["projectId"], json!(pid));
    assert_eq!(full["title"], json!("Comma, \"quote\"\nand a new line"));
    assert_eq!(
        full["location"],
        json!("-5 degrees outside"),
        "JSON needs no defusing"
    );
    assert_eq!(full["tags"], json!(["web", "urgent"]));
    assert_eq!(
        (
            full["checklistDone"].clone(),
            full["checklistTotal"].clone()
        ),
        (json!(1), json!(2))
    );
    let checklist = full["checklist"].as_array().unwrap();
    assert_keys(&checklist[0], &["id", "text", "done", "position"]);
    assert_eq!(checklist[1]["text"], json!("two"));
    assert_keys(&full["comments"][0], &["id", "text", "createdAt"]);
    assert!(is_iso_ms(
        full["comments"][0]["createdAt"].as_str().unwrap()
    ));
    assert!(is_iso_ms(full["updatedAt"].as_str().unwrap()));
    assert_eq!(full["position"], json!(-2.5));

    let cli = s
        .cli(&["export", "--account", &account, "--format", "ndjson"])
        .await;
    cli.success();
    assert_eq!(cli.stdout, r.text);
}

#[tokio::test]
async fn json_stays_the_default_and_an_unknown_format_is_refused() {
    let s = Server::start().await;
    let api = s.api();
    let (_, cid) = api.board().await;
    api.new_task(&cid, "One card").await;
    let strip = |r: &Reply| {
        let mut v = r.body.clone();
        v.as_object_mut().unwrap().remove("now");
        v
    };
    let plain = api.get("/export").await;
    let named = api.get("/export?format=json").await;
    assert_eq!(strip(&plain), strip(&named));
    assert!(plain.content_type().starts_with("application/json"));
    assert!(
        named
            .header("content-disposition")
            .unwrap()
            .ends_with(".json\"")
    );
    let r = api.get("/export?format=xlsx").await;
    r.expect_field_error(422, "format");
    assert!(r.body["error"].as_str().unwrap().contains("xlsx"));
    api.get("/export?fmt=csv")
        .await
        .expect_code(422, "unknown_field");
    // Conditional like every read.
    let csv = api.get("/export?format=csv").await;
    let tag = csv.header("etag").expect("an ETag");
    let again = api
        .send_with(
            reqwest::Method::GET,
            "/export?format=csv",
            &[("if-none-match", &tag)],
        )
        .await;
    assert_eq!(again.status, 304);
}

#[tokio::test]
async fn a_large_export_is_streamed_not_sent_in_one_piece() {
    let s = Server::start().await;
    let api = s.api();
    let (_, cid) = api.board().await;
    let description = "A description of some length to make the file large. ".repeat(8);
    for batch in 0..4 {
        let tasks: Vec<Value> = (0..200)
            .map(|i| json!({"columnId": cid, "title": format!("Card {batch}-{i}"), "description": description}))
            .collect();
        api.post("/tasks", json!({"tasks": tasks}))
            .await
            .expect_ok(201);
    }
    for format in ["csv", "ndjson"] {
        let r = api.get(&format!("/export?format={format}")).await;
        r.expect(200);
        assert!(r.text.len() > 300_000, "{} bytes", r.text.len());
        assert_eq!(
            r.header("content-length"),
            None,
            "{format}: sent as a stream"
        );
        assert_eq!(r.header("transfer-encoding").as_deref(), Some("chunked"));
        let rows = match format {
            "csv" => {
                let file = s.root().join("large.csv");
                std::fs::write(&file, &r.text).unwrap();
                python_rows(&file).await.len() - 1
            }
            _ => r.text.lines().count(),
        };
        assert_eq!(rows, 800, "{format}");
    }
}
