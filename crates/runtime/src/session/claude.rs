//! What a session does for hooks declared in Claude Code's shape: the context they see, the
//! variables their `SessionStart` env files set for the shell tool, and a `Stop` hook that
//! keeps a completed session working (`docs/claude-code.md`).

use std::path::Path;

use serde_json::Value;
use tollgate_core::DispatchOutcome;
use tollgate_handlers::claude::CLAUDE_ENV;
use tollgate_protocol::claude_code::{ClaudeContext, SubAgent};

use super::Services;

/// The context of a session at `depth` working in `workspace`: a sub-agent's hooks are told
/// which one it is.
pub(super) fn context(
    services: &Services,
    workspace: &Path,
    depth: u32,
    session_id: &str,
    agent: &str,
) -> ClaudeContext {
    let cwd = std::fs::canonicalize(workspace)
        .or_else(|_| std::path::absolute(workspace))
        .unwrap_or_else(|_| workspace.to_path_buf());
    ClaudeContext {
        cwd,
        transcript_path: services
            .transcript
            .as_deref()
            .and_then(|p| std::path::absolute(p).ok())
            .map(|p| p.display().to_string())
            .unwrap_or_default(),
        permission_mode: services.permission_mode.clone(),
        agent: (depth > 0).then(|| SubAgent {
            id: session_id.to_owned(),
            agent_type: agent.to_owned(),
        }),
    }
}

/// The variables `SessionStart` hooks set through their env files (a later hook wins).
pub(super) fn session_env(start: &DispatchOutcome) -> Vec<(String, String)> {
    let details = start
        .side_effects
        .iter()
        .filter(|e| e.effect.kind == CLAUDE_ENV)
        .map(|e| &e.effect.detail);
    env_from(details)
}

/// The same, from the `side_effects` of a recorded `session_start` dispatch line.
pub(super) fn recorded_env(side_effects: &[Value]) -> Vec<(String, String)> {
    let details = side_effects
        .iter()
        .filter(|e| e.get("kind").and_then(Value::as_str) == Some(CLAUDE_ENV))
        .filter_map(|e| e.get("detail"));
    env_from(details)
}

fn env_from<'a>(details: impl Iterator<Item = &'a Value>) -> Vec<(String, String)> {
    let mut vars: Vec<(String, String)> = Vec::new();
    for set in details.filter_map(|d| d.get("set").and_then(Value::as_object)) {
        for (name, value) in set {
            let Some(value) = value.as_str() else {
                continue;
            };
            vars.retain(|(n, _)| n != name);
            vars.push((name.clone(), value.to_owned()));
        }
    }
    vars
}
