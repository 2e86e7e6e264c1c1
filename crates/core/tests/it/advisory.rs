//! Advisory fire-and-forget hooks (Claude Code's `async` hooks): detached on every event, their
//! answers never decide, and their context reaches the detached-run observer.

use std::sync::{Arc, Mutex};

use serde_json::json;
use tokio::sync::oneshot;
use tollgate_core::{
    Background, DetachedObserver, Dispatcher, HookOptions, NamedRun, RegistryBuilder, hook_fn,
};
use tollgate_protocol::{Decision, Event, Outcome, Payload, RunStatus};

use crate::support::{post_tool_use, pre_tool_use};

/// One ended run as the observer heard it: the hook's name, its status, its decision and its
/// context.
type Ended = (String, RunStatus, Option<String>, Option<String>);

#[derive(Default)]
struct Heard(Mutex<Vec<Ended>>);

impl DetachedObserver for Heard {
    fn finished(&self, _: &Payload, run: NamedRun<'_>, answer: Option<&Outcome>) {
        let decision = run.decision.as_ref().map(|d| d.as_str().to_owned());
        let context = answer.and_then(Outcome::additional_context);
        self.0.lock().unwrap().push((
            run.name.to_owned(),
            run.status,
            decision,
            context.map(str::to_owned),
        ));
    }
}

fn advisory() -> HookOptions {
    HookOptions::default().fire_and_forget(true).advisory(true)
}

#[tokio::test(start_paused = true)]
async fn an_advisory_hook_on_pre_tool_use_is_detached_and_its_deny_decides_nothing() {
    let (release, released) = oneshot::channel::<()>();
    let released = Arc::new(Mutex::new(Some(released)));
    let mut hooks = RegistryBuilder::new();
    hooks.register_with(
        Event::PreToolUse,
        hook_fn("slow-tests", move |_| {
            let released = released.lock().unwrap().take();
            async move {
                if let Some(released) = released {
                    let _ = released.await;
                }
                Ok(Outcome::deny("the tests fail").with_context("3 tests failed"))
            }
        }),
        advisory(),
    );
    let background = Background::default();
    let heard = Arc::new(Heard::default());
    let dispatcher = Dispatcher::new(hooks.build().unwrap())
        .with_background(background.clone())
        .with_detached_observer(heard.clone());

    // Were the hook waited for, it would still be blocked here: it is released only below.
    let outcome = dispatcher
        .dispatch(pre_tool_use(
            "bash_code_execute_tool",
            json!({"command": "make"}),
        ))
        .await;
    assert_eq!(outcome.decision, Decision::Allow);
    assert_eq!(outcome.runs.len(), 1);
    assert_eq!(outcome.runs[0].status, RunStatus::Detached);
    assert!(outcome.additional_context.is_empty());
    assert!(heard.0.lock().unwrap().is_empty(), "ended before release");

    release.send(()).unwrap();
    background.idle().await;
    let heard = heard.0.lock().unwrap().clone();
    assert_eq!(
        heard,
        vec![(
            "slow-tests".to_owned(),
            RunStatus::Completed,
            Some("deny".to_owned()),
            Some("3 tests failed".to_owned())
        )]
    );
}

#[tokio::test(start_paused = true)]
async fn a_detached_hook_sees_earlier_rewrites_and_later_hooks_still_decide() {
    let seen = Arc::new(Mutex::new(None));
    let mut hooks = RegistryBuilder::new();
    hooks.register_with(
        Event::PreToolUse,
        hook_fn("dry-run", |_| async {
            Ok(Outcome::allow().with_args(json!({"command": "make -n"})))
        }),
        HookOptions::default().priority(1),
    );
    let saw = seen.clone();
    hooks.register_with(
        Event::PreToolUse,
        hook_fn("logger", move |ctx| {
            let args = ctx.payload().tool_call().map(|c| c.tool_input.clone());
            *saw.lock().unwrap() = args;
            async { Ok(Outcome::allow()) }
        }),
        advisory().priority(2),
    );
    hooks.register_with(
        Event::PreToolUse,
        hook_fn("guard", |_| async { Ok(Outcome::deny("no make")) }),
        HookOptions::default().priority(3),
    );
    let background = Background::default();
    let dispatcher = Dispatcher::new(hooks.build().unwrap()).with_background(background.clone());
    let outcome = dispatcher
        .dispatch(pre_tool_use(
            "bash_code_execute_tool",
            json!({"command": "make"}),
        ))
        .await;
    background.idle().await;
    assert!(outcome.decision.is_deny(), "{:?}", outcome.decision);
    let statuses: Vec<_> = outcome.runs.iter().map(|r| r.status).collect();
    assert_eq!(
        statuses,
        [
            RunStatus::Completed,
            RunStatus::Detached,
            RunStatus::Completed
        ]
    );
    assert_eq!(
        seen.lock().unwrap().clone(),
        Some(json!({"command": "make -n"}))
    );
}

