//! Class hooks built from the class table and run through the real dispatcher.

use std::sync::Arc;

use serde_json::{Map, Value, json};
use tollgate_core::{DispatchOutcome, Dispatcher, HookOptions, RegistryBuilder, ToolMatcher};
use tollgate_handlers::{ClassError, ClassInstance, ClassTable};
use tollgate_protocol::{Decision, Payload, PayloadCommon, ToolCall, ToolResult};

/// Common fields with `metadata`.
fn common(metadata: Value) -> PayloadCommon {
    let metadata: Map<String, Value> = serde_json::from_value(metadata).unwrap();
    PayloadCommon {
        session_id: "s1".into(),
        run_id: "r1".into(),
        trace_id: "t1".into(),
        agent_id: "a1".into(),
        metadata,
        ..Default::default()
    }
}

fn call(tool: &str, args: Value) -> ToolCall {
    ToolCall {
        tool_name: tool.into(),
        tool_call_id: "call_1".into(),
        tool_input: args,
    }
}

fn pre(metadata: Value, tool: &str, args: Value) -> Arc<Payload> {
    Arc::new(Payload::new(common(metadata), call(tool, args)))
}

fn post(tool: &str, result: Value) -> Arc<Payload> {
    let done = ToolResult {
        call: call(tool, json!({})),
        tool_result: result,
    };
    Arc::new(Payload::new(common(json!({})), done))
}

/// A dispatcher with one class instance registered the way the config crate does: for its
/// default events, with its default `tools`, plus its observer.
fn dispatcher(class: &str, params: Value) -> Dispatcher {
    let instance = ClassTable::builtin().instantiate(class, &params).unwrap();
    let mut registry = RegistryBuilder::new();
    if let Some(hook) = &instance.hook {
        let mut options = HookOptions::default();
        if let Some(tools) = &instance.tools {
            options = options.tools(ToolMatcher::new(tools).unwrap());
        }
        for event in &instance.events {
            registry.register_shared(event.clone(), hook.clone(), options.clone());
        }
    }
    if let Some(observer) = instance.observer {
        registry.observe(observer);
    }
    Dispatcher::new(registry.build().unwrap())
}

fn bad_params(class: &str, params: Value) -> (String, String) {
    match ClassTable::builtin()
        .instantiate(class, &params)
        .unwrap_err()
    {
        ClassError::BadParams { class, message } => (class, message),
        other => panic!("{other:?}"),
    }
}

fn reason(outcome: &DispatchOutcome) -> &str {
    outcome.decision.reason().unwrap_or_default()
}

#[test]
fn unknown_class_is_an_error_naming_it_and_the_known_ones() {
    let err = ClassTable::builtin()
        .instantiate("ReadOnlyGaurd", &Value::Null)
        .unwrap_err();
    let ClassError::UnknownClass { name, known } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(name, "ReadOnlyGaurd");
    assert!(known.contains(&"ReadOnlyGuard".to_owned()), "{known:?}");
    assert!(err.to_string().contains("ReadOnlyGaurd"), "{err}");
}

#[test]
fn builtin_table_names_the_four_classes() {
    assert_eq!(
        ClassTable::builtin().names(),
        [
            "AuditLogHook",
            "ConnectorRateLimitHook",
            "ReadOnlyGuard",
            "ResultTruncateHook"
        ]
    );
}

#[test]
fn user_registered_class_is_instantiated_with_its_params() {
    let mut table = ClassTable::builtin();
    table.register(
        "Echo",
        Arc::new(|params: &Value| {
            Ok(ClassInstance {
                tools: Some(vec![params["glob"].as_str().unwrap_or("*").to_owned()]),
                ..ClassInstance::default()
            })
        }),
    );
    let instance = table
        .instantiate("Echo", &json!({"glob": "oa__*"}))
        .unwrap();
    assert_eq!(instance.tools, Some(vec!["oa__*".to_owned()]));
    assert!(table.names().contains(&"Echo"));
}

