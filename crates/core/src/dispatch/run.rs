//! Running one hook: matcher, deadline, panic and error isolation.

use std::any::Any;
use std::future::poll_fn;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::task::{Context, Poll};
use std::time::Duration;

use quanta::Instant;

use tokio::time::timeout;
use tollgate_protocol::{Outcome, RunStatus};

use crate::hook::{BoxFuture, Hook, HookContext, HookError};
use crate::registry::Entry;

/// How one hook run ended, before the failure mode is applied.
///
/// A failure is boxed: the answer is the common case, and keeping this the size of an
/// [`Outcome`] (with no bytes that only the failure uses) keeps moving it cheap.
pub(crate) enum Settled {
    /// The hook answered.
    Answered(Outcome),
    /// The hook failed.
    Failed(Box<Failure>),
}

/// A hook failure: its status and message.
pub(crate) struct Failure {
    pub(crate) status: RunStatus,
    pub(crate) error: String,
}

impl Settled {
    pub(crate) fn failed(status: RunStatus, error: String) -> Self {
        Self::Failed(Box::new(Failure { status, error }))
    }
}

/// A caught panic's payload.
pub(crate) type Panic = Box<dyn Any + Send>;

/// Asks the hook's code matcher, catching a panic (see [`matcher_panicked`]). The payload is
/// returned as it is, two words: a message would cost a copy per hook.
#[inline(always)]
pub(crate) fn triggers(entry: &Entry, ctx: &HookContext) -> Result<bool, Panic> {
    catch_unwind(AssertUnwindSafe(|| entry.hook.should_trigger(ctx)))
}

/// The error of a run whose matcher panicked.
pub(crate) fn matcher_panicked(panic: Panic) -> String {
    format!("should_trigger panicked: {}", panic_message(panic))
}

/// How a run settled, when it ended and how long it took.
pub(crate) struct Ran {
    pub(crate) settled: Settled,
    pub(crate) end: Instant,
    pub(crate) took: Duration,
}

/// How far a hook got without waiting.
pub(crate) enum Started<'a> {
    /// It answered (or failed): through [`Hook::execute_now`], or its future finished on the
    /// first poll.
    Done(Ran),
    /// Its future is pending after the first poll: [`finish`] it.
    Pending(HookFuture<'a>),
}

/// A hook's [`Hook::execute`] future.
pub(crate) type HookFuture<'a> = BoxFuture<'a, Result<Outcome, HookError>>;

/// Runs the hook as far as it goes without waiting, turning a panic or an error into a
/// failure: [`Hook::execute_now`], else its future polled once with `cx`. `start` is a clock
/// reading taken just before; the deadline counts from it.
///
/// Most in-process hooks finish on their first poll; only those that do not are put under a
/// timer (in [`finish`]), which keeps the common path free of timer registration and of await
/// points: a chain runs such hooks from a plain function.
#[inline(always)]
pub(crate) fn start<'a>(
    hook: &'a dyn Hook,
    deadline: Duration,
    ctx: &HookContext,
    start: Instant,
    cx: &mut Context<'_>,
) -> Started<'a> {
    let settled = match answer_now(hook, ctx, cx) {
        Answer::PlainAllow => Settled::Answered(Outcome::allow()),
        Answer::Settled(settled) => settled,
        Answer::Pending(future) => return Started::Pending(future),
    };
    Started::Done(ended(settled, deadline, start))
}

/// How far a hook got without waiting, before any clock reading.
pub(crate) enum Answer<'a> {
    /// It answered a plain allow ([`Outcome::is_plain_allow`]): told apart at once, because it
    /// is the common answer and needs nothing but its record.
    PlainAllow,
    /// Any other answer, or a failure.
    Settled(Settled),
    /// Its future is pending after the first poll.
    Pending(HookFuture<'a>),
}

/// [`start`] without the clock: the hook's answer (or failure) when it gave one without
/// waiting, else its future, pending after the first poll. The caller times the run.
#[inline(always)]
pub(crate) fn answer_now<'a>(
    hook: &'a dyn Hook,
    ctx: &HookContext,
    cx: &mut Context<'_>,
) -> Answer<'a> {
    match catch_unwind(AssertUnwindSafe(|| hook.execute_now(ctx))) {
        Ok(Some(Ok(outcome))) if outcome.is_plain_allow() => Answer::PlainAllow,
        Ok(Some(answer)) => Answer::Settled(settled(answer)),
        Ok(None) => answer_by_future(hook, ctx, cx),
        Err(panic) => Answer::Settled(crashed(panic)),
    }
}

