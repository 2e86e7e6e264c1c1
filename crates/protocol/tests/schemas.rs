//! The committed JSON Schemas under `schemas/` match the wire types, and the wire types
//! round-trip through JSON.

use std::path::PathBuf;

use serde_json::{Value, json};
use tollgate_protocol::schema::{hook_run_schema, outcome_schema, payload_schema};
use tollgate_protocol::wire::{OutcomeWire, PayloadWire};
use tollgate_protocol::{
    BUILTIN_EVENTS, Decision, Event, EventData, Outcome, Payload, Rewrite, SubagentEnding,
    SubagentStatus,
};

fn schema_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../schemas")
}

fn check(file: &str, generated: &Value) {
    let path = schema_dir().join(file);
    let text = format!(
        "{}\n",
        serde_json::to_string_pretty(generated).unwrap_or_default()
    );
    if std::env::var_os("TOLLGATE_BLESS").is_some() {
        std::fs::create_dir_all(schema_dir()).ok();
        std::fs::write(&path, &text).ok();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == text,
        "{} drifted from the wire types; regenerate with \
         `TOLLGATE_BLESS=1 cargo test -p tollgate-protocol --test schemas` and review the diff",
        path.display()
    );
}

#[test]
fn committed_payload_schema_matches_the_types() {
    check("payload.schema.json", &payload_schema());
}

#[test]
fn committed_outcome_schema_matches_the_types() {
    check("outcome.schema.json", &outcome_schema());
}

#[test]
fn committed_hook_run_schema_matches_the_types() {
    check("hook-run.schema.json", &hook_run_schema());
}

#[test]
fn payload_schema_has_one_variant_per_event_plus_custom() {
    let schema = payload_schema();
    let variants = schema["oneOf"].as_array().cloned().unwrap_or_default();
    assert_eq!(variants.len(), BUILTIN_EVENTS.len() + 1);
    let stop = variants
        .iter()
        .find(|v| v["properties"]["event"]["const"] == "subagent_stop")
        .cloned()
        .unwrap_or_default();
    for field in [
        "task_id",
        "agent_type",
        "success",
        "status",
        "duration_seconds",
        "trace_id",
    ] {
        assert!(
            stop["properties"].get(field).is_some(),
            "subagent_stop lacks {field}"
        );
    }
    assert_eq!(stop["additionalProperties"], json!(false));
}

fn common() -> Value {
    json!({"session_id":"s","run_id":"r","trace_id":"t","agent_id":"a","metadata":{"org_id":"o"}})
}

fn with_common(event: &str, fields: Value) -> Value {
    let mut value = common();
    if let (Some(obj), Some(extra)) = (value.as_object_mut(), fields.as_object()) {
        obj.insert("event".into(), json!(event));
        obj.extend(extra.clone());
    }
    value
}

fn parse(value: Value) -> Result<Payload, String> {
    PayloadWire::from_json(value)
        .and_then(Payload::try_from)
        .map_err(|e| e.to_string())
}

