//! The analytic exports (`GET /export?format=csv|ndjson`): one row per live card, finished
//! ones included and the recycle bin not, as in the JSON export, in the board's order
//! (projects, then columns, by position; cards by position within their column).
//!
//! An export takes the account's cards under the document's lock as shared pointers (a write
//! replaces a card, never changes it in place) and writes rows a chunk at a time while the
//! reply is sent, so the file is never built whole in memory.
//!
//! The columns follow the card's field table (`domain::field::TaskFields::EXPORTED`),
//! each cell written by its value's type: first where the card is (its project, list and
//! id, and its parent), then its fields in the table's order, then what its checklist and
//! comments count, then its position and stamps. A field added to the table takes its
//! place among the card's fields without a line here.

use std::sync::{Arc, LazyLock};

use bytes::Bytes;
use domain::field::{Exported, TaskFields, snake_case};
use domain::records::{Column, Project, Task};
use serde::Serialize;

use crate::chunks::CHUNK;
use crate::doc::AccountDoc;
use crate::shape::ItemView;

pub use domain::field::{cell, iso};

/// An analytic export's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// RFC 4180: UTF-8, CRLF line ends, a header row.
    Csv,
    /// One JSON object per line.
    Ndjson,
}

impl Format {
    pub fn parse(s: &str) -> Option<Format> {
        match s {
            "csv" => Some(Format::Csv),
            "ndjson" => Some(Format::Ndjson),
            _ => None,
        }
    }

    pub fn extension(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::Ndjson => "ndjson",
        }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            Format::Csv => "text/csv; charset=utf-8; header=present",
            Format::Ndjson => "application/x-ndjson",
        }
    }
}

/// Table fields placed apart from the card's other fields: its list (the frame says it),
/// its parent (beside its id), and its position and end stamps (at the end, before
/// `updated_at`), where the exports have always had them.
const COLUMN: &str = "columnId";
const PARENT: &str = "parentId";
const TAIL: [&str; 3] = ["position", "completedAt", "cancelledAt"];

/// One part of a row.
enum Part {
    ProjectId,
    ProjectName,
    ProjectFolder,
    ColumnId,
    ColumnName,
    TaskId,
    Field(&'static Exported<Task>),
    /// What the checklist and comments count (NDJSON nests them too).
    Counts,
    UpdatedAt,
}

/// A row's parts in column order, from the card's field table.
static PARTS: LazyLock<Vec<Part>> = LazyLock::new(|| {
    let fields = TaskFields::EXPORTED;
    let field = |name: &str| fields.iter().find(|f| f.name == name).map(Part::Field);
    let mut parts = vec![
        Part::ProjectId,
        Part::ProjectName,
        Part::ProjectFolder,
        Part::ColumnId,
        Part::ColumnName,
        Part::TaskId,
    ];
    parts.extend(field(PARENT));
    let placed = |name: &str| name == COLUMN || name == PARENT || TAIL.contains(&name);
    parts.extend((fields.iter()).filter(|f| !placed(f.name)).map(Part::Field));
    parts.push(Part::Counts);
    parts.extend(TAIL.iter().filter_map(|name| field(name)));
    parts.push(Part::UpdatedAt);
    parts
});

/// The CSV header, in column order; NDJSON carries the same fields in camelCase.
pub static CSV_COLUMNS: LazyLock<Vec<String>> = LazyLock::new(|| {
    let mut names = Vec::new();
    for part in PARTS.iter() {
        let fixed: &[&str] = match part {
            Part::ProjectId => &["project_id"],
            Part::ProjectName => &["project_name"],
            Part::ProjectFolder => &["project_folder"],
            Part::ColumnId => &["column_id"],
            Part::ColumnName => &["column_name"],
            Part::TaskId => &["task_id"],
            Part::Field(f) => {
                names.push(snake_case(f.name));
                continue;
            }
            Part::Counts => &["checklist_done", "checklist_total", "comments"],
            Part::UpdatedAt => &["updated_at"],
        };
        names.extend(fixed.iter().map(|n| (*n).to_owned()));
    }
    names
});

/// An export's rows, written out a chunk at a time as the iterator is pulled.
pub struct Rows {
    format: Format,
    projects: Vec<Project>,
    columns: Vec<Column>,
    /// Each card with the index of its project and column.
    cards: Vec<(u32, u32, Arc<Task>)>,
    next: usize,
    header: bool,
}

impl Rows {
    /// Every live card of `doc` in the board's order.
    pub(crate) fn of(doc: &AccountDoc, format: Format) -> Rows {
        let mut rows = Rows {
            format,
            projects: Vec::new(),
            columns: Vec::new(),
            cards: Vec::new(),
            next: 0,
            header: false,
        };
        for project_id in doc.project_ids() {
            let entry = &doc.projects[project_id];
            let p = rows.projects.len() as u32;
            rows.projects.push(entry.project.clone());
            let mut columns: Vec<&Column> = (entry.columns.iter())
                .filter_map(|id| doc.columns.get(id))
                .collect();
            columns.sort_by(|a, b| a.position.total_cmp(&b.position).then(a.id.cmp(&b.id)));
            let first = rows.columns.len();
            rows.columns.extend(columns.into_iter().cloned());
            let mut by_column: ahash::AHashMap<&str, Vec<Arc<Task>>> = ahash::AHashMap::new();
            for (_, id) in entry.tasks.iter() {
                if let Some(task) = doc.tasks.get(id) {
                    by_column
                        .entry(&task.column_id)
                        .or_default()
                        .push(task.clone());
                }
            }
            for c in first..rows.columns.len() {
                let cards = by_column.remove(rows.columns[c].id.as_str());
                for task in cards.into_iter().flatten() {
                    rows.cards.push((p, c as u32, task));
                }
            }
        }
        rows
    }

