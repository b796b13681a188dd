//! The calendar feed (issue 36): `GET /calendar.ics` read by a real iCalendar parser (Python's
//! `icalendar`, through `calendar_feed.py`), every event checked against the card it stands
//! for: all-day or timed in floating time, UID, summary, board and list, link,
//! LAST-MODIFIED; the `project` and `completed` filters; `alarm`; ETag, 304 and HEAD.
//! Calendar keys and the log are in `calendar_keys`.

use std::collections::BTreeMap;

use reqwest::Method;
use serde_json::{Value, json};

use crate::harness::*;

/// The feed as the parser reads it: `{version, prodid, name, events: [...]}`.
pub fn parse_feed(ics: &str) -> Value {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("feed.ics");
    std::fs::write(&file, ics).expect("write the feed");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/api/calendar_feed.py");
    let out = std::process::Command::new("python3")
        .arg(script)
        .arg(&file)
        .output()
        .expect("python3 runs (tests/run.sh installs the `icalendar` package)");
    assert!(
        out.status.success(),
        "the iCalendar parser refused the feed (is `icalendar` installed? \
         `python3 -m pip install icalendar`):\n{}\n--- feed ---\n{ics}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the parser script prints JSON")
}

/// GETs the feed at `path` (relative to `/api/v1`), asserts a 200 iCalendar reply, and
/// returns its text with its events by UID.
pub async fn feed(api: &Api, path: &str) -> (String, BTreeMap<String, Value>) {
    let r = api.get(path).await;
    r.expect(200);
    assert_eq!(r.content_type(), "text/calendar; charset=utf-8", "{path}");
    let parsed = parse_feed(&r.text);
    assert_eq!(parsed["version"], json!("2.0"));
    let events = parsed["events"]
        .as_array()
        .expect("events")
        .iter()
        .map(|e| (str_of(&e["uid"]), e.clone()))
        .collect();
    (r.text, events)
}

fn uid(card: &Value) -> String {
    format!("{}@workboard", str_of(&card["id"]))
}

/// The day after `day` (`YYYY-MM-DD`).
fn next_day(day: &str) -> String {
    let d: jiff::civil::Date = day.parse().expect("a date");
    d.tomorrow().expect("a next day").to_string()
}

/// Asserts that `event` is what the feed promises for `card` on board `board` in list
/// `list`, served from `base`.
fn assert_event(event: &Value, card: &Value, board: &str, list: &str, base: &str) {
    let id = str_of(&card["id"]);
    assert_eq!(event["summary"], card["title"], "{id}");
    let day = str_of(&card["deadline"]);
    match card["deadlineTime"].as_str() {
        None => {
            assert_eq!(event["start"], json!({"kind": "date", "iso": day}), "{id}");
            assert_eq!(
                event["end"],
                json!({"kind": "date", "iso": next_day(&day)}),
                "{id}: an all-day event ends the next day (DTEND is exclusive)"
            );
        }
        Some(time) => {
            assert_eq!(
                event["start"],
                json!({"kind": "floating", "iso": format!("{day}T{time}:00")}),
                "{id}: a timed deadline is floating local time"
            );
            assert!(event["startParams"].get("TZID").is_none(), "{id}");
            assert_eq!(event["end"], Value::Null, "{id}: a deadline is a moment");
        }
    }
    let updated = card["updatedAt"].as_i64().expect("updatedAt");
    // iCalendar stamps have whole seconds.
    assert_eq!(event["lastModified"], json!(updated / 1000 * 1000), "{id}");
    assert_eq!(event["dtstamp"], json!(updated / 1000 * 1000), "{id}");
    let description = str_of(&event["description"]);
    assert!(
        description.contains(&format!("Board: {board}"))
            && description.contains(&format!("List: {list}")),
        "{id}: {description}"
    );
    let location = card["location"].as_str().unwrap_or_default();
    match location {
        "" => assert_eq!(event["location"], Value::Null, "{id}"),
        l => assert_eq!(event["location"], json!(l), "{id}"),
    }
    let link = format!("{base}/#/b/{}?card={id}", str_of(&card["projectId"]));
    assert_eq!(event["url"], json!(link), "{id}");
    assert!(description.contains(&link), "{id}: {description}");
}

/// Two boards: cards of every kind the feed takes or leaves out.
struct Fixture {
    home: String,
    work: String,
    all_day: Value,
    timed: Value,
    subtask: Value,
    on_work: Value,
    finished: Value,
}

