//! The bare salvo routes the read scenarios are held against, in the same process: one
//! returning fixed bytes, one parsing a body and appending it to memory (kept beside the
//! write scenarios as information; their ceiling is the raw loop of [`crate::raw`]).

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use parking_lot::Mutex;
use salvo::conn::tcp::TcpAcceptor;
use salvo::http::{HeaderValue, ResBody, StatusCode, header};
use salvo::prelude::*;
use salvo::server::ServerHandle;
use serde::Deserialize;
use tokio::runtime::Runtime;

/// A bare salvo server on 127.0.0.1; stopped when dropped.
pub struct Bare {
    pub addr: SocketAddr,
    handle: ServerHandle,
}

impl Drop for Bare {
    fn drop(&mut self) {
        self.handle.stop_forceful();
    }
}

fn serve(rt: &Runtime, goal: impl Handler) -> Bare {
    let (addr, handle) = rt.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a free port");
        let addr = listener.local_addr().expect("a bound address");
        let server = Server::new(TcpAcceptor::try_from(listener).expect("an acceptor"));
        let handle = server.handle();
        tokio::spawn(server.try_serve(Router::with_path("{**rest}").goal(goal)));
        (addr, handle)
    });
    Bare { addr, handle }
}

/// Every request answers these bytes as JSON.
struct Fixed(Bytes);

#[async_trait]
impl Handler for Fixed {
    async fn handle(
        &self,
        _req: &mut Request,
        _depot: &mut Depot,
        res: &mut Response,
        _ctrl: &mut FlowCtrl,
    ) {
        res.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        res.replace_body(ResBody::Once(self.0.clone()));
    }
}

pub fn fixed(rt: &Runtime, body: Bytes) -> Bare {
    serve(rt, Fixed(body))
}

/// Every request answers these bytes as JSON in `encoding`: the same headers a compressed
/// reply of the server carries.
struct FixedEncoded(Bytes, &'static str);

#[async_trait]
impl Handler for FixedEncoded {
    async fn handle(
        &self,
        _req: &mut Request,
        _depot: &mut Depot,
        res: &mut Response,
        _ctrl: &mut FlowCtrl,
    ) {
        let headers = res.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static(self.1));
        headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
        res.replace_body(ResBody::Once(self.0.clone()));
    }
}

pub fn fixed_encoded(rt: &Runtime, body: Bytes, encoding: &'static str) -> Bare {
    serve(rt, FixedEncoded(body, encoding))
}

/// The card fields the benches send, parsed into a typed value as the server does.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[allow(dead_code)] // kept in memory, never read back
struct CardBody {
    column_id: Option<String>,
    title: Option<String>,
    description: Option<String>,
    priority: Option<i64>,
    tags: Option<Vec<String>>,
}

/// Parses the body and appends it to a list in memory: a write with no storage at all.
struct ParseAppend(Arc<Mutex<Vec<CardBody>>>);

#[async_trait]
impl Handler for ParseAppend {
    async fn handle(
        &self,
        req: &mut Request,
        _depot: &mut Depot,
        res: &mut Response,
        _ctrl: &mut FlowCtrl,
    ) {
        let created = req.method() == salvo::http::Method::POST;
        let parsed = match req.payload_with_max_size(32 << 20).await {
            Ok(bytes) => serde_json::from_slice::<CardBody>(bytes).ok(),
            Err(_) => None,
        };
        let (status, body): (StatusCode, &'static [u8]) = match parsed {
            Some(card) => {
                self.0.lock().push(card);
                let status = if created {
                    StatusCode::CREATED
                } else {
                    StatusCode::OK
                };
                (status, b"{\"ok\":true}")
            }
            None => (StatusCode::UNPROCESSABLE_ENTITY, b"{\"ok\":false}"),
        };
        res.status_code(status);
        res.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        res.replace_body(ResBody::Once(Bytes::from_static(body)));
    }
}

pub fn parse_append(rt: &Runtime) -> Bare {
    serve(rt, ParseAppend(Arc::default()))
}
