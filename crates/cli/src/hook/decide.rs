//! One host hook call decided: the payload through the policy, then rewrites back into the
//! host's names, then an ask resolved (the host's prompt, a denial, or the approval server).
//!
//! Everything that goes wrong denies: a tool call whose input does not fit its tool (`Bash`
//! with a `timeout` of `-1`), a payload that does not fit its event, hooks that do not
//! answer before the deadline (which lies within the host's hook timeout, so the host never
//! kills the hook and goes ahead), a rewrite the host cannot express, an approval server that
//! cannot be reached. An approver's edit goes through the policy again, as in a run: a deny
//! stands, a rewrite of the edit is refused (nobody approved it), an ask counts as answered.

use serde_json::{Value, json};
use tokio::time::{Instant, timeout_at};
use tollgate_core::{DecidedBy, DispatchOutcome};
use tollgate_handlers::claude::{PERMISSION_GRANTED, UPDATED_INPUT};
use tollgate_protocol::Decision;
use tollgate_protocol::wire::HookRunWire;
use tollgate_runtime::grant_refusal;
use tollgate_server::wire::NewApproval;

use super::answer::{Ruling, Verdict};
use super::ask::{Server, Settled};
use super::host::{HostCall, HostEvent, HostTool, Protocol, map_tool};
use super::policy::Policy;
use super::reverse;

/// What one call needs to be decided.
pub struct Context<'a> {
    /// The host's call.
    pub call: &'a HostCall,
    /// Its event.
    pub event: HostEvent,
    /// Hooks, gate and approval settings.
    pub policy: &'a Policy,
    /// Where asks are filed (`--server`), if anywhere.
    pub server: Option<&'a Server>,
    /// When the hook must answer.
    pub deadline: Instant,
}

/// The decision and what the audit records about it.
#[derive(Debug, Clone)]
pub struct Decided {
    /// For the host.
    pub verdict: Verdict,
    /// The hook or `permission_gate` that denied or asked.
    pub decided_by: Option<String>,
    /// The approval request, when one was filed.
    pub approval_id: Option<String>,
    /// Every hook run, the re-review of an edit's included.
    pub hook_runs: Vec<HookRunWire>,
    /// What the audit should say besides (a hook's grant that was ignored).
    pub notes: Vec<String>,
}

impl Decided {
    /// A denial that no hook made.
    pub fn deny(reason: String) -> Self {
        Self {
            verdict: Verdict::new(Ruling::Deny(format!("tollgate: {reason}"))),
            decided_by: None,
            approval_id: None,
            hook_runs: Vec::new(),
            notes: Vec::new(),
        }
    }
}

