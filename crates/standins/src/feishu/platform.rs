//! The open platform's API: tokens and messages, with knobs for the failures a test needs.

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::{INVALID_TOKEN, MISSING_TOKEN};
use crate::recorder::RecordedRequest;
use crate::script::Script;
use crate::server::{Hold, StandIn, Wire};

const TOKEN_PATH: &str = "/open-apis/auth/v3/tenant_access_token/internal";
const MESSAGES_PATH: &str = "/open-apis/im/v1/messages";
const RECEIVE_ID_TYPES: [&str; 5] = ["open_id", "chat_id", "union_id", "user_id", "email"];
const MSG_TYPES: [&str; 4] = ["text", "post", "interactive", "image"];
/// The platform's token lifetime, in seconds.
const DEFAULT_EXPIRE: u64 = 7200;

/// Starts an open-platform stand-in for the app `app_id` / `app_secret`.
///
/// # Errors
///
/// [`crate::Error`] when no loopback port or server thread can be had.
pub fn start(app_id: &str, app_secret: &str) -> crate::Result<OpenPlatform> {
    let state = Arc::new(Mutex::new(State {
        app_id: app_id.to_owned(),
        app_secret: app_secret.to_owned(),
        expire: DEFAULT_EXPIRE,
        ..State::default()
    }));
    let server = StandIn::start(
        Platform {
            state: state.clone(),
        },
        Script::new(),
    )?;
    Ok(OpenPlatform { server, state })
}

/// A running open-platform stand-in.
#[derive(Debug)]
pub struct OpenPlatform {
    server: StandIn,
    state: Arc<Mutex<State>>,
}

/// A message the stand-in created, with every update it got.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Message {
    /// `om_standin_000001`, `om_standin_000002`, …
    pub message_id: String,
    /// The `uuid` it was created with, if any.
    pub uuid: Option<String>,
    /// The `receive_id_type` query parameter.
    pub receive_id_type: String,
    /// The `receive_id`.
    pub receive_id: String,
    /// The `msg_type`.
    pub msg_type: String,
    /// The `content` as sent, parsed (for `interactive`: the card).
    pub content: Value,
    /// The `content` of each update, parsed, oldest first.
    pub updates: Vec<Value>,
}

impl Message {
    /// The card as it shows now: the last update, else the content it was created with.
    pub fn card(&self) -> &Value {
        self.updates.last().unwrap_or(&self.content)
    }
}

/// A button of a card, as a client renders it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Button {
    /// The button's text.
    pub label: String,
    /// The `value` of its `callback` behaviour (JSON 2.0), or its `value` (JSON 1.0).
    pub value: Value,
}

/// The buttons anywhere in `card`, in document order.
pub fn buttons(card: &Value) -> Vec<Button> {
    let mut found = Vec::new();
    collect_buttons(card, &mut found);
    found
}

fn collect_buttons(node: &Value, found: &mut Vec<Button>) {
    match node {
        Value::Object(map) => {
            if map.get("tag").and_then(Value::as_str) == Some("button") {
                found.push(Button {
                    label: map
                        .get("text")
                        .and_then(|text| text.get("content"))
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    value: button_value(map),
                });
            }
            map.values().for_each(|child| collect_buttons(child, found));
        }
        Value::Array(items) => items.iter().for_each(|child| collect_buttons(child, found)),
        _ => {}
    }
}

fn button_value(button: &serde_json::Map<String, Value>) -> Value {
    let behaviors = button.get("behaviors").and_then(Value::as_array);
    let callback = behaviors
        .into_iter()
        .flatten()
        .find(|b| b.get("type").and_then(Value::as_str) == Some("callback"));
    callback
        .and_then(|b| b.get("value"))
        .or_else(|| button.get("value"))
        .cloned()
        .unwrap_or(Value::Null)
}

impl OpenPlatform {
    /// `http://127.0.0.1:PORT`: the app's `base_url`.
    pub fn base_url(&self) -> String {
        self.server.base_url()
    }

    /// Every request received so far, oldest first.
    pub fn requests(&self) -> Vec<crate::RecordedRequest> {
        self.server.requests()
    }

    /// How many times a token was asked for.
    pub fn token_requests(&self) -> usize {
        self.requests()
            .iter()
            .filter(|request| request.path == TOKEN_PATH)
            .count()
    }

    /// Tokens issued from now on expire after `seconds` (the platform's default is 7200).
    pub fn set_token_expire(&self, seconds: u64) {
        self.lock().expire = seconds;
    }

