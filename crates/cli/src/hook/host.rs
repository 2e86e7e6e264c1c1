//! What Claude Code and Codex send a command hook on stdin, and the tollgate payload it maps to.
//!
//! Both hosts send one JSON object with `hook_event_name`, `session_id` and the event's fields
//! (`docs/interop-tests.md` records the exact payloads); fields this module does not know are
//! accepted and kept in the payload's `metadata`. Events:
//!
//! | host event | tollgate event | fields |
//! |---|---|---|
//! | `PreToolUse` | `pre_tool_use` | `tool_name`, `tool_input` (mapped), `tool_call_id` = `tool_use_id` |
//! | `PostToolUse` | `post_tool_use` | the same and `tool_result` = `tool_response` |
//! | `PostToolUseFailure` | `post_tool_use_failure` | the same and `error` |
//! | `UserPromptSubmit` | `user_turn` | `prompt` |
//! | `SessionStart` | `session_start` | |
//! | `SessionEnd`, `Stop` | `session_end` | `status: completed` |
//! | `PermissionRequest` (Claude Code) | `permission_request` | `tool_name`, `tool_input` (mapped), `tool_call_id`, `reason: ""` |
//! | `Notification` (Claude Code) | `notification` | `notification_type`, `message` |
//!
//! Tool names and inputs go through the table of Claude Code's tools, as replay maps them
//! (`Bash` → `bash_code_execute_tool`, …; Codex names its shell tool `Bash` with `{command}`),
//! so hooks written for a tollgate run apply unchanged; the call as sent is kept in `metadata`
//! (`claude_code_call`) for hooks declared in Claude Code's shape, which see it as sent. Other
//! events are not bridged: the hook answers nothing.

use std::path::Path;

use clap::ValueEnum;
use serde_json::{Map, Value, json};
use tollgate_protocol::claude_code::{self, ClaudeContext, SENT_CALL};
use tollgate_protocol::wire::PayloadWire;
use tollgate_protocol::{Event, Payload};

use crate::replay::mapping::Mapped;

/// The host whose hook `tollgate hook` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Protocol {
    /// Claude Code (`.claude/settings.json`).
    ClaudeCode,
    /// Codex (`hooks.json` of `$CODEX_HOME` or a project's `.codex/`).
    Codex,
}

impl Protocol {
    /// The host's name: the payload's `agent_id` and `source`, the audit's `host`.
    pub fn name(self) -> &'static str {
        match self {
            Self::ClaudeCode => "claude-code",
            Self::Codex => "codex",
        }
    }
}

/// A host event the bridge maps to a tollgate event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostEvent {
    /// Before a tool runs: may deny, ask or rewrite.
    PreToolUse,
    /// After a tool succeeded.
    PostToolUse,
    /// After a tool failed (Claude Code).
    PostToolUseFailure,
    /// A prompt the user submitted: may be blocked.
    UserPromptSubmit,
    /// A session started or resumed.
    SessionStart,
    /// A session ended (Claude Code).
    SessionEnd,
    /// The agent finished its answer.
    Stop,
    /// Claude Code is about to show a permission dialog: hooks may decide for the user.
    PermissionRequest,
    /// Claude Code needs its user (a permission prompt, an idle prompt).
    Notification,
}

