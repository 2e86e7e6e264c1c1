//! Hooks that answer at once in a row are timed as a group (one clock reading before, one
//! after). These pin what that means for deadlines: the fold never changes because of a
//! neighbour, `fail_closed` hooks are timed alone, and a group that overran says so.

use std::time::Duration;

use serde_json::json;
use tollgate_core::{
    DecidedBy, Dispatcher, Hook, HookOptions, HookTimeout, RegistryBuilder, hook_sync,
};
use tollgate_protocol::{Decision, Event, FailureMode, Outcome, RunStatus};

use crate::support::pre_tool_use;

fn one_second() -> HookOptions {
    HookOptions::default().timeout(HookTimeout::from_secs(1).unwrap())
}

/// A plain allow that blocks its thread past a one-second deadline.
fn blocker(priority: i32) -> impl Hook {
    hook_sync("blocker", |_| {
        std::thread::sleep(Duration::from_millis(1300));
        Ok(Outcome::allow())
    })
    .priority(priority)
}

#[tokio::test]
async fn a_group_that_overran_records_its_hooks_as_timed_out_and_keeps_the_fold() {
    let mut hooks = RegistryBuilder::new();
    hooks.register_with(Event::PreToolUse, blocker(1), one_second());
    hooks.register_with(
        Event::PreToolUse,
        hook_sync("fast", |_| Ok(Outcome::allow())).priority(2),
        one_second(),
    );
    let outcome = Dispatcher::new(hooks.build().unwrap())
        .dispatch(pre_tool_use("bash", json!({})))
        .await;
    let statuses: Vec<_> = outcome.runs.iter().map(|r| (r.name, r.status)).collect();
    assert_eq!(
        statuses,
        [
            ("blocker", RunStatus::TimedOut),
            ("fast", RunStatus::TimedOut)
        ],
        "which hook of the group blocked is not known"
    );
    assert!(outcome.runs.iter().all(|r| r.decision.is_none()));
    let error = outcome.runs[1].error.as_deref().unwrap();
    assert!(error.contains("2 hooks that answered at once"), "{error}");
    assert_eq!(outcome.decision, Decision::Allow, "fail_open: skipped");
    let failures = outcome
        .side_effects
        .iter()
        .filter(|s| s.effect.kind == "hook_failure")
        .count();
    assert_eq!(failures, 2);
}

#[tokio::test]
async fn a_deny_after_a_neighbour_that_blocked_in_its_group_still_denies() {
    let mut hooks = RegistryBuilder::new();
    hooks.register_with(Event::PreToolUse, blocker(1), one_second());
    hooks.register_with(
        Event::PreToolUse,
        hook_sync("guard", |_| Ok(Outcome::deny("no"))).priority(2),
        one_second(),
    );
    let outcome = Dispatcher::new(hooks.build().unwrap())
        .dispatch(pre_tool_use("bash", json!({})))
        .await;
    assert_eq!(outcome.decision, Decision::deny("no"));
    assert_eq!(outcome.decided_by, Some(DecidedBy::Hook("guard".into())));
    assert_eq!(outcome.runs[0].status, RunStatus::TimedOut);
    assert_eq!(outcome.runs[1].status, RunStatus::Completed);
}

#[tokio::test]
async fn a_fail_closed_hook_is_not_charged_for_a_neighbour_that_blocked() {
    let mut hooks = RegistryBuilder::new();
    hooks.register_with(Event::PreToolUse, blocker(1), one_second());
    hooks.register_with(
        Event::PreToolUse,
        hook_sync("strict", |_| Ok(Outcome::allow())).priority(2),
        one_second().failure_mode(FailureMode::FailClosed),
    );
    let outcome = Dispatcher::new(hooks.build().unwrap())
        .dispatch(pre_tool_use("bash", json!({})))
        .await;
    assert_eq!(outcome.runs[0].status, RunStatus::TimedOut);
    assert_eq!(outcome.runs[1].status, RunStatus::Completed);
    assert!(outcome.runs[1].duration < Duration::from_secs(1));
    assert_eq!(outcome.decision, Decision::Allow);
}

#[tokio::test]
async fn a_hook_alone_in_its_group_that_blocked_has_its_late_answer_distrusted() {
    let mut hooks = RegistryBuilder::new();
    hooks.register_with(
        Event::PreToolUse,
        hook_sync("slow-guard", |_| {
            std::thread::sleep(Duration::from_millis(1300));
            Ok(Outcome::deny("late"))
        }),
        one_second(),
    );
    let outcome = Dispatcher::new(hooks.build().unwrap())
        .dispatch(pre_tool_use("bash", json!({})))
        .await;
    assert_eq!(outcome.runs[0].status, RunStatus::TimedOut);
    assert!(outcome.runs[0].duration >= Duration::from_millis(1300));
    assert_eq!(outcome.decision, Decision::Allow, "fail_open: skipped");
}

#[tokio::test]
async fn hooks_answered_at_once_share_their_groups_time_evenly() {
    let mut hooks = RegistryBuilder::new();
    hooks.register(
        Event::PreToolUse,
        hook_sync("sleeper", |_| {
            std::thread::sleep(Duration::from_millis(30));
            Ok(Outcome::allow())
        }),
    );
    for name in ["a", "b"] {
        hooks.register(Event::PreToolUse, hook_sync(name, |_| Ok(Outcome::allow())));
    }
    let outcome = Dispatcher::new(hooks.build().unwrap())
        .dispatch(pre_tool_use("bash", json!({})))
        .await;
    let durations: Vec<_> = outcome.runs.records().iter().map(|r| r.duration).collect();
    assert_eq!(durations.len(), 3);
    assert!(
        durations.iter().all(|d| *d == durations[0]),
        "{durations:?}"
    );
    assert!(
        durations[0] * 3 >= Duration::from_millis(30),
        "{durations:?}"
    );
}

#[tokio::test]
async fn a_panic_in_a_group_is_the_crash_of_the_hook_that_panicked_and_the_chain_goes_on() {
    let mut hooks = RegistryBuilder::new();
    let allow =
        |name: &'static str, priority| hook_sync(name, |_| Ok(Outcome::allow())).priority(priority);
    hooks.register(Event::PreToolUse, allow("first", 1));
    hooks.register(
        Event::PreToolUse,
        hook_sync("bad-matcher", |_| Ok(Outcome::allow()))
            .when(|_| panic!("matcher bug"))
            .priority(2),
    );
    hooks.register(Event::PreToolUse, allow("second", 3));
    hooks.register(
        Event::PreToolUse,
        hook_sync("bad-hook", |_| panic!("hook bug")).priority(4),
    );
    hooks.register(Event::PreToolUse, allow("third", 5));
    let outcome = Dispatcher::new(hooks.build().unwrap())
        .dispatch(pre_tool_use("bash", json!({})))
        .await;
    let runs: Vec<_> = outcome
        .runs
        .iter()
        .map(|r| (r.name, r.status, r.error.clone().unwrap_or_default()))
        .collect();
    assert_eq!(
        runs,
        [
            ("first", RunStatus::Completed, String::new()),
            (
                "bad-matcher",
                RunStatus::Crashed,
                "should_trigger panicked: matcher bug".to_owned()
            ),
            ("second", RunStatus::Completed, String::new()),
            (
                "bad-hook",
                RunStatus::Crashed,
                "panicked: hook bug".to_owned()
            ),
            ("third", RunStatus::Completed, String::new()),
        ]
    );
    assert_eq!(outcome.decision, Decision::Allow, "fail_open: skipped");
}
