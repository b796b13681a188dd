//! The load generator: N connections (one keep-alive client each, one tokio task each) run a
//! step in a loop for a warm-up and then a measured window; each step reports its latency.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use reqwest::{Method, StatusCode};

use crate::bare::BareConn;

/// How long a run warms up and then measures.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    pub warmup: Duration,
    pub measure: Duration,
}

/// Why a request got no answer.
pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// One HTTP/1.1 connection to a server: a reqwest client that keeps at most one idle
/// connection, or with `LOAD_CLIENT=bare` hyper's bare client connection (see `bare`).
#[derive(Clone)]
pub struct Conn {
    client: Client,
}

#[derive(Clone)]
enum Client {
    Reqwest { http: reqwest::Client, base: String },
    Bare(BareConn),
}

/// Whether this run drives the server with the bare generator (`LOAD_CLIENT=bare`).
pub fn bare_client() -> bool {
    std::env::var("LOAD_CLIENT").is_ok_and(|v| v == "bare")
}

pub struct Answer {
    pub status: StatusCode,
    pub body: Bytes,
    /// `Content-Encoding`, when the reply has one.
    pub encoding: Option<String>,
}

impl Answer {
    /// Sends `req` and keeps its reply whole.
    async fn read(req: reqwest::RequestBuilder) -> Result<Answer, Error> {
        let res = req.send().await?;
        let status = res.status();
        let encoding = res
            .headers()
            .get(reqwest::header::CONTENT_ENCODING)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        Ok(Answer {
            status,
            encoding,
            body: res.bytes().await?,
        })
    }
}

impl Conn {
    pub fn new(addr: std::net::SocketAddr) -> Conn {
        let client = if bare_client() {
            Client::Bare(BareConn::new(addr))
        } else {
            Client::Reqwest {
                http: reqwest::Client::builder()
                    .no_proxy()
                    .pool_max_idle_per_host(1)
                    .tcp_nodelay(true)
                    .timeout(Duration::from_secs(120))
                    .build()
                    .expect("an HTTP client"),
                base: format!("http://{addr}"),
            }
        };
        Conn { client }
    }

    fn request(
        http: &reqwest::Client,
        base: &str,
        method: Method,
        path: &str,
        key: &str,
        headers: &[(&str, &str)],
    ) -> reqwest::RequestBuilder {
        let mut req = http
            .request(method, format!("{base}{path}"))
            .bearer_auth(key);
        for (name, value) in headers {
            req = req.header(*name, *value);
        }
        req
    }

    /// A request whose body is kept.
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        key: &str,
        body: Option<Bytes>,
    ) -> Result<Answer, Error> {
        self.call_headers(method, path, key, &[], body).await
    }

    /// A request with `headers` added (an `Idempotency-Key`), its body kept.
    pub async fn call_headers(
        &self,
        method: Method,
        path: &str,
        key: &str,
        headers: &[(&str, &str)],
        body: Option<Bytes>,
    ) -> Result<Answer, Error> {
        match &self.client {
            Client::Reqwest { http, base } => {
                let mut req = Self::request(http, base, method, path, key, headers);
                if let Some(b) = body {
                    req = req
                        .header(reqwest::header::CONTENT_TYPE, "application/json")
                        .body(b);
                }
                Answer::read(req).await
            }
            Client::Bare(bare) => bare.answer(method, path, key, headers, body).await,
        }
    }

    /// A GET with `headers` added, its body kept as it came.
    pub async fn call_with(
        &self,
        method: Method,
        path: &str,
        key: &str,
        headers: &[(&str, &str)],
    ) -> Result<Answer, Error> {
        match &self.client {
            Client::Reqwest { http, base } => {
                Answer::read(Self::request(http, base, method, path, key, headers)).await
            }
            Client::Bare(bare) => bare.answer(method, path, key, headers, None).await,
        }
    }

    /// A GET whose body is read and dropped chunk by chunk (a 17 MB reply is not kept).
    pub async fn drain(&self, path: &str, key: &str) -> Result<(StatusCode, u64), Error> {
        self.drain_with(path, key, &[]).await
    }

    /// [`Self::drain`] with `headers` added (`Accept-Encoding`); the body is counted as it
    /// came, compressed or not.
    pub async fn drain_with(
        &self,
        path: &str,
        key: &str,
        headers: &[(&str, &str)],
    ) -> Result<(StatusCode, u64), Error> {
        let (http, base) = match &self.client {
            Client::Reqwest { http, base } => (http, base),
            Client::Bare(bare) => return bare.drain(path, key, headers).await,
        };
        let mut res = Self::request(http, base, Method::GET, path, key, headers)
            .send()
            .await?;
        let status = res.status();
        let mut n = 0u64;
        while let Some(chunk) = res.chunk().await? {
            n += chunk.len() as u64;
        }
        Ok((status, n))
    }
}

