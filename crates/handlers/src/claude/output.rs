//! What a hook written for Claude Code answers, read with Claude Code's rules for its event.
//!
//! | answer | `PreToolUse` | `UserPromptSubmit` | `Stop` | `PostToolUse`, `PostToolUseFailure` | other events |
//! |---|---|---|---|---|---|
//! | exit 2 | deny, stderr the reason | deny | keep working, stderr the reason | stderr added to the model's context | recorded, no effect |
//! | exit 0, plain text | ignored | context | ignored | ignored | `SessionStart`: context; else ignored |
//! | `permissionDecision` | allow / deny / ask / `defer` (ask) | – | – | – | – |
//! | `decision: block` | deny | deny | keep working | the reason added to the context | recorded |
//! | `decision: approve` | allow | – | – | – | – |
//! | `continue: false` | deny with `stopReason`, end the session | deny, end the session | end the session (no keep working) | deny (the result is withheld), end the session | end the session |
//! | `updatedInput` | new arguments, mapped back to the tool's | – | – | – | – |
//! | `updatedToolOutput`, `updatedMCPToolOutput` | – | – | – | the new result | – |
//! | `additionalContext` | context | context | – | context | context |
//! | `systemMessage` | a `system_message` side effect (shown in `tollgate run`) | | | | |
//!
//! `PermissionRequest` (a call about to be asked of a human): `hookSpecificOutput.decision`
//! `{behavior: "allow", updatedInput?}` is an allow with a `permission_granted` side effect
//! (the runtime approves the call on the human's behalf), `{behavior: "deny", message?,
//! interrupt?}` a deny (`interrupt: true` also ends the session); exit 2 denies; anything
//! else leaves the ask to the human.
//!
//! "Keep working" is a deny with a `keep_working` side effect: the runtime goes on with the
//! reason as the next user message (`docs/claude-code.md`). "End the session" is an
//! `end_session` side effect: the runtime makes no further model turn. Any other exit status is a hook
//! failure, resolved by the hook's failure mode. As in Claude Code, a key it does not define is
//! ignored (named in an `ignored_output_keys` side effect) and what it does define still
//! decides; a `hookSpecificOutput` naming another event is ignored likewise; one without
//! `hookEventName`, a value of the wrong type, or one broken JSON object is a hook failure
//! (`invalid_output`), as Claude Code reports it ("hook output invalid"). Text that only starts
//! like JSON, or several JSON documents, is plain text.

use serde::Deserialize;
use serde_json::{Value, json};
use tollgate_core::{FailureKind, HookError};
use tollgate_protocol::claude_code::{claude_call, to_tollgate};
use tollgate_protocol::{Decision, Outcome, OutcomeExtras, Payload, Rewrite, SideEffect};

use crate::text::excerpt;

/// Longest excerpt of stderr or stdout kept in a reason, context or error, in bytes.
const EXCERPT: usize = 4096;

/// The side effect that asks the runtime to keep a completed session going.
pub const KEEP_WORKING: &str = "keep_working";
/// The side effect that ends the session after the event (Claude Code's `continue: false`):
/// `{"reason": stopReason}`.
pub const END_SESSION: &str = "end_session";
/// The side effect that carries a hook's `systemMessage` for the person running the agent.
pub const SYSTEM_MESSAGE: &str = "system_message";
/// The side effect that carries a hook's `updatedInput` as it wrote it (`{"tool_input": …}`),
/// beside the rewrite of tollgate's arguments made from it: Claude Code's `updatedInput`
/// replaces the whole input, fields tollgate's tools have no place for included, so a host
/// answered through `tollgate hook` gets it as written.
pub const UPDATED_INPUT: &str = "claude_updated_input";
/// The side effect of a `PermissionRequest` hook that answers `behavior: "allow"`: it approves
/// the call on the human's behalf (`{}`). Without it, a `permission_request` that nobody
/// denies goes on to ask the human.
pub const PERMISSION_GRANTED: &str = "permission_granted";

/// Claude Code's JSON output. Keys it does not define are ignored, as Claude Code ignores them
/// (it logs "unrecognized keys (ignored)"), and kept in `unknown` for a note.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
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
    #[serde(flatten)]
    unknown: serde_json::Map<String, Value>,
}

/// `hookSpecificOutput`: Claude Code requires `hookEventName`, and ignores the object when it
/// names another event than the hook's.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SpecificWire {
    hook_event_name: Option<String>,
    permission_decision: Option<String>,
    permission_decision_reason: Option<String>,
    #[serde(default, deserialize_with = "present")]
    updated_input: Option<Value>,
    additional_context: Option<String>,
    #[serde(default, deserialize_with = "present", alias = "updatedMCPToolOutput")]
    updated_tool_output: Option<Value>,
    /// `PermissionRequest`'s answer.
    decision: Option<BehaviorWire>,
    #[serde(flatten)]
    unknown: serde_json::Map<String, Value>,
}

/// `hookSpecificOutput.decision` of a `PermissionRequest` hook: `allow` (optionally with
/// `updatedInput`) or `deny` (with `message`, and `interrupt` to stop).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct BehaviorWire {
    behavior: String,
    message: Option<String>,
    #[serde(default, deserialize_with = "present")]
    updated_input: Option<Value>,
    interrupt: Option<bool>,
    #[serde(flatten)]
    unknown: serde_json::Map<String, Value>,
}

