//! A local server speaking the Chat Completions wire format
//! (<https://platform.openai.com/docs/api-reference/chat>), for tests only: no model endpoint
//! can be reached from here. It answers with the exact response shape (`id`, `object`,
//! `created`, `model`, `choices[].message.{role, content, refusal, annotations, tool_calls}`,
//! `choices[].logprobs`, `choices[].finish_reason`, `usage` with details, `system_fingerprint`,
//! `service_tier`), validates requests the way OpenAI does where tests depend on it (key,
//! `model`, `messages`, strict `json_schema` rules), and records every request it gets.

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};

/// What the model "answers".
#[derive(Clone, Debug)]
pub enum Reply {
    /// A finished answer (`finish_reason: "stop"`).
    Content(String),
    /// An answer cut off by the token limit (`finish_reason: "length"`).
    CutOff(String),
    /// A refusal (`content: null`, `refusal` set), as structured outputs produce.
    Refusal(String),
    /// A tool call (`content: null`, `tool_calls`, `finish_reason: "tool_calls"`).
    ToolCall,
    /// An HTTP error with an OpenAI-style error body.
    Status(u16, &'static str),
    /// A redirect to `/v1/elsewhere`.
    Redirect,
}

/// One request as received.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub path: String,
    pub authorization: Option<String>,
    pub content_type: Option<String>,
    /// The body as sent (key order kept).
    pub raw: String,
    pub body: Value,
}

impl Recorded {
    pub fn message(&self, role: &str) -> String {
        let messages = self.body["messages"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let found = messages.iter().find(|m| m["role"] == role);
        found
            .and_then(|m| m["content"].as_str())
            .unwrap_or_default()
            .to_owned()
    }
}

/// How the server behaves.
#[derive(Clone, Debug)]
pub struct Server {
    pub reply: Reply,
    /// The key it requires (`None`: any or none).
    pub api_key: Option<&'static str>,
    /// `false`: answers 400 to any `response_format`, as servers without structured outputs do.
    pub structured_outputs: bool,
    /// Waits this long before answering.
    pub delay: Duration,
}

impl Server {
    pub fn answering(reply: Reply) -> Self {
        Self {
            reply,
            api_key: Some(KEY),
            structured_outputs: true,
            delay: Duration::ZERO,
        }
    }

    pub fn content(content: impl Into<String>) -> Self {
        Self::answering(Reply::Content(content.into()))
    }
}

/// The key the mock expects by default.
pub const KEY: &str = "sk-test-0123456789";

#[derive(Clone)]
struct Shared {
    server: Server,
    recorded: Arc<Mutex<Vec<Recorded>>>,
}

/// A running mock on 127.0.0.1.
pub struct Mock {
    pub base_url: String,
    recorded: Arc<Mutex<Vec<Recorded>>>,
}

impl Mock {
    pub async fn start(server: Server) -> Self {
        let recorded = Arc::new(Mutex::new(Vec::new()));
        let shared = Shared {
            server,
            recorded: recorded.clone(),
        };
        let app = Router::new()
            .route("/v1/chat/completions", post(chat_completions))
            .route("/v1/elsewhere", post(chat_completions))
            .with_state(shared);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        Self {
            base_url: format!("http://{addr}/v1"),
            recorded,
        }
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.recorded.lock().unwrap().clone()
    }

