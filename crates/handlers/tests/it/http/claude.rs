//! An http hook in Claude Code's dialect: Claude Code's payload in the body, its extra headers,
//! its matcher, and an answer read with Claude Code's rules.

use std::path::PathBuf;

use axum::response::IntoResponse;
use tollgate_handlers::claude::{ClaudeCode, Matcher};
use tollgate_protocol::claude_code::ClaudeContext;

use super::*;

fn claude_hook(url: &str, matcher: &str) -> HttpHook {
    let context = Arc::new(ClaudeContext {
        cwd: PathBuf::from("/ws"),
        ..ClaudeContext::default()
    });
    let claude =
        ClaudeCode::new("PreToolUse", context).matcher(Matcher::parse(Some(matcher)).unwrap());
    HttpHook::builder("cc", url)
        .allow_cidrs(&loopback())
        .header("Authorization", "Bearer t0ken")
        .claude_code(claude)
        .build()
        .unwrap()
}

fn bash(command: &str) -> Arc<Payload> {
    Arc::new(Payload::new(
        common(),
        ToolCall {
            tool_name: "bash_code_execute_tool".into(),
            tool_call_id: "call_1".into(),
            tool_input: json!({"command": command}),
        },
    ))
}

#[tokio::test]
async fn a_claude_code_http_hook_gets_claude_codes_payload_and_headers_and_is_answered_so() {
    let deny = r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"not on a Friday"}}"#;
    let receiver =
        Receiver::start(move |_| async move { (StatusCode::OK, deny).into_response() }).await;
    let outcome = dispatch(
        claude_hook(&receiver.url(), "Bash"),
        HookOptions::default(),
        bash("deploy"),
    )
    .await;
    assert_eq!(
        outcome.decision,
        tollgate_protocol::Decision::deny("not on a Friday")
    );
    let seen = receiver.seen();
    assert_eq!(seen[0].header("authorization"), Some("Bearer t0ken"));
    let body: serde_json::Value = serde_json::from_slice(&seen[0].body).unwrap();
    assert_eq!(
        (
            &body["hook_event_name"],
            &body["tool_name"],
            &body["tool_input"],
            &body["cwd"]
        ),
        (
            &json!("PreToolUse"),
            &json!("Bash"),
            &json!({"command": "deploy"}),
            &json!("/ws")
        )
    );
    // A matcher that does not match sends nothing.
    let outcome = dispatch(
        claude_hook(&receiver.url(), "Write"),
        HookOptions::default(),
        bash("ls"),
    )
    .await;
    assert_eq!(outcome.runs.len(), 0);
    assert_eq!(receiver.hits(), 1);
}

#[test]
fn headers_tollgate_sets_itself_are_refused() {
    for name in ["Content-Type", "X-Webhook-Signature", "bad header"] {
        let built = HttpHook::builder("h", "https://hooks.example.com/x")
            .header(name, "v")
            .build();
        assert!(
            matches!(
                built,
                Err(tollgate_handlers::http::HttpError::Header { .. })
            ),
            "{name}"
        );
    }
}