    /// Every token issued so far stops working (the platform's answer to them becomes code
    /// [`INVALID_TOKEN`]).
    pub fn revoke_tokens(&self) {
        self.lock().tokens.clear();
    }

    /// The next message call is answered with code [`INVALID_TOKEN`], whatever its token.
    pub fn refuse_token_once(&self) {
        self.lock().faults.push_back(Fault::Auth);
    }

    /// The next message call is answered with HTTP `status` and no JSON envelope.
    pub fn fail_next(&self, status: u16) {
        self.lock().faults.push_back(Fault::Status(status));
    }

    /// The next message call is refused: HTTP 400 with `code` and `msg`.
    pub fn refuse_next(&self, code: i64, msg: &str) {
        let fault = Fault::Refuse(code, msg.to_owned());
        self.lock().faults.push_back(fault);
    }

    /// The next message create is done (the message exists, its `uuid` is taken) but its
    /// answer is held back for `duration`: the send is in flight, as when the sender dies
    /// before the platform's answer reaches it.
    pub fn hold_next_create(&self, duration: Duration) {
        self.lock().hold_create = Some(duration);
    }

    /// Every message created, oldest first.
    pub fn messages(&self) -> Vec<Message> {
        self.lock().messages.values().cloned().collect()
    }

    /// Message `message_id`, if it exists.
    pub fn message(&self, message_id: &str) -> Option<Message> {
        self.lock().messages.get(message_id).cloned()
    }

