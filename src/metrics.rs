//! What the service is doing, for Prometheus: counted on the hot paths with atomics alone (no
//! lock, no allocation, no label lookup in a locked map), and read into the text format by
//! `prometheus-client` only when `/metrics` is scraped, on a listener of its own
//! (`serve --metrics-addr`).
//!
//! The families, with the names dashboards rely on:
//! - `workboard_http_requests_total{route,method,status}` and
//!   `workboard_http_request_duration_seconds{route,method}`: `route` is the template
//!   (`/api/v1/tasks/{id}`), the unversioned `/api/...` counted under its versioned name;
//! - `workboard_writes_total{outcome}`: `committed`, `refused` (4xx), `conflict` (409),
//!   `failed` (5xx);
//! - `workboard_write_group_size`, `workboard_commit_duration_seconds`: per commit group;
//! - `workboard_writer_queue_depth`, `workboard_accounts_loaded`, `workboard_live_sockets`,
//!   `workboard_store_bytes`, `workboard_writer_up` (0 once the writer has stopped): gauges
//!   read at the scrape;
//! - `workboard_allowance_exhausted_total{kind}` (`reads`, `writes`), `workboard_bad_key_total`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use ahash::AHashMap;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;

/// A histogram of fixed buckets, counted with atomics.
pub struct AtomicHistogram {
    bounds: &'static [f64],
    /// One count per bound, and one past the last (`+Inf`).
    counts: Box<[AtomicU64]>,
    /// The sum of observations, in millionths of their unit.
    sum_micro: AtomicU64,
}

impl AtomicHistogram {
    pub fn new(bounds: &'static [f64]) -> Self {
        AtomicHistogram {
            bounds,
            counts: (0..=bounds.len()).map(|_| AtomicU64::new(0)).collect(),
            sum_micro: AtomicU64::new(0),
        }
    }

    pub fn observe(&self, value: f64) {
        let at = self.bounds.partition_point(|b| *b < value);
        self.counts[at].fetch_add(1, Ordering::Relaxed);
        self.sum_micro
            .fetch_add((value * 1e6) as u64, Ordering::Relaxed);
    }

    /// How many observations it holds (for `workboard_write_group_size`: commits).
    pub fn count(&self) -> u64 {
        self.counts.iter().map(|c| c.load(Ordering::Relaxed)).sum()
    }

    /// `(sum, count, buckets)` as the encoder takes them (per bucket, not cumulative).
    fn snapshot(&self) -> (f64, u64, Vec<(f64, u64)>) {
        let buckets = self
            .bounds
            .iter()
            .copied()
            .chain(std::iter::once(f64::INFINITY))
            .zip(self.counts.iter().map(|c| c.load(Ordering::Relaxed)))
            .collect();
        (
            self.sum_micro.load(Ordering::Relaxed) as f64 / 1e6,
            self.count(),
            buckets,
        )
    }
}

const DURATION_BOUNDS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0,
];
const GROUP_BOUNDS: &[f64] = &[1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0];
const METHODS: &[&str] = &[
    "GET", "POST", "PATCH", "DELETE", "PUT", "OPTIONS", "HEAD", "other",
];
const STATUSES: &[u16] = &[
    101, 200, 201, 204, 304, 400, 401, 403, 404, 405, 408, 409, 413, 422, 429, 500, 503,
];

/// Requests by route, method and status, and their durations: a table of atomics made at
/// start for every route the service has.
struct HttpTable {
    routes: Vec<String>,
    index: AHashMap<String, usize>,
    /// routes × methods × (statuses + other)
    requests: Box<[AtomicU64]>,
    /// routes × methods
    durations: Box<[AtomicHistogram]>,
}

impl HttpTable {
    fn new(mut routes: Vec<String>) -> Self {
        routes.push("unmatched".to_owned());
        // Keyed as salvo names a matched route (no leading `/`), each `/api/v1/...` route
        // under its unversioned alias too, so a request costs one lookup and no allocation.
        let mut index = AHashMap::new();
        for (i, route) in routes.iter().enumerate() {
            let matched = route.trim_start_matches('/');
            index.insert(matched.to_owned(), i);
            if let Some(rest) = matched.strip_prefix("api/v1/") {
                index.insert(format!("api/{rest}"), i);
            } else if matched == "api/v1" {
                index.insert("api".to_owned(), i);
            }
        }
        let cells = routes.len() * METHODS.len();
        HttpTable {
            requests: (0..cells * (STATUSES.len() + 1))
                .map(|_| AtomicU64::new(0))
                .collect(),
            durations: (0..cells)
                .map(|_| AtomicHistogram::new(DURATION_BOUNDS))
                .collect(),
            routes,
            index,
        }
    }

    fn route_index(&self, matched: &str) -> usize {
        self.index
            .get(matched.trim_start_matches('/'))
            .copied()
            .unwrap_or(self.routes.len() - 1)
    }
}

