//! The field tables (`write_model::field`) are the one declaration of a card's, project's and
//! column's writable fields. These tests hold what the server says of those fields against
//! the tables: the read shapes, the OpenAPI read and write schemas, the discovery document's
//! field notes and read-shape sentence, and the CSV and NDJSON export columns. A field that
//! one of them leaves out, or one that none of the tables declares, fails here.

use std::collections::BTreeSet;

use serde_json::{Value, json};
use write_model::Limits;
use write_model::field::{COLUMN_FIELDS, FieldSpec, PROJECT_FIELDS, TASK_FIELDS, snake_case};

use crate::harness::*;

fn keys(object: &Value) -> BTreeSet<String> {
    object
        .as_object()
        .unwrap_or_else(|| panic!("an object: {object}"))
        .keys()
        .cloned()
        .collect()
}

fn names(table: &[FieldSpec]) -> BTreeSet<String> {
    table.iter().map(|f| f.name.to_owned()).collect()
}

/// A component schema of the OpenAPI document.
fn component<'a>(doc: &'a Value, name: &str) -> &'a Value {
    let schema = &doc["components"]["schemas"][name];
    assert!(
        schema.is_object(),
        "the OpenAPI document has no schema {name}"
    );
    schema
}

/// The schema `name` describes `read` (a record as the server reads it back) exactly: the
/// same properties, and every field of `table` required unless reads may show it as null.
fn holds_the_read(doc: &Value, name: &str, read: &Value, table: &[FieldSpec]) {
    let schema = component(doc, name);
    assert_eq!(
        keys(&schema["properties"]),
        keys(read),
        "{name}'s schema and its read shape"
    );
    let required: Vec<&str> = (schema["required"].as_array().expect("required"))
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for f in table {
        assert_eq!(
            required.contains(&f.name),
            !f.read_null,
            "{name}.{} is required exactly when reads never show it as null",
            f.name
        );
        if !f.read_null {
            assert!(!read[f.name].is_null(), "{name}.{} reads as null", f.name);
        }
    }
}

/// The schema `name` of a write takes every field of `table` (and `exactly` nothing else).
fn takes_the_table(doc: &Value, name: &str, table: &[FieldSpec], exactly: bool) {
    let props = keys(&component(doc, name)["properties"]);
    let fields = names(table);
    if exactly {
        assert_eq!(props, fields, "{name} takes the table's fields");
    } else {
        assert!(
            props.is_superset(&fields),
            "{name} lacks {:?}",
            fields.difference(&props)
        );
    }
}

#[tokio::test]
async fn reads_schemas_notes_and_exports_follow_the_field_tables() {
    let s = Server::start().await;
    let api = s.api();
    let (pid, cid) = api.board().await;
    let card = api.new_task(&cid, "Card").await;
    let doc = api.get("/openapi.json").await.expect(200).clone();
    let discovery = api.get("").await.expect(200).clone();

    // The read shapes and the OpenAPI read schemas.
    let project = api.project(&pid).await;
    let column = project["columns"][0].clone();
    let task = api.task(&str_of(&card["id"])).await;
    assert_eq!(task, card, "a create answers the card as reads show it");
    holds_the_read(&doc, "Task", &task, TASK_FIELDS);
    holds_the_read(&doc, "Column", &column, COLUMN_FIELDS);
    holds_the_read(&doc, "Project", &project, PROJECT_FIELDS);
    for (name, table) in [
        ("ProjectChange", PROJECT_FIELDS),
        ("ListChange", COLUMN_FIELDS),
    ] {
        let props = keys(&component(&doc, name)["properties"]);
        assert!(props.is_superset(&names(table)), "{name} lacks a field");
    }

    // The OpenAPI write schemas.
    takes_the_table(&doc, "TaskUpdate", TASK_FIELDS, true);
    takes_the_table(&doc, "ProjectUpdate", PROJECT_FIELDS, true);
    takes_the_table(&doc, "ColumnUpdate", COLUMN_FIELDS, true);
    takes_the_table(&doc, "TaskCreate", TASK_FIELDS, false);
    takes_the_table(&doc, "ProjectCreate", PROJECT_FIELDS, false);
    takes_the_table(&doc, "ColumnCreate", COLUMN_FIELDS, false);

    // The discovery document: a note for every field (the table's own where it has one) and
    // every field in the read-shape sentence.
    let notes = &discovery["fieldNotes"];
    let limits = Limits::default();
    let sentence = discovery["shape"]["account"]
        .as_str()
        .expect("shape.account");
    for f in [TASK_FIELDS, PROJECT_FIELDS, COLUMN_FIELDS].concat() {
        let note = notes[f.name].as_str();
        assert!(
            note.is_some_and(|n| !n.is_empty()),
            "no field note for {}",
            f.name
        );
        if f.note.is_some() {
            assert_eq!(note, Some(f.note(&limits).as_str()), "{}'s note", f.name);
        }
        assert!(
            sentence.contains(&format!(" {},", f.name)),
            "shape.account leaves out {}",
            f.name
        );
    }

    // The exports: the CSV header names each card field once, in snake_case; an NDJSON line
    // carries each in camelCase; the discovery document lists the same header.
    let csv = api.get("/export?format=csv").await;
    csv.expect(200);
    let header: Vec<&str> = (csv.text.lines())
        .next()
        .expect("a header row")
        .split(',')
        .collect();
    for f in TASK_FIELDS {
        let column = snake_case(f.name);
        let times = header.iter().filter(|h| **h == column).count();
        assert_eq!(times, 1, "{column} in the CSV header {header:?}");
    }
    let listed = discovery["exports"]["csv"].as_str().expect("exports.csv");
    assert!(
        listed.contains(&header.join(", ")),
        "exports.csv lists {header:?}"
    );
    let ndjson = api.get("/export?format=ndjson").await;
    ndjson.expect(200);
    let first = ndjson.text.lines().next().expect("a line");
    let line: Value = serde_json::from_str(first).expect("JSON");
    assert!(keys(&line).is_superset(&names(TASK_FIELDS)), "{line}");
    assert_eq!(line["taskId"], json!(card["id"]));
}
