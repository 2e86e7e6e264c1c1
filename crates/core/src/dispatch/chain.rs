//! Folding hook outcomes: the waterfall, the deny short-circuit, strictest-wins, result
//! chaining and concurrent notifications. Uses the steps before it: the selection
//! ([`EventHooks::candidates`]) and one hook's run ([`super::run`]); fills the records
//! ([`super::outcome`]).

use std::future::poll_fn;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use quanta::Instant;

use futures::future::join_all;
use serde_json::json;
use tollgate_protocol::{
    Decision, Event, EventData, FailureMode, Outcome, OutcomeExtras, Payload, Rewrite, RunStatus,
    SideEffect,
};

use super::outcome::{DecidedBy, DispatchOutcome, RecordedSideEffect};
use super::run::{
    Failure, HookFuture, Settled, Started, answer_now, distrust_late, finish, run, start, triggers,
};
use super::runs::HookRun;
use crate::background::{Background, DetachedObserver};
use crate::candidates::{Candidates, EventHooks};
use crate::hook::HookContext;
use crate::registry::{DispatchMode, Entry};

/// The state of one dispatch while its hooks run.
pub(super) struct Chain {
    pub(super) outcome: DispatchOutcome,
    /// The payload as rewritten so far (what the next hook sees), shared by the hooks until
    /// one rewrites it.
    ctx: HookContext,
    first_ask: Option<(Decision, Arc<str>)>,
}

/// What an applied run means for the chain.
enum Step {
    Continue,
    Stop,
}

/// Where a sequential chain stands: the next candidate, the last clock reading when nothing
/// slow happened since (a group's end is the next run's start, unless a rewrite came in
/// between), and the open group.
struct Cursor {
    next: usize,
    now: Option<Instant>,
    group: Option<Group>,
}

/// Consecutive `fail_open` hooks that answered a plain allow at once, timed together: one
/// clock reading before the first and one when the group ends (see [`Chain::close_group`]).
struct Group {
    start: Instant,
    /// The first record of the group.
    first: usize,
    /// The shortest deadline among the group's hooks.
    shortest: Duration,
}

/// How a group ended: its time, and each of its hooks' share of it.
#[derive(Clone, Copy)]
struct GroupEnd {
    took: Duration,
    share: Duration,
    /// Whether the group held hooks before the one that ended it.
    others: bool,
}

/// Why [`Chain::run_at_once`] returned.
enum Next<'a> {
    /// A hook stopped the chain.
    Stop,
    /// Every candidate ran.
    End,
    /// This hook's future is pending after its first poll; the cursor holds its start.
    Later(&'a Entry, HookFuture<'a>),
}

impl Chain {
    pub(super) fn new(outcome: DispatchOutcome, payload: Arc<Payload>) -> Self {
        Self {
            outcome,
            ctx: HookContext::new(payload),
            first_ask: None,
        }
    }

    /// Blocking and result events: one hook after the other, each seeing the previous rewrites;
    /// the first deny stops the chain.
    pub(super) async fn run_sequentially(&mut self, hooks: &EventHooks) {
        let candidates = hooks.candidates(self.ctx.payload().match_target());
        let mut cursor = Cursor {
            next: 0,
            now: None,
            group: None,
        };
        loop {
            let next = poll_fn(|cx| {
                Poll::Ready(self.run_at_once(hooks.mode, &candidates, &mut cursor, cx))
            })
            .await;
            let (entry, future) = match next {
                Next::Stop => return,
                Next::End => break,
                Next::Later(entry, future) => (entry, future),
            };
            let start = cursor.now.unwrap_or_else(Instant::now);
            let ran = finish(future, entry.timeout, start).await;
            cursor.now = Some(ran.end);
            if let Step::Stop = self.apply(entry, hooks.mode, ran.settled, ran.took) {
                return;
            }
            if self
                .outcome
                .runs
                .records()
                .last()
                .is_some_and(|run| run.rewrote)
            {
                cursor.now = None; // the rewrite cloned the payload
            }
        }
        if let Some((decision, hook)) = self.first_ask.take() {
            self.outcome.decision = decision;
            self.outcome.decided_by = Some(DecidedBy::Hook(hook));
        }
    }

