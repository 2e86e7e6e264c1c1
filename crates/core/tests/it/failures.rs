//! Failure isolation: {deadline passed, panic, returned error} × {fail_open, fail_closed}.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;
use tollgate_core::{
    Dispatcher, Hook, HookError, HookOptions, HookTimeout, RegistryBuilder, hook_fn,
};
use tollgate_protocol::{Decision, Event, FailureMode, Outcome, Payload, RunStatus};

use crate::support::{common, pre_tool_use};

#[derive(Clone, Copy, Debug)]
enum Failure {
    Deadline,
    Panic,
    Error,
}

fn failing(failure: Failure) -> impl Hook {
    hook_fn("flaky", move |_| async move {
        match failure {
            Failure::Deadline => {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                Ok(Outcome::allow())
            }
            Failure::Panic => panic!("hook bug"),
            Failure::Error => Err(HookError::msg("backend unreachable")),
        }
    })
}

fn counting(count: &Arc<AtomicUsize>, name: &str, priority: i32) -> impl Hook + use<> {
    let count = count.clone();
    hook_fn(name, move |_| {
        count.fetch_add(1, Ordering::SeqCst);
        async { Ok(Outcome::allow()) }
    })
    .priority(priority)
}

fn expected_status(failure: Failure) -> RunStatus {
    match failure {
        Failure::Deadline => RunStatus::TimedOut,
        Failure::Panic => RunStatus::Crashed,
        Failure::Error => RunStatus::Errored,
    }
}

async fn dispatch_with(
    failure: Failure,
    mode: FailureMode,
) -> (tollgate_core::DispatchOutcome, usize, usize) {
    let (before, after) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let mut hooks = RegistryBuilder::new();
    hooks.register(Event::PreToolUse, counting(&before, "before", 1));
    let options = HookOptions::default()
        .priority(2)
        .failure_mode(mode)
        .timeout(HookTimeout::from_secs(2).unwrap());
    hooks.register_with(Event::PreToolUse, failing(failure), options);
    hooks.register(Event::PreToolUse, counting(&after, "after", 3));
    let dispatcher = Dispatcher::new(hooks.build().unwrap());
    let outcome = dispatcher.dispatch(pre_tool_use("bash", json!({}))).await;
    (
        outcome,
        before.load(Ordering::SeqCst),
        after.load(Ordering::SeqCst),
    )
}

#[tokio::test(start_paused = true)]
async fn fail_open_failures_are_recorded_skipped_and_the_chain_goes_on() {
    for failure in [Failure::Deadline, Failure::Panic, Failure::Error] {
        let (outcome, before, after) = dispatch_with(failure, FailureMode::FailOpen).await;
        assert_eq!(outcome.decision, Decision::Allow, "{failure:?}");
        let run = outcome.runs.get(1).unwrap();
        assert_eq!(run.status, expected_status(failure), "{failure:?}");
        assert_eq!(
            run.decision, None,
            "{failure:?}: a skipped failure is never recorded as allow"
        );
        assert!(run.error.is_some());
        assert_eq!(
            (before, after),
            (1, 1),
            "{failure:?}: the other hooks still run"
        );
        let failure_effect = outcome
            .side_effects
            .iter()
            .find(|s| s.effect.kind == "hook_failure");
        assert_eq!(failure_effect.map(|s| &*s.hook), Some("flaky"));
        let wire = run.to_wire(&outcome.event);
        assert_ne!(wire.decision.as_deref(), Some("allow"));
    }
}

#[tokio::test(start_paused = true)]
async fn fail_closed_failures_deny_with_the_failure_as_reason() {
    for failure in [Failure::Deadline, Failure::Panic, Failure::Error] {
        let (outcome, before, after) = dispatch_with(failure, FailureMode::FailClosed).await;
        let status = expected_status(failure);
        assert!(outcome.is_denied(), "{failure:?}");
        let reason = outcome.decision.reason().unwrap();
        assert!(
            reason.contains("flaky") && reason.contains(status.as_str()),
            "{reason}"
        );
        let run = &outcome.runs[1];
        assert_eq!(run.status, status);
        assert!(run.decision.as_ref().is_some_and(Decision::is_deny));
        assert_eq!(before, 1, "{failure:?}: the hook before it ran");
        assert_eq!(after, 0, "{failure:?}: the deny stops the chain");
    }
}

#[tokio::test(start_paused = true)]
async fn failure_messages_name_what_went_wrong() {
    let (deadline, _, _) = dispatch_with(Failure::Deadline, FailureMode::FailOpen).await;
    assert_eq!(
        deadline.runs[1].error.as_deref(),
        Some("deadline of 2 s passed")
    );
    let (panic, _, _) = dispatch_with(Failure::Panic, FailureMode::FailOpen).await;
    assert_eq!(panic.runs[1].error.as_deref(), Some("panicked: hook bug"));
    let (error, _, _) = dispatch_with(Failure::Error, FailureMode::FailOpen).await;
    assert_eq!(error.runs[1].error.as_deref(), Some("backend unreachable"));
}