#[test]
fn relative_path_params_are_taken_from_the_declaring_folder() {
    let dir = tempfile::tempdir().unwrap();
    let table = ClassTable::builtin();
    let name = "tollgate-relative-audit-test.jsonl";
    let params = json!({"path": format!("./logs/{name}")});
    std::fs::create_dir(dir.path().join("logs")).unwrap();
    table
        .instantiate_in("AuditLogHook", &params, dir.path())
        .unwrap();
    assert!(dir.path().join("logs").join(name).is_file());
    // Not relative to the process's working directory.
    assert!(!std::path::Path::new("logs").join(name).exists());
    let absolute = dir.path().join("abs.jsonl");
    let elsewhere = tempfile::tempdir().unwrap();
    table
        .instantiate_in("AuditLogHook", &json!({"path": absolute}), elsewhere.path())
        .unwrap();
    assert!(absolute.is_file());
}

#[test]
fn a_registered_class_names_its_own_path_params() {
    let mut table = ClassTable::new();
    table.register_with_paths(
        "Spill",
        Arc::new(|params: &Value| {
            Ok(ClassInstance {
                tools: Some(vec![params["dir"].as_str().unwrap().to_owned()]),
                ..ClassInstance::default()
            })
        }),
        &["dir"],
    );
    let seen = |params: Value| {
        let base = std::path::Path::new("/etc/tollgate");
        let instance = table.instantiate_in("Spill", &params, base).unwrap();
        instance.tools.unwrap().remove(0)
    };
    assert_eq!(seen(json!({"dir": "spill"})), "/etc/tollgate/spill");
    assert_eq!(seen(json!({"dir": "/var/spill"})), "/var/spill");
    assert_eq!(seen(json!({"dir": "~/spill"})), "~/spill");
}

#[test]
fn a_typo_in_params_is_bad_params_naming_class_and_field() {
    let (class, message) = bad_params("ReadOnlyGuard", json!({"readonly_org": ["org-7"]}));
    assert_eq!(class, "ReadOnlyGuard");
    assert!(message.contains("readonly_org"), "{message}");
}

#[test]
fn a_wrong_type_in_params_is_bad_params_naming_class_and_field() {
    let (class, message) = bad_params("ReadOnlyGuard", json!({"readonly_orgs": "org-7"}));
    assert_eq!(class, "ReadOnlyGuard");
    assert!(message.starts_with("readonly_orgs:"), "{message}");
    let (_, message) = bad_params("ReadOnlyGuard", json!({"readonly_orgs": ["org-7", 8]}));
    assert!(message.starts_with("readonly_orgs[1]:"), "{message}");
    let (_, message) = bad_params("ReadOnlyGuard", json!(["org-7"]));
    assert!(message.contains("must be a map"), "{message}");
}

mod read_only_guard {
    use super::*;

    fn guard() -> Dispatcher {
        dispatcher("ReadOnlyGuard", json!({"readonly_orgs": ["org-7"]}))
    }

    #[tokio::test]
    async fn denies_writes_of_a_listed_organisation_with_a_reason_for_the_model() {
        let args = json!({"sql": "/* cleanup */ DELETE FROM orders WHERE id = 1"});
        let outcome = guard()
            .dispatch(pre(json!({"org_id": "org-7"}), "sql_execute", args))
            .await;
        assert!(outcome.is_denied());
        assert_eq!(
            reason(&outcome),
            "organisation org-7 is read-only: DELETE statements are not allowed"
        );
        assert!(outcome.observation().unwrap().contains("ReadOnlyGuard"));
    }

    #[tokio::test]
    async fn any_write_among_several_statements_denies() {
        let args = json!({"query": "SELECT 1; WITH x AS (SELECT 2) UPDATE t SET a = 1"});
        let outcome = guard()
            .dispatch(pre(json!({"org_id": "org-7"}), "sql_query", args))
            .await;
        assert!(
            reason(&outcome).contains("UPDATE statements"),
            "{outcome:?}"
        );
    }

    #[tokio::test]
    async fn regression_dialect_tricks_do_not_hide_a_write() {
        for sql in [
            "select 1 --1; DELETE FROM t",
            "BEGIN DELETE FROM t END",
            "DESC ANALYZE DELETE FROM t",
        ] {
            let outcome = guard()
                .dispatch(pre(
                    json!({"org_id": "org-7"}),
                    "sql_execute",
                    json!({"sql": sql}),
                ))
                .await;
            assert!(outcome.is_denied(), "{sql}");
        }
    }

