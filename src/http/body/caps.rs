//! Each route's body cap, sized from the largest body a legitimate client can send to it
//! under the limits in force, and what the OpenAPI and discovery documents say of it.

use serde_json::{Value, json};
use write_model::Limits;

/// Bytes one character of text may take in a JSON body: a character outside the Basic
/// Multilingual Plane written as two `\uXXXX` escapes (what `ensure_ascii` encoders such as
/// Python's default send). Any other character takes at most 6 escaped, 4 in UTF-8. Limits
/// count characters, so a text at its limit may take this many bytes per character.
const ESCAPED: u64 = 12;
/// A PATCH may send every value guarded, `{before, after}`: the text twice.
const GUARDED: u64 = 2;
/// Room for what is not text in one body: field names in either spelling, ids, numbers,
/// stamps, punctuation, and a pretty-printer's indentation.
const FRAME: u64 = 16 * 1024;
/// The same for one entry of a list (a checklist item, a comment, a position, an id).
const ENTRY: u64 = 512;

/// One route that takes a body, and how its cap is sized from the limits in force.
pub struct Route {
    pub method: &'static str,
    /// Relative to the version prefix; `{id}` stands for any one segment.
    pub path: &'static str,
    /// The largest body a legitimate client can send under the limits (before `body_bytes`,
    /// which caps every route).
    size: fn(&Limits) -> u64,
    /// How the cap is sized, for the OpenAPI and discovery documents.
    pub sized: &'static str,
}

fn text(chars: usize) -> u64 {
    chars as u64 * ESCAPED
}

fn project(l: &Limits) -> u64 {
    GUARDED * (text(l.name_chars) + text(l.folder_chars) + text(l.photo_chars)) + FRAME
}

fn column(l: &Limits) -> u64 {
    GUARDED * (text(l.name_chars) + text(l.column_description_chars)) + FRAME
}

fn card_fields(l: &Limits) -> u64 {
    let tags = l.tags_per_task as u64 * (text(l.tag_chars) + ENTRY);
    GUARDED * (text(l.title_chars) + text(l.description_chars) + text(l.location_chars) + tags)
        + FRAME
}

fn checklist(l: &Limits) -> u64 {
    l.checklist_items_per_task as u64 * (text(l.checklist_item_chars) + ENTRY) + FRAME
}

fn comments(l: &Limits) -> u64 {
    l.comments_per_task as u64 * (text(l.comment_chars) + ENTRY) + FRAME
}

/// A card's create: its fields, a whole checklist and every comment (a read sent back lands
/// as it left); a batch holds `tasks_per_batch` of them.
fn card(l: &Limits) -> u64 {
    card_fields(l) + checklist(l) + comments(l)
}

/// Every route that reads a body, literal segments before `{id}` where both could match.
pub const ROUTES: &[Route] = &[
    Route {
        method: "POST",
        path: "projects",
        size: |l| project(l) + l.columns_per_project as u64 * column(l),
        sized: "a project's name, folder and photo, and its columns with their descriptions",
    },
    Route {
        method: "PATCH",
        path: "projects/{id}",
        size: project,
        sized: "a project's name, folder and photo, each guarded",
    },
    Route {
        method: "POST",
        path: "columns",
        size: column,
        sized: "a column's name and description",
    },
    Route {
        method: "PATCH",
        path: "columns/{id}",
        size: column,
        sized: "a column's name and description, each guarded",
    },
    Route {
        method: "POST",
        path: "tasks",
        size: |l| l.tasks_per_batch as u64 * card(l),
        sized: "a batch of tasks-per-batch cards, each with every field, a full checklist and every comment",
    },
    Route {
        method: "PATCH",
        path: "tasks/positions",
        size: |l| l.positions_per_request as u64 * ENTRY + FRAME,
        sized: "positions-per-request entries of {id, position}",
    },
    Route {
        method: "PATCH",
        path: "tasks/{id}",
        size: card_fields,
        sized: "a card's title, description, location and tags, each guarded",
    },
    Route {
        method: "POST",
        path: "tasks/{id}/tags",
        size: |l| text(l.tag_chars) + FRAME,
        sized: "one tag",
    },
    Route {
        method: "POST",
        path: "tasks/{id}/comments",
        size: |l| text(l.comment_chars) + FRAME,
        sized: "one comment",
    },
    Route {
        method: "POST",
        path: "tasks/{id}/checklist",
        size: checklist,
        sized: "a card's whole checklist",
    },
    Route {
        method: "POST",
        path: "tasks/{id}/checklist/order",
        size: |l| l.checklist_items_per_task as u64 * ENTRY + FRAME,
        sized: "the ids of a card's whole checklist",
    },
    Route {
        method: "PATCH",
        path: "checklist/{id}",
        size: |l| GUARDED * text(l.checklist_item_chars) + FRAME,
        sized: "one checklist item's text, guarded",
    },
    Route {
        method: "POST",
        path: "keys",
        size: |l| text(l.name_chars) + FRAME,
        sized: "a key's label, access and expiry",
    },
    Route {
        method: "POST",
        path: "import",
        size: |_| u64::MAX,
        sized: "a whole export file or Trello board",
    },
];