#[tokio::test(start_paused = true)]
async fn the_default_deadline_is_ten_seconds() {
    let mut hooks = RegistryBuilder::new();
    hooks.register(Event::PreToolUse, failing(Failure::Deadline));
    let dispatcher = Dispatcher::new(hooks.build().unwrap());
    let started = tokio::time::Instant::now();
    let outcome = dispatcher.dispatch(pre_tool_use("bash", json!({}))).await;
    assert_eq!(outcome.runs[0].status, RunStatus::TimedOut);
    assert_eq!(started.elapsed(), Duration::from_secs(10));
}

#[test]
fn timeouts_outside_1_to_600_seconds_are_refused() {
    assert!(HookTimeout::from_secs(0).is_err());
    assert!(HookTimeout::from_secs(601).is_err());
    assert_eq!(
        HookTimeout::from_secs(600).unwrap().duration(),
        Duration::from_secs(600)
    );
    assert_eq!(HookTimeout::default().duration(), Duration::from_secs(10));
}

#[tokio::test(start_paused = true)]
async fn failing_notification_hooks_do_not_affect_their_siblings() {
    let count = Arc::new(AtomicUsize::new(0));
    let mut hooks = RegistryBuilder::new();
    let closed = HookOptions::default().failure_mode(FailureMode::FailClosed);
    for failure in [Failure::Deadline, Failure::Panic, Failure::Error] {
        hooks.register_with(Event::SessionStart, failing(failure), closed.clone());
    }
    hooks.register(Event::SessionStart, counting(&count, "ok", 0));
    let dispatcher = Dispatcher::new(hooks.build().unwrap());
    let outcome = dispatcher
        .dispatch(Arc::new(Payload::new(
            common("r"),
            tollgate_protocol::EventData::SessionStart,
        )))
        .await;
    assert_eq!(count.load(Ordering::SeqCst), 1);
    let statuses: Vec<_> = outcome.runs.iter().map(|r| r.status).collect();
    assert_eq!(
        statuses,
        [
            RunStatus::TimedOut,
            RunStatus::Crashed,
            RunStatus::Errored,
            RunStatus::Completed
        ]
    );
    assert_eq!(outcome.decision, Decision::Allow);
}

struct PanickyMatcher;

impl Hook for PanickyMatcher {
    fn name(&self) -> &str {
        "panicky-matcher"
    }
    fn should_trigger(&self, _ctx: &tollgate_core::HookContext) -> bool {
        panic!("matcher bug")
    }
    fn execute(
        &self,
        _ctx: tollgate_core::HookContext,
    ) -> tollgate_core::BoxFuture<'_, Result<Outcome, HookError>> {
        Box::pin(async { Ok(Outcome::allow()) })
    }
}

struct PanicsBeforeItsFuture;

impl Hook for PanicsBeforeItsFuture {
    fn name(&self) -> &str {
        "eager-panic"
    }
    fn execute(
        &self,
        _ctx: tollgate_core::HookContext,
    ) -> tollgate_core::BoxFuture<'_, Result<Outcome, HookError>> {
        panic!("panicked while building the future")
    }
}

#[tokio::test]
async fn panics_outside_the_future_are_crashes_too() {
    let mut hooks = RegistryBuilder::new();
    let closed = HookOptions::default().failure_mode(FailureMode::FailClosed);
    hooks.register(Event::PreToolUse, PanickyMatcher);
    hooks.register_with(Event::PreToolUse, PanicsBeforeItsFuture, closed);
    let dispatcher = Dispatcher::new(hooks.build().unwrap());
    let outcome = dispatcher.dispatch(pre_tool_use("bash", json!({}))).await;
    let statuses: Vec<_> = outcome.runs.iter().map(|r| (r.name, r.status)).collect();
    assert_eq!(
        statuses,
        [
            ("panicky-matcher", RunStatus::Crashed),
            ("eager-panic", RunStatus::Crashed)
        ]
    );
    assert!(outcome.is_denied(), "the fail_closed hook's crash denies");
}

