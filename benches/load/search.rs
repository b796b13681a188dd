//! Issue 23's measurements: card search against a raw tantivy loop over the same index,
//! the CSV export's rate, and scenario 4 with the search index on against off.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use read_model::Completed;
use read_model::search::query::SearchQuery;
use reqwest::StatusCode;
use tantivy::collector::{Count, TopDocs};

use crate::drive::{Conn, Measured, Tally, Window};
use crate::host::Target;
use crate::scenarios::{Cx, Expect, Row, editors, get_loop, patch_loop};

/// The query of the search scenario: one title word, found on about one card in twenty of
/// the generated accounts.
pub const QUERY: &str = "invoice";
const WINDOW_MS: i64 = 30 * 86_400_000;

/// Scenario 8: `GET /search?q=invoice` (20 hits a page, open cards), and a raw tantivy loop
/// running the same query with the same page size over the very index the server searches.
pub fn search(cx: &Cx<'_>, target: &Target, conns: usize) -> Row {
    cx.prime(target);
    let path = format!("/api/v1/search?q={QUERY}");
    let started = Instant::now();
    let body = cx.fetch(&path, &target.key);
    let first_ms = started.elapsed().as_secs_f64() * 1000.0;
    let total = serde_json::from_slice::<serde_json::Value>(&body)
        .ok()
        .and_then(|v| v["total"].as_u64())
        .unwrap_or(0);
    let model = cx.host.services.state.read.clone();
    let (searcher, fields) = model
        .search_index(&target.account)
        .expect("the account's index");
    let query = SearchQuery::parse(QUERY).expect("the bench's query reads");
    let cutoff = crate::wall_ms() - WINDOW_MS;
    let built = read_model::search::build(&fields, &query, Completed::None, cutoff);
    let split = split_cost(&model, target, &searcher, &fields, &built, &query, cutoff);
    let threads = conns.min(std::thread::available_parallelism().map_or(2, |n| n.get()));
    let (run, ceiling) = cx.alternating(
        |cx| get_loop(cx, cx.conns(conns), &target.key, &path, Expect::Ok),
        |cx| raw_loop(cx, &searcher, &built, threads),
    );
    let (cpu, _) = run.cpu_per_request();
    let (raw_cpu, _) = ceiling.cpu_per_request();
    Row {
        scenario: 8,
        account: target.layout.name.clone(),
        note: format!(
            "q={QUERY}: {total} hits, 20 a page, {} KB per reply; first search after the \
             document loads {first_ms:.0} ms (the index opened from disk, or built on the \
             process's first); ceiling: the same query \
             and page size straight on the index (BM25 top 20 and the count), {threads} \
             thread(s); CPU per search {cpu:.0} us (server and load generator), per raw \
             query {raw_cpu:.0} us; {split}",
            body.len() / 1000
        ),
        run,
        ceiling: Some(ceiling),
        raw: None,
    }
}

/// Where a search's time goes, in this thread with nothing else running: the raw query, the
/// read model's ranked page (the raw query plus the order's keys and the ids), and the whole
/// reply (the page, the cards and their snippets, serialised).
fn split_cost(
    model: &read_model::ReadModel,
    target: &Target,
    searcher: &tantivy::Searcher,
    fields: &read_model::search::fields::Fields,
    built: &tantivy::query::BooleanQuery,
    query: &SearchQuery,
    cutoff: i64,
) -> String {
    const N: u32 = 300;
    let request = read_model::search::SearchRequest {
        query: query.clone(),
        view: Completed::None,
        limit: 20,
        after: None,
    };
    let time = |f: &mut dyn FnMut()| {
        f();
        let t = Instant::now();
        for _ in 0..N {
            f();
        }
        t.elapsed().as_secs_f64() * 1e6 / f64::from(N)
    };
    let collector = (Count, TopDocs::with_limit(20).order_by_score());
    let raw = time(&mut || {
        searcher.search(built, &collector).expect("a raw search");
    });
    let page = time(&mut || {
        read_model::search::run(searcher, fields, &request, cutoff).expect("a page");
    });
    let reply = time(&mut || {
        model.search(&target.account, &request).expect("a reply");
    });
    format!(
        "in-process, one thread: raw query {raw:.0} us, ranked page {page:.0} us, whole reply          {reply:.0} us"
    )
}

