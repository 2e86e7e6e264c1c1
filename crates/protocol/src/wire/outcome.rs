//! Wire form of outcomes: tollgate's native fields plus the fields of
//! [Claude Code's hook output](https://code.claude.com/docs/en/hooks#json-output), so that a
//! hook written for Claude Code works unchanged.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{ProtocolError, Result};
use crate::outcome::{Decision, Outcome, OutcomeExtras, Rewrite, SideEffect};

/// A hook's answer on the wire. Every field is optional; `{}` means "no opinion".
///
/// Native fields: `decision` (`allow` | `ask` | `deny`) with `reason`; or `allow: false` with
/// `error` as the reason (any `error` denies, even next to `allow: true`); `modified_args`,
/// `modified_result` (`null` is a rewrite to `null`; leave the field out for no rewrite),
/// `additional_context`, `side_effects`.
///
/// Claude-Code-compatible fields: `decision: "block"` (deny) or `"approve"` (allow) with
/// `reason`; `continue: false` with `stopReason` (deny); `hookSpecificOutput` with
/// `permissionDecision` (`allow` | `deny` | `ask` | `defer`, where `defer` asks a human),
/// `permissionDecisionReason`, `updatedInput`, `additionalContext`, `updatedToolOutput`.
/// `suppressOutput` and `systemMessage` are accepted and ignored.
///
/// When fields disagree, the strictest decision wins (`deny > ask > allow`): a hook cannot
/// loosen its own answer by adding a second field.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OutcomeWire {
    /// `allow`, `ask` or `deny`; Claude Code's `block` (deny) and `approve` (allow) are accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<DecisionWire>,
    /// Why (for `ask` and `deny`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// `false` denies, with `error` as the reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow: Option<bool>,
    /// The reason of a denial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// New arguments for the tool call (`pre_tool_use` only).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub modified_args: Option<Value>,
    /// A new tool result (`post_tool_use` only).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub modified_result: Option<Value>,
    /// Text added to the model's context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_context: Option<String>,
    /// What the hook did besides deciding.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub side_effects: Vec<SideEffectWire>,
    /// Claude Code: `false` stops the action, with `stopReason`.
    #[serde(rename = "continue", default, skip_serializing_if = "Option::is_none")]
    pub continue_: Option<bool>,
    /// Claude Code: the reason for `continue: false`.
    #[serde(
        rename = "stopReason",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub stop_reason: Option<String>,
    /// Claude Code: accepted and ignored.
    #[serde(
        rename = "suppressOutput",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub suppress_output: Option<bool>,
    /// Claude Code: accepted and ignored.
    #[serde(
        rename = "systemMessage",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub system_message: Option<String>,
    /// Claude Code: event-specific output.
    #[serde(
        rename = "hookSpecificOutput",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub hook_specific_output: Option<HookSpecificOutputWire>,
}

/// A decision word on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DecisionWire {
    /// No objection.
    Allow,
    /// Ask a human.
    Ask,
    /// Refuse.
    Deny,
    /// Claude Code's spelling of deny.
    Block,
    /// Claude Code's (older) spelling of allow.
    Approve,
    /// Claude Code's `defer`: leave it to a human (treated as ask).
    Defer,
}

/// Claude Code's `hookSpecificOutput` object.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct HookSpecificOutputWire {
    /// The event the output is for (informational).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hook_event_name: Option<String>,
    /// `allow`, `deny`, `ask` or `defer`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_decision: Option<DecisionWire>,
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_decision_reason: Option<String>,
    /// New arguments for the tool call.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub updated_input: Option<Value>,
    /// Text added to the model's context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_context: Option<String>,
    /// A new tool result (Claude Code's `updatedMCPToolOutput` is accepted as an alias).
    #[serde(
        default,
        alias = "updatedMCPToolOutput",
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub updated_tool_output: Option<Value>,
}

/// A side effect on the wire: `{"kind": "...", "detail": ...}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SideEffectWire {
    /// A short machine-readable label.
    pub kind: String,
    /// Anything worth recording.
    #[serde(default)]
    pub detail: Value,
}

/// One hook run as written to a trace (JSON Lines, one object per run).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HookRunWire {
    /// The hook's name.
    pub hook: String,
    /// `function`, `command`, `http`, `llm` or `class`.
    pub kind: String,
    /// Where the hook came from (`builtin`, `skill`, …).
    pub source: String,
    /// The event it ran for.
    pub event: String,
    /// `completed`, `timed_out`, `crashed`, `errored`, `refused`, `invalid_output`, `detached`
    /// (fire-and-forget) or `dropped` (the background queue was full).
    pub status: String,
    /// What the run counted as after the failure mode was applied: `allow`, `ask`, `deny`, or
    /// absent when a failed hook was skipped (`fail_open`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<String>,
    /// The reason of an `ask` or `deny`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The failure, for every status but `completed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// `fail_open` or `fail_closed`.
    pub failure_mode: String,
    /// Wall time of the run, in milliseconds.
    pub duration_ms: u64,
    /// Whether the hook rewrote the arguments or the result.
    #[serde(default)]
    pub rewrote: bool,
}

impl From<&SideEffect> for SideEffectWire {
    fn from(effect: &SideEffect) -> Self {
        Self {
            kind: effect.kind.clone(),
            detail: effect.detail.clone(),
        }
    }
}

