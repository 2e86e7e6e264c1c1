//! Fire-and-forget http hooks ride tollgate-core's bounded background queue.

use crate::logs::Captured;
use std::sync::Arc;
use std::time::Duration;

use axum::http::StatusCode;
use axum::response::IntoResponse;
use tokio::sync::Semaphore;
use tollgate_core::{Background, Dispatcher, HookOptions, RegistryBuilder};
use tollgate_protocol::{Event, RunStatus};

use super::{Receiver, hook, session_end};

/// A receiver that holds every request until the test lets it answer.
async fn held_receiver(gate: Arc<Semaphore>, status: StatusCode) -> Receiver {
    Receiver::start(move |_| {
        let gate = gate.clone();
        async move {
            let _permit = gate.acquire().await.unwrap();
            status.into_response()
        }
    })
    .await
}

fn detached_dispatcher(urls: &[(&str, String)], background: &Background) -> Dispatcher {
    let mut registry = RegistryBuilder::new();
    for (name, url) in urls {
        let hook = tollgate_handlers::HttpHook::new(*name, url, &super::loopback()).unwrap();
        let options = HookOptions::default().fire_and_forget(true);
        registry.register_with(Event::SessionEnd, hook, options);
    }
    Dispatcher::new(registry.build().unwrap()).with_background(background.clone())
}

async fn eventually(what: &str, condition: impl Fn() -> bool) {
    for _ in 0..500 {
        if condition() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("never happened: {what}");
}

#[tokio::test]
async fn dispatch_returns_without_waiting_for_the_receiver() {
    let gate = Arc::new(Semaphore::new(0));
    let receiver = held_receiver(gate.clone(), StatusCode::NO_CONTENT).await;
    let background = Background::default();
    let dispatcher = detached_dispatcher(&[("end", receiver.url())], &background);

    let outcome = tokio::time::timeout(Duration::from_secs(5), dispatcher.dispatch(session_end()))
        .await
        .expect("the dispatch waited for a receiver that does not answer");
    assert_eq!(outcome.runs[0].status, RunStatus::Detached);

    // The delivery goes out in the background, while the receiver still holds its answer.
    eventually("the receiver got the delivery", || receiver.hits() == 1).await;
    assert_eq!(background.pending(), 1);
    gate.add_permits(1);
    eventually("the detached hook finished", || background.pending() == 0).await;
    assert_eq!(
        receiver.seen()[0].header("x-webhook-event"),
        Some("session_end")
    );
}

#[tokio::test]
async fn a_full_queue_drops_the_hook_with_a_warning() {
    let captured = Captured::default();
    let _guard = captured.install();
    let gate = Arc::new(Semaphore::new(0));
    let receiver = held_receiver(gate.clone(), StatusCode::NO_CONTENT).await;
    let background = Background::new(1, 1);
    let hooks = [("first", receiver.url()), ("second", receiver.url())];
    let dispatcher = detached_dispatcher(&hooks, &background);

    let outcome = dispatcher.dispatch(session_end()).await;
    let status = |name: &str| outcome.runs.iter().find(|r| r.name == name).unwrap().status;
    assert_eq!(status("first"), RunStatus::Detached);
    assert_eq!(status("second"), RunStatus::Dropped);
    let log = captured.text();
    assert!(
        log.contains("WARN") && log.contains("background queue full") && log.contains("second"),
        "{log}"
    );

    gate.add_permits(1);
    eventually("the detached hook finished", || background.pending() == 0).await;
    assert_eq!(receiver.hits(), 1, "the dropped hook sent nothing");
}

#[tokio::test]
async fn a_detached_failure_is_logged_at_warn() {
    let captured = Captured::default();
    let _guard = captured.install();
    let receiver = Receiver::replying(503, "maintenance").await;
    let background = Background::default();
    let dispatcher = detached_dispatcher(&[("audit", receiver.url())], &background);

    let outcome = dispatcher.dispatch(session_end()).await;
    assert_eq!(outcome.runs[0].status, RunStatus::Detached);
    eventually("the detached hook finished", || background.pending() == 0).await;
    let log = captured.text();
    assert!(
        log.contains("WARN") && log.contains("detached hook failed") && log.contains("503"),
        "{log}"
    );
    // A notification hook's options are the only difference: the same hook, not detached.
    let mut registry = RegistryBuilder::new();
    registry.register(Event::SessionEnd, hook(&receiver.url()));
    let outcome = Dispatcher::new(registry.build().unwrap())
        .dispatch(session_end())
        .await;
    assert_eq!(outcome.runs[0].status, RunStatus::Errored);
}
