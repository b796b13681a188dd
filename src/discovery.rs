//! The discovery document served at `GET /api/v1` and `GET /api`: the service describing its
//! routes, rules, limits in force, and the team's choices where the specification and the
//! contract are silent.

use serde_json::{Value, json};
use write_model::Limits;

/// Choices the team made where the specification and the contract are silent.
const DECISIONS: &[&str] = &[
    "A guarded value {before, after} on a create is accepted; only `after` is used (there is no prior value to guard), and `before` must still be a valid value of the field (422 otherwise).",
    "Stored bytes of a record are the UTF-8 length of its stored JSON (the read shape without the computed `order`).",
    "A column's `updatedAt` is the column's own last change; a project's `updatedAt` also moves with anything inside it.",
    "Generated ids are the type prefix plus 22 URL-safe characters: 8 that encode the creation time (so ids made later sort later) and 14 random ones (84 bits). Clients treat ids as opaque.",
    "GET /projects?name= matches the whole name, case-folded (Unicode lowercase), after trimming to 40 characters like a written name.",
    "An empty body on a POST that needs one answers 400 (not JSON).",
    "Unknown routes answer 404 in the JSON envelope; an unknown version path answers 403 without an Authorization header, 401 with a bad key and 404 with a good one.",
    "Query parameters are matched by exact name; an unknown one answers 422 naming it.",
    "A known path called with a method it does not take answers 405 with an `Allow` header (after authentication, like any route under /api).",
    "Every GET route (health, discovery and the OpenAPI document included; not the socket) also answers HEAD: the same status and headers, Content-Length and ETag included, and no body; counted against the allowance like the GET.",
    "`id: null` on a create means no id was chosen, like leaving it out.",
    "A whole number written with a zero fraction (`2.0`) counts as that integer, as JSON Schema counts it; `2.5` where an integer belongs answers 422.",
    "A create retried with an id in use and the same fields answers 200 with the record, for checklist items, tags and comments as for projects, columns and cards; other fields answer 409 with the record as read.",
    "A batch entry whose id clashes answers 409 with `index`; an id sent twice in one batch answers 422 with `index`.",
    "Deleting always works on a full account, even though marking records deleted adds a few bytes.",
    "PATCH `cancelledAt: <timestamp>` on a live card deletes it as DELETE does (one bin entry); `cancelledAt: null` on a card that heads a bin entry restores that entry; on a card deleted with its parent or column it answers 422 naming `cancelledAt`.",
    "`GET /changes` sends a card leaving the window neither in `cards` nor in `taskIds`; a client drops it from its window, and it stays under /projects?completed=all.",
    "`cutoff` is now minus 30 days for `recent`, 0 for `all` and now for `none`.",
    "Projects and columns destroyed out of the bin appear in `/changes` as markers `{id, deletedAt}` (lists also carry `projectId`), kept for good.",
    "A restore from the bin is not an undo step; undoing the deletion that put an entry there restores it, by the deleting key.",
    "Positions read back as given; a whole number reads back without a fraction.",
    "Every write reply shows the record as the read model holds it once the write is visible: a concurrent later write may already show in it.",
];

/// The discovery document, rendered once at start-up (the limits cannot change while serving).
pub fn discovery_document(limits: &Limits, engine: &str, cors_origins: &[String]) -> Value {
    let endpoints: Vec<Value> = crate::http::endpoints()
        .iter()
        .map(|(method, path, summary)| json!({"method": method, "path": path, "summary": summary}))
        .collect();
    // A struct of plain integers always serialises; failing here would be a programming error.
    let limits_in_force = serde_json::to_value(limits).expect("Limits serialise to JSON");
    json!({
        "ok": true,
        "name": "Workboard",
        "version": env!("CARGO_PKG_VERSION"),
        "documentVersion": 1,
        "openapi": "/api/v1/openapi.json",
        "versioning": versioning(),
        "authentication": authentication(limits),
        "shape": shape(limits),
        "catchingUp": catching_up(limits),
        "fieldNames": field_names(),
        "concurrency": concurrency(limits),
        "deletes": deletes(limits),
        "endpoints": endpoints,
        "fieldNotes": field_notes(limits),
        "limits": limits_in_force,
        "bodyLimits": crate::http::body::discovery(limits),
        "storage": storage(limits, engine),
        "errors": errors(limits),
        "compression": compression(),
        "cors": cors(cors_origins),
        "idempotency": crate::http::idempotency::discovery(limits),
        "search": search(limits),
        "exports": exports(),
        "calendar": calendar(),
        "imports": imports(limits),
        "decisions": DECISIONS,
    })
}

