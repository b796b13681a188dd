//! The HTTP client the tests speak through: one `Authorization` header (or none) per `Api`,
//! replies as status + headers + JSON, fixtures that create records and assert success, and
//! small helpers over replies.

use std::time::{SystemTime, UNIX_EPOCH};

use reqwest::Method;
use reqwest::header::HeaderMap;
use serde_json::{Value, json};

const DAY_MS: i64 = 24 * 60 * 60 * 1000;

/// An HTTP client bound to one server and one `Authorization` header (or none).
#[derive(Clone)]
pub struct Api {
    http: reqwest::Client,
    base: String,
    prefix: String,
    auth: Option<String>,
}

impl Api {
    /// A client for `base` (`http://host:port`), paths relative to `/api/v1`.
    pub fn new(http: reqwest::Client, base: String, auth: Option<String>) -> Api {
        Api {
            http,
            base,
            prefix: "/api/v1".into(),
            auth,
        }
    }

    /// The same client with paths relative to `/api` (the unversioned alias).
    pub fn unversioned(&self) -> Api {
        Api {
            prefix: "/api".into(),
            ..self.clone()
        }
    }

    /// The same client with paths taken as they are (`/api/v2/...`, `/api/health`).
    pub fn raw(&self) -> Api {
        Api {
            prefix: String::new(),
            ..self.clone()
        }
    }

    pub async fn get(&self, path: &str) -> Reply {
        self.send(Method::GET, path, None).await
    }

    pub async fn delete(&self, path: &str) -> Reply {
        self.send(Method::DELETE, path, None).await
    }

    pub async fn post(&self, path: &str, body: Value) -> Reply {
        self.send(Method::POST, path, Some(body.to_string())).await
    }

    pub async fn patch(&self, path: &str, body: Value) -> Reply {
        self.send(Method::PATCH, path, Some(body.to_string())).await
    }

    /// POST a body exactly as written (for invalid JSON or a chosen key order).
    pub async fn post_text(&self, path: &str, body: &str) -> Reply {
        self.send(Method::POST, path, Some(body.to_string())).await
    }

    pub async fn patch_text(&self, path: &str, body: &str) -> Reply {
        self.send(Method::PATCH, path, Some(body.to_string())).await
    }

    pub async fn send(&self, method: Method, path: &str, body: Option<String>) -> Reply {
        self.send_full(method, path, body, &[]).await
    }

    /// Sends with `headers` added to the client's own (a second `Authorization` included).
    pub async fn send_with(&self, method: Method, path: &str, headers: &[(&str, &str)]) -> Reply {
        self.send_full(method, path, None, headers).await
    }

    /// `POST` that answers `None` when no reply came at all (the server was killed).
    pub async fn try_post(&self, path: &str, body: Value) -> Option<Reply> {
        self.try_send(Method::POST, path, Some(body.to_string()), &[])
            .await
            .ok()
    }

