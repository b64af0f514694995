//! A stateful fake of the parts of the GitHub REST API the bot uses, served
//! on 127.0.0.1 so that tests go through the real octocrab client.
//!
//! It keeps comments and issues in memory, pages lists like GitHub (with
//! `Link` headers), checks the token, rejects bodies over 65536 characters
//! with 422, and can inject faults (any status and headers, optionally after
//! applying the write) for the next matching requests.

#![allow(dead_code)]

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

/// The token the fake accepts.
pub const TOKEN: &str = "test-token";
/// The login the token acts as.
pub const BOT: &str = "github-actions[bot]";
/// The repository the fake serves.
pub const REPO: &str = "mochi-ad/mochi";

/// A stored comment.
#[derive(Debug, Clone)]
pub struct FakeComment {
    pub id: u64,
    pub issue: u64,
    pub body: String,
    pub login: String,
    pub seq: u64,
}

/// A stored issue.
#[derive(Debug, Clone)]
pub struct FakeIssue {
    pub number: u64,
    pub title: String,
    pub body: String,
    pub state: String,
    pub labels: Vec<String>,
    pub login: String,
    pub seq: u64,
}

/// A pull request.
#[derive(Debug, Clone)]
pub struct FakePull {
    pub head_sha: String,
    pub base_sha: String,
    pub fork: bool,
    pub files: Vec<Value>,
}

/// An injected answer for the next request matching `method` and `path_contains`.
#[derive(Debug, Clone)]
pub struct Fault {
    pub method: Method,
    pub path_contains: String,
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
    /// Perform the request anyway and only then answer with the fault (a lost answer).
    pub apply_anyway: bool,
}

impl Fault {
    pub fn new(method: Method, path_contains: &str, status: u16) -> Self {
        Self {
            method,
            path_contains: path_contains.to_string(),
            status,
            headers: Vec::new(),
            body: json!({ "message": "injected" }).to_string(),
            apply_anyway: false,
        }
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    pub fn message(mut self, message: &str) -> Self {
        self.body = json!({ "message": message }).to_string();
        self
    }

    pub fn applied(mut self) -> Self {
        self.apply_anyway = true;
        self
    }
}

/// Everything the fake knows.
#[derive(Debug, Default)]
pub struct FakeState {
    pub next_id: u64,
    pub seq: u64,
    pub comments: Vec<FakeComment>,
    pub issues: Vec<FakeIssue>,
    pub pulls: HashMap<u64, FakePull>,
    pub faults: VecDeque<Fault>,
    /// Every request: (method, path and query).
    pub log: Vec<(Method, String)>,
    /// The next this-many comment- or issue-list requests wait for each other (a race).
    pub list_gate: usize,
}

/// A running fake.
#[derive(Clone)]
pub struct FakeGitHub {
    pub url: String,
    pub state: Arc<Mutex<FakeState>>,
    gate: Arc<tokio::sync::Barrier>,
}

#[derive(Clone)]
struct App {
    state: Arc<Mutex<FakeState>>,
    gate: Arc<tokio::sync::Barrier>,
    url: String,
}

impl FakeGitHub {
    /// Starts a fake on a free loopback port.
    pub async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(Mutex::new(FakeState {
            next_id: 1000,
            ..Default::default()
        }));
        let gate = Arc::new(tokio::sync::Barrier::new(2));
        let app = App {
            state: state.clone(),
            gate: gate.clone(),
            url: url.clone(),
        };
        let router = axum::Router::new().fallback(handle).with_state(app);
        tokio::spawn(async move {
            axum::serve(listener, router).await.unwrap();
        });
        Self { url, state, gate }
    }

    pub fn add_pull(&self, number: u64, head: &str, base: &str, fork: bool) {
        self.state.lock().unwrap().pulls.insert(
            number,
            FakePull {
                head_sha: head.to_string(),
                base_sha: base.to_string(),
                fork,
                files: Vec::new(),
            },
        );
    }

    pub fn set_head(&self, number: u64, head: &str) {
        self.state
            .lock()
            .unwrap()
            .pulls
            .get_mut(&number)
            .unwrap()
            .head_sha = head.to_string();
    }

