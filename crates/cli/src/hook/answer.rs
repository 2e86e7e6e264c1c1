//! The bridge's decision in the host's words: what `tollgate hook` prints and how it exits.
//!
//! | decision | Claude Code | Codex |
//! |---|---|---|
//! | allow, nothing else | exit 0, no output: the host's own permission rules go on | the same |
//! | allow with rewritten arguments | `hookSpecificOutput.updatedInput` (no `permissionDecision`, so the host's permission rules still apply) | `permissionDecision: "allow"` with `updatedInput` (Codex takes a rewrite only so) |
//! | approved by a human (`--server`) | `permissionDecision: "allow"` (+ `updatedInput`) | exit 0, or `allow` with `updatedInput` |
//! | ask (no `--server`) | `permissionDecision: "ask"`: Claude Code asks its user | denied (Codex hooks cannot ask): exit 2 |
//! | deny | `permissionDecision: "deny"` and the reason | exit 2, the reason on stderr |
//! | deny on `UserPromptSubmit`, `PostToolUse` | `{"decision": "block", "reason": …}` | the same |
//! | context | `hookSpecificOutput.additionalContext` | the same |
//! | `PermissionRequest`: deny, or a hook's grant | `hookSpecificOutput.decision` `{behavior: "deny", message}` / `{behavior: "allow", updatedInput?}`; else nothing (Claude Code shows its dialog) | – |
//! | `Notification` | nothing (it decides nothing) | – |
//!
//! Codex marks a JSON `allow` without `updatedInput`, and any `ask`, as a failed hook and runs
//! the call anyway (`docs/interop-tests.md`): those answers are never printed for it.

use serde_json::{Map, Value, json};
use tollgate_handlers::text::{escape_controls, escape_controls_json};

use super::host::{HostEvent, Protocol};

/// What the bridge decided for one hook call.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// Allow, approved, ask or deny.
    pub ruling: Ruling,
    /// The arguments the call must run with, in the host's field names, when hooks or an
    /// approver changed them.
    pub updated_input: Option<Value>,
    /// Context hooks added for the model.
    pub context: Vec<String>,
}

/// The decision part of a [`Verdict`].
#[derive(Debug, Clone, PartialEq)]
pub enum Ruling {
    /// No objection: the host decides as it would without tollgate.
    Allow,
    /// A human approved the call through the approval server.
    Approved(String),
    /// A human must decide, and the host is to ask its user.
    Ask(String),
    /// Not allowed, with the reason the host shows.
    Deny(String),
}

impl Verdict {
    /// A verdict with `ruling` and nothing else.
    pub fn new(ruling: Ruling) -> Self {
        Self {
            ruling,
            updated_input: None,
            context: Vec::new(),
        }
    }

    /// The ruling's name in the audit: `allow`, `approved`, `ask`, `deny`.
    pub fn decision(&self) -> &'static str {
        match self.ruling {
            Ruling::Allow => "allow",
            Ruling::Approved(_) => "approved",
            Ruling::Ask(_) => "ask",
            Ruling::Deny(_) => "deny",
        }
    }

    /// The ruling's reason, if it has one.
    pub fn reason(&self) -> Option<&str> {
        match &self.ruling {
            Ruling::Allow => None,
            Ruling::Approved(r) | Ruling::Ask(r) | Ruling::Deny(r) => Some(r),
        }
    }
}

/// What the hook process prints and its exit status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// 0 (the host reads stdout), 2 (block, stderr is the reason) or 1 (a failure the host
    /// reports and goes on).
    pub exit_code: u8,
    /// One JSON object and a newline, or nothing.
    pub stdout: String,
    /// The reason of an exit 2, or a failure's message.
    pub stderr: String,
}

impl Answer {
    fn json(value: &Value) -> Self {
        Self {
            exit_code: 0,
            stdout: escape_controls_json(&value.to_string()) + "\n",
            stderr: String::new(),
        }
    }

