//! What a session does for hooks declared in Claude Code's shape: the context they see, the
//! variables their `SessionStart` env files set for the shell tool, and a `Stop` hook that
//! keeps a completed session working (`docs/claude-code.md`).

use std::path::Path;

use serde_json::Value;
use tollgate_core::DispatchOutcome;
use tollgate_handlers::claude::{CLAUDE_ENV, END_SESSION, KEEP_WORKING, env};
use tollgate_protocol::claude_code::{ClaudeContext, SubAgent};

use serde_json::json;
use tollgate_protocol::{SessionEnd, SessionEndStatus};

use super::{About, Ending, Services, Session};
use crate::model::{Message, Role};
use crate::trace::Step;

/// How many times in a row hooks may keep a completed session going, as Claude Code caps
/// consecutive `Stop` blocks; then the session ends as it would have.
pub const MAX_KEEP_WORKING: u32 = 8;

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
            // Any hook may report this side effect: only what an env file could set applies.
            let Some(value) = value.as_str().filter(|v| env::settable(name, v)) else {
                continue;
            };
            vars.retain(|(n, _)| n != name);
            vars.push((name.clone(), value.to_owned()));
        }
    }
    vars
}

/// Why a hook keeps a completed session working (its `keep_working` side effect), if one
/// does.
pub(super) fn keep_working(end: &DispatchOutcome) -> Option<String> {
    end.side_effects
        .iter()
        .find(|e| e.effect.kind == KEEP_WORKING)
        .map(|e| {
            e.effect
                .detail
                .get("reason")
                .and_then(Value::as_str)
                .unwrap_or("a hook asked to keep working")
                .to_owned()
        })
}

/// Why a hook ends the session after this event (its `end_session` side effect: Claude Code's
/// `continue: false`), if one does.
pub(super) fn end_session(outcome: &DispatchOutcome) -> Option<String> {
    outcome
        .side_effects
        .iter()
        .find(|e| e.effect.kind == END_SESSION)
        .map(|e| {
            e.effect
                .detail
                .get("reason")
                .and_then(Value::as_str)
                .unwrap_or("a hook ended the session")
                .to_owned()
        })
}

/// What the model reads when a hook keeps the session working: the hook's reason, as the next
/// user message.
pub(super) fn feedback(reason: &str) -> Message {
    Message::text(Role::User, format!("[hook feedback] {reason}"))
}

impl Session<'_> {
    /// `session_end` for a session whose model answered without tool calls. Returns the
    /// reason to go on when a hook keeps it working (Claude Code's `Stop` block) or, once the
    /// `asyncRewake` hooks still running have ended, when one of them blocked (Claude Code
    /// wakes its model then); at most [`MAX_KEEP_WORKING`] times in a row. `None` when the
    /// session ends (this was its `session_end`).
    pub(super) async fn completed(&self, ending: &Ending) -> Option<String> {
        let continued = self.kept.load(std::sync::atomic::Ordering::Relaxed);
        let end = SessionEnd {
            status: SessionEndStatus::Completed,
            error: None,
            answer: ending.answer.clone(),
            continued,
        };
        let outcome = self.emit(end, About::Session).await;
        if self.ended_by_hook.get().is_some() {
            // `continue: false` wins over every hook's block, as in Claude Code.
            return None;
        }
        let reason = match keep_working(&outcome) {
            Some(reason) => reason,
            None => self.woken().await?,
        };
        if continued >= MAX_KEEP_WORKING {
            let why = format!(
                "a hook asked to keep working {} times in a row; the session ends (\"{reason}\" \
                 is not followed)",
                continued + 1
            );
            self.trace
                .emit(super::warning_step(&self.def.path, "hooks.Stop", &why));
            return None;
        }
        self.kept
            .store(continued + 1, std::sync::atomic::Ordering::Relaxed);
        self.trace.emit(Step::new(
            "keep_working",
            json!({"reason": reason, "continued": continued + 1}),
        ));
        Some(reason)
    }

    /// What the `asyncRewake` hooks still running say once they ended: the context they left,
    /// when one of them blocked; `None` when none did, or when the session is cancelled first.
    async fn woken(&self) -> Option<String> {
        let idle = self.dispatcher.awaited_idle();
        let mut idle = std::pin::pin!(idle);
        let done =
            std::future::poll_fn(|cx| std::task::Poll::Ready(idle.as_mut().poll(cx).is_ready()))
                .await;
        if !done {
            // Said, so a run that waits up to the hooks' deadlines does not look stuck.
            self.trace.emit(Step::new(
                "waiting_for_hooks",
                json!({"why": "asyncRewake hooks still run; one may wake the session"}),
            ));
            tokio::select! {
                () = idle => {}
                () = self.cancel.cancelled() => return None,
            }
        }
        self.deferred.take_wake().map(|context| context.join("\n"))
    }
}
