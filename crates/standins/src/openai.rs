//! The OpenAI Responses API, as Codex calls it through a custom model provider
//! (`model_providers.<id>` with `base_url = "<stand-in>/v1"` and `wire_api = "responses"`).
//!
//! Wire format: <https://platform.openai.com/docs/api-reference/responses/create> (request and
//! response object), <https://platform.openai.com/docs/api-reference/responses-streaming> (the
//! event stream) and <https://platform.openai.com/docs/guides/error-codes> (error bodies).
//! Routes:
//!
//! ```text
//! POST /v1/responses    the script's turn: SSE when "stream": true, else the response object
//! anything else         404 {"error": {"type": "invalid_request_error", …}}
//! ```
//!
//! A shell turn is one `function_call` output item calling the shell tool the request offers:
//! `exec_command` with `{"cmd": …}` (Codex's unified exec tool) or, failing that, `shell` with
//! `{"command": ["bash", "-lc", …]}`. A text turn is one assistant `message` item with an
//! `output_text` part. Streams carry `response.created`, `response.in_progress`,
//! `response.output_item.added`, the item's deltas (`response.function_call_arguments.delta`
//! / `.done`, or `response.content_part.added`, `response.output_text.delta` / `.done`,
//! `response.content_part.done`), `response.output_item.done` and `response.completed`, each
//! with a `sequence_number`. A request offering no shell tool when the script wants one, a body
//! that is not JSON, or a compressed body gets 400 naming the problem.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::recorder::RecordedRequest;
use crate::script::{Script, Turn};
use crate::server::{StandIn, Wire};
use crate::sse::EventStream;

/// The model named in answers when the request names none.
const DEFAULT_MODEL: &str = "standin-model";

/// Starts a Responses API stand-in playing `script`.
///
/// # Errors
///
/// [`crate::Error`] when no loopback port or server thread can be had.
pub fn start(script: Script) -> crate::Result<StandIn> {
    StandIn::start(Responses, script)
}

/// A `function_call_output` (or `custom_tool_call_output`) item the CLI sent back: what the
/// model saw of one tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolOutput {
    /// The `call_id` of the call it answers.
    pub call_id: String,
    /// Its output: the string, or the text parts joined with newlines.
    pub text: String,
}

/// Every tool output the CLI sent in `requests` (Responses requests only), each once (the
/// input is resent whole on every turn), in the order they first appeared.
pub fn tool_outputs(requests: &[RecordedRequest]) -> Vec<ToolOutput> {
    let mut seen: Vec<ToolOutput> = Vec::new();
    let bodies = requests
        .iter()
        .filter(|request| request.path == "/v1/responses")
        .filter_map(|request| request.json.as_ref());
    for body in bodies {
        for output in input_outputs(body) {
            if !seen.iter().any(|old| old.call_id == output.call_id) {
                seen.push(output);
            }
        }
    }
    seen
}

fn input_outputs(body: &Value) -> Vec<ToolOutput> {
    let items = body.get("input").and_then(Value::as_array);
    items
        .into_iter()
        .flatten()
        .filter(|item| {
            let kind = item.get("type").and_then(Value::as_str);
            matches!(
                kind,
                Some("function_call_output" | "custom_tool_call_output")
            )
        })
        .map(|item| ToolOutput {
            call_id: item
                .get("call_id")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            text: output_text(item.get("output")),
        })
        .collect()
}