    async fn send_full(
        &self,
        method: Method,
        path: &str,
        body: Option<String>,
        headers: &[(&str, &str)],
    ) -> Reply {
        self.try_send(method, path, body, headers)
            .await
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// A request to `path` with the client's key and `headers`, and how errors name it.
    fn request(
        &self,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
    ) -> (String, reqwest::RequestBuilder) {
        let what = format!("{method} {}{path}", self.prefix);
        let mut req = self
            .http
            .request(method, format!("{}{}{}", self.base, self.prefix, path));
        if let Some(auth) = &self.auth {
            req = req.header("authorization", auth);
        }
        for (name, value) in headers {
            req = req.header(*name, *value);
        }
        (what, req)
    }

    async fn try_send(
        &self,
        method: Method,
        path: &str,
        body: Option<String>,
        headers: &[(&str, &str)],
    ) -> Result<Reply, String> {
        let (what, mut req) = self.request(method, path, headers);
        if let Some(body) = body {
            req = req.header("content-type", "application/json").body(body);
        }
        let resp = req.send().await.map_err(|e| format!("{what}: {e}"))?;
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let text = resp
            .text()
            .await
            .map_err(|e| format!("{what}: body: {e}"))?;
        let body = serde_json::from_str(&text).unwrap_or(Value::Null);
        Ok(Reply {
            what,
            status,
            headers,
            text,
            body,
        })
    }

    /// A GET whose body is kept as the bytes that came (no decoding of any kind), with
    /// `headers` added: (status, headers, body).
    pub async fn get_raw(&self, path: &str, headers: &[(&str, &str)]) -> (u16, HeaderMap, Vec<u8>) {
        self.raw_request(Method::GET, path, headers).await
    }

    /// Any request whose body is kept as the bytes that came.
    pub async fn raw_request(
        &self,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
    ) -> (u16, HeaderMap, Vec<u8>) {
        let (what, req) = self.request(method, path, headers);
        let resp = req.send().await.unwrap_or_else(|e| panic!("{what}: {e}"));
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let body = resp
            .bytes()
            .await
            .unwrap_or_else(|e| panic!("{what}: body: {e}"));
        (status, headers, body.to_vec())
    }

    // ---- fixtures: each asserts its own success so tests read as the rule they check ----

    /// Creates a project and returns the create reply's `project`.
    pub async fn create_project(&self, body: Value) -> Value {
        let r = self.post("/projects", body).await;
        r.expect_ok(201)["project"].clone()
    }

    pub async fn new_project(&self, name: &str) -> String {
        str_of(&self.create_project(json!({ "name": name })).await["id"])
    }

    pub async fn create_column(&self, body: Value) -> Value {
        let r = self.post("/columns", body).await;
        r.expect_ok(201)["column"].clone()
    }

    pub async fn new_column(&self, project_id: &str, name: &str) -> String {
        str_of(
            &self
                .create_column(json!({ "projectId": project_id, "name": name }))
                .await["id"],
        )
    }

    pub async fn create_task(&self, body: Value) -> Value {
        let r = self.post("/tasks", body).await;
        r.expect_ok(201)["task"].clone()
    }

    pub async fn new_task(&self, column_id: &str, title: &str) -> Value {
        self.create_task(json!({ "columnId": column_id, "title": title }))
            .await
    }

    /// A project with one column: (projectId, columnId).
    pub async fn board(&self) -> (String, String) {
        let pid = self.new_project("Board").await;
        let cid = self.new_column(&pid, "To do").await;
        (pid, cid)
    }

    /// `GET /tasks/:id` → the task (asserts 200).
    pub async fn task(&self, id: &str) -> Value {
        self.get(&format!("/tasks/{id}")).await.expect_ok(200)["task"].clone()
    }

    /// The single project of `GET /projects/:id?completed=all`.
    pub async fn project(&self, id: &str) -> Value {
        self.project_q(id, "all").await
    }

    pub async fn project_q(&self, id: &str, completed: &str) -> Value {
        let r = self
            .get(&format!("/projects/{id}?completed={completed}"))
            .await;
        let projects = r.expect(200)["projects"]
            .as_array()
            .expect("projects array")
            .clone();
        assert_eq!(
            projects.len(),
            1,
            "GET /projects/:id holds one project: {}",
            r.text
        );
        projects[0].clone()
    }

    /// `projects` of `GET /projects{query}` (asserts 200).
    pub async fn projects(&self, query: &str) -> Vec<Value> {
        let r = self.get(&format!("/projects{query}")).await;
        r.expect(200)["projects"]
            .as_array()
            .expect("projects array")
            .clone()
    }

    /// The whole-account document without its `now`, for before/after comparisons.
    pub async fn account(&self) -> Value {
        let mut doc = self
            .get("/projects?completed=all")
            .await
            .expect(200)
            .clone();
        doc.as_object_mut().expect("document object").remove("now");
        doc
    }
}

/// One HTTP reply.
pub struct Reply {
    pub what: String,
    pub status: u16,
    pub headers: HeaderMap,
    pub text: String,
    /// The body parsed as JSON, or `Null` when it is not JSON.
    pub body: Value,
}

impl Reply {
    /// Asserts the status and returns the JSON body.
    #[track_caller]
    pub fn expect(&self, status: u16) -> &Value {
        assert_eq!(
            self.status, status,
            "{} answered {}: {}",
            self.what, self.status, self.text
        );
        &self.body
    }