    pub fn add_comment(&self, issue: u64, login: &str, body: &str) -> u64 {
        let mut s = self.state.lock().unwrap();
        s.next_id += 1;
        s.seq += 1;
        let (id, seq) = (s.next_id, s.seq);
        s.comments.push(FakeComment {
            id,
            issue,
            body: body.to_string(),
            login: login.to_string(),
            seq,
        });
        id
    }

    pub fn add_issue(&self, login: &str, body: &str, labels: &[&str], state: &str) -> u64 {
        let mut s = self.state.lock().unwrap();
        s.seq += 1;
        let number = s.issues.len() as u64 + 1;
        let seq = s.seq;
        s.issues.push(FakeIssue {
            number,
            title: "t".into(),
            body: body.to_string(),
            state: state.to_string(),
            labels: labels.iter().map(|l| l.to_string()).collect(),
            login: login.to_string(),
            seq,
        });
        number
    }

    pub fn fault(&self, fault: Fault) {
        self.state.lock().unwrap().faults.push_back(fault);
    }

    pub fn comments_on(&self, issue: u64) -> Vec<FakeComment> {
        self.state
            .lock()
            .unwrap()
            .comments
            .iter()
            .filter(|c| c.issue == issue)
            .cloned()
            .collect()
    }

    pub fn issues(&self) -> Vec<FakeIssue> {
        self.state.lock().unwrap().issues.clone()
    }

    /// Requests other than GET since the log was last cleared.
    pub fn writes(&self) -> Vec<(Method, String)> {
        self.state
            .lock()
            .unwrap()
            .log
            .iter()
            .filter(|(m, _)| m != Method::GET)
            .cloned()
            .collect()
    }

    pub fn requests(&self) -> Vec<(Method, String)> {
        self.state.lock().unwrap().log.clone()
    }

    pub fn clear_log(&self) {
        self.state.lock().unwrap().log.clear();
    }

    /// Makes the next two comment- or issue-list requests wait for each other.
    pub fn race_next_two_lists(&self) {
        self.state.lock().unwrap().list_gate = 2;
    }
}

fn error(status: StatusCode, message: &str) -> Response {
    (
        status,
        [("content-type", "application/json")],
        json!({ "message": message }).to_string(),
    )
        .into_response()
}

fn json_response(status: StatusCode, value: Value) -> Response {
    (
        status,
        [("content-type", "application/json")],
        value.to_string(),
    )
        .into_response()
}

fn query_param(uri: &Uri, name: &str) -> Option<String> {
    uri.query()?.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k == name).then(|| {
            v.replace("%5B", "[")
                .replace("%5D", "]")
                .replace("%20", " ")
        })
    })
}

fn comment_json(c: &FakeComment) -> Value {
    json!({
        "id": c.id,
        "body": c.body,
        "user": { "login": c.login },
        "created_at": format!("2026-11-29T00:{:02}:{:02}Z", (c.seq / 60) % 60, c.seq % 60),
    })
}

fn issue_json(i: &FakeIssue) -> Value {
    json!({
        "number": i.number,
        "title": i.title,
        "body": i.body,
        "state": i.state,
        "labels": i.labels.iter().map(|l| json!({ "name": l })).collect::<Vec<_>>(),
        "user": { "login": i.login },
        "created_at": format!("2026-11-29T00:{:02}:{:02}Z", (i.seq / 60) % 60, i.seq % 60),
    })
}

/// Pages `items` like GitHub: `per_page` (max 100, default 30), `page` from 1, `Link` with `rel="next"`.
fn paged(app: &App, uri: &Uri, items: Vec<Value>) -> Response {
    let per_page: usize = query_param(uri, "per_page")
        .and_then(|v| v.parse().ok())
        .unwrap_or(30)
        .min(100);
    let page: usize = query_param(uri, "page")
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
        .max(1);
    let start = (page - 1) * per_page;
    let slice: Vec<Value> = items.iter().skip(start).take(per_page).cloned().collect();
    let mut response = json_response(StatusCode::OK, Value::Array(slice));
    if start + per_page < items.len() {
        let next = format!(
            "{}{}?per_page={per_page}&page={}",
            app.url,
            uri.path(),
            page + 1
        );
        let link = format!("<{next}>; rel=\"next\"");
        response.headers_mut().insert("link", link.parse().unwrap());
    }
    response
}

