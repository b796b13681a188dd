//! The discovery document's endpoint list against the routes the server answers: every
//! route it lists is answered, and every method the router takes on a path is listed.

use std::collections::BTreeSet;

use reqwest::Method;

use crate::harness::*;

/// A route as both documents can name it: the method, and the path in its unversioned form
/// with `{id}` for a parameter (`/api/v1/tasks/:id` and `/api/tasks/{id}` are one route).
fn route(method: &str, path: &str) -> (String, String) {
    let path = path.replace(":id", "{id}");
    let path = match path.strip_prefix("/api/v1") {
        Some(rest) => format!("/api{rest}"),
        None => path,
    };
    (method.to_uppercase(), path)
}

/// Whether a template (`/api/tasks/{id}`) matches a path.
fn matches(template: &str, path: &str) -> bool {
    let (t, p): (Vec<&str>, Vec<&str>) = (template.split('/').collect(), path.split('/').collect());
    t.len() == p.len() && t.iter().zip(&p).all(|(t, p)| *t == "{id}" || t == p)
}

#[tokio::test]
async fn discovery_lists_exactly_the_routes_the_router_answers() {
    let s = Server::start().await;
    let api = s.api().raw();
    let discovery = api.get("/api/v1").await.expect(200).clone();
    let listed: BTreeSet<(String, String)> = discovery["endpoints"]
        .as_array()
        .expect("endpoints is an array")
        .iter()
        .map(|e| route(e["method"].as_str().unwrap(), e["path"].as_str().unwrap()))
        .collect();

    // Every path the router holds, as the OpenAPI document (merged from the router) names it.
    let openapi = api.get("/api/v1/openapi.json").await.expect(200).clone();
    let paths: Vec<String> = openapi["paths"]
        .as_object()
        .expect("paths is an object")
        .keys()
        .cloned()
        .collect();
    assert!(paths.len() > 20, "the OpenAPI document lists the routes");

    // Ask the server itself: a method it does not route on a known path answers 405.
    let mut answered = BTreeSet::new();
    for path in &paths {
        let concrete = path.replace("{id}", "nope");
        for method in [
            Method::GET,
            Method::POST,
            Method::PATCH,
            Method::DELETE,
            Method::PUT,
        ] {
            let reply = api.send(method.clone(), &concrete, None).await;
            if reply.status == 405 {
                continue;
            }
            // A literal path another route's `{id}` also matches (GET /tasks/positions is
            // GET /tasks/{id} with the id `positions`) is answered by that route.
            let probed = route(method.as_str(), path);
            let by = if listed.contains(&probed) {
                probed
            } else {
                listed
                    .iter()
                    .find(|(m, template)| *m == probed.0 && matches(template, &probed.1))
                    .cloned()
                    .unwrap_or(probed)
            };
            answered.insert(by);
        }
    }
    let unlisted: Vec<_> = answered.difference(&listed).collect();
    assert!(
        unlisted.is_empty(),
        "answered, not in discovery: {unlisted:?}"
    );
    let unanswered: Vec<_> = listed.difference(&answered).collect();
    assert!(
        unanswered.is_empty(),
        "in discovery, not answered: {unanswered:?}"
    );
}