    /// How many create calls carried `uuid` (each after the first returned the same message).
    pub fn creates(&self, uuid: &str) -> usize {
        self.lock().creates.get(uuid).copied().unwrap_or(0)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[derive(Debug, Clone)]
enum Fault {
    Auth,
    Status(u16),
    Refuse(i64, String),
}

#[derive(Debug, Default)]
struct State {
    app_id: String,
    app_secret: String,
    expire: u64,
    issued: u64,
    tokens: HashSet<String>,
    faults: VecDeque<Fault>,
    /// By message id (the zero-padded ids sort by creation).
    messages: BTreeMap<String, Message>,
    by_uuid: BTreeMap<String, String>,
    creates: BTreeMap<String, usize>,
    hold_create: Option<Duration>,
}

struct Platform {
    state: Arc<Mutex<State>>,
}

impl Wire for Platform {
    fn answer(&self, _script: &Script, request: &RecordedRequest, _number: u64) -> Response {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let message_id = request.path.strip_prefix("/open-apis/im/v1/messages/");
        match (request.method.as_str(), request.path.as_str(), message_id) {
            ("POST", TOKEN_PATH, _) => issue_token(&mut state, request),
            ("POST", MESSAGES_PATH, _) => {
                let mut response = guarded(&mut state, request, |state, body| {
                    create(state, request, body)
                });
                if response.status().is_success()
                    && let Some(duration) = state.hold_create.take()
                {
                    response.extensions_mut().insert(Hold(duration));
                }
                response
            }
            ("PATCH", _, Some(id)) if !id.is_empty() && !id.contains('/') => {
                guarded(&mut state, request, |state, body| update(state, id, body))
            }
            _ => refuse(StatusCode::NOT_FOUND, 404, "the stand-in has no such route"),
        }
    }
}

fn issue_token(state: &mut State, request: &RecordedRequest) -> Response {
    let Some(body) = request.json.as_ref() else {
        return refuse(StatusCode::BAD_REQUEST, 9499, "the body is not JSON");
    };
    let field = |key| body.get(key).and_then(Value::as_str);
    if field("app_id") != Some(state.app_id.as_str()) {
        return refuse(StatusCode::BAD_REQUEST, 10003, "invalid param: app_id");
    }
    if field("app_secret") != Some(state.app_secret.as_str()) {
        return refuse(StatusCode::BAD_REQUEST, 10014, "app secret invalid");
    }
    state.issued += 1;
    let token = format!("t-standin-{}", state.issued);
    state.tokens.insert(token.clone());
    Json(json!({
        "code": 0,
        "msg": "ok",
        "tenant_access_token": token,
        "expire": state.expire,
    }))
    .into_response()
}

/// Applies the checks every message call gets (a queued fault, the token, the content
/// type, a JSON body) before `then`.
fn guarded(
    state: &mut State,
    request: &RecordedRequest,
    then: impl FnOnce(&mut State, &Value) -> Response,
) -> Response {
    match state.faults.pop_front() {
        Some(Fault::Auth) => return invalid_token(),
        Some(Fault::Status(status)) => {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY);
            return (status, "stand-in fault").into_response();
        }
        Some(Fault::Refuse(code, msg)) => return refuse(StatusCode::BAD_REQUEST, code, &msg),
        None => {}
    }
    let bearer = request
        .header("authorization")
        .and_then(|value| value.strip_prefix("Bearer "));
    match bearer {
        None => {
            return refuse(
                StatusCode::BAD_REQUEST,
                MISSING_TOKEN,
                "Missing access token for authorization.",
            );
        }
        Some(token) if !state.tokens.contains(token) => return invalid_token(),
        Some(_) => {}
    }
    let json_type = request
        .header("content-type")
        .is_some_and(|value| value.starts_with("application/json"));
    if !json_type {
        return refuse(
            StatusCode::BAD_REQUEST,
            99_992_402,
            "field validation failed: Content-Type must be application/json",
        );
    }
    match request.json.as_ref() {
        Some(body) => then(state, body),
        None => refuse(StatusCode::BAD_REQUEST, 9499, "the body is not JSON"),
    }
}

fn create(state: &mut State, request: &RecordedRequest, body: &Value) -> Response {
    let receive_id_type = query(request, "receive_id_type").unwrap_or_default();
    if !RECEIVE_ID_TYPES.contains(&receive_id_type.as_str()) {
        return refuse(
            StatusCode::BAD_REQUEST,
            99_992_402,
            "field validation failed: receive_id_type",
        );
    }
    let field = |key| body.get(key).and_then(Value::as_str).unwrap_or_default();
    let (receive_id, msg_type) = (field("receive_id"), field("msg_type"));
    if receive_id.is_empty() {
        return refuse(StatusCode::BAD_REQUEST, 230_001, "invalid receive_id");
    }
    if !MSG_TYPES.contains(&msg_type) {
        return refuse(StatusCode::BAD_REQUEST, 230_001, "invalid msg_type");
    }
    let Some(content) = content(body) else {
        return refuse(StatusCode::BAD_REQUEST, 230_001, "invalid message content");
    };
    let uuid = body.get("uuid").and_then(Value::as_str).map(str::to_owned);
    if let Some(uuid) = &uuid {
        *state.creates.entry(uuid.clone()).or_default() += 1;
        if let Some(existing) = state.by_uuid.get(uuid) {
            return created(existing, msg_type);
        }
    }
    let message_id = format!("om_standin_{:06}", state.messages.len() + 1);
    if let Some(uuid) = &uuid {
        state.by_uuid.insert(uuid.clone(), message_id.clone());
    }
    let message = Message {
        message_id: message_id.clone(),
        uuid,
        receive_id_type,
        receive_id: receive_id.to_owned(),
        msg_type: msg_type.to_owned(),
        content,
        updates: Vec::new(),
    };
    state.messages.insert(message_id.clone(), message);
    created(&message_id, msg_type)
}

fn created(message_id: &str, msg_type: &str) -> Response {
    Json(json!({
        "code": 0,
        "msg": "success",
        "data": {"message_id": message_id, "msg_type": msg_type, "create_time": "1700000000000"},
    }))
    .into_response()
}

fn update(state: &mut State, message_id: &str, body: &Value) -> Response {
    let Some(message) = state.messages.get_mut(message_id) else {
        return refuse(
            StatusCode::BAD_REQUEST,
            230_011,
            "the message does not exist",
        );
    };
    if message.msg_type != "interactive" {
        return refuse(
            StatusCode::BAD_REQUEST,
            230_001,
            "only cards can be patched",
        );
    }
    let Some(content) = content(body) else {
        return refuse(StatusCode::BAD_REQUEST, 230_001, "invalid message content");
    };
    message.updates.push(content);
    Json(json!({"code": 0, "msg": "success", "data": {}})).into_response()
}

/// `content` is a string holding a JSON object.
fn content(body: &Value) -> Option<Value> {
    let text = body.get("content")?.as_str()?;
    serde_json::from_str::<Value>(text)
        .ok()
        .filter(Value::is_object)
}

fn query(request: &RecordedRequest, key: &str) -> Option<String> {
    let query = request.query.as_deref()?;
    query.split('&').find_map(|pair| {
        let (name, value) = pair.split_once('=')?;
        (name == key).then(|| value.to_owned())
    })
}

fn invalid_token() -> Response {
    refuse(
        StatusCode::BAD_REQUEST,
        INVALID_TOKEN,
        "Invalid access token for authorization. Please make a request with token attached.",
    )
}

fn refuse(status: StatusCode, code: i64, msg: &str) -> Response {
    (status, Json(json!({"code": code, "msg": msg}))).into_response()
}
