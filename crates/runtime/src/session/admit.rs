//! Admitting a call: one approval path for every `ask` (`pre_tool_use`, `user_turn`,
//! `subagent_start`), approvals with edits, and taking an approval right before the tool
//! runs.

use std::sync::atomic::Ordering;

use serde_json::{Value, json};
use tollgate_approval::os_user;
use tollgate_core::DispatchOutcome;
use tollgate_protocol::{ApprovalCorrection, Decision, ToolCall};

use super::{About, Session, decided_by};
use crate::gate::{Approval, ApprovalRequest, Waiting};
use crate::trace::Step;

impl Session<'_> {
    /// `pre_tool_use`'s decision, after asking a human when it asks: the call to run (with
    /// the approver's edit, if any) and the approval to take before it runs; or what the
    /// model observes instead.
    pub(super) async fn admit(
        &self,
        pre: &DispatchOutcome,
        call: ToolCall,
    ) -> Result<(ToolCall, Option<Approval>), String> {
        match &pre.decision {
            Decision::Allow => Ok((call, None)),
            Decision::Deny { .. } => Err(pre.observation().unwrap_or_default()),
            Decision::Ask { reason } => {
                let request = self.approval_request(
                    "pre_tool_use",
                    (&call.tool_name, &call.tool_call_id),
                    call.tool_input.clone(),
                    reason,
                    pre,
                );
                let approval = self.ask(&request).await;
                if !approval.approved {
                    return Err(denied(&request, &approval));
                }
                match approval.edited_arguments.clone() {
                    None => Ok((call, Some(approval))),
                    Some(edit) => self.corrected(call, edit, approval).await,
                }
            }
        }
    }

    /// A call approved with edited arguments: the edit must be an object, the permission
    /// gate reviews it (what the gate blocks stays blocked), `approval_correction` fires with
    /// both argument sets (a hook that denies it denies the call), and the edited call goes
    /// through `pre_tool_use` again.
    async fn corrected(
        &self,
        call: ToolCall,
        edit: Value,
        approval: Approval,
    ) -> Result<(ToolCall, Option<Approval>), String> {
        if !edit.is_object() {
            return Err(format!(
                "not run: the arguments {} approved with are not a JSON object",
                approval.by
            ));
        }
        if let Decision::Deny { reason } = self.gate.verdict(&call.tool_name, &edit) {
            return Err(format!(
                "not run: the arguments as edited by {} are refused by the permission gate: {reason}",
                approval.by
            ));
        }
        let id = call.tool_call_id.clone();
        let request_id = approval.request_id.clone().unwrap_or_default();
        self.trace.emit(Step::new(
            "approval_correction",
            json!({
                "tool_call_id": id,
                "request_id": request_id,
                "original": call.tool_input,
                "corrected": edit,
                "by": approval.by,
            }),
        ));
        let correction = ApprovalCorrection {
            request_id,
            call: call.clone(),
            corrected_input: edit.clone(),
            corrected_by: approval.by.clone(),
        };
        let outcome = self.emit(correction, About::Call(&id)).await;
        if outcome.decision.is_deny() {
            return Err(outcome
                .observation()
                .unwrap_or_else(|| "not run: a hook denied the corrected arguments".to_owned()));
        }
        // The edited call goes through `pre_tool_use` again, hooks and gate: an approver's
        // edit is held to the same policy as the model's call. An `ask` is what the approver
        // just answered, for exactly these arguments; a rewrite nobody approved is refused.
        let edited = ToolCall {
            tool_input: edit,
            ..call
        };
        let again = self.emit(edited.clone(), About::Call(&id)).await;
        if again.decision.is_deny() {
            return Err(format!(
                "not run: the arguments as edited by {} were refused: {}",
                approval.by,
                again.observation().unwrap_or_default()
            ));
        }
        if again
            .modified_args
            .as_ref()
            .is_some_and(|rewritten| rewritten != &edited.tool_input)
        {
            return Err(format!(
                "not run: hooks rewrote the arguments as edited by {}, and nobody approved the \
                 rewrite",
                approval.by
            ));
        }
        Ok((edited, Some(approval)))
    }

    /// Takes `approval` (when the call has one) right before the tool starts; `Some(why)`
    /// when it cannot be taken (already used, arguments changed, store failure): the call
    /// must not run.
    pub(super) async fn take(
        &self,
        approval: Option<&Approval>,
        call: &ToolCall,
    ) -> Option<String> {
        let approval = approval?;
        let taken = self
            .services
            .approver
            .consume(approval, &call.tool_input)
            .await;
        let why = taken.err()?;
        self.trace.emit(Step::new(
            "approval_refused",
            json!({"tool_call_id": call.tool_call_id, "request_id": approval.request_id, "reason": why}),
        ));
        Some(format!("not run: {why}"))
    }

    /// The refusal when the prompt's `user_turn` dispatch refuses (after asking a human when
    /// it asks).
    pub(super) async fn prompt_refused(&self, outcome: &DispatchOutcome) -> Option<String> {
        match &outcome.decision {
            Decision::Allow => None,
            Decision::Deny { .. } => outcome.observation(),
            Decision::Ask { reason } => {
                let request = self.approval_request(
                    "user_turn",
                    ("user_turn", ""),
                    Value::Null,
                    reason,
                    outcome,
                );
                let approval = self.ask(&request).await;
                (!approval.approved).then(|| denied(&request, &approval))
            }
        }
    }

    /// A `subagent_start` that asks: the approval to take before the child starts, or why
    /// the delegation is refused (not approved; approved with edits, which a delegation cannot
    /// take: its agent and task are what was asked).
    pub(super) async fn admit_delegation(
        &self,
        call: &ToolCall,
        started: &DispatchOutcome,
    ) -> Result<Approval, String> {
        let reason = started.decision.reason().unwrap_or_default();
        let request = self.approval_request(
            "subagent_start",
            (&call.tool_name, &call.tool_call_id),
            call.tool_input.clone(),
            reason,
            started,
        );
        let approval = self.ask(&request).await;
        if !approval.approved {
            return Err(denied(&request, &approval));
        }
        if approval.edited_arguments.is_some() {
            return Err(format!(
                "not started: {} approved the delegation with edited arguments, but a delegation \
                 runs as asked or not at all; approve or reject it without --edit",
                approval.by
            ));
        }
        Ok(approval)
    }

    fn approval_request(
        &self,
        event: &str,
        (tool_name, tool_call_id): (&str, &str),
        arguments: Value,
        reason: &str,
        outcome: &DispatchOutcome,
    ) -> ApprovalRequest {
        let turn = self.turn.load(Ordering::Relaxed);
        ApprovalRequest {
            run_id: self.common.run_id.clone(),
            session_id: self.common.session_id.clone(),
            scope: format!("{}t{turn}:{event}", self.scope),
            agent: self.def.name.clone(),
            tool_name: tool_name.to_owned(),
            tool_call_id: tool_call_id.to_owned(),
            arguments,
            reason: reason.to_owned(),
            asked_by: decided_by(outcome).unwrap_or_default(),
            approvers: if self.approval.approvers.is_configured()
                || self.services.default_approvers.is_empty()
            {
                self.approval
                    .approvers
                    .for_call(&self.def.name, tool_name, &os_user())
            } else {
                self.services.default_approvers.clone()
            },
            timeout_seconds: self.approval.timeout_seconds,
        }
    }

    /// Asks a human: `permission_request` hooks may decide first; else the request is filed
    /// (`approval_waiting` in the trace, `notification` dispatched), then decided
    /// (`approval`).
    pub(super) async fn ask(&self, request: &ApprovalRequest) -> Approval {
        let trace = self.trace.clone();
        let waiting = move |w: &Waiting| {
            trace.emit(Step::new(
                "approval_waiting",
                json!({
                    "tool_call_id": request.tool_call_id,
                    "tool_name": request.tool_name,
                    "arguments": request.arguments,
                    "reason": request.reason,
                    "asked_by": request.asked_by,
                    "request_id": w.request_id,
                    "expires_at_ms": w.expires_at_ms,
                    "approvers": w.approvers,
                    "attached": w.attached,
                    "status": w.status,
                }),
            ));
        };
        let answer = if let Some(decided) = self.permission_hooks(request).await {
            decided
        } else if request.approvers.is_empty() {
            // Waiting would only end in expiry.
            Approval {
                status: "no_approver".into(),
                ..Approval::plain(
                    false,
                    "",
                    Some(format!(
                        "nobody may approve calls of `{}` by agent `{}` (no `approval.approvers` \
                         entry covers them)",
                        request.tool_name, request.agent
                    )),
                )
            }
        } else {
            self.wait_for_human(request, &waiting).await
        };
        self.trace.emit(Step::new(
            "approval",
            json!({
                "tool_call_id": request.tool_call_id,
                "tool_name": request.tool_name,
                "reason": request.reason,
                "asked_by": request.asked_by,
                "approved": answer.approved,
                "status": answer.status,
                "by": answer.by,
                "note": answer.note,
                "request_id": answer.request_id,
                "channel": answer.channel,
                "edited_arguments": answer.edited_arguments,
            }),
        ));
        answer
    }
}

