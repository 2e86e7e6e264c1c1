//! Running one hook: matcher, deadline, panic and error isolation.

use std::any::Any;
use std::future::{Future, poll_fn};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::pin;
use std::task::Poll;
use std::time::Instant;

use futures::FutureExt;
use tokio::time::timeout;
use tollgate_protocol::{Outcome, RunStatus};

use crate::hook::HookContext;
use crate::registry::Entry;

/// How one hook run ended, before the failure mode is applied.
pub(crate) enum Settled {
    /// The hook answered.
    Answered(Outcome),
    /// The hook failed.
    Failed(RunStatus, String),
}

/// Asks the hook's code matcher. A panic is reported as the message of a crashed run.
pub(crate) fn triggers(entry: &Entry, ctx: &HookContext) -> Result<bool, String> {
    catch_unwind(AssertUnwindSafe(|| entry.hook.should_trigger(ctx)))
        .map_err(|panic| format!("should_trigger panicked: {}", panic_message(&*panic)))
}

/// Runs the hook under its deadline, counted from `start`, turning a panic or an error into a
/// failure.
pub(crate) async fn run(entry: &Entry, ctx: HookContext, start: Instant) -> Settled {
    let future = match catch_unwind(AssertUnwindSafe(|| entry.hook.execute(ctx))) {
        Ok(future) => future,
        Err(panic) => return crashed(&*panic),
    };
    let mut future = pin!(AssertUnwindSafe(future).catch_unwind());
    // Most in-process hooks finish on their first poll; only those that do not are put
    // under a timer, which keeps the common path free of timer registration.
    let answer = match poll_once(future.as_mut()).await {
        Some(answer) => answer,
        None => match timeout(entry.timeout.saturating_sub(start.elapsed()), future).await {
            Ok(answer) => answer,
            Err(_) => {
                return Settled::Failed(
                    RunStatus::TimedOut,
                    format!("deadline of {} s passed", entry.timeout.as_secs()),
                );
            }
        },
    };
    match answer {
        Ok(Ok(outcome)) => Settled::Answered(outcome),
        Ok(Err(error)) => Settled::Failed(error.kind().into(), error.message().to_owned()),
        Err(panic) => crashed(&*panic),
    }
}

async fn poll_once<F: Future + Unpin>(mut future: F) -> Option<F::Output> {
    poll_fn(|cx| match future.poll_unpin(cx) {
        Poll::Ready(output) => Poll::Ready(Some(output)),
        Poll::Pending => Poll::Ready(None),
    })
    .await
}

fn crashed(panic: &(dyn Any + Send)) -> Settled {
    Settled::Failed(
        RunStatus::Crashed,
        format!("panicked: {}", panic_message(panic)),
    )
}

fn panic_message(panic: &(dyn Any + Send)) -> String {
    if let Some(text) = panic.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = panic.downcast_ref::<String>() {
        text.clone()
    } else {
        "non-string panic payload".to_owned()
    }
}