async fn fixture(api: &Api) -> Fixture {
    let home = api.new_project("Home").await;
    let todo = api.new_column(&home, "To do").await;
    let archived = api.new_column(&home, "Old").await;
    let work = api.new_project("Work; Q4, \"big\"").await;
    let doing = api.new_column(&work, "Doing").await;
    let card = |body: Value| async move { api.create_task(body).await };
    let all_day = card(json!({"columnId": todo, "title": "Pay rent, now; really",
        "deadline": "2026-12-31", "location": "Bank, Main St."}))
    .await;
    let timed = card(json!({"columnId": todo, "title": "Call the plumber",
        "deadline": "2027-02-28", "deadlineTime": "09:05"}))
    .await;
    let subtask = card(json!({"columnId": todo, "title": "Find the lease",
        "deadline": "2026-12-30", "parentId": all_day["id"]}))
    .await;
    let on_work = card(json!({"columnId": doing, "title": "Ship ✓ the release",
        "deadline": "2026-12-01", "deadlineTime": "23:59"}))
    .await;
    let finished = card(json!({"columnId": doing, "title": "Done already",
        "deadline": "2026-11-01", "completedAt": now_ms()}))
    .await;
    // Left out whatever the filters: no deadline, a time with no day, an archived list.
    card(json!({"columnId": todo, "title": "Someday"})).await;
    card(json!({"columnId": todo, "title": "Only a time", "deadlineTime": "10:00"})).await;
    card(json!({"columnId": archived, "title": "Put away", "deadline": "2026-12-02"})).await;
    api.patch(
        &format!("/columns/{archived}"),
        json!({"archivedAt": now_ms()}),
    )
    .await
    .expect_ok(200);
    Fixture {
        home,
        work,
        all_day,
        timed,
        subtask,
        on_work,
        finished,
    }
}

/// The card as it reads now (its `updatedAt` moved with later writes to it).
async fn fresh(api: &Api, card: &Value) -> Value {
    api.task(&str_of(&card["id"])).await
}

#[tokio::test]
async fn every_card_with_a_deadline_day_is_an_event_the_parser_reads_as_the_card() {
    let s = Server::start().await;
    let api = s.api();
    let f = fixture(&api).await;
    let base = s.url("");
    let (text, events) = feed(&api, "/calendar.ics").await;
    let expected = [
        (&f.all_day, "Home", "To do"),
        (&f.timed, "Home", "To do"),
        (&f.subtask, "Home", "To do"),
        (&f.on_work, "Work; Q4, \"big\"", "Doing"),
    ];
    assert_eq!(
        events.keys().cloned().collect::<Vec<_>>(),
        {
            let mut uids: Vec<String> = expected.iter().map(|(c, _, _)| uid(c)).collect();
            uids.sort();
            uids
        },
        "open cards with a deadline day, no others:\n{text}"
    );
    for (card, board, list) in expected {
        let card = fresh(&api, card).await;
        assert_event(&events[&uid(&card)], &card, board, list, &base);
        assert!(events[&uid(&card)]["alarms"].as_array().unwrap().is_empty());
        assert_eq!(events[&uid(&card)]["rrule"], Value::Null);
    }
    // Floating time, as written: no zone anywhere, no UTC mark on a start.
    assert!(!text.contains("TZID"), "{text}");
    assert!(text.contains("DTSTART:20270228T090500\r\n"), "{text}");
    assert!(text.contains("DTSTART;VALUE=DATE:20261231\r\n"), "{text}");

    // The unversioned alias answers alike.
    let r = api.unversioned().get("/calendar.ics").await;
    assert_eq!(parse_feed(&r.text)["events"].as_array().unwrap().len(), 4);
}

