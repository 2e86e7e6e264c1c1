//! Blocking and result events: the chain's hooks one after the other, those that answer at once
//! run from a plain function and timed in groups.

use std::future::poll_fn;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::task::{Context, Poll};
use std::time::Duration;

use quanta::Instant;
use tollgate_protocol::{Decision, FailureMode, RunStatus};

use super::{Chain, DecidedBy, HookRun, Step};
use crate::candidates::{Candidates, EventHooks};
use crate::dispatch::run::{
    Answer, HookFuture, Panic, Settled, Started, answer_by_future, crashed, distrust_late, finish,
    matcher_panicked, panic_message, settled, start,
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
    /// Whether the last candidate taken is in its matcher (for attributing a panic).
    in_matcher: bool,
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

/// Why [`Chain::run_plain_allows`] returned.
enum Stop<'a> {
    /// Every candidate ran.
    End,
    /// This `fail_closed` hook is to run next, timed alone.
    Alone(&'a Entry),
    /// This hook gave an answer the fold acts on, or failed.
    Answered(&'a Entry, Settled),
    /// This hook's future is pending after its first poll.
    Pending(&'a Entry, HookFuture<'a>),
    /// This hook's matcher panicked (the run's error).
    MatcherPanicked(&'a Entry, String),
    /// This advisory fire-and-forget hook is to be detached.
    Detach(&'a Entry),
}

impl Cursor {
    /// What a panic caught around [`Chain::run_plain_allows`] means: the candidate it was
    /// running when it panicked (the last one it took) crashed, in its matcher or in the hook.
    /// Hook and matcher calls are the only code there that can panic, and nothing is half-done
    /// while they run.
    #[cold]
    fn panicked<'a>(&self, entries: &'a [Entry], order: &[u32], panic: Panic) -> Stop<'a> {
        let entry = self
            .next
            .checked_sub(1)
            .and_then(|i| order.get(i))
            .and_then(|&index| entries.get(index as usize));
        let Some(entry) = entry else {
            // Not reached: a panic comes from a candidate's call. Dropping it is the safe way.
            drop(panic_message(panic));
            return Stop::End;
        };
        if self.in_matcher {
            Stop::MatcherPanicked(entry, matcher_panicked(panic))
        } else {
            Stop::Answered(entry, crashed(panic))
        }
    }
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
            in_matcher: false,
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
        loop {
            let this = &mut *self;
            let run = || this.run_plain_allows(candidates, cursor, cx);
            let stop = catch_unwind(AssertUnwindSafe(run))
                .unwrap_or_else(|panic| cursor.panicked(entries, order, panic));
            // Each arm hands its result straight to `apply`: going through a shared
            // (settled, duration) value costs a copy per hook.
            let step = match stop {
                Stop::End => break,
                Stop::Alone(entry) => {
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
                Stop::Answered(entry, settled) => {
                    let ended = self.close_group(cursor, entries, true);
                    let settled = match ended {
                        // Alone in its group: the group's time is its own.
                        Some(ended) if !ended.others => {
                            distrust_late(settled, entry.timeout, ended.took)
                        }
                        // Which hook of the group blocked is not known; its neighbours were
                        // charged (see `close_group`) and its answer stands.
                        _ => settled,
                    };
                    let share = ended.map_or(Duration::ZERO, |ended| ended.share);
                    self.apply(entry, mode, settled, share)
                }
                Stop::Pending(entry, future) => {
                    self.close_group(cursor, entries, false);
                    return Next::Later(entry, future);
                }
                Stop::Detach(entry) => {
                    // Nothing waits for it: it ends the group without joining it.
                    self.close_group(cursor, entries, false);
                    self.detach(entry);
                    Step::Continue
                }
                Stop::MatcherPanicked(entry, message) => {
                    self.begin_runs(candidates, cursor);
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

    /// Runs candidates for as long as they answer a plain allow at once: their records are all
    /// there is to do. Runs under one `catch_unwind` for all of them (see [`Cursor::panicked`]
    /// for how a panic is attributed); returns what stopped it.
    fn run_plain_allows<'a>(
        &mut self,
        candidates: &Candidates<'a>,
        cursor: &mut Cursor,
        cx: &mut Context<'_>,
    ) -> Stop<'a> {
        let (entries, order) = candidates.split();
        while let Some(&index) = order.get(cursor.next) {
            cursor.next += 1;
            let Some(entry) = entries.get(index as usize) else {
                continue; // not reached: selections index the entries they were made from
            };
            let hook = &*entry.hook;
            cursor.in_matcher = true;
            // A matcher that declines inside a group counts towards the group's time.
            if !hook.should_trigger(&self.ctx) {
                if cursor.group.is_none() {
                    cursor.now = None;
                }
                continue;
            }
            cursor.in_matcher = false;
            self.begin_runs(candidates, cursor);
            if entry.detached_everywhere {
                return Stop::Detach(entry);
            }
            if entry.failure_mode == FailureMode::FailClosed {
                return Stop::Alone(entry);
            }
            if cursor.group.is_none() {
                let start = cursor.now.unwrap_or_else(Instant::now);
                let first = self.outcome.runs.len();
                cursor.group = Some(Group { start, first });
            }
            let answer = match hook.execute_now(&self.ctx) {
                Some(Ok(outcome)) if outcome.is_plain_allow() => Answer::PlainAllow,
                Some(answer) => Answer::Settled(settled(answer)),
                None => answer_by_future(hook, &self.ctx, cx),
            };
            match answer {
                Answer::PlainAllow => self.outcome.runs.push(plain_allow(entry)),
                Answer::Settled(settled) => return Stop::Answered(entry, settled),
                Answer::Pending(future) => return Stop::Pending(entry, future),
            }
        }
        Stop::End
    }

    /// Before a hook's record: allocates the run list once, and only when a hook is about to
    /// run.
    fn begin_runs(&mut self, candidates: &Candidates<'_>, cursor: &Cursor) {
        if self.outcome.runs.is_empty() {
            let capacity = candidates.split().1.len() + 1 - cursor.next;
            self.outcome.runs.begin(candidates.names(), capacity);
        }
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