/// A live socket open on the server at `addr`: a ticket taken with `key` over `conn`, then
/// the socket opened with it.
pub async fn live_socket(
    conn: &Conn,
    addr: std::net::SocketAddr,
    key: &str,
) -> tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>> {
    let answer = conn
        .call(Method::POST, "/api/v1/live/ticket", key, Some(Bytes::new()))
        .await
        .expect("a ticket");
    #[derive(serde::Deserialize)]
    struct Ticket {
        ticket: String,
    }
    let ticket: Ticket = serde_json::from_slice(&answer.body).expect("a ticket reply");
    let url = format!("ws://{addr}/api/v1/live?ticket={}", ticket.ticket);
    let (ws, _) = tokio_tungstenite::connect_async(url)
        .await
        .expect("the live socket opens");
    ws
}

/// What one step of a connection produced.
pub enum Step {
    /// A measured request (`write` sorts it into the write column of mixed runs).
    Done {
        latency: Duration,
        ok: bool,
        bytes: u64,
        write: bool,
    },
    /// Work that is not measured (a write that sets up a measured read, an account swap).
    Unmeasured,
}

impl Step {
    pub fn read(started: Instant, ok: bool, bytes: u64) -> Step {
        Step::Done {
            latency: started.elapsed(),
            ok,
            bytes,
            write: false,
        }
    }

    pub fn write(started: Instant, ok: bool, bytes: u64) -> Step {
        Step::Done {
            latency: started.elapsed(),
            ok,
            bytes,
            write: true,
        }
    }
}

/// Latencies of successful requests, in microseconds, and the failures.
#[derive(Debug, Default, Clone)]
pub struct Tally {
    pub micros: Vec<u32>,
    pub errors: u64,
    pub bytes: u64,
}

impl Tally {
    pub fn add(&mut self, latency: Duration, ok: bool, bytes: u64) {
        if ok {
            self.micros
                .push(latency.as_micros().min(u32::MAX as u128) as u32);
            self.bytes += bytes;
        } else {
            self.errors += 1;
        }
    }

    pub(crate) fn merge(&mut self, other: Tally) {
        self.micros.extend(other.micros);
        self.errors += other.errors;
        self.bytes += other.bytes;
    }

    /// The `q` quantile (0..=1) in microseconds.
    pub fn quantile(&self, q: f64) -> f64 {
        if self.micros.is_empty() {
            return f64::NAN;
        }
        let mut v = self.micros.clone();
        let i = ((v.len() - 1) as f64 * q).round() as usize;
        let (_, x, _) = v.select_nth_unstable(i);
        f64::from(*x)
    }
}

/// What the process and the store did during the measured window.
#[derive(Debug, Default, Clone, Copy)]
pub struct Window {
    /// Peak resident set during the window (KiB).
    pub peak_rss_kib: u64,
    /// Commits of the store during the window, when the store exposes them.
    pub commits: Option<u32>,
    /// CPU time the whole process (server and load generator) spent in the window, and
    /// the writer thread's share of it (microseconds).
    pub cpu: crate::host::CpuTime,
}

