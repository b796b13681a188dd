//! The web client: the static files under `web/`, embedded in the binary and served at `/`
//! (the page) and `/assets/...` (its styles, scripts and vendored libraries). No key is
//! needed here; the page asks for one and talks to `/api/v1` like any other client.

use std::borrow::Cow;

use rust_embed::RustEmbed;
use salvo::http::{HeaderValue, ResBody, StatusCode, header};
use salvo::prelude::*;

use crate::http::reply::ApiError;

/// Embedded in debug builds too (`debug-embed`), so every binary serves the same bytes.
/// Cargo notices edits to embedded files; a newly added file needs this crate rebuilt.
#[derive(RustEmbed)]
#[folder = "web/"]
struct Files;

/// The page's policy: everything from this origin, images also as data URLs (project
/// photos), and no inline script, since a key kept in the browser opens the whole account.
const CONTENT_SECURITY_POLICY: &str =
    "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'";

/// `/` serves the page; `/sw.js` its service worker (at the root, since a worker's scope is
/// its own path's folder and it keeps the page at `/` for offline use); `/assets/{path}`
/// serves any other file of `web/`. Anything else is left to the route tree's JSON 404.
pub fn router() -> Router {
    Router::new()
        .push(Router::new().get(index))
        .push(Router::with_path("sw.js").get(worker))
        .push(Router::with_path("assets/{**path}").get(asset))
}

#[handler]
async fn index(req: &mut Request, res: &mut Response) {
    serve(req, res, "index.html");
}

#[handler]
async fn worker(req: &mut Request, res: &mut Response) {
    serve(req, res, "sw.js");
}

#[handler]
async fn asset(req: &mut Request, res: &mut Response) {
    let path = req.param::<String>("path").unwrap_or_default();
    serve(req, res, &path);
}

/// Sends one embedded file with its type, `no-cache` (names are not fingerprinted, so the
/// browser revalidates every time and the ETag keeps that cheap) and the security headers.
fn serve(req: &Request, res: &mut Response, path: &str) {
    let Some(file) = Files::get(path) else {
        return ApiError::NotFound.render(res);
    };
    let etag = format!("\"{}\"", hex(&file.metadata.sha256_hash()[..16]));
    let headers = res.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(content_type(path)),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    // No other site may frame the page (clickjacking); the CSP says so to new browsers.
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    if let Ok(value) = HeaderValue::from_str(&etag) {
        headers.insert(header::ETAG, value);
    }
    let fresh = req
        .headers()
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag));
    if fresh {
        res.status_code(StatusCode::NOT_MODIFIED);
        res.replace_body(ResBody::None);
        return;
    }
    res.status_code(StatusCode::OK);
    res.replace_body(ResBody::Once(match file.data {
        Cow::Borrowed(bytes) => bytes::Bytes::from_static(bytes),
        Cow::Owned(bytes) => bytes::Bytes::from(bytes),
    }));
}

/// The types of the files `web/` holds; anything else goes out as bytes.
fn content_type(path: &str) -> &'static str {
    match path.rsplit_once('.').map_or("", |(_, ext)| ext) {
        "html" => "text/html; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "json" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "txt" | "LICENSE" => "text/plain; charset=utf-8",
        "md" => "text/markdown; charset=utf-8",
        _ => "application/octet-stream",
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_embedded_file_has_a_type() {
        for path in Files::iter() {
            assert_ne!(
                content_type(&path),
                "application/octet-stream",
                "{path} needs a content type"
            );
        }
    }

    #[test]
    fn the_page_is_embedded() {
        assert!(Files::get("index.html").is_some());
        assert!(Files::get("js/app.js").is_some());
        assert!(Files::get("sw.js").is_some());
        assert!(Files::get("manifest.json").is_some());
    }
}