    /// Asserts the status and `ok: true`.
    #[track_caller]
    pub fn expect_ok(&self, status: u16) -> &Value {
        self.expect(status);
        assert_eq!(self.body["ok"], json!(true), "{}: {}", self.what, self.text);
        &self.body
    }

    /// Asserts the status and the JSON error envelope `{ok:false, error:<non-empty text>}`.
    #[track_caller]
    pub fn expect_error(&self, status: u16) -> &Value {
        self.expect(status);
        assert!(
            self.content_type().starts_with("application/json"),
            "{}: error content-type {:?}",
            self.what,
            self.content_type()
        );
        assert_eq!(
            self.body["ok"],
            json!(false),
            "{}: {}",
            self.what,
            self.text
        );
        let error = self.body["error"].as_str().unwrap_or_default();
        assert!(
            !error.is_empty(),
            "{}: error message missing: {}",
            self.what,
            self.text
        );
        // Every error carries a stable code from the table, one that goes with its status.
        let code = self.body["code"].as_str().unwrap_or_default();
        let known = workboard::http::error::ErrorCode::TABLE
            .iter()
            .find(|(c, _, _)| c.as_str() == code);
        assert!(
            known.is_some_and(|(_, s, _)| *s == status),
            "{}: code {code:?} is not one of the table's codes for {status}: {}",
            self.what,
            self.text
        );
        &self.body
    }

    /// Asserts an error envelope with this stable `code`.
    #[track_caller]
    pub fn expect_code(&self, status: u16, code: &str) -> &Value {
        self.expect_error(status);
        assert_eq!(
            self.body["code"],
            json!(code),
            "{}: {}",
            self.what,
            self.text
        );
        &self.body
    }

    /// Asserts an error envelope that names `field`.
    #[track_caller]
    pub fn expect_field_error(&self, status: u16, field: &str) -> &Value {
        self.expect_error(status);
        assert_eq!(
            self.body["field"],
            json!(field),
            "{}: {}",
            self.what,
            self.text
        );
        &self.body
    }

    pub fn content_type(&self) -> String {
        self.header("content-type").unwrap_or_default()
    }

    pub fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .map(|v| v.to_str().unwrap_or_default().to_string())
    }
}

pub fn str_of(v: &Value) -> String {
    v.as_str()
        .unwrap_or_else(|| panic!("not a string: {v}"))
        .to_string()
}

pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_millis() as i64
}

pub fn days_ago(days: i64) -> i64 {
    now_ms() - days * DAY_MS
}

/// Every task of a project read, column by column, in read order.
pub fn tasks_of(project: &Value) -> Vec<Value> {
    project["columns"]
        .as_array()
        .expect("columns array")
        .iter()
        .flat_map(|c| c["tasks"].as_array().expect("tasks array").clone())
        .collect()
}

/// Ids of every task of a project read.
pub fn task_ids(project: &Value) -> Vec<String> {
    tasks_of(project).iter().map(|t| str_of(&t["id"])).collect()
}

/// Ids of the entries of an array field.
pub fn ids(list: &Value) -> Vec<String> {
    list.as_array()
        .expect("array")
        .iter()
        .map(|x| str_of(&x["id"]))
        .collect()
}

/// Finds a task by id in a project read.
pub fn find_task(project: &Value, id: &str) -> Option<Value> {
    tasks_of(project).into_iter().find(|t| t["id"] == json!(id))
}

pub fn char_count(v: &Value) -> usize {
    v.as_str().expect("string").chars().count()
}

/// Asserts that `object` has exactly the keys in `keys` (no more, no fewer).
#[track_caller]
pub fn assert_keys(object: &Value, keys: &[&str]) {
    let map = object
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {object}"));
    let mut have: Vec<&str> = map.keys().map(|k| k.as_str()).collect();
    let mut want: Vec<&str> = keys.to_vec();
    have.sort();
    want.sort();
    assert_eq!(have, want, "keys of {object}");
}