#[tokio::test]
async fn hooks_report_their_own_failure_kind() {
    use tollgate_core::FailureKind;
    let cases = [
        (FailureKind::Errored, RunStatus::Errored),
        (FailureKind::Crashed, RunStatus::Crashed),
        (FailureKind::Refused, RunStatus::Refused),
        (FailureKind::InvalidOutput, RunStatus::InvalidOutput),
    ];
    for (kind, status) in cases {
        let mut hooks = RegistryBuilder::new();
        hooks.register(
            Event::PreToolUse,
            hook_fn("reporter", move |_| async move {
                Err(HookError::new(kind, "why"))
            }),
        );
        let dispatcher = Dispatcher::new(hooks.build().unwrap());
        let outcome = dispatcher.dispatch(pre_tool_use("bash", json!({}))).await;
        assert_eq!(outcome.runs[0].status, status);
        assert_eq!(outcome.runs[0].error.as_deref(), Some("why"));
    }
}

#[tokio::test]
async fn time_spent_in_a_skipped_hooks_matcher_is_not_charged_to_the_next_hook() {
    let mut hooks = RegistryBuilder::new();
    hooks.register(
        Event::PreToolUse,
        hook_fn("skipped", |_| async { Ok(Outcome::allow()) }).when(|_| {
            std::thread::sleep(Duration::from_millis(1200));
            false
        }),
    );
    let one_second = HookOptions::default()
        .timeout(HookTimeout::from_secs(1).unwrap())
        .failure_mode(FailureMode::FailClosed);
    hooks.register_with(
        Event::PreToolUse,
        hook_fn("fast", |_| async {
            tokio::time::sleep(Duration::from_millis(10)).await;
            Ok(Outcome::allow())
        }),
        one_second,
    );
    let outcome = Dispatcher::new(hooks.build().unwrap())
        .dispatch(pre_tool_use("bash", json!({})))
        .await;
    assert_eq!(outcome.runs.len(), 1);
    assert_eq!(outcome.runs[0].status, RunStatus::Completed);
    assert!(outcome.runs[0].duration < Duration::from_secs(1));
    assert_eq!(outcome.decision, Decision::Allow);
}

#[tokio::test]
async fn a_hook_that_blocks_its_thread_past_the_deadline_counts_as_timed_out() {
    let mut hooks = RegistryBuilder::new();
    let one_second = HookOptions::default()
        .timeout(HookTimeout::from_secs(1).unwrap())
        .failure_mode(FailureMode::FailClosed);
    hooks.register_with(
        Event::PreToolUse,
        hook_fn("blocker", |_| async {
            std::thread::sleep(Duration::from_millis(1300));
            Ok(Outcome::allow())
        }),
        one_second,
    );
    let outcome = Dispatcher::new(hooks.build().unwrap())
        .dispatch(pre_tool_use("bash", json!({})))
        .await;
    assert_eq!(outcome.runs[0].status, RunStatus::TimedOut);
    assert!(
        outcome.runs[0]
            .error
            .as_deref()
            .unwrap()
            .contains("blocked its thread")
    );
    assert!(outcome.is_denied(), "its late allow is not trusted");
}

struct PanicsOnDrop;

impl Drop for PanicsOnDrop {
    fn drop(&mut self) {
        panic!("and the payload's destructor panics too");
    }
}

#[tokio::test]
async fn a_panic_payload_whose_destructor_panics_stays_contained() {
    let mut hooks = RegistryBuilder::new();
    hooks.register(
        Event::PreToolUse,
        hook_fn("bomb", |_| async {
            std::panic::panic_any(PanicsOnDrop);
            #[allow(unreachable_code)]
            Ok(Outcome::allow())
        }),
    );
    let outcome = Dispatcher::new(hooks.build().unwrap())
        .dispatch(pre_tool_use("bash", json!({})))
        .await;
    assert_eq!(outcome.runs[0].status, RunStatus::Crashed);
    assert_eq!(
        outcome.runs[0].error.as_deref(),
        Some("panicked: non-string panic payload")
    );
}

struct PanickingGate {
    eager: bool,
}

impl tollgate_core::PermissionGate for PanickingGate {
    fn review<'a>(
        &'a self,
        _tool: &'a str,
        _args: &'a serde_json::Value,
    ) -> tollgate_core::BoxFuture<'a, Decision> {
        if self.eager {
            panic!("gate bug before the future");
        }
        Box::pin(async { panic!("gate bug in the future") })
    }
}

#[tokio::test]
async fn a_panicking_permission_gate_denies_instead_of_crashing_the_dispatch() {
    for eager in [true, false] {
        let dispatcher = Dispatcher::new(RegistryBuilder::new().build().unwrap())
            .with_permission_gate(Arc::new(PanickingGate { eager }));
        let outcome = dispatcher.dispatch(pre_tool_use("bash", json!({}))).await;
        assert!(outcome.is_denied());
        assert!(
            outcome
                .decision
                .reason()
                .unwrap()
                .contains("permission gate crashed")
        );
        assert_eq!(
            outcome.decided_by,
            Some(tollgate_core::DecidedBy::PermissionGate)
        );
    }
}
