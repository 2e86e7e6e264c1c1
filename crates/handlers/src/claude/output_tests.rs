//! Claude Code's answers, read with its rules.

use serde_json::json;
use tollgate_protocol::{PayloadCommon, SessionEnd, SessionEndStatus, ToolCall};

use super::*;

fn bash(command: &str) -> Payload {
    Payload::new(
        PayloadCommon::default(),
        ToolCall {
            tool_name: "bash_code_execute_tool".into(),
            tool_call_id: "c1".into(),
            tool_input: json!({"command": command}),
        },
    )
}

fn answer(
    event: &str,
    payload: &Payload,
    code: i32,
    stdout: &str,
    stderr: &str,
) -> Result<Outcome, HookError> {
    let exit = Exit {
        code: Some(code),
        stdout: stdout.as_bytes(),
        stderr: stderr.as_bytes(),
    };
    interpret(event, payload, std::path::Path::new("/ws"), &exit)
}

#[test]
fn pre_tool_use_answers_decide_and_rewrite_in_the_tools_own_fields() {
    let call = bash("rm -rf /");
    assert_eq!(
        answer("PreToolUse", &call, 2, "", "no rm").unwrap(),
        Outcome::deny("no rm")
    );
    let deny = r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"nope"}}"#;
    assert_eq!(
        answer("PreToolUse", &call, 0, deny, "").unwrap(),
        Outcome::deny("nope")
    );
    let ask =
        r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"defer"}}"#;
    assert!(matches!(
        answer("PreToolUse", &call, 0, ask, "").unwrap().decision,
        Decision::Ask { .. }
    ));
    let rewrite = r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"ls","description":"x","timeout":2000}}}"#;
    let sent = json!({"command": "ls", "description": "x", "timeout": 2000});
    assert_eq!(
        answer("PreToolUse", &call, 0, rewrite, "").unwrap(),
        Outcome::allow()
            .with_args(json!({"command": "ls", "timeout_seconds": 2}))
            .with_side_effect(SideEffect::new(UPDATED_INPUT, json!({"tool_input": sent})))
    );
    // Strictest wins when fields disagree.
    let both = r#"{"decision":"approve","hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny"}}"#;
    assert!(
        answer("PreToolUse", &call, 0, both, "")
            .unwrap()
            .decision
            .is_deny()
    );
    assert!(
        answer(
            "PreToolUse",
            &call,
            0,
            r#"{"continue":false,"stopReason":"halt"}"#,
            ""
        )
        .unwrap()
        .decision
        .is_deny()
    );
    assert_eq!(
        answer("PreToolUse", &call, 0, "just text", "").unwrap(),
        Outcome::allow()
    );
}

#[test]
fn malformed_answers_are_failures_not_allows() {
    let call = bash("ls");
    for bad in [
        r#"{"hookSpecificOutput":{"permissionDecision":"deny"}}"#,
        r#"{"decision":"maybe"}"#,
        r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"nope"}}"#,
        r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"cmd":"ls"}}}"#,
        r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"command":"ls"},"updatedToolOutput":1}}"#,
        "{not json}",
    ] {
        let err = answer("PreToolUse", &call, 0, bad, "").unwrap_err();
        assert_eq!(err.kind(), FailureKind::InvalidOutput, "{bad}");
    }
    assert_eq!(
        answer("PreToolUse", &call, 1, "", "boom")
            .unwrap_err()
            .kind(),
        FailureKind::Errored
    );
}

/// Claude Code ignores keys it does not define and a `hookSpecificOutput` naming another
/// event; what it does define still decides (a deny beside an unknown key denies).
#[test]
fn unknown_keys_and_another_events_output_are_ignored_as_claude_code_ignores_them() {
    let call = bash("ls");
    let extra = r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no","note":1},"version":2}"#;
    let outcome = answer("PreToolUse", &call, 0, extra, "").unwrap();
    assert_eq!(outcome.decision, Decision::deny("no"));
    assert_eq!(
        outcome.side_effects()[0],
        SideEffect::new(IGNORED_KEYS, json!(["version", "hookSpecificOutput.note"]))
    );
    let misspelt =
        r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permisionDecision":"deny"}}"#;
    assert!(
        !answer("PreToolUse", &call, 0, misspelt, "")
            .unwrap()
            .decision
            .is_deny()
    );
    let other =
        r#"{"hookSpecificOutput":{"hookEventName":"PostToolUse","permissionDecision":"deny"}}"#;
    assert!(
        !answer("PreToolUse", &call, 0, other, "")
            .unwrap()
            .decision
            .is_deny()
    );
}

