//! Cross-origin access for browser apps served from other origins: only the origins given
//! with `--cors-origin`, none by default, and only under `/api`. Keys travel in the
//! `Authorization` header, so no credentials mode is offered (no cookies are read).
//!
//! A preflight (`OPTIONS` with `Access-Control-Request-Method`) is answered here, before
//! authentication: it carries no key, is never counted against an allowance, and an origin
//! that is not listed gets an answer with no CORS headers, which the browser takes as a no.

use salvo::http::header::{self, HeaderName};
use salvo::http::{HeaderValue, Method, StatusCode};
use salvo::prelude::*;

/// How long a browser may keep a preflight's answer (Chromium keeps at most two hours).
pub const MAX_AGE_SECONDS: u32 = 7200;
const ALLOW_METHODS: HeaderValue = HeaderValue::from_static("GET, POST, PATCH, DELETE");
const ALLOW_HEADERS: HeaderValue = HeaderValue::from_static(
    "Authorization, Content-Type, If-None-Match, X-Request-Id, Idempotency-Key",
);
const EXPOSE_HEADERS: HeaderValue = HeaderValue::from_static(
    "ETag, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After, X-Request-Id, Content-Disposition, Idempotent-Replayed",
);
const VARY_ORIGIN: HeaderValue = HeaderValue::from_static("Origin");
const REQUEST_METHOD: HeaderName = HeaderName::from_static("access-control-request-method");

/// The origins browser apps may call the interface from.
#[derive(Debug, Clone, Default)]
pub struct Cors {
    origins: Vec<String>,
}

/// Why an origin given to `--cors-origin` is refused.
pub fn check_origin(origin: &str) -> Result<String, String> {
    let rest = origin
        .strip_prefix("https://")
        .or_else(|| origin.strip_prefix("http://"))
        .ok_or_else(|| format!("`{origin}`: an origin starts with https:// or http://"))?;
    if rest.is_empty() || rest.contains('/') || rest.contains('?') || rest.contains('#') {
        return Err(format!(
            "`{origin}`: an origin is scheme://host[:port], with no path (not even a trailing /)"
        ));
    }
    Ok(origin.to_ascii_lowercase())
}

impl Cors {
    pub fn new(origins: &[String]) -> Cors {
        Cors {
            origins: origins.iter().map(|o| o.to_ascii_lowercase()).collect(),
        }
    }

    pub fn origins(&self) -> &[String] {
        &self.origins
    }

    /// The request's `Origin`, when it is listed.
    fn allowed<'r>(&self, req: &'r Request) -> Option<&'r HeaderValue> {
        let origin = req.headers().get(header::ORIGIN)?;
        let text = origin.to_str().ok()?;
        self.origins
            .iter()
            .any(|o| o.eq_ignore_ascii_case(text))
            .then_some(origin)
    }
}

/// Whether the request is a CORS preflight.
fn is_preflight(req: &Request) -> bool {
    req.method() == Method::OPTIONS
        && req.headers().contains_key(header::ORIGIN)
        && req.headers().contains_key(REQUEST_METHOD)
}

/// The hoop: answers preflights under `/api`, and marks the replies of listed origins. It
/// holds the origins itself (the router gives them), so this module reads no shared state.
pub struct Hoop(pub Cors);

#[handler]
impl Hoop {
    async fn handle(
        &self,
        req: &mut Request,
        depot: &mut Depot,
        res: &mut Response,
        ctrl: &mut FlowCtrl,
    ) {
        if !req.uri().path().starts_with("/api") {
            ctrl.call_next(req, depot, res).await;
            return;
        }
        let cors = &self.0;
        let origin = cors.allowed(req).cloned();
        if is_preflight(req) {
            res.status_code(StatusCode::NO_CONTENT);
            let headers = res.headers_mut();
            if !cors.origins.is_empty() {
                headers.append(header::VARY, VARY_ORIGIN);
            }
            if let Some(origin) = origin {
                headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
                headers.insert(header::ACCESS_CONTROL_ALLOW_METHODS, ALLOW_METHODS);
                headers.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, ALLOW_HEADERS);
                headers.insert(
                    header::ACCESS_CONTROL_MAX_AGE,
                    HeaderValue::from(MAX_AGE_SECONDS),
                );
            }
            return ctrl.skip_rest();
        }
        ctrl.call_next(req, depot, res).await;
        let headers = res.headers_mut();
        // With origins listed, every answer under /api depends on the request's Origin.
        if !cors.origins.is_empty() {
            headers.append(header::VARY, VARY_ORIGIN);
        }
        if let Some(origin) = origin {
            headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
            headers.insert(header::ACCESS_CONTROL_EXPOSE_HEADERS, EXPOSE_HEADERS);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_origin_is_a_scheme_and_a_host_with_no_path() {
        assert_eq!(
            check_origin("https://App.example:8443").as_deref(),
            Ok("https://app.example:8443")
        );
        assert!(check_origin("http://localhost:3000").is_ok());
        for bad in [
            "app.example",
            "https://app.example/",
            "ftp://x",
            "https://",
            "https://a/b",
        ] {
            assert!(check_origin(bad).is_err(), "{bad}");
        }
    }
}
