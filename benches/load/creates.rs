//! The write scenarios that create (single and batch creates, moving to a fresh copy of the
//! account before storage runs out) and the 90/10 read/write mix with live sockets.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use bytes::Bytes;
use reqwest::{Method, StatusCode};

use crate::ceiling;
use crate::drive::{Conn, Step};
use crate::host::{Minter, Target};
use crate::raw::RawWrites;
use crate::scenarios::*;

/// Accounts that fill up: the connections share one, and move to a fresh copy of the
/// fixture when it nears the storage limit (or answers 413).
struct Rotating {
    minter: Arc<Minter>,
    current: parking_lot::Mutex<(u64, Target)>,
    /// Copies made before the measured window, taken in turn as each fills. A copy made in
    /// the window is an import: the writer would run it between the creates, and its
    /// stall and CPU would be measured as theirs.
    spares: parking_lot::Mutex<Vec<Target>>,
    /// Copies the window still had to make, once the spares ran out.
    made_late: AtomicU64,
    swapping: tokio::sync::Mutex<()>,
    cards: AtomicU64,
    budget: u64,
    swaps: AtomicU64,
}

impl Rotating {
    fn new(minter: Arc<Minter>, bytes_per_card: u64, spares: usize) -> Arc<Rotating> {
        let first = minter.mint();
        let spares = (0..spares).map(|_| minter.mint()).collect();
        let free = crate::generator::STORAGE_LIMIT
            .saturating_sub(first.layout.stored)
            .saturating_sub(1 << 20);
        Arc::new(Rotating {
            minter,
            current: parking_lot::Mutex::new((0, first)),
            spares: parking_lot::Mutex::new(spares),
            made_late: AtomicU64::new(0),
            swapping: tokio::sync::Mutex::new(()),
            cards: AtomicU64::new(0),
            budget: free / bytes_per_card,
            swaps: AtomicU64::new(0),
        })
    }

    fn current(&self) -> (u64, Target) {
        self.current.lock().clone()
    }

    /// Counts created cards; past the budget, moves everyone to a fresh account.
    async fn created(&self, generation: u64, cards: u64) {
        if self.cards.fetch_add(cards, Ordering::Relaxed) + cards >= self.budget {
            self.swap(generation).await;
        }
    }

    /// POSTs `body` (making `cards` cards) into `target`, the copy of `generation` the body
    /// was made for: a measured step, or an unmeasured one when the copy was full and
    /// everyone moves on.
    async fn post(
        &self,
        conn: &Conn,
        (generation, target): &(u64, Target),
        body: Bytes,
        cards: u64,
    ) -> Step {
        let generation = *generation;
        let t = Instant::now();
        let answer = conn
            .call(Method::POST, "/api/v1/tasks", &target.key, Some(body))
            .await;
        match answer {
            Ok(a) if a.status == StatusCode::CREATED => {
                let step = Step::write(t, true, a.body.len() as u64);
                self.created(generation, cards).await;
                step
            }
            Ok(a) if a.status == StatusCode::PAYLOAD_TOO_LARGE => {
                self.swap(generation).await;
                Step::Unmeasured
            }
            _ => Step::write(t, false, 0),
        }
    }

    /// The report's words for how often the connections moved on.
    fn moves(&self) -> String {
        format!(
            "moved to a new copy {} times ({} of them made in the window)",
            self.swaps.load(Ordering::Relaxed),
            self.made_late.load(Ordering::Relaxed)
        )
    }

    async fn swap(&self, generation: u64) {
        let _one_at_a_time = self.swapping.lock().await;
        if self.current.lock().0 != generation {
            return;
        }
        let spare = self.spares.lock().pop();
        let fresh = match spare {
            Some(spare) => spare,
            None => {
                self.made_late.fetch_add(1, Ordering::Relaxed);
                let minter = self.minter.clone();
                tokio::task::spawn_blocking(move || minter.mint())
                    .await
                    .expect("a fresh account")
            }
        };
        *self.current.lock() = (generation + 1, fresh);
        self.cards.store(0, Ordering::Relaxed);
        self.swaps.fetch_add(1, Ordering::Relaxed);
    }
}

