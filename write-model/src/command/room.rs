//! The least bytes a create adds to an account's storage (each create's `least_bytes`), known before it runs, so that an
//! import or a batch too large for the room left is refused before the writer does its work
//! ([`super::Ctx::expect_room`]); the exact count stays [`super::Ctx::settle_storage`]'s,
//! after the writes.
//!
//! Each figure is a floor, never an estimate that could refuse what fits: a record's JSON
//! holds at least its field names, one character for each value, and the UTF-8 bytes of each
//! text it keeps (escaping only lengthens them). Tags are left out (equal ones merge).

use std::sync::LazyLock;

use serde::Serialize;
use serde_json::Value;

use super::column::CreateColumn;
use super::import::Import;
use super::project::CreateProject;
use super::task::CreateTask;
use crate::field::FieldValue;
use crate::limits::Limits;
use crate::records::{Column, Project, Task};

/// The least JSON a record of this shape takes: `{`, `}`, a comma between fields, and each
/// field as `"name":` with a one-character value.
fn skeleton<T: Serialize>(sample: &T) -> i64 {
    let Ok(Value::Object(fields)) = serde_json::to_value(sample) else {
        return 0;
    };
    let named: usize = fields.keys().map(|k| k.len() + 4).sum();
    (named + fields.len() + 1) as i64
}

/// The skeletons of a project, a column and a card.
static SKELETONS: LazyLock<[i64; 3]> = LazyLock::new(|| {
    let project = Project::default();
    let column = Column::default();
    let task = Task::default();
    [skeleton(&project), skeleton(&column), skeleton(&task)]
});

impl CreateTask {
    /// The least bytes a card's create adds.
    pub(crate) fn least_bytes(&self, limits: &Limits) -> i64 {
        let c = self;
        let f = &c.fields;
        let texts = f.title.as_ref().map_or(0, |i| i.after.as_str().len())
        + f.description.as_ref().map_or(0, |i| i.after.as_str().len())
        + f.location.as_ref().map_or(0, |i| i.after.as_str().len())
        // An item's text is cut to the limit in characters, each at least one byte.
        + c.checklist
            .iter()
            .map(|i| i.text.len().min(limits.checklist_item_chars))
            .sum::<usize>()
        + c.comments.iter().map(|m| m.text.len()).sum::<usize>();
        SKELETONS[2] + texts as i64
    }
}

impl CreateColumn {
    /// The least bytes a column's create adds.
    pub(crate) fn least_bytes(&self) -> i64 {
        let f = &self.fields;
        let texts = f.name.as_ref().map_or(0, |i| i.after.as_str().len())
            + f.description
                .as_ref()
                .and_then(|i| i.after.as_ref())
                .map_or(0, |d| d.as_str().len());
        SKELETONS[1] + texts as i64
    }
}

impl CreateProject {
    /// The least bytes a project's create adds, with its columns.
    pub(crate) fn least_bytes(&self) -> i64 {
        let c = self;
        let f = &c.fields;
        let texts = f.name.as_ref().map_or(0, |i| i.after.as_str().len())
            + f.folder
                .as_ref()
                .and_then(|i| i.after.to_stored())
                .map_or(0, |s| s.len())
            + f.photo
                .as_ref()
                .and_then(|i| i.after.as_ref())
                .map_or(0, |p| p.as_str().len());
        SKELETONS[0] + texts as i64 + c.columns.iter().map(CreateColumn::least_bytes).sum::<i64>()
    }
}

impl Import {
    /// The least bytes an import adds, were every record in it new.
    pub(crate) fn least_bytes(&self, limits: &Limits) -> i64 {
        self.projects
            .iter()
            .map(CreateProject::least_bytes)
            .sum::<i64>()
            + self
                .tasks
                .iter()
                .map(|t| t.least_bytes(limits))
                .sum::<i64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::Body;

    /// Each floor stays at or under the bytes the record it makes is stored in.
    #[test]
    fn a_floor_is_never_above_the_stored_json() {
        let limits = Limits::default();
        let body = br#"{"columnId":"c_x","title":"T\u00e9","description":"a \"quoted\" line",
            "location":"here","checklist":[{"text":"one"}],"comments":[{"text":"two"}]}"#;
        let parsed = Body::parse(body, super::super::task::CREATE_FIELDS).expect("body");
        let c = CreateTask::from_body(&parsed, &limits).expect("create");
        let stored = Task {
            id: "t_0".into(),
            project_id: "b_0".into(),
            column_id: "c_x".into(),
            title: "Té".into(),
            description: "a \"quoted\" line".into(),
            priority: 4,
            location: "here".into(),
            rev: 1,
            updated_at: 1,
            checklist: vec![crate::records::ChecklistItem {
                id: "k".into(),
                text: "one".into(),
                done: false,
            }],
            comments: vec![crate::records::Comment {
                id: "m".into(),
                text: "two".into(),
                created_at: 1,
            }],
            ..Task::default()
        };
        let json = serde_json::to_string(&stored).expect("json");
        let floor = c.least_bytes(&limits);
        assert!(floor > 100, "the field names alone: {floor}");
        assert!(
            floor <= json.len() as i64,
            "{floor} > {}: {json}",
            json.len()
        );
    }
}