    #[tokio::test]
    async fn selects_of_a_read_only_organisation_pass() {
        let args = json!({"sql": "WITH a AS (SELECT 1) SELECT * FROM a -- first rows"});
        let outcome = guard()
            .dispatch(pre(json!({"org_id": "org-7"}), "sql_execute", args))
            .await;
        assert_eq!(outcome.decision, Decision::Allow);
    }

    #[tokio::test]
    async fn writes_of_other_organisations_pass() {
        let args = json!({"sql": "DROP TABLE t"});
        let outcome = guard()
            .dispatch(pre(json!({"org_id": "org-8"}), "sql_execute", args))
            .await;
        assert_eq!(outcome.decision, Decision::Allow);
    }

    #[tokio::test]
    async fn the_metadata_flag_makes_a_run_read_only() {
        let outcome = guard()
            .dispatch(pre(
                json!({"readonly": true}),
                "sql_x",
                json!({"sql": "TRUNCATE t"}),
            ))
            .await;
        assert_eq!(
            reason(&outcome),
            "this run's organisation is read-only: TRUNCATE statements are not allowed"
        );
        let custom = dispatcher("ReadOnlyGuard", json!({"readonly_flag": "ro"}));
        let meta = json!({"ro": true, "org_id": "org-1"});
        let outcome = custom
            .dispatch(pre(meta, "sql_x", json!({"sql": "VACUUM"})))
            .await;
        assert!(outcome.is_denied());
    }

    #[tokio::test]
    async fn missing_or_unreadable_sql_denies() {
        let meta = json!({"org_id": "org-7"});
        let outcome = guard()
            .dispatch(pre(meta.clone(), "sql_x", json!({"sql": 42})))
            .await;
        assert!(
            reason(&outcome).contains("could not be checked"),
            "{outcome:?}"
        );
        let args = json!({"sql": "SELECT 'oops"});
        let outcome = guard().dispatch(pre(meta, "sql_x", args)).await;
        assert!(reason(&outcome).contains("unterminated"), "{outcome:?}");
    }

    #[tokio::test]
    async fn other_tools_are_not_checked() {
        let meta = json!({"org_id": "org-7"});
        let outcome = guard()
            .dispatch(pre(meta.clone(), "bash", json!({"sql": "DROP"})))
            .await;
        assert!(outcome.runs.is_empty());
        let custom = dispatcher(
            "ReadOnlyGuard",
            json!({"readonly_orgs": ["org-7"], "tools": ["db_*"]}),
        );
        let outcome = custom
            .dispatch(pre(meta, "db_run", json!({"sql": "DROP TABLE t"})))
            .await;
        assert!(outcome.is_denied());
    }
}

mod result_truncate_hook {
    use super::*;

    #[tokio::test]
    async fn an_oversized_result_is_spilled_and_the_model_sees_a_preview() {
        let dir = tempfile::tempdir().unwrap();
        let params = json!({"max_bytes": 512, "spill_dir": dir.path()});
        let big = "x".repeat(4000);
        let outcome = dispatcher("ResultTruncateHook", params)
            .dispatch(post("sql_query", json!({"rows": big})))
            .await;
        let preview = outcome.modified_result.as_ref().unwrap().as_str().unwrap();
        assert!(preview.len() <= 512, "{}", preview.len());
        let effect = &outcome.side_effects[0].effect;
        assert_eq!(effect.kind, "result_spilled");
        let file = effect.detail["file"].as_str().unwrap();
        assert!(preview.contains(file), "{preview}");
        let full = std::fs::read_to_string(file).unwrap();
        assert_eq!(full, json!({"rows": big}).to_string());
        assert_eq!(effect.detail["original_bytes"], json!(full.len()));
    }