    /// How many cards the export holds.
    pub fn len(&self) -> usize {
        self.cards.len()
    }

    pub fn is_empty(&self) -> bool {
        self.cards.is_empty()
    }

    fn csv_chunk(&mut self, out: &mut Vec<u8>) {
        let mut w = csv::WriterBuilder::new()
            .terminator(csv::Terminator::CRLF)
            .from_writer(out);
        if !self.header {
            self.header = true;
            w.write_record(CSV_COLUMNS.iter())
                .expect("writing to memory");
        }
        let mut record: Vec<String> = Vec::with_capacity(CSV_COLUMNS.len());
        while self.next < self.cards.len() && w.get_ref().len() < CHUNK {
            let (p, c, task) = &self.cards[self.next];
            self.next += 1;
            let (project, column) = (&self.projects[*p as usize], &self.columns[*c as usize]);
            record.clear();
            for part in PARTS.iter() {
                match part {
                    Part::ProjectId => record.push(project.id.clone()),
                    Part::ProjectName => record.push(cell(&project.name)),
                    Part::ProjectFolder => {
                        record.push(cell(project.folder.as_deref().unwrap_or("")))
                    }
                    Part::ColumnId => record.push(column.id.clone()),
                    Part::ColumnName => record.push(cell(&column.name)),
                    Part::TaskId => record.push(task.id.clone()),
                    Part::Field(f) => record.push((f.cell)(task)),
                    Part::Counts => {
                        let done = task.checklist.iter().filter(|i| i.done).count();
                        record.push(done.to_string());
                        record.push(task.checklist.len().to_string());
                        record.push(task.comments.len().to_string());
                    }
                    Part::UpdatedAt => record.push(iso(task.updated_at)),
                }
            }
            w.write_record(&record).expect("writing to memory");
            // The writer buffers; flushing per row keeps the chunk's size in view.
            w.flush().expect("writing to memory");
        }
        w.flush().expect("writing to memory");
    }