#[test]
fn every_event_round_trips_through_the_wire() {
    let samples = [
        with_common("session_start", json!({})),
        with_common("session_end", json!({"status":"turn_limit"})),
        with_common("user_turn", json!({"prompt":"hi"})),
        with_common(
            "pre_tool_use",
            json!({"tool_name":"t","tool_call_id":"c","tool_input":{"a":1}}),
        ),
        with_common(
            "post_tool_use",
            json!({"tool_name":"t","tool_call_id":"c","tool_input":{},"tool_result":"ok"}),
        ),
        with_common(
            "post_tool_use_failure",
            json!({"tool_name":"t","tool_call_id":"c","tool_input":{},"error":"boom"}),
        ),
        with_common(
            "post_tool_use_cancelled",
            json!({"tool_name":"t","tool_call_id":"c","tool_input":{}}),
        ),
        with_common(
            "subagent_start",
            json!({"task_id":"k","agent_type":"researcher","task_description":"look"}),
        ),
        with_common(
            "subagent_stop",
            json!({"task_id":"k","agent_type":"researcher","success":false,"status":"timed_out","duration_seconds":1.5,"error":"too slow"}),
        ),
        with_common(
            "subagent_cancel",
            json!({"task_id":"k","agent_type":"researcher","reason":"user"}),
        ),
        with_common(
            "approval_correction",
            json!({"request_id":"q","tool_name":"t","tool_call_id":"c","tool_input":{"a":1},"corrected_input":{"a":2},"corrected_by":"alice"}),
        ),
        with_common("custom:deploy", json!({"data":{"env":"prod"}})),
    ];
    for sample in samples {
        let payload = parse(sample.clone()).unwrap_or_else(|e| panic!("{sample}: {e}"));
        let wire = PayloadWire::from(&payload);
        assert_eq!(wire.to_json(), sample);
        // Serialized directly, field by field: the same object, `event` first.
        let direct = serde_json::to_string(&wire).unwrap();
        assert_eq!(serde_json::from_str::<Value>(&direct).unwrap(), sample);
        assert!(direct.starts_with(&format!("{{\"event\":{}", sample["event"])));
    }
}

#[test]
fn aliases_are_accepted_on_input_and_canonical_on_output() {
    let payload = parse(with_common(
        "PreToolUse",
        json!({"tool_name":"t","tool_call_id":"c","tool_input":{}}),
    ));
    let payload = payload.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(payload.event(), Event::PreToolUse);
    assert_eq!(
        PayloadWire::from(&payload).to_json()["event"],
        "pre_tool_use"
    );
}

#[test]
fn subagent_stop_fields_are_validated() {
    let ok = parse(with_common(
        "subagent_stop",
        json!({"task_id":"k","agent_type":"a","success":true,"status":"completed","duration_seconds":2.0,"result":{"n":1}}),
    ));
    match ok.map(|p| p.data) {
        Ok(EventData::SubagentStop(stop)) => {
            assert_eq!(stop.status, SubagentStatus::Completed);
            assert_eq!(stop.ending, SubagentEnding::Result(json!({"n":1})));
        }
        other => panic!("unexpected {other:?}"),
    }
    let bad = [
        json!({"task_id":"k","agent_type":"a","success":true,"status":"failed","duration_seconds":1.0}),
        json!({"task_id":"k","agent_type":"a","success":true,"status":"completed","duration_seconds":-1.0}),
        json!({"task_id":"k","agent_type":"a","success":true,"status":"completed","duration_seconds":1.0,"result":1,"error":"x"}),
        json!({"task_id":"k","agent_type":"a","success":true,"status":"finished","duration_seconds":1.0}),
    ];
    for fields in bad {
        assert!(
            parse(with_common("subagent_stop", fields.clone())).is_err(),
            "{fields}"
        );
    }
}

#[test]
fn unknown_and_misplaced_fields_are_refused() {
    let stray = with_common(
        "pre_tool_use",
        json!({"tool_name":"t","tool_call_id":"c","tool_input":{},"tools":"x"}),
    );
    assert!(parse(stray).is_err());
    let wrong_event = with_common(
        "user_turn",
        json!({"tool_name":"t","tool_call_id":"c","tool_input":{}}),
    );
    assert!(parse(wrong_event).is_err());
    assert!(parse(json!([1, 2])).is_err());
    assert!(parse(json!({"session_id":"s"})).is_err());
}

fn outcome(value: Value) -> Result<Outcome, String> {
    serde_json::from_value::<OutcomeWire>(value)
        .map_err(|e| e.to_string())
        .and_then(|w| Outcome::try_from(w).map_err(|e| e.to_string()))
}