/// Every metric of a node.
pub struct Metrics {
    http: HttpTable,
    /// committed, refused, conflict, failed
    writes: [AtomicU64; 4],
    pub group_size: AtomicHistogram,
    pub commit_seconds: AtomicHistogram,
    /// reads, writes
    allowance_exhausted: [AtomicU64; 2],
    bad_keys: AtomicU64,
}

/// How a write ended, for `workboard_writes_total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteOutcome {
    Committed = 0,
    Refused = 1,
    Conflict = 2,
    Failed = 3,
}

const OUTCOMES: &[&str] = &["committed", "refused", "conflict", "failed"];

impl Metrics {
    /// Metrics for a service whose routes are `routes` (templates such as
    /// `/api/v1/tasks/{id}`).
    pub fn new(routes: Vec<String>) -> Self {
        Metrics {
            http: HttpTable::new(routes),
            writes: Default::default(),
            group_size: AtomicHistogram::new(GROUP_BOUNDS),
            commit_seconds: AtomicHistogram::new(DURATION_BOUNDS),
            allowance_exhausted: Default::default(),
            bad_keys: AtomicU64::new(0),
        }
    }

    /// Counts one request, by the template of the route it matched (salvo's matched path,
    /// without its leading `/`; unversioned routes count under their versioned name).
    pub fn request(&self, matched: &str, method: &str, status: u16, seconds: f64) {
        let route = self.http.route_index(matched);
        let m = METHODS
            .iter()
            .position(|x| *x == method)
            .unwrap_or(METHODS.len() - 1);
        let s = STATUSES
            .iter()
            .position(|x| *x == status)
            .unwrap_or(STATUSES.len());
        let cell = route * METHODS.len() + m;
        self.http.requests[cell * (STATUSES.len() + 1) + s].fetch_add(1, Ordering::Relaxed);
        self.http.durations[cell].observe(seconds);
    }

    pub fn write(&self, outcome: WriteOutcome) {
        self.writes[outcome as usize].fetch_add(1, Ordering::Relaxed);
    }

    pub fn allowance_exhausted(&self, writes: bool) {
        self.allowance_exhausted[usize::from(writes)].fetch_add(1, Ordering::Relaxed);
    }

    pub fn bad_key(&self) {
        self.bad_keys.fetch_add(1, Ordering::Relaxed);
    }
}

/// The gauges, read when `/metrics` is scraped.
pub struct Gauges {
    pub writer_queue_depth: Box<dyn Fn() -> u64 + Send + Sync>,
    pub accounts_loaded: Box<dyn Fn() -> u64 + Send + Sync>,
    pub live_sockets: Box<dyn Fn() -> u64 + Send + Sync>,
    pub store_bytes: Box<dyn Fn() -> u64 + Send + Sync>,
    /// 1 while the writer runs, 0 once it has stopped (the log says why).
    pub writer_up: Box<dyn Fn() -> u64 + Send + Sync>,
}

/// Encodes a node's metrics on each scrape.
pub struct Scrape {
    metrics: Arc<Metrics>,
    gauges: Gauges,
}

impl std::fmt::Debug for Scrape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Scrape")
    }
}

/// A registry holding a node's collector.
pub fn registry(metrics: Arc<Metrics>, gauges: Gauges) -> Registry {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(Scrape { metrics, gauges }));
    registry
}

/// The registry's metrics in the text format.
pub fn render(registry: &Registry) -> String {
    let mut out = String::new();
    prometheus_client::encoding::text::encode(&mut out, registry)
        .expect("writing to a String does not fail");
    out
}

fn histogram(
    encoder: &mut DescriptorEncoder<'_>,
    name: &str,
    help: &str,
    h: &AtomicHistogram,
) -> Result<(), std::fmt::Error> {
    let (sum, count, buckets) = h.snapshot();
    encoder
        .encode_descriptor(name, help, None, MetricType::Histogram)?
        .encode_histogram::<NoLabelSet>(sum, count, &buckets, None)
}

fn gauge(
    encoder: &mut DescriptorEncoder<'_>,
    name: &str,
    help: &str,
    value: u64,
) -> Result<(), std::fmt::Error> {
    encoder
        .encode_descriptor(name, help, None, MetricType::Gauge)?
        .encode_gauge(&(value as i64))
}

