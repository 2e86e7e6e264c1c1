//! JSON Schemas (draft 2020-12) of the wire types.
//!
//! The repository commits the output of these functions under `schemas/`; a test fails when
//! the committed files drift from the types. Regenerate them with
//! `TOLLGATE_BLESS=1 cargo test -p tollgate-protocol --test schemas`.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, SchemaGenerator};
use serde_json::{Map, Value, json};

use crate::event::BUILTIN_EVENTS;
use crate::wire::{
    ApprovalCorrectionWire, CommonWire, CustomWire, HookRunWire, NoFields, OutcomeWire,
    SessionEndWire, SubagentCancelWire, SubagentStartWire, SubagentStopWire, ToolCallWire,
    ToolCancelledWire, ToolFailureWire, ToolResultWire, UserTurnWire,
};

fn generator() -> SchemaGenerator {
    SchemaSettings::draft2020_12()
        .with(|settings| settings.inline_subschemas = true)
        .into_generator()
}

fn root<T: JsonSchema>() -> Value {
    generator().into_root_schema_for::<T>().to_value()
}

/// Schema of [`OutcomeWire`]: what a command or http hook may answer.
pub fn outcome_schema() -> Value {
    root::<OutcomeWire>()
}

/// Schema of [`HookRunWire`]: one hook run in a trace.
pub fn hook_run_schema() -> Value {
    root::<HookRunWire>()
}

/// Schema of [`crate::wire::PayloadWire`]: one flat object per event, chosen by `event`.
pub fn payload_schema() -> Value {
    let common = object_schema::<CommonWire>();
    let mut variants: Vec<Value> = BUILTIN_EVENTS
        .iter()
        .map(|event| {
            let name = event.as_str();
            variant(json!({"const": name}), &common, &fields_schema(name))
        })
        .collect();
    let custom_name = json!({"type": "string", "pattern": "^custom:[A-Za-z0-9_.:-]{1,128}$"});
    variants.push(variant(
        custom_name,
        &common,
        &object_schema::<CustomWire>(),
    ));
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Payload",
        "description": "What a hook receives: `event`, the common fields, and the event's own fields, in one flat object.",
        "oneOf": variants,
    })
}

fn fields_schema(event: &str) -> Value {
    match event {
        "session_end" => object_schema::<SessionEndWire>(),
        "user_turn" => object_schema::<UserTurnWire>(),
        "pre_tool_use" => object_schema::<ToolCallWire>(),
        "post_tool_use" => object_schema::<ToolResultWire>(),
        "post_tool_use_failure" => object_schema::<ToolFailureWire>(),
        "post_tool_use_cancelled" => object_schema::<ToolCancelledWire>(),
        "subagent_start" => object_schema::<SubagentStartWire>(),
        "subagent_stop" => object_schema::<SubagentStopWire>(),
        "subagent_cancel" => object_schema::<SubagentCancelWire>(),
        "approval_correction" => object_schema::<ApprovalCorrectionWire>(),
        "permission_request" => object_schema::<crate::wire::PermissionRequestWire>(),
        "notification" => object_schema::<crate::wire::NotificationWire>(),
        _ => object_schema::<NoFields>(),
    }
}

fn object_schema<T: JsonSchema>() -> Value {
    generator().into_root_schema_for::<T>().to_value()
}

fn variant(event: Value, common: &Value, fields: &Value) -> Value {
    let mut properties = Map::new();
    properties.insert("event".into(), event);
    let mut required = vec![Value::String("event".into())];
    for part in [common, fields] {
        if let Some(props) = part.get("properties").and_then(Value::as_object) {
            properties.extend(props.clone());
        }
        if let Some(req) = part.get("required").and_then(Value::as_array) {
            required.extend(req.iter().cloned());
        }
    }
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}