/// Decides `cx.call`.
///
/// # Cancel safety
/// Dropping the future abandons the call (hooks still running die with the process).
pub async fn decide(cx: &Context<'_>) -> Decided {
    let outcome = match dispatch(cx, cx.call).await {
        Ok(outcome) => outcome,
        Err(reason) => return Decided::deny(reason),
    };
    let mut decided = Decided {
        verdict: Verdict {
            ruling: Ruling::Allow,
            updated_input: None,
            context: outcome.additional_context.clone(),
        },
        decided_by: outcome.decided_by.as_ref().map(decided_by),
        approval_id: None,
        hook_runs: runs(&outcome),
        notes: Vec::new(),
    };
    if let (Some(args), Some(tool)) = (&outcome.modified_args, &cx.call.tool) {
        // A hook in Claude Code's shape replaced the whole input (`updatedInput`): the host
        // gets that input, with what later hooks rewrote patched in, never fields of the
        // input it sent that the hook left out.
        let replaced = outcome
            .side_effects
            .iter()
            .rev()
            .filter(|e| e.effect.kind == UPDATED_INPUT)
            .find_map(|e| e.effect.detail.get("tool_input").filter(|i| i.is_object()));
        let replaced = replaced.map(|input| HostTool {
            input: input.clone(),
            mapped: map_tool(&tool.name, input),
            ..tool.clone()
        });
        let tool = replaced.as_ref().unwrap_or(tool);
        match reverse::to_host(cx.call.protocol, tool, args, cx.call.cwd()) {
            Ok(input) => decided.verdict.updated_input = Some(input),
            Err(reason) => {
                decided.verdict.ruling = Ruling::Deny(format!("tollgate: {reason}"));
                return decided;
            }
        }
    }
    decided.verdict.ruling = match &outcome.decision {
        Decision::Allow if cx.event == HostEvent::PermissionRequest => {
            match outcome
                .side_effects
                .iter()
                .find(|e| e.effect.kind == PERMISSION_GRANTED)
            {
                // A grant with new arguments would skip the re-review a rewrite gets in
                // `PreToolUse`: the user decides it in Claude Code's dialog.
                Some(grant) if decided.verdict.updated_input.is_some() => {
                    decided.verdict.updated_input = None;
                    Ruling::Ask(format!(
                        "tollgate: hook {} granted the call with new arguments, which the bridge \
                         does not re-review; Claude Code asks its user",
                        grant.hook
                    ))
                }
                Some(grant) => {
                    let by_gate = cx.call.tool.as_ref().is_some_and(|tool| {
                        let mapped = &tool.mapped;
                        cx.policy
                            .gate_objects(&mapped.tool_name, &mapped.tool_input)
                    });
                    match grant_refusal(by_gate, &outcome, &grant.hook) {
                        // Claude Code shows its dialog: a person decides.
                        Some(why) => {
                            decided.notes.push(format!(
                                "hook {} granted the call; ignored: {why}; Claude Code asks its user",
                                grant.hook
                            ));
                            Ruling::Allow
                        }
                        None => {
                            decided.decided_by = Some(grant.hook.to_string());
                            Ruling::Approved(format!("tollgate: approved by hook {}", grant.hook))
                        }
                    }
                }
                None => Ruling::Allow,
            }
        }
        Decision::Deny { .. } => {
            let observation = outcome.observation().unwrap_or_default();
            Ruling::Deny(format!("tollgate: {observation}"))
        }
        Decision::Ask { reason } if cx.event.blocks() => {
            let asked_by = decided.decided_by.clone().unwrap_or_default();
            let reason = format!("tollgate: {reason} (asked by {asked_by})");
            ask(cx, reason, asked_by, &mut decided).await
        }
        _ => Ruling::Allow,
    };
    decided
}

/// Dispatches `call` through the policy.
///
/// # Errors
/// Why it cannot be decided: a tool call whose input does not fit its tool (mapped, it would
/// reach no policy written for the runtime's tool, so it is never passed on unvetted), a
/// payload that does not fit the event, hooks that outlast the deadline.
async fn dispatch(cx: &Context<'_>, call: &HostCall) -> Result<DispatchOutcome, String> {
    if let Some(tool) = &call.tool
        && let Some(why) = &tool.mapped.not_mapped
    {
        return Err(crate::dispatch::unfit_reason(why));
    }
    let payload = call.payload(cx.event).map_err(|e| {
        format!(
            "the host's {} payload does not fit tollgate's `{}`: {e}",
            cx.event.name(),
            cx.event.event()
        )
    })?;
    timeout_at(cx.deadline, cx.policy.dispatch(payload))
        .await
        .map_err(|_| {
            "the hooks did not answer within the host's hook timeout (raise `--timeout` and the \
             host's `timeout` together)"
                .to_owned()
        })
}

fn decided_by(by: &DecidedBy) -> String {
    match by {
        DecidedBy::Hook(name) => name.to_string(),
        DecidedBy::PermissionGate => "permission_gate".into(),
    }
}

fn runs(outcome: &DispatchOutcome) -> Vec<HookRunWire> {
    outcome
        .runs
        .iter()
        .map(|r| r.to_wire(&outcome.event))
        .collect()
}