    #[tokio::test]
    async fn a_result_within_the_limit_is_not_rewritten() {
        let dir = tempfile::tempdir().unwrap();
        let params = json!({"max_bytes": 512, "spill_dir": dir.path()});
        let outcome = dispatcher("ResultTruncateHook", params)
            .dispatch(post("t", json!("y".repeat(500))))
            .await;
        assert_eq!(outcome.modified_result, None);
        assert!(outcome.side_effects.is_empty());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn defaults_and_bad_params() {
        let instance = ClassTable::builtin()
            .instantiate("ResultTruncateHook", &Value::Null)
            .unwrap();
        assert_eq!(instance.events, [tollgate_protocol::Event::PostToolUse]);
        let (_, message) = bad_params("ResultTruncateHook", json!({"max_bytes": "16k"}));
        assert!(message.starts_with("max_bytes:"), "{message}");
        let (_, message) = bad_params("ResultTruncateHook", json!({"max_bytes": 100}));
        assert!(message.contains("at least 512"), "{message}");
        let (_, message) = bad_params("ResultTruncateHook", json!({"max_byte": 1}));
        assert!(message.contains("max_byte"), "{message}");
    }
}

mod connector_rate_limit_hook {
    use super::*;

    fn oa_call(org: &str) -> Arc<Payload> {
        pre(json!({"org_id": org}), "oa__purchase_pay", json!({}))
    }

    #[tokio::test]
    async fn over_the_limit_denies_with_a_retry_after() {
        let limiter = dispatcher("ConnectorRateLimitHook", json!({"per_minute": 2}));
        for _ in 0..2 {
            assert_eq!(
                limiter.dispatch(oa_call("org-7")).await.decision,
                Decision::Allow
            );
        }
        let denied = limiter.dispatch(oa_call("org-7")).await;
        let reason = reason(&denied);
        assert!(
            reason.starts_with("rate limit for connector oa in org-7 exceeded; retry after "),
            "{reason}"
        );
        let secs: f64 = reason.rsplit(' ').nth(1).unwrap().parse().unwrap();
        assert!(secs > 0.0 && secs <= 30.0, "{reason}");
    }

    #[tokio::test]
    async fn buckets_are_per_organisation_and_connector() {
        let limiter = dispatcher("ConnectorRateLimitHook", json!({"per_minute": 1}));
        assert!(!limiter.dispatch(oa_call("org-7")).await.is_denied());
        assert!(limiter.dispatch(oa_call("org-7")).await.is_denied());
        assert!(!limiter.dispatch(oa_call("org-8")).await.is_denied());
        let crm = pre(json!({"org_id": "org-7"}), "crm__lookup", json!({}));
        assert!(!limiter.dispatch(crm).await.is_denied());
        // Without an org id: the shared `unknown` bucket.
        let anon = || pre(json!({}), "oa__x", json!({}));
        assert!(!limiter.dispatch(anon()).await.is_denied());
        let denied = limiter.dispatch(anon()).await;
        assert!(
            reason(&denied).contains("in unknown exceeded"),
            "{denied:?}"
        );
    }

    #[tokio::test]
    async fn tools_without_a_connector_prefix_are_not_limited() {
        let limiter = dispatcher("ConnectorRateLimitHook", json!({"per_minute": 1}));
        for _ in 0..3 {
            let outcome = limiter.dispatch(pre(json!({}), "bash", json!({}))).await;
            assert!(outcome.runs.is_empty());
        }
    }

    #[tokio::test]
    async fn per_connector_overrides_apply() {
        let params = json!({"rate": 0.01, "burst": 1, "connectors": {"oa": {"per_minute": 3}}});
        let limiter = dispatcher("ConnectorRateLimitHook", params);
        for _ in 0..3 {
            assert!(!limiter.dispatch(oa_call("org-7")).await.is_denied());
        }
        assert!(limiter.dispatch(oa_call("org-7")).await.is_denied());
        let crm = || pre(json!({"org_id": "org-7"}), "crm__lookup", json!({}));
        assert!(!limiter.dispatch(crm()).await.is_denied());
        let denied = limiter.dispatch(crm()).await;
        assert!(
            reason(&denied).contains("retry after 100.0 s"),
            "{denied:?}"
        );
    }