/// The raw tantivy loop: `threads` threads running the query for the window.
fn raw_loop(
    cx: &Cx<'_>,
    searcher: &tantivy::Searcher,
    query: &tantivy::query::BooleanQuery,
    threads: usize,
) -> Measured {
    let from = Instant::now() + cx.timing.warmup;
    let until = from + cx.timing.measure;
    let collector = (Count, TopDocs::with_limit(20).order_by_score());
    let cpu0 = std::sync::Mutex::new(None);
    let tallies: Vec<Tally> = std::thread::scope(|s| {
        let cpu0 = &cpu0;
        s.spawn(move || {
            std::thread::sleep(from.saturating_duration_since(Instant::now()));
            *cpu0.lock().expect("the clock's lock") = Some(crate::host::CpuTime::now());
        });
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut tally = Tally::default();
                    while Instant::now() < until {
                        let t = Instant::now();
                        let ok = searcher.search(query, &collector).is_ok();
                        if t >= from {
                            tally.add(t.elapsed(), ok, 0);
                        }
                    }
                    tally
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a raw search thread"))
            .collect()
    });
    let cpu = cpu0
        .into_inner()
        .expect("the clock's lock")
        .map(|c| crate::host::CpuTime::now().since(c))
        .unwrap_or_default();
    let mut reads = Tally::default();
    for t in tallies {
        reads.merge(t);
    }
    Measured {
        conns: threads,
        secs: cx.timing.measure.as_secs_f64(),
        reads,
        writes: Tally::default(),
        window: Window {
            cpu,
            ..Window::default()
        },
    }
}

/// Scenario 9: the CSV export of the account, read whole again and again on one connection;
/// the note gives its rate in MB and cards a second, and the JSON export's beside it.
pub fn csv_export(cx: &Cx<'_>, target: &Target) -> Row {
    cx.prime(target);
    let csv = get_loop(
        cx,
        cx.conns(1),
        &target.key,
        "/api/v1/export?format=csv",
        Expect::Ok,
    );
    let json = get_loop(cx, cx.conns(1), &target.key, "/api/v1/export", Expect::Ok);
    let rate = |m: &Measured| m.reads.bytes as f64 / m.secs / 1e6;
    let cards = target.layout.cards.len() as f64;
    let note = format!(
        "{:.1} MB/s, {:.0} cards/s ({} KB per file, streamed); the JSON export, built from \
         cached fragments: {:.1} MB/s",
        rate(&csv),
        csv.rate() * cards,
        csv.reads.bytes / (csv.reads.micros.len().max(1) as u64) / 1000,
        rate(&json),
    );
    Row {
        scenario: 9,
        account: target.layout.name.clone(),
        run: csv,
        ceiling: None,
        raw: None,
        note,
    }
}

/// Scenario 10: scenario 4 with the account's search index on (opened by a search, then
/// kept current by a search every 250 ms while the PATCHes run), against the same PATCHes
/// with the index off (no search since the document loaded). *ratio* is on against off.
pub fn patch_with_index(cx: &Cx<'_>, target: &Target, conns: usize) -> Row {
    let path = format!("/api/v1/search?q={QUERY}");
    let off = |cx: &Cx<'_>| {
        cx.prime(target);
        patch_loop(cx, editors(cx, target, conns, None), &target.key)
    };
    let on = |cx: &Cx<'_>| {
        cx.prime(target);
        cx.fetch(&path, &target.key);
        let stop = Arc::new(AtomicBool::new(false));
        let searches = {
            let (stop, conn, key, path) = (
                stop.clone(),
                Conn::new(cx.host.addr),
                target.key.clone(),
                path.clone(),
            );
            cx.client_rt.spawn(async move {
                let mut n = 0u32;
                while !stop.load(Ordering::Relaxed) {
                    tokio::time::sleep(Duration::from_millis(250)).await;
                    if let Ok((StatusCode::OK, _)) = conn.drain(&path, &key).await {
                        n += 1;
                    }
                }
                n
            })
        };
        let run = patch_loop(cx, editors(cx, target, conns, None), &target.key);
        stop.store(true, Ordering::Relaxed);
        let n = cx.client_rt.block_on(searches).unwrap_or(0);
        assert!(n > 0, "the searches beside the PATCHes ran");
        run
    };
    let (run, ceiling) = cx.alternating(on, off);
    let (on_cpu, on_writer) = run.cpu_per_request();
    let (off_cpu, off_writer) = ceiling.cpu_per_request();
    Row {
        scenario: 10,
        account: target.layout.name.clone(),
        note: format!(
            "ceiling: the same PATCHes with the index off; CPU per PATCH {on_cpu:.0} us on \
             (writer thread {on_writer:.0} us, indexing included), {off_cpu:.0} us off \
             (writer {off_writer:.0} us); p50 {:.2} ms on, {:.2} ms off",
            run.writes.quantile(0.5) / 1000.0,
            ceiling.writes.quantile(0.5) / 1000.0,
        ),
        run,
        ceiling: Some(ceiling),
        raw: None,
    }
}