impl From<SideEffectWire> for SideEffect {
    fn from(wire: SideEffectWire) -> Self {
        Self {
            kind: wire.kind,
            detail: wire.detail,
        }
    }
}

impl From<&Outcome> for OutcomeWire {
    /// The native fields only.
    fn from(outcome: &Outcome) -> Self {
        let (modified_args, modified_result) = match outcome.rewrite() {
            Some(Rewrite::Args(args)) => (Some(args.clone()), None),
            Some(Rewrite::Result(result)) => (None, Some(result.clone())),
            None => (None, None),
        };
        let decision = match outcome.decision {
            Decision::Allow => None,
            Decision::Ask { .. } => Some(DecisionWire::Ask),
            Decision::Deny { .. } => Some(DecisionWire::Deny),
        };
        Self {
            decision,
            reason: outcome.decision.reason().map(str::to_owned),
            modified_args,
            modified_result,
            additional_context: outcome.additional_context().map(str::to_owned),
            side_effects: outcome.side_effects().iter().map(Into::into).collect(),
            ..Self::default()
        }
    }
}

/// Reads a field that is present, `null` included, as `Some` (serde's default maps `null` to
/// `None`, which would turn a rewrite to `null` into no rewrite).
pub(crate) fn present<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

/// Reason used when a hook denies without saying why.
pub const DEFAULT_DENY_REASON: &str = "denied by hook (no reason given)";
/// Reason used when a hook asks without saying why.
pub const DEFAULT_ASK_REASON: &str = "approval requested by hook (no reason given)";

impl TryFrom<OutcomeWire> for Outcome {
    type Error = ProtocolError;

    /// Folds the native and Claude-Code-compatible fields into one outcome.
    ///
    /// # Errors
    /// [`ProtocolError::InvalidWire`] when the outcome rewrites both the arguments and the
    /// result, or gives two different rewrites of the same thing.
    fn try_from(wire: OutcomeWire) -> Result<Self> {
        let specific = wire.hook_specific_output.clone().unwrap_or_default();
        let decision = fold_decisions(&wire, &specific);
        let args = same_or_conflict("modified_args", wire.modified_args, specific.updated_input)?;
        let result = same_or_conflict(
            "modified_result",
            wire.modified_result,
            specific.updated_tool_output,
        )?;
        let rewrite = match (args, result) {
            (Some(_), Some(_)) => {
                return Err(ProtocolError::outcome(
                    "an outcome rewrites the arguments or the result, not both",
                ));
            }
            (Some(args), None) => Some(Rewrite::Args(args)),
            (None, Some(result)) => Some(Rewrite::Result(result)),
            (None, None) => None,
        };
        let contexts: Vec<String> = [wire.additional_context, specific.additional_context]
            .into_iter()
            .flatten()
            .filter(|text| !text.is_empty())
            .collect();
        let extras = OutcomeExtras {
            rewrite,
            additional_context: (!contexts.is_empty()).then(|| contexts.join("\n")),
            side_effects: wire.side_effects.into_iter().map(Into::into).collect(),
        };
        Ok(Self::from_parts(decision, extras))
    }
}

fn same_or_conflict(
    field: &str,
    native: Option<Value>,
    compat: Option<Value>,
) -> Result<Option<Value>> {
    match (native, compat) {
        (Some(a), Some(b)) if a != b => Err(ProtocolError::outcome(format!(
            "`{field}` and its Claude Code counterpart disagree"
        ))),
        (a, b) => Ok(a.or(b)),
    }
}

fn fold_decisions(wire: &OutcomeWire, specific: &HookSpecificOutputWire) -> Decision {
    let reason = |r: Option<&String>| r.filter(|s| !s.trim().is_empty()).cloned();
    let mut votes = Vec::with_capacity(4);
    if let Some(word) = wire.decision {
        votes.push(word_decision(word, reason(wire.reason.as_ref())));
    }
    // An error message is never an approval: `error` denies even next to `allow: true`.
    if wire.allow == Some(false) || wire.error.is_some() {
        votes.push(word_decision(
            DecisionWire::Deny,
            reason(wire.error.as_ref()).or_else(|| reason(wire.reason.as_ref())),
        ));
    }
    if wire.continue_ == Some(false) {
        votes.push(word_decision(
            DecisionWire::Deny,
            reason(wire.stop_reason.as_ref()),
        ));
    }
    if let Some(word) = specific.permission_decision {
        votes.push(word_decision(
            word,
            reason(specific.permission_decision_reason.as_ref()),
        ));
    }
    votes.into_iter().fold(Decision::Allow, |strictest, vote| {
        if vote.strictness() > strictest.strictness() {
            vote
        } else {
            strictest
        }
    })
}

fn word_decision(word: DecisionWire, reason: Option<String>) -> Decision {
    match word {
        DecisionWire::Allow | DecisionWire::Approve => Decision::Allow,
        DecisionWire::Ask | DecisionWire::Defer => {
            Decision::ask(reason.unwrap_or_else(|| DEFAULT_ASK_REASON.into()))
        }
        DecisionWire::Deny | DecisionWire::Block => {
            Decision::deny(reason.unwrap_or_else(|| DEFAULT_DENY_REASON.into()))
        }
    }
}