/// An ask: to the host's prompt or a denial without a server; else filed and waited on.
async fn ask(cx: &Context<'_>, reason: String, asked_by: String, decided: &mut Decided) -> Ruling {
    let Some(server) = cx.server else {
        return without_server(cx.call.protocol, cx.event, reason);
    };
    let approvers = match approvers(cx) {
        Ok(approvers) => approvers,
        Err(why) => return Ruling::Deny(format!("{reason}; {why}")),
    };
    let (tool_name, arguments) = match &cx.call.tool {
        Some(tool) => (
            tool.name.clone(),
            decided
                .verdict
                .updated_input
                .clone()
                .unwrap_or_else(|| tool.input.clone()),
        ),
        None => (
            "user_turn".to_owned(),
            json!({"prompt": cx.call.raw.get("prompt").cloned().unwrap_or(Value::Null)}),
        ),
    };
    let body = NewApproval {
        agent: cx.call.protocol.name().into(),
        session_id: cx.call.session_id.clone(),
        tool_name,
        tool_use_id: cx.call.call_id(),
        arguments,
        reasons: vec![reason],
        asked_by: Some(asked_by),
        approvers,
        timeout_seconds: Some(cx.policy.approval.timeout_seconds),
    };
    match server.settle(body, cx.deadline).await {
        Settled::Denied { id, reason } => {
            decided.approval_id = id;
            Ruling::Deny(format!("tollgate: {reason}"))
        }
        Settled::Approved { id, by, edit } => {
            decided.approval_id = Some(id.clone());
            match edit {
                None => Ruling::Approved(format!("tollgate: approved by {by} ({id})")),
                Some(edit) => review_edit(cx, edit, decided, &format!("{by} ({id})")).await,
            }
        }
    }
}

/// Without `--server`: Claude Code asks its user; Codex (whose hooks cannot ask) and prompts
/// (which no host asks about) are denied, with the way to get an approval named.
fn without_server(protocol: Protocol, event: HostEvent, reason: String) -> Ruling {
    match (event, protocol) {
        (HostEvent::PreToolUse, Protocol::ClaudeCode) => Ruling::Ask(reason),
        (HostEvent::PreToolUse, Protocol::Codex) => Ruling::Deny(format!(
            "{reason}. This call needs a human's approval, and Codex hooks cannot ask for one: \
             run `tollgate hook` with `--server URL` to have it wait for an approver"
        )),
        _ => Ruling::Deny(format!(
            "{reason}. This prompt needs a human's approval: run `tollgate hook` with \
             `--server URL` to have it wait for an approver"
        )),
    }
}

/// Who may approve: the admin and agent files' `approval.approvers` covering the call, or the
/// server's approvers when none are configured.
///
/// # Errors
/// Approvers are configured but none covers the call: nobody could approve it.
fn approvers(cx: &Context<'_>) -> Result<Option<Vec<String>>, String> {
    let approvers = &cx.policy.approval.approvers;
    if !approvers.is_configured() {
        return Ok(None);
    }
    let tool = cx
        .call
        .tool
        .as_ref()
        .map_or("user_turn", |t| t.mapped.tool_name.as_str());
    let names = approvers.for_call(cx.call.protocol.name(), tool, "");
    if names.is_empty() {
        return Err(format!(
            "no `approval.approvers` entry covers `{tool}`, so nobody could approve it"
        ));
    }
    Ok(Some(names))
}

/// An approver's edit (in the host's names) through the policy again.
async fn review_edit(cx: &Context<'_>, edit: Value, decided: &mut Decided, by: &str) -> Ruling {
    let (Some(tool), Value::Object(_)) = (&cx.call.tool, &edit) else {
        return Ruling::Deny(format!(
            "tollgate: {by} approved with an edit, and only a tool call's arguments (a JSON \
             object) can be edited"
        ));
    };
    let mut call = cx.call.clone();
    call.tool = Some(HostTool {
        input: edit.clone(),
        mapped: map_tool(&tool.name, &edit),
        ..tool.clone()
    });
    let outcome = match dispatch(cx, &call).await {
        Ok(outcome) => outcome,
        Err(reason) => return Ruling::Deny(format!("tollgate: {reason}")),
    };
    decided.hook_runs.extend(runs(&outcome));
    if outcome.decision.is_deny() {
        let observation = outcome.observation().unwrap_or_default();
        return Ruling::Deny(format!(
            "tollgate: the edit {by} approved is denied: {observation}"
        ));
    }
    if outcome.modified_args.is_some() {
        return Ruling::Deny(format!(
            "tollgate: hooks rewrote the edit {by} approved, and nobody approved the rewrite"
        ));
    }
    decided.verdict.updated_input = Some(edit);
    Ruling::Approved(format!("tollgate: approved by {by} with an edit"))
}