    pub fn only_request(&self) -> Recorded {
        let requests = self.requests();
        assert_eq!(requests.len(), 1, "{requests:#?}");
        requests.into_iter().next().unwrap()
    }
}

async fn chat_completions(
    State(shared): State<Shared>,
    uri: axum::http::Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let get = |name| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let raw = String::from_utf8_lossy(&body).into_owned();
    let parsed: Value = serde_json::from_str(&raw).unwrap_or(Value::Null);
    shared.recorded.lock().unwrap().push(Recorded {
        path: uri.path().to_owned(),
        authorization: get(header::AUTHORIZATION),
        content_type: get(header::CONTENT_TYPE),
        raw,
        body: parsed.clone(),
    });
    tokio::time::sleep(shared.server.delay).await;
    let server = &shared.server;
    if let Some(key) = server.api_key
        && get(header::AUTHORIZATION) != Some(format!("Bearer {key}"))
    {
        return error(
            401,
            "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.",
            None,
            Some("invalid_api_key"),
        );
    }
    if let Some(response) = rejection(server, &parsed) {
        return response;
    }
    answer(&server.reply, &parsed)
}

/// The request checks OpenAI performs that tests rely on: the rejection, if any.
fn rejection(server: &Server, body: &Value) -> Option<Response> {
    if body["model"].as_str().is_none_or(str::is_empty) {
        return Some(error(400, "you must provide a model parameter", None, None));
    }
    let messages = body["messages"].as_array().filter(|m| !m.is_empty());
    let well_formed = messages.is_some_and(|m| {
        m.iter()
            .all(|m| m["role"].is_string() && m["content"].is_string())
    });
    if !well_formed {
        return Some(error(400, "Invalid 'messages'.", Some("messages"), None));
    }
    let format = body.get("response_format")?;
    if !server.structured_outputs {
        let message = "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.";
        return Some(error(400, message, Some("response_format"), None));
    }
    let why = strict_schema_errors(format)?;
    Some(error(400, &why, Some("response_format"), None))
}

/// Structured outputs' strict-mode rules: an object schema, every property required, no
/// additional properties, a name of `[a-zA-Z0-9_-]{1,64}`.
fn strict_schema_errors(format: &Value) -> Option<String> {
    let spec = &format["json_schema"];
    let name = spec["name"].as_str().unwrap_or_default();
    let name_ok = (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if format["type"] != "json_schema" || !name_ok {
        return Some("Invalid 'response_format'.".into());
    }
    if spec["strict"] != true {
        return None;
    }
    let schema = &spec["schema"];
    let properties = schema["properties"].as_object()?;
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let context = format!("Invalid schema for response_format '{name}': In context=()");
    if schema["type"] != "object" || schema["additionalProperties"] != false {
        return Some(format!(
            "{context}, 'additionalProperties' is required to be supplied and to be false."
        ));
    }
    let missing = properties.keys().find(|k| !required.contains(&k.as_str()));
    missing.map(|key| {
        format!("{context}, 'required' is required to be supplied and to be an array including every key in properties. Missing '{key}'.")
    })
}

fn error(status: u16, message: &str, param: Option<&str>, code: Option<&str>) -> Response {
    let body = json!({"error": {
        "message": message, "type": "invalid_request_error", "param": param, "code": code,
    }});
    let status = StatusCode::from_u16(status).unwrap();
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

fn answer(reply: &Reply, request: &Value) -> Response {
    let assistant = |content: Value, refusal: Value| json!({"role": "assistant", "content": content, "refusal": refusal, "annotations": []});
    let (message, finish_reason) = match reply {
        Reply::Content(text) => (assistant(json!(text), Value::Null), "stop"),
        Reply::CutOff(text) => (assistant(json!(text), Value::Null), "length"),
        Reply::Refusal(text) => (assistant(Value::Null, json!(text)), "stop"),
        Reply::ToolCall => {
            let mut message = assistant(Value::Null, Value::Null);
            message["tool_calls"] = json!([{
                "id": "call_Qx3", "type": "function",
                "function": {"name": "approve_action", "arguments": "{\"approved\": true}"},
            }]);
            (message, "tool_calls")
        }
        Reply::Status(status, message) => return error(*status, message, None, None),
        Reply::Redirect => {
            let headers = [(header::LOCATION, "/v1/elsewhere")];
            return (StatusCode::FOUND, headers).into_response();
        }
    };
    let completion = completion(request, message, finish_reason);
    let headers = [(header::CONTENT_TYPE, "application/json")];
    (StatusCode::OK, headers, completion.to_string()).into_response()
}

fn completion(request: &Value, message: Value, finish_reason: &str) -> Value {
    let created = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let prompt_tokens = request["messages"].to_string().len() / 4;
    let completion_tokens = message.to_string().len() / 4;
    json!({
        "id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG",
        "object": "chat.completion",
        "created": created,
        "model": request["model"],
        "choices": [{
            "index": 0,
            "message": message,
            "logprobs": null,
            "finish_reason": finish_reason,
        }],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": 0, "audio_tokens": 0,
                "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0,
            },
        },
        "service_tier": "default",
        "system_fingerprint": "fp_44709d6fcb",
    })
}
