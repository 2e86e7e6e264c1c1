//! Recorded calls as `pre_tool_use` payloads (`docs/replay.md`, "The payload each hook
//! receives").

use std::sync::Arc;

use serde_json::{Map, Value, json};
use tollgate_protocol::Payload;
use tollgate_protocol::wire::PayloadWire;

use super::mapping::{ToolNames, map_claude};
use super::transcript::{ClaudeCall, LineWarning, Origin, RecordedCall, TraceCall, Transcript};

/// One call, ready to dispatch.
#[derive(Debug)]
pub struct Prepared {
    /// The transcript line it was recorded on.
    pub line: u64,
    /// The model's id for the call.
    pub tool_call_id: String,
    /// The tool name hooks match against.
    pub tool_name: String,
    /// Claude Code's name for the tool, for Claude Code calls.
    pub claude_code_tool: Option<String>,
    /// The arguments hooks receive (a rewrite is measured against these).
    pub tool_input: Value,
    /// Why a Claude Code call was dispatched as recorded instead of mapped.
    pub not_mapped: Option<String>,
    /// The validated payload.
    pub payload: Arc<Payload>,
}

/// The calls that validate as payloads (a Claude Code call the tool mapping cannot translate
/// is kept as recorded, see [`Prepared::not_mapped`]), how many calls were skipped (in reading
/// or here), and a warning for each call skipped here.
pub fn prepare(
    transcript: &Transcript,
    source: &str,
    names: ToolNames,
) -> (Vec<Prepared>, usize, Vec<LineWarning>) {
    let fallback_id = format!("replay-{}", crate::dispatch::generated_id());
    let mut prepared = Vec::with_capacity(transcript.calls.len());
    let mut skipped = transcript.skipped_calls;
    let mut warnings = Vec::new();
    for call in &transcript.calls {
        match prepare_one(call, source, names, &fallback_id) {
            Ok(call) => prepared.push(call),
            Err(message) => {
                skipped += 1;
                warnings.push(LineWarning {
                    line: call.line,
                    message: format!("tool call `{}`: {message}; skipped", call.tool_call_id),
                });
            }
        }
    }
    (prepared, skipped, warnings)
}

/// What a recorded call contributes to its payload besides the common metadata.
struct Parts {
    tool_name: String,
    tool_input: Value,
    claude_code_tool: Option<String>,
    not_mapped: Option<String>,
    /// Session id.
    session: String,
    /// Run and trace id.
    run: String,
    agent: String,
}

fn prepare_one(
    call: &RecordedCall,
    source: &str,
    names: ToolNames,
    fallback_id: &str,
) -> Result<Prepared, String> {
    let mut metadata = Map::new();
    metadata.insert("replay".into(), Value::Bool(true));
    metadata.insert("transcript".into(), json!(source));
    metadata.insert("line".into(), json!(call.line));
    let parts = match &call.origin {
        Origin::ClaudeCode(claude) => claude_parts(claude, names, fallback_id, &mut metadata),
        Origin::Trace(trace) => trace_parts(trace, fallback_id, &mut metadata),
    };
    let wire = json!({
        "event": "pre_tool_use",
        "session_id": parts.session,
        "run_id": parts.run,
        "trace_id": parts.run,
        "agent_id": parts.agent,
        "source": "replay",
        "metadata": metadata,
        "tool_name": parts.tool_name,
        "tool_call_id": call.tool_call_id,
        "tool_input": parts.tool_input,
    });
    let payload = PayloadWire::from_json(wire)
        .and_then(Payload::try_from)
        .map_err(|e| e.to_string())?;
    Ok(Prepared {
        line: call.line,
        tool_call_id: call.tool_call_id.clone(),
        tool_name: parts.tool_name,
        claude_code_tool: parts.claude_code_tool,
        tool_input: parts.tool_input,
        not_mapped: parts.not_mapped,
        payload: Arc::new(payload),
    })
}

fn claude_parts(
    call: &ClaudeCall,
    names: ToolNames,
    fallback_id: &str,
    metadata: &mut Map<String, Value>,
) -> Parts {
    let ClaudeCall {
        name,
        input,
        session_id,
        agent_id,
        cwd,
        is_sidechain,
    } = call;
    let mapped = map_claude(name, input, names);
    metadata.insert("format".into(), json!("claude_code"));
    metadata.insert("claude_code_tool".into(), json!(name));
    if let Some(why) = &mapped.not_mapped {
        metadata.insert("not_mapped".into(), json!(why));
    }
    let original = Value::Object(input.clone());
    if mapped.tool_input != original {
        metadata.insert("claude_code_input".into(), original);
    }
    if let Some(cwd) = cwd {
        metadata.insert("cwd".into(), json!(cwd));
    }
    metadata.insert("is_sidechain".into(), json!(is_sidechain));
    Parts {
        tool_name: mapped.tool_name,
        tool_input: mapped.tool_input,
        claude_code_tool: Some(name.clone()),
        not_mapped: mapped.not_mapped,
        session: session_id.as_deref().unwrap_or(fallback_id).to_owned(),
        run: session_id.as_deref().unwrap_or(fallback_id).to_owned(),
        agent: agent_id.as_deref().unwrap_or("claude-code").to_owned(),
    }
}

fn trace_parts(call: &TraceCall, fallback_id: &str, metadata: &mut Map<String, Value>) -> Parts {
    let TraceCall {
        tool_name,
        arguments,
        run_id,
        session_id,
        metadata: recorded,
        agent,
        depth,
        seq,
    } = call;
    // The session's own metadata as recorded (`org_id`, …) under the replay's keys.
    for (key, value) in recorded {
        metadata.entry(key.clone()).or_insert_with(|| value.clone());
    }
    metadata.insert("format".into(), json!("tollgate_trace"));
    metadata.insert("seq".into(), json!(seq));
    metadata.insert("depth".into(), json!(depth));
    Parts {
        tool_name: tool_name.clone(),
        tool_input: Value::Object(arguments.clone()),
        claude_code_tool: None,
        not_mapped: None,
        session: session_id
            .as_deref()
            .or(run_id.as_deref())
            .unwrap_or(fallback_id)
            .to_owned(),
        run: run_id.as_deref().unwrap_or(fallback_id).to_owned(),
        agent: agent.as_deref().unwrap_or("replay").to_owned(),
    }
}