/// What the model observes when a human did not approve: who, and their note (a rejection's
/// note is the approver speaking to the model).
fn denied(request: &ApprovalRequest, answer: &Approval) -> String {
    let note = answer.note.as_deref().unwrap_or_default();
    let by = if answer.by.is_empty() {
        "nobody"
    } else {
        &answer.by
    };
    match answer.status.as_str() {
        "rejected" if answer.request_id.is_some() => {
            let note = if note.is_empty() {
                String::new()
            } else {
                format!(" Note from {by}: {note}")
            };
            format!(
                "Tool call denied: {by} rejected it (it needed approval: {}).{note}",
                request.reason
            )
        }
        "expired" => format!("Tool call denied: the approval request expired: {note}"),
        "cancelled" => format!("Tool call denied: the approval request was cancelled: {note}"),
        "already_run" => format!("Not run again: {note}"),
        "error" | "no_approver" | "arguments_changed" => format!("Tool call denied: {note}"),
        "denied_by_hook" => format!("Tool call denied by hook {by}: {note}"),
        _ => {
            let note = if note.is_empty() {
                String::new()
            } else {
                format!(" ({note})")
            };
            format!(
                "Tool call denied: it needed approval ({}), and {by} did not approve it{note}",
                request.reason
            )
        }
    }
}
