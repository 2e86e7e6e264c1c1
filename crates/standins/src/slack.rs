//! Slack: the Web API a bot posts approval messages through, the `response_url` a click
//! answers through, and a Slack user who clicks buttons ([`SlackUser`]).
//!
//! Wire format, from Slack's reference: <https://docs.slack.dev/reference/methods/chat.postMessage>,
//! <https://docs.slack.dev/reference/methods/chat.update>,
//! <https://docs.slack.dev/apis/web-api/rate-limits> (429 with `Retry-After`) and
//! <https://docs.slack.dev/interactivity/handling-user-interaction> (`response_url`). Routes:
//!
//! ```text
//! POST /api/chat.postMessage   bearer token, JSON body with channel and text or blocks
//!                              → {"ok": true, "channel", "ts", "message"}
//! POST /api/chat.update        bearer token, JSON body with channel, ts of a posted message
//!                              → {"ok": true, "channel", "ts", "text"}
//! POST /response/{id}          a click's response_url: JSON body, recorded → {"ok": true}
//! anything else                404 {"ok": false, "error": "unknown_method"}
//! ```
//!
//! As on Slack, a refused call is HTTP 200 with `{"ok": false, "error": CODE}`: `not_authed`
//! (no token), `invalid_auth` (another token), `invalid_json`, `channel_not_found`,
//! `no_text`, `invalid_blocks` (Block Kit limits: 50 blocks, 150-character headers,
//! 3000-character sections, 2000-character button values, 255-character and distinct
//! `action_id`s), `message_not_found`. [`SlackApi::fail_next`] makes the next Web API call
//! fail on purpose (429 once, an `ok: false` code, a 5xx).

mod blockkit;
mod user;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::recorder::RecordedRequest;
use crate::script::Script;
use crate::server::{StandIn, Wire};

pub use user::{Signed, SlackUser};

/// How long [`SlackApi::wait_for_responses`] waits before it gives up.
const WAIT_LIMIT: Duration = Duration::from_secs(30);

/// A failure the next Web API call answers with instead of doing its work.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fault {
    /// HTTP 429 with `Retry-After: N` (seconds) and `{"ok": false, "error": "ratelimited"}`.
    RateLimited {
        /// The `Retry-After` value.
        retry_after_seconds: u64,
    },
    /// HTTP 200 with `{"ok": false, "error": CODE}`.
    Error(String),
    /// This HTTP status with `{"ok": false, "error": "internal_error"}`.
    Status(u16),
}

/// A message `chat.postMessage` accepted.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PostedMessage {
    /// The channel it went to, as the request named it.
    pub channel: String,
    /// Its timestamp, the message's id within the channel (`1700000000.000001`).
    pub ts: String,
    /// The request's JSON body (`text`, `blocks`, …).
    pub body: Value,
}

/// A running Slack stand-in.
#[derive(Debug)]
pub struct SlackApi {
    server: StandIn,
    state: Arc<State>,
}

#[derive(Debug)]
struct State {
    token: String,
    faults: Mutex<VecDeque<Fault>>,
    posted: Mutex<Vec<PostedMessage>>,
    responses: Mutex<Vec<(String, Value)>>,
    responded: watch::Sender<usize>,
    messages: AtomicU64,
}

/// Starts a Slack stand-in whose Web API accepts bot token `token`.
///
/// # Errors
/// [`crate::Error`] when no loopback port or server thread can be had.
pub fn start(token: &str) -> crate::Result<SlackApi> {
    let state = Arc::new(State {
        token: token.to_owned(),
        faults: Mutex::default(),
        posted: Mutex::default(),
        responses: Mutex::default(),
        responded: watch::Sender::new(0),
        messages: AtomicU64::new(0),
    });
    let wire = WebApi {
        state: Arc::clone(&state),
    };
    let server = StandIn::start(wire, Script::new())?;
    Ok(SlackApi { server, state })
}

impl SlackApi {
    /// `http://127.0.0.1:PORT/api`: the Web API's base URL (Slack's is
    /// `https://slack.com/api`).
    pub fn api_url(&self) -> String {
        format!("{}/api", self.server.base_url())
    }

    /// A `response_url` on this stand-in, for the click with id `id`.
    pub fn response_url(&self, id: &str) -> String {
        format!("{}/response/{id}", self.server.base_url())
    }