    /// Runs the candidates from the cursor on for as long as they answer without waiting
    /// ([`Hook::execute_now`](crate::Hook::execute_now), or a future ready on its first poll,
    /// polled with `cx`). A plain function rather than part of the async one, so that this, the
    /// common path, keeps its values in registers instead of the dispatch future's state.
    fn run_at_once<'a>(
        &mut self,
        mode: DispatchMode,
        candidates: &Candidates<'a>,
        cursor: &mut Cursor,
        cx: &mut Context<'_>,
    ) -> Next<'a> {
        let (entries, order) = candidates.split();
        while let Some(&index) = order.get(cursor.next) {
            cursor.next += 1;
            let Some(entry) = entries.get(index as usize) else {
                continue; // not reached: selections index the entries they were made from
            };
            // A matcher that declines inside a group counts towards the group's time.
            let triggered = triggers(entry, &self.ctx);
            if let Ok(false) = triggered {
                if cursor.group.is_none() {
                    cursor.now = None;
                }
                continue;
            }
            if self.outcome.runs.is_empty() {
                // Allocate once, and only when a hook is about to run.
                let capacity = order.len() + 1 - cursor.next;
                self.outcome.runs.begin(candidates.names(), capacity);
            }
            // Each arm hands its result straight to `apply`: going through a shared
            // (settled, duration) value costs a copy per hook.
            let step = match triggered {
                Ok(_) if entry.failure_mode == FailureMode::FailClosed => {
                    // Its deadline decides the fold, so it is timed alone.
                    self.close_group(cursor, entries, false);
                    let begun = cursor.now.unwrap_or_else(Instant::now);
                    cursor.now = Some(begun);
                    let ran = match start(&*entry.hook, entry.timeout, &self.ctx, begun, cx) {
                        Started::Done(ran) => ran,
                        Started::Pending(future) => return Next::Later(entry, future),
                    };
                    cursor.now = Some(ran.end);
                    self.apply(entry, mode, ran.settled, ran.took)
                }
                Ok(_) => {
                    let first = self.outcome.runs.len();
                    let group = cursor.group.get_or_insert_with(|| Group {
                        start: cursor.now.unwrap_or_else(Instant::now),
                        first,
                        shortest: entry.timeout,
                    });
                    match answer_now(&*entry.hook, &self.ctx, cx) {
                        Ok(Settled::Answered(outcome)) if outcome.is_plain_allow() => {
                            // Nothing to fold and nothing to time yet: only the record.
                            group.shortest = group.shortest.min(entry.timeout);
                            self.outcome.runs.push(plain_allow(entry));
                            continue;
                        }
                        Ok(settled) => {
                            let ended = self.close_group(cursor, entries, true);
                            let settled = match ended {
                                // Alone in its group: the group's time is its own.
                                Some(ended) if !ended.others => {
                                    distrust_late(settled, entry.timeout, ended.took)
                                }
                                // Which hook of the group blocked is not known; its neighbours
                                // were charged (see `close_group`) and its answer stands.
                                _ => settled,
                            };
                            let share = ended.map_or(Duration::ZERO, |ended| ended.share);
                            self.apply(entry, mode, settled, share)
                        }
                        Err(future) => {
                            self.close_group(cursor, entries, false);
                            return Next::Later(entry, future);
                        }
                    }
                }
                Err(message) => {
                    self.close_group(cursor, entries, false);
                    cursor.now = None;
                    let settled = Settled::failed(RunStatus::Crashed, message);
                    self.apply(entry, mode, settled, Duration::ZERO)
                }
            };
            if let Step::Stop = step {
                return Next::Stop;
            }
            if self
                .outcome
                .runs
                .records()
                .last()
                .is_some_and(|run| run.rewrote)
            {
                cursor.now = None; // the rewrite cloned the payload
            }
        }
        self.close_group(cursor, entries, false);
        Next::End
    }

    /// Ends the open group, if any, with one clock reading: each of its hooks is recorded with
    /// an even share of the group's time (`closer`: one more hook, not recorded yet, ends it).
    ///
    /// A hook answering at once cannot be interrupted, and its own time is at most the group's.
    /// So when the group took no longer than its shortest deadline, nobody overran. When it took
    /// longer (some in-process hook blocked its thread for a second or more), the dispatcher
    /// cannot tell which one: every hook of the group whose deadline the group's time passed is
    /// recorded as `timed_out`. They are `fail_open` hooks that answered a plain allow, so the
    /// fold is the same either way; only their records and the log say what happened.
    fn close_group(
        &mut self,
        cursor: &mut Cursor,
        entries: &[Entry],
        closer: bool,
    ) -> Option<GroupEnd> {
        let group = cursor.group.take()?;
        let end = Instant::now();
        cursor.now = Some(end);
        let took = end.saturating_duration_since(group.start);
        let members = self.outcome.runs.len() - group.first;
        let hooks = u32::try_from(members + usize::from(closer)).unwrap_or(u32::MAX);
        let share = took.checked_div(hooks).unwrap_or(took);
        let records = self.outcome.runs.records_mut();
        for record in records.iter_mut().skip(group.first) {
            record.duration = share;
        }
        if took > group.shortest && members > 0 {
            self.time_out_group(group.first, took, entries);
        }
        Some(GroupEnd {
            took,
            share,
            others: members > 0,
        })
    }

    /// Records the hooks of an overrunning group (from record `first` on) whose deadline its
    /// time `took` passed as `timed_out`.
    #[cold]
    fn time_out_group(&mut self, first: usize, took: Duration, entries: &[Entry]) {
        let together = self.outcome.runs.len() - first;
        for i in first..self.outcome.runs.len() {
            let run = self.outcome.runs.records()[i].clone();
            let Some(entry) = entries.get(run.hook as usize) else {
                continue; // not reached: records index the entries they were made from
            };
            if took <= entry.timeout {
                continue;
            }
            let message = format!(
                "deadline of {} s passed: the {together} hooks that answered at once with it took {} ms together (one of them blocked its thread)",
                entry.timeout.as_secs(),
                took.as_millis()
            );
            let mut run = run;
            run.decision = None;
            self.failed(
                entry,
                DispatchMode::Blocking,
                RunStatus::TimedOut,
                message,
                &mut run,
            );
            self.outcome.runs.records_mut()[i] = run;
        }
    }

    /// Notification events: every matching hook at once; decisions are recorded, not folded.
    pub(super) async fn run_concurrently(
        &mut self,
        hooks: &EventHooks,
        background: &Background,
        observer: Option<&Arc<dyn DetachedObserver>>,
    ) {
        let candidates = hooks.candidates(self.ctx.payload().match_target());
        let mut selected = Vec::new();
        for entry in candidates.iter() {
            if self.outcome.runs.is_empty() {
                self.outcome.runs.begin(candidates.names(), 0);
            }
            match triggers(entry, &self.ctx) {
                Ok(false) => {}
                Ok(true) if entry.fire_and_forget => {
                    let ctx = self.ctx.clone();
                    self.detach(entry, ctx, background, observer);
                }
                Ok(true) => selected.push((entry, Ok(()))),
                Err(message) => selected.push((entry, Err(message))),
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

    /// Hands a fire-and-forget hook to the background queue and records that it did (or that
    /// the queue was full and the hook was dropped).
    fn detach(
        &mut self,
        entry: &Entry,
        ctx: HookContext,
        background: &Background,
        observer: Option<&Arc<dyn DetachedObserver>>,
    ) {
        let queued = background.detach(entry, ctx, observer.cloned());
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

/// The record of a hook that answered a plain allow; its duration is filled when its group
/// ends.
#[inline(always)]
fn plain_allow(entry: &Entry) -> HookRun {
    HookRun {
        hook: entry.index,
        kind: entry.kind,
        source: entry.source,
        status: RunStatus::Completed,
        decision: Some(Decision::Allow),
        error: None,
        failure_mode: entry.failure_mode,
        duration: Duration::ZERO,
        rewrote: false,
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
