//! The Anthropic Messages API, as Claude Code calls it through `ANTHROPIC_BASE_URL`.
//!
//! Wire format: <https://docs.anthropic.com/en/api/messages> (request and message),
//! <https://docs.anthropic.com/en/docs/build-with-claude/streaming> (the event stream) and
//! <https://docs.anthropic.com/en/api/errors> (error bodies). Routes:
//!
//! ```text
//! POST /v1/messages                 the script's turn: SSE when "stream": true, else JSON
//!                                   (a query such as ?beta=true is ignored)
//! POST /v1/messages/count_tokens    {"input_tokens": N}, N ≈ body bytes / 4
//! GET  /v1/models                   one model, "claude-standin"
//! HEAD /api/hello, GET /api/hello   200, empty (Claude Code's connectivity check)
//! anything else                     404 not_found_error
//! ```
//!
//! A shell turn is one `tool_use` block calling [`SHELL_TOOL`] with `{"command": …,
//! "description": …}` and `stop_reason: "tool_use"`; a tools turn ([`crate::Step::Tools`]) is
//! one `tool_use` block per call, in order, with ids `toolu_standin_<request>_<index>`. Each
//! input is streamed as two `input_json_delta` fragments, so the client must join them as it
//! does with the real API. A text turn is one `text` block with `stop_reason: "end_turn"`. The
//! turn a request gets is the number of assistant messages in its conversation. A request that
//! does not offer a tool the turn calls, a body that is not JSON, or a compressed body gets 400
//! `invalid_request_error` naming the problem.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::recorder::RecordedRequest;
use crate::script::{Script, Turn};
use crate::server::{StandIn, Wire};
use crate::sse::EventStream;

/// The name of Claude Code's shell tool.
pub const SHELL_TOOL: &str = "Bash";

/// The model named in answers when the request names none.
const DEFAULT_MODEL: &str = "claude-standin";

/// Starts a Messages API stand-in playing `script`.
///
/// # Errors
///
/// [`crate::Error`] when no loopback port or server thread can be had.
pub fn start(script: Script) -> crate::Result<StandIn> {
    StandIn::start(Messages, script)
}

/// A `tool_result` block the CLI sent back: what the model saw of one tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolResult {
    /// The `tool_use` id it answers.
    pub tool_use_id: String,
    /// Its content: the string, or the `text` blocks joined with newlines.
    pub text: String,
    /// Its `is_error` flag (`false` when absent).
    pub is_error: bool,
}

/// Every tool result the CLI sent in `requests` (Messages requests only), each once (the
/// conversation is resent whole on every turn), in the order they first appeared.
pub fn tool_results(requests: &[RecordedRequest]) -> Vec<ToolResult> {
    let mut seen: Vec<ToolResult> = Vec::new();
    let bodies = requests
        .iter()
        .filter(|request| request.path == "/v1/messages")
        .filter_map(|request| request.json.as_ref());
    for body in bodies {
        for result in conversation_results(body) {
            if !seen.iter().any(|old| old.tool_use_id == result.tool_use_id) {
                seen.push(result);
            }
        }
    }
    seen
}

fn conversation_results(body: &Value) -> Vec<ToolResult> {
    let messages = body.get("messages").and_then(Value::as_array);
    messages
        .into_iter()
        .flatten()
        .filter(|message| message.get("role").and_then(Value::as_str) == Some("user"))
        .filter_map(|message| message.get("content").and_then(Value::as_array))
        .flatten()
        .filter(|block| block.get("type").and_then(Value::as_str) == Some("tool_result"))
        .map(|block| ToolResult {
            tool_use_id: string_field(block, "tool_use_id"),
            text: content_text(block.get("content")),
            is_error: block.get("is_error").and_then(Value::as_bool) == Some(true),
        })
        .collect()
}

fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|block| block.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn string_field(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

struct Messages;

impl Wire for Messages {
    fn answer(&self, script: &Script, request: &RecordedRequest, number: u64) -> Response {
        match (request.method.as_str(), request.path.as_str()) {
            ("POST", "/v1/messages") => messages(script, request, number),
            ("POST", "/v1/messages/count_tokens") => {
                Json(json!({"input_tokens": request.body.len() / 4})).into_response()
            }
            ("GET", "/v1/models") => Json(models()).into_response(),
            ("GET" | "HEAD", "/api/hello") => StatusCode::OK.into_response(),
            _ => error(
                StatusCode::NOT_FOUND,
                "not_found_error",
                &format!("the stand-in has no {} {}", request.method, request.path),
            ),
        }
    }
}

fn models() -> Value {
    json!({
        "data": [{
            "type": "model",
            "id": DEFAULT_MODEL,
            "display_name": "Claude stand-in",
            "created_at": "2025-01-01T00:00:00Z"
        }],
        "has_more": false,
        "first_id": DEFAULT_MODEL,
        "last_id": DEFAULT_MODEL
    })
}

fn messages(script: &Script, request: &RecordedRequest, number: u64) -> Response {
    if let Some(encoding) = request.header("content-encoding") {
        let message = format!("the stand-in reads plain JSON, not content-encoding {encoding}");
        return error(StatusCode::BAD_REQUEST, "invalid_request_error", &message);
    }
    let Some(body) = request.json.as_ref() else {
        let message = "the request body is not JSON";
        return error(StatusCode::BAD_REQUEST, "invalid_request_error", message);
    };
    let results: Vec<String> = conversation_results(body)
        .into_iter()
        .map(|result| result.text)
        .collect();
    let turn = Turn::resolve(script, assistant_turns(body), &results);
    let called: Vec<&str> = match &turn {
        Turn::Shell(_) => vec![SHELL_TOOL],
        Turn::Tools(tools) => tools.iter().map(|tool| tool.name.as_str()).collect(),
        Turn::Text(_) => Vec::new(),
    };
    if let Some(missing) = called.into_iter().find(|name| !offers_tool(body, name)) {
        let message =
            format!("the script calls the tool `{missing}`, which the request does not offer");
        return error(StatusCode::BAD_REQUEST, "invalid_request_error", &message);
    }
    let reply = Reply::new(turn, body, number, request.body.len() / 4);
    if body.get("stream").and_then(Value::as_bool) == Some(true) {
        reply.stream().into_response()
    } else {
        Json(reply.message()).into_response()
    }
}

fn offers_tool(body: &Value, name: &str) -> bool {
    let tools = body.get("tools").and_then(Value::as_array);
    tools
        .into_iter()
        .flatten()
        .any(|tool| tool.get("name").and_then(Value::as_str) == Some(name))
}

/// How many model turns the conversation already holds: its assistant messages.
fn assistant_turns(body: &Value) -> usize {
    let messages = body.get("messages").and_then(Value::as_array);
    messages
        .into_iter()
        .flatten()
        .filter(|message| message.get("role").and_then(Value::as_str) == Some("assistant"))
        .count()
}

/// One assistant message, rendered whole or as a stream.
struct Reply {
    id: String,
    model: String,
    blocks: Vec<Value>,
    input_tokens: usize,
}

impl Reply {
    fn new(turn: Turn, body: &Value, number: u64, input_tokens: usize) -> Self {
        let tool_use = |id: String, name: &str, input: Value| json!({"type": "tool_use", "id": id, "name": name, "input": input});
        let blocks = match turn {
            Turn::Shell(command) => vec![tool_use(
                format!("toolu_standin_{number}"),
                SHELL_TOOL,
                json!({"command": command, "description": "Run the scripted command"}),
            )],
            Turn::Tools(tools) => tools
                .into_iter()
                .enumerate()
                .map(|(i, tool)| {
                    tool_use(
                        format!("toolu_standin_{number}_{i}"),
                        &tool.name,
                        tool.input,
                    )
                })
                .collect(),
            Turn::Text(text) => vec![json!({"type": "text", "text": text})],
        };
        let model = body.get("model").and_then(Value::as_str);
        Self {
            id: format!("msg_standin_{number}"),
            model: model.unwrap_or(DEFAULT_MODEL).to_owned(),
            blocks,
            input_tokens,
        }
    }

    fn is_tool_use(&self) -> bool {
        self.blocks
            .iter()
            .any(|block| block.get("type").and_then(Value::as_str) == Some("tool_use"))
    }

    fn stop_reason(&self) -> &'static str {
        if self.is_tool_use() {
            "tool_use"
        } else {
            "end_turn"
        }
    }

    fn usage(&self, output_tokens: usize) -> Value {
        json!({
            "input_tokens": self.input_tokens,
            "output_tokens": output_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        })
    }

    fn message(&self) -> Value {
        json!({
            "id": self.id,
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": self.blocks,
            "stop_reason": self.stop_reason(),
            "stop_sequence": null,
            "usage": self.usage(8),
        })
    }

    fn stream(&self) -> EventStream {
        let mut stream = EventStream::default();
        let mut start = self.message();
        start["content"] = json!([]);
        start["stop_reason"] = Value::Null;
        start["usage"] = self.usage(1);
        stream.event(
            "message_start",
            &json!({"type": "message_start", "message": start}),
        );
        stream.event("ping", &json!({"type": "ping"}));
        for (index, block) in self.blocks.iter().enumerate() {
            stream_block(&mut stream, index, block);
        }
        let delta = json!({"stop_reason": self.stop_reason(), "stop_sequence": null});
        let usage = json!({"output_tokens": 8});
        let message_delta = json!({"type": "message_delta", "delta": delta, "usage": usage});
        stream.event("message_delta", &message_delta);
        stream.event("message_stop", &json!({"type": "message_stop"}));
        stream
    }
}

