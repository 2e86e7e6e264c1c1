//! Class hooks built from the class table and run through the real dispatcher.

use std::sync::Arc;

use serde_json::{Map, Value, json};
use tollgate_core::{DispatchOutcome, Dispatcher, HookOptions, RegistryBuilder, ToolMatcher};
use tollgate_handlers::{ClassError, ClassInstance, ClassTable};
use tollgate_protocol::{Decision, Payload, PayloadCommon, ToolCall};

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
    async fn selects_of_a_read_only_organisation_pass() {
        let args = json!({"sql": "WITH a AS (SELECT 1) SELECT * FROM a -- DROP"});
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