    /// Exit 0 and nothing printed: no opinion.
    pub fn silent() -> Self {
        Self {
            exit_code: 0,
            stdout: String::new(),
            stderr: String::new(),
        }
    }

    fn block(reason: &str) -> Self {
        Self {
            exit_code: 2,
            stdout: String::new(),
            stderr: escape_controls(reason),
        }
    }

    /// The bridge could not decide (bad stdin, a configuration that does not load): on an
    /// event that lets something happen (`blocks`) the hook blocks with `message` (exit 2);
    /// elsewhere it fails (exit 1), which the hosts report and go past. `blocks` is `true` when
    /// the event is not known.
    pub fn failure(blocks: bool, message: &str) -> Self {
        Self {
            exit_code: if blocks { 2 } else { 1 },
            stdout: String::new(),
            stderr: escape_controls(&format!("tollgate: {message}")),
        }
    }
}

/// The answer to `event` for `protocol`.
pub fn render(protocol: Protocol, event: HostEvent, verdict: &Verdict) -> Answer {
    match event {
        HostEvent::PreToolUse => match protocol {
            Protocol::ClaudeCode => claude_pre_tool_use(verdict),
            Protocol::Codex => codex_pre_tool_use(verdict),
        },
        HostEvent::UserPromptSubmit | HostEvent::PostToolUse => block_or_context(event, verdict),
        HostEvent::PostToolUseFailure | HostEvent::SessionStart => context_only(event, verdict),
        HostEvent::SessionEnd | HostEvent::Stop | HostEvent::Notification => Answer::silent(),
        HostEvent::PermissionRequest => claude_permission_request(verdict),
    }
}

/// `PermissionRequest`: a deny or a hook's grant decides for the user; anything else leaves
/// the dialog to Claude Code.
fn claude_permission_request(verdict: &Verdict) -> Answer {
    let decision = match &verdict.ruling {
        Ruling::Deny(reason) => json!({"behavior": "deny", "message": reason}),
        Ruling::Approved(_) => match &verdict.updated_input {
            Some(input) => json!({"behavior": "allow", "updatedInput": input}),
            None => json!({"behavior": "allow"}),
        },
        Ruling::Allow | Ruling::Ask(_) => return Answer::silent(),
    };
    Answer::json(&json!({"hookSpecificOutput": {
        "hookEventName": HostEvent::PermissionRequest.name(),
        "decision": decision,
    }}))
}

fn specific(event: HostEvent, verdict: &Verdict) -> Map<String, Value> {
    let mut out = Map::new();
    out.insert("hookEventName".into(), json!(event.name()));
    if !verdict.context.is_empty() {
        out.insert(
            "additionalContext".into(),
            json!(verdict.context.join("\n\n")),
        );
    }
    out
}

fn claude_pre_tool_use(verdict: &Verdict) -> Answer {
    let mut out = specific(HostEvent::PreToolUse, verdict);
    let (decision, reason) = match &verdict.ruling {
        Ruling::Allow => (None, None),
        Ruling::Approved(r) => (Some("allow"), Some(r)),
        Ruling::Ask(r) => (Some("ask"), Some(r)),
        Ruling::Deny(r) => (Some("deny"), Some(r)),
    };
    if let Some(decision) = decision {
        out.insert("permissionDecision".into(), json!(decision));
    }
    if let Some(reason) = reason {
        out.insert("permissionDecisionReason".into(), json!(reason));
    }
    if let (Some(input), false) = (
        &verdict.updated_input,
        matches!(verdict.ruling, Ruling::Deny(_)),
    ) {
        out.insert("updatedInput".into(), input.clone());
    }
    if out.len() == 1 {
        return Answer::silent();
    }
    Answer::json(&json!({"hookSpecificOutput": out}))
}