async fn handle(
    State(app): State<App>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path_and_query = uri
        .path_and_query()
        .map(|p| p.to_string())
        .unwrap_or_default();
    let path = uri.path().to_string();
    // Log, pick a fault, and decide on a race gate while holding the lock briefly.
    let (fault, wait_gate) = {
        let mut s = app.state.lock().unwrap();
        s.log.push((method.clone(), path_and_query.clone()));
        let index = s
            .faults
            .iter()
            .position(|f| f.method == method && path.contains(&f.path_contains));
        let fault = index.and_then(|i| s.faults.remove(i));
        let is_comment_list =
            method == Method::GET && (path.ends_with("/comments") || path.ends_with("/issues"));
        let wait_gate = is_comment_list && s.list_gate > 0;
        if wait_gate {
            s.list_gate -= 1;
        }
        (fault, wait_gate)
    };
    if wait_gate {
        // Bounded: a lone request goes on after 5 s instead of hanging.
        let _ = tokio::time::timeout(Duration::from_secs(5), app.gate.wait()).await;
    }
    if let Some(fault) = &fault {
        if !fault.apply_anyway {
            return fault_response(fault);
        }
    }
    let response = route(&app, &method, &uri, &headers, &body);
    match fault {
        Some(fault) => fault_response(&fault),
        None => response,
    }
}

fn fault_response(fault: &Fault) -> Response {
    let mut response = (
        StatusCode::from_u16(fault.status).unwrap(),
        [("content-type", "application/json")],
        fault.body.clone(),
    )
        .into_response();
    for (name, value) in &fault.headers {
        response.headers_mut().insert(
            axum::http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
            value.parse().unwrap(),
        );
    }
    response
}