fn output_text(output: Option<&Value>) -> String {
    match output {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

struct Responses;

impl Wire for Responses {
    fn answer(&self, script: &Script, request: &RecordedRequest, number: u64) -> Response {
        match (request.method.as_str(), request.path.as_str()) {
            ("POST", "/v1/responses") => responses(script, request, number),
            _ => error(
                StatusCode::NOT_FOUND,
                &format!("the stand-in has no {} {}", request.method, request.path),
            ),
        }
    }
}

fn responses(script: &Script, request: &RecordedRequest, number: u64) -> Response {
    if let Some(encoding) = request.header("content-encoding") {
        let message = format!("the stand-in reads plain JSON, not content-encoding {encoding}");
        return error(StatusCode::BAD_REQUEST, &message);
    }
    let Some(body) = request.json.as_ref() else {
        return error(StatusCode::BAD_REQUEST, "the request body is not JSON");
    };
    let outputs: Vec<String> = input_outputs(body)
        .into_iter()
        .map(|output| output.text)
        .collect();
    let item = match Turn::resolve(script, outputs.len(), &outputs) {
        Turn::Shell(command) => match shell_call(body, &command, number) {
            Some(item) => item,
            None => {
                let message = "the script calls a shell tool, and the request offers neither \
                               `exec_command` nor `shell`";
                return error(StatusCode::BAD_REQUEST, message);
            }
        },
        Turn::Text(text) => message_item(&text, number),
        Turn::Tools(_) => {
            let message = "the script makes parallel tool calls, which this stand-in does not play";
            return error(StatusCode::BAD_REQUEST, message);
        }
    };
    let reply = Reply::new(item, body, number, request.body.len() / 4);
    if body.get("stream").and_then(Value::as_bool) == Some(true) {
        reply.stream().into_response()
    } else {
        Json(reply.response("completed")).into_response()
    }
}

/// A `function_call` item for the shell tool `body` offers, or `None` if it offers none.
fn shell_call(body: &Value, command: &str, number: u64) -> Option<Value> {
    let (name, arguments) = if offers_function(body, "exec_command") {
        ("exec_command", json!({"cmd": command}))
    } else if offers_function(body, "shell") {
        ("shell", json!({"command": ["bash", "-lc", command]}))
    } else {
        return None;
    };
    Some(json!({
        "type": "function_call",
        "id": format!("fc_standin_{number}"),
        "call_id": format!("call_standin_{number}"),
        "name": name,
        "arguments": arguments.to_string(),
        "status": "completed",
    }))
}

fn offers_function(body: &Value, name: &str) -> bool {
    let tools = body.get("tools").and_then(Value::as_array);
    tools.into_iter().flatten().any(|tool| {
        tool.get("type").and_then(Value::as_str) == Some("function")
            && tool.get("name").and_then(Value::as_str) == Some(name)
    })
}

fn message_item(text: &str, number: u64) -> Value {
    json!({
        "type": "message",
        "id": format!("msg_standin_{number}"),
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    })
}

/// One response holding one output item, rendered whole or as a stream.
struct Reply {
    id: String,
    model: String,
    item: Value,
    input_tokens: usize,
}

impl Reply {
    fn new(item: Value, body: &Value, number: u64, input_tokens: usize) -> Self {
        let model = body.get("model").and_then(Value::as_str);
        Self {
            id: format!("resp_standin_{number}"),
            model: model.unwrap_or(DEFAULT_MODEL).to_owned(),
            item,
            input_tokens,
        }
    }

    fn response(&self, status: &str) -> Value {
        let done = status == "completed";
        let output = if done { json!([self.item]) } else { json!([]) };
        let usage = done.then(|| {
            json!({
                "input_tokens": self.input_tokens,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": 8,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": self.input_tokens + 8,
            })
        });
        json!({
            "id": self.id,
            "object": "response",
            "created_at": 1_735_689_600,
            "status": status,
            "model": self.model,
            "output": output,
            "error": null,
            "incomplete_details": null,
            "usage": usage,
        })
    }

    fn stream(&self) -> EventStream {
        let mut events = Sequence::default();
        let created = self.response("in_progress");
        events.push("response.created", json!({"response": created}));
        events.push("response.in_progress", json!({"response": created}));
        let mut added = self.item.clone();
        added["status"] = json!("in_progress");
        if self.item["type"] == "function_call" {
            added["arguments"] = json!("");
        } else {
            added["content"] = json!([]);
        }
        events.push(
            "response.output_item.added",
            json!({"output_index": 0, "item": added}),
        );
        self.stream_item_body(&mut events);
        events.push(
            "response.output_item.done",
            json!({"output_index": 0, "item": self.item}),
        );
        let completed = self.response("completed");
        events.push("response.completed", json!({"response": completed}));
        events.stream
    }

    fn stream_item_body(&self, events: &mut Sequence) {
        let item_id = self.item["id"].clone();
        if self.item["type"] == "function_call" {
            let arguments = self.item["arguments"].clone();
            let at = json!({"item_id": item_id, "output_index": 0});
            events.push(
                "response.function_call_arguments.delta",
                merged(&at, json!({"delta": arguments})),
            );
            events.push(
                "response.function_call_arguments.done",
                merged(&at, json!({"arguments": arguments})),
            );
            return;
        }
        let part = &self.item["content"][0];
        let text = part["text"].clone();
        let at = json!({"item_id": item_id, "output_index": 0, "content_index": 0});
        let empty_part = json!({"type": "output_text", "text": "", "annotations": []});
        events.push(
            "response.content_part.added",
            merged(&at, json!({"part": empty_part})),
        );
        events.push(
            "response.output_text.delta",
            merged(&at, json!({"delta": text})),
        );
        events.push(
            "response.output_text.done",
            merged(&at, json!({"text": text})),
        );
        events.push(
            "response.content_part.done",
            merged(&at, json!({"part": part})),
        );
    }
}

/// Events numbered with `sequence_number` from 0, each carrying its own `type`.
#[derive(Default)]
struct Sequence {
    stream: EventStream,
    next: u64,
}

impl Sequence {
    fn push(&mut self, kind: &str, fields: Value) {
        let head = json!({"type": kind, "sequence_number": self.next});
        self.stream.event(kind, &merged(&head, fields));
        self.next += 1;
    }
}

/// `base` with the fields of `extra` added (both objects).
fn merged(base: &Value, extra: Value) -> Value {
    let mut out = base.clone();
    if let (Some(out), Value::Object(extra)) = (out.as_object_mut(), extra) {
        out.extend(extra);
    }
    out
}

/// An error in the API's shape: `{"error": {"message", "type", "param", "code"}}`.
fn error(status: StatusCode, message: &str) -> Response {
    let body = json!({"error": {
        "message": message,
        "type": "invalid_request_error",
        "param": null,
        "code": null,
    }});
    (status, Json(body)).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exec_command_is_preferred_over_shell() {
        let body = json!({"tools": [
            {"type": "function", "name": "shell"},
            {"type": "function", "name": "exec_command"}
        ]});
        let call = shell_call(&body, "ls", 1).unwrap();
        assert_eq!(call["name"], "exec_command");
        assert_eq!(call["arguments"], json!({"cmd": "ls"}).to_string());
    }

    #[test]
    fn shell_gets_an_argv() {
        let body = json!({"tools": [{"type": "function", "name": "shell"}]});
        let call = shell_call(&body, "ls", 1).unwrap();
        let arguments: Value = serde_json::from_str(call["arguments"].as_str().unwrap()).unwrap();
        assert_eq!(arguments, json!({"command": ["bash", "-lc", "ls"]}));
    }

    #[test]
    fn no_shell_tool_means_no_call() {
        let body = json!({"tools": [{"type": "web_search"}]});
        assert_eq!(shell_call(&body, "ls", 1), None);
    }
}
