//! Scenario 11: scenario 4's PATCH sent with an `Idempotency-Key` (a new key for every
//! request, as a client's outbox sends them), against the same PATCH without one, the two
//! alternating in one run. The keyed PATCH looks its key up and remembers its result in the
//! writer's transaction; *ratio* is keyed against plain.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use reqwest::Method;

use crate::drive::{Measured, Step};
use crate::host::Target;
use crate::scenarios::{Cx, Editor, Row, editors, patch_loop, title_patch};

/// Numbers the keys of the whole run, so none repeats.
static KEYS: AtomicU64 = AtomicU64::new(0);

/// PATCHes the title of the editor's next card with a new idempotency key.
async fn patch_keyed_once(editor: &mut Editor, key: &str) -> (bool, u64) {
    let card = &editor.cards[editor.next % editor.cards.len()];
    editor.next += 1;
    let path = format!("/api/v1/tasks/{card}");
    let idem = format!("bench-{:016}", KEYS.fetch_add(1, Ordering::Relaxed));
    let headers = [("idempotency-key", idem.as_str())];
    match editor
        .conn
        .call_headers(
            Method::PATCH,
            &path,
            key,
            &headers,
            Some(title_patch(editor.index)),
        )
        .await
    {
        Ok(a) => (a.status.is_success(), a.body.len() as u64),
        Err(_) => (false, 0),
    }
}

fn keyed_loop(cx: &Cx<'_>, editors: Vec<Editor>, key: &str) -> Measured {
    let key: Arc<str> = key.into();
    cx.drive(editors, move |mut editor| {
        let key = key.clone();
        async move {
            let t = Instant::now();
            let (ok, bytes) = patch_keyed_once(&mut editor, &key).await;
            (editor, Step::write(t, ok, bytes))
        }
    })
}

pub fn patch_keyed(cx: &Cx<'_>, target: &Target, conns: usize) -> Row {
    cx.prime(target);
    let (run, ceiling) = cx.alternating(
        |cx| keyed_loop(cx, editors(cx, target, conns, None), &target.key),
        |cx| patch_loop(cx, editors(cx, target, conns, None), &target.key),
    );
    // CPU per request moves less with the machine's other load than the rate does: what a
    // key costs, and on which side of the writer's queue.
    let (keyed_cpu, keyed_writer) = run.cpu_per_request();
    let (plain_cpu, plain_writer) = ceiling.cpu_per_request();
    Row {
        scenario: 11,
        account: target.layout.name.clone(),
        note: format!(
            "ceiling: the same PATCH without a key; p50 {:.2} ms keyed, {:.2} ms plain; \
             CPU per request {keyed_cpu:.0} us keyed, {plain_cpu:.0} us plain (writer thread \
             {keyed_writer:.0} us and {plain_writer:.0} us, the rest HTTP and load generator)",
            run.writes.quantile(0.5) / 1000.0,
            ceiling.writes.quantile(0.5) / 1000.0,
        ),
        run,
        ceiling: Some(ceiling),
        raw: None,
    }
}