fn compression() -> Value {
    use crate::http::encoding::{OFFERED, THRESHOLD};
    json!({
        "offered": OFFERED,
        "threshold": THRESHOLD,
        "negotiation": format!("Every JSON reply of at least {THRESHOLD} bytes negotiates Accept-Encoding among {}; on equal q-values gzip wins. A smaller reply, `identity`, no header, or only codings not offered (br among them) get the uncompressed bytes. Every JSON reply carries `Vary: Accept-Encoding`; a compressed one carries `Content-Encoding`.", OFFERED.join(", ")),
        "gzip": "One gzip member (every browser reads it): the cached fragments of a reply are kept as deflate segments, compressed once when the fragment is rendered, and joined per request with the small envelope pieces.",
        "zstd": "Several zstd frames, one per cached fragment and envelope piece, concatenated: a valid zstd stream (RFC 8878, section 3) which libzstd-based clients decode whole. Chromium's decoder stops after the first frame, which is why gzip wins ties (browsers send both).",
        "br": "Not offered: brotli streams cannot be joined, so cached fragments could not be reused.",
        "etag": "ETags are weak and the same for every encoding (the representations are equivalent); with `Vary: Accept-Encoding` a cache keeps one copy per encoding, and a 304 is correct for any of them.",
    })
}

fn cors(origins: &[String]) -> Value {
    json!({
        "origins": origins,
        "rule": "Only the origins given with --cors-origin (WORKBOARD_CORS_ORIGINS), none by default, and only under /api. A listed origin gets Access-Control-Allow-Origin with its own value and the exposed headers ETag, RateLimit-*, Retry-After, X-Request-Id, Content-Disposition and Idempotent-Replayed; an origin not listed gets no CORS headers. With origins listed every /api reply carries Vary: Origin.",
        "preflight": format!("OPTIONS with Access-Control-Request-Method answers 204 before authentication and is never counted against an allowance: methods GET, POST, PATCH, DELETE; headers Authorization, Content-Type, If-None-Match, X-Request-Id, Idempotency-Key; Access-Control-Max-Age {}.", crate::http::cors::MAX_AGE_SECONDS),
        "credentials": "No credentials mode: keys travel in the Authorization header, never in cookies.",
    })
}

fn versioning() -> Value {
    json!({
        "current": "v1, served under /api/v1/. The unversioned /api/... is the same route and stays open.",
        "otherVersions": "Any other version path (such as /api/v2/) answers 404 until that version exists: 403 without an Authorization header, 401 with a bad key, 404 with a good one.",
        "documentVersion": "`documentVersion` (the `version` of the whole-account document) is the format of that document and moves independently of the path version.",
        "compatibility": "Early access: key holders are told before a change breaks compatibility. A later version does not change how v1 answers.",
    })
}