/// Claude Code's words where the hook gave none, and its reading of text that is not one
/// JSON object.
#[test]
fn blocks_without_a_reason_and_odd_stdout_read_as_in_claude_code() {
    let call = bash("ls");
    assert_eq!(
        answer("PreToolUse", &call, 2, "", "").unwrap(),
        Outcome::deny("No stderr output")
    );
    assert_eq!(
        answer("PreToolUse", &call, 0, r#"{"decision":"block"}"#, "").unwrap(),
        Outcome::deny("Blocked by hook")
    );
    let two = "{\"decision\":\"block\",\"reason\":\"a\"}\n{\"decision\":\"block\"}";
    assert_eq!(
        answer("PreToolUse", &call, 0, two, "").unwrap_err().kind(),
        FailureKind::InvalidOutput
    );
    assert_eq!(
        answer(
            "PreToolUse",
            &call,
            0,
            r#"{"decision": "block", "reason": "cut"#,
            ""
        )
        .unwrap(),
        Outcome::allow()
    );
    let turn = Payload::new(
        PayloadCommon::default(),
        tollgate_protocol::UserTurn {
            prompt: "hi".into(),
        },
    );
    let lines = "{\"a\":1}\n{\"b\":2}";
    assert_eq!(
        answer("UserPromptSubmit", &turn, 0, lines, "").unwrap(),
        Outcome::allow().with_context(lines)
    );
}

#[test]
fn stop_blocks_keep_working_unless_the_hook_also_says_stop() {
    let end = Payload::new(
        PayloadCommon::default(),
        SessionEnd {
            status: SessionEndStatus::Completed,
            error: None,
            answer: None,
            continued: 0,
        },
    );
    let kept = answer(
        "Stop",
        &end,
        0,
        r#"{"decision":"block","reason":"run the tests"}"#,
        "",
    )
    .unwrap();
    assert_eq!(kept.decision, Decision::deny("run the tests"));
    assert_eq!(kept.side_effects()[0].kind, KEEP_WORKING);
    assert_eq!(
        answer("Stop", &end, 2, "", "not done")
            .unwrap()
            .side_effects()[0]
            .kind,
        KEEP_WORKING
    );
    let stopped = answer(
        "Stop",
        &end,
        0,
        r#"{"decision":"block","continue":false}"#,
        "",
    )
    .unwrap();
    assert!(!stopped.decision.is_deny());
    assert_eq!(
        stopped.side_effects(),
        [SideEffect::new(
            END_SESSION,
            json!({"reason": "Execution stopped by hook"})
        )]
    );
    assert_eq!(
        answer("SessionEnd", &end, 2, "", "x").unwrap(),
        Outcome::allow()
    );
}

#[test]
fn context_comes_from_plain_text_where_claude_code_takes_it() {
    let turn = Payload::new(
        PayloadCommon::default(),
        tollgate_protocol::UserTurn {
            prompt: "hi".into(),
        },
    );
    assert_eq!(
        answer("UserPromptSubmit", &turn, 0, "today is Monday\n", "").unwrap(),
        Outcome::allow().with_context("today is Monday")
    );
    assert!(
        answer(
            "UserPromptSubmit",
            &turn,
            0,
            r#"{"decision":"block","reason":"no"}"#,
            ""
        )
        .unwrap()
        .decision
        .is_deny()
    );
    let post = bash("ls");
    assert_eq!(
        answer("PostToolUse", &post, 2, "", "lint failed").unwrap(),
        Outcome::allow().with_context("lint failed")
    );
    assert_eq!(
        answer(
            "PostToolUse",
            &post,
            0,
            r#"{"decision":"block","reason":"fix it","systemMessage":"formatted"}"#,
            ""
        )
        .unwrap(),
        Outcome::allow()
            .with_context("fix it")
            .with_side_effect(SideEffect::new(SYSTEM_MESSAGE, json!("formatted")))
    );
}

fn permission_request(command: &str) -> Payload {
    Payload::new(
        PayloadCommon::default(),
        tollgate_protocol::PermissionRequest {
            call: ToolCall {
                tool_name: "bash_code_execute_tool".into(),
                tool_call_id: "c1".into(),
                tool_input: json!({"command": command}),
            },
            reason: "asked".into(),
        },
    )
}

#[test]
fn permission_request_answers_grant_deny_or_leave_the_ask_to_the_human() {
    let call = permission_request("npm test");
    let granted = |outcome: &Outcome| {
        outcome
            .side_effects()
            .iter()
            .any(|e| e.kind == PERMISSION_GRANTED)
    };
    let allow = r#"{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}"#;
    let outcome = answer("PermissionRequest", &call, 0, allow, "").unwrap();
    assert_eq!(outcome.decision, Decision::Allow);
    assert!(granted(&outcome));

    let rewrite = r#"{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedInput":{"command":"npm test -- --ci"}}}}"#;
    let outcome = answer("PermissionRequest", &call, 0, rewrite, "").unwrap();
    assert!(granted(&outcome));
    assert_eq!(
        outcome.rewrite(),
        Some(&Rewrite::Args(json!({"command": "npm test -- --ci"})))
    );

    let deny = r#"{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"not on main","interrupt":true}}}"#;
    let outcome = answer("PermissionRequest", &call, 0, deny, "").unwrap();
    assert_eq!(outcome.decision, Decision::deny("not on main"));
    assert!(outcome.side_effects().iter().any(|e| e.kind == END_SESSION));
    assert!(!granted(&outcome));

    // No answer, plain text, or an answer for another event: the human is asked.
    for silent in [
        "",
        "looks fine",
        r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}"#,
    ] {
        let outcome = answer("PermissionRequest", &call, 0, silent, "").unwrap();
        assert!(!granted(&outcome), "{silent}");
        assert!(!outcome.decision.is_deny(), "{silent}");
    }
    assert_eq!(
        answer("PermissionRequest", &call, 2, "", "no").unwrap(),
        Outcome::deny("no")
    );
    let odd = r#"{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"ask"}}}"#;
    assert!(answer("PermissionRequest", &call, 0, odd, "").is_err());
}