/// One content block's `content_block_start`, deltas and `content_block_stop`.
fn stream_block(stream: &mut EventStream, index: usize, block: &Value) {
    let (opening, deltas) = if block.get("type").and_then(Value::as_str) == Some("tool_use") {
        let mut opening = block.clone();
        opening["input"] = json!({});
        let input = block["input"].to_string();
        let deltas = halves(&input)
            .into_iter()
            .map(|part| json!({"type": "input_json_delta", "partial_json": part}))
            .collect();
        (opening, deltas)
    } else {
        let text = block["text"].as_str().unwrap_or_default();
        let delta = json!({"type": "text_delta", "text": text});
        (json!({"type": "text", "text": ""}), vec![delta])
    };
    let start = json!({"type": "content_block_start", "index": index, "content_block": opening});
    stream.event("content_block_start", &start);
    for delta in deltas {
        let event = json!({"type": "content_block_delta", "index": index, "delta": delta});
        stream.event("content_block_delta", &event);
    }
    let stop = json!({"type": "content_block_stop", "index": index});
    stream.event("content_block_stop", &stop);
}

/// `text` cut in two at a character boundary near its middle.
fn halves(text: &str) -> [&str; 2] {
    let mut middle = text.len() / 2;
    while !text.is_char_boundary(middle) {
        middle += 1;
    }
    let (first, second) = text.split_at(middle);
    [first, second]
}

/// An error in the API's shape: `{"type": "error", "error": {"type": KIND, "message": …}}`.
fn error(status: StatusCode, kind: &str, message: &str) -> Response {
    let body = json!({"type": "error", "error": {"type": kind, "message": message}});
    (status, Json(body)).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_split_on_a_character_boundary() {
        assert_eq!(halves("aé"), ["a", "é"]);
        assert_eq!(halves("abcd"), ["ab", "cd"]);
        assert_eq!(halves(""), ["", ""]);
    }

    #[test]
    fn a_tool_result_with_text_blocks_reads_as_their_joined_text() {
        let body = json!({"messages": [
            {"role": "user", "content": "go"},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]}
        ]});
        let results = conversation_results(&body);
        assert_eq!(results.len(), 1);
        assert_eq!(results[0].text, "a\nb");
        assert!(!results[0].is_error);
    }
}