    fn ndjson_chunk(&mut self, out: &mut Vec<u8>) {
        while self.next < self.cards.len() && out.len() < CHUNK {
            let (p, c, task) = &self.cards[self.next];
            self.next += 1;
            let (project, column) = (&self.projects[*p as usize], &self.columns[*c as usize]);
            let mut line = LineWriter::start(out);
            for part in PARTS.iter() {
                match part {
                    Part::ProjectId => line.member("projectId", &project.id),
                    Part::ProjectName => line.member("projectName", &project.name),
                    Part::ProjectFolder => line.member("projectFolder", &project.folder),
                    Part::ColumnId => line.member("columnId", &column.id),
                    Part::ColumnName => line.member("columnName", &column.name),
                    Part::TaskId => line.member("taskId", &task.id),
                    Part::Field(f) => {
                        line.key(f.name);
                        (f.line)(task, line.out);
                    }
                    Part::Counts => {
                        let done = task.checklist.iter().filter(|i| i.done).count();
                        line.member("checklistDone", &done);
                        line.member("checklistTotal", &task.checklist.len());
                        let items: Vec<ItemView> = (task.checklist.iter().enumerate())
                            .map(|(position, item)| ItemView { item, position })
                            .collect();
                        line.member("checklist", &items);
                        let comments: Vec<CommentLine> = (task.comments.iter())
                            .map(|c| CommentLine {
                                id: &c.id,
                                text: &c.text,
                                created_at: iso(c.created_at),
                            })
                            .collect();
                        line.member("comments", &comments);
                    }
                    Part::UpdatedAt => line.member("updatedAt", &iso(task.updated_at)),
                }
            }
            line.out.extend_from_slice(b"}\n");
        }
    }
}

/// Writes one NDJSON object member by member, as serde writes a struct (compact, in order).
struct LineWriter<'a> {
    out: &'a mut Vec<u8>,
    first: bool,
}

impl<'a> LineWriter<'a> {
    fn start(out: &'a mut Vec<u8>) -> Self {
        out.push(b'{');
        LineWriter { out, first: true }
    }

    /// `"name":`; the names are camelCase identifiers, nothing to escape.
    fn key(&mut self, name: &str) {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
        self.out.push(b'"');
        self.out.extend_from_slice(name.as_bytes());
        self.out.extend_from_slice(b"\":");
    }

    fn member<T: Serialize + ?Sized>(&mut self, name: &str, value: &T) {
        self.key(name);
        serde_json::to_writer(&mut *self.out, value).expect("writing to memory");
    }
}

impl Iterator for Rows {
    type Item = Bytes;

    fn next(&mut self) -> Option<Bytes> {
        if self.next >= self.cards.len() && (self.header || self.format == Format::Ndjson) {
            return None;
        }
        let mut out = Vec::with_capacity(CHUNK + 4096);
        match self.format {
            Format::Csv => self.csv_chunk(&mut out),
            Format::Ndjson => self.ndjson_chunk(&mut out),
        }
        Some(Bytes::from(out))
    }
}

/// A comment in an NDJSON line: its stamp as ISO text.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CommentLine<'a> {
    id: &'a str,
    text: &'a str,
    created_at: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The header the exports have always had: the table's fields in their places.
    #[test]
    fn the_csv_header_follows_the_card_table() {
        let header = CSV_COLUMNS.join(",");
        assert!(
            header.starts_with(
                "project_id,project_name,project_folder,column_id,column_name,task_id,parent_id,\
                 title,description,priority,effort,deadline,deadline_time,location,tags,"
            ),
            "{header}"
        );
        assert!(
            header.ends_with(
                "checklist_done,checklist_total,comments,position,completed_at,cancelled_at,\
                 updated_at"
            ),
            "{header}"
        );
        for f in TaskFields::EXPORTED.iter().filter(|f| f.name != COLUMN) {
            let name = snake_case(f.name);
            assert_eq!(
                CSV_COLUMNS.iter().filter(|c| **c == name).count(),
                1,
                "{name} once in the header"
            );
        }
    }
}
