//! Order, matching, waterfall, short-circuit, fold, re-review, result chaining, notifications.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::sync::Barrier;
use tollgate_core::{
    BoxFuture, DecidedBy, Dispatcher, HookOptions, HooksMode, PermissionGate, RegistryBuilder,
    ReviewedArgs, ToolMatcher, hook_fn,
};
use tollgate_protocol::{
    Decision, Event, HookSource, Outcome, Payload, RunStatus, SideEffect, SubagentStart,
};

use crate::support::{common, post_tool_use, pre_tool_use};

type Log = Arc<Mutex<Vec<String>>>;

fn recorder(log: &Log, label: &str, priority: i32) -> impl tollgate_core::Hook + use<> {
    let (log, label) = (log.clone(), label.to_owned());
    hook_fn(label.clone(), move |_| {
        let (log, label) = (log.clone(), label.clone());
        async move {
            log.lock().unwrap().push(label);
            Ok(Outcome::allow())
        }
    })
    .priority(priority)
}

fn counter(count: &Arc<AtomicUsize>, name: &str) -> impl tollgate_core::Hook + use<> {
    let count = count.clone();
    hook_fn(name, move |_| {
        count.fetch_add(1, Ordering::SeqCst);
        async { Ok(Outcome::allow()) }
    })
}

fn answering(name: &str, outcome: Outcome) -> impl tollgate_core::Hook + use<> {
    hook_fn(name, move |_| {
        let outcome = outcome.clone();
        async move { Ok(outcome) }
    })
}

#[tokio::test]
async fn priorities_5_1_5_3_run_as_1_3_5_first_then_5_second() {
    let log = Log::default();
    let mut hooks = RegistryBuilder::new();
    for (label, priority) in [
        ("five-first", 5),
        ("one", 1),
        ("five-second", 5),
        ("three", 3),
    ] {
        hooks.register(Event::PreToolUse, recorder(&log, label, priority));
    }
    let dispatcher = Dispatcher::new(hooks.build().unwrap());
    for _ in 0..3 {
        log.lock().unwrap().clear();
        dispatcher.dispatch(pre_tool_use("bash", json!({}))).await;
        assert_eq!(
            *log.lock().unwrap(),
            ["one", "three", "five-first", "five-second"]
        );
    }
}

#[tokio::test]
async fn registration_priority_overrides_the_hooks_own() {
    let log = Log::default();
    let mut hooks = RegistryBuilder::new();
    hooks.register(Event::PreToolUse, recorder(&log, "a", 1));
    hooks.register_with(
        Event::PreToolUse,
        recorder(&log, "b", 9),
        HookOptions::default().priority(0),
    );
    let dispatcher = Dispatcher::new(hooks.build().unwrap());
    dispatcher.dispatch(pre_tool_use("bash", json!({}))).await;
    assert_eq!(*log.lock().unwrap(), ["b", "a"]);
}

#[tokio::test]
async fn waterfall_rewrite_is_seen_by_the_next_hook_and_reaches_the_tool() {
    let seen_by_b = Arc::new(Mutex::new(Value::Null));
    let mut hooks = RegistryBuilder::new();
    hooks.register(
        Event::PreToolUse,
        hook_fn("A", |ctx| async move {
            let mut args = ctx.payload().tool_call().unwrap().tool_input.clone();
            args["dry_run"] = json!(true);
            Ok(Outcome::allow().with_args(args))
        })
        .priority(1),
    );
    let seen = seen_by_b.clone();
    hooks.register(
        Event::PreToolUse,
        hook_fn("B", move |ctx| {
            *seen.lock().unwrap() = ctx.payload().tool_call().unwrap().tool_input.clone();
            async { Ok(Outcome::allow()) }
        })
        .priority(2),
    );
    let dispatcher = Dispatcher::new(hooks.build().unwrap());
    let payload = pre_tool_use("deploy", json!({"env": "prod"}));
    let outcome = dispatcher.dispatch(payload.clone()).await;

    assert_eq!(
        *seen_by_b.lock().unwrap(),
        json!({"env": "prod", "dry_run": true})
    );
    // The tool runs with the final arguments.
    let tool = |args: &Value| args.clone();
    let original = &payload.tool_call().unwrap().tool_input;
    let received = tool(outcome.modified_args.as_ref().unwrap_or(original));
    assert_eq!(received, json!({"env": "prod", "dry_run": true}));
    assert!(outcome.runs[0].rewrote && !outcome.runs[1].rewrote);
}

