//! The analytic exports (`GET /export?format=csv|ndjson`): one row per live card, finished
//! ones included and the recycle bin not, as in the JSON export, in the board's order
//! (projects, then columns, by position; cards by position within their column).
//!
//! An export takes the account's cards under the document's lock as shared pointers (a write
//! replaces a card, never changes it in place) and writes rows a chunk at a time while the
//! reply is sent, so the file is never built whole in memory.

use std::sync::Arc;

use bytes::Bytes;
use serde::Serialize;
use write_model::records::{Column, Project, Task};

use crate::chunks::CHUNK;
use crate::doc::AccountDoc;
use crate::shape::ItemView;

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

/// The CSV header, in column order; NDJSON carries the same fields in camelCase.
pub const CSV_COLUMNS: [&str; 22] = [
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
    "checklist_done",
    "checklist_total",
    "comments",
    "position",
    "completed_at",
    "cancelled_at",
    "updated_at",
];

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
            w.write_record(CSV_COLUMNS).expect("writing to memory");
        }
        while self.next < self.cards.len() && w.get_ref().len() < CHUNK {
            let (p, c, task) = &self.cards[self.next];
            self.next += 1;
            let (project, column) = (&self.projects[*p as usize], &self.columns[*c as usize]);
            let tags: Vec<&str> = task.tags.iter().map(|t| t.text.as_str()).collect();
            let done = task.checklist.iter().filter(|i| i.done).count();
            let record: [String; 22] = [
                project.id.clone(),
                cell(&project.name),
                cell(project.folder.as_deref().unwrap_or("")),
                column.id.clone(),
                cell(&column.name),
                task.id.clone(),
                task.parent_id.clone().unwrap_or_default(),
                cell(&task.title),
                cell(&task.description),
                task.priority.to_string(),
                task.effort.map(effort).unwrap_or_default().to_owned(),
                task.deadline.clone().unwrap_or_default(),
                task.deadline_time.clone().unwrap_or_default(),
                cell(&task.location),
                cell(&tags.join(";")),
                done.to_string(),
                task.checklist.len().to_string(),
                task.comments.len().to_string(),
                task.position.to_string(),
                task.completed_at.map(iso).unwrap_or_default(),
                task.cancelled_at.map(iso).unwrap_or_default(),
                iso(task.updated_at),
            ];
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
            let line = Line {
                project_id: &project.id,
                project_name: &project.name,
                project_folder: project.folder.as_deref(),
                column_id: &column.id,
                column_name: &column.name,
                task_id: &task.id,
                parent_id: task.parent_id.as_deref(),
                title: &task.title,
                description: &task.description,
                priority: task.priority,
                effort: task.effort.map(effort),
                deadline: task.deadline.as_deref(),
                deadline_time: task.deadline_time.as_deref(),
                location: &task.location,
                tags: task.tags.iter().map(|t| t.text.as_str()).collect(),
                checklist_done: task.checklist.iter().filter(|i| i.done).count(),
                checklist_total: task.checklist.len(),
                checklist: task
                    .checklist
                    .iter()
                    .enumerate()
                    .map(|(position, item)| ItemView { item, position })
                    .collect(),
                comments: task
                    .comments
                    .iter()
                    .map(|c| CommentLine {
                        id: &c.id,
                        text: &c.text,
                        created_at: iso(c.created_at),
                    })
                    .collect(),
                position: task.position,
                completed_at: task.completed_at.map(iso),
                cancelled_at: task.cancelled_at.map(iso),
                updated_at: iso(task.updated_at),
            };
            serde_json::to_writer(&mut *out, &line).expect("writing to memory");
            out.push(b'\n');
        }
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

/// One NDJSON line.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Line<'a> {
    project_id: &'a str,
    project_name: &'a str,
    project_folder: Option<&'a str>,
    column_id: &'a str,
    column_name: &'a str,
    task_id: &'a str,
    parent_id: Option<&'a str>,
    title: &'a str,
    description: &'a str,
    priority: i64,
    effort: Option<&'static str>,
    deadline: Option<&'a str>,
    deadline_time: Option<&'a str>,
    location: &'a str,
    tags: Vec<&'a str>,
    checklist_done: usize,
    checklist_total: usize,
    checklist: Vec<ItemView<'a>>,
    comments: Vec<CommentLine<'a>>,
    position: f64,
    completed_at: Option<String>,
    cancelled_at: Option<String>,
    updated_at: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CommentLine<'a> {
    id: &'a str,
    text: &'a str,
    created_at: String,
}

fn effort(e: write_model::checks::Effort) -> &'static str {
    use write_model::checks::Effort;
    match e {
        Effort::Easy => "easy",
        Effort::Medium => "medium",
        Effort::Hard => "hard",
    }
}

/// A text cell made safe for spreadsheets: one that begins with `=`, `+`, `-` or `@` (or a
/// tab or carriage return, which some read past) gets a leading `'`, so it is never run as
/// a formula (CSV injection).
pub fn cell(text: &str) -> String {
    match text.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => format!("'{text}"),
        _ => text.to_owned(),
    }
}

/// A stamp in ms as ISO 8601 UTC with milliseconds: `2026-11-25T12:00:00.000Z`.
pub fn iso(ms: i64) -> String {
    match jiff::Timestamp::from_millisecond(ms) {
        Ok(t) => format!(
            "{}.{:03}Z",
            t.strftime("%Y-%m-%dT%H:%M:%S"),
            ms.rem_euclid(1000)
        ),
        Err(_) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_read_as_iso_utc_with_milliseconds() {
        assert_eq!(iso(1_795_608_000_000), "2026-11-25T12:00:00.000Z");
        assert_eq!(iso(1_795_608_000_123), "2026-11-25T12:00:00.123Z");
        assert_eq!(iso(0), "1970-01-01T00:00:00.000Z");
    }

    #[test]
    fn formula_like_cells_are_defused() {
        for bad in ["=1+2", "+1", "-1", "@SUM(A1)", "\t=x", "\r=x"] {
            assert_eq!(cell(bad), format!("'{bad}"));
        }
        for fine in ["plain", "1-2", "a=b", ""] {
            assert_eq!(cell(fine), fine);
        }
    }
}
