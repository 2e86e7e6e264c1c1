//! Delegation: `call_agent` starts a sub-agent with its own registry; `subagent_start`,
//! `subagent_stop` and `subagent_cancel` go through the caller's hooks (the parent module has
//! the rules and timeouts).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::time::Instant;
use tollgate_protocol::{
    Decision, SubagentCancel, SubagentEnding, SubagentStart, SubagentStatus, SubagentStop, ToolCall,
};

use tollgate_core::DispatchOutcome;

use super::claude::{self, MAX_KEEP_WORKING};
use super::{About, EndStatus, Ending, FORCE_STOP_GRACE, MAX_DEPTH, Session, SessionSetup, new_id};
use crate::agent::AgentDef;
use crate::gate::Approval;
use crate::model::ToolSpec;
use crate::tools::{CALL_AGENT_TOOL, ToolError, string_arg};
use crate::trace::{Origin, Step};

impl Session<'_> {
    pub(super) async fn delegate(&self, call: &ToolCall) -> Result<Value, ToolError> {
        let mut taken = None;
        let result = self.delegate_taking(call, &mut taken).await;
        // An approved delegation was taken (consumed) before the child started: record its end.
        if let Some(approval) = &taken {
            self.services.approver.finish(approval).await;
        }
        result
    }

    /// [`Session::delegate`]; `taken` gets the approval of a `subagent_start` ask once it was
    /// taken to start the child.
    async fn delegate_taking(
        &self,
        call: &ToolCall,
        taken: &mut Option<Approval>,
    ) -> Result<Value, ToolError> {
        let agent = string_arg(&call.tool_input, "agent")?.to_owned();
        let task = string_arg(&call.tool_input, "task")?.to_owned();
        let Some(sub) = self.def.subagents.get(&agent) else {
            let known: Vec<&str> = self.def.subagents.keys().map(String::as_str).collect();
            return Err(ToolError::new(format!(
                "no sub-agent `{agent}`; known: {}",
                known.join(", ")
            )));
        };
        if self.depth + 1 > MAX_DEPTH {
            return Err(ToolError::new(format!(
                "delegation deeper than {MAX_DEPTH} levels is refused"
            )));
        }
        let n = self.tasks.fetch_add(1, Ordering::Relaxed) + 1;
        let task_id = format!("{}-task-{n}", self.common.session_id);
        let about = About::Task(&call.tool_call_id, &task_id);
        self.trace.emit(Step::new(
            "subagent_start",
            json!({"task_id": task_id, "agent_type": agent, "task_description": task}),
        ));
        let start = SubagentStart {
            task_id: task_id.clone(),
            agent_type: agent.clone(),
            task_description: task.clone(),
        };
        let started = self.emit(start, about).await;
        let begun = Instant::now();
        let stop = |status: SubagentStatus, ending: SubagentEnding| SubagentStop {
            task_id: task_id.clone(),
            agent_type: agent.clone(),
            status,
            duration: begun.elapsed(),
            ending,
            continued: 0,
        };
        let (refusal, approval) = match &started.decision {
            Decision::Allow => (None, None),
            Decision::Deny { reason } => {
                (Some(format!("the delegation was denied: {reason}")), None)
            }
            Decision::Ask { .. } => match self.admit_delegation(call, &started).await {
                Ok(approval) => (None, Some(approval)),
                Err(why) => (Some(why), None),
            },
        };
        let refusal = refusal.or_else(|| {
            self.cancel.is_cancelled().then(|| {
                format!(
                    "cancelled: {} before the sub-agent started",
                    self.cancel_cause()
                )
            })
        });
        // An approval is taken once, right before the child starts (a resumed run does not
        // start it again).
        let refusal = match refusal {
            Some(why) => Some(why),
            None => self.take(approval.as_ref(), call).await,
        };
        if refusal.is_none() {
            *taken = approval;
        }
        if let Some(why) = refusal {
            self.stop_subagent(
                stop(
                    SubagentStatus::Cancelled,
                    SubagentEnding::Error(why.clone()),
                ),
                about,
            )
            .await;
            return Err(ToolError::new(why));
        }
        let file = self.def.subagent_file(&agent).unwrap_or_default();
        let child_def = match AgentDef::load(&file) {
            Ok(def) => Arc::new(def),
            Err(e) => {
                let why = format!("sub-agent `{agent}` cannot be loaded: {e}");
                self.stop_subagent(
                    stop(SubagentStatus::Failed, SubagentEnding::Error(why.clone())),
                    about,
                )
                .await;
                return Err(ToolError::new(why));
            }
        };
        let timeout = Duration::from_secs(sub.timeout_seconds);
        let child_cancel = self.cancel.child_token();
        let cause: Arc<OnceLock<String>> = Arc::default();
        let workspace = child_def
            .workspace
            .clone()
            .unwrap_or_else(|| self.env.workspace.clone());
        let setup = SessionSetup {
            model: None,
            workspace,
            skills: Vec::new(),
            trace: self.trace.with_origin(Origin {
                run_id: self.common.run_id.clone(),
                session_id: new_id("session"),
                agent: child_def.name.clone(),
                depth: self.depth + 1,
            }),
            def: child_def,
            depth: self.depth + 1,
            scope: format!(
                "{}t{}/{}/",
                self.scope,
                self.turn.load(Ordering::Relaxed),
                call.tool_call_id
            ),
            cancel: child_cancel.clone(),
            soft_deadline: Some(begun + timeout),
            cancel_cause: Arc::clone(&cause),
            resumed: false,
        };
        let child = match Session::prepare(self.services, setup).await {
            Ok(child) => child,
            Err((trace, why)) => {
                trace.emit(Step::new(
                    "session_end",
                    json!({"status": "failed", "turns": 0, "error": why}),
                ));
                let why = format!("sub-agent `{agent}` cannot start: {why}");
                self.stop_subagent(
                    stop(SubagentStatus::Failed, SubagentEnding::Error(why.clone())),
                    about,
                )
                .await;
                return Err(ToolError::new(why));
            }
        };
        let hard = timeout.saturating_mul(3);
        let continued = AtomicU32::new(0);
        let mut body = Box::pin(self.supervise(&child, &task, &stop, &continued, about));
        let (ending, sent) = match tokio::time::timeout(hard, &mut body).await {
            Ok(ended) => ended,
            Err(_) => {
                // Force-stop: cancel the sub-agent so its running tool is killed and its
                // `post_tool_use_cancelled` still fires; if it does not wind down within the
                // grace, drop it where it stands.
                let _ = cause.set(format!(
                    "this sub-agent was force-stopped after {} s (3 × timeout_seconds)",
                    hard.as_secs()
                ));
                child_cancel.cancel();
                let ending = tokio::time::timeout(FORCE_STOP_GRACE, &mut body).await;
                match ending {
                    // It had answered; only the caller's stop hooks were running: the answer
                    // stands, and `subagent_stop` comes after it ended, as for any.
                    Ok((ended, sent)) if ended.status == EndStatus::Completed => (ended, sent),
                    ending => {
                        let turns = ending.as_ref().map_or(0, |(e, _)| e.turns);
                        let sent = ending.map_or(StopSent::No, |(_, sent)| sent);
                        let why = format!(
                            "timed_out: sub-agent `{agent}` was force-stopped after {} s (3 × timeout_seconds {})",
                            hard.as_secs(),
                            timeout.as_secs()
                        );
                        let ending = Ending {
                            error: Some(why),
                            ..Ending::new(EndStatus::Cancelled, turns)
                        };
                        (ending, sent)
                    }
                }
            }
        };
        drop(body);
        child.end(&ending).await;
        drop(child);
        let (status, outcome) = match ending.status {
            EndStatus::Completed => {
                let answer = ending.answer.unwrap_or_default();
                (SubagentStatus::Completed, Ok(Value::String(answer)))
            }
            EndStatus::TimedOut => (
                SubagentStatus::TimedOut,
                Err(format!(
                    "timed_out: sub-agent `{agent}` ran past {} s and stopped",
                    timeout.as_secs()
                )),
            ),
            EndStatus::Cancelled => {
                let why = ending
                    .error
                    .unwrap_or_else(|| "cancelled: the run was cancelled".to_owned());
                (SubagentStatus::Cancelled, Err(why))
            }
            EndStatus::Failed | EndStatus::TurnLimit => {
                let why = ending
                    .error
                    .unwrap_or_else(|| ending.status.as_str().to_owned());
                (
                    SubagentStatus::Failed,
                    Err(format!("sub-agent `{agent}` failed: {why}")),
                )
            }
        };
        if status == SubagentStatus::Cancelled {
            let why = outcome.as_ref().err().cloned().unwrap_or_default();
            self.cancel_subagent(&task_id, &agent, &why, about).await;
        }
        let ending = match &outcome {
            Ok(answer) => SubagentEnding::Result(answer.clone()),
            Err(why) => SubagentEnding::Error(why.clone()),
        };
        let raced = match sent {
            StopSent::Yes => false,
            StopSent::Raced => true,
            StopSent::No => {
                let last = SubagentStop {
                    continued: continued.load(Ordering::Relaxed),
                    ..stop(status, ending)
                };
                self.stop_subagent(last, about).await.is_none()
            }
        };
        if raced && outcome.is_ok() {
            // Its last `subagent_stop` says `cancelled`: so does the call.
            let why = "cancelled: the run was cancelled while the sub-agent's stop hooks ran";
            return Err(ToolError::new(why));
        }
        outcome.map_err(ToolError::new)
    }

    /// The sub-agent's run, from its task to its last turn. Each time it completes, the
    /// caller's `subagent_stop` hooks hear it first: a block (Claude Code's SubagentStop
    /// `decision: block`) keeps it working, the reason its next user message, at most
    /// [`MAX_KEEP_WORKING`] times in a row (`continued` counts them). Otherwise that dispatch
    /// was the delegation's `subagent_stop`, as the second value says. A force-stop (the
    /// sub-agent's cancel without the caller's) drops the stop hooks it interrupts: the
    /// delegation's `subagent_stop` then says `cancelled`.
    async fn supervise(
        &self,
        child: &Session<'_>,
        task: &str,
        stop: &(dyn Fn(SubagentStatus, SubagentEnding) -> SubagentStop + Sync),
        continued: &AtomicU32,
        about: About<'_>,
    ) -> (Ending, StopSent) {
        let mut ending = child.run_body(task).await;
        let force_stopped = async {
            child.cancel.cancelled().await;
            if self.cancel.is_cancelled() {
                // The caller's own cancel: `stop_subagent` races it and records the stop.
                std::future::pending::<()>().await;
            }
        };
        let mut force_stopped = std::pin::pin!(force_stopped);
        loop {
            let Some(mut conversation) = ending.conversation.take() else {
                return (ending, StopSent::No);
            };
            let answer = Value::String(ending.answer.clone().unwrap_or_default());
            let kept = continued.load(Ordering::Relaxed);
            let stopping = SubagentStop {
                continued: kept,
                ..stop(SubagentStatus::Completed, SubagentEnding::Result(answer))
            };
            let task_id = stopping.task_id.clone();
            let heard = tokio::select! {
                heard = self.stop_subagent(stopping, about) => heard,
                () = &mut force_stopped => return (ending, StopSent::No),
            };
            let Some(heard) = heard else {
                return (ending, StopSent::Raced);
            };
            let Some(reason) = claude::keep_working(&heard) else {
                return (ending, StopSent::Yes);
            };
            if child.stopping().is_some() {
                // Past its time (or cancelled): it cannot go on, and ends as it must.
                ending = child.react(conversation, ending.turns).await;
                continue;
            }
            if kept >= MAX_KEEP_WORKING {
                let why = format!(
                    "a hook asked sub-agent `{}` to keep working {} times in a row; it stops \
                     (\"{reason}\" is not followed)",
                    child.def.name,
                    kept + 1
                );
                let entry = "hooks.SubagentStop";
                self.trace
                    .emit(super::warning_step(&self.def.path, entry, &why));
                return (ending, StopSent::Yes);
            }
            continued.store(kept + 1, Ordering::Relaxed);
            self.trace.emit(Step::new(
                "keep_working",
                json!({"task_id": task_id, "reason": reason, "continued": kept + 1}),
            ));
            conversation.push(claude::feedback(&reason));
            ending = child.react(conversation, ending.turns).await;
        }
    }

    async fn cancel_subagent(&self, task_id: &str, agent: &str, why: &str, about: About<'_>) {
        let cancel = SubagentCancel {
            task_id: task_id.to_owned(),
            agent_type: agent.to_owned(),
            reason: Some(why.to_owned()),
        };
        self.emit(cancel, about).await;
    }

    /// Records and dispatches `subagent_stop`; returns what its hooks said. A cancel arriving
    /// while its hooks run wins: a second `subagent_stop` says `cancelled` (the last one per
    /// task id counts), and nothing is returned.
    async fn stop_subagent(&self, stop: SubagentStop, about: About<'_>) -> Option<DispatchOutcome> {
        let (task_id, agent) = (stop.task_id.clone(), stop.agent_type.clone());
        let duration = stop.duration;
        self.trace.emit(subagent_stop_step(&stop));
        // A cancel that arrived before the stop is part of this stop; only one that arrives
        // while the stop hooks run races them.
        let heard = if self.cancel.is_cancelled() {
            Some(self.emit(stop, about).await)
        } else {
            tokio::select! {
                heard = self.emit(stop, about) => Some(heard),
                () = self.cancel.cancelled() => None,
            }
        };
        if heard.is_none() {
            let why = "the run was cancelled while the sub-agent's stop hooks ran";
            self.cancel_subagent(&task_id, &agent, why, about).await;
            let last = SubagentStop {
                task_id,
                agent_type: agent,
                status: SubagentStatus::Cancelled,
                duration,
                ending: SubagentEnding::Error(why.into()),
                continued: 0,
            };
            self.trace.emit(subagent_stop_step(&last));
            self.emit(last, about).await;
        }
        heard
    }
}