impl Route {
    /// The cap in force: what the route's largest legitimate body takes, at most `body_bytes`.
    pub fn cap(&self, limits: &Limits) -> u64 {
        (self.size)(limits).min(limits.body_bytes as u64)
    }

    fn matches(&self, method: &str, relative: &str) -> bool {
        if !self.method.eq_ignore_ascii_case(method) {
            return false;
        }
        let mut pattern = self.path.split('/');
        let mut path = relative.trim_end_matches('/').split('/');
        loop {
            match (pattern.next(), path.next()) {
                (None, None) => return true,
                (Some("{id}"), Some(seg)) if !seg.is_empty() => {}
                (Some(p), Some(seg)) if p == seg => {}
                _ => return false,
            }
        }
    }
}

/// The route a request's path names, under `/api/v1/` or `/api/`.
pub fn route(method: &str, path: &str) -> Option<&'static Route> {
    let relative = path
        .strip_prefix("/api/v1/")
        .or_else(|| path.strip_prefix("/api/"))?;
    ROUTES.iter().find(|r| r.matches(method, relative))
}

/// The body cap of a request: its route's, or `body_bytes` for one not in the table.
pub fn cap(method: &str, path: &str, limits: &Limits) -> u64 {
    route(method, path).map_or(limits.body_bytes as u64, |r| r.cap(limits))
}

/// Writes each route's cap into the OpenAPI document: `x-body-limit-bytes` on the operation
/// and the number in its 413's text.
pub fn document_caps(doc: &mut Value, limits: &Limits, placeholder: &str) {
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else {
        return;
    };
    for (path, item) in paths.iter_mut() {
        let Some(item) = item.as_object_mut() else {
            continue;
        };
        for (method, op) in item.iter_mut() {
            if op.get("requestBody").is_none() {
                continue;
            }
            let Some(route) = route(&method.to_ascii_uppercase(), path) else {
                continue;
            };
            let cap = route.cap(limits);
            op["x-body-limit-bytes"] = json!(cap);
            if let Some(text) = op
                .pointer_mut("/responses/413/description")
                .and_then(|d| d.as_str().map(str::to_owned))
            {
                op["responses"]["413"]["description"] =
                    json!(text.replace(placeholder, &format!("{cap} bytes ({})", route.sized)));
            }
        }
    }
}

/// What the discovery document says of bodies: each route's cap, the budget and the rate.
pub fn discovery(limits: &Limits) -> Value {
    let caps: Vec<Value> = ROUTES
        .iter()
        .map(|r| {
            json!({
                "method": r.method,
                "path": format!("/api/v1/{}", r.path),
                "bytes": r.cap(limits),
                "sized": r.sized,
            })
        })
        .collect();
    json!({
        "caps": caps,
        "sizing": "Each route's cap is the largest body a client can send under the limits: every text at its limit with every character a 12-byte escape (a character outside the BMP as two \\uXXXX), twice when a PATCH may guard it ({before, after}), plus 16 KiB for names, ids and whitespace and 512 bytes per list entry; never above body-bytes. Over it: 413 {limit: \"body-bytes\"}.",
        "budget": format!("At most {} bytes are held in request bodies across the whole service at once (limit \"body-budget-bytes\"); and at most a quarter of that by one account's bodies; a body that does not fit is refused at once with 503 {{code: \"body_budget\"}} and Retry-After, nothing read.", limits.body_budget_bytes),
        "rate": format!("After a grace of {} s a body must have sent {} bytes for every second past it; slower, 408 request_timeout and the connection is closed.", limits.body_seconds, limits.body_bytes_per_second),
        "width": format!("No object in a body may name more than {} keys (422 object_too_wide).", write_model::input::MAX_OBJECT_KEYS),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_route_finds_its_cap_and_literals_come_before_ids() {
        let l = Limits::default();
        let at = |m: &str, p: &str| route(m, p).map(|r| r.path);
        assert_eq!(
            at("PATCH", "/api/v1/tasks/positions"),
            Some("tasks/positions")
        );
        assert_eq!(at("PATCH", "/api/tasks/t_1"), Some("tasks/{id}"));
        assert_eq!(
            at("POST", "/api/v1/tasks/t_1/checklist/order"),
            Some("tasks/{id}/checklist/order")
        );
        assert_eq!(at("GET", "/api/v1/tasks/t_1"), None);
        assert_eq!(at("POST", "/api/v1/tasks/t_1/nope"), None);
        // A card PATCH: a guarded 262,144-character description at 12 bytes a character.
        let patch = cap("PATCH", "/api/v1/tasks/t_1", &l);
        assert!(patch > 2 * 12 * 262_144 && patch < 8 << 20, "{patch}");
        assert_eq!(cap("POST", "/api/v1/tasks", &l), l.body_bytes as u64);
        assert_eq!(cap("POST", "/api/v1/import", &l), l.body_bytes as u64);
        assert!(cap("POST", "/api/v1/tasks/t_1/tags", &l) < 32 << 10);
    }
}
