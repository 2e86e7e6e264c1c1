//! The OpenAI-compatible provider against a local server speaking the Chat Completions wire
//! format (https://platform.openai.com/docs/api-reference/chat/create).

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::routing::post;
use serde_json::{Value, json};
use tollgate_runtime::{EndStatus, Services};

use crate::support::*;

type Requests = Arc<Mutex<Vec<(Option<String>, Value)>>>;

async fn completions(
    State(seen): State<Requests>,
    headers: HeaderMap,
    body: String,
) -> axum::Json<Value> {
    let request: Value = serde_json::from_str(&body).unwrap();
    let auth = headers
        .get("authorization")
        .map(|v| v.to_str().unwrap().to_owned());
    let turn = {
        let mut seen = seen.lock().unwrap();
        seen.push((auth, request.clone()));
        seen.len()
    };
    let message = match turn {
        1 => json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_a", "type": "function", "function": {"name": "bash_code_execute_tool",
             "arguments": "{\"command\": \"touch forbidden\"}"}},
            {"id": "call_b", "type": "function", "function": {"name": "bash_code_execute_tool",
             "arguments": "{\"command\": \"echo from-the-tool\"}"}},
            {"id": "call_c", "type": "function", "function": {"name": "bash_code_execute_tool",
             "arguments": "{\"command\": "}}
        ]}),
        _ => json!({"role": "assistant", "content": "all done"}),
    };
    axum::Json(json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": request["model"],
        "choices": [{"index": 0, "message": message, "finish_reason": if turn == 1 { "tool_calls" } else { "stop" }}]
    }))
}

#[tokio::test]
async fn a_session_runs_against_a_chat_completions_server() {
    let seen: Requests = Arc::default();
    let app = Router::new()
        .route("/v1/chat/completions", post(completions))
        .with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let (_tmp, dir) = agent_dir();
    write(
        &dir,
        &[
            (
                "agent.yaml",
                &format!(
                    "name: live\nmodel: openai:test-model\nbase_url: http://{addr}/v1\nsystem_prompt: be brief\n\
             tools: [bash_code_execute_tool]\nhooks: [hooks.yaml]\n"
                ),
            ),
            (
                "hooks.yaml",
                "hooks:\n  PreToolUse:\n    - name: no-touch\n      script: \"jq -e '.tool_input.command | test(\\\"touch\\\")' <<<\\\"$HOOK_PAYLOAD\\\" >/dev/null && { echo 'touch is off limits' >&2; exit 2; } || exit 0\"\n",
            ),
        ],
    );
    let (report, lines) = run_agent(&dir.join("agent.yaml"), "do it", &Services::default()).await;
    assert_eq!(report.status, EndStatus::Completed, "{report:?}");
    assert_eq!(report.answer.as_deref(), Some("all done"));

    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2);
    let (auth, first) = &seen[0];
    assert_eq!(auth, &None, "no key configured, no Authorization header");
    assert_eq!(first["model"], "test-model");
    assert_eq!(first["tool_choice"], "auto");
    assert_eq!(first["tools"][0]["type"], "function");
    assert_eq!(
        first["tools"][0]["function"]["name"],
        "bash_code_execute_tool"
    );
    assert_eq!(
        first["messages"][0],
        json!({"role": "system", "content": "be brief"})
    );
    assert_eq!(
        first["messages"][1],
        json!({"role": "user", "content": "do it"})
    );
    // The second request carries the assistant turn and one tool message per call, in order:
    // the denial as an observation, then the real output.
    let messages = seen[1].1["messages"].as_array().unwrap();
    assert_eq!(messages[2]["role"], "assistant");
    assert_eq!(
        messages[2]["tool_calls"][1]["function"]["arguments"],
        "{\"command\": \"echo from-the-tool\"}"
    );
    assert_eq!(
        messages[3],
        json!({"role": "tool", "tool_call_id": "call_a",
        "content": "Tool call denied by hook `no-touch`: touch is off limits"})
    );
    assert_eq!(messages[4]["tool_call_id"], "call_b");
    assert!(
        messages[4]["content"]
            .as_str()
            .unwrap()
            .contains("from-the-tool")
    );
    assert!(!dir.join("ws/forbidden").exists());
    // Arguments that are not JSON: the model observes why, the trace keeps them as proposed.
    assert_eq!(messages[5]["tool_call_id"], "call_c");
    assert!(
        messages[5]["content"]
            .as_str()
            .unwrap()
            .contains("not valid JSON")
    );
    let proposed = of(&lines, "tool_call")
        .into_iter()
        .find(|l| l["tool_call_id"] == "call_c")
        .unwrap()
        .clone();
    assert_eq!(proposed["arguments"], "{\"command\": ");
}

#[tokio::test]
async fn an_oversized_or_error_answer_fails_the_session_with_a_reason() {
    let big = "x".repeat(tollgate_runtime::model::openai::MAX_RESPONSE_BYTES + 1);
    let app = Router::new()
        .route(
            "/big/v1/chat/completions",
            post(move || {
                let big = big.clone();
                async move {
                    axum::Json(
                        json!({"choices": [{"message": {"role": "assistant", "content": big}}]}),
                    )
                }
            }),
        )
        .route(
            "/err/v1/chat/completions",
            post(|| async { axum::Json(json!({"error": {"message": "quota exceeded"}})) }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    for (route, expected) in [("big", "larger than"), ("err", "quota exceeded")] {
        let (_tmp, dir) = agent_dir();
        write(
            &dir,
            &[(
                "agent.yaml",
                &format!("name: live\nmodel: openai:m\nbase_url: http://{addr}/{route}/v1\n"),
            )],
        );
        let (report, _) = run_agent(&dir.join("agent.yaml"), "hi", &Services::default()).await;
        assert_eq!(report.status, EndStatus::Failed);
        let error = report.error.unwrap();
        assert!(error.contains(expected), "{route}: {error}");
    }
}

#[tokio::test]
async fn regression_a_refused_connection_said_only_error_sending_request() {
    // An address nothing listens on: a listener's free port, closed again.
    let addr = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let (_tmp, dir) = agent_dir();
    write(
        &dir,
        &[(
            "agent.yaml",
            &format!("name: live\nmodel: openai:m\nbase_url: http://me:secret@{addr}/v1\n"),
        )],
    );
    let (report, _) = run_agent(&dir.join("agent.yaml"), "hi", &Services::default()).await;
    assert_eq!(report.status, EndStatus::Failed);
    let error = report.error.unwrap();
    assert!(
        error.contains(&format!("POST http://{addr}/v1/chat/completions: ")),
        "names the endpoint: {error}"
    );
    assert!(
        error.contains("Connection refused"),
        "names the cause: {error}"
    );
    assert!(!error.contains("secret"), "{error}");
}
