//! The hooks around a human's approval: `permission_request` before a call is asked (a hook
//! may decide on the human's behalf) and `notification` while it waits.
//!
//! `permission_request` runs only on asks, so it never loosens a deny: what the hooks and
//! the permission gate denied is never asked. Nor does it loosen the gate's own asks (the
//! agent's or admin files' confirmation settings always ask a person), and a grant from a
//! skill's or a plugin's hook is ignored (see [`ungrantable`]). Its fold decides: a deny denies with the hook's
//! reason; an allow approves without a human only when a hook granted the call (its
//! `permission_granted` side effect, Claude Code's `behavior: "allow"`), and a grant with new
//! arguments goes through the approver-edit path (gate review, `approval_correction`,
//! `pre_tool_use` again); anything else leaves the ask to the human. It does not run when asks
//! are denied at once (`permission_mode` `dontAsk`, as Claude Code shows no dialog then), nor
//! for a prompt's ask (Claude Code asks permission for tool calls only). A run without hooks
//! for them dispatches neither (its trace has no `dispatch` line for them).

use std::sync::Mutex;

use serde_json::json;
use tokio::sync::oneshot;
use tollgate_handlers::claude::PERMISSION_GRANTED;
use tollgate_protocol::{Decision, Event, HookSource, Notification, PermissionRequest, ToolCall};

use crate::trace::Step;

use super::{About, Session, decided_by};
use crate::gate::{Approval, ApprovalRequest, Waiting};

/// Why a `permission_request` grant by hook `hook` (in `outcome`) cannot stand in for a
/// person, if it cannot: hooks may only make the permission gate stricter, so a call the gate
/// itself asks about (`asked_by_gate`: the shell analyzer's escalations, the agent's or an
/// admin file's confirmation settings) always goes to a person; and hooks that arrive with
/// downloaded content (a skill's, a plugin's) may refuse a call but never grant one. Shared by
/// the runtime and the hook bridge (`tollgate hook`), where Claude Code's own dialog is asked.
pub fn grant_refusal(
    asked_by_gate: bool,
    outcome: &tollgate_core::DispatchOutcome,
    hook: &str,
) -> Option<&'static str> {
    if asked_by_gate {
        return Some("the permission gate's own asks always go to a person");
    }
    let source = outcome
        .runs
        .iter()
        .find(|run| run.name == hook)
        .map(|run| run.source);
    match source {
        Some(HookSource::Skill | HookSource::Plugin) => {
            Some("a skill's or a plugin's hooks may refuse a call, never grant one")
        }
        Some(_) => None,
        None => Some("the granting hook's run is not on record"),
    }
}

/// `notification_type` of the notification sent while a call waits for approval.
pub(super) const PERMISSION_PROMPT: &str = "permission_prompt";

impl Session<'_> {
    /// Runs `permission_request` for `request`: `Some` when a hook decided (approved, with
    /// the hook as the approver, or denied), `None` when the human is to be asked.
    pub(super) async fn permission_hooks(&self, request: &ApprovalRequest) -> Option<Approval> {
        if request.tool_name == "user_turn"
            || self.services.permission_mode == "dontAsk"
            || !self.has_hooks(&Event::PermissionRequest)
        {
            return None;
        }
        let call = ToolCall {
            tool_name: request.tool_name.clone(),
            tool_call_id: request.tool_call_id.clone(),
            tool_input: request.arguments.clone(),
        };
        let asked = PermissionRequest {
            call,
            reason: request.reason.clone(),
        };
        let outcome = self.emit(asked, About::Call(&request.tool_call_id)).await;
        let hook = decided_by(&outcome);
        match &outcome.decision {
            Decision::Deny { reason } => Some(Approval {
                status: "denied_by_hook".into(),
                ..Approval::plain(false, &hook.unwrap_or_default(), Some(reason.clone()))
            }),
            Decision::Ask { .. } => None,
            Decision::Allow => {
                let granted = outcome
                    .side_effects
                    .iter()
                    .find(|e| e.effect.kind == PERMISSION_GRANTED)?;
                let by_gate = request.asked_by == "permission_gate";
                if let Some(why) = grant_refusal(by_gate, &outcome, &granted.hook) {
                    self.trace.emit(Step::new(
                        "warning",
                        json!({"file": "", "entry": granted.hook,
                            "message": format!("`{}` granted the call; ignored: {why}; a person is asked",
                                granted.hook)}),
                    ));
                    return None;
                }
                Some(Approval {
                    status: "approved_by_hook".into(),
                    edited_arguments: outcome.modified_args.clone(),
                    ..Approval::plain(true, &granted.hook, None)
                })
            }
        }
    }

    /// Asks the approver and, once the request is filed and waits, dispatches `notification`
    /// alongside: its hooks run while the person is asked, and never decide. The answer
    /// waits for a notification hook still running (its own deadline bounds it).
    pub(super) async fn wait_for_human(
        &self,
        request: &ApprovalRequest,
        on_waiting: &(dyn Fn(&Waiting) + Send + Sync),
    ) -> Approval {
        if !self.has_hooks(&Event::Notification) {
            return self.services.approver.ask(request, on_waiting).await;
        }
        let (filed, waits) = oneshot::channel::<Option<String>>();
        let filed = Mutex::new(Some(filed));
        let send = |id: Option<String>| {
            if let Some(tx) = filed.lock().ok().and_then(|mut slot| slot.take()) {
                // The receiver is gone only once the notification was given up.
                let _ = tx.send(id);
            }
        };
        let waiting = |w: &Waiting| {
            on_waiting(w);
            if w.status == "pending" {
                send(Some(w.request_id.clone()));
            }
        };
        let asked = async {
            let answer = self.services.approver.ask(request, &waiting).await;
            // Nothing was filed (or it was already decided): no notification.
            drop(filed.lock().ok().and_then(|mut slot| slot.take()));
            answer
        };
        let notify = async {
            if let Ok(Some(id)) = waits.await {
                self.notify(request, id).await;
            }
        };
        let (answer, ()) = tokio::join!(asked, notify);
        answer
    }

    /// Whether hooks are registered for `event` (a run without any records no dispatch of
    /// these two events).
    fn has_hooks(&self, event: &Event) -> bool {
        !self.dispatcher.registry().hook_names(event).is_empty()
    }

    async fn notify(&self, request: &ApprovalRequest, request_id: String) {
        let message = if request.tool_name == "user_turn" {
            format!(
                "agent `{}` needs your approval to go on with the prompt",
                request.agent
            )
        } else {
            format!(
                "agent `{}` needs your permission to use `{}`",
                request.agent, request.tool_name
            )
        };
        let notice = Notification {
            notification_type: PERMISSION_PROMPT.into(),
            message,
            tool_name: Some(request.tool_name.clone()),
            request_id: Some(request_id),
        };
        self.emit(notice, About::Call(&request.tool_call_id)).await;
    }
}