/// For a hook that did not answer through [`Hook::execute_now`]: its future, polled once with
/// `cx`, a panic caught (also while building it).
#[inline(always)]
pub(crate) fn answer_by_future<'a>(
    hook: &'a dyn Hook,
    ctx: &HookContext,
    cx: &mut Context<'_>,
) -> Answer<'a> {
    let settled = match catch_unwind(AssertUnwindSafe(|| hook.execute(ctx.clone()))) {
        Ok(mut future) => match poll_settled(&mut future, cx) {
            Some(Settled::Answered(outcome)) if outcome.is_plain_allow() => {
                return Answer::PlainAllow;
            }
            Some(settled) => settled,
            None => return Answer::Pending(future),
        },
        Err(panic) => crashed(panic),
    };
    Answer::Settled(settled)
}

/// Awaits a hook's future that was pending after its first poll, under what is left of its
/// deadline (counted from `start`).
pub(crate) async fn finish(mut future: HookFuture<'_>, deadline: Duration, start: Instant) -> Ran {
    let rest = poll_fn(|cx| match poll_settled(&mut future, cx) {
        Some(settled) => Poll::Ready(settled),
        None => Poll::Pending,
    });
    // Boxed so the timer lives on the heap only for hooks that need it; inline, it would bloat
    // the state of every future that runs hooks.
    let settled = match Box::pin(timeout(deadline.saturating_sub(start.elapsed()), rest)).await {
        Ok(settled) => settled,
        Err(_) => timed_out(deadline, None),
    };
    ended(settled, deadline, start)
}

/// Runs the hook under its deadline, counted from `start` (a clock reading taken just before),
/// turning a panic or an error into a failure: [`start`], then [`finish`] if it must wait.
pub(crate) async fn run(
    hook: &dyn Hook,
    deadline: Duration,
    ctx: &HookContext,
    begun: Instant,
) -> Ran {
    match poll_fn(|cx| Poll::Ready(start(hook, deadline, ctx, begun, cx))).await {
        Started::Done(ran) => ran,
        Started::Pending(future) => finish(future, deadline, begun).await,
    }
}

/// Reads the clock once: the run's end and duration. A hook that blocked its thread cannot be
/// interrupted, but its late answer is not trusted.
#[inline(always)]
fn ended(settled: Settled, deadline: Duration, start: Instant) -> Ran {
    let end = Instant::now();
    let took = end.saturating_duration_since(start);
    let settled = distrust_late(settled, deadline, took);
    Ran { settled, end, took }
}

/// An answer that came after the deadline (`took` is the run's time) is not trusted: the run
/// timed out.
#[inline(always)]
pub(crate) fn distrust_late(settled: Settled, deadline: Duration, took: Duration) -> Settled {
    match settled {
        Settled::Answered(_) if took > deadline => timed_out(deadline, Some(took)),
        settled => settled,
    }
}

/// Polls the hook's future once, catching a panic; `None` while it is pending. A future that
/// panicked is never polled again: the panic is its answer.
fn poll_settled(future: &mut HookFuture<'_>, cx: &mut Context<'_>) -> Option<Settled> {
    match catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx))) {
        Ok(Poll::Ready(answer)) => Some(settled(answer)),
        Ok(Poll::Pending) => None,
        Err(panic) => Some(crashed(panic)),
    }
}

#[inline(always)]
pub(crate) fn settled(answer: Result<Outcome, HookError>) -> Settled {
    match answer {
        Ok(outcome) => Settled::Answered(outcome),
        Err(error) => Settled::failed(error.kind().into(), error.message().to_owned()),
    }
}

fn timed_out(deadline: Duration, blocked_for: Option<Duration>) -> Settled {
    let deadline = deadline.as_secs();
    let message = match blocked_for {
        None => format!("deadline of {deadline} s passed"),
        Some(took) => format!(
            "deadline of {deadline} s passed: the hook answered after {} ms (it blocked its thread)",
            took.as_millis()
        ),
    };
    Settled::failed(RunStatus::TimedOut, message)
}

pub(crate) fn crashed(panic: Panic) -> Settled {
    Settled::failed(
        RunStatus::Crashed,
        format!("panicked: {}", panic_message(panic)),
    )
}

/// The message of a panic payload. The payload is disposed of without letting its own `Drop`
/// unwind into the dispatcher (a payload whose destructor panics is leaked instead).
pub(crate) fn panic_message(panic: Box<dyn Any + Send>) -> String {
    let message = if let Some(text) = panic.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = panic.downcast_ref::<String>() {
        text.clone()
    } else {
        "non-string panic payload".to_owned()
    };
    if let Err(second) = catch_unwind(AssertUnwindSafe(move || drop(panic))) {
        std::mem::forget(second);
    }
    message
}