#[tokio::test]
async fn project_and_completed_filter_the_feed_as_they_filter_reads() {
    let s = Server::start().await;
    let api = s.api();
    let f = fixture(&api).await;
    let base = s.url("");
    let (_, events) = feed(&api, &format!("/calendar.ics?project={}", f.work)).await;
    assert_eq!(events.keys().collect::<Vec<_>>(), [&uid(&f.on_work)]);
    let (_, events) = feed(&api, &format!("/calendar.ics?project={}", f.home)).await;
    assert_eq!(events.len(), 3);

    // completed: none (the default) leaves the finished card out; recent and all take it.
    for q in ["", "?completed=none"] {
        let (_, events) = feed(&api, &format!("/calendar.ics{q}")).await;
        assert!(!events.contains_key(&uid(&f.finished)), "{q}");
    }
    for q in ["recent", "all"] {
        let (_, events) = feed(&api, &format!("/calendar.ics?completed={q}")).await;
        assert_eq!(events.len(), 5, "{q}");
        let finished = fresh(&api, &f.finished).await;
        let event = &events[&uid(&finished)];
        assert_event(event, &finished, "Work; Q4, \"big\"", "Doing", &base);
        assert!(str_of(&event["description"]).contains("Finished"));
    }
    let r = api
        .get(&format!("/calendar.ics?project={}&completed=all", f.work))
        .await;
    assert_eq!(parse_feed(&r.text)["events"].as_array().unwrap().len(), 2);

    // An archived board's cards are put away with it.
    api.patch(
        &format!("/projects/{}", f.work),
        json!({"archivedAt": now_ms()}),
    )
    .await
    .expect_ok(200);
    let (_, events) = feed(&api, "/calendar.ics").await;
    assert!(!events.contains_key(&uid(&f.on_work)));

    // What the filters do not take answers 422 or 404, naming it.
    api.get("/calendar.ics?completed=some")
        .await
        .expect_field_error(422, "completed");
    api.get("/calendar.ics?since=1")
        .await
        .expect_field_error(422, "since");
    api.get("/calendar.ics?project=b_nope")
        .await
        .expect_code(404, "not_found");
}

#[tokio::test]
async fn alarm_adds_a_display_reminder_minutes_before_each_deadline() {
    let s = Server::start().await;
    let api = s.api();
    fixture(&api).await;
    for minutes in [0i64, 30, 10_080] {
        let (text, events) = feed(&api, &format!("/calendar.ics?alarm={minutes}")).await;
        assert_eq!(events.len(), 4);
        for event in events.values() {
            assert_eq!(
                event["alarms"],
                json!([{"action": "DISPLAY", "triggerSeconds": -minutes * 60,
                    "description": event["summary"]}]),
                "{minutes}"
            );
        }
        assert!(
            text.contains(&format!("TRIGGER:-PT{minutes}M\r\n")),
            "{text}"
        );
    }
    for bad in [
        "10081",
        "-1",
        "1.5",
        "1e3",
        "",
        "ten",
        "99999999999999999999",
    ] {
        api.get(&format!("/calendar.ics?alarm={bad}"))
            .await
            .expect_field_error(422, "alarm");
    }
}

#[tokio::test]
async fn the_feed_is_a_conditional_read_whose_tag_moves_with_every_write() {
    let s = Server::start().await;
    let api = s.api();
    let f = fixture(&api).await;
    let r = api.get("/calendar.ics").await;
    r.expect(200);
    let etag = r.header("etag").expect("an ETag");
    assert!(etag.starts_with("W/\""), "{etag}");

    let cond = [("if-none-match", etag.as_str())];
    let again = api.send_with(Method::GET, "/calendar.ics", &cond).await;
    assert_eq!((again.status, again.text.as_str()), (304, ""));
    assert_eq!(again.header("etag").as_deref(), Some(etag.as_str()));

    // HEAD: the GET's status, tag and length, no body.
    let (status, headers, body) = api.raw_request(Method::HEAD, "/calendar.ics", &[]).await;
    assert_eq!(status, 200);
    assert!(body.is_empty());
    assert_eq!(headers["etag"].to_str().unwrap(), etag);
    assert_eq!(
        headers["content-length"].to_str().unwrap(),
        r.text.len().to_string()
    );
    let head = api.raw_request(Method::HEAD, "/calendar.ics", &cond).await;
    assert_eq!(head.0, 304);

    // gzip and zstd as the client asks: the same document and tag (a feed runs to megabytes).
    for coding in ["gzip", "zstd"] {
        let (status, headers, body) = api
            .get_raw("/calendar.ics", &[("accept-encoding", coding)])
            .await;
        assert_eq!(status, 200);
        assert_eq!(headers["content-encoding"].to_str().unwrap(), coding);
        assert_eq!(headers["etag"].to_str().unwrap(), etag);
        let plain = match coding {
            "gzip" => {
                let mut out = Vec::new();
                std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&body[..]), &mut out)
                    .expect("a gzip body");
                out
            }
            _ => zstd::stream::decode_all(&body[..]).expect("a zstd body"),
        };
        assert_eq!(String::from_utf8(plain).unwrap(), r.text, "{coding}");
    }

    // Another query is another representation, with its own tag.
    let other = api.get("/calendar.ics?alarm=5").await;
    assert_ne!(other.header("etag").as_deref(), Some(etag.as_str()));

    // A write moves the tag, and the feed shows it.
    let id = str_of(&f.timed["id"]);
    api.patch(
        &format!("/tasks/{id}"),
        json!({"title": "Call the plumber again", "deadlineTime": null}),
    )
    .await
    .expect_ok(200);
    let after = api.send_with(Method::GET, "/calendar.ics", &cond).await;
    assert_eq!(after.status, 200);
    assert_ne!(after.header("etag").as_deref(), Some(etag.as_str()));
    let card = api.task(&id).await;
    let parsed = parse_feed(&after.text);
    let event = parsed["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["uid"] == json!(uid(&card)))
        .expect("the card's event, under the same UID")
        .clone();
    assert_event(&event, &card, "Home", "To do", &s.url(""));
}

