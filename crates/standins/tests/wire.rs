//! The stand-ins over real HTTP, as a client sees them: events, ids, scripts and recordings.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use tollgate_standins::{Script, ToolUse, anthropic, openai};

async fn post(url: &str, body: &Value) -> (u16, String, String) {
    let response = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let kind = response
        .headers()
        .get("content-type")
        .map(|value| value.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (status, kind, response.text().await.unwrap())
}

/// `(event name, data)` of each event in an SSE body.
fn sse_events(body: &str) -> Vec<(String, Value)> {
    body.split("\n\n")
        .filter(|block| !block.trim().is_empty())
        .map(|block| {
            let name = block
                .lines()
                .find_map(|l| l.strip_prefix("event: "))
                .unwrap();
            let data = block
                .lines()
                .find_map(|l| l.strip_prefix("data: "))
                .unwrap();
            (name.to_owned(), serde_json::from_str(data).unwrap())
        })
        .collect()
}

fn claude_request(messages: Value) -> Value {
    json!({"model": "claude-x", "stream": true, "max_tokens": 100, "messages": messages,
           "tools": [{"name": "Bash", "input_schema": {"type": "object"}}]})
}

#[tokio::test]
async fn messages_stream_a_bash_call_then_echo_its_result() {
    let api = anthropic::start(Script::new().shell("echo hi").echo_tool_result()).unwrap();
    let url = format!("{}/v1/messages?beta=true", api.base_url());
    let first = claude_request(json!([{"role": "user", "content": "go"}]));
    let (status, kind, body) = post(&url, &first).await;
    assert_eq!(status, 200);
    assert!(kind.starts_with("text/event-stream"), "{kind}");
    let events = sse_events(&body);
    let names: Vec<&str> = events.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(
        names,
        [
            "message_start",
            "ping",
            "content_block_start",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop"
        ]
    );
    for (name, data) in &events {
        assert_eq!(data["type"], name.as_str());
    }
    let block = &events[2].1["content_block"];
    assert_eq!(block["type"], "tool_use");
    assert_eq!(block["name"], "Bash");
    let input: String = events[3..5]
        .iter()
        .map(|(_, data)| data["delta"]["partial_json"].as_str().unwrap())
        .collect();
    let input: Value = serde_json::from_str(&input).unwrap();
    assert_eq!(input["command"], "echo hi");
    assert_eq!(events[6].1["delta"]["stop_reason"], "tool_use");

    let id = block["id"].as_str().unwrap();
    let second = claude_request(json!([
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [block]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": "hi\n"}]}
    ]));
    let (_, _, body) = post(&url, &second).await;
    let events = sse_events(&body);
    assert_eq!(
        events[3].1["delta"],
        json!({"type": "text_delta", "text": "hi\n"})
    );
    let (name, message_delta) = &events[events.len() - 2];
    assert_eq!(name, "message_delta");
    assert_eq!(message_delta["delta"]["stop_reason"], "end_turn");

    let requests = api.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].path, "/v1/messages");
    assert_eq!(requests[0].query.as_deref(), Some("beta=true"));
    assert_eq!(requests[1].json.as_ref(), Some(&second));
    let results = anthropic::tool_results(&requests);
    assert_eq!(results.len(), 1);
    assert_eq!(
        (results[0].tool_use_id.as_str(), results[0].text.as_str()),
        (id, "hi\n")
    );
}

#[tokio::test]
async fn messages_play_parallel_tool_calls_and_count_turns_by_assistant_messages() {
    let script = Script::new()
        .tools([
            ToolUse::new("Read", json!({"file_path": "/p/a.txt"})),
            ToolUse::new("Skill", json!({"skill": "deploy"})),
        ])
        .text("first answer")
        .text("second answer");
    let api = anthropic::start(script).unwrap();
    let url = format!("{}/v1/messages", api.base_url());
    let mut request = claude_request(json!([{"role": "user", "content": "go"}]));
    request["tools"] = json!([{"name": "Read"}, {"name": "Skill"}]);
    let (status, _, body) = post(&url, &request).await;
    assert_eq!(status, 200, "{body}");
    let events = sse_events(&body);
    let starts: Vec<&Value> = events
        .iter()
        .filter(|(name, _)| name == "content_block_start")
        .map(|(_, data)| data)
        .collect();
    assert_eq!(starts.len(), 2);
    assert_eq!(starts[0]["index"], 0);
    assert_eq!(starts[1]["index"], 1);
    assert_eq!(starts[1]["content_block"]["name"], "Skill");
    let ids: Vec<&str> = starts
        .iter()
        .map(|s| s["content_block"]["id"].as_str().unwrap())
        .collect();
    assert_ne!(ids[0], ids[1]);

    // A conversation holding one assistant turn gets turn 1, one holding two gets turn 2
    // (an answer a Stop hook sent back counts as a turn).
    let next = |messages: Value| {
        let mut body = claude_request(messages);
        body["stream"] = json!(false);
        body
    };
    let after_tools = next(json!([
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "text", "text": "calling"}]},
    ]));
    let (_, _, body) = post(&url, &after_tools).await;
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["content"][0]["text"],
        "first answer"
    );
    let after_feedback = next(json!([
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "text", "text": "calling"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "first answer"}]},
        {"role": "user", "content": "Stop hook feedback: run the tests"},
    ]));
    let (_, _, body) = post(&url, &after_feedback).await;
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["content"][0]["text"],
        "second answer"
    );
}

