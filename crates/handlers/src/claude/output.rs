//! What a hook written for Claude Code answers, read with Claude Code's rules for its event.
//!
//! | answer | `PreToolUse` | `UserPromptSubmit` | `Stop` | `PostToolUse`, `PostToolUseFailure` | other events |
//! |---|---|---|---|---|---|
//! | exit 2 | deny, stderr the reason | deny | keep working, stderr the reason | stderr added to the model's context | recorded, no effect |
//! | exit 0, plain text | ignored | context | ignored | ignored | `SessionStart`: context; else ignored |
//! | `permissionDecision` | allow / deny / ask / `defer` (ask) | – | – | – | – |
//! | `decision: block` | deny | deny | keep working | the reason added to the context | recorded |
//! | `decision: approve` | allow | – | – | – | – |
//! | `continue: false` | deny with `stopReason` | deny | stop for real (no keep working) | deny (the result is withheld) | recorded |
//! | `updatedInput` | new arguments, mapped back to the tool's | – | – | – | – |
//! | `updatedToolOutput`, `updatedMCPToolOutput` | – | – | – | the new result | – |
//! | `additionalContext` | context | context | – | context | context |
//! | `systemMessage` | a `system_message` side effect (shown in `tollgate run`) | | | | |
//!
//! "Keep working" is a deny with a `keep_working` side effect: the runtime goes on with the
//! reason as the next user message (`docs/claude-code.md`). Any other exit status is a hook
//! failure, resolved by the hook's failure mode. A JSON answer with a key Claude Code does not
//! define, or a value of the wrong type, is a hook failure (`invalid_output`): a misspelt
//! `permisionDecision` must not read as "no objection".

use serde::Deserialize;
use serde_json::{Value, json};
use tollgate_core::{FailureKind, HookError};
use tollgate_protocol::claude_code::{to_claude, to_tollgate};
use tollgate_protocol::{Decision, Outcome, OutcomeExtras, Payload, Rewrite, SideEffect};

use crate::text::excerpt;

/// Longest excerpt of stderr or stdout kept in a reason, context or error, in bytes.
const EXCERPT: usize = 4096;

/// The side effect that asks the runtime to keep a completed session going.
pub const KEEP_WORKING: &str = "keep_working";
/// The side effect that carries a hook's `systemMessage` for the person running the agent.
pub const SYSTEM_MESSAGE: &str = "system_message";

/// Claude Code's JSON output.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct OutputWire {
    #[serde(rename = "continue")]
    continue_: Option<bool>,
    stop_reason: Option<String>,
    /// Accepted; tollgate shows hook output only in the trace.
    #[allow(dead_code)]
    suppress_output: Option<bool>,
    system_message: Option<String>,
    decision: Option<String>,
    reason: Option<String>,
    hook_specific_output: Option<SpecificWire>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct SpecificWire {
    /// Accepted; the event is the one the hook ran for.
    #[allow(dead_code)]
    hook_event_name: Option<String>,
    permission_decision: Option<String>,
    permission_decision_reason: Option<String>,
    #[serde(default, deserialize_with = "present")]
    updated_input: Option<Value>,
    additional_context: Option<String>,
    #[serde(default, deserialize_with = "present", alias = "updatedMCPToolOutput")]
    updated_tool_output: Option<Value>,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// How a hook's process ended.
pub(crate) struct Exit<'a> {
    /// The exit status, `None` when a signal killed it.
    pub code: Option<i32>,
    pub stdout: &'a [u8],
    pub stderr: &'a [u8],
}

/// Reads a finished command hook's answer for the event `event_name` of `payload`.
pub(crate) fn interpret(
    event_name: &str,
    payload: &Payload,
    root: &std::path::Path,
    exit: &Exit<'_>,
) -> Result<Outcome, HookError> {
    match exit.code {
        Some(0) => read_stdout(event_name, payload, root, exit.stdout),
        Some(2) => Ok(exit_two(event_name, &excerpt(exit.stderr, EXCERPT))),
        Some(code) => Err(HookError::msg(with_stderr(
            format!("exit status {code}"),
            exit.stderr,
        ))),
        None => Err(HookError::new(
            FailureKind::Crashed,
            with_stderr("killed by a signal".into(), exit.stderr),
        )),
    }
}