#[tokio::test(start_paused = true)]
async fn fire_and_forget_alone_still_runs_in_line_where_its_answer_is_needed() {
    let mut hooks = RegistryBuilder::new();
    hooks.register_with(
        Event::PreToolUse,
        hook_fn("guard", |_| async { Ok(Outcome::deny("no make")) }),
        HookOptions::default().fire_and_forget(true),
    );
    hooks.register_with(
        Event::PostToolUse,
        hook_fn("redact", |_| async {
            Ok(Outcome::allow().with_result(json!("[redacted]")))
        }),
        HookOptions::default().fire_and_forget(true),
    );
    let dispatcher = Dispatcher::new(hooks.build().unwrap());
    let pre = dispatcher
        .dispatch(pre_tool_use(
            "bash_code_execute_tool",
            json!({"command": "make"}),
        ))
        .await;
    assert!(pre.decision.is_deny());
    assert_eq!(pre.runs[0].status, RunStatus::Completed);
    let post = dispatcher
        .dispatch(post_tool_use("bash_code_execute_tool", json!("secret")))
        .await;
    assert_eq!(post.modified_result, Some(json!("[redacted]")));
}

/// A hook that answers `deny` with context once `release` fires.
fn blocked_until(name: &str, release: oneshot::Receiver<()>) -> impl tollgate_core::Hook {
    let release = Arc::new(Mutex::new(Some(release)));
    hook_fn(name, move |_| {
        let release = release.lock().unwrap().take();
        async move {
            if let Some(release) = release {
                let _ = release.await;
            }
            Ok(Outcome::deny("the tests fail").with_context("3 tests failed"))
        }
    })
}

#[tokio::test]
async fn the_caller_can_wait_for_awaited_detached_hooks_and_only_those() {
    use futures::FutureExt;

    let (release_awaited, awaited_gate) = oneshot::channel::<()>();
    let (_release_other, other_gate) = oneshot::channel::<()>();
    let mut hooks = RegistryBuilder::new();
    hooks.register_with(
        Event::PreToolUse,
        blocked_until("rewake", awaited_gate),
        advisory().awaited(true),
    );
    hooks.register_with(
        Event::PreToolUse,
        blocked_until("logger", other_gate),
        advisory(),
    );
    let heard = Arc::new(Heard::default());
    let dispatcher = Dispatcher::new(hooks.build().unwrap()).with_detached_observer(heard.clone());
    let outcome = dispatcher
        .dispatch(pre_tool_use(
            "bash_code_execute_tool",
            json!({"command": "make"}),
        ))
        .await;
    assert!(outcome.runs.iter().all(|r| r.status == RunStatus::Detached));
    assert!(dispatcher.awaited_idle().now_or_never().is_none());
    release_awaited.send(()).unwrap();
    // Ends once the awaited hook ended and was heard; the other one is still blocked.
    dispatcher.awaited_idle().await;
    let heard = heard.0.lock().unwrap().clone();
    assert_eq!(heard.len(), 1, "{heard:?}");
    assert_eq!(heard[0].0, "rewake");
    assert_eq!(heard[0].3.as_deref(), Some("3 tests failed"));
}

#[tokio::test]
async fn settled_waits_for_notification_hooks_but_not_advisory_ones() {
    use futures::FutureExt;

    let (release_webhook, webhook_gate) = oneshot::channel::<()>();
    let (_release_async, async_gate) = oneshot::channel::<()>();
    let mut hooks = RegistryBuilder::new();
    hooks.register_with(
        Event::SessionEnd,
        blocked_until("webhook", webhook_gate),
        HookOptions::default().fire_and_forget(true),
    );
    hooks.register_with(
        Event::SessionEnd,
        blocked_until("async", async_gate),
        advisory(),
    );
    let background = Background::default();
    let dispatcher = Dispatcher::new(hooks.build().unwrap()).with_background(background.clone());
    let end = tollgate_protocol::SessionEnd {
        status: tollgate_protocol::SessionEndStatus::Completed,
        error: None,
        answer: None,
        continued: 0,
    };
    let payload = Arc::new(Payload::new(crate::support::common("run-s"), end));
    let outcome = dispatcher.dispatch(payload).await;
    assert!(outcome.runs.iter().all(|r| r.status == RunStatus::Detached));
    assert!(background.settled().now_or_never().is_none());
    release_webhook.send(()).unwrap();
    // The advisory hook is still blocked: `idle` would wait for it, `settled` does not.
    background.settled().await;
    assert_eq!(background.pending(), 1);
}

#[tokio::test]
async fn an_awaited_hook_does_not_queue_behind_slow_ones() {
    let (_release_slow, slow_gate) = oneshot::channel::<()>();
    let (release_rewake, rewake_gate) = oneshot::channel::<()>();
    let mut hooks = RegistryBuilder::new();
    hooks.register_with(
        Event::PreToolUse,
        blocked_until("slow", slow_gate),
        advisory().priority(1),
    );
    hooks.register_with(
        Event::PreToolUse,
        blocked_until("rewake", rewake_gate),
        advisory().awaited(true).priority(2),
    );
    // One slot, held by the slow hook for as long as the test runs.
    let dispatcher = Dispatcher::new(hooks.build().unwrap()).with_background(Background::new(8, 1));
    dispatcher
        .dispatch(pre_tool_use(
            "bash_code_execute_tool",
            json!({"command": "make"}),
        ))
        .await;
    release_rewake.send(()).unwrap();
    // Queued behind the slow hook, it would never run: bounded so a regression fails.
    let waited = tokio::time::timeout(
        std::time::Duration::from_secs(30),
        dispatcher.awaited_idle(),
    )
    .await;
    assert!(
        waited.is_ok(),
        "the awaited hook waited for the slow one's slot"
    );
}
