//! The two-node row (PostgreSQL): a second node on the same database in this process, and
//! - whole-account reads spread over the two nodes against the same reads on one;
//! - PATCHes on node A with whole-account reads on node B at once;
//! - catch-up: from a PATCH acknowledged by A to B's live socket nudging with that write's
//!   stamp (or a later one), idle and under the load above.
//!
//! Both nodes share this machine's two cores with the load generator and PostgreSQL, so
//! spreading reads shows what a second node costs here, not what a second machine adds.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use parking_lot::Mutex;
use reqwest::{Method, StatusCode};

use crate::drive::{Conn, Measured, Step, Tally};
use crate::host::{Host, Target};
use crate::scenarios::{Cx, Editor, title_patch};

pub struct NodesRow {
    pub account: String,
    pub conns: usize,
    /// Whole-account reads, every connection on node A.
    pub one_node: Measured,
    /// The same reads, half the connections on each node.
    pub two_nodes: Measured,
    /// Half the connections PATCH on A while the other half read the account on B.
    pub mixed: Measured,
    /// Acknowledged on A to nudged on B, in microseconds: with nothing else running, and
    /// during the mixed run.
    pub catch_up_idle: Tally,
    pub catch_up_loaded: Tally,
    /// Probes B did not nudge for within a second (counted in the tallies as errors).
    pub catch_up_missed: u64,
}

enum Role {
    Write(Editor),
    Read(Conn),
}

async fn read_projects(conn: &Conn, key: &str) -> Step {
    let t = Instant::now();
    match conn.drain("/api/v1/projects", key).await {
        Ok((s, n)) => Step::read(t, s == StatusCode::OK, n),
        Err(_) => Step::read(t, false, 0),
    }
}

fn reads_on(cx: &Cx<'_>, nodes: &[&Host], conns: usize, key: &str) -> Measured {
    let states: Vec<Conn> = (0..conns)
        .map(|i| Conn::new(nodes[i % nodes.len()].addr))
        .collect();
    let key: Arc<str> = key.into();
    cx.drive(states, move |conn| {
        let key = key.clone();
        async move {
            let step = read_projects(&conn, &key).await;
            (conn, step)
        }
    })
}

/// The stamp a write reply gives its card (`"updatedAt":N`).
fn updated_at(body: &[u8]) -> Option<i64> {
    let text = std::str::from_utf8(body).ok()?;
    let at = text.find("\"updatedAt\":")? + "\"updatedAt\":".len();
    let digits: String = text[at..]
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    digits.parse().ok()
}

/// A live socket on `node` that notes when each nudge (`{"type":"changed","at":N}`) came.
async fn listen(
    node: SocketAddr,
    key: String,
    seen: Arc<Mutex<Vec<(Instant, i64)>>>,
    until: Instant,
) {
    let mut ws = crate::drive::live_socket(&Conn::new(node), node, &key).await;
    loop {
        tokio::select! {
            frame = ws.next() => match frame {
                Some(Ok(tokio_tungstenite::tungstenite::Message::Text(text))) => {
                    #[derive(serde::Deserialize)]
                    struct Nudge { at: i64 }
                    if let Ok(n) = serde_json::from_str::<Nudge>(&text) {
                        seen.lock().push((Instant::now(), n.at));
                    }
                }
                Some(Ok(_)) => {}
                _ => break,
            },
            _ = tokio::time::sleep_until(until.into()) => break,
        }
    }
}

