//! The payload of a hook written for Claude Code, built from tollgate's, and back.
//!
//! Every payload has `session_id`, `transcript_path`, `cwd`, `permission_mode` and
//! `hook_event_name`, plus `agent_id` and `agent_type` when the hook runs inside a delegated
//! sub-agent; then the event's own fields (`docs/claude-code.md` has the table).

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::tools::{SENT_CALL, claude_call, response_to_claude, to_claude, to_tollgate};
use crate::error::{ProtocolError, Result};
use crate::event::Event;
use crate::payload::{
    EventData, Notification, Payload, PayloadCommon, PermissionRequest, SessionEnd,
    SessionEndStatus, SubagentEnding, SubagentStart, SubagentStatus, SubagentStop, ToolCall,
    ToolFailure, ToolResult, UserTurn,
};

/// What a Claude Code payload says that a tollgate payload does not: where the session works,
/// its transcript and permission mode, and which sub-agent it is.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaudeContext {
    /// `cwd`: the workspace. File paths in `tool_input` are absolute under it.
    pub cwd: PathBuf,
    /// `transcript_path`: the run's trace file (JSON Lines), or empty when the run writes none.
    pub transcript_path: String,
    /// `permission_mode`: `default`, or `dontAsk` when asks are denied at once.
    pub permission_mode: String,
    /// The sub-agent the hook runs in, when it runs in one.
    pub agent: Option<SubAgent>,
}

impl Default for ClaudeContext {
    fn default() -> Self {
        Self {
            cwd: std::env::current_dir().unwrap_or_default(),
            transcript_path: String::new(),
            permission_mode: "default".to_owned(),
            agent: None,
        }
    }
}

/// A delegated sub-agent, as Claude Code names it in payloads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubAgent {
    /// `agent_id`: this delegation's id.
    pub id: String,
    /// `agent_type`: the agent's name.
    pub agent_type: String,
}

/// Claude Code's `hook_event_name` for a hook declared under `declared` (the key in its file)
/// for `event`: the key itself when it is one of Claude Code's event names, otherwise Claude
/// Code's name of the event (`post_tool_use_cancelled` is a `PostToolUseFailure` with
/// `is_interrupt: true`; events Claude Code lacks get their name in PascalCase, a custom event
/// its own name).
pub fn hook_event_name(event: &Event, declared: &str) -> String {
    const CLAUDE: [&str; 11] = [
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "SessionStart",
        "SessionEnd",
        "Stop",
        "UserPromptSubmit",
        "SubagentStart",
        "SubagentStop",
        "PermissionRequest",
        "Notification",
    ];
    if CLAUDE.contains(&declared) && declared.parse::<Event>().ok().as_ref() == Some(event) {
        return declared.to_owned();
    }
    match event {
        Event::PreToolUse => "PreToolUse",
        Event::PostToolUse => "PostToolUse",
        Event::PostToolUseFailure | Event::PostToolUseCancelled => "PostToolUseFailure",
        Event::SessionStart => "SessionStart",
        Event::SessionEnd => "SessionEnd",
        Event::UserTurn => "UserPromptSubmit",
        Event::SubagentStart => "SubagentStart",
        Event::SubagentStop | Event::SubagentCancel => "SubagentStop",
        Event::ApprovalCorrection => "ApprovalCorrection",
        Event::PermissionRequest => "PermissionRequest",
        Event::Notification => "Notification",
        Event::Custom(custom) => custom.name(),
    }
    .to_owned()
}

/// The Claude Code payload of `payload` for a hook whose `hook_event_name` is `event_name`
/// (see [`hook_event_name`]). A tool call's `tool_name` and `tool_input` are
/// [`claude_call`](super::claude_call)'s: the call as Claude Code sent it when the payload's
/// metadata holds it, else the call in Claude Code's names.
pub fn to_claude_payload(payload: &Payload, event_name: &str, ctx: &ClaudeContext) -> Value {
    let mut out = Map::new();
    out.insert("session_id".into(), json!(payload.common.session_id));
    out.insert("transcript_path".into(), json!(ctx.transcript_path));
    out.insert("cwd".into(), json!(ctx.cwd.display().to_string()));
    out.insert("permission_mode".into(), json!(ctx.permission_mode));
    out.insert("hook_event_name".into(), json!(event_name));
    if let Some(agent) = &ctx.agent {
        out.insert("agent_id".into(), json!(agent.id));
        out.insert("agent_type".into(), json!(agent.agent_type));
    }
    event_fields(
        &payload.data,
        &payload.common.metadata,
        event_name,
        ctx,
        &mut out,
    );
    Value::Object(out)
}

