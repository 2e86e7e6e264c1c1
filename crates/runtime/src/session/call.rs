//! One proposed tool call, from its proposal to what the model observes: `pre_tool_use`,
//! admission (approval), the tool, and `post_tool_use` / `_failure` / `_cancelled`.

use serde_json::{Value, json};
use tollgate_protocol::{ToolCall, ToolCancelled, ToolFailure, ToolResult};

use super::{About, Session, with_context};
use crate::tools::{BASH_TOOL, CALL_AGENT_TOOL, ToolError, observation_text};
use crate::trace::Step;

impl Session<'_> {
    /// Records a call that never reaches hooks, and what the model observes instead.
    pub(super) fn refuse_call(&self, id: &str, name: &str, why: &str) -> String {
        self.trace.emit(Step::new(
            "tool_call",
            json!({"tool_call_id": id, "tool_name": name, "arguments": Value::Null}),
        ));
        let content = format!("not run: {why}");
        self.trace.emit(Step::new(
            "observation",
            json!({"tool_call_id": id, "tool_name": name, "status": "failed", "content": content}),
        ));
        content
    }

    /// Records a call as the model proposed it: its arguments as JSON, or as the text itself
    /// when it is not JSON.
    pub(super) fn propose(&self, id: &str, name: &str, text: &str) {
        let raw =
            serde_json::from_str::<Value>(text).unwrap_or_else(|_| Value::String(text.to_owned()));
        self.trace.emit(Step::new(
            "tool_call",
            json!({"tool_call_id": id, "tool_name": name, "arguments": raw}),
        ));
    }

    /// One proposed tool call to its observation; returns what the model observes.
    pub(super) async fn tool_call(&self, id: &str, name: &str, text: &str) -> String {
        let args = serde_json::from_str::<Value>(text);
        let observe = |status: &str, content: String| {
            // Written into the observation, so a resumed run's conversation has it too.
            let content = with_context(content, &self.deferred.take());
            self.trace.emit(Step::new(
                "observation",
                json!({"tool_call_id": id, "tool_name": name, "status": status, "content": content}),
            ));
            content
        };
        let known = self.def.tools.iter().any(|t| t == name);
        if !known {
            return observe(
                "failed",
                format!(
                    "unknown tool `{name}`; this agent has: {}",
                    self.def.tools.join(", ")
                ),
            );
        }
        let args = match args {
            Ok(args @ Value::Object(_)) => args,
            Ok(_) => return observe("failed", "the arguments must be a JSON object".into()),
            Err(e) => return observe("failed", format!("the arguments are not valid JSON: {e}")),
        };
        let call = ToolCall {
            tool_name: name.to_owned(),
            tool_call_id: id.to_owned(),
            tool_input: args,
        };
        let pre = self.emit(call.clone(), About::Call(id)).await;
        let call = match pre.modified_args.clone() {
            Some(args) => ToolCall {
                tool_input: args,
                ..call
            },
            None => call,
        };
        let (call, approval) = match self.admit(&pre, call).await {
            Ok(admitted) => admitted,
            Err(why) => return observe("denied", why),
        };
        // `Err(when)`: cancelled, before or while the tool ran.
        let ran: Result<Result<Value, ToolError>, &str> = if self.cancel.is_cancelled() {
            // Cancelled while hooks (or a human) decided: nothing new starts.
            Err("before the tool started")
        } else if let Some(why) = self.take(approval.as_ref(), &call).await {
            return observe("denied", why);
        } else {
            self.trace.emit(Step::new(
                "tool_started",
                json!({"tool_call_id": id, "tool_name": name, "arguments": call.tool_input}),
            ));
            // The journal must know the tool may run before it does: a restarted run then
            // reports it interrupted instead of running it again.
            if let Err(e) = self.trace.flush().await {
                Ok(Err(ToolError::new(format!(
                    "not run: the run's journal cannot be written: {e}"
                ))))
            } else if call.tool_name == CALL_AGENT_TOOL {
                // A sub-agent sees the cancel itself and winds down through its own hooks; the
                // call counts as cancelled when the run was cancelled meanwhile.
                let ran = self.execute(&call).await;
                if ran.is_err() && self.cancel.is_cancelled() {
                    Err("while the tool ran")
                } else {
                    Ok(ran)
                }
            } else if call.tool_name == BASH_TOOL {
                // Only a process can be stopped where it stands (its group is killed). The file
                // and SQL tools are short and bounded; they finish, so the trace never says
                // "cancelled" about a write that happened.
                tokio::select! {
                    biased;
                    ran = self.execute(&call) => Ok(ran),
                    () = self.cancel.cancelled() => Err("while the tool ran"),
                }
            } else {
                Ok(self.execute(&call).await)
            }
        };
        if let Some(approval) = &approval
            && !matches!(ran, Err(w) if w.starts_with("before"))
        {
            self.services.approver.finish(approval).await;
        }
        match ran {
            Err(when) => {
                let reason = format!("{} {when}", self.cancel_cause());
                let reason = if when.starts_with("before") {
                    format!("not run: {reason}")
                } else {
                    reason
                };
                self.emit(
                    ToolCancelled {
                        call,
                        reason: Some(reason.clone()),
                    },
                    About::Call(id),
                )
                .await;
                observe("cancelled", reason)
            }
            Ok(Err(error)) => {
                self.emit(
                    ToolFailure {
                        call,
                        error: error.0.clone(),
                    },
                    About::Call(id),
                )
                .await;
                observe(
                    "failed",
                    with_context(format!("the tool failed: {error}"), &pre.additional_context),
                )
            }
            Ok(Ok(result)) => {
                let post = self
                    .emit(
                        ToolResult {
                            call,
                            tool_result: result.clone(),
                        },
                        About::Call(id),
                    )
                    .await;
                if let Some(withheld) = post.observation() {
                    return observe("denied", withheld);
                }
                let shown = post.modified_result.as_ref().unwrap_or(&result);
                let mut context = pre.additional_context.clone();
                context.extend(post.additional_context.iter().cloned());
                observe("ok", with_context(observation_text(shown), &context))
            }
        }
    }

    async fn execute(&self, call: &ToolCall) -> Result<Value, ToolError> {
        if call.tool_name == CALL_AGENT_TOOL {
            // Boxed: a delegation's future holds a whole sub-session's setup, and every call
            // would otherwise reserve room for it while it waits for approval.
            return Box::pin(self.delegate(call)).await;
        }
        let tool = self.tools.iter().find(|t| t.spec().name == call.tool_name);
        match tool {
            Some(tool) => tool.call(&call.tool_input, &self.env).await,
            None => Err(ToolError::new(format!("no tool `{}`", call.tool_name))),
        }
    }
}