/// A run's results.
#[derive(Debug, Clone)]
pub struct Measured {
    pub conns: usize,
    pub secs: f64,
    pub reads: Tally,
    pub writes: Tally,
    pub window: Window,
}

impl Measured {
    pub fn all(&self) -> Tally {
        let mut t = self.reads.clone();
        t.merge(self.writes.clone());
        t
    }

    pub fn rate(&self) -> f64 {
        (self.reads.micros.len() + self.writes.micros.len()) as f64 / self.secs
    }

    /// CPU microseconds per measured request: the whole process's, and the writer's.
    pub fn cpu_per_request(&self) -> (f64, f64) {
        let n = (self.reads.micros.len() + self.writes.micros.len()).max(1) as f64;
        let cpu = self.window.cpu;
        (cpu.process_us as f64 / n, cpu.writer_us as f64 / n)
    }

    pub fn errors(&self) -> u64 {
        self.reads.errors + self.writes.errors
    }

    /// Two windows of the same run as one: their requests, their time, the higher peak.
    pub fn merge(mut self, other: Measured) -> Measured {
        self.secs += other.secs;
        self.reads.merge(other.reads);
        self.writes.merge(other.writes);
        self.window = Window {
            peak_rss_kib: self.window.peak_rss_kib.max(other.window.peak_rss_kib),
            commits: self
                .window
                .commits
                .zip(other.window.commits)
                .map(|(a, b)| a + b),
            cpu: self.window.cpu.plus(other.window.cpu),
        };
        self
    }
}

/// Samples the process and the store at the window's edges.
pub trait Probe: Send + Sync + 'static {
    /// A commit counter that only moves forward (it may wrap).
    fn commits(&self) -> Option<u32>;
}

/// Runs `step` on every connection state until the window ends.
pub async fn run<S, F, Fut>(
    timing: Timing,
    probe: Arc<dyn Probe>,
    states: Vec<S>,
    step: F,
) -> Measured
where
    S: Send + 'static,
    F: Fn(S) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = (S, Step)> + Send + 'static,
{
    let conns = states.len();
    let step = Arc::new(step);
    let from = Instant::now() + timing.warmup;
    let until = from + timing.measure;
    let watcher = tokio::spawn(async move {
        tokio::time::sleep_until(from.into()).await;
        crate::host::reset_peak_rss();
        let c0 = probe.commits();
        let cpu0 = crate::host::CpuTime::now();
        tokio::time::sleep_until(until.into()).await;
        let c1 = probe.commits();
        Window {
            peak_rss_kib: crate::host::peak_rss_kib(),
            commits: c0.zip(c1).map(|(a, b)| b.wrapping_sub(a)),
            cpu: crate::host::CpuTime::now().since(cpu0),
        }
    });
    let tasks: Vec<_> = states
        .into_iter()
        .map(|mut state| {
            let step = step.clone();
            tokio::spawn(async move {
                let (mut reads, mut writes) = (Tally::default(), Tally::default());
                while Instant::now() < until {
                    let (next, outcome) = step(state).await;
                    state = next;
                    let end = Instant::now();
                    if end < from || end > until {
                        continue;
                    }
                    if let Step::Done {
                        latency,
                        ok,
                        bytes,
                        write,
                    } = outcome
                    {
                        if write { &mut writes } else { &mut reads }.add(latency, ok, bytes);
                    }
                }
                (reads, writes)
            })
        })
        .collect();
    let (mut reads, mut writes) = (Tally::default(), Tally::default());
    for t in tasks {
        let (r, w) = t.await.expect("a connection task panicked");
        reads.merge(r);
        writes.merge(w);
    }
    let window = watcher.await.expect("the probe task panicked");
    Measured {
        conns,
        secs: timing.measure.as_secs_f64(),
        reads,
        writes,
        window,
    }
}
