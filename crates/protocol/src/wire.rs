//! The JSON wire form of payloads and outcomes, kept apart from the domain types.
//!
//! Hooks outside the process (command, http) receive a [`PayloadWire`] as one flat JSON object
//! and answer with an [`OutcomeWire`]. Both are strict: an unknown key is an error, so a typo in a
//! hook's answer is a hook failure instead of a silently ignored field. The committed JSON
//! Schemas (`schemas/` at the repository root) are generated from these types; see
//! [`crate::schema`].

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{ProtocolError, Result};

mod ask;
mod outcome;
mod payload;

pub use ask::{NotificationWire, PermissionRequestWire};

pub use outcome::{
    DEFAULT_ASK_REASON, DEFAULT_DENY_REASON, DecisionWire, HookRunWire, HookSpecificOutputWire,
    OutcomeWire, SideEffectWire,
};
pub use payload::{
    ApprovalCorrectionWire, CommonWire, CustomWire, FieldsWire, PayloadWire, SessionEndStatusWire,
    SessionEndWire, SubagentCancelWire, SubagentStartWire, SubagentStatusWire, SubagentStopWire,
    ToolCallWire, ToolCancelledWire, ToolFailureWire, ToolResultWire, UserTurnWire,
};

/// An object with no fields of its own (the fields of `session_start`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoFields {}

fn to_object<T: Serialize>(value: &T) -> Map<String, Value> {
    match serde_json::to_value(value) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    }
}

fn from_object<T: for<'de> Deserialize<'de>>(map: Map<String, Value>) -> Result<T> {
    serde_json::from_value(Value::Object(map)).map_err(ProtocolError::payload)
}