/// PATCHes one card on node A every 20 ms until `until`, noting each acknowledgement's
/// time and stamp.
async fn probe_writes(
    a: SocketAddr,
    key: String,
    card: String,
    until: Instant,
) -> Vec<(Instant, i64)> {
    let conn = Conn::new(a);
    let path = format!("/api/v1/tasks/{card}");
    let mut acks = Vec::new();
    while Instant::now() + Duration::from_millis(1_100) < until {
        if let Ok(answer) = conn
            .call(Method::PATCH, &path, &key, Some(title_patch(99)))
            .await
            && answer.status.is_success()
            && let Some(stamp) = updated_at(&answer.body)
        {
            acks.push((Instant::now(), stamp));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    acks
}

/// For each acknowledged probe, the time until B first nudged at its stamp or later (a
/// nudge that came before the acknowledgement counts as 0).
fn catch_up(acks: &[(Instant, i64)], seen: &[(Instant, i64)]) -> (Tally, u64) {
    let mut tally = Tally::default();
    let mut missed = 0;
    for &(acked, stamp) in acks {
        match seen.iter().find(|(_, at)| *at >= stamp) {
            Some((when, _)) if when.saturating_duration_since(acked) <= Duration::from_secs(1) => {
                tally.add(when.saturating_duration_since(acked), true, 0);
            }
            _ => {
                tally.add(Duration::from_secs(1), false, 0);
                missed += 1;
            }
        }
    }
    (tally, missed)
}

/// Probes catch-up from A to B for `length`, while `during` runs.
fn probed<T>(
    cx: &Cx<'_>,
    b: &Host,
    target: &Target,
    length: Duration,
    during: impl FnOnce() -> T,
) -> (T, Tally, u64) {
    let until = Instant::now() + length;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let listener = cx
        .client_rt
        .spawn(listen(b.addr, target.key.clone(), seen.clone(), until));
    // Gives the socket time to open before the first probe.
    std::thread::sleep(Duration::from_millis(300));
    let card = target.layout.cards[target.layout.cards.len() - 1].clone();
    let probe = cx
        .client_rt
        .spawn(probe_writes(cx.host.addr, target.key.clone(), card, until));
    let out = during();
    let acks = cx.client_rt.block_on(probe).expect("the probe task");
    let _ = cx.client_rt.block_on(listener);
    let (tally, missed) = catch_up(&acks, &seen.lock());
    (out, tally, missed)
}

/// The two-node row on `target` at `conns` connections; `b` is the second node.
pub fn two_nodes(cx: &Cx<'_>, b: &Host, target: &Target, conns: usize) -> NodesRow {
    cx.prime(target);
    // B reads the account once, learning the key and loading the document.
    let (status, _) = cx
        .client_rt
        .block_on(Conn::new(b.addr).drain("/api/v1/projects", &target.key))
        .expect("the priming read on B");
    assert_eq!(status, StatusCode::OK, "the priming read on B failed");
    let half = Cx {
        timing: crate::drive::Timing {
            warmup: cx.timing.warmup / 2,
            measure: cx.timing.measure / 2,
        },
        probe: cx.probe.clone(),
        ..*cx
    };
    // Alternating halves (one, two, two, one), as the ceilings are measured.
    let one = reads_on(&half, &[cx.host], conns, &target.key);
    let two = reads_on(&half, &[cx.host, b], conns, &target.key).merge(reads_on(
        &half,
        &[cx.host, b],
        conns,
        &target.key,
    ));
    let one_node = one.merge(reads_on(&half, &[cx.host], conns, &target.key));
    let ((), catch_up_idle, idle_missed) = probed(cx, b, target, Duration::from_secs(4), || ());
    let length = cx.timing.warmup + cx.timing.measure + Duration::from_millis(1_500);
    let (mixed, catch_up_loaded, loaded_missed) = probed(cx, b, target, length, || {
        let writers = conns / 2;
        let states: Vec<Role> = (0..conns)
            .map(|i| {
                if i < writers {
                    Role::Write(Editor::new(Conn::new(cx.host.addr), target, i, writers))
                } else {
                    Role::Read(Conn::new(b.addr))
                }
            })
            .collect();
        let key: Arc<str> = target.key.as_str().into();
        cx.drive(states, move |role| {
            let key = key.clone();
            async move {
                match role {
                    Role::Write(mut editor) => {
                        let t = Instant::now();
                        let (ok, bytes) = editor.patch(&key).await;
                        (Role::Write(editor), Step::write(t, ok, bytes))
                    }
                    Role::Read(conn) => {
                        let step = read_projects(&conn, &key).await;
                        (Role::Read(conn), step)
                    }
                }
            }
        })
    });
    NodesRow {
        account: target.layout.name.clone(),
        conns,
        one_node,
        two_nodes: two,
        mixed,
        catch_up_idle,
        catch_up_loaded,
        catch_up_missed: idle_missed + loaded_missed,
    }
}