impl HostEvent {
    /// The events `tollgate hook install` registers for each host.
    pub fn installed(protocol: Protocol) -> &'static [HostEvent] {
        match protocol {
            Protocol::ClaudeCode => &[
                Self::PreToolUse,
                Self::PostToolUse,
                Self::PostToolUseFailure,
                Self::UserPromptSubmit,
                Self::SessionStart,
                Self::SessionEnd,
            ],
            Protocol::Codex => &[
                Self::PreToolUse,
                Self::PostToolUse,
                Self::UserPromptSubmit,
                Self::SessionStart,
                Self::Stop,
            ],
        }
    }

    /// The host's spelling.
    pub fn name(self) -> &'static str {
        match self {
            Self::PreToolUse => "PreToolUse",
            Self::PostToolUse => "PostToolUse",
            Self::PostToolUseFailure => "PostToolUseFailure",
            Self::UserPromptSubmit => "UserPromptSubmit",
            Self::SessionStart => "SessionStart",
            Self::SessionEnd => "SessionEnd",
            Self::Stop => "Stop",
            Self::PermissionRequest => "PermissionRequest",
            Self::Notification => "Notification",
        }
    }

    fn parse(name: &str) -> Option<Self> {
        [
            Self::PreToolUse,
            Self::PostToolUse,
            Self::PostToolUseFailure,
            Self::UserPromptSubmit,
            Self::SessionStart,
            Self::SessionEnd,
            Self::Stop,
            Self::PermissionRequest,
            Self::Notification,
        ]
        .into_iter()
        .find(|e| e.name() == name)
    }

    /// The tollgate event it is dispatched as.
    pub fn event(self) -> Event {
        match self {
            Self::PreToolUse => Event::PreToolUse,
            Self::PostToolUse => Event::PostToolUse,
            Self::PostToolUseFailure => Event::PostToolUseFailure,
            Self::UserPromptSubmit => Event::UserTurn,
            Self::SessionStart => Event::SessionStart,
            Self::SessionEnd | Self::Stop => Event::SessionEnd,
            Self::PermissionRequest => Event::PermissionRequest,
            Self::Notification => Event::Notification,
        }
    }

    /// Whether the host waits for this event's answer to let something happen (a tool call, a
    /// prompt): there, anything that goes wrong must block (exit 2), never let it through.
    pub fn blocks(self) -> bool {
        matches!(self, Self::PreToolUse | Self::UserPromptSubmit)
    }

    /// Whether the event is about one tool call.
    pub fn has_tool(self) -> bool {
        matches!(
            self,
            Self::PreToolUse
                | Self::PostToolUse
                | Self::PostToolUseFailure
                | Self::PermissionRequest
        )
    }
}

/// One hook invocation, as read from stdin.
#[derive(Debug, Clone)]
pub struct HostCall {
    /// The host.
    pub protocol: Protocol,
    /// `hook_event_name` as sent.
    pub event_name: String,
    /// The event, when the bridge maps it.
    pub event: Option<HostEvent>,
    /// `session_id`.
    pub session_id: String,
    /// The tool call, on tool events.
    pub tool: Option<HostTool>,
    /// The whole object as sent.
    pub raw: Map<String, Value>,
}

/// A tool call as the host names it, and as tollgate dispatches it.
#[derive(Debug, Clone)]
pub struct HostTool {
    /// `tool_name` as sent (`Bash`).
    pub name: String,
    /// `tool_input` as sent.
    pub input: Value,
    /// `tool_use_id` as sent (empty when missing).
    pub use_id: String,
    /// The call as dispatched: the replay mapping's name and input.
    pub mapped: Mapped,
}

/// Keys of the host's object that become fields of the payload (the rest go to `metadata`).
const MAPPED_KEYS: [&str; 10] = [
    "hook_event_name",
    "session_id",
    "tool_name",
    "tool_input",
    "tool_use_id",
    "tool_response",
    "prompt",
    "error",
    "message",
    "notification_type",
];

/// Reads the host's stdin.
///
/// # Errors
/// Not a JSON object, or no string `hook_event_name` or `session_id`, or a tool event without a
/// string `tool_name`.
pub fn read(protocol: Protocol, text: &str) -> Result<HostCall, String> {
    let value: Value =
        serde_json::from_str(text).map_err(|e| format!("stdin is not a JSON object: {e}"))?;
    let Value::Object(raw) = value else {
        return Err("stdin is not a JSON object".into());
    };
    let string = |key: &str| raw.get(key).and_then(Value::as_str).map(str::to_owned);
    let event_name = string("hook_event_name").ok_or("no string `hook_event_name` on stdin")?;
    let session_id = string("session_id").ok_or("no string `session_id` on stdin")?;
    let event = HostEvent::parse(&event_name);
    let tool = match event {
        Some(e) if e.has_tool() => {
            let name = string("tool_name").ok_or("no string `tool_name` on stdin")?;
            let input = raw.get("tool_input").cloned().unwrap_or(json!({}));
            let mapped = map_tool(&name, &input);
            Some(HostTool {
                name,
                input,
                use_id: string("tool_use_id").unwrap_or_default(),
                mapped,
            })
        }
        _ => None,
    };
    Ok(HostCall {
        protocol,
        event_name,
        event,
        session_id,
        tool,
        raw,
    })
}