/// Whether a delegation's `subagent_stop` was dispatched while the sub-agent was supervised.
#[derive(Clone, Copy)]
enum StopSent {
    /// Not yet: it is dispatched once the sub-agent ended.
    No,
    /// Yes, and it let the sub-agent end.
    Yes,
    /// Yes, but a cancel raced its hooks: a `cancelled` one followed.
    Raced,
}

fn subagent_stop_step(stop: &SubagentStop) -> Step {
    let mut fields = json!({
        "task_id": stop.task_id,
        "agent_type": stop.agent_type,
        "status": stop.status.as_str(),
        "success": stop.status == SubagentStatus::Completed,
        "duration_seconds": stop.duration.as_secs_f64(),
    });
    if stop.continued > 0 {
        fields["continued"] = stop.continued.into();
    }
    match &stop.ending {
        SubagentEnding::Result(result) => fields["result"] = result.clone(),
        SubagentEnding::Error(error) => fields["error"] = error.clone().into(),
        SubagentEnding::Pending => {}
    }
    Step::new("subagent_stop", fields)
}

pub(super) fn call_agent_spec(def: &AgentDef) -> ToolSpec {
    let agents: Vec<Value> = def
        .subagents
        .keys()
        .map(|k| Value::String(k.clone()))
        .collect();
    ToolSpec {
        name: CALL_AGENT_TOOL.into(),
        description: "Delegate a task to a sub-agent; returns its final answer.".into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "agent": {"type": "string", "enum": agents},
                "task": {"type": "string", "description": "What the sub-agent should do."}
            },
            "required": ["agent", "task"]
        }),
    }
}
