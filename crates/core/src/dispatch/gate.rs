//! The permission gate: the policy that reviews a tool call after the hooks, on the original
//! arguments and on the rewritten ones; the strictest verdict wins.

use std::panic::{AssertUnwindSafe, catch_unwind};

use futures::FutureExt;
use serde_json::Value;
use tollgate_protocol::{Decision, EventData, Payload};

use super::outcome::{DecidedBy, DispatchOutcome, GateReview, ReviewedArgs};
use super::run::panic_message;
use crate::hook::BoxFuture;

/// The policy that decides whether a (tool, arguments) pair may run at all: compliance rules, a
/// permission engine, the shell analyzer for the bash tool. Hooks can make its verdict stricter,
/// never looser.
pub trait PermissionGate: Send + Sync + 'static {
    /// Reviews one call. `Deny` refuses it, `Ask` requires a human, `Allow` lets it run.
    ///
    /// # Cancel safety
    /// The future may be dropped before it completes (when the run is cancelled).
    fn review<'a>(&'a self, tool_name: &'a str, args: &'a Value) -> BoxFuture<'a, Decision>;
}

/// The gate reviews the original call (unless a hook already denied it) and, when hooks
/// rewrote the arguments, the rewritten one; its verdict replaces the hooks' when it is
/// stricter.
pub(super) async fn review(
    gate: &dyn PermissionGate,
    original: &Payload,
    outcome: &mut DispatchOutcome,
) {
    let EventData::PreToolUse(call) = &original.data else {
        return;
    };
    if outcome.decision.is_deny() {
        return;
    }
    let rewritten = outcome
        .modified_args
        .as_ref()
        .filter(|args| *args != &call.tool_input);
    let reviews = [
        Some((ReviewedArgs::Original, &call.tool_input)),
        rewritten.map(|args| (ReviewedArgs::Rewritten, args)),
    ];
    let mut verdicts = [None, None];
    for (slot, (which, args)) in verdicts
        .iter_mut()
        .zip(reviews)
        .filter_map(|(slot, r)| Some((slot, r?)))
    {
        *slot = Some((which, review_once(gate, &call.tool_name, args).await));
    }
    for (which, decision) in verdicts.into_iter().flatten() {
        if decision.strictness() > outcome.decision.strictness() {
            outcome.decision = decision.clone();
            outcome.decided_by = Some(DecidedBy::PermissionGate);
        }
        outcome.gate_reviews.push(GateReview {
            args: which,
            decision,
        });
    }
}

/// One review by the gate. A panicking gate denies: the gate is policy, so it fails closed.
async fn review_once(gate: &dyn PermissionGate, tool: &str, args: &Value) -> Decision {
    let review = match catch_unwind(AssertUnwindSafe(|| gate.review(tool, args))) {
        Ok(review) => review,
        Err(panic) => return gate_crashed(panic),
    };
    match AssertUnwindSafe(review).catch_unwind().await {
        Ok(decision) => decision,
        Err(panic) => gate_crashed(panic),
    }
}

fn gate_crashed(panic: Box<dyn std::any::Any + Send>) -> Decision {
    let message = panic_message(panic);
    tracing::warn!(error = %message, "permission gate panicked; denying");
    Decision::deny(format!("the permission gate crashed: {message}"))
}