/// A card repeating from its deadline carries an `RRULE` whose dates, expanded by a real
/// expander (dateutil), are the deadlines the server gives as the card is finished again and
/// again: day and week steps, month ends clamped and kept (31 January, 28 February,
/// 31 March), leap days. One repeating from completion carries none.
#[tokio::test]
async fn a_card_repeating_from_its_deadline_carries_the_rrule_its_completions_follow() {
    let s = Server::start().await;
    let api = s.api();
    let (_, column) = api.board().await;
    let cases = [
        (3, "day", "2027-01-30", "FREQ=DAILY;INTERVAL=3"),
        (2, "week", "2027-01-29", "FREQ=WEEKLY;INTERVAL=2"),
        (1, "month", "2027-01-15", "FREQ=MONTHLY;INTERVAL=1"),
        (
            1,
            "month",
            "2027-01-31",
            "FREQ=MONTHLY;INTERVAL=1;BYMONTHDAY=31,-1;BYSETPOS=1",
        ),
        (
            1,
            "month",
            "2027-01-29",
            "FREQ=MONTHLY;INTERVAL=1;BYMONTHDAY=29,-1;BYSETPOS=1",
        ),
        (
            2,
            "month",
            "2027-12-31",
            "FREQ=MONTHLY;INTERVAL=2;BYMONTHDAY=31,-1;BYSETPOS=1",
        ),
        (
            1,
            "year",
            "2028-02-29",
            "FREQ=YEARLY;INTERVAL=1;BYMONTH=2;BYMONTHDAY=29,-1;BYSETPOS=1",
        ),
        (1, "year", "2027-03-31", "FREQ=YEARLY;INTERVAL=1"),
    ];
    for (every, unit, deadline, rule) in cases {
        let repeat = json!({"every": every, "unit": unit, "from": "deadline"});
        let card = api
            .create_task(
                json!({"columnId": column, "title": format!("{unit} {deadline}"),
                "deadline": deadline, "deadlineTime": "08:00", "repeat": repeat}),
            )
            .await;
        let (text, events) = feed(&api, "/calendar.ics").await;
        let event = &events[&uid(&card)];
        assert!(event["rrule"].is_string(), "{unit} {deadline}");
        assert!(text.contains(&format!("RRULE:{rule}\r\n")), "{text}");
        let predicted: Vec<String> = event["occurrences"]
            .as_array()
            .unwrap()
            .iter()
            .map(str_of)
            .collect();
        assert_eq!(predicted[0], deadline);
        // Finished early each time (today, before the deadline): the next occurrence is the
        // rhythm's next date, and its own event carries the rest of the same rhythm.
        let mut id = str_of(&card["id"]);
        for (step, expected) in predicted.iter().enumerate().skip(1).take(4) {
            let reply = api
                .patch(&format!("/tasks/{id}"), json!({"completedAt": now_ms()}))
                .await;
            let next = reply.expect_ok(200)["next"].clone();
            assert_eq!(
                &str_of(&next["deadline"]),
                expected,
                "{unit} {deadline} step {step}"
            );
            id = str_of(&next["id"]);
            let (_, events) = feed(&api, "/calendar.ics").await;
            let rest: Vec<&Value> = events[&uid(&next)]["occurrences"]
                .as_array()
                .unwrap()
                .iter()
                .collect();
            let rest: Vec<String> = rest.into_iter().map(str_of).collect();
            assert_eq!(
                rest[..predicted.len() - step],
                predicted[step..],
                "{unit} {deadline} step {step}: the occurrence keeps the rhythm"
            );
        }
    }
    // From completion: the next date cannot be known, so no rule.
    let card = api
        .create_task(
            json!({"columnId": column, "title": "Water the plants", "deadline": "2027-01-04",
            "repeat": {"every": 1, "unit": "week", "from": "completion"}}),
        )
        .await;
    let (_, events) = feed(&api, "/calendar.ics").await;
    assert_eq!(events[&uid(&card)]["rrule"], Value::Null);
}
