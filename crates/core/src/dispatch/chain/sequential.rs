//! Blocking and result events: the chain's hooks one after the other, those that answer at once
//! run from a plain function and timed in groups.

use std::future::poll_fn;
use std::task::{Context, Poll};
use std::time::Duration;

use quanta::Instant;
use tollgate_protocol::{Decision, FailureMode, RunStatus};

use super::{Chain, DecidedBy, HookRun, Step};
use crate::candidates::{Candidates, EventHooks};
use crate::dispatch::run::{
    Answer, HookFuture, Settled, Started, answer_now, distrust_late, finish, matcher_panicked,
    start, triggers,
};
use crate::registry::{DispatchMode, Entry, HookTimeout};

const SHORTEST_DEADLINE: Duration = Duration::from_secs(HookTimeout::MIN_SECS);

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

impl Chain<'_> {
    /// Blocking and result events: one hook after the other, each seeing the previous rewrites;
    /// the first deny stops the chain.
    pub(in crate::dispatch) async fn run_sequentially(&mut self, hooks: &EventHooks) {
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
                    if cursor.group.is_none() {
                        let start = cursor.now.unwrap_or_else(Instant::now);
                        cursor.group = Some(Group { start, first });
                    }
                    match answer_now(&*entry.hook, &self.ctx, cx) {
                        Answer::PlainAllow => {
                            // Nothing to fold and nothing to time yet: only the record.
                            self.outcome.runs.push(plain_allow(entry));
                            continue;
                        }
                        Answer::Settled(settled) => {
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
                        Answer::Pending(future) => {
                            self.close_group(cursor, entries, false);
                            return Next::Later(entry, future);
                        }
                    }
                }
                Err(panic) => {
                    self.close_group(cursor, entries, false);
                    cursor.now = None;
                    let settled = Settled::failed(RunStatus::Crashed, matcher_panicked(panic));
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
        // Deadlines are whole seconds, one at least: a shorter group had nobody overrun.
        if took > SHORTEST_DEADLINE && members > 0 {
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
