//! Compressed replies: `Accept-Encoding` negotiated on every JSON reply under `/api`.
//!
//! - Offered: `gzip` and `zstd` (not `br`: brotli streams cannot be joined, so cached
//!   fragments could not be reused). On equal q-values gzip wins: browsers send both, and
//!   Chromium reads only a zstd stream's first frame (see `read_model::encoded`).
//! - Replies under [`THRESHOLD`] bytes, and requests asking for `identity`, nothing, or
//!   nothing offered, get the uncompressed bytes. Every reply under `/api` carries
//!   `Vary: Accept-Encoding`.
//! - Whole-account reads (`/projects`, `/projects/:id`, `/export`) are sent from the
//!   compressed forms kept beside the cached fragments (`Reply` does that), and a changes
//!   reply from the compressed runs kept per project (`read_model::runs`); every other JSON
//!   body over the threshold (records, errors, the documents) is compressed here, after its
//!   handler.
//! - ETags stay weak and equal across encodings: the representations are equivalent.

use bytes::Bytes;
use read_model::encoded::{Chain, Encoding, Part};
use salvo::http::header::{self, HeaderValue};
use salvo::http::{ResBody, StatusCode};
use salvo::prelude::*;

/// The codings offered, in the order they win ties.
pub const OFFERED: &[&str] = &["gzip", "zstd"];
/// Replies shorter than this are sent as they are: compressing would save a few bytes.
pub use read_model::encoded::THRESHOLD;

const VARY: HeaderValue = HeaderValue::from_static("accept-encoding");

/// The coding a request's `Accept-Encoding` prefers among those offered.
pub fn negotiate(req: &Request) -> Encoding {
    let (mut gzip, mut zstd, mut star) = (None::<f32>, None::<f32>, None::<f32>);
    for value in req.headers().get_all(header::ACCEPT_ENCODING) {
        let Ok(value) = value.to_str() else { continue };
        for item in value.split(',') {
            let mut fields = item.split(';');
            let name = fields.next().unwrap_or("").trim();
            let q = fields
                .filter_map(|p| p.trim().strip_prefix("q=").or(p.trim().strip_prefix("Q=")))
                .find_map(|q| q.trim().parse::<f32>().ok())
                .unwrap_or(1.0);
            let slot = if name.eq_ignore_ascii_case("gzip") || name.eq_ignore_ascii_case("x-gzip") {
                &mut gzip
            } else if name.eq_ignore_ascii_case("zstd") {
                &mut zstd
            } else if name == "*" {
                &mut star
            } else {
                continue;
            };
            *slot = Some(slot.map_or(q, |old: f32| old.max(q)));
        }
    }
    let gzip = gzip.or(star).unwrap_or(0.0);
    let zstd = zstd.or(star).unwrap_or(0.0);
    match (gzip, zstd) {
        (g, z) if g <= 0.0 && z <= 0.0 => Encoding::Identity,
        (g, z) if z > g => Encoding::Zstd,
        _ => Encoding::Gzip,
    }
}

/// Marks a response as sent in `encoding`.
pub fn mark(res: &mut Response, encoding: Encoding) {
    if encoding != Encoding::Identity
        && let Ok(v) = HeaderValue::from_str(encoding.token())
    {
        res.headers_mut().insert(header::CONTENT_ENCODING, v);
    }
}

/// The hoop under `/api`: `Vary` on every reply, and the JSON bodies a handler left whole
/// compressed when they are over the threshold.
#[handler]
pub async fn hoop(req: &mut Request, depot: &mut Depot, res: &mut Response, ctrl: &mut FlowCtrl) {
    ctrl.call_next(req, depot, res).await;
    if !req.uri().path().starts_with("/api") {
        return;
    }
    res.headers_mut().append(header::VARY, VARY);
    let json = res
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    let status = res.status_code.unwrap_or(StatusCode::OK);
    if !json
        || res.headers().contains_key(header::CONTENT_ENCODING)
        || matches!(status, StatusCode::NO_CONTENT | StatusCode::NOT_MODIFIED)
    {
        return;
    }
    let size = match res.body_mut() {
        ResBody::Once(b) => b.len(),
        ResBody::Chunks(c) => c.iter().map(Bytes::len).sum(),
        _ => return,
    };
    let encoding = negotiate(req);
    if size < THRESHOLD || encoding == Encoding::Identity {
        return;
    }
    let whole = match res.take_body() {
        ResBody::Once(b) => b,
        ResBody::Chunks(c) => Bytes::from(c.into_iter().collect::<Vec<Bytes>>().concat()),
        _ => unreachable!("matched above"),
    };
    let encoded = Chain(vec![Part::Fresh(whole)]).encode(encoding);
    res.replace_body(ResBody::Chunks(encoded.into()));
    res.headers_mut().remove(header::CONTENT_LENGTH);
    mark(res, encoding);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked(value: &str) -> Encoding {
        let mut req = Request::new();
        req.headers_mut().insert(
            header::ACCEPT_ENCODING,
            HeaderValue::from_str(value).unwrap(),
        );
        negotiate(&req)
    }

    #[test]
    fn gzip_wins_ties_and_q_values_decide_the_rest() {
        assert_eq!(negotiate(&Request::new()), Encoding::Identity);
        assert_eq!(asked("identity"), Encoding::Identity);
        assert_eq!(asked("br"), Encoding::Identity);
        assert_eq!(asked("gzip, deflate, br, zstd"), Encoding::Gzip);
        assert_eq!(asked("zstd"), Encoding::Zstd);
        assert_eq!(asked("zstd;q=1, gzip;q=0.5"), Encoding::Zstd);
        assert_eq!(asked("gzip;q=0, zstd;q=0.1"), Encoding::Zstd);
        assert_eq!(asked("*"), Encoding::Gzip);
        assert_eq!(asked("*;q=0.5, gzip;q=0"), Encoding::Zstd);
        assert_eq!(asked("gzip;q=0, zstd;q=0"), Encoding::Identity);
    }
}