fn authentication(l: &Limits) -> Value {
    json!({
        "header": "Every request but the keyless ones below carries `Authorization: Bearer <key>`. One key reaches everything in its account.",
        "keyless": format!("GET /api/health is never limited. This document (GET /api/v1, GET /api) and GET /api/v1/openapi.json answer without a key, limited together to {} requests per {} seconds per client address (then 429). The change socket authenticates by its ticket.", l.discovery_burst, l.discovery_burst_seconds),
        "missingHeader": "A request with no Authorization header at all is refused at the edge with 403 and an HTML body, not JSON. Adding the header turns a key problem into a normal 401.",
        "badKey": format!("A header that is not `Bearer <key>`, an unknown key, a revoked key or an expired key answers 401 JSON. After {} such replies to one client address within a fixed 10-second window, its further bad-key requests get 429 until the window ends; requests with a valid key are not affected.", l.bad_key_burst),
        "clientAddress": "The socket's peer address. X-Forwarded-For counts only when the server runs with --trust-proxy.",
        "otherAccounts": "Another account's record answers 404, exactly like one that does not exist.",
        "keyFormat": "`wb_` followed by at least 43 URL-safe characters (256 bits) from the operating system's generator. A key is shown once when issued; the store keeps only HMAC-SHA256(pepper, key), the pepper being a random secret in the data folder. Lookups are by that digest with a constant-time comparison. No key, ticket or pepper reaches a log.",
        "keys": format!("Keys are issued by hand (`workboard keys issue [--access full|read|calendar] [--expires-at MS]`). POST /keys {{label?, access?, expiresAt?}} adds a key to the caller's account (at most {} working keys; an expired key keeps no slot); DELETE /keys/:id revokes one; revoking the account's last working key, its last working full key, or its last full key that never expires (the account would lock itself out when the others expire) answers 422 naming `id`. A key never outranks the key that makes it: a read key makes no key (403 `read_only_key`), and a key made by an expiring key expires no later (see `expiry`). GET /keys lists every key not revoked with its `access` and `expiresAt` (null: never), expired ones included until revoked. Use one key per device or script and keep a spare: a lost only key cannot be recovered.", l.keys_per_account),
        "access": "A key's `access` is `full` (the default) or `read`. A read key may call every GET route, /changes, POST /live/ticket and the live socket; any other write (POST, PATCH, PUT, DELETE), POST /keys and DELETE /keys/:id included, answers 403 JSON {ok:false, error, code:\"read_only_key\"}, is counted as a read (not a write) and writes nothing. A full key can issue full, read or calendar keys; a read key can neither issue nor revoke keys. A calendar key (`access: \"calendar\"`) fetches the calendar feed alone (GET /calendar.ics), in the Authorization header or as `?key=` in the feed's URL (calendar apps send no header); every other route, keyless documents included, answers it 403 JSON `calendar_key`, counted as a read. It is listed, expires and is revoked like any key.",
        "keyInQuery": "`?key=` is taken by GET /calendar.ics alone, and only with a calendar key: `?key=` on any other route, or a full or read key in it, answers 403 JSON `key_in_query` (refused rather than ignored, so a key pasted into a URL is noticed). A key both in the header and in `?key=` answers 400. The query string never reaches the log (its lines carry the path and the route template only).",
        "expiry": "`expiresAt` (ms since the epoch) must be in the future when a key is issued, else 422 naming it; omitted or null, the key never expires. Issued by a key that expires, the new key expires no later: `expiresAt` omitted takes the issuing key's own expiry (the reply shows it), and `expiresAt` later than it, or null, answers 422 naming `expiresAt` (nothing is silently cut). From that moment the key answers 401 `bad_key`, as a revoked one does; within a second its unused tickets die and its open sockets close with 4401. A ticket never outlives its key.",
        "allowance": format!("Each key may make {} requests and {} writes a day. Every request counts as a read whatever its method or status, except 401 and 429; every POST, PATCH and DELETE but POST /live/ticket also counts as a write. The allowance resets at midnight America/New_York. When it is used up: 429 {{ok:false, error, resetsAt}} with a Retry-After header. No other rate limit applies to authenticated calls.", l.reads_per_day, l.writes_per_day),
        "liveTicket": format!("POST /live/ticket answers {{ok, ticket, expiresAt}}: good for one socket within {} seconds, opened as GET /api/v1/live?ticket=T. A bad, used or expired ticket answers 401 before the upgrade. At most {} open sockets per account (then 429).", l.ticket_seconds, l.sockets_per_account),
    })
}

fn shape(l: &Limits) -> Value {
    json!({
        "envelope": "Every JSON reply carries `ok`. An error is {ok:false, error} plus, where it applies, field, accepted, index, current, limit or resetsAt.",
        "account": account_shape(),
        "records": "A record carries every field, with null for an empty nullable one. Subtasks sit in their own column's tasks with parentId set; a client builds the tree. GET /tasks/:id answers {ok, task}.",
        "completed": format!("The `completed` query: none (default: open cards only), recent (plus cards finished in the last {} days) or all; anything else answers 422.", l.finished_window_days),
        "writes": "Creates answer 201 {ok, id, project|column|task}, the whole record as read; a batch of tasks answers {ok, created, rev, ids}. PATCH answers 200 {ok, project|column|task|item}, the whole record after the change. DELETE answers 200 {ok, id, deleted}, counting the records removed. A write that changes nothing still counts against the allowance but stamps nothing.",
        "ids": "Every create accepts an `id`: its type prefix (project b_, column c_, task t_, checklist item k_, tag g_, comment m_) then 1 to 64 characters of [A-Za-z0-9_-], else 422 naming id. Ids are unique within an account. A create reusing an id answers 200 with the existing record when every field sent equals it, else 409 with field \"id\".",
        "roundTrip": "Every field a read returns can be sent back on a create, so an exported record lands exactly as it left.",
    })
}

