//! Waiting for detached (fire-and-forget) hooks: `Background::idle`.

use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use futures::task::{ArcWake, waker};
use tokio::sync::Notify;
use tollgate_core::{Background, Dispatcher, HookOptions, RegistryBuilder, hook_fn};
use tollgate_protocol::{Event, EventData, Outcome, Payload, RunStatus};

use crate::support::common;

/// A waker that counts its wakes and tells a task about them.
#[derive(Default)]
struct Wakes {
    count: AtomicUsize,
    woken: Notify,
}

impl ArcWake for Wakes {
    fn wake_by_ref(this: &Arc<Self>) {
        this.count.fetch_add(1, Ordering::SeqCst);
        this.woken.notify_one();
    }
}

#[tokio::test(start_paused = true)]
async fn idle_is_woken_by_the_last_detached_hook_ending_not_by_a_timer() {
    let gate = Arc::new(Notify::new());
    let mut hooks = RegistryBuilder::new();
    let held = gate.clone();
    hooks.register_with(
        Event::SessionEnd,
        hook_fn("webhook", move |_| {
            let held = held.clone();
            async move {
                held.notified().await;
                Ok(Outcome::allow())
            }
        }),
        HookOptions::default().fire_and_forget(true),
    );
    let background = Background::default();
    let dispatcher = Dispatcher::new(hooks.build().unwrap()).with_background(background.clone());
    let end = tollgate_protocol::SessionEnd {
        status: tollgate_protocol::SessionEndStatus::Completed,
        error: None,
        answer: None,
        continued: 0,
    };
    let outcome = dispatcher
        .dispatch(Arc::new(Payload::new(
            common("r"),
            EventData::SessionEnd(end),
        )))
        .await;
    assert_eq!(outcome.runs[0].status, RunStatus::Detached);

    let wakes = Arc::new(Wakes::default());
    let waker = waker(wakes.clone());
    let mut cx = Context::from_waker(&waker);
    let mut idle = pin!(background.idle());
    assert!(
        idle.as_mut().poll(&mut cx).is_pending(),
        "the hook is running"
    );
    // A wait that polled on a timer would be woken by now; this one has nothing to wake it.
    tokio::time::advance(Duration::from_secs(1)).await;
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    assert_eq!(
        wakes.count.load(Ordering::SeqCst),
        0,
        "woken while the hook ran"
    );
    assert_eq!(background.pending(), 1);

    gate.notify_one();
    wakes.woken.notified().await; // the hook's end wakes the wait
    assert_eq!(background.pending(), 0);
    assert_eq!(idle.as_mut().poll(&mut cx), Poll::Ready(()));
}

#[tokio::test]
async fn idle_returns_at_once_when_nothing_is_detached() {
    Background::default().idle().await;
}