fn route(app: &App, method: &Method, uri: &Uri, headers: &HeaderMap, body: &Bytes) -> Response {
    let auth = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if auth != format!("Bearer {TOKEN}") && auth != format!("token {TOKEN}") {
        return error(StatusCode::UNAUTHORIZED, "Bad credentials");
    }
    let segments: Vec<&str> = uri.path().trim_matches('/').split('/').collect();
    let Some(rest) = segments.strip_prefix(&["repos"]) else {
        return error(StatusCode::NOT_FOUND, "Not Found");
    };
    if rest.len() < 2 || format!("{}/{}", rest[0], rest[1]) != REPO {
        return error(StatusCode::NOT_FOUND, "Not Found");
    }
    let rest = &rest[2..];
    let input: Value = if body.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(body).unwrap_or(Value::Null)
    };
    let too_long = input
        .get("body")
        .and_then(Value::as_str)
        .is_some_and(|b| b.chars().count() > 65_536);
    if too_long {
        return error(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Validation Failed: body is too long (maximum is 65536 characters)",
        );
    }
    let mut s = app.state.lock().unwrap();
    match (method.clone(), rest) {
        (Method::GET, ["pulls", n]) => {
            let Some(pull) = n.parse().ok().and_then(|n: u64| s.pulls.get(&n).cloned()) else {
                return error(StatusCode::NOT_FOUND, "Not Found");
            };
            let head_repo = if pull.fork { "contributor/mochi" } else { REPO };
            json_response(
                StatusCode::OK,
                json!({
                    "number": n.parse::<u64>().unwrap_or(0),
                    "head": { "sha": pull.head_sha, "repo": { "full_name": head_repo } },
                    "base": { "sha": pull.base_sha, "repo": { "full_name": REPO } },
                }),
            )
        }
        (Method::GET, ["pulls"]) => {
            let mut numbers: Vec<u64> = s.pulls.keys().copied().collect();
            numbers.sort();
            let items = numbers
                .iter()
                .map(|n| {
                    let pull = &s.pulls[n];
                    let head_repo = if pull.fork { "contributor/mochi" } else { REPO };
                    json!({
                        "number": n,
                        "head": { "sha": pull.head_sha, "repo": { "full_name": head_repo } },
                        "base": { "sha": pull.base_sha, "repo": { "full_name": REPO } },
                    })
                })
                .collect();
            paged(app, uri, items)
        }
        (Method::GET, ["pulls", n, "files"]) => {
            let Some(pull) = n.parse().ok().and_then(|n: u64| s.pulls.get(&n).cloned()) else {
                return error(StatusCode::NOT_FOUND, "Not Found");
            };
            paged(app, uri, pull.files)
        }
        (Method::GET, ["issues", n, "comments"]) => {
            let n: u64 = n.parse().unwrap_or(0);
            let items = s
                .comments
                .iter()
                .filter(|c| c.issue == n)
                .map(comment_json)
                .collect();
            paged(app, uri, items)
        }
        (Method::POST, ["issues", n, "comments"]) => {
            let n: u64 = n.parse().unwrap_or(0);
            if !s.pulls.contains_key(&n) && !s.issues.iter().any(|i| i.number == n) {
                return error(StatusCode::NOT_FOUND, "Not Found");
            }
            let Some(text) = input.get("body").and_then(Value::as_str) else {
                return error(StatusCode::UNPROCESSABLE_ENTITY, "body is missing");
            };
            s.next_id += 1;
            s.seq += 1;
            let comment = FakeComment {
                id: s.next_id,
                issue: n,
                body: text.to_string(),
                login: BOT.to_string(),
                seq: s.seq,
            };
            s.comments.push(comment.clone());
            json_response(StatusCode::CREATED, comment_json(&comment))
        }
        (Method::PATCH, ["issues", "comments", id]) => {
            let id: u64 = id.parse().unwrap_or(0);
            let Some(comment) = s.comments.iter_mut().find(|c| c.id == id) else {
                return error(StatusCode::NOT_FOUND, "Not Found");
            };
            if let Some(text) = input.get("body").and_then(Value::as_str) {
                comment.body = text.to_string();
            }
            let value = comment_json(comment);
            json_response(StatusCode::OK, value)
        }
        (Method::DELETE, ["issues", "comments", id]) => {
            let id: u64 = id.parse().unwrap_or(0);
            let before = s.comments.len();
            s.comments.retain(|c| c.id != id);
            if s.comments.len() == before {
                return error(StatusCode::NOT_FOUND, "Not Found");
            }
            StatusCode::NO_CONTENT.into_response()
        }
        (Method::GET, ["issues"]) => {
            let state = query_param(uri, "state").unwrap_or_else(|| "open".to_string());
            let label = query_param(uri, "labels");
            let items = s
                .issues
                .iter()
                .filter(|i| state == "all" || i.state == state)
                .filter(|i| label.as_ref().is_none_or(|l| i.labels.contains(l)))
                .map(issue_json)
                .collect();
            paged(app, uri, items)
        }
        (Method::POST, ["issues"]) => {
            let title = input
                .get("title")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            if title.is_empty() {
                return error(StatusCode::UNPROCESSABLE_ENTITY, "title is missing");
            }
            s.seq += 1;
            let issue = FakeIssue {
                number: s.issues.len() as u64 + 1,
                title,
                body: input
                    .get("body")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
                state: "open".to_string(),
                labels: input
                    .get("labels")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(|l| l.as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default(),
                login: BOT.to_string(),
                seq: s.seq,
            };
            s.issues.push(issue.clone());
            json_response(StatusCode::CREATED, issue_json(&issue))
        }
        (Method::PATCH, ["issues", n]) => {
            let n: u64 = n.parse().unwrap_or(0);
            let Some(issue) = s.issues.iter_mut().find(|i| i.number == n) else {
                return error(StatusCode::NOT_FOUND, "Not Found");
            };
            if let Some(text) = input.get("body").and_then(Value::as_str) {
                issue.body = text.to_string();
            }
            if let Some(state) = input.get("state").and_then(Value::as_str) {
                issue.state = state.to_string();
            }
            let value = issue_json(issue);
            json_response(StatusCode::OK, value)
        }
        _ => error(StatusCode::NOT_FOUND, "Not Found"),
    }
}