impl Collector for Scrape {
    fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> Result<(), std::fmt::Error> {
        let m = &self.metrics;
        let table = &m.http;
        let mut family = encoder.encode_descriptor(
            "workboard_http_requests",
            "HTTP requests answered, by route template, method and status",
            None,
            MetricType::Counter,
        )?;
        for (r, route) in table.routes.iter().enumerate() {
            for (mi, method) in METHODS.iter().enumerate() {
                let cell = r * METHODS.len() + mi;
                for si in 0..=STATUSES.len() {
                    let n =
                        table.requests[cell * (STATUSES.len() + 1) + si].load(Ordering::Relaxed);
                    if n == 0 {
                        continue;
                    }
                    let status = STATUSES.get(si).map_or("other".to_owned(), u16::to_string);
                    let labels = [
                        ("route", route.as_str()),
                        ("method", *method),
                        ("status", status.as_str()),
                    ];
                    family
                        .encode_family(&labels)?
                        .encode_counter::<NoLabelSet, _, u64>(&n, None)?;
                }
            }
        }
        let mut family = encoder.encode_descriptor(
            "workboard_http_request_duration_seconds",
            "Time from a request's head to its reply, by route template and method",
            None,
            MetricType::Histogram,
        )?;
        for (r, route) in table.routes.iter().enumerate() {
            for (mi, method) in METHODS.iter().enumerate() {
                let h = &table.durations[r * METHODS.len() + mi];
                if h.count() == 0 {
                    continue;
                }
                let (sum, count, buckets) = h.snapshot();
                let labels = [("route", route.as_str()), ("method", *method)];
                family
                    .encode_family(&labels)?
                    .encode_histogram::<NoLabelSet>(sum, count, &buckets, None)?;
            }
        }
        let mut family = encoder.encode_descriptor(
            "workboard_writes",
            "Writes by outcome: committed, refused (4xx), conflict (409), failed (5xx)",
            None,
            MetricType::Counter,
        )?;
        for (i, outcome) in OUTCOMES.iter().enumerate() {
            let n = m.writes[i].load(Ordering::Relaxed);
            family
                .encode_family(&[("outcome", *outcome)])?
                .encode_counter::<NoLabelSet, _, u64>(&n, None)?;
        }
        histogram(
            &mut encoder,
            "workboard_write_group_size",
            "Commands committed together in one transaction",
            &m.group_size,
        )?;
        histogram(
            &mut encoder,
            "workboard_commit_duration_seconds",
            "Time a commit group's transaction took, from its first command to its commit",
            &m.commit_seconds,
        )?;
        gauge(
            &mut encoder,
            "workboard_writer_queue_depth",
            "Commands waiting for the writer",
            (self.gauges.writer_queue_depth)(),
        )?;
        gauge(
            &mut encoder,
            "workboard_accounts_loaded",
            "Account documents held in memory",
            (self.gauges.accounts_loaded)(),
        )?;
        gauge(
            &mut encoder,
            "workboard_live_sockets",
            "Open live sockets",
            (self.gauges.live_sockets)(),
        )?;
        gauge(
            &mut encoder,
            "workboard_store_bytes",
            "The store's size on disk",
            (self.gauges.store_bytes)(),
        )?;
        gauge(
            &mut encoder,
            "workboard_writer_up",
            "1 while the writer runs; 0 once it has stopped, when no write lands (the log says why)",
            (self.gauges.writer_up)(),
        )?;
        let mut family = encoder.encode_descriptor(
            "workboard_allowance_exhausted",
            "Requests refused because a key's daily allowance was used up, by kind",
            None,
            MetricType::Counter,
        )?;
        for (i, kind) in ["reads", "writes"].iter().enumerate() {
            let n = m.allowance_exhausted[i].load(Ordering::Relaxed);
            family
                .encode_family(&[("kind", *kind)])?
                .encode_counter::<NoLabelSet, _, u64>(&n, None)?;
        }
        let n = m.bad_keys.load(Ordering::Relaxed);
        encoder
            .encode_descriptor(
                "workboard_bad_key",
                "Requests refused for a bad, unknown, revoked or expired key",
                None,
                MetricType::Counter,
            )?
            .encode_counter::<NoLabelSet, _, u64>(&n, None)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_names_each_family_and_counts_by_template() {
        let m = Arc::new(Metrics::new(vec!["/api/v1/tasks/{id}".into()]));
        m.request("api/tasks/{id}", "PATCH", 200, 0.002);
        m.request("api/v1/tasks/{id}", "PATCH", 200, 0.003);
        m.write(WriteOutcome::Committed);
        let gauges = Gauges {
            writer_queue_depth: Box::new(|| 3),
            accounts_loaded: Box::new(|| 1),
            live_sockets: Box::new(|| 0),
            store_bytes: Box::new(|| 4096),
            writer_up: Box::new(|| 1),
        };
        let text = render(&registry(m, gauges));
        assert!(text.contains(
            "workboard_http_requests_total{route=\"/api/v1/tasks/{id}\",method=\"PATCH\",status=\"200\"} 2"
        ), "{text}");
        assert!(
            text.contains("workboard_writes_total{outcome=\"committed\"} 1"),
            "{text}"
        );
        assert!(text.contains("workboard_writer_queue_depth 3"), "{text}");
        assert!(text.contains("workboard_store_bytes 4096"), "{text}");
        assert!(text.contains("workboard_writer_up 1"), "{text}");
    }
}