/// Reads an answer body (a command's stdout on exit 0, an http hook's 2xx body).
pub(crate) fn read_stdout(
    event_name: &str,
    payload: &Payload,
    root: &std::path::Path,
    stdout: &[u8],
) -> Result<Outcome, HookError> {
    let text = std::str::from_utf8(stdout)
        .map_err(|_| invalid("stdout is not valid UTF-8".into()))?
        .trim();
    if text.is_empty() {
        return Ok(Outcome::allow());
    }
    if !text.starts_with('{') {
        // Plain text is context where Claude Code makes it context, and ignored elsewhere.
        return Ok(match event_name {
            "UserPromptSubmit" | "SessionStart" => Outcome::allow().with_context(text),
            _ => Outcome::allow(),
        });
    }
    let wire: OutputWire = serde_json::from_str(text).map_err(|e| {
        invalid(format!(
            "stdout is not one valid Claude Code hook output object: {e}"
        ))
    })?;
    json_outcome(event_name, payload, root, wire)
}

fn exit_two(event_name: &str, stderr: &str) -> Outcome {
    let reason = || {
        if stderr.is_empty() {
            format!("blocked by a {event_name} hook (exit 2)")
        } else {
            stderr.to_owned()
        }
    };
    match event_name {
        "PreToolUse" | "UserPromptSubmit" | "SubagentStop" => Outcome::deny(reason()),
        "Stop" => keep_working(reason()),
        "PostToolUse" | "PostToolUseFailure" if !stderr.is_empty() => {
            Outcome::allow().with_context(stderr)
        }
        _ => Outcome::allow(),
    }
}

fn keep_working(reason: String) -> Outcome {
    Outcome::deny(reason.clone())
        .with_side_effect(SideEffect::new(KEEP_WORKING, json!({"reason": reason})))
}

fn json_outcome(
    event_name: &str,
    payload: &Payload,
    root: &std::path::Path,
    wire: OutputWire,
) -> Result<Outcome, HookError> {
    let specific = wire.hook_specific_output.unwrap_or_default();
    let reason = |r: &Option<String>| {
        r.as_deref()
            .map(str::trim)
            .filter(|r| !r.is_empty())
            .map(str::to_owned)
    };
    let mut votes: Vec<Decision> = Vec::new();
    let mut extras = OutcomeExtras::default();
    let mut contexts: Vec<String> = specific.additional_context.iter().cloned().collect();
    let block_reason = reason(&wire.reason);
    let stop = wire.continue_ == Some(false);
    match (event_name, wire.decision.as_deref()) {
        (_, None) => {}
        // `continue: false` wins: the session stops for real.
        ("Stop", Some("block")) if stop => {}
        ("Stop", Some("block")) => {
            let why = block_reason
                .clone()
                .unwrap_or_else(|| "a Stop hook asked to keep working".into());
            votes.push(Decision::deny(why.clone()));
            extras
                .side_effects
                .push(SideEffect::new(KEEP_WORKING, json!({"reason": why})));
        }
        ("PostToolUse" | "PostToolUseFailure", Some("block")) => {
            contexts.extend(block_reason.clone())
        }
        (_, Some("block")) => votes.push(Decision::deny(
            block_reason
                .clone()
                .unwrap_or_else(|| default_reason(event_name)),
        )),
        (_, Some("approve" | "allow")) => votes.push(Decision::Allow),
        (_, Some(other)) => {
            return Err(invalid(format!(
                "unknown `decision` `{other}` (expected `block` or `approve`)"
            )));
        }
    }
    if let Some(word) = &specific.permission_decision {
        let why = reason(&specific.permission_decision_reason);
        votes.push(match word.as_str() {
            "allow" => Decision::Allow,
            "deny" => Decision::deny(why.unwrap_or_else(|| default_reason(event_name))),
            "ask" | "defer" => {
                Decision::ask(why.unwrap_or_else(|| "a hook asks for approval".into()))
            }
            other => return Err(invalid(format!("unknown `permissionDecision` `{other}`"))),
        });
    }
    if stop && event_name != "Stop" {
        votes.push(Decision::deny(
            reason(&wire.stop_reason).unwrap_or_else(|| "a hook said `continue: false`".into()),
        ));
    }
    if let Some(input) = specific.updated_input {
        extras.rewrite = Some(Rewrite::Args(updated_args(payload, root, input)?));
    }
    if let Some(output) = specific.updated_tool_output {
        if extras.rewrite.is_some() {
            return Err(invalid(
                "an answer rewrites the input or the output, not both".into(),
            ));
        }
        extras.rewrite = Some(Rewrite::Result(output));
    }
    if let Some(message) = wire.system_message.filter(|m| !m.trim().is_empty()) {
        extras
            .side_effects
            .push(SideEffect::new(SYSTEM_MESSAGE, json!(message)));
    }
    contexts.retain(|c| !c.trim().is_empty());
    extras.additional_context = (!contexts.is_empty()).then(|| contexts.join("\n"));
    let decision = votes.into_iter().fold(Decision::Allow, |strictest, vote| {
        if vote.strictness() > strictest.strictness() {
            vote
        } else {
            strictest
        }
    });
    Ok(Outcome::from_parts(decision, extras))
}