/// The records' read shapes in words, their fields in the order reads write them: the field
/// tables' between what `read_model::shape` writes around them.
fn account_shape() -> String {
    use write_model::field::{COLUMN_FIELDS, FieldSpec, ITEM_FIELDS, PROJECT_FIELDS, TASK_FIELDS};
    let shape = |before: &[&str], fields: &[FieldSpec], after: &[&str]| {
        let names: Vec<&str> = (before.iter().copied())
            .chain(fields.iter().map(|f| f.name))
            .chain(after.iter().copied())
            .collect();
        format!("{{{}}}", names.join(", "))
    };
    let items = shape(&["id"], ITEM_FIELDS, &["position"]);
    format!(
        "GET /projects and GET /projects/:id answer {{version, now, projects}}, sorted by position, no pagination. project = {}; column = {}; task = {}.",
        shape(&["id"], PROJECT_FIELDS, &["updatedAt", "columns"]),
        shape(&["id", "projectId"], COLUMN_FIELDS, &["updatedAt", "tasks"]),
        shape(
            &["id", "projectId"],
            TASK_FIELDS,
            &[
                "rev",
                "order",
                "updatedAt",
                "tagIds",
                &format!("checklist: [{items}]"),
                "comments: [{id, text, createdAt}]",
            ]
        ),
    )
}

fn catching_up(l: &Limits) -> Value {
    json!({
        "since": "GET /changes?since=<ms> returns what changed at or after `since` (inclusive, so a held card may come again; rev tells them apart). Omit it for everything.",
        "now": "Send the reply's `now` back as the next `since`. `now` never runs ahead of what the reply could see, so a client doing this misses nothing however writes and reads interleave.",
        "reply": "projects, lists and cards in the read shape (a deleted project or list carries deletedAt, a deleted card cancelledAt), now, taskIds (every live card in the window: a held card missing from it is gone), window (recent, all or none), cutoff, and scoped.",
        "completed": format!("`completed`: recent (the default: open cards plus those finished in the last {} days), all, or none (open cards only). A card leaving the window is not deleted.", l.finished_window_days),
        "holding": "The number of live cards the client holds, counted from its previous taskIds. When nothing moved and it equals the server's count for the window, the reply is {unchanged: true, now}. A since or holding that is not a whole number answers 422 naming it.",
        "manifest": "manifest=changed narrows taskIds to the projects in the reply and sets scoped: true; the client must then also drop held cards whose completedAt is before cutoff.",
        "socket": "GET /api/v1/live sends the text frame {\"type\":\"changed\",\"at\":<ms>} once a change is readable; react with GET /changes?since=<now>. The server pings every 30 seconds.",
    })
}

fn field_names() -> Value {
    json!({
        "reads": "camelCase. Columns are the board's lists and tasks its cards.",
        "writes": "camelCase or snake_case for the same field (deadlineTime or deadline_time); a body carrying both spellings of one field answers 422.",
        "unknown": "An unknown field in any write answers 422 naming it, with `accepted` listing the fields the route takes.",
        "readOnly": "On create, rev, order, updatedAt and projectId (of a task) are accepted and ignored.",
        "query": "Query parameters are matched by exact name; an unknown one answers 422 naming it.",
    })
}

fn concurrency(l: &Limits) -> Value {
    json!({
        "guarded": "Every writable field takes a bare value or {before, after}. It lands only while the field holds `before` (normalised like a written value); otherwise 409 {ok:false, error, field, current} names the first differing field in the route's field order, and nothing in the request lands. The check is per field, so edits to different fields of one card do not collide.",
        "guardRules": "tags compare as the ordered list of texts. {before} without after, or a guard inside /tasks/positions, answers 422.",
        "rev": "The account's revision counter: every write that changes something raises it and stamps the records it changed.",
        "atomic": "All validation happens before anything is written; a request lands whole or not at all, and a 4xx leaves nothing written.",
        "readYourWrites": "Once a write is acknowledged, every read and changes reply after it shows it, on every node when several share a PostgreSQL store. An acknowledged write survives a crash of the process, and with --durability full (the default) a power loss.",
        "stamps": "updatedAt and deletedAt never decrease within an account, even if the clock steps back; all records one request changes carry the same stamp.",
        "undo": format!("POST /undo reverses the calling key's latest step (one request), at most {} steps back, while every field it wrote still holds what it wrote: 200 {{ok, undone:true, change:{{kind, id, fields}}}}. Otherwise 409 and the step is dropped; nothing left answers {{ok, undone:false}}. Bulk positions, checklist reorders and deletions of tags, checklist items and comments cannot be undone; there is no redo.", l.undo_steps),
    })
}