    /// Every request received so far, oldest first (failed ones included).
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.server.requests()
    }

    /// The requests to Web API method `method` (`chat.postMessage`), oldest first.
    pub fn calls(&self, method: &str) -> Vec<RecordedRequest> {
        let path = format!("/api/{method}");
        self.requests()
            .into_iter()
            .filter(|request| request.path == path)
            .collect()
    }

    /// The messages `chat.postMessage` accepted, oldest first.
    pub fn messages(&self) -> Vec<PostedMessage> {
        lock(&self.state.posted).clone()
    }

    /// The JSON bodies posted to `response_url(id)`, oldest first.
    pub fn responses(&self, id: &str) -> Vec<Value> {
        lock(&self.state.responses)
            .iter()
            .filter(|(to, _)| to == id)
            .map(|(_, body)| body.clone())
            .collect()
    }

    /// Waits until `response_url(id)` got at least `count` bodies, then returns them all;
    /// after 30 s returns what it has (the caller's assertion then says what is missing).
    pub async fn wait_for_responses(&self, id: &str, count: usize) -> Vec<Value> {
        let mut changes = self.state.responded.subscribe();
        let enough = async {
            loop {
                if self.responses(id).len() >= count {
                    return;
                }
                if changes.changed().await.is_err() {
                    return;
                }
            }
        };
        let _ = tokio::time::timeout(WAIT_LIMIT, enough).await;
        self.responses(id)
    }

    /// Makes the next Web API call (`chat.postMessage` or `chat.update`) fail with `fault`;
    /// several queued faults apply to consecutive calls.
    pub fn fail_next(&self, fault: Fault) {
        lock(&self.state.faults).push_back(fault);
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

struct WebApi {
    state: Arc<State>,
}

impl Wire for WebApi {
    fn answer(&self, _script: &Script, request: &RecordedRequest, _number: u64) -> Response {
        let path = request.path.as_str();
        if request.method != "POST" {
            return refused_with(StatusCode::NOT_FOUND, "unknown_method");
        }
        if let Some(id) = path.strip_prefix("/response/") {
            return self.respond(id, request);
        }
        let method = match path {
            "/api/chat.postMessage" => Method::PostMessage,
            "/api/chat.update" => Method::Update,
            _ => return refused_with(StatusCode::NOT_FOUND, "unknown_method"),
        };
        if let Some(fault) = lock(&self.state.faults).pop_front() {
            return fault_response(&fault);
        }
        let body = match self.checked_body(request) {
            Ok(body) => body,
            Err(code) => return refused(code),
        };
        let answer = match method {
            Method::PostMessage => self.post_message(body),
            Method::Update => self.update(body),
        };
        match answer {
            Ok(answer) => Json(answer).into_response(),
            Err(code) => refused(code),
        }
    }
}

enum Method {
    PostMessage,
    Update,
}

impl WebApi {
    /// The bearer token and the JSON body of a Web API call, or Slack's error code.
    fn checked_body<'a>(&self, request: &'a RecordedRequest) -> Result<&'a Value, &'static str> {
        let token = request
            .header("authorization")
            .and_then(|value| value.strip_prefix("Bearer "))
            .ok_or("not_authed")?;
        if token != self.state.token {
            return Err("invalid_auth");
        }
        let json = request
            .header("content-type")
            .is_some_and(|kind| kind.starts_with("application/json"));
        if !json {
            return Err("invalid_form_data");
        }
        request
            .json
            .as_ref()
            .filter(|b| b.is_object())
            .ok_or("invalid_json")
    }

    fn post_message(&self, body: &Value) -> Result<Value, &'static str> {
        let channel = string(body, "channel").ok_or("channel_not_found")?;
        let text = body.get("text").and_then(Value::as_str);
        let blocks = body.get("blocks");
        if text.is_none_or(str::is_empty) && blocks.is_none() {
            return Err("no_text");
        }
        if let Some(blocks) = blocks {
            blockkit::check(blocks).map_err(|_| "invalid_blocks")?;
        }
        let number = self.state.messages.fetch_add(1, Ordering::SeqCst) + 1;
        let ts = format!("1700000000.{number:06}");
        lock(&self.state.posted).push(PostedMessage {
            channel: channel.to_owned(),
            ts: ts.clone(),
            body: body.clone(),
        });
        Ok(json!({
            "ok": true,
            "channel": channel,
            "ts": ts,
            "message": {"type": "message", "bot_id": "B0STANDIN", "ts": ts,
                        "text": text.unwrap_or_default(), "blocks": blocks.cloned().unwrap_or(json!([]))},
        }))
    }

    fn update(&self, body: &Value) -> Result<Value, &'static str> {
        let channel = string(body, "channel").ok_or("channel_not_found")?;
        let ts = string(body, "ts").ok_or("message_not_found")?;
        let known = lock(&self.state.posted)
            .iter()
            .any(|message| message.channel == channel && message.ts == ts);
        if !known {
            return Err("message_not_found");
        }
        if let Some(blocks) = body.get("blocks") {
            blockkit::check(blocks).map_err(|_| "invalid_blocks")?;
        }
        let text = body.get("text").and_then(Value::as_str).unwrap_or_default();
        Ok(json!({"ok": true, "channel": channel, "ts": ts, "text": text}))
    }

    fn respond(&self, id: &str, request: &RecordedRequest) -> Response {
        let Some(body) = request.json.clone().filter(Value::is_object) else {
            return refused_with(StatusCode::BAD_REQUEST, "invalid_payload");
        };
        if let Some(blocks) = body.get("blocks")
            && blockkit::check(blocks).is_err()
        {
            return refused_with(StatusCode::BAD_REQUEST, "invalid_blocks");
        }
        lock(&self.state.responses).push((id.to_owned(), body));
        self.state.responded.send_modify(|count| *count += 1);
        Json(json!({"ok": true})).into_response()
    }
}

fn string<'a>(body: &'a Value, key: &str) -> Option<&'a str> {
    body.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

fn fault_response(fault: &Fault) -> Response {
    match fault {
        Fault::RateLimited {
            retry_after_seconds,
        } => {
            let mut response = refused_with(StatusCode::TOO_MANY_REQUESTS, "ratelimited");
            if let Ok(value) = retry_after_seconds.to_string().parse() {
                response.headers_mut().insert("retry-after", value);
            }
            response
        }
        Fault::Error(code) => Json(json!({"ok": false, "error": code})).into_response(),
        Fault::Status(status) => {
            let status = StatusCode::from_u16(*status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            refused_with(status, "internal_error")
        }
    }
}

/// Slack's way of refusing a call: 200 with `ok: false`.
fn refused(code: &str) -> Response {
    refused_with(StatusCode::OK, code)
}

fn refused_with(status: StatusCode, code: &str) -> Response {
    (status, Json(json!({"ok": false, "error": code}))).into_response()
}