/// The side effect naming the keys of an answer that Claude Code would ignore.
pub const IGNORED_KEYS: &str = "ignored_output_keys";

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
        return Ok(plain_text(event_name, text));
    }
    let wire: OutputWire = match serde_json::from_str(text) {
        Ok(wire) => wire,
        // As Claude Code reads it: text that only starts like JSON, or several JSON documents,
        // is plain text; one broken object is a failure.
        Err(_) if !text.ends_with('}') || several_documents(text) => {
            return Ok(plain_text(event_name, text));
        }
        Err(e) => {
            return Err(invalid(format!(
                "stdout is not one valid Claude Code hook output object: {e}"
            )));
        }
    };
    json_outcome(event_name, payload, root, wire)
}

fn plain_text(event_name: &str, text: &str) -> Outcome {
    match event_name {
        "UserPromptSubmit" | "SessionStart" => Outcome::allow().with_context(text),
        _ => Outcome::allow(),
    }
}

/// Whether `text` is two or more lines that are each a JSON value and none a hook answer (an
/// object with one of the answer's keys): Claude Code reads that as plain text, and lines of
/// answers as one invalid answer.
fn several_documents(text: &str) -> bool {
    const KEYS: [&str; 7] = [
        "continue",
        "stopReason",
        "suppressOutput",
        "systemMessage",
        "decision",
        "reason",
        "hookSpecificOutput",
    ];
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines.len() > 1
        && lines
            .iter()
            .all(|line| match serde_json::from_str::<Value>(line) {
                Ok(Value::Object(map)) => !KEYS.iter().any(|key| map.contains_key(*key)),
                Ok(_) => true,
                Err(_) => false,
            })
}

fn exit_two(event_name: &str, stderr: &str) -> Outcome {
    // Claude Code's words for an exit 2 that says nothing.
    let reason = || {
        if stderr.is_empty() {
            "No stderr output".to_owned()
        } else {
            stderr.to_owned()
        }
    };
    match event_name {
        "PreToolUse" | "UserPromptSubmit" | "PermissionRequest" => Outcome::deny(reason()),
        // The (sub-)agent goes on with the reason as its next message.
        "Stop" | "SubagentStop" => keep_working(reason()),
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
    let mut ignored: Vec<String> = wire.unknown.keys().cloned().collect();
    let specific = match wire.hook_specific_output {
        None => SpecificWire::default(),
        Some(specific) => match specific.hook_event_name.as_deref() {
            None => {
                return Err(invalid(
                    "hookSpecificOutput is missing required field \"hookEventName\"".into(),
                ));
            }
            Some(name) if name != event_name => {
                ignored.push(format!(
                    "hookSpecificOutput (it names {name}, not {event_name})"
                ));
                SpecificWire::default()
            }
            Some(_) => {
                ignored.extend(
                    specific
                        .unknown
                        .keys()
                        .map(|k| format!("hookSpecificOutput.{k}")),
                );
                specific
            }
        },
    };
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
        ("Stop" | "SubagentStop", Some("block")) if stop => {}
        ("Stop" | "SubagentStop", Some("block")) => {
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
            block_reason.clone().unwrap_or_else(default_reason),
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
            "deny" => Decision::deny(why.unwrap_or_else(default_reason)),
            "ask" | "defer" => {
                Decision::ask(why.unwrap_or_else(|| "a hook asks for approval".into()))
            }
            other => return Err(invalid(format!("unknown `permissionDecision` `{other}`"))),
        });
    }
    let mut updated_input = specific.updated_input;
    if let Some(answer) = specific
        .decision
        .filter(|_| event_name == "PermissionRequest")
    {
        ignored.extend(
            answer
                .unknown
                .keys()
                .map(|k| format!("hookSpecificOutput.decision.{k}")),
        );
        match answer.behavior.as_str() {
            "allow" => {
                votes.push(Decision::Allow);
                extras
                    .side_effects
                    .push(SideEffect::new(PERMISSION_GRANTED, json!({})));
                updated_input = answer.updated_input.or(updated_input);
            }
            "deny" => {
                let why = reason(&answer.message)
                    .unwrap_or_else(|| "Permission denied by a PermissionRequest hook".into());
                if answer.interrupt == Some(true) {
                    extras
                        .side_effects
                        .push(SideEffect::new(END_SESSION, json!({"reason": why})));
                }
                votes.push(Decision::deny(why));
            }
            other => {
                return Err(invalid(format!(
                    "unknown `decision.behavior` `{other}` (expected `allow` or `deny`)"
                )));
            }
        }
    }
    if stop {
        let why = reason(&wire.stop_reason).unwrap_or_else(|| "Execution stopped by hook".into());
        // The session ends after this event, whatever the other hooks say (a Stop block
        // included); the action itself is withheld (Claude Code runs a tool call first).
        extras
            .side_effects
            .push(SideEffect::new(END_SESSION, json!({"reason": why})));
        if event_name != "Stop" {
            votes.push(Decision::deny(why));
        }
    }
    if let Some(input) = updated_input {
        extras.rewrite = Some(Rewrite::Args(updated_args(payload, root, input.clone())?));
        extras
            .side_effects
            .push(SideEffect::new(UPDATED_INPUT, json!({"tool_input": input})));
    }
    if let Some(output) = specific.updated_tool_output {
        if extras.rewrite.is_some() {
            return Err(invalid(
                "an answer rewrites the input or the output, not both".into(),
            ));
        }
        extras.rewrite = Some(Rewrite::Result(output));
    }
    if !ignored.is_empty() {
        extras
            .side_effects
            .push(SideEffect::new(IGNORED_KEYS, json!(ignored)));
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

/// Claude Code's words for a block without a reason.
fn default_reason() -> String {
    "Blocked by hook".to_owned()
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
    let (claude, _) = claude_call(call, &payload.common.metadata, Some(root));
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
#[path = "output_tests.rs"]
mod tests;