fn event_fields(
    data: &EventData,
    metadata: &Map<String, Value>,
    event_name: &str,
    ctx: &ClaudeContext,
    out: &mut Map<String, Value>,
) {
    let root = Some(ctx.cwd.as_path());
    let call = |call: &ToolCall, out: &mut Map<String, Value>| {
        let (name, input) = claude_call(call, metadata, root);
        out.insert("tool_name".into(), json!(name));
        out.insert("tool_input".into(), input);
        out.insert("tool_use_id".into(), json!(call.tool_call_id));
    };
    match data {
        EventData::SessionStart => {
            out.insert("source".into(), json!("startup"));
        }
        EventData::SessionEnd(end) if event_name == "Stop" => {
            out.insert("stop_hook_active".into(), json!(end.continued > 0));
            out.insert(
                "last_assistant_message".into(),
                json!(end.answer.clone().unwrap_or_default()),
            );
        }
        EventData::SessionEnd(_) => {
            out.insert("reason".into(), json!("other"));
        }
        EventData::UserTurn(turn) => {
            out.insert("prompt".into(), json!(turn.prompt));
        }
        EventData::PreToolUse(c) => call(c, out),
        EventData::PostToolUse(done) => {
            call(&done.call, out);
            let response = response_to_claude(
                &done.call.tool_name,
                &done.call.tool_input,
                &done.tool_result,
                root,
            );
            out.insert("tool_response".into(), response);
        }
        EventData::PostToolUseFailure(failed) => {
            call(&failed.call, out);
            out.insert("error".into(), json!(failed.error));
            out.insert("is_interrupt".into(), json!(false));
        }
        EventData::PostToolUseCancelled(cancelled) => {
            call(&cancelled.call, out);
            out.insert(
                "error".into(),
                json!(
                    cancelled
                        .reason
                        .clone()
                        .unwrap_or_else(|| "cancelled".into())
                ),
            );
            out.insert("is_interrupt".into(), json!(true));
        }
        EventData::SubagentStart(start) => {
            out.insert("agent_id".into(), json!(start.task_id));
            out.insert("agent_type".into(), json!(start.agent_type));
        }
        EventData::SubagentStop(stop) => {
            let last = match &stop.ending {
                SubagentEnding::Result(Value::String(text)) => text.clone(),
                SubagentEnding::Result(other) => other.to_string(),
                SubagentEnding::Error(_) | SubagentEnding::Pending => String::new(),
            };
            subagent_stop(out, &stop.task_id, &stop.agent_type, last, ctx);
            out.insert("stop_hook_active".into(), json!(stop.continued > 0));
        }
        EventData::SubagentCancel(cancel) => {
            subagent_stop(out, &cancel.task_id, &cancel.agent_type, String::new(), ctx);
            out.insert("stop_hook_active".into(), json!(false));
        }
        EventData::ApprovalCorrection(correction) => {
            call(&correction.call, out);
            let (_, corrected) = to_claude(
                &correction.call.tool_name,
                &correction.corrected_input,
                root,
            );
            out.insert("corrected_input".into(), corrected);
            out.insert("corrected_by".into(), json!(correction.corrected_by));
        }
        EventData::PermissionRequest(request) => {
            // Claude Code's payload names the tool and its input, not the call's id.
            let (name, input) = claude_call(&request.call, metadata, root);
            out.insert("tool_name".into(), json!(name));
            out.insert("tool_input".into(), input);
            out.insert("permission_suggestions".into(), json!([]));
        }
        EventData::Notification(notice) => {
            // A permission prompt in Claude Code's words, with its name of the tool.
            let message = match &notice.tool_name {
                Some(tool) if notice.notification_type == "permission_prompt" => {
                    let (name, _) = to_claude(tool, &Value::Null, root);
                    format!("Claude needs your permission to use {name}")
                }
                _ => notice.message.clone(),
            };
            out.insert("message".into(), json!(message));
            out.insert("notification_type".into(), json!(notice.notification_type));
        }
        EventData::Custom(_, fields) => {
            for (key, value) in fields {
                out.entry(key.clone()).or_insert_with(|| value.clone());
            }
        }
    }
}

fn subagent_stop(
    out: &mut Map<String, Value>,
    id: &str,
    agent_type: &str,
    last: String,
    ctx: &ClaudeContext,
) {
    out.insert("agent_id".into(), json!(id));
    out.insert("agent_type".into(), json!(agent_type));
    out.insert("agent_transcript_path".into(), json!(ctx.transcript_path));
    out.insert("last_assistant_message".into(), json!(last));
}

