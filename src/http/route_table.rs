//! The documented routes as a table, read from the OpenAPI document: to tell a wrong method
//! (405) from a wrong path (404), and to name every route template for the metrics. A leaf of
//! `http/`: it imports nothing of the binary.

/// The documented routes, to tell a wrong method (405) from a wrong path (404).
#[derive(Debug, Default)]
pub struct RouteTable {
    routes: Vec<(Vec<String>, Vec<String>)>,
}

impl RouteTable {
    /// Reads the paths and methods of the OpenAPI document.
    pub fn from_openapi(doc: &str) -> Self {
        let Ok(serde_json::Value::Object(doc)) = serde_json::from_str::<serde_json::Value>(doc)
        else {
            return RouteTable::default();
        };
        let Some(serde_json::Value::Object(paths)) = doc.get("paths") else {
            return RouteTable::default();
        };
        let routes = paths
            .iter()
            .map(|(path, ops)| {
                let segments = path
                    .trim_matches('/')
                    .split('/')
                    .map(str::to_owned)
                    .collect();
                let mut methods: Vec<String> = ops
                    .as_object()
                    .map(|o| o.keys().map(|m| m.to_uppercase()).collect())
                    .unwrap_or_default();
                // Every GET route answers HEAD too (the document lists the GET only).
                if methods.iter().any(|m| m == "GET") {
                    methods.push("HEAD".to_owned());
                }
                (segments, methods)
            })
            .collect();
        RouteTable { routes }
    }

    /// Every route's template (`/api/v1/tasks/{id}`), and the web client's.
    pub fn templates(&self) -> Vec<String> {
        let mut all: Vec<String> = self
            .routes
            .iter()
            .map(|(segments, _)| format!("/{}", segments.join("/")))
            .collect();
        all.extend(["/".to_owned(), "/assets/{**path}".to_owned()]);
        all
    }

    /// The methods a path answers to, if it is a route at all (versioned or not).
    pub fn allowed(&self, path: &str) -> Option<Vec<String>> {
        let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
        let versioned: Vec<&str> = match segments.as_slice() {
            ["api", "v1", ..] => segments.clone(),
            ["api", rest @ ..] => ["api", "v1"]
                .iter()
                .copied()
                .chain(rest.iter().copied())
                .collect(),
            _ => return None,
        };
        let find = |path: &[&str]| {
            self.routes
                .iter()
                .find(|(template, _)| {
                    template.len() == path.len()
                        && template
                            .iter()
                            .zip(path)
                            .all(|(t, s)| t.starts_with('{') || t == s)
                })
                .map(|(_, methods)| methods.clone())
        };
        find(&segments).or_else(|| find(&versioned))
    }
}
