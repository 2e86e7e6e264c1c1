//! The bounded queue that fire-and-forget hooks are detached onto (notification events never wait for them; `docs/architecture.md`).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::{Notify, Semaphore};
use tollgate_protocol::Event;

use tollgate_protocol::{Outcome, Payload, RunStatus};

use crate::dispatch::run::{Settled, run};
use crate::dispatch::{HookRun, NamedRun};
use crate::hook::HookContext;
use crate::registry::Entry;

/// Sees how each fire-and-forget hook run ended, after the dispatch that detached it returned
/// (the dispatch itself recorded only `detached`). For audit trails: a detached hook's failure
/// must show up as one. Attach with [`Dispatcher::with_detached_observer`](crate::Dispatcher::with_detached_observer).
///
/// `finished` runs on the background task, synchronously: keep it short. A panic is caught and
/// logged at WARN.
pub trait DetachedObserver: Send + Sync + 'static {
    /// One detached run ended: `run` has its final status (`completed`, `timed_out`, …), its
    /// decision when it answered, its error when it failed, and its duration; `answer` is what
    /// it answered, if it did (an advisory hook's context and side effects are for the caller
    /// to act on later: the dispatch that detached it has long returned).
    fn finished(&self, payload: &Payload, run: NamedRun<'_>, answer: Option<&Outcome>);
}

/// A count of detached runs, each counted from its detach until its task ended (after its
/// observer heard how it ended), with a wait for none to be left: the runs of `awaited` hooks
/// one dispatcher started ([`HookOptions::awaited`](crate::HookOptions)), the runs of
/// non-advisory hooks a queue holds. Cloning shares the count.
#[derive(Clone, Debug, Default)]
pub(crate) struct RunCount(Arc<CountInner>);

#[derive(Debug, Default)]
struct CountInner {
    running: AtomicUsize,
    /// Told when the count drops to zero.
    idle: Notify,
}

/// One counted run: uncounted when dropped (its task ended, or it was never queued).
pub(crate) struct Counted(Arc<CountInner>);