/// One create body: a typical card.
fn create_body(column: &str, n: u64, conn: usize) -> Bytes {
    Bytes::from(format!(
        "{{\"columnId\":\"{column}\",\"title\":\"Bench card {n:08} from {conn:02}\",\
         \"description\":\"Made by the load bench to measure a single create.\",\
         \"priority\":3,\"tags\":[\"bench\"]}}"
    ))
}

struct Creator {
    conn: Conn,
    index: usize,
    made: u64,
}

impl Creator {
    /// One creator per connection to `addr`.
    fn many(addr: std::net::SocketAddr, conns: usize) -> Vec<Creator> {
        (0..conns)
            .map(|index| Creator {
                conn: Conn::new(addr),
                index,
                made: 0,
            })
            .collect()
    }
}

/// Scenario 5: single `POST /tasks` into a copy of the fixture (the bare parse-and-append route beside).
pub fn create_one(cx: &Cx<'_>, minter: Arc<Minter>, conns: usize) -> Row {
    // About two copies fill in a window at 64 connections on SQLite.
    let rotating = Rotating::new(minter, 500, 4);
    let (_, first) = rotating.current();
    cx.prime(&first);
    let server = |cx: &Cx<'_>| {
        let rot = rotating.clone();
        cx.drive(Creator::many(cx.host.addr, conns), move |mut c: Creator| {
            let rot = rot.clone();
            async move {
                let copy = rot.current();
                let columns = &copy.1.layout.columns;
                let column = &columns[(c.made as usize + c.index) % columns.len()];
                c.made += 1;
                let body = create_body(column, c.made, c.index);
                let step = rot.post(&c.conn, &copy, body, 1).await;
                (c, step)
            }
        })
    };
    let bare = ceiling::parse_append(cx.server_rt);
    let column = first.layout.columns[0].clone();
    let key: Arc<str> = first.key.as_str().into();
    let appender = |cx: &Cx<'_>| {
        let (key, column) = (key.clone(), column.clone());
        cx.drive(Creator::many(bare.addr, conns), move |mut c: Creator| {
            let (key, column) = (key.clone(), column.clone());
            async move {
                c.made += 1;
                let body = create_body(&column, c.made, c.index);
                let t = Instant::now();
                let ok = matches!(
                    c.conn.call(Method::POST, "/api/v1/tasks", &key, Some(body)).await,
                    Ok(a) if a.status == StatusCode::CREATED
                );
                (c, Step::write(t, ok, 0))
            }
        })
    };
    let (run, ceiling) = cx.alternating(server, appender);
    let raw = cx.raw_beside(&run, RawWrites::Append);
    Row {
        scenario: 5,
        account: first.layout.name.clone(),
        run,
        ceiling: Some(ceiling),
        raw,
        note: format!("fresh copy; {}", rotating.moves()),
    }
}

const BATCH: usize = 200;

fn batch_body(columns: &[String], n: u64, conn: usize) -> Bytes {
    let entries: Vec<String> = (0..BATCH)
        .map(|i| {
            format!(
                "{{\"columnId\":\"{}\",\"title\":\"Batch {n:06}-{conn:02} card {i:03}\"}}",
                columns[i % columns.len()]
            )
        })
        .collect();
    Bytes::from(format!("{{\"tasks\":[{}]}}", entries.join(",")))
}

/// Scenario 6: `POST /tasks {"tasks":[200]}` into copies of the fixture, moving to a fresh copy as each
/// one fills up.
pub fn create_batch(cx: &Cx<'_>, minter: Arc<Minter>, conns: usize) -> Row {
    // Up to eight copies fill in a window.
    let rotating = Rotating::new(minter, 360, 10);
    let (_, first) = rotating.current();
    cx.prime(&first);
    let states = Creator::many(cx.host.addr, conns);
    let rot = rotating.clone();
    let run = cx.drive(states, move |mut c: Creator| {
        let rot = rot.clone();
        async move {
            let copy = rot.current();
            c.made += 1;
            let body = batch_body(&copy.1.layout.columns, c.made, c.index);
            let step = rot.post(&c.conn, &copy, body, BATCH as u64).await;
            (c, step)
        }
    });
    Row {
        scenario: 6,
        account: first.layout.name.clone(),
        run,
        ceiling: None,
        raw: None,
        note: format!("{BATCH} cards per request; {}", rotating.moves()),
    }
}