fn codex_pre_tool_use(verdict: &Verdict) -> Answer {
    let mut out = specific(HostEvent::PreToolUse, verdict);
    match &verdict.ruling {
        Ruling::Deny(reason) | Ruling::Ask(reason) => return Answer::block(reason),
        Ruling::Allow | Ruling::Approved(_) => {}
    }
    if let Some(input) = &verdict.updated_input {
        out.insert("permissionDecision".into(), json!("allow"));
        out.insert("updatedInput".into(), input.clone());
    }
    if out.len() == 1 {
        return Answer::silent();
    }
    Answer::json(&json!({"hookSpecificOutput": out}))
}

fn block_or_context(event: HostEvent, verdict: &Verdict) -> Answer {
    let mut out = Map::new();
    if let Ruling::Deny(reason) | Ruling::Ask(reason) = &verdict.ruling {
        out.insert("decision".into(), json!("block"));
        out.insert("reason".into(), json!(reason));
    }
    if !verdict.context.is_empty() {
        out.insert(
            "hookSpecificOutput".into(),
            Value::Object(specific(event, verdict)),
        );
    }
    if out.is_empty() {
        return Answer::silent();
    }
    Answer::json(&Value::Object(out))
}

fn context_only(event: HostEvent, verdict: &Verdict) -> Answer {
    if verdict.context.is_empty() {
        return Answer::silent();
    }
    Answer::json(&json!({"hookSpecificOutput": specific(event, verdict)}))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn with(ruling: Ruling, updated: Option<Value>, context: &[&str]) -> Verdict {
        Verdict {
            ruling,
            updated_input: updated,
            context: context.iter().map(|c| (*c).to_owned()).collect(),
        }
    }

    fn stdout(answer: &Answer) -> Value {
        serde_json::from_str(&answer.stdout).unwrap()
    }

    #[test]
    fn a_plain_allow_prints_nothing_for_either_host() {
        for protocol in [Protocol::ClaudeCode, Protocol::Codex] {
            for event in [
                HostEvent::PreToolUse,
                HostEvent::UserPromptSubmit,
                HostEvent::Stop,
            ] {
                let answer = render(protocol, event, &Verdict::new(Ruling::Allow));
                assert_eq!(answer, Answer::silent(), "{protocol:?} {event:?}");
            }
        }
    }

    #[test]
    fn claude_code_gets_its_permission_decisions() {
        let deny = render(
            Protocol::ClaudeCode,
            HostEvent::PreToolUse,
            &with(
                Ruling::Deny("no".into()),
                Some(json!({"command": "x"})),
                &[],
            ),
        );
        assert_eq!(deny.exit_code, 0);
        assert_eq!(
            stdout(&deny),
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                "permissionDecision": "deny", "permissionDecisionReason": "no"}})
        );
        let ask = render(
            Protocol::ClaudeCode,
            HostEvent::PreToolUse,
            &with(
                Ruling::Ask("check".into()),
                Some(json!({"command": "y"})),
                &["c"],
            ),
        );
        assert_eq!(
            stdout(&ask),
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                "permissionDecision": "ask", "permissionDecisionReason": "check",
                "updatedInput": {"command": "y"}, "additionalContext": "c"}})
        );
        let rewrite = render(
            Protocol::ClaudeCode,
            HostEvent::PreToolUse,
            &with(Ruling::Allow, Some(json!({"command": "z"})), &[]),
        );
        assert_eq!(
            stdout(&rewrite),
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                "updatedInput": {"command": "z"}}})
        );
        let approved = render(
            Protocol::ClaudeCode,
            HostEvent::PreToolUse,
            &with(Ruling::Approved("approved by ops".into()), None, &[]),
        );
        assert_eq!(
            stdout(&approved)["hookSpecificOutput"]["permissionDecision"],
            "allow"
        );
    }

    #[test]
    fn codex_gets_exit_2_for_a_deny_and_allow_only_with_a_rewrite() {
        let deny = render(
            Protocol::Codex,
            HostEvent::PreToolUse,
            &with(Ruling::Deny("no\u{1b}[31m".into()), None, &[]),
        );
        assert_eq!((deny.exit_code, deny.stdout.as_str()), (2, ""));
        assert_eq!(deny.stderr, "no\\u{1b}[31m");
        let ask = render(
            Protocol::Codex,
            HostEvent::PreToolUse,
            &with(Ruling::Ask("check".into()), None, &[]),
        );
        assert_eq!((ask.exit_code, ask.stderr.as_str()), (2, "check"));
        let rewrite = render(
            Protocol::Codex,
            HostEvent::PreToolUse,
            &with(Ruling::Allow, Some(json!({"command": "z"})), &[]),
        );
        assert_eq!(
            stdout(&rewrite),
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                "permissionDecision": "allow", "updatedInput": {"command": "z"}}})
        );
        let approved = render(
            Protocol::Codex,
            HostEvent::PreToolUse,
            &with(Ruling::Approved("ok".into()), None, &[]),
        );
        assert_eq!(approved, Answer::silent());
    }

    #[test]
    fn prompts_and_results_are_blocked_with_decision_block() {
        for protocol in [Protocol::ClaudeCode, Protocol::Codex] {
            let answer = render(
                protocol,
                HostEvent::UserPromptSubmit,
                &with(Ruling::Deny("no secrets".into()), None, &["ctx"]),
            );
            assert_eq!(
                stdout(&answer),
                json!({"decision": "block", "reason": "no secrets", "hookSpecificOutput":
                    {"hookEventName": "UserPromptSubmit", "additionalContext": "ctx"}})
            );
        }
        let post = render(
            Protocol::ClaudeCode,
            HostEvent::PostToolUse,
            &with(Ruling::Deny("withheld".into()), None, &[]),
        );
        assert_eq!(
            stdout(&post),
            json!({"decision": "block", "reason": "withheld"})
        );
    }

    #[test]
    fn context_reaches_session_start_and_nothing_reaches_stop() {
        let start = render(
            Protocol::Codex,
            HostEvent::SessionStart,
            &with(Ruling::Allow, None, &["a", "b"]),
        );
        assert_eq!(
            stdout(&start),
            json!({"hookSpecificOutput": {"hookEventName": "SessionStart",
                "additionalContext": "a\n\nb"}})
        );
        let stop = render(
            Protocol::Codex,
            HostEvent::Stop,
            &with(Ruling::Deny("x".into()), None, &["a"]),
        );
        assert_eq!(stop, Answer::silent());
    }

    #[test]
    fn a_permission_request_is_answered_only_when_decided() {
        let answer = |ruling, updated| {
            render(
                Protocol::ClaudeCode,
                HostEvent::PermissionRequest,
                &with(ruling, updated, &[]),
            )
        };
        assert_eq!(
            stdout(&answer(Ruling::Deny("tollgate: no".into()), None)),
            json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                "decision": {"behavior": "deny", "message": "tollgate: no"}}})
        );
        assert_eq!(
            stdout(&answer(
                Ruling::Approved("by hook".into()),
                Some(json!({"command": "ls"}))
            )),
            json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                "decision": {"behavior": "allow", "updatedInput": {"command": "ls"}}}})
        );
        for undecided in [Ruling::Allow, Ruling::Ask("a".into())] {
            assert_eq!(answer(undecided, None), Answer::silent());
        }
        let notice = render(
            Protocol::ClaudeCode,
            HostEvent::Notification,
            &with(Ruling::Allow, None, &["x"]),
        );
        assert_eq!(notice, Answer::silent());
    }

    #[test]
    fn failures_block_where_something_waits_and_fail_elsewhere() {
        let blocked = Answer::failure(true, "cannot read hooks.yaml");
        assert_eq!(blocked.exit_code, 2);
        assert_eq!(blocked.stderr, "tollgate: cannot read hooks.yaml");
        assert_eq!(Answer::failure(false, "x").exit_code, 1);
    }
}