fn deletes(l: &Limits) -> Value {
    json!({
        "tasks": "DELETE /tasks/:id takes the card's subtasks along. Deleted cards leave reads (404 by id) and show in /changes with cancelledAt set.",
        "columnsAndProjects": "Deleting a column or a project takes everything under it. It shows in /changes with deletedAt; these markers are kept for good.",
        "bin": format!("Each DELETE, and each card created with cancelledAt set, is one entry in the recycle bin of the account's last {} deletions (GET /bin, newest first). A newer deletion destroys the oldest entry and frees its space at once.", l.recoverable_deletions),
        "restore": "POST /bin/:id/restore by any key, PATCH cancelledAt: null on the card heading an entry, or POST /undo by the deleting key. A restore that cannot land answers 422 naming the field.",
        "purge": "POST /purge destroys every bin entry now, recoverable ones included: {ok, purged, freed}.",
        "permanent": "Tags, checklist items and comments are removed at once and for good by DELETE.",
    })
}

/// What `fieldNotes` says of each field: the field tables' notes (a field without one is
/// described by its shape), and the read-only fields reads add.
fn field_notes(l: &Limits) -> Value {
    use write_model::field::{COLUMN_FIELDS, PROJECT_FIELDS, TASK_FIELDS};
    let mut notes = serde_json::Map::new();
    let tables = [TASK_FIELDS, PROJECT_FIELDS, COLUMN_FIELDS];
    // A table's own note first: a field of the same name in another table shares it.
    for spec in tables.iter().flat_map(|t| t.iter()) {
        if spec.note.is_some() && !notes.contains_key(spec.name) {
            notes.insert(spec.name.into(), spec.note(l).into());
        }
    }
    for spec in tables.iter().flat_map(|t| t.iter()) {
        if !notes.contains_key(spec.name) {
            notes.insert(spec.name.into(), spec.note(l).into());
        }
    }
    let read_only = json!({
        "order": "Read-only: the 0-based index of a task among its project's cards not deleted (completed included), by (position, id). Computed when a reply is written; it raises no rev or updatedAt. Write position to reorder.",
        "rev": "Read-only: the account revision that last changed the card; present in a create reply.",
        "tagIds": "Read-only ids of the tags in the same order, for DELETE /tags/:id; accepted on create beside tags so ids survive a round trip.",
        "updatedAt": "Read-only ms. A task's and a column's is their own last change; a project's also moves with anything inside it, cards moved in or out included.",
    });
    if let Value::Object(read_only) = read_only {
        notes.extend(read_only);
    }
    Value::Object(notes)
}

fn search(l: &Limits) -> Value {
    use read_model::search::highlight::{SNIPPET_CHARS, SNIPPETS_PER_FIELD};
    use read_model::search::{DEFAULT_LIMIT, MAX_LIMIT, PREFIX_EXPANSIONS};
    json!({
        "route": "GET /search?q=TEXT[&completed=none|recent|all][&limit=N][&cursor=C] (also GET /api/search) answers {ok, total, hits:[{task, projectId, score, highlights}], cursor?}. `task` is the card as a read shapes it; `total` counts every card that matches, on every page.",
        "searched": "The caller's own cards, never another account's: title, description (its Markdown read as text: link targets, markup and raw HTML are not searched), location, tags, checklist item texts and comment texts. Cards of archived projects and lists are found; deleted cards (the bin) and destroyed ones never are.",
        "query": "`q` is required, 1 to 500 characters after trimming. Words must all match, in any order, in any of the fields. A word is a run of letters and digits: case and accents are folded (Café finds cafe), and punctuation inside a word makes it a phrase of its parts (e-mail finds \"e mail\"). Words over 40 bytes are not indexed.",
        "stemming": "None: a word matches whole (plant does not find plants). Use a prefix, plant*, to find every word that begins so. Stemming is left out because boards are written in many languages and English stemming would mangle the others.",
        "syntax": format!("\"a phrase\" matches those words in that order. A trailing * matches a prefix of at least 2 characters (plan*, \"release pla\"*), each prefix reaching at most {PREFIX_EXPANSIONS} words per field. -word, -\"a phrase\" and -tag:NAME exclude. tag:NAME (or tag:\"two words\") keeps cards carrying that tag, folded like words; project:b_ID and column:c_ID keep cards of that project or list. Filters of one kind are alternatives (project:b_1 project:b_2 is either board); every kind given must hold, and so must every word. Filters alone are a query (tag:urgent). Any other name:value reads as words (10:30, https://...)."),
        "errors": "A query that cannot be read answers 422 {code: invalid_value, field: \"q\"} saying what was wrong: an unclosed quote, an empty phrase, a `-` or `*` with nothing to act on, a * inside a word, a prefix under 2 characters, a filter without a value or with an id of the wrong kind, a query that only excludes or holds no word. A missing q, a limit outside 1 to 100 or an unknown cursor answers 422 naming it.",
        "completed": format!("As for reads: none (the default: open cards), recent (also cards finished in the last {} days, the same window as reads), all.", l.finished_window_days),
        "ranking": "BM25 over the fields, the title weighted 2, tags 1.5 and the rest 1. A card whose title holds a word (or phrase, or prefix) of the query ranks above every card that matches elsewhere only; `score` is the BM25 part, higher is better. Equal scores go to the newest updatedAt first, then to a fixed order of ids.",
        "highlights": format!("For each field that holds a word of the query (title, description, location, tags, checklist, comments): up to {SNIPPETS_PER_FIELD} snippets (one per matching tag, item or comment) of at most {SNIPPET_CHARS} characters of text, cut at a word with an ellipsis where the text goes on. The text is HTML-escaped and the matched words are wrapped in <mark>, so a snippet can be shown as HTML as it is."),
        "paging": format!("limit is 1 to {MAX_LIMIT} hits a page (default {DEFAULT_LIMIT}). A reply with more hits after it carries `cursor`, opaque: send it back with the same query for the next page, which starts after the last hit shown. A card never shows twice while the account does not change; after a write, the next page continues from the same place in the new order."),
        "consistency": "A card is found as soon as the write that made or changed it is acknowledged, and is gone as soon as its delete is. The read counts against the key's allowance like any request, and carries a weak ETag: If-None-Match answers 304 while the account has not changed.",
        "index": "tantivy, one index per account in the data folder (DATA/search/<account>). The read model keeps it current from the change records it applies; a search first indexes what changed since the last one. An index that is missing, damaged or behind the store is rebuilt from the account's cards on the next search.",
    })
}

