//! What a dispatch produces: the folded outcome, one record per hook run, and the observers
//! that see it. The other steps of the dispatch fill these types; they depend on nothing but
//! the protocol.

use std::sync::Arc;

use serde_json::Value;
use tollgate_protocol::{Decision, Event, Payload, SideEffect};

use super::runs::HookRuns;

/// Sees the folded outcome of every dispatch of a run, after the fold and the permission gate:
/// audit logs, metrics. Hooks cannot do this (a deny stops the chain before later hooks run, and
/// no hook sees the fold).
///
/// `observe` runs synchronously at the end of [`Dispatcher::dispatch`], in registration order:
/// keep it short (hand slow work to a task). A panic is caught and logged at WARN.
pub trait DispatchObserver: Send + Sync + 'static {
    /// Called once per dispatch with the payload as dispatched and its folded outcome.
    fn observe(&self, payload: &Payload, outcome: &DispatchOutcome);
}

/// Who made the final decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecidedBy {
    /// A hook, by name.
    Hook(Arc<str>),
    /// The permission gate.
    PermissionGate,
}

/// Which arguments the permission gate reviewed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReviewedArgs {
    /// The arguments the model proposed.
    Original,
    /// The arguments after the hooks' rewrites.
    Rewritten,
}

/// One permission-gate review.
#[derive(Debug, Clone, PartialEq)]
pub struct GateReview {
    /// Which arguments were reviewed.
    pub args: ReviewedArgs,
    /// The gate's verdict.
    pub decision: Decision,
}

/// A side effect, with the hook that reported it.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedSideEffect {
    /// The hook's name.
    pub hook: Arc<str>,
    /// What it did.
    pub effect: SideEffect,
}

/// The folded result of one dispatch.
#[derive(Debug, Clone, PartialEq)]
pub struct DispatchOutcome {
    /// The event dispatched.
    pub event: Event,
    /// The folded decision (strictest wins). Always `Allow` for notification events; on
    /// `post_tool_use` only a `deny` is folded (an `ask` after the call ran is recorded only).
    pub decision: Decision,
    /// Who made a `Deny` or `Ask`: the first hook that denied (or asked, when none denied), or
    /// the permission gate when its verdict was stricter.
    pub decided_by: Option<DecidedBy>,
    /// The final arguments, when hooks rewrote them (`pre_tool_use`). Unless the call is
    /// denied, the tool must run with these.
    pub modified_args: Option<Value>,
    /// The final result, when hooks rewrote it (`post_tool_use`). The model observes this.
    pub modified_result: Option<Value>,
    /// Context added by hooks, in run order.
    pub additional_context: Vec<String>,
    /// Side effects of every hook, in run order; hook failures are recorded here too
    /// (kind `hook_failure`).
    pub side_effects: Vec<RecordedSideEffect>,
    /// One record per hook run, in run order, with the names of the hooks they refer to.
    pub runs: HookRuns,
    /// The permission gate's reviews (`pre_tool_use` only).
    pub gate_reviews: Vec<GateReview>,
    /// Whether hooks were bypassed (evaluation bypass).
    pub bypassed: bool,
}

impl DispatchOutcome {
    pub(crate) fn new(event: Event, bypassed: bool) -> Self {
        Self {
            event,
            decision: Decision::Allow,
            decided_by: None,
            modified_args: None,
            modified_result: None,
            additional_context: Vec::new(),
            side_effects: Vec::new(),
            runs: HookRuns::default(),
            gate_reviews: Vec::new(),
            bypassed,
        }
    }

    /// Whether the action is denied.
    pub fn is_denied(&self) -> bool {
        self.decision.is_deny()
    }

    /// What the model observes when the action is denied (denial as observation): the deny
    /// reason and who denied. On `pre_tool_use` it replaces the tool's result (the call never
    /// ran); on `post_tool_use` it replaces the result the hooks withheld. `None` unless denied.
    pub fn observation(&self) -> Option<String> {
        let Decision::Deny { reason } = &self.decision else {
            return None;
        };
        let what = match self.event {
            Event::PostToolUse => "Tool result withheld",
            Event::PreToolUse => "Tool call denied",
            _ => "Denied",
        };
        Some(match &self.decided_by {
            Some(DecidedBy::Hook(name)) => format!("{what} by hook `{name}`: {reason}"),
            Some(DecidedBy::PermissionGate) => format!("{what} by the permission gate: {reason}"),
            None => format!("{what}: {reason}"),
        })
    }
}