#[tokio::test]
async fn messages_refuse_a_tools_turn_calling_a_tool_not_offered() {
    let api = anthropic::start(Script::new().tools([ToolUse::new("Skill", json!({}))])).unwrap();
    let url = format!("{}/v1/messages", api.base_url());
    let (status, _, body) = post(
        &url,
        &claude_request(json!([{"role": "user", "content": "go"}])),
    )
    .await;
    assert_eq!(status, 400);
    assert!(body.contains("`Skill`"), "{body}");
}

#[tokio::test]
async fn messages_answer_json_when_not_streaming_and_errors_in_the_api_shape() {
    let api = anthropic::start(Script::new().text("done")).unwrap();
    let mut request = claude_request(json!([{"role": "user", "content": "go"}]));
    request["stream"] = json!(false);
    let (status, _, body) = post(&format!("{}/v1/messages", api.base_url()), &request).await;
    assert_eq!(status, 200);
    let message: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        message["content"],
        json!([{"type": "text", "text": "done"}])
    );
    assert_eq!(message["stop_reason"], "end_turn");

    let (status, _, body) = post(&format!("{}/v1/nothing", api.base_url()), &request).await;
    assert_eq!(status, 404);
    let error: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(error["type"], "error");
    assert_eq!(error["error"]["type"], "not_found_error");
    assert_eq!(api.requests()[1].summary(), "POST /v1/nothing -> 404");
}

#[tokio::test]
async fn the_messages_stand_in_answers_claude_codes_startup_calls() {
    let api = anthropic::start(Script::new()).unwrap();
    let client = reqwest::Client::new();
    let hello = client
        .head(format!("{}/api/hello", api.base_url()))
        .send()
        .await
        .unwrap();
    assert_eq!(hello.status().as_u16(), 200);
    let count = json!({"model": "m", "messages": [{"role": "user", "content": "12345678"}]});
    let url = format!("{}/v1/messages/count_tokens", api.base_url());
    let (status, _, body) = post(&url, &count).await;
    assert_eq!(status, 200);
    let tokens: Value = serde_json::from_str(&body).unwrap();
    assert!(tokens["input_tokens"].as_u64().unwrap() > 0, "{body}");
    let models = client
        .get(format!("{}/v1/models", api.base_url()))
        .send()
        .await
        .unwrap();
    let models: Value = serde_json::from_str(&models.text().await.unwrap()).unwrap();
    assert_eq!(models["data"][0]["type"], "model");
}

#[tokio::test]
async fn messages_refuse_a_shell_turn_when_bash_is_not_offered() {
    let api = anthropic::start(Script::new().shell("ls")).unwrap();
    let request = json!({"model": "m", "stream": true, "messages": [], "tools": []});
    let (status, _, body) = post(&format!("{}/v1/messages", api.base_url()), &request).await;
    assert_eq!(status, 400);
    assert!(body.contains("does not offer"), "{body}");
}

fn codex_request(input: Value) -> Value {
    json!({"model": "m", "stream": true, "input": input,
           "tools": [{"type": "function", "name": "exec_command", "parameters": {}}]})
}

#[tokio::test]
async fn responses_stream_an_exec_command_call_then_echo_its_output() {
    let api = openai::start(Script::new().shell("ls").echo_tool_result()).unwrap();
    let url = format!("{}/v1/responses", api.base_url());
    let user = json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]});
    let (status, kind, body) = post(&url, &codex_request(json!([user]))).await;
    assert_eq!(status, 200);
    assert!(kind.starts_with("text/event-stream"), "{kind}");
    let events = sse_events(&body);
    for (index, (name, data)) in events.iter().enumerate() {
        assert_eq!(data["type"], name.as_str());
        assert_eq!(data["sequence_number"], index);
    }
    assert_eq!(events[0].0, "response.created");
    assert_eq!(events.last().unwrap().0, "response.completed");
    let done = events
        .iter()
        .find(|(name, _)| name == "response.output_item.done")
        .map(|(_, data)| data["item"].clone())
        .unwrap();
    assert_eq!(done["type"], "function_call");
    assert_eq!(done["name"], "exec_command");
    assert_eq!(done["arguments"], json!({"cmd": "ls"}).to_string());

    let output =
        json!({"type": "function_call_output", "call_id": done["call_id"], "output": "a.txt"});
    let (_, _, body) = post(&url, &codex_request(json!([user, done, output]))).await;
    let events = sse_events(&body);
    let completed = &events.last().unwrap().1["response"];
    assert_eq!(completed["status"], "completed");
    assert_eq!(completed["output"][0]["content"][0]["text"], "a.txt");

    let outputs = openai::tool_outputs(&api.requests());
    assert_eq!(outputs.len(), 1);
    assert_eq!(outputs[0].call_id, done["call_id"].as_str().unwrap());
    assert_eq!(outputs[0].text, "a.txt");
}

#[tokio::test]
async fn responses_refuse_a_compressed_body() {
    let api = openai::start(Script::new().text("x")).unwrap();
    let response = reqwest::Client::new()
        .post(format!("{}/v1/responses", api.base_url()))
        .header("content-encoding", "zstd")
        .body("(zstd bytes)")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 400);
    let error: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
    assert_eq!(error["error"]["type"], "invalid_request_error");
    assert_eq!(api.requests()[0].header("Content-Encoding"), Some("zstd"));
}