    #[test]
    fn bad_params_name_the_field() {
        let (class, message) = bad_params("ConnectorRateLimitHook", Value::Null);
        assert_eq!(class, "ConnectorRateLimitHook");
        assert!(message.contains("per_minute"), "{message}");
        let both = json!({"per_minute": 1, "rate": 1.0});
        assert!(
            bad_params("ConnectorRateLimitHook", both)
                .1
                .contains("not both")
        );
        let zero = json!({"per_minute": 5, "connectors": {"oa": {"per_minute": 0}}});
        let (_, message) = bad_params("ConnectorRateLimitHook", zero);
        assert!(message.starts_with("connectors.oa.per_minute"), "{message}");
        let typo = json!({"per_minute": 5, "connectors": {"oa": {"burts": 2}}});
        let (_, message) = bad_params("ConnectorRateLimitHook", typo);
        assert!(message.contains("burts"), "{message}");
    }

    #[test]
    fn regression_a_vanishing_rate_is_bad_params_not_a_panic() {
        for rate in [1.0e-20, 1.0e-300, f64::MIN_POSITIVE, 1.0e-6] {
            let (_, message) = bad_params("ConnectorRateLimitHook", json!({"rate": rate}));
            assert!(message.starts_with("rate:"), "{rate}: {message}");
        }
    }
}

mod audit_log_hook {
    use tollgate_core::hook_fn;
    use tollgate_protocol::{Event, Outcome};

    use super::*;

    fn lines(path: &std::path::Path) -> Vec<Value> {
        let text = std::fs::read_to_string(path).unwrap();
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[tokio::test]
    async fn every_dispatch_is_appended_with_its_folded_decision() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        std::fs::write(&path, "{\"earlier\":true}\n").unwrap();
        let instance = ClassTable::builtin()
            .instantiate("AuditLogHook", &json!({"path": path}))
            .unwrap();
        assert!(instance.hook.is_none() && instance.events.is_empty());
        let mut registry = RegistryBuilder::new();
        registry.register(
            Event::PreToolUse,
            hook_fn("guard", |_| async { Ok(Outcome::deny("no")) }),
        );
        registry.observe(instance.observer.unwrap());
        let dispatcher = Dispatcher::new(registry.build().unwrap());
        dispatcher
            .dispatch(pre(json!({}), "sql_x", json!({})))
            .await;
        dispatcher.dispatch(post("sql_x", json!("ok"))).await;

        let lines = lines(&path);
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert_eq!(lines[0], json!({"earlier": true}));
        let denied = &lines[1];
        assert_eq!(denied["event"], "pre_tool_use");
        assert_eq!(denied["session_id"], "s1");
        assert_eq!(denied["run_id"], "r1");
        assert_eq!(denied["tool_name"], "sql_x");
        assert_eq!(denied["decision"], "deny");
        assert_eq!(denied["reason"], "no");
        assert_eq!(denied["decided_by"], "guard");
        assert_eq!(denied["hook_runs"][0]["hook"], "guard");
        assert_eq!(denied["hook_runs"][0]["decision"], "deny");
        let at = denied["at"].as_str().unwrap();
        assert!(
            at.ends_with('Z') && at.len() == 24 && &at[10..11] == "T",
            "{at}"
        );
        assert_eq!(lines[2]["event"], "post_tool_use");
        assert_eq!(lines[2]["decision"], "allow");
        assert!(lines[2].get("reason").is_none() && lines[2].get("decided_by").is_none());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_runs_never_interleave_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let params = json!({"path": path});
        let tasks: Vec<_> = (0..8)
            .map(|_| {
                let dispatcher = dispatcher("AuditLogHook", params.clone());
                tokio::spawn(async move {
                    for _ in 0..50 {
                        let args = json!({"sql": "x".repeat(3000)});
                        dispatcher.dispatch(pre(json!({}), "sql_x", args)).await;
                    }
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
        assert_eq!(lines(&path).len(), 400);
    }

    #[test]
    fn path_is_required_and_must_open() {
        let (_, message) = bad_params("AuditLogHook", Value::Null);
        assert!(message.contains("path"), "{message}");
        let (_, message) = bad_params("AuditLogHook", json!({"path": "/nonexistent/dir/a.jsonl"}));
        assert!(message.starts_with("path: cannot open"), "{message}");
    }
}
