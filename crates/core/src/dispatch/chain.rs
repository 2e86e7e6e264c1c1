//! Folding hook outcomes: the waterfall, the deny short-circuit, strictest-wins, result
//! chaining and concurrent notifications. Uses the steps before it: the selection
//! ([`EventHooks::candidates`]) and one hook's run ([`super::run`]); fills the records
//! ([`super::outcome`]). Sequential chains run in [`sequential`].

mod sequential;

use std::sync::Arc;
use std::time::Duration;

use quanta::Instant;

use futures::future::join_all;
use serde_json::json;
use tollgate_protocol::{
    Decision, Event, EventData, FailureMode, Outcome, OutcomeExtras, Payload, Rewrite, RunStatus,
    SideEffect,
};

use super::outcome::{DecidedBy, DispatchOutcome, RecordedSideEffect};
use super::run::{Failure, Settled, matcher_panicked, run, triggers};
use super::runs::HookRun;
use crate::background::{Background, DetachedObserver, RunCount};
use crate::candidates::EventHooks;
use crate::hook::HookContext;
use crate::registry::{DispatchMode, Entry};

/// The state of one dispatch while its hooks run.
pub(super) struct Chain<'o> {
    /// Filled in place: the outcome is a few hundred bytes, and moving it in and out of the
    /// chain cost two copies per dispatch.
    outcome: &'o mut DispatchOutcome,
    /// The payload as rewritten so far (what the next hook sees), shared by the hooks until
    /// one rewrites it.
    ctx: HookContext,
    first_ask: Option<(Decision, Arc<str>)>,
    /// Where fire-and-forget hooks are detached to, who hears how they ended, and the count
    /// of the awaited ones.
    background: &'o Background,
    observer: Option<&'o Arc<dyn DetachedObserver>>,
    awaited: &'o RunCount,
}

/// What an applied run means for the chain.
enum Step {
    Continue,
    Stop,
}

impl<'o> Chain<'o> {
    pub(super) fn new(
        outcome: &'o mut DispatchOutcome,
        payload: Arc<Payload>,
        background: &'o Background,
        observer: Option<&'o Arc<dyn DetachedObserver>>,
        awaited: &'o RunCount,
    ) -> Self {
        Self {
            outcome,
            ctx: HookContext::new(payload),
            first_ask: None,
            background,
            observer,
            awaited,
        }
    }

    /// Notification events: every matching hook at once; decisions are recorded, not folded.
    pub(super) async fn run_concurrently(&mut self, hooks: &EventHooks) {
        let candidates = hooks.candidates(self.ctx.payload().match_target());
        let mut selected = Vec::new();
        for entry in candidates.iter() {
            if self.outcome.runs.is_empty() {
                self.outcome.runs.begin(candidates.names(), 0);
            }
            match triggers(entry, &self.ctx) {
                Ok(false) => {}
                Ok(true) if entry.fire_and_forget => self.detach(entry),
                Ok(true) => selected.push((entry, Ok(()))),
                Err(panic) => selected.push((entry, Err(matcher_panicked(panic)))),
            }
        }
        if selected.is_empty() {
            return;
        }
        let ctx = &self.ctx;
        let settled = join_all(selected.iter().map(|(entry, triggered)| async move {
            let start = Instant::now();
            match triggered {
                Ok(()) => {
                    let ran = run(&*entry.hook, entry.timeout, ctx, start).await;
                    (ran.settled, ran.took)
                }
                Err(message) => (
                    Settled::failed(RunStatus::Crashed, message.clone()),
                    Duration::ZERO,
                ),
            }
        }))
        .await;
        for ((entry, _), (settled, duration)) in selected.iter().zip(settled) {
            self.apply(entry, DispatchMode::Notification, settled, duration);
        }
    }

    fn apply(
        &mut self,
        entry: &Entry,
        mode: DispatchMode,
        settled: Settled,
        duration: Duration,
    ) -> Step {
        // Filled in place rather than assembled from intermediate values: moving those cost
        // more than the rest of the bookkeeping.
        let mut run = HookRun {
            hook: entry.index,
            kind: entry.kind,
            source: entry.source,
            status: RunStatus::Completed,
            decision: None,
            error: None,
            failure_mode: entry.failure_mode,
            duration,
            rewrote: false,
        };
        let step = match settled {
            // Most hooks answer a plain allow: nothing to fold, only the record.
            Settled::Answered(outcome) if outcome.is_plain_allow() => {
                run.decision = Some(Decision::Allow);
                Step::Continue
            }
            Settled::Answered(outcome) => match check_rewrite(&self.outcome.event, &outcome) {
                Ok(()) => self.answered(entry, mode, outcome, &mut run),
                Err(message) => {
                    // What the hook did happened all the same; only its answer is void.
                    let (_, extras) = outcome.into_parts();
                    let effects = extras.map(|extras| extras.side_effects);
                    self.record_side_effects(entry, effects.unwrap_or_default());
                    self.failed(entry, mode, RunStatus::InvalidOutput, message, &mut run)
                }
            },
            Settled::Failed(failure) => {
                let Failure { status, error } = *failure;
                self.failed(entry, mode, status, error, &mut run)
            }
        };
        self.outcome.runs.push(run);
        step
    }

