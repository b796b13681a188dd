//! The reply of a search: `{ok, total, hits:[{task, projectId, score, highlights}], cursor?}`,
//! each hit's card as a read shapes it, taken from the document as it is now.

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

use std::sync::Arc;

use domain::records::Task;

use super::fields::texts;
use super::highlight::Marker;
use super::query::SearchQuery;
use super::{Found, Score};
use crate::doc::AccountDoc;
use crate::shape::TaskView;

#[derive(Serialize)]
struct Reply<'a> {
    ok: bool,
    total: usize,
    hits: Vec<Hit<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cursor: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Hit<'a> {
    task: TaskView<'a>,
    project_id: &'a str,
    score: f32,
    highlights: Highlights,
}

/// Field name to snippets, in the fields' order.
struct Highlights(Vec<(&'static str, Vec<String>)>);

impl Serialize for Highlights {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (field, snippets) in &self.0 {
            map.serialize_entry(field, snippets)?;
        }
        map.end()
    }
}

/// The hits' cards as the document holds them now, with their `order`: taken under the
/// document's lock, rendered by [`render`] after it is let go (highlighting reads every text
/// of every hit). A hit whose card left the document since the search ran is left out.
pub fn take(doc: &AccountDoc, found: &Found) -> Vec<(Arc<Task>, usize, Score)> {
    found
        .hits
        .iter()
        .filter_map(|(id, score)| {
            let task = doc.tasks.get(id.as_str())?;
            let order = (doc.projects.get(&task.project_id))
                .and_then(|entry| entry.order_of(task))
                .unwrap_or(0);
            Some((task.clone(), order, *score))
        })
        .collect()
}

/// The reply's JSON, from the hits [`take`] took.
pub fn render(taken: &[(Arc<Task>, usize, Score)], found: &Found, query: &SearchQuery) -> Vec<u8> {
    let mut marker = Marker::new(query);
    let hits = taken
        .iter()
        .map(|(task, order, score)| Hit {
            task: TaskView {
                task,
                order: *order,
            },
            project_id: &task.project_id,
            score: *score,
            highlights: Highlights(marker.highlights(&texts(task))),
        })
        .collect();
    let reply = Reply {
        ok: true,
        total: found.total,
        hits,
        cursor: found.next.map(|c| c.encode()),
    };
    serde_json::to_vec(&reply).expect("a search reply always serialises")
}