impl Drop for Counted {
    fn drop(&mut self) {
        if self.0.running.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

impl RunCount {
    /// Counts one run until the returned guard is dropped.
    pub(crate) fn begin(&self) -> Counted {
        self.0.running.fetch_add(1, Ordering::AcqRel);
        Counted(self.0.clone())
    }

    /// Waits until no counted run is left (at once when none is).
    pub(crate) async fn idle(&self) {
        loop {
            let notified = self.0.idle.notified();
            let mut notified = std::pin::pin!(notified);
            // Registered before the count is read, so a run ending in between still wakes us.
            notified.as_mut().enable();
            if self.0.running.load(Ordering::Acquire) == 0 {
                return;
            }
            notified.await;
        }
    }
}

/// Where fire-and-forget hooks of notification events run: detached from the dispatch, at most
/// `capacity` waiting or running at once and at most `in_flight` running at once (runs of
/// `awaited` hooks do not wait for a slot: their caller waits for them). A hook
/// detached onto a full queue is dropped and logged at WARN; a detached hook's failure is
/// logged at WARN. Detached hooks keep their deadline.
///
/// Cloning shares the queue: give one to every [`Dispatcher`](crate::Dispatcher) of a process
/// to bound them together (by default each dispatcher has its own).
#[derive(Clone, Debug)]
pub struct Background {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    capacity: usize,
    pending: AtomicUsize,
    /// The pending runs of hooks that are not advisory ([`Background::settled`]).
    required: RunCount,
    in_flight: Arc<Semaphore>,
    /// Told when the pending count drops to zero.
    idle: Notify,
}

/// Decrements the pending count when a detached run ends, also when its task is cancelled,
/// and wakes [`Background::idle`] waiters when it was the last one.
struct Pending(Arc<Inner>);

impl Drop for Pending {
    fn drop(&mut self) {
        if self.0.pending.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

impl Default for Background {
    fn default() -> Self {
        Self::new(Self::DEFAULT_CAPACITY, Self::DEFAULT_IN_FLIGHT)
    }
}

impl Background {
    /// Default number of detached hooks waiting or running.
    pub const DEFAULT_CAPACITY: usize = 1024;
    /// Default number of detached hooks running at once.
    pub const DEFAULT_IN_FLIGHT: usize = 32;

    /// A queue holding at most `capacity` hooks, running at most `in_flight` of them at once
    /// (both at least 1).
    pub fn new(capacity: usize, in_flight: usize) -> Self {
        Self {
            inner: Arc::new(Inner {
                capacity: capacity.max(1),
                pending: AtomicUsize::new(0),
                required: RunCount::default(),
                in_flight: Arc::new(Semaphore::new(in_flight.max(1))),
                idle: Notify::new(),
            }),
        }
    }

    /// Detached hooks waiting or running now.
    pub fn pending(&self) -> usize {
        self.inner.pending.load(Ordering::Acquire)
    }

    /// Waits until no detached hook is waiting or running: returns at once when none is, else
    /// when the last one ends (woken by its end, not by polling). Hooks detached meanwhile are
    /// waited for too. Used before a process exits, so that detached hooks (a session-end
    /// webhook) finish within their deadline instead of being dropped.
    ///
    /// # Cancel safety
    /// Cancel safe: dropping the future only stops the wait.
    pub async fn idle(&self) {
        loop {
            let notified = self.inner.idle.notified();
            let mut notified = std::pin::pin!(notified);
            // Registered before the count is read, so a run ending in between still wakes us.
            notified.as_mut().enable();
            if self.pending() == 0 {
                return;
            }
            notified.await;
        }
    }

    /// Waits until no detached run of a hook that is not advisory
    /// ([`HookOptions::advisory`](crate::HookOptions)) is waiting or running: what a process
    /// about to exit owes its notification hooks (a session-end webhook), without waiting for
    /// hooks whose answers nobody reads any more (Claude Code's `async` hooks).
    ///
    /// # Cancel safety
    /// Cancel safe: dropping the future only stops the wait.
    pub async fn settled(&self) {
        self.inner.required.idle().await;
    }

    /// Spawns the hook onto the current Tokio runtime, or returns `false` when the queue is
    /// full.
    pub(crate) fn detach(
        &self,
        entry: &Entry,
        ctx: HookContext,
        observer: Option<Arc<dyn DetachedObserver>>,
        awaited: Option<Counted>,
    ) -> bool {
        let (hook, name, index) = (entry.hook.clone(), entry.name.clone(), entry.index);
        let deadline = entry.timeout;
        let (kind, source, failure_mode) = (entry.kind, entry.source, entry.failure_mode);
        let inner = &self.inner;
        if inner.pending.fetch_add(1, Ordering::AcqRel) >= inner.capacity {
            inner.pending.fetch_sub(1, Ordering::AcqRel);
            return false;
        }
        let pending = Pending(inner.clone());
        let required = (!entry.detached_everywhere).then(|| inner.required.begin());
        let in_flight = inner.in_flight.clone();
        tokio::spawn(async move {
            let _pending = pending;
            let _required = required;
            // Dropped last, once the observer heard how the run ended.
            let _awaited = awaited;
            // An awaited run does not queue behind others: its caller waits for it, and would
            // otherwise wait for every slow hook that holds a slot.
            let _permit = if _awaited.is_some() {
                None
            } else {
                match in_flight.acquire_owned().await {
                    Ok(permit) => Some(permit),
                    Err(_) => return,
                }
            };
            let event = ctx.event();
            let payload = observer.as_ref().map(|_| ctx.payload_arc().clone());
            let start = quanta::Instant::now();
            let ran = run(&*hook, deadline, &ctx, start).await;
            let (status, decision, error, answer) = match &ran.settled {
                Settled::Answered(outcome) => (
                    RunStatus::Completed,
                    Some(outcome.decision.clone()),
                    None,
                    Some(outcome),
                ),
                Settled::Failed(failure) => {
                    (failure.status, None, Some(failure.error.clone()), None)
                }
            };
            if let (Some(observer), Some(payload)) = (observer, payload) {
                let record = HookRun {
                    hook: index,
                    kind,
                    source,
                    status,
                    decision,
                    error,
                    failure_mode,
                    duration: ran.took,
                    rewrote: false,
                };
                // An observer's panic must not take the queue's task down with a message-less
                // abort; it is logged like a DispatchObserver's.
                let seen = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    let name = &name;
                    let run = NamedRun { name, run: &record };
                    observer.finished(&payload, run, answer);
                }));
                if seen.is_err() {
                    tracing::warn!(hook = %name, "a detached-run observer panicked");
                }
            }
            log_detached(&name, &event, ran.settled, ran.took);
        });
        true
    }
}

fn log_detached(hook: &str, event: &Event, settled: Settled, took: Duration) {
    let duration_ms = took.as_millis();
    match settled {
        Settled::Answered(_) => {
            tracing::debug!(hook, %event, duration_ms, "detached hook completed");
        }
        Settled::Failed(failure) => {
            tracing::warn!(
                hook, %event, duration_ms, status = failure.status.as_str(), error = %failure.error,
                "detached hook failed"
            );
        }
    }
}