/// Reads a payload Claude Code wrote (a hook's stdin, as it is) into tollgate's payload and the
/// context it carries. `hook_event_name` picks the event (`Stop` is `session_end`); tool calls
/// are mapped to the runtime's tools with `cwd` as the root of file paths, and the call as sent
/// is kept in `metadata` under [`SENT_CALL`] (hooks declared in Claude Code's shape see it as
/// sent, see [`claude_call`](super::claude_call)); a tool the table does not map keeps Claude
/// Code's name and input; other fields tollgate has no place for are ignored.
///
/// # Errors
/// [`ProtocolError::InvalidWire`] when `value` is not an object, `hook_event_name` is missing
/// or names an event tollgate does not have (`PreCompact`, `CwdChanged`, …), or a field the
/// event needs is missing or of the wrong type; [`ProtocolError::UnfitToolInput`] when the
/// input of a tool the table maps does not fit it (`Bash` with a `timeout` of `-1`): passed on
/// unmapped, the call would escape every policy written for the runtime's tool.
pub fn from_claude_payload(value: Value) -> Result<(Payload, ClaudeContext)> {
    let Value::Object(object) = value else {
        return Err(ProtocolError::payload("expected a JSON object"));
    };
    let text = |key: &str| object.get(key).and_then(Value::as_str).map(str::to_owned);
    let required = |key: &str| {
        text(key).ok_or_else(|| ProtocolError::payload(format!("missing string field `{key}`")))
    };
    let event: Event = required("hook_event_name")?.parse()?;
    let ctx = ClaudeContext {
        cwd: text("cwd").map(PathBuf::from).unwrap_or_default(),
        transcript_path: text("transcript_path").unwrap_or_default(),
        permission_mode: text("permission_mode").unwrap_or_else(|| "default".into()),
        agent: None,
    };
    let session = text("session_id").unwrap_or_default();
    let common = PayloadCommon {
        session_id: session.clone(),
        run_id: session.clone(),
        trace_id: session,
        agent_id: text("agent_type").unwrap_or_else(|| "claude-code".into()),
        source: Some("claude-code".into()),
        metadata: Map::new(),
    };
    let root = (!ctx.cwd.as_os_str().is_empty()).then_some(ctx.cwd.as_path());
    let call = || -> Result<ToolCall> {
        let name = required("tool_name")?;
        let input = object.get("tool_input").cloned().unwrap_or(json!({}));
        let (tool_name, tool_input) = match to_tollgate(&name, &input, root) {
            Ok(Some((ours, mapped))) => (ours.to_owned(), mapped),
            Ok(None) => (name, input),
            Err(why) => return Err(ProtocolError::UnfitToolInput(why)),
        };
        Ok(ToolCall {
            tool_name,
            tool_call_id: text("tool_use_id").unwrap_or_default(),
            tool_input,
        })
    };
    let sent_call = object.get("tool_name").map(|name| {
        let input = object.get("tool_input").cloned().unwrap_or(json!({}));
        (
            SENT_CALL.to_owned(),
            json!({"tool_name": name, "tool_input": input}),
        )
    });
    let data = match event {
        Event::SessionStart => EventData::SessionStart,
        Event::SessionEnd => EventData::SessionEnd(SessionEnd {
            status: SessionEndStatus::Completed,
            error: None,
            answer: text("last_assistant_message"),
            continued: u32::from(object.get("stop_hook_active") == Some(&Value::Bool(true))),
        }),
        Event::UserTurn => EventData::UserTurn(UserTurn {
            prompt: required("prompt")?,
        }),
        Event::PreToolUse => EventData::PreToolUse(call()?),
        Event::PostToolUse => EventData::PostToolUse(ToolResult {
            call: call()?,
            tool_result: object.get("tool_response").cloned().unwrap_or(Value::Null),
        }),
        Event::PostToolUseFailure => EventData::PostToolUseFailure(ToolFailure {
            call: call()?,
            error: text("error").unwrap_or_default(),
        }),
        Event::SubagentStart => EventData::SubagentStart(SubagentStart {
            task_id: text("agent_id").unwrap_or_default(),
            agent_type: text("agent_type").unwrap_or_default(),
            task_description: text("prompt").unwrap_or_default(),
        }),
        Event::SubagentStop => EventData::SubagentStop(SubagentStop {
            task_id: text("agent_id").unwrap_or_default(),
            agent_type: text("agent_type").unwrap_or_default(),
            status: SubagentStatus::Completed,
            duration: Duration::ZERO,
            ending: text("last_assistant_message").map_or(SubagentEnding::Pending, |t| {
                SubagentEnding::Result(json!(t))
            }),
            continued: u32::from(object.get("stop_hook_active") == Some(&Value::Bool(true))),
        }),
        Event::PermissionRequest => EventData::PermissionRequest(PermissionRequest {
            call: call()?,
            reason: String::new(),
        }),
        Event::Notification => EventData::Notification(Notification {
            notification_type: text("notification_type").unwrap_or_default(),
            message: required("message")?,
            tool_name: None,
            request_id: None,
        }),
        other => {
            return Err(ProtocolError::payload(format!(
                "Claude Code has no payload for `{other}`"
            )));
        }
    };
    let mut payload = Payload::new(common, data);
    if payload.tool_call().is_some() {
        payload.common.metadata.extend(sent_call);
    }
    Ok((payload, ctx))
}
