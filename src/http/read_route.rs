//! A read route: GET, and HEAD on the same handler (the keyed route table's GET routes and
//! the service's own). A leaf of `http/`.

use salvo::http::Method;
use salvo::prelude::*;

/// A read route: GET, and HEAD on the same handler, counted and answered alike: a HEAD
/// reply has the GET's status and headers (ETag, and Content-Length by `head_length`) and no
/// body (salvo drops it). The OpenAPI document lists it as the GET it mirrors.
pub fn read<H: Handler>(goal: H) -> Router {
    Router::with_filter(GetOrHead).goal(goal)
}

#[derive(Debug)]
pub struct GetOrHead;

#[async_trait]
impl salvo::routing::Filter for GetOrHead {
    async fn filter(&self, req: &mut Request, _: &mut salvo::routing::PathState<'_>) -> bool {
        matches!(*req.method(), Method::GET | Method::HEAD)
    }

    fn info(&self) -> salvo::routing::FilterInfo {
        salvo::routing::FilterInfo::Method(Method::GET)
    }

    fn collect_methods(&self, methods: &mut Vec<Method>) {
        methods.extend([Method::GET, Method::HEAD]);
    }

    async fn filter_for_method(
        &self,
        _: &mut Request,
        _: &mut salvo::routing::PathState<'_>,
        method: &Method,
    ) -> Option<bool> {
        Some(matches!(*method, Method::GET | Method::HEAD))
    }
}
