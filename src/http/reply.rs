//! Replies: the JSON envelope of a success, and bodies sent as chains of shared buffers
//! (cached fragments are never copied into one buffer, and are sent in the client's encoding
//! from their kept compressed forms) or, for a large changes reply, written out as the
//! connection takes them.

use std::collections::VecDeque;

use bytes::Bytes;
use read_model::Body;
use read_model::encoded::Encoding;
use salvo::http::header::HeaderName;
use salvo::http::{HeaderValue, ResBody, StatusCode, header};
use salvo::oapi::{Components, EndpointOutRegister, Operation};
use salvo::prelude::*;
use serde_json::Value;

use super::encoding::THRESHOLD;
pub use super::error::ApiError;

/// The reply header of a remembered reply (`Idempotency-Key`, see [`super::idempotency`]).
pub const REPLAYED: HeaderName = HeaderName::from_static("idempotent-replayed");

/// A successful reply: a status, a body in chunks, and the headers that go with it.
pub struct Reply {
    pub status: StatusCode,
    pub body: Body,
    /// A weak entity tag for conditional reads.
    pub etag: Option<String>,
    pub headers: Vec<(HeaderName, HeaderValue)>,
}

impl Reply {
    /// 304: the client's copy is current; no body.
    pub fn not_modified(etag: String) -> Self {
        Reply {
            status: StatusCode::NOT_MODIFIED,
            body: Body::Ready(Vec::new()),
            etag: Some(etag),
            headers: Vec::new(),
        }
    }

    pub fn with_etag(mut self, etag: String) -> Self {
        self.etag = Some(etag);
        self
    }

    pub fn with_header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.headers.push((name, value));
        self
    }

    pub fn json(status: StatusCode, value: &Value) -> Self {
        Reply::chunks(status, vec![Bytes::from(value.to_string())])
    }

    pub fn chunks(status: StatusCode, chunks: Vec<Bytes>) -> Self {
        Reply::body(status, Body::Ready(chunks))
    }

    pub fn body(status: StatusCode, body: Body) -> Self {
        Reply {
            status,
            body,
            etag: None,
            headers: Vec::new(),
        }
    }

    /// `{"ok":true,<head>,"<name>":<record>}`: a write reply wrapping a record's read shape.
    pub fn record(status: StatusCode, head: &str, name: &str, record: Option<Bytes>) -> Self {
        let open = format!("{{\"ok\":true,{head}\"{name}\":");
        Reply {
            status,
            body: Body::Ready(vec![
                Bytes::from(open),
                record.unwrap_or_else(|| Bytes::from_static(b"null")),
                Bytes::from_static(b"}"),
            ]),
            etag: None,
            headers: Vec::new(),
        }
    }
}

#[async_trait]
impl Writer for Reply {
    async fn write(self, req: &mut Request, _depot: &mut Depot, res: &mut Response) {
        let encoding = super::encoding::negotiate(req);
        self.render_in(res, encoding);
    }
}

/// Each route lists its own success replies in its endpoint.
impl EndpointOutRegister for Reply {
    fn register(_components: &mut Components, _operation: &mut Operation) {}
}

impl Reply {
    /// Writes the reply into the response uncompressed.
    pub fn render(self, res: &mut Response) {
        self.render_in(res, Encoding::Identity)
    }

    /// Writes the reply into the response: its status and its body, in `encoding` where the
    /// body is made of cached pieces (other bodies are left whole for the encoding hoop),
    /// then its headers (a `Content-Type` among them replaces the JSON one).
    pub fn render_in(self, res: &mut Response, encoding: Encoding) {
        if self.status == StatusCode::NOT_MODIFIED {
            res.status_code(StatusCode::NOT_MODIFIED);
            res.replace_body(ResBody::None);
        } else {
            match self.body {
                Body::Ready(chunks) => send_chunks(res, self.status, chunks),
                Body::Pieces(chain)
                    if encoding != Encoding::Identity && chain.len() >= THRESHOLD =>
                {
                    send_chunks(res, self.status, chain.encode(encoding));
                    super::encoding::mark(res, encoding);
                }
                Body::Pieces(chain) => send_chunks(res, self.status, chain.identity()),
                Body::Parts(parts) => send_parts(res, self.status, parts),
                Body::Rows(rows) => send_parts(res, self.status, rows),
                Body::Encoded(encoding, chunks) => {
                    send_chunks(res, self.status, chunks);
                    super::encoding::mark(res, encoding);
                }
            }
        }
        for (name, value) in self.headers {
            res.headers_mut().insert(name, value);
        }
        if let Some(tag) = self
            .etag
            .as_deref()
            .and_then(|t| HeaderValue::from_str(t).ok())
        {
            res.headers_mut().insert(header::ETAG, tag);
        }
    }
}

pub fn send_chunks(res: &mut Response, status: StatusCode, chunks: Vec<Bytes>) {
    res.status_code(status);
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    res.replace_body(ResBody::Chunks(VecDeque::from(chunks)));
}

/// What a reply written out as it is sent may have ready before it streams: a reply that
/// ends within this is sent whole, with its length.
const READY_BEFORE_STREAMING: usize = 256 * 1024;

/// A reply written out while it is sent: the connection pulls the next buffer when it has
/// room for it, so a large reply never sits whole in memory. (It is sent uncompressed: a
/// compressed changes reply is joined from kept runs instead, `Body::Encoded`.)
pub fn send_parts(
    res: &mut Response,
    status: StatusCode,
    mut parts: impl Iterator<Item = Bytes> + Send + 'static,
) {
    let mut ready = Vec::new();
    let mut size = 0;
    while size < READY_BEFORE_STREAMING {
        match parts.next() {
            Some(part) => {
                size += part.len();
                ready.push(part);
            }
            None => return send_chunks(res, status, ready),
        }
    }
    send_chunks(res, status, Vec::new());
    let rest = ready.into_iter().chain(parts);
    res.stream(futures_util::stream::iter(
        rest.map(Ok::<Bytes, std::convert::Infallible>),
    ));
}

const FORBIDDEN_PAGE: &str = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>403 Forbidden</title></head>\
<body><h1>403 Forbidden</h1><p>Requests to this interface carry an <code>Authorization: Bearer &lt;key&gt;</code> header.</p></body></html>\n";

/// The edge's refusal of a request with no `Authorization` header: HTML, not JSON.
pub fn forbidden(res: &mut Response) {
    res.status_code(StatusCode::FORBIDDEN);
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    res.replace_body(ResBody::Once(Bytes::from_static(FORBIDDEN_PAGE.as_bytes())));
}