fn default_reason(event_name: &str) -> String {
    format!("blocked by a {event_name} hook (no reason given)")
}

/// `updatedInput` (Claude Code's fields, replacing the whole input) as the tool's arguments.
fn updated_args(
    payload: &Payload,
    root: &std::path::Path,
    input: Value,
) -> Result<Value, HookError> {
    let call = payload
        .tool_call()
        .ok_or_else(|| invalid("`updatedInput` on an event without a tool call".into()))?;
    let (claude, _) = to_claude(&call.tool_name, &call.tool_input, Some(root));
    match to_tollgate(&claude, &input, Some(root)) {
        Ok(Some((tool, args))) if tool == call.tool_name => Ok(args),
        Ok(Some((tool, _))) => Err(invalid(format!(
            "`updatedInput` turns a `{}` call into a `{tool}` call",
            call.tool_name
        ))),
        Ok(None) => Ok(input),
        Err(why) => Err(invalid(format!(
            "`updatedInput` does not fit `{claude}`: {why}"
        ))),
    }
}

fn invalid(message: String) -> HookError {
    HookError::new(FailureKind::InvalidOutput, message)
}

fn with_stderr(what: String, stderr: &[u8]) -> String {
    let stderr = excerpt(stderr, EXCERPT);
    if stderr.is_empty() {
        what
    } else {
        format!("{what}: {stderr}")
    }
}

#[cfg(test)]
mod tests {
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
        let ask = r#"{"hookSpecificOutput":{"permissionDecision":"defer"}}"#;
        assert!(matches!(
            answer("PreToolUse", &call, 0, ask, "").unwrap().decision,
            Decision::Ask { .. }
        ));
        let rewrite = r#"{"hookSpecificOutput":{"permissionDecision":"allow","updatedInput":{"command":"ls","description":"x","timeout":2000}}}"#;
        assert_eq!(
            answer("PreToolUse", &call, 0, rewrite, "").unwrap(),
            Outcome::allow().with_args(json!({"command": "ls", "timeout_seconds": 2}))
        );
        // Strictest wins when fields disagree.
        let both = r#"{"decision":"approve","hookSpecificOutput":{"permissionDecision":"deny"}}"#;
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
            r#"{"hookSpecificOutput":{"permisionDecision":"deny"}}"#,
            r#"{"decision":"maybe"}"#,
            r#"{"hookSpecificOutput":{"permissionDecision":"nope"}}"#,
            r#"{"hookSpecificOutput":{"updatedInput":{"cmd":"ls"}}}"#,
            r#"{"hookSpecificOutput":{"updatedInput":{"command":"ls"},"updatedToolOutput":1}}"#,
            "{not json",
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
        assert!(stopped.side_effects().is_empty() && !stopped.decision.is_deny());
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
}
