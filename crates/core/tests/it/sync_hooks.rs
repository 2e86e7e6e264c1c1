//! Hooks that answer at once (`hook_sync`, `Hook::execute_now`) keep every dispatch rule of
//! async hooks: order, waterfall, short-circuit, failures, deadlines, notifications.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tollgate_core::{
    Dispatcher, HookError, HookOptions, HookTimeout, RegistryBuilder, hook_fn, hook_sync,
};
use tollgate_protocol::{Decision, Event, FailureMode, Outcome, Payload, RunStatus};

use crate::support::{common, pre_tool_use};

type Seen = Arc<Mutex<Vec<(String, serde_json::Value)>>>;

fn tool_input(ctx: &tollgate_core::HookContext) -> serde_json::Value {
    ctx.payload()
        .tool_call()
        .map(|c| c.tool_input.clone())
        .unwrap_or_default()
}

#[tokio::test]
async fn sync_and_async_hooks_share_one_order_waterfall_and_short_circuit() {
    let seen = Seen::default();
    let mut hooks = RegistryBuilder::new();
    let log = seen.clone();
    hooks.register(
        Event::PreToolUse,
        hook_sync("sync-rewrite", move |ctx| {
            log.lock()
                .unwrap()
                .push(("sync-rewrite".into(), tool_input(ctx)));
            Ok(Outcome::allow().with_args(json!({"command": "ls", "dry_run": true})))
        })
        .priority(1),
    );
    let log = seen.clone();
    hooks.register(
        Event::PreToolUse,
        hook_fn("async-ask", move |ctx| {
            let log = log.clone();
            async move {
                log.lock()
                    .unwrap()
                    .push(("async-ask".into(), tool_input(&ctx)));
                Ok(Outcome::ask("a human should look"))
            }
        })
        .priority(2),
    );
    let log = seen.clone();
    hooks.register(
        Event::PreToolUse,
        hook_sync("sync-deny", move |ctx| {
            log.lock()
                .unwrap()
                .push(("sync-deny".into(), tool_input(ctx)));
            Ok(Outcome::deny("no"))
        })
        .priority(3),
    );
    let log = seen.clone();
    hooks.register(
        Event::PreToolUse,
        hook_sync("never", move |ctx| {
            log.lock().unwrap().push(("never".into(), tool_input(ctx)));
            Ok(Outcome::allow())
        })
        .priority(4),
    );
    let dispatcher = Dispatcher::new(hooks.build().unwrap());
    let outcome = dispatcher
        .dispatch(pre_tool_use("bash", json!({"command": "ls"})))
        .await;

    let rewritten = json!({"command": "ls", "dry_run": true});
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        [
            ("sync-rewrite".to_owned(), json!({"command": "ls"})),
            ("async-ask".to_owned(), rewritten.clone()),
            ("sync-deny".to_owned(), rewritten.clone()),
        ]
    );
    let order: Vec<&str> = outcome.runs.iter().map(|r| r.name).collect();
    assert_eq!(order, ["sync-rewrite", "async-ask", "sync-deny"]);
    assert_eq!(
        outcome.decision,
        Decision::deny("no"),
        "the deny beats the ask"
    );
    assert_eq!(outcome.modified_args, Some(rewritten));
    assert!(outcome.runs[0].rewrote);
}

#[tokio::test]
async fn sync_hook_failures_are_recorded_and_resolved_by_their_failure_mode() {
    let mut hooks = RegistryBuilder::new();
    let closed = HookOptions::default().failure_mode(FailureMode::FailClosed);
    hooks.register(
        Event::PreToolUse,
        hook_sync("errs", |_| Err(HookError::msg("backend unreachable"))).priority(1),
    );
    hooks.register_with(
        Event::PreToolUse,
        hook_sync("panics", |_| panic!("hook bug")).priority(2),
        closed,
    );
    let outcome = Dispatcher::new(hooks.build().unwrap())
        .dispatch(pre_tool_use("bash", json!({})))
        .await;
    assert_eq!(outcome.runs[0].status, RunStatus::Errored);
    assert_eq!(
        outcome.runs[0].decision, None,
        "a fail_open failure is skipped"
    );
    assert_eq!(outcome.runs[1].status, RunStatus::Crashed);
    assert!(
        outcome.runs[1]
            .error
            .as_deref()
            .unwrap()
            .contains("hook bug")
    );
    assert!(outcome.is_denied(), "fail_closed denies");
}

#[tokio::test]
async fn a_sync_hook_that_blocks_past_the_deadline_counts_as_timed_out() {
    let mut hooks = RegistryBuilder::new();
    let one_second = HookOptions::default()
        .timeout(HookTimeout::from_secs(1).unwrap())
        .failure_mode(FailureMode::FailClosed);
    hooks.register_with(
        Event::PreToolUse,
        hook_sync("blocker", |_| {
            std::thread::sleep(Duration::from_millis(1300));
            Ok(Outcome::allow())
        }),
        one_second,
    );
    let outcome = Dispatcher::new(hooks.build().unwrap())
        .dispatch(pre_tool_use("bash", json!({})))
        .await;
    assert_eq!(outcome.runs[0].status, RunStatus::TimedOut);
    // Past the 1 s deadline. (Not compared with the 1.3 s sleep: the record's clock is not
    // the one `sleep` uses, and under load the two disagree by a few milliseconds.)
    assert!(outcome.runs[0].duration >= Duration::from_secs(1));
    assert!(outcome.is_denied(), "its late allow is not trusted");
}

#[tokio::test]
async fn sync_hooks_run_on_notification_events_and_detached() {
    let (ran, detached) = (
        Arc::new(Mutex::new(0)),
        Arc::new(tokio::sync::Notify::new()),
    );
    let mut hooks = RegistryBuilder::new();
    let count = ran.clone();
    hooks.register(
        Event::SessionStart,
        hook_sync("inline", move |_| {
            *count.lock().unwrap() += 1;
            Ok(Outcome::allow())
        }),
    );
    let done = detached.clone();
    hooks.register_with(
        Event::SessionStart,
        hook_sync("background", move |_| {
            done.notify_one();
            Ok(Outcome::allow())
        }),
        HookOptions::default().fire_and_forget(true),
    );
    let payload = Arc::new(Payload::new(
        common("r"),
        tollgate_protocol::EventData::SessionStart,
    ));
    let outcome = Dispatcher::new(hooks.build().unwrap())
        .dispatch(payload)
        .await;
    let status = |name: &str| {
        outcome
            .runs
            .iter()
            .find(|r| r.name == name)
            .map(|r| r.status)
    };
    assert_eq!(status("inline"), Some(RunStatus::Completed));
    assert_eq!(status("background"), Some(RunStatus::Detached));
    assert_eq!(*ran.lock().unwrap(), 1);
    detached.notified().await; // the detached one ran too
}

#[tokio::test]
async fn a_sync_hook_served_through_execute_answers_the_same() {
    use tollgate_core::Hook;
    let hook = hook_sync("plain", |ctx| {
        Ok(Outcome::deny(format!(
            "{} is off",
            ctx.tool_name().unwrap_or("?")
        )))
    });
    let ctx = tollgate_core::HookContext::new(pre_tool_use("bash", json!({})));
    let later = hook.execute(ctx.clone()).await.unwrap();
    let now = hook.execute_now(&ctx).unwrap().unwrap();
    assert_eq!(later.decision, Decision::deny("bash is off"));
    assert_eq!(now.decision, later.decision);
}