fn calendar() -> Value {
    json!({
        "route": format!("GET /calendar.ics[?key=K][&project=ID][&completed=none|recent|all][&alarm=MINUTES] (also GET /api/calendar.ics), HEAD too: an iCalendar document (RFC 5545), Content-Type text/calendar; charset=utf-8, with a weak ETag (304 on If-None-Match) that moves with every write of the account. `project` keeps one board's cards (an unknown board: 404); `completed` is as for reads (none, the default: open cards only). `alarm` adds a reminder to every event, 0 to {} minutes before the deadline (anything else: 422 naming `alarm`). It is compressed (gzip or zstd) by Accept-Encoding as JSON replies are.", read_model::calendar::MAX_ALARM_MINUTES),
        "events": "One VEVENT per card with a deadline day, in board order; cards with only a time of day, and cards on an archived board or in an archived list, are left out. A day alone is an all-day event (DTSTART;VALUE=DATE, DTEND the next day, exclusive); a day and a time is a moment in floating local time (DTSTART without TZID or Z, no DTEND: a deadline has no time zone, so it is the same wall-clock time wherever the calendar is read).",
        "properties": "UID `<card id>@workboard` (stable across edits and moves), SUMMARY the title, DESCRIPTION `Board: <board>`, `List: <list>` (and `Finished` for a finished card under completed=recent|all) and the link, LOCATION the card's location when it has one, URL the card in the web client (`<scheme>://<Host>/#/b/<board id>?card=<card id>`, the host the request reached; under --trust-proxy X-Forwarded-Host and X-Forwarded-Proto), DTSTAMP and LAST-MODIFIED the card's `updatedAt`. The calendar is named `Workboard` (`Workboard: <board>` with `project`), asks to be refreshed hourly (REFRESH-INTERVAL, X-PUBLISHED-TTL) and is built with the icalendar crate.",
        "repeat": "A card repeating `from: deadline` carries RRULE: FREQ=DAILY|WEEKLY|MONTHLY|YEARLY;INTERVAL=<every>, giving the dates its completions will: a monthly rule from a day after the 28th adds BYMONTHDAY=<day>,-1;BYSETPOS=1 (that day, or the month's last when it has none), a yearly rule from 29 February BYMONTH=2;BYMONTHDAY=29,-1;BYSETPOS=1; the day is the one the rhythm keeps while a deadline is clamped away from it. A card repeating from completion carries no RRULE (its next date is not known).",
        "alarm": "With `alarm=N`, each event carries a VALARM with ACTION:DISPLAY, DESCRIPTION the title and TRIGGER:-PT<N>M (before the event's start: the deadline's time, or the start of its day).",
        "keys": "Calendar apps cannot send a header: issue a calendar key (POST /keys {\"access\":\"calendar\"}) and subscribe to `<server>/api/v1/calendar.ics?key=<key>`. It reaches this route alone; revoke it (DELETE /keys/:id) to end the subscription, or give it an `expiresAt`.",
    })
}