    fn answered(
        &mut self,
        entry: &Entry,
        mode: DispatchMode,
        outcome: Outcome,
        run: &mut HookRun,
    ) -> Step {
        let (decision, extras) = outcome.into_parts();
        let rewrite = extras.and_then(|extras| self.record_extras(entry, extras));
        // The decision goes into the record at once and is read from there: moving it on
        // again costs more than the rest of this function.
        let decision = run.decision.insert(decision);
        give_default_reason(decision, &entry.name);
        if mode == DispatchMode::Notification {
            return Step::Continue;
        }
        if decision.is_deny() {
            let decision = decision.clone();
            return self.deny(decision, &entry.name);
        }
        // An ask after the call ran has nobody to ask: it is recorded, not folded.
        let foldable_ask =
            mode == DispatchMode::Blocking && matches!(decision, Decision::Ask { .. });
        if foldable_ask && self.first_ask.is_none() {
            self.first_ask = Some((decision.clone(), entry.name.clone()));
        }
        if let Some(rewrite) = rewrite {
            run.rewrote = true;
            self.rewrite(rewrite);
        }
        Step::Continue
    }

    /// Records an answer's side effects and context; returns its rewrite.
    fn record_extras(&mut self, entry: &Entry, extras: OutcomeExtras) -> Option<Rewrite> {
        let OutcomeExtras {
            rewrite,
            additional_context,
            side_effects,
        } = extras;
        self.record_side_effects(entry, side_effects);
        if let Some(context) = additional_context {
            self.outcome.additional_context.push(context);
        }
        rewrite
    }

    fn failed(
        &mut self,
        entry: &Entry,
        mode: DispatchMode,
        status: RunStatus,
        error: String,
        run: &mut HookRun,
    ) -> Step {
        let event = &self.outcome.event;
        tracing::warn!(
            hook = %entry.name, %event, status = status.as_str(), error = %error,
            failure_mode = entry.failure_mode.as_str(), "hook failed"
        );
        self.outcome.side_effects.push(RecordedSideEffect {
            hook: entry.name.clone(),
            effect: SideEffect::new(
                "hook_failure",
                json!({"status": status.as_str(), "error": &error, "failure_mode": entry.failure_mode.as_str()}),
            ),
        });
        run.status = status;
        let mut step = Step::Continue;
        if entry.failure_mode == FailureMode::FailClosed && mode != DispatchMode::Notification {
            let reason = format!(
                "hook `{}` failed ({}): {error}; failure_mode is fail_closed",
                entry.name,
                status.as_str()
            );
            let decision = Decision::deny(reason);
            run.decision = Some(decision.clone());
            step = self.deny(decision, &entry.name);
        }
        run.error = Some(error);
        step
    }

    /// Hands a fire-and-forget hook to the background queue, with the payload as rewritten so
    /// far, and records that it did (or that the queue was full and the hook was dropped).
    fn detach(&mut self, entry: &Entry) {
        let awaited = entry.awaited.then(|| self.awaited.begin());
        let queued =
            self.background
                .detach(entry, self.ctx.clone(), self.observer.cloned(), awaited);
        let (status, error) = if queued {
            (RunStatus::Detached, None)
        } else {
            tracing::warn!(hook = %entry.name, event = %self.outcome.event, "background queue full; fire-and-forget hook dropped");
            (
                RunStatus::Dropped,
                Some("the background queue is full".to_owned()),
            )
        };
        self.outcome.runs.push(HookRun {
            hook: entry.index,
            kind: entry.kind,
            source: entry.source,
            status,
            decision: None,
            error,
            failure_mode: entry.failure_mode,
            duration: Duration::ZERO,
            rewrote: false,
        });
    }

    fn record_side_effects(&mut self, entry: &Entry, side_effects: Vec<SideEffect>) {
        if side_effects.is_empty() {
            return;
        }
        let hook = &entry.name;
        self.outcome
            .side_effects
            .extend(side_effects.into_iter().map(|effect| RecordedSideEffect {
                hook: hook.clone(),
                effect,
            }));
    }

    fn deny(&mut self, decision: Decision, hook: &Arc<str>) -> Step {
        self.outcome.decision = decision;
        self.outcome.decided_by = Some(DecidedBy::Hook(hook.clone()));
        self.first_ask = None;
        Step::Stop
    }

    fn rewrite(&mut self, rewrite: Rewrite) {
        let mut payload = Payload::clone(self.ctx.payload());
        match (&mut payload.data, rewrite) {
            (EventData::PreToolUse(call), Rewrite::Args(args)) => {
                call.tool_input = args.clone();
                self.outcome.modified_args = Some(args);
            }
            (EventData::PostToolUse(done), Rewrite::Result(result)) => {
                done.tool_result = result.clone();
                self.outcome.modified_result = Some(result);
            }
            _ => return,
        }
        self.ctx = HookContext::new(Arc::new(payload));
    }
}

/// Arguments can only be rewritten before a call, results only after it.
fn check_rewrite(event: &Event, outcome: &Outcome) -> Result<(), String> {
    match (outcome.rewrite(), event) {
        (None, _)
        | (Some(Rewrite::Args(_)), Event::PreToolUse)
        | (Some(Rewrite::Result(_)), Event::PostToolUse) => Ok(()),
        (Some(Rewrite::Args(_)), other) => Err(format!(
            "modified_args is only valid on pre_tool_use, not on {other}"
        )),
        (Some(Rewrite::Result(_)), other) => Err(format!(
            "modified_result is only valid on post_tool_use, not on {other}"
        )),
    }
}

/// A deny or ask without a reason gets one naming the hook, so the model and the human always
/// learn who decided.
fn give_default_reason(decision: &mut Decision, hook: &str) {
    match decision {
        Decision::Deny { reason } if reason.trim().is_empty() => {
            *reason = format!("denied by hook `{hook}` (no reason given)");
        }
        Decision::Ask { reason } if reason.trim().is_empty() => {
            *reason = format!("hook `{hook}` asks for approval (no reason given)");
        }
        _ => {}
    }
}
