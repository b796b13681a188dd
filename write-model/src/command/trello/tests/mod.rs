//! The conversion, on two boards in the shape of Trello's export (`fixtures/trello/`): an
//! ordinary one that fits (`ordinary`), and one built to hit every rule and every problem
//! (`edge`); then boards built in the test for the messages and refusals (`messages`). This
//! module holds what they share: the fixtures, and readers of the converted document.

mod bounds;
mod edge;
mod messages;
mod ordinary;

use std::sync::Arc;

use serde_json::{Value, json};

use super::problems::thousands;
use super::*;
use crate::checks::trim_to;
use crate::command::{Command, Outcome, Request};
use crate::store::Durability;
use crate::{Clocks, WriteModel};

const BOARD: &[u8] = include_bytes!("../../../../../fixtures/trello/board.json");
const EDGE: &[u8] = include_bytes!("../../../../../fixtures/trello/edge.json");
/// The import's clock, for the fallbacks (`now_ms`).
const NOW: i64 = 1_717_000_000_000;

fn ms(date: &str) -> i64 {
    date.parse::<jiff::Timestamp>().unwrap().as_millisecond()
}

fn fixture(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap()
}

fn project(c: &Converted) -> Value {
    let doc: Value = serde_json::from_slice(&c.document).unwrap();
    assert_eq!(doc["version"], 1);
    assert_eq!(doc["now"], NOW);
    assert_eq!(doc["projects"].as_array().unwrap().len(), 1);
    doc["projects"][0].clone()
}

fn columns(project: &Value) -> &Vec<Value> {
    project["columns"].as_array().unwrap()
}

fn column<'a>(project: &'a Value, name: &str) -> &'a Value {
    columns(project)
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no column {name:?}"))
}

/// The task titled `title`, with the name of its column.
fn task<'a>(project: &'a Value, title: &str) -> (&'a Value, &'a str) {
    for col in columns(project) {
        for t in col["tasks"].as_array().unwrap() {
            if t["title"] == title {
                assert_eq!(t["columnId"], col["id"], "a task names its own column");
                return (t, col["name"].as_str().unwrap());
            }
        }
    }
    panic!("no task {title:?}")
}

fn titles(col: &Value) -> Vec<&str> {
    col["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["title"].as_str().unwrap())
        .collect()
}

fn texts(items: &Value) -> Vec<(String, bool)> {
    items
        .as_array()
        .map(|a| {
            a.iter()
                .map(|i| {
                    (
                        i["text"].as_str().unwrap().to_owned(),
                        i["done"].as_bool().unwrap(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn problem(card: Option<&str>, list: Option<&str>, message: &str) -> Problem {
    Problem {
        card: card.map(str::to_owned),
        list: list.map(str::to_owned),
        message: message.to_owned(),
    }
}

fn refused(bytes: &[u8], limits: &Limits) -> Vec<Problem> {
    match convert(bytes, limits, false, NOW) {
        Err(TrelloError::Refused(problems)) => {
            assert_eq!(problems.more, 0, "every problem listed");
            problems.listed
        }
        other => panic!("not refused: {other:?}"),
    }
}

/// Imports a converted document into a fresh store, through the real writer.
/// The document imported into a fresh store: (projects, columns, cards) made.
fn lands(document: &[u8]) -> (usize, usize, usize) {
    let dir = tempfile::tempdir().unwrap();
    let limits = Arc::new(Limits::default());
    let store = crate::store::open(
        &crate::store::Location::Sqlite(dir.path().join("store.db")),
        Durability::Normal,
    )
    .unwrap();
    let (model, thread) = WriteModel::start(
        &*store,
        limits.clone(),
        Arc::new(Clocks::default()),
        Box::new(|_| {}),
        Box::new(|_, _| {}),
    )
    .unwrap();
    let created = model.execute_blocking(Request {
        account: Some(crate::ids::IdKind::Account.generate()),
        key_id: None,
        command: Command::CreateAccount,
    });
    let Ok(Outcome::AccountCreated { id }) = created else {
        panic!("no account: {created:?}")
    };
    let outcome = model.execute_blocking(Request {
        account: Some(id),
        key_id: None,
        command: Command::import(document, &limits).unwrap(),
    });
    drop(model);
    thread.join().unwrap();
    match outcome.unwrap() {
        Outcome::Imported {
            projects,
            columns,
            tasks,
            project_ids,
        } => {
            assert_eq!(project_ids.len(), projects);
            assert!(project_ids.iter().all(|id| id.starts_with("b_")));
            (projects, columns, tasks)
        }
        other => panic!("not an import: {other:?}"),
    }
}

/// What the fixture holds, counted from its own JSON: lists, cards, non-empty checklist items,
/// comments.
fn counted(board: &Value) -> (usize, usize, usize, usize) {
    let n = |field: &str| board[field].as_array().unwrap().len();
    let items = board["checklists"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["checkItems"].as_array().unwrap())
        .filter(|i| i["name"] != "")
        .count();
    let comments = board["actions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["type"] == "commentCard")
        .count();
    (n("lists"), n("cards"), items, comments)
}