fn exports() -> Value {
    json!({
        "formats": "GET /export?format=json|csv|ndjson and `workboard export --format ...`. json (the default) is the whole-account document with every finished card, unchanged, which imports back. csv and ndjson are for analysis: one row per card, every finished card included and the bin not, in board order (projects, then lists, by position; cards by position in their list).",
        "csv": format!("RFC 4180: UTF-8 without a byte-order mark, CRLF line ends, a header row, fields quoted when they hold a comma, a quote or a line break. Columns: {}. tags are joined with `;`; checklist_done and checklist_total count the checklist's items; comments counts the comments; empty values are empty cells.", read_model::export::CSV_COLUMNS.join(", ")),
        "timestamps": "completed_at, cancelled_at and updated_at (and a comment's createdAt in ndjson) are ISO 8601 UTC with milliseconds, such as 2026-11-25T12:00:00.000Z, so spreadsheets read them as dates. deadline is YYYY-MM-DD and deadline_time HH:MM, as on the card.",
        "formulas": "A text cell that begins with =, +, - or @ (or a tab or carriage return) starts with a ' in the CSV, so a spreadsheet never runs it as a formula. Ids, numbers and dates are written as they are.",
        "ndjson": "One JSON object per line, a line per card: the same fields in camelCase (projectId, projectName, ..., updatedAt), tags as an array of strings, and the card's checklist ([{id, text, done, position}]) and comments ([{id, text, createdAt}]) nested.",
        "delivery": "Sent as an attachment (Content-Disposition, a .csv or .ndjson file name; text/csv or application/x-ndjson) and written out while it is sent, never built whole in memory. A weak ETag makes it conditional. An unknown format answers 422 naming `format`.",
    })
}

fn imports(l: &Limits) -> Value {
    json!({
        "routes": "POST /import?from=workboard|trello[&lenient=true] with the file as the body, and `workboard import FILE --account ID [--from trello] [--lenient]`. from=workboard (the default) takes this service's own export, ids kept. The same rules hold for both: all or nothing, the storage limit applies, and it counts as one write.",
        "reply": "201 {ok, projects, columns, tasks, projectIds, skipped}: what was made, the projects' ids in the file's order, and what a lenient Trello import left out ([{card, list, message}]; empty otherwise).",
        "trello": format!("One board of Trello's JSON export (Menu > Print, export and share > Export as JSON) becomes one new project; Workboard makes new ids and keeps no Trello id anywhere. The board's name (trimmed to {n}; empty: \"Untitled board\") names the project; a closed board is archived at its last activity. Lists become columns in `pos` order (an empty name: \"Untitled list\"); an archived list stays, archived when it was closed. Cards become tasks in `pos` order: name is the title (empty: \"Untitled card\"), desc the description, due gives deadline and deadlineTime in UTC; a card that is archived or whose due date is complete is finished (completedAt its last activity), so it shows under completed=all and in the export. Labels become tags (their name, else their colour; deduplicated ignoring case), checklists become checklist items in order (prefixed with the checklist's name when a card has two or more; done when complete), and commentCard actions become comments, oldest first (a Trello export holds only its latest 1,000 actions). Priority stays at 4. Members, attachments, stickers, votes, custom fields, power-up data and the board's description are not carried.", n = l.name_chars),
        "limits": "Names, titles, tags and item texts are trimmed to fit, as writes trim them. Anything else over a limit (tags past 5, checklist items past 100, comments past 200, an over-long description or comment, lists past 20), a card whose list is not in the file, and a date that does not parse, is a problem naming its card and list. Without lenient the import refuses the whole file: 422 {code: invalid_value, problems: [{card, list, message}]}, and nothing lands. With lenient=true (--lenient) the part that does not fit is left out and each is listed in `skipped` (on the CLI, as warnings).",
        "errors": "A body that is not JSON answers 400 invalid_json. JSON that is not a Trello board export answers 422 naming what is missing (for example \"`lists` is missing\"). An unknown `from`, or lenient with from=workboard, answers 422 naming it.",
    })
}

fn storage(l: &Limits, engine: &str) -> Value {
    let summary = format!(
        "Each account may store {} bytes: the UTF-8 length of each record's stored JSON, bin included until purged or pushed out of the window; keys, undo steps and deletion markers do not count. A write that would grow the account past that answers 413 (limit \"storage-bytes\"); reads, deletes, purges and shrinking writes still work. GET /usage reports used, limit and purgeable. The limit and its counting are the same on either engine.",
        l.storage_bytes
    );
    let engine_note = match engine {
        "postgresql" => {
            "PostgreSQL, named by --database: every acknowledged write is committed there (synchronous_commit on) before its reply."
        }
        _ => {
            "SQLite (WAL), one database file in the data folder: every acknowledged write is on disk before its reply."
        }
    };
    json!({"engine": engine, "summary": summary, "where": engine_note})
}

