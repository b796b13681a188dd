//! A diagnostic load generator (`LOAD_CLIENT=bare`): hyper's bare HTTP/1.1 client connection,
//! with no pool, no URL parsing and no redirect or retry layers. The default generator is a
//! reqwest client per connection: in scenario 4 at 64 connections it takes about 33 us of
//! CPU per request, some 40% of the whole process's, on the cores the server shares. This
//! one takes about 20 us, so a run with it shows how much of a ratio is the generator's and
//! how much the server's.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::{self, SendRequest};
use hyper::header::{self, HeaderValue};
use reqwest::{Method, StatusCode};

use crate::drive::{Answer, Error};

/// How long one request may take before the bench gives up on it.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(120);

type Sender = SendRequest<Full<Bytes>>;

/// One keep-alive connection to `addr`. A clone used at the same time opens a connection of
/// its own; at most one is kept idle, as the reqwest client is built to.
#[derive(Clone)]
pub struct BareConn {
    addr: std::net::SocketAddr,
    host: HeaderValue,
    idle: Arc<Mutex<Option<Sender>>>,
}

impl BareConn {
    pub fn new(addr: std::net::SocketAddr) -> BareConn {
        BareConn {
            addr,
            host: HeaderValue::from_str(&addr.to_string()).expect("an address is a host"),
            idle: Arc::default(),
        }
    }

    async fn connect(&self) -> Result<Sender, Error> {
        let stream = tokio::net::TcpStream::connect(self.addr).await?;
        stream.set_nodelay(true)?;
        let (sender, connection) = http1::handshake(hyper_util::rt::TokioIo::new(stream)).await?;
        tokio::spawn(connection);
        Ok(sender)
    }

    /// Sends a request on the idle connection, or on a new one; a request the server never
    /// read (it closed the idle connection first) is sent once more on a new connection.
    async fn send(
        &self,
        method: Method,
        path: &str,
        key: &str,
        headers: &[(&str, &str)],
        body: Option<Bytes>,
    ) -> Result<(hyper::Response<hyper::body::Incoming>, Sender), Error> {
        let build = || -> Result<hyper::Request<Full<Bytes>>, Error> {
            let mut req = hyper::Request::builder()
                .method(method.clone())
                .uri(path)
                .header(header::HOST, self.host.clone())
                .header(header::AUTHORIZATION, format!("Bearer {key}"));
            for (name, value) in headers {
                req = req.header(*name, *value);
            }
            if body.is_some() {
                req = req.header(header::CONTENT_TYPE, "application/json");
            }
            Ok(req.body(Full::new(body.clone().unwrap_or_default()))?)
        };
        let idle = self.idle.lock().expect("the idle slot").take();
        if let Some(mut sender) = idle
            && sender.ready().await.is_ok()
        {
            match sender.send_request(build()?).await {
                Ok(res) => return Ok((res, sender)),
                Err(e) if !e.is_canceled() => return Err(e.into()),
                Err(_) => {}
            }
        }
        let mut sender = self.connect().await?;
        let res = sender.send_request(build()?).await?;
        Ok((res, sender))
    }

    /// Keeps `sender` for the next request once its reply has been read whole.
    fn keep(&self, sender: Sender) {
        let mut idle = self.idle.lock().expect("the idle slot");
        if idle.is_none() {
            *idle = Some(sender);
        }
    }

    /// A request whose reply is kept whole.
    pub async fn answer(
        &self,
        method: Method,
        path: &str,
        key: &str,
        headers: &[(&str, &str)],
        body: Option<Bytes>,
    ) -> Result<Answer, Error> {
        let exchange = async {
            let (res, sender) = self.send(method, path, key, headers, body).await?;
            let status = res.status();
            let encoding = res
                .headers()
                .get(header::CONTENT_ENCODING)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let body = res.into_body().collect().await?.to_bytes();
            self.keep(sender);
            Ok(Answer {
                status,
                encoding,
                body,
            })
        };
        tokio::time::timeout(REQUEST_TIMEOUT, exchange).await?
    }

    /// A GET whose body is counted and dropped frame by frame.
    pub async fn drain(
        &self,
        path: &str,
        key: &str,
        headers: &[(&str, &str)],
    ) -> Result<(StatusCode, u64), Error> {
        let exchange = async {
            let (res, sender) = self.send(Method::GET, path, key, headers, None).await?;
            let status = res.status();
            let mut body = res.into_body();
            let mut n = 0u64;
            while let Some(frame) = body.frame().await {
                if let Some(chunk) = frame?.data_ref() {
                    n += chunk.len() as u64;
                }
            }
            self.keep(sender);
            Ok((status, n))
        };
        tokio::time::timeout(REQUEST_TIMEOUT, exchange).await?
    }
}