#[test]
fn native_and_claude_code_outcomes_parse() {
    let cases = [
        (json!({}), Decision::Allow),
        (
            json!({"decision":"deny","reason":"no"}),
            Decision::deny("no"),
        ),
        (
            json!({"allow":false,"error":"nope"}),
            Decision::deny("nope"),
        ),
        (
            json!({"decision":"block","reason":"cc"}),
            Decision::deny("cc"),
        ),
        (
            json!({"continue":false,"stopReason":"halt"}),
            Decision::deny("halt"),
        ),
        (
            json!({"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"check"}}),
            Decision::ask("check"),
        ),
        (
            json!({"hookSpecificOutput":{"permissionDecision":"defer"}}),
            Decision::ask(tollgate_protocol::wire::DEFAULT_ASK_REASON),
        ),
    ];
    for (wire, expected) in cases {
        assert_eq!(
            outcome(wire.clone()).map(|o| o.decision),
            Ok(expected),
            "{wire}"
        );
    }
}

#[test]
fn a_second_field_can_only_make_an_outcome_stricter() {
    let mixed = json!({"allow": true, "decision": "allow", "hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "cc says no"}});
    assert_eq!(
        outcome(mixed).map(|o| o.decision),
        Ok(Decision::deny("cc says no"))
    );
}

#[test]
fn rewrites_are_exclusive_and_consistent() {
    let args = outcome(json!({"hookSpecificOutput":{"updatedInput":{"dry_run":true}}}));
    assert_eq!(
        args.map(|o| o.rewrite().cloned()),
        Ok(Some(Rewrite::Args(json!({"dry_run":true}))))
    );
    assert!(outcome(json!({"modified_args":{},"modified_result":"x"})).is_err());
    assert!(
        outcome(json!({"modified_args":{"a":1},"hookSpecificOutput":{"updatedInput":{"a":2}}}))
            .is_err()
    );
    assert!(
        outcome(json!({"modifed_args":{}})).is_err(),
        "typo must not be ignored"
    );
}

#[test]
fn a_rewrite_to_null_is_a_rewrite_and_an_absent_field_is_none() {
    assert_eq!(
        outcome(json!({"modified_result": null})).map(|o| o.rewrite().cloned()),
        Ok(Some(Rewrite::Result(Value::Null)))
    );
    assert_eq!(
        outcome(json!({"hookSpecificOutput": {"updatedInput": null}}))
            .map(|o| o.rewrite().cloned()),
        Ok(Some(Rewrite::Args(Value::Null)))
    );
    assert_eq!(
        outcome(json!({"reason": "x"})).map(|o| o.rewrite().cloned()),
        Ok(None)
    );
    let stop = parse(with_common(
        "subagent_stop",
        json!({"task_id":"k","agent_type":"a","success":true,"status":"completed","duration_seconds":1.0,"result":null}),
    ));
    match stop.map(|p| p.data) {
        Ok(EventData::SubagentStop(stop)) => {
            assert_eq!(stop.ending, SubagentEnding::Result(Value::Null))
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn a_subagent_ending_must_agree_with_its_status() {
    let contradictions = [
        json!({"task_id":"k","agent_type":"a","success":true,"status":"completed","duration_seconds":1.0,"error":"boom"}),
        json!({"task_id":"k","agent_type":"a","success":false,"status":"failed","duration_seconds":1.0,"result":{"ok":1}}),
        json!({"task_id":"k","agent_type":"a","success":false,"status":"timed_out","duration_seconds":1.0,"result":1}),
    ];
    for fields in contradictions {
        assert!(
            parse(with_common("subagent_stop", fields.clone())).is_err(),
            "{fields}"
        );
    }
    let cancelled = json!({"task_id":"k","agent_type":"a","success":false,"status":"cancelled","duration_seconds":1.0,"error":"user"});
    assert!(parse(with_common("subagent_stop", cancelled)).is_ok());
}

#[test]
fn an_error_message_denies_even_next_to_allow_true() {
    assert_eq!(
        outcome(json!({"allow": true, "error": "boom"})).map(|o| o.decision),
        Ok(Decision::deny("boom"))
    );
}

#[test]
fn claude_codes_updated_mcp_tool_output_is_accepted() {
    let wire = json!({"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedMCPToolOutput": "redacted"}});
    assert_eq!(
        outcome(wire).map(|o| o.rewrite().cloned()),
        Ok(Some(Rewrite::Result(json!("redacted"))))
    );
}