fn errors(l: &Limits) -> Value {
    let codes: Vec<Value> = crate::http::error::ErrorCode::TABLE
        .iter()
        .map(|(code, status, meaning)| {
            json!({"code": code.as_str(), "status": status, "meaning": meaning})
        })
        .collect();
    json!({
        "envelope": "Every JSON error is {ok:false, error, code} plus what its status adds (field, accepted, index, current, limit, resetsAt). `error` is English for people; `code` is stable, from the table below, for programs.",
        "codes": codes,
        "400": "The body is not valid JSON (or is empty where one is needed), or an object names one key twice; nothing saved.",
        "401": "The Authorization header is not `Bearer <key>`, or the key is unknown or revoked; also a bad, used or expired live ticket.",
        "403": "No Authorization header at all: refused at the edge with an HTML body, not JSON. JSON 403s: read_only_key (a read key's write), calendar_key (a calendar key anywhere but GET /calendar.ics), key_in_query (`?key=` anywhere but the feed, or with a key that is not a calendar key).",
        "404": "No such record, or not the caller's; an unknown route; an unknown version path such as /api/v2/.",
        "409": "A guarded write or an undo found a different current value, or a create reused an id with other fields: {ok:false, error, field, current}; nothing written.",
        "413": format!("The account's storage is full (limit \"storage-bytes\"; growing writes only), or the body exceeds its route's cap, at most {} bytes (limit \"body-bytes\"; each route's cap is in bodyLimits).", l.body_bytes),
        "422": "An invalid value or an exceeded count: {ok:false, error, field?, accepted?, index?}. Unknown fields and query parameters, bad dates and times, bad since or holding, subtask nesting, invalid photos, over-long prose (the previous value stands).",
        "429": "The key's daily allowance is used up ({ok:false, error, resetsAt} with Retry-After), or the keyless burst, the bad-key throttle or the socket limit is reached.",
        "503": "The store cannot take writes (health mode \"read-only\", code read_only), or the writer's queue is full (code overloaded), or the service holds as many request bodies as its budget allows (code body_budget, nothing read); nothing was written, and Retry-After says when to try again; reads still work.",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn carries_every_entry_and_the_limits_in_force() {
        let limits = Limits {
            reads_per_day: 7,
            ..Limits::default()
        };
        let doc = discovery_document(&limits, "sqlite", &[]);
        for key in [
            "ok",
            "name",
            "version",
            "documentVersion",
            "openapi",
            "versioning",
            "authentication",
            "shape",
            "catchingUp",
            "fieldNames",
            "concurrency",
            "deletes",
            "endpoints",
            "fieldNotes",
            "limits",
            "storage",
            "errors",
            "compression",
            "cors",
            "search",
            "exports",
            "imports",
            "decisions",
        ] {
            assert!(doc.get(key).is_some(), "missing {key}");
        }
        assert_eq!(doc["compression"]["offered"], json!(["gzip", "zstd"]));
        assert_eq!(doc["compression"]["threshold"], json!(1024));
        for field in ["access", "expiry"] {
            assert!(doc["authentication"][field].is_string(), "{field}");
        }
        assert_eq!(doc["ok"], json!(true));
        assert_eq!(doc["limits"]["reads-per-day"], json!(7));
        assert_eq!(
            doc["limits"],
            serde_json::to_value(&limits).expect("limits serialise")
        );
        for code in [
            "400", "401", "403", "404", "409", "413", "422", "429", "503",
        ] {
            assert!(doc["errors"][code].is_string(), "errors lacks {code}");
        }
        let codes = doc["errors"]["codes"].as_array().expect("a table of codes");
        for code in [
            "invalid_json",
            "unknown_field",
            "invalid_value",
            "overloaded",
        ] {
            assert!(
                codes.iter().any(|c| c["code"] == json!(code)),
                "errors.codes lacks {code}"
            );
        }
        let paths: Vec<&str> = doc["endpoints"]
            .as_array()
            .expect("endpoints is an array")
            .iter()
            .filter_map(|e| e["path"].as_str())
            .collect();
        assert!(paths.contains(&"/api/v1/live/ticket"));
        assert!(paths.contains(&"/api/v1/search"));
        assert!(paths.contains(&"/api/v1/import"));
        assert!(paths.contains(&"/api/v1/bin/:id/restore"));
    }
}