struct Mixer {
    editor: Editor,
    rng: u64,
    since: i64,
    holding: usize,
}

impl Mixer {
    /// xorshift: the mix needs no more than a cheap, seeded coin.
    fn coin(&mut self) -> f64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        (self.rng >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Opens a live socket and counts the nudges it receives until `until`.
async fn socket(
    conn: Conn,
    addr: std::net::SocketAddr,
    key: String,
    from: Instant,
    until: Instant,
) -> u64 {
    use futures_util::StreamExt;
    let mut ws = crate::drive::live_socket(&conn, addr, &key).await;
    let mut nudges = 0;
    loop {
        tokio::select! {
            frame = ws.next() => match frame {
                Some(Ok(tokio_tungstenite::tungstenite::Message::Text(text))) => {
                    let now = Instant::now();
                    if text.contains("\"changed\"") && now >= from && now <= until {
                        nudges += 1;
                    }
                }
                Some(Ok(_)) => {}
                _ => break,
            },
            _ = tokio::time::sleep_until(until.into()) => break,
        }
    }
    nudges
}

/// Scenario 7: 90% reads (half `/changes` polls with `since` and `holding`, half whole-account
/// reads), 10% PATCHes, and a live socket per 8 connections counting nudges.
pub fn mix(cx: &Cx<'_>, target: &Target, conns: usize) -> Row {
    cx.prime(target);
    let from = Instant::now() + cx.timing.warmup;
    let until = from + cx.timing.measure;
    let sockets: Vec<_> = (0..conns.div_ceil(8))
        .map(|_| {
            cx.client_rt.spawn(socket(
                Conn::new(cx.host.addr),
                cx.host.addr,
                target.key.clone(),
                from,
                until,
            ))
        })
        .collect();
    let states = editors(cx, target, conns, None)
        .into_iter()
        .enumerate()
        .map(|(i, editor)| Mixer {
            editor,
            rng: 0x9E37_79B9_7F4A_7C15 ^ (i as u64 + 1),
            since: 0,
            holding: 0,
        })
        .collect();
    let key: Arc<str> = target.key.as_str().into();
    let run = cx.drive(states, move |mut m: Mixer| {
        let key = key.clone();
        async move {
            let coin = m.coin();
            let t = Instant::now();
            let step = if coin < 0.10 {
                let (ok, bytes) = m.editor.patch(&key).await;
                Step::write(t, ok, bytes)
            } else if coin < 0.55 {
                let path = format!("/api/v1/changes?since={}&holding={}", m.since, m.holding);
                match m.editor.conn.call(Method::GET, &path, &key, None).await {
                    Ok(a) if a.status == StatusCode::OK => {
                        let step = Step::read(t, true, a.body.len() as u64);
                        if a.body.starts_with(b"{\"unchanged\":true") {
                            m.since = now_of(&a.body).unwrap_or(m.since);
                        } else if let Some((now, count)) = now_and_count(&a.body) {
                            (m.since, m.holding) = (now, count);
                        }
                        step
                    }
                    _ => Step::read(t, false, 0),
                }
            } else {
                match m.editor.conn.drain("/api/v1/projects", &key).await {
                    Ok((s, n)) => Step::read(t, s == StatusCode::OK, n),
                    Err(_) => Step::read(t, false, 0),
                }
            };
            (m, step)
        }
    });
    let nudges: Vec<u64> = sockets
        .into_iter()
        .map(|s| cx.client_rt.block_on(s).unwrap_or(0))
        .collect();
    let total: u64 = nudges.iter().sum();
    Row {
        scenario: 7,
        account: target.layout.name.clone(),
        note: format!(
            "{} sockets got {} nudges each on average ({} writes in the window)",
            nudges.len(),
            total / nudges.len().max(1) as u64,
            run.writes.micros.len()
        ),
        run,
        ceiling: None,
        raw: None,
    }
}
