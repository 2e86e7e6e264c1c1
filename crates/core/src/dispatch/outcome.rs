//! What a dispatch produces: the folded outcome, one record per hook run, and the observers
//! that see it. The other steps of the dispatch fill these types; they depend on nothing but
//! the protocol.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tollgate_protocol::wire::HookRunWire;
use tollgate_protocol::{
    Decision, Event, FailureMode, HookKind, HookSource, Payload, RunStatus, SideEffect,
};

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

/// The record of one hook run, in run order.
#[derive(Debug, Clone, PartialEq)]
pub struct HookRun {
    /// The hook's name.
    pub hook: Arc<str>,
    /// Its kind.
    pub kind: HookKind,
    /// Where it came from.
    pub source: HookSource,
    /// How the run ended. Anything but `Completed` is a hook failure.
    pub status: RunStatus,
    /// What the run counted as: the hook's answer; `Deny` for a `fail_closed` failure on a
    /// blocking or result event; `None` for any other failure (skipped, or on a notification
    /// event where nothing can be denied). A failure never shows as `Allow`.
    pub decision: Option<Decision>,
    /// The failure, for every status but `Completed`.
    pub error: Option<String>,
    /// The hook's failure mode.
    pub failure_mode: FailureMode,
    /// Wall time of the run.
    pub duration: Duration,
    /// Whether the hook rewrote the arguments or the result.
    pub rewrote: bool,
}

impl HookRun {
    /// The trace line for this run.
    pub fn to_wire(&self, event: &Event) -> HookRunWire {
        HookRunWire {
            hook: self.hook.to_string(),
            kind: self.kind.as_str().into(),
            source: self.source.as_str().into(),
            event: event.to_string(),
            status: self.status.as_str().into(),
            decision: self.decision.as_ref().map(|d| d.as_str().into()),
            reason: self
                .decision
                .as_ref()
                .and_then(|d| d.reason())
                .map(Into::into),
            error: self.error.clone(),
            failure_mode: self.failure_mode.as_str().into(),
            duration_ms: u64::try_from(self.duration.as_millis()).unwrap_or(u64::MAX),
            rewrote: self.rewrote,
        }
    }
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
    /// One record per hook run, in run order.
    pub runs: Vec<HookRun>,
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
            runs: Vec::new(),
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