/// A host's tool call as the bridge dispatches it, read off the table of Claude Code's tools
/// (paths are copied: the bridge maps without a workspace, as replay does): the runtime's tool
/// and fields; a tool the table does not map as sent; and a call of a tool the table maps
/// whose input does not fit it as sent, with the reason in [`Mapped::not_mapped`] (the bridge
/// denies it: no policy written for the runtime's tool would see it).
pub fn map_tool(name: &str, input: &Value) -> Mapped {
    let (tool_name, tool_input, not_mapped) = match claude_code::to_tollgate(name, input, None) {
        Ok(Some((tool, args))) => (tool.to_owned(), args, None),
        Ok(None) => (name.to_owned(), input.clone(), None),
        Err(why) => (name.to_owned(), input.clone(), Some(why)),
    };
    Mapped {
        tool_name,
        tool_input,
        not_mapped,
    }
}

impl HostCall {
    /// The host's `cwd`, when it sent an absolute one: the root of the host's file paths.
    pub fn cwd(&self) -> Option<&Path> {
        let cwd = self.raw.get("cwd").and_then(Value::as_str).map(Path::new);
        cwd.filter(|cwd| cwd.is_absolute())
    }

    /// What hooks declared in Claude Code's shape see of the host's session: its `cwd` (else
    /// the bridge's working folder, which the hosts set to the session's), `transcript_path`
    /// and `permission_mode`.
    pub fn claude_context(&self) -> ClaudeContext {
        let text = |key: &str| self.raw.get(key).and_then(Value::as_str).map(str::to_owned);
        let mut context = ClaudeContext::default();
        if let Some(cwd) = self.cwd() {
            context.cwd = cwd.to_path_buf();
        }
        context.transcript_path = text("transcript_path").unwrap_or_default();
        if let Some(mode) = text("permission_mode") {
            context.permission_mode = mode;
        }
        context
    }

    /// The tollgate payload of this call (for a bridged event).
    ///
    /// # Errors
    /// The fields do not fit the event (the protocol crate's message).
    pub fn payload(&self, event: HostEvent) -> Result<Payload, String> {
        let host = self.protocol.name();
        let mut metadata: Map<String, Value> = self
            .raw
            .iter()
            .filter(|(k, _)| !MAPPED_KEYS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        metadata.insert("host".into(), json!(host));
        metadata.insert("hook_event_name".into(), json!(self.event_name));
        if let Some(tool) = &self.tool {
            let sent = json!({"tool_name": tool.name, "tool_input": tool.input});
            metadata.insert(SENT_CALL.into(), sent);
        }
        let mut object = Map::new();
        object.insert("event".into(), json!(event.event().to_string()));
        for key in ["session_id", "run_id", "trace_id"] {
            object.insert(key.into(), json!(self.session_id));
        }
        object.insert("agent_id".into(), json!(host));
        object.insert("source".into(), json!(host));
        object.insert("metadata".into(), Value::Object(metadata));
        self.event_fields(event, &mut object);
        let wire = PayloadWire::from_json(Value::Object(object)).map_err(|e| e.to_string())?;
        Payload::try_from(wire).map_err(|e| e.to_string())
    }

    fn event_fields(&self, event: HostEvent, object: &mut Map<String, Value>) {
        if let Some(tool) = &self.tool {
            object.insert("tool_name".into(), json!(tool.mapped.tool_name));
            object.insert("tool_call_id".into(), json!(self.call_id()));
            object.insert("tool_input".into(), tool.mapped.tool_input.clone());
        }
        match event {
            HostEvent::PostToolUse => {
                let result = self.raw.get("tool_response").cloned();
                object.insert("tool_result".into(), result.unwrap_or(Value::Null));
            }
            HostEvent::PostToolUseFailure => {
                let error = match self.raw.get("error") {
                    Some(Value::String(text)) => text.clone(),
                    Some(other) => other.to_string(),
                    None => "the tool failed".into(),
                };
                object.insert("error".into(), json!(error));
            }
            HostEvent::UserPromptSubmit => {
                let prompt = self.raw.get("prompt").and_then(Value::as_str);
                object.insert("prompt".into(), json!(prompt.unwrap_or_default()));
            }
            HostEvent::SessionEnd | HostEvent::Stop => {
                object.insert("status".into(), json!("completed"));
            }
            HostEvent::PermissionRequest => {
                object.insert("reason".into(), json!(""));
            }
            HostEvent::Notification => {
                for key in ["notification_type", "message"] {
                    let text = self.raw.get(key).and_then(Value::as_str);
                    object.insert(key.into(), json!(text.unwrap_or_default()));
                }
            }
            HostEvent::PreToolUse | HostEvent::SessionStart => {}
        }
    }

    /// The call's id: `tool_use_id`; for a prompt, Claude Code's `prompt_id` or Codex's
    /// `turn_id`; else `sha256:` and the hash of the tool input or the prompt, so that two
    /// different calls never share an id (and an approval request).
    pub fn call_id(&self) -> String {
        let from = |key: &str| {
            self.raw
                .get(key)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        };
        from("tool_use_id")
            .or_else(|| from("prompt_id"))
            .or_else(|| from("turn_id"))
            .unwrap_or_else(|| {
                let what = ["tool_input", "prompt"]
                    .iter()
                    .find_map(|key| self.raw.get(*key))
                    .unwrap_or(&Value::Null);
                format!("sha256:{}", tollgate_approval::args_hash(what))
            })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// Claude Code 2.1.332's PreToolUse payload for its shell tool (docs/interop-tests.md).
    const CLAUDE_PRE: &str = r#"{"session_id": "s-1", "transcript_path": "/h/t.jsonl",
        "cwd": "/p", "prompt_id": "p-1", "permission_mode": "default",
        "effort": {"level": "medium"}, "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": "rm -rf build", "description": "clean"},
        "tool_use_id": "toolu_1"}"#;