#[tokio::test]
async fn the_first_deny_stops_the_chain() {
    let later = Arc::new(AtomicUsize::new(0));
    let mut hooks = RegistryBuilder::new();
    hooks.register_with(
        Event::PreToolUse,
        answering("denier", Outcome::deny("no")),
        HookOptions::default().priority(1),
    );
    hooks.register_with(
        Event::PreToolUse,
        counter(&later, "later"),
        HookOptions::default().priority(2),
    );
    let dispatcher = Dispatcher::new(hooks.build().unwrap());
    let outcome = dispatcher.dispatch(pre_tool_use("bash", json!({}))).await;
    assert_eq!(later.load(Ordering::SeqCst), 0);
    assert_eq!(outcome.decision, Decision::deny("no"));
    assert_eq!(outcome.decided_by, Some(DecidedBy::Hook("denier".into())));
    assert_eq!(outcome.runs.len(), 1);
}

async fn fold(outcomes: Vec<Outcome>) -> tollgate_core::DispatchOutcome {
    let mut hooks = RegistryBuilder::new();
    for (i, outcome) in outcomes.into_iter().enumerate() {
        hooks.register_with(
            Event::PreToolUse,
            answering(&format!("h{i}"), outcome),
            HookOptions::default().priority(i as i32),
        );
    }
    let dispatcher = Dispatcher::new(hooks.build().unwrap());
    dispatcher
        .dispatch(pre_tool_use("bash", json!({"x": 0})))
        .await
}

#[tokio::test]
async fn fold_ask_then_deny_is_deny() {
    let outcome = fold(vec![Outcome::ask("check"), Outcome::deny("never")]).await;
    assert_eq!(outcome.decision, Decision::deny("never"));
    assert_eq!(outcome.decided_by, Some(DecidedBy::Hook("h1".into())));
}

#[tokio::test]
async fn fold_ask_alone_is_ask() {
    let outcome = fold(vec![
        Outcome::allow(),
        Outcome::ask("check"),
        Outcome::allow(),
    ])
    .await;
    assert_eq!(outcome.decision, Decision::ask("check"));
    assert_eq!(outcome.decided_by, Some(DecidedBy::Hook("h1".into())));
    assert_eq!(outcome.runs.len(), 3, "ask does not stop the chain");
}

#[tokio::test]
async fn fold_allow_or_no_opinion_after_a_rewrite_never_erases_it() {
    let rewritten = json!({"x": 1});
    let outcome = fold(vec![
        Outcome::allow().with_args(rewritten.clone()),
        Outcome::allow(),
        Outcome::default(),
        Outcome::allow().with_context("note"),
    ])
    .await;
    assert_eq!(outcome.decision, Decision::Allow);
    assert_eq!(outcome.modified_args, Some(rewritten));
    assert_eq!(outcome.additional_context, ["note"]);
}

/// Refuses any call whose `path` argument is under /etc.
struct EtcGate;

impl PermissionGate for EtcGate {
    fn review<'a>(&'a self, _tool: &'a str, args: &'a Value) -> BoxFuture<'a, Decision> {
        Box::pin(async move {
            match args["path"].as_str() {
                Some(path) if path.starts_with("/etc") => {
                    Decision::deny(format!("{path} is off limits"))
                }
                _ => Decision::Allow,
            }
        })
    }
}

async fn rewrite_path(from: &str, to: &str) -> tollgate_core::DispatchOutcome {
    let to = to.to_owned();
    let mut hooks = RegistryBuilder::new();
    hooks.register(
        Event::PreToolUse,
        hook_fn("rewriter", move |_| {
            let to = to.clone();
            async move { Ok(Outcome::allow().with_args(json!({"path": to}))) }
        }),
    );
    let dispatcher =
        Dispatcher::new(hooks.build().unwrap()).with_permission_gate(Arc::new(EtcGate));
    dispatcher
        .dispatch(pre_tool_use("read_file", json!({"path": from})))
        .await
}

#[tokio::test]
async fn re_review_denies_a_rewrite_the_gate_refuses() {
    let outcome = rewrite_path("/tmp/notes.txt", "/etc/shadow").await;
    assert_eq!(
        outcome.decision,
        Decision::deny("/etc/shadow is off limits")
    );
    assert_eq!(outcome.decided_by, Some(DecidedBy::PermissionGate));
    let reviewed: Vec<_> = outcome.gate_reviews.iter().map(|r| r.args).collect();
    assert_eq!(reviewed, [ReviewedArgs::Original, ReviewedArgs::Rewritten]);
    assert!(outcome.observation().unwrap().contains("permission gate"));
}