/// A real 1x1 PNG.
pub const PNG_B64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
/// A real 1x1 lossless WebP.
pub const WEBP_B64: &str = "UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==";
/// A real 16x16 JPEG (CPython's imghdr test image).
pub const JPEG_B64: &str = "/9j/4AAQSkZJRgABAQEAAQABAAD/2wBDAAMCAgICAgMCAgIDAwMDBAYEBAQEBAgGBgUGCQgKCgkICQkKDA8MCgsOCwkJDRENDg8QEBEQCgwSExIQEw8QEBD/2wBDAQMDAwQDBAgEBAgQCwkLEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBD/wAARCAAQABADASIAAhEBAxEB/8QAFgABAQEAAAAAAAAAAAAAAAAABwQF/8QAJBAAAQQBBAICAwAAAAAAAAAAAQIDBAYFBwgSExEiABQJMTL/xAAVAQEBAAAAAAAAAAAAAAAAAAAABv/EACMRAAECBQMFAAAAAAAAAAAAAAECEQMEBQYhABIxFRZhgeH/2gAMAwEAAhEDEQA/ABSm0mobc8HmExLUlRzzEWPkJWW+ulrsaUVAseUgslSlH9LKuPryIKuWPZdskzXmm3fX5m2nF4GlVxx/HOpx4ks51+MiU/Iaad7UcUo4tILoS4kqcWkezS0hO/HvuRp0rO6hWnWO1UisZVuFi4GFeyEpmGepa5S5SWVPuciFKRFLgSrwetnyPIB+Vb4N9mKhQMzo5po9XLdDs9d6ZVix2VEhiL9kuNPxw2gEKcDQ/rs8AuA8VAe0vdl7VOYn+27flGAUgmITjbhSmCg3BYlyeWDkMolvw4KOp1KM6iCNvngZHwetf//Z";
/// A real GIF: an image, but not a type the service takes.
pub const GIF_B64: &str = "R0lGODlhEAAQAPZkAOu7GOu+IfPBGvrHGf3LG//MHOvCKv/PI//PJP/QJf/QJv/TLf3SL//TLv/TL+vFNOjHPf/TMP/UMP3VNv/WN/rTOf/XOP/XOf/XOvnVPv/YOuzORf3ZQf/aQf/aQv/bQv/bQ//bRP3dSv/eS//fTf3eTv/fTv/iVf/jV//jWP/mYf/nYf/nYvLhbvXjb/3pav/rbDJghzZmkDZnkTVokjZpkzZplDdoljdqljlsljhslzltmTpvmzpwnDtwnDtwnTxxnj1zoD1zoj10oT50oj51oz92pUB4pkB4p0F5qEJ7qkN8q0N9rUN9rkR9rUR+rUV/r0aAsEaAsUaBskeBskiDtEiEtUiFtkmFt0qHuUqGukuIu0yJvEyKvE2LvkyKv06NwE+NwVCPw1KRxv///wAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAACH5BAEAAGUAIf8LSW1hZ2VNYWdpY2sHZ2FtbWE9MAAsAAAAABAAEAAAB6iAZYJlYVpSTEZAN4OMgl1kUkpEPTiNjFeRRD44NZZlX1dMRDkyOTiVjGNhXFVQR0A8NadlJyMZZWJfVFBKsDW/MWUjHROfV1SSQKczwRvEC2XHS0edjR0XCwdlh0czZS0vLCcmHRoLCARlTJJlLjAsKSYhFxEIBQKCQj5l7/Hl5wUKWIJnAsIDAwEAAPAUb16EBAI9lZF3QUICMukklqnwsMAAjSAHBQIAOw==";

/// The discovery document's limit names (the `--limit-NAME` flags) and their defaults.
pub const DEFAULT_LIMITS: &[(&str, i64)] = &[
    ("projects-per-account", 100),
    ("columns-per-project", 20),
    ("discovery-burst", 10),
    ("bad-key-burst", 50),
    ("reads-per-day", 9000),
    ("writes-per-day", 3000),
    ("storage-bytes", 16_777_216),
    ("keys-per-account", 20),
];