    /// Codex 0.171.0's.
    const CODEX_PRE: &str = r#"{"session_id": "s-2", "turn_id": "t-1",
        "transcript_path": "/c/r.jsonl", "cwd": "/p", "hook_event_name": "PreToolUse",
        "model": "m", "permission_mode": "bypassPermissions", "tool_name": "Bash",
        "tool_input": {"command": "ls"}, "tool_use_id": "call_1"}"#;

    fn wire(payload: &Payload) -> Value {
        PayloadWire::from(payload).to_json()
    }

    #[test]
    fn a_claude_code_shell_call_becomes_the_runtimes_shell_call() {
        let call = read(Protocol::ClaudeCode, CLAUDE_PRE).unwrap();
        let event = call.event.unwrap();
        let payload = wire(&call.payload(event).unwrap());
        assert_eq!(payload["event"], "pre_tool_use");
        assert_eq!(payload["tool_name"], "bash_code_execute_tool");
        assert_eq!(payload["tool_input"], json!({"command": "rm -rf build"}));
        assert_eq!(payload["tool_call_id"], "toolu_1");
        assert_eq!(payload["session_id"], "s-1");
        assert_eq!(payload["agent_id"], "claude-code");
        // Fields the bridge does not map are kept for hooks that want them.
        assert_eq!(payload["metadata"]["cwd"], "/p");
        assert_eq!(payload["metadata"]["effort"], json!({"level": "medium"}));
        assert_eq!(payload["metadata"]["host"], "claude-code");
        // The call as sent, for hooks in Claude Code's shape.
        assert_eq!(
            payload["metadata"]["claude_code_call"],
            json!({"tool_name": "Bash",
                   "tool_input": {"command": "rm -rf build", "description": "clean"}})
        );
        let context = call.claude_context();
        assert_eq!(
            (context.cwd.to_str(), context.transcript_path.as_str()),
            (Some("/p"), "/h/t.jsonl")
        );
    }

    #[test]
    fn a_codex_shell_call_becomes_the_runtimes_shell_call() {
        let call = read(Protocol::Codex, CODEX_PRE).unwrap();
        let payload = wire(&call.payload(HostEvent::PreToolUse).unwrap());
        assert_eq!(payload["tool_name"], "bash_code_execute_tool");
        assert_eq!(payload["tool_input"], json!({"command": "ls"}));
        assert_eq!(payload["metadata"]["turn_id"], "t-1");
        assert_eq!(payload["agent_id"], "codex");
    }

    #[test]
    fn other_events_map_to_their_tollgate_events() {
        let post = r#"{"session_id": "s", "hook_event_name": "PostToolUse", "tool_name": "Read",
            "tool_input": {"file_path": "/a"}, "tool_response": {"ok": 1}, "tool_use_id": "u"}"#;
        let call = read(Protocol::ClaudeCode, post).unwrap();
        let payload = wire(&call.payload(call.event.unwrap()).unwrap());
        assert_eq!(payload["event"], "post_tool_use");
        assert_eq!(payload["tool_name"], "read_file");
        assert_eq!(payload["tool_result"], json!({"ok": 1}));

        let prompt = r#"{"session_id": "s", "hook_event_name": "UserPromptSubmit",
            "prompt": "hi", "turn_id": "t"}"#;
        let call = read(Protocol::Codex, prompt).unwrap();
        let payload = wire(&call.payload(call.event.unwrap()).unwrap());
        assert_eq!(
            (payload["event"].as_str(), payload["prompt"].as_str()),
            (Some("user_turn"), Some("hi"))
        );
        assert_eq!(call.call_id(), "t");

        let stop = r#"{"session_id": "s", "hook_event_name": "Stop", "stop_hook_active": false}"#;
        let call = read(Protocol::Codex, stop).unwrap();
        let payload = wire(&call.payload(call.event.unwrap()).unwrap());
        assert_eq!(payload["event"], "session_end");
        assert_eq!(payload["status"], "completed");
    }

    #[test]
    fn calls_without_an_id_get_one_from_what_they_ask() {
        let prompt = |text: &str| {
            let raw =
                json!({"session_id": "s", "hook_event_name": "UserPromptSubmit", "prompt": text});
            read(Protocol::ClaudeCode, &raw.to_string())
                .unwrap()
                .call_id()
        };
        assert!(prompt("a").starts_with("sha256:"));
        assert_eq!(prompt("a"), prompt("a"));
        assert_ne!(prompt("a"), prompt("b"));
    }

    #[test]
    fn unknown_events_are_read_but_not_bridged_and_the_ask_events_are() {
        let call = read(
            Protocol::ClaudeCode,
            r#"{"session_id": "s", "hook_event_name": "PreCompact", "trigger": "auto"}"#,
        )
        .unwrap();
        assert_eq!((call.event, call.event_name.as_str()), (None, "PreCompact"));
        let notice = read(
            Protocol::ClaudeCode,
            r#"{"session_id": "s", "hook_event_name": "Notification", "message": "Claude needs your permission to use Bash", "notification_type": "permission_prompt"}"#,
        )
        .unwrap();
        let payload = wire(&notice.payload(HostEvent::Notification).unwrap());
        assert_eq!(payload["event"], "notification");
        assert_eq!(payload["notification_type"], "permission_prompt");
        let asked = read(
            Protocol::ClaudeCode,
            r#"{"session_id": "s", "hook_event_name": "PermissionRequest", "tool_name": "Bash", "tool_input": {"command": "npm test"}, "permission_suggestions": []}"#,
        )
        .unwrap();
        let payload = wire(&asked.payload(HostEvent::PermissionRequest).unwrap());
        assert_eq!(
            (
                &payload["event"],
                &payload["tool_name"],
                &payload["tool_input"]
            ),
            (
                &json!("permission_request"),
                &json!("bash_code_execute_tool"),
                &json!({"command": "npm test"})
            )
        );
    }

    #[test]
    fn stdin_that_is_no_hook_payload_is_an_error() {
        for text in [
            "",
            "[]",
            "{}",
            r#"{"hook_event_name": "PreToolUse"}"#,
            r#"{"hook_event_name": "PreToolUse", "session_id": "s"}"#,
        ] {
            assert!(read(Protocol::ClaudeCode, text).is_err(), "{text}");
        }
    }

    #[test]
    fn a_tool_input_that_does_not_fit_is_kept_as_sent_with_the_field_named() {
        let text = r#"{"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"cmd": "ls"}, "tool_use_id": "u"}"#;
        let call = read(Protocol::ClaudeCode, text).unwrap();
        let tool = call.tool.as_ref().unwrap();
        assert_eq!(tool.mapped.tool_name, "Bash");
        assert!(
            tool.mapped
                .not_mapped
                .as_deref()
                .unwrap()
                .contains("`command`")
        );
        // Only tools the table maps have a shape to miss.
        for (name, input) in [("Glob", json!("*.rs")), ("mcp__db__query", json!([1]))] {
            assert_eq!(map_tool(name, &input).not_mapped, None, "{name}");
        }
        assert!(map_tool("Read", &json!("a")).not_mapped.is_some());
    }
}