#[tokio::test]
async fn re_review_keeps_the_original_refusal_after_a_harmless_rewrite() {
    let outcome = rewrite_path("/etc/passwd", "/tmp/harmless.txt").await;
    assert_eq!(
        outcome.decision,
        Decision::deny("/etc/passwd is off limits")
    );
    assert_eq!(outcome.decided_by, Some(DecidedBy::PermissionGate));
}

#[tokio::test]
async fn gate_allows_when_both_original_and_rewrite_are_fine() {
    let outcome = rewrite_path("/tmp/a", "/tmp/b").await;
    assert_eq!(outcome.decision, Decision::Allow);
    assert_eq!(outcome.modified_args, Some(json!({"path": "/tmp/b"})));
}

#[tokio::test]
async fn tools_globs_filter_hooks_before_they_run() {
    let (sql, bash) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let mut hooks = RegistryBuilder::new();
    let sql_only = HookOptions::default().tools(ToolMatcher::new(["sql_*", "db_query"]).unwrap());
    hooks.register_with(Event::PreToolUse, counter(&sql, "sql"), sql_only);
    let bash_only = HookOptions::default().tools(ToolMatcher::one("bash_*").unwrap());
    hooks.register_with(Event::PreToolUse, counter(&bash, "bash"), bash_only);
    let dispatcher = Dispatcher::new(hooks.build().unwrap());
    for tool in [
        "sql_query",
        "db_query",
        "SQL_query",
        "my_sql_query",
        "bash_code_execute_tool",
    ] {
        dispatcher.dispatch(pre_tool_use(tool, json!({}))).await;
    }
    assert_eq!(sql.load(Ordering::SeqCst), 2);
    assert_eq!(bash.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn should_trigger_false_skips_without_a_record() {
    let mut hooks = RegistryBuilder::new();
    hooks.register(
        Event::PreToolUse,
        hook_fn("never", |_| async { Ok(Outcome::deny("x")) }).when(|_| false),
    );
    let dispatcher = Dispatcher::new(hooks.build().unwrap());
    let outcome = dispatcher.dispatch(pre_tool_use("bash", json!({}))).await;
    assert_eq!(outcome.decision, Decision::Allow);
    assert!(outcome.runs.is_empty());
}

#[tokio::test]
async fn subagent_hooks_match_on_agent_type() {
    let count = Arc::new(AtomicUsize::new(0));
    let mut hooks = RegistryBuilder::new();
    let options = HookOptions::default().tools(ToolMatcher::one("research*").unwrap());
    hooks.register_with(Event::SubagentStart, counter(&count, "c"), options);
    let dispatcher = Dispatcher::new(hooks.build().unwrap());
    for agent in ["researcher", "coder"] {
        let start = SubagentStart {
            task_id: "t".into(),
            agent_type: agent.into(),
            task_description: "d".into(),
        };
        dispatcher
            .dispatch(Arc::new(Payload::new(common("r"), start)))
            .await;
    }
    assert_eq!(count.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn post_tool_use_results_chain_and_allow_changes_nothing() {
    let mut hooks = RegistryBuilder::new();
    hooks.register(
        Event::PostToolUse,
        hook_fn("redact", |ctx| async move {
            let result = match &ctx.payload().data {
                tollgate_protocol::EventData::PostToolUse(done) => done.tool_result.clone(),
                _ => Value::Null,
            };
            let text = result
                .as_str()
                .unwrap_or_default()
                .replace("secret", "[redacted]");
            Ok(Outcome::allow().with_result(json!(text)))
        })
        .priority(1),
    );
    hooks.register(
        Event::PostToolUse,
        hook_fn("shout", |ctx| async move {
            let tollgate_protocol::EventData::PostToolUse(done) = &ctx.payload().data else {
                return Ok(Outcome::allow());
            };
            let text = done.tool_result.as_str().unwrap_or_default().to_uppercase();
            Ok(Outcome::allow().with_result(json!(text)))
        })
        .priority(2),
    );
    hooks.register_with(
        Event::PostToolUse,
        answering("noop", Outcome::allow()),
        HookOptions::default().priority(3),
    );
    let dispatcher = Dispatcher::new(hooks.build().unwrap());
    let outcome = dispatcher
        .dispatch(post_tool_use("read_file", json!("the secret is 42")))
        .await;
    assert_eq!(outcome.modified_result, Some(json!("THE [REDACTED] IS 42")));
    assert_eq!(outcome.decision, Decision::Allow);
}

#[tokio::test]
async fn a_rewrite_on_the_wrong_event_is_an_invalid_output_failure() {
    let mut hooks = RegistryBuilder::new();
    let closed = HookOptions::default().failure_mode(tollgate_protocol::FailureMode::FailClosed);
    hooks.register_with(
        Event::PreToolUse,
        answering("confused", Outcome::allow().with_result(json!("x"))),
        closed,
    );
    let dispatcher = Dispatcher::new(hooks.build().unwrap());
    let outcome = dispatcher.dispatch(pre_tool_use("bash", json!({}))).await;
    assert_eq!(outcome.runs[0].status, RunStatus::InvalidOutput);
    assert!(outcome.is_denied());
    assert!(
        outcome
            .decision
            .reason()
            .unwrap()
            .contains("modified_result is only valid on post_tool_use")
    );
    assert_eq!(outcome.modified_result, None);
}

#[tokio::test(start_paused = true)]
async fn notification_hooks_run_concurrently() {
    // Three hooks waiting on one barrier of three can only finish if they run together;
    // run one after the other, the first would wait until its deadline.
    let barrier = Arc::new(Barrier::new(3));
    let mut hooks = RegistryBuilder::new();
    for name in ["a", "b", "c"] {
        let barrier = barrier.clone();
        hooks.register(
            Event::SessionEnd,
            hook_fn(name, move |_| {
                let barrier = barrier.clone();
                async move {
                    barrier.wait().await;
                    Ok(Outcome::deny("ignored on notifications"))
                }
            }),
        );
    }
    let dispatcher = Dispatcher::new(hooks.build().unwrap());
    let end = tollgate_protocol::SessionEnd {
        status: tollgate_protocol::SessionEndStatus::Completed,
        error: None,
        answer: None,
        continued: 0,
    };
    let outcome = dispatcher
        .dispatch(Arc::new(Payload::new(common("r"), end)))
        .await;
    let statuses: Vec<_> = outcome.runs.iter().map(|r| r.status).collect();
    assert_eq!(statuses, [RunStatus::Completed; 3]);
    assert_eq!(
        outcome.decision,
        Decision::Allow,
        "notification decisions are not folded"
    );
}

#[tokio::test]
async fn custom_events_declared_blocking_short_circuit() {
    let custom = tollgate_protocol::CustomEvent::new("deploy.requested").unwrap();
    let later = Arc::new(AtomicUsize::new(0));
    let mut hooks = RegistryBuilder::new();
    hooks.declare_blocking(custom.clone());
    hooks.register_with(
        Event::Custom(custom.clone()),
        answering("freeze", Outcome::deny("code freeze")),
        HookOptions::default().priority(1),
    );
    hooks.register_with(
        Event::Custom(custom.clone()),
        counter(&later, "later"),
        HookOptions::default().priority(2),
    );
    let dispatcher = Dispatcher::new(hooks.build().unwrap());
    let data = tollgate_protocol::EventData::Custom(custom, Default::default());
    let outcome = dispatcher
        .dispatch(Arc::new(Payload {
            common: common("r"),
            data,
        }))
        .await;
    assert_eq!(outcome.decision, Decision::deny("code freeze"));
    assert_eq!(later.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn bypass_runs_no_hook_and_is_recorded() {
    let count = Arc::new(AtomicUsize::new(0));
    let mut hooks = RegistryBuilder::new();
    hooks.register(Event::PreToolUse, counter(&count, "c"));
    hooks.register(Event::PreToolUse, answering("denier", Outcome::deny("no")));
    let dispatcher = Dispatcher::new(hooks.build().unwrap()).with_hooks_mode(HooksMode::Bypass);
    let outcome = dispatcher.dispatch(pre_tool_use("bash", json!({}))).await;
    assert!(outcome.bypassed);
    assert_eq!(outcome.decision, Decision::Allow);
    assert_eq!(count.load(Ordering::SeqCst), 0);
    let enforced = Dispatcher::new(RegistryBuilder::new().build().unwrap());
    assert!(
        !enforced
            .dispatch(pre_tool_use("bash", json!({})))
            .await
            .bypassed
    );
}

#[tokio::test]
async fn bypass_still_applies_the_permission_gate() {
    let dispatcher = Dispatcher::new(RegistryBuilder::new().build().unwrap())
        .with_hooks_mode(HooksMode::Bypass)
        .with_permission_gate(Arc::new(EtcGate));
    let outcome = dispatcher
        .dispatch(pre_tool_use("read_file", json!({"path": "/etc/passwd"})))
        .await;
    assert!(outcome.bypassed && outcome.is_denied());
}

#[tokio::test]
async fn side_effects_and_records_are_kept_in_run_order() {
    let mut hooks = RegistryBuilder::new();
    for (i, name) in ["first", "second"].into_iter().enumerate() {
        let effect = SideEffect::new("audit_log", json!({"n": i}));
        let options = HookOptions::default()
            .priority(i as i32)
            .source(HookSource::Skill);
        hooks.register_with(
            Event::PreToolUse,
            answering(name, Outcome::allow().with_side_effect(effect)),
            options,
        );
    }
    let dispatcher = Dispatcher::new(hooks.build().unwrap());
    let outcome = dispatcher.dispatch(pre_tool_use("bash", json!({}))).await;
    let effects: Vec<_> = outcome
        .side_effects
        .iter()
        .map(|s| (&*s.hook, s.effect.detail["n"].clone()))
        .collect();
    assert_eq!(effects, [("first", json!(0)), ("second", json!(1))]);
    let wire = outcome.runs.get(1).unwrap().to_wire(&outcome.event);
    assert_eq!(
        (
            wire.hook.as_str(),
            wire.source.as_str(),
            wire.status.as_str()
        ),
        ("second", "skill", "completed")
    );
    assert_eq!(wire.decision.as_deref(), Some("allow"));
    assert_eq!(wire.event, "pre_tool_use");
}

#[tokio::test]
async fn denial_becomes_the_models_observation() {
    let outcome = fold(vec![Outcome::deny("use the staging database instead")]).await;
    assert_eq!(
        outcome.observation().as_deref(),
        Some("Tool call denied by hook `h0`: use the staging database instead")
    );
    assert_eq!(fold(vec![Outcome::allow()]).await.observation(), None);
}

#[tokio::test]
async fn regression_empty_tools_list_is_never_widened_to_match_all() {
    // An empty `tools` list has no glob; it once let the hook run for every tool.
    let count = Arc::new(AtomicUsize::new(0));
    let mut hooks = RegistryBuilder::new();
    let nothing = HookOptions::default().tools(ToolMatcher::new(Vec::<String>::new()).unwrap());
    hooks.register_with(Event::PreToolUse, counter(&count, "empty"), nothing);
    let dispatcher = Dispatcher::new(hooks.build().unwrap());
    for tool in ["bash", "", "sql_query"] {
        dispatcher.dispatch(pre_tool_use(tool, json!({}))).await;
    }
    assert_eq!(count.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn an_invalid_outcome_keeps_its_side_effects_but_not_its_context() {
    let mut hooks = RegistryBuilder::new();
    let answer = Outcome::allow()
        .with_args(json!({}))
        .with_side_effect(SideEffect::new("audit", json!(1)))
        .with_context("ctx");
    hooks.register(Event::UserTurn, answering("rewriter", answer));
    let dispatcher = Dispatcher::new(hooks.build().unwrap());
    let turn = tollgate_protocol::UserTurn {
        prompt: "hi".into(),
    };
    let outcome = dispatcher
        .dispatch(Arc::new(Payload::new(common("r"), turn)))
        .await;
    assert_eq!(outcome.runs[0].status, RunStatus::InvalidOutput);
    let kinds: Vec<&str> = outcome
        .side_effects
        .iter()
        .map(|s| s.effect.kind.as_str())
        .collect();
    assert_eq!(kinds, ["audit", "hook_failure"]);
    assert!(outcome.additional_context.is_empty());
}

#[tokio::test]
async fn on_post_tool_use_deny_withholds_the_result_and_ask_is_only_recorded() {
    let mut hooks = RegistryBuilder::new();
    hooks.register(Event::PostToolUse, answering("asker", Outcome::ask("look")));
    let dispatcher = Dispatcher::new(hooks.build().unwrap());
    let asked = dispatcher
        .dispatch(post_tool_use("read_file", json!("x")))
        .await;
    assert_eq!(asked.decision, Decision::Allow);
    assert_eq!(asked.runs[0].decision, Some(Decision::ask("look")));

    let mut hooks = RegistryBuilder::new();
    hooks.register(
        Event::PostToolUse,
        answering("redactor", Outcome::deny("contains secrets")),
    );
    let dispatcher = Dispatcher::new(hooks.build().unwrap());
    let denied = dispatcher
        .dispatch(post_tool_use("read_file", json!("x")))
        .await;
    assert_eq!(
        denied.observation().as_deref(),
        Some("Tool result withheld by hook `redactor`: contains secrets")
    );
}

#[tokio::test]
async fn a_deny_or_ask_without_a_reason_gets_one_naming_the_hook() {
    let outcome = fold(vec![Outcome::deny("  ")]).await;
    assert_eq!(
        outcome.decision,
        Decision::deny("denied by hook `h0` (no reason given)")
    );
    let outcome = fold(vec![Outcome::ask("")]).await;
    assert_eq!(
        outcome.decision.reason(),
        Some("hook `h0` asks for approval (no reason given)")
    );
}

#[tokio::test]
async fn fire_and_forget_hooks_never_delay_the_dispatch_and_still_run() {
    // The hook waits for a message the test only sends after dispatch returned: had the
    // dispatch waited for the hook, it could never have returned.
    let (release, released) = tokio::sync::oneshot::channel::<()>();
    let released = Arc::new(tokio::sync::Mutex::new(Some(released)));
    let (done, finished) = tokio::sync::oneshot::channel::<String>();
    let done = Arc::new(Mutex::new(Some(done)));
    let mut hooks = RegistryBuilder::new();
    hooks.register_with(
        Event::SessionEnd,
        hook_fn("webhook", move |ctx| {
            let (released, done) = (released.clone(), done.clone());
            async move {
                if let Some(released) = released.lock().await.take() {
                    let _ = released.await;
                }
                if let Some(done) = done.lock().unwrap().take() {
                    let _ = done.send(ctx.payload().common.run_id.clone());
                }
                Ok(Outcome::allow())
            }
        }),
        HookOptions::default().fire_and_forget(true),
    );
    let dispatcher = Dispatcher::new(hooks.build().unwrap());
    let end = tollgate_protocol::SessionEnd {
        status: tollgate_protocol::SessionEndStatus::Completed,
        error: None,
        answer: None,
        continued: 0,
    };
    let outcome = dispatcher
        .dispatch(Arc::new(Payload::new(common("run-9"), end)))
        .await;
    assert_eq!(outcome.runs[0].status, RunStatus::Detached);
    drop(dispatcher); // the run ends; the detached hook goes on
    release.send(()).unwrap();
    assert_eq!(finished.await.unwrap(), "run-9");
}

/// Keeps what the detached-run observer saw.
#[derive(Default)]
struct Finished(Mutex<Vec<(String, RunStatus, Option<String>)>>);

impl tollgate_core::DetachedObserver for Finished {
    fn finished(&self, payload: &Payload, run: tollgate_core::NamedRun<'_>, _: Option<&Outcome>) {
        assert_eq!(payload.event(), Event::SessionEnd);
        self.0
            .lock()
            .unwrap()
            .push((run.name.to_owned(), run.status, run.error.clone()));
    }
}

#[tokio::test(start_paused = true)]
async fn a_detached_hooks_end_reaches_the_detached_observer() {
    let mut hooks = RegistryBuilder::new();
    hooks.register_with(
        Event::SessionEnd,
        hook_fn("fine", |_| async { Ok(Outcome::allow()) }),
        HookOptions::default().fire_and_forget(true),
    );
    hooks.register_with(
        Event::SessionEnd,
        hook_fn("broken", |_| async {
            Err(tollgate_core::HookError::msg("receiver said 500"))
        }),
        HookOptions::default().fire_and_forget(true),
    );
    hooks.register_with(
        Event::SessionEnd,
        hook_fn("stuck", |_| async {
            tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
            Ok(Outcome::allow())
        }),
        HookOptions::default()
            .fire_and_forget(true)
            .timeout(tollgate_core::HookTimeout::from_secs(1).unwrap()),
    );
    let background = tollgate_core::Background::default();
    let seen = Arc::new(Finished::default());
    let dispatcher = Dispatcher::new(hooks.build().unwrap())
        .with_background(background.clone())
        .with_detached_observer(seen.clone());
    let end = tollgate_protocol::SessionEnd {
        status: tollgate_protocol::SessionEndStatus::Completed,
        error: None,
        answer: None,
        continued: 0,
    };
    let outcome = dispatcher
        .dispatch(Arc::new(Payload::new(common("run-d"), end)))
        .await;
    assert!(outcome.runs.iter().all(|r| r.status == RunStatus::Detached));
    background.idle().await;
    let mut seen = seen.0.lock().unwrap().clone();
    seen.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(seen.len(), 3);
    assert_eq!(
        (seen[0].0.as_str(), seen[0].1),
        ("broken", RunStatus::Errored)
    );
    assert_eq!(seen[0].2.as_deref(), Some("receiver said 500"));
    assert_eq!(
        (seen[1].0.as_str(), seen[1].1),
        ("fine", RunStatus::Completed)
    );
    assert_eq!(
        (seen[2].0.as_str(), seen[2].1),
        ("stuck", RunStatus::TimedOut)
    );
}

#[tokio::test]
async fn a_full_background_queue_drops_fire_and_forget_hooks() {
    let background = tollgate_core::Background::new(1, 1);
    let gate = Arc::new(tokio::sync::Notify::new());
    let mut hooks = RegistryBuilder::new();
    let waiting = gate.clone();
    hooks.register_with(
        Event::SessionStart,
        hook_fn("slow", move |_| {
            let waiting = waiting.clone();
            async move {
                waiting.notified().await;
                Ok(Outcome::allow())
            }
        }),
        HookOptions::default().fire_and_forget(true),
    );
    let dispatcher = Dispatcher::new(hooks.build().unwrap()).with_background(background.clone());
    let start = || {
        Arc::new(Payload::new(
            common("r"),
            tollgate_protocol::EventData::SessionStart,
        ))
    };
    let first = dispatcher.dispatch(start()).await;
    let second = dispatcher.dispatch(start()).await;
    assert_eq!(first.runs[0].status, RunStatus::Detached);
    assert_eq!(second.runs[0].status, RunStatus::Dropped);
    assert_eq!(background.pending(), 1);
    gate.notify_one();
    background.idle().await;
    let third = dispatcher.dispatch(start()).await;
    assert_eq!(
        third.runs[0].status,
        RunStatus::Detached,
        "the queue has room again"
    );
    gate.notify_one();
}

#[tokio::test]
async fn fire_and_forget_on_a_blocking_event_still_decides() {
    let mut hooks = RegistryBuilder::new();
    hooks.register_with(
        Event::PreToolUse,
        answering("guard", Outcome::deny("no")),
        HookOptions::default().fire_and_forget(true),
    );
    let outcome = Dispatcher::new(hooks.build().unwrap())
        .dispatch(pre_tool_use("bash", json!({})))
        .await;
    assert!(outcome.is_denied());
}

struct Recorder(Mutex<Vec<(String, String)>>);

impl tollgate_core::DispatchObserver for Recorder {
    fn observe(&self, payload: &Payload, outcome: &tollgate_core::DispatchOutcome) {
        let entry = (
            payload.event().to_string(),
            outcome.decision.as_str().to_owned(),
        );
        self.0.lock().unwrap().push(entry);
    }
}

struct Exploding;

impl tollgate_core::DispatchObserver for Exploding {
    fn observe(&self, _: &Payload, _: &tollgate_core::DispatchOutcome) {
        panic!("observer bug");
    }
}

#[tokio::test]
async fn observers_see_every_folded_outcome_even_after_a_deny_short_circuit() {
    let recorder = Arc::new(Recorder(Mutex::new(Vec::new())));
    let mut hooks = RegistryBuilder::new();
    hooks.register(Event::PreToolUse, answering("denier", Outcome::deny("no")));
    hooks.observe(Arc::new(Exploding));
    hooks.observe(recorder.clone());
    let dispatcher = Dispatcher::new(hooks.build().unwrap());
    let outcome = dispatcher.dispatch(pre_tool_use("bash", json!({}))).await;
    assert!(outcome.is_denied(), "a panicking observer changes nothing");
    dispatcher
        .dispatch(post_tool_use("bash", json!("ok")))
        .await;
    assert_eq!(
        *recorder.0.lock().unwrap(),
        [
            ("pre_tool_use".to_owned(), "deny".to_owned()),
            ("post_tool_use".to_owned(), "allow".to_owned())
        ]
    );
}
