//! Wire form of payloads: one flat JSON object, `event` plus common plus event fields.

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{NoFields, NotificationWire, PermissionRequestWire, from_object, to_object};
use crate::error::{ProtocolError, Result};
use crate::event::Event;
use crate::payload::{
    ApprovalCorrection, EventData, Payload, PayloadCommon, SessionEnd, SessionEndStatus,
    SubagentCancel, SubagentEnding, SubagentStart, SubagentStatus, SubagentStop, ToolCall,
    ToolCancelled, ToolFailure, ToolResult, UserTurn,
};

/// The fields every wire payload carries.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CommonWire {
    /// The conversation this run belongs to.
    pub session_id: String,
    /// This run.
    pub run_id: String,
    /// The trace the run belongs to (shared with delegated sub-agents).
    pub trace_id: String,
    /// The agent that proposed the action.
    pub agent_id: String,
    /// What started the run (`cli`, `api`, `workflow`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Free-form run metadata set by the host.
    #[serde(default)]
    pub metadata: Map<String, Value>,
}

/// A payload on the wire: `{"event": "<name>", <common fields>, <event fields>}`.
///
/// Example (`pre_tool_use`):
/// ```json
/// {"event":"pre_tool_use","session_id":"s1","run_id":"r1","trace_id":"t1","agent_id":"a1",
///  "metadata":{"org_id":"org-7"},"tool_name":"sql_execute","tool_call_id":"call_1",
///  "tool_input":{"sql":"DELETE FROM t"}}
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct PayloadWire {
    /// The event (canonical name on the wire; aliases are accepted when reading).
    pub event: Event,
    /// The common fields.
    pub common: CommonWire,
    /// The event's own fields.
    pub fields: FieldsWire,
}

/// The event-specific part of a wire payload.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum FieldsWire {
    /// `session_start`.
    SessionStart(NoFields),
    /// `session_end`.
    SessionEnd(SessionEndWire),
    /// `user_turn`.
    UserTurn(UserTurnWire),
    /// `pre_tool_use`.
    PreToolUse(ToolCallWire),
    /// `post_tool_use`.
    PostToolUse(ToolResultWire),
    /// `post_tool_use_failure`.
    PostToolUseFailure(ToolFailureWire),
    /// `post_tool_use_cancelled`.
    PostToolUseCancelled(ToolCancelledWire),
    /// `subagent_start`.
    SubagentStart(SubagentStartWire),
    /// `subagent_stop`.
    SubagentStop(SubagentStopWire),
    /// `subagent_cancel`.
    SubagentCancel(SubagentCancelWire),
    /// `approval_correction`.
    ApprovalCorrection(ApprovalCorrectionWire),
    /// `permission_request`.
    PermissionRequest(PermissionRequestWire),
    /// `notification`.
    Notification(NotificationWire),
    /// `custom:<name>`.
    Custom(CustomWire),
}

/// Fields of `session_end`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionEndWire {
    /// How the session ended.
    pub status: SessionEndStatusWire,
    /// The error, when the session failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The model's final answer, when the session completed with one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// How many times a hook kept this session going when it had completed; absent when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub continued: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// Fields of `user_turn`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UserTurnWire {
    /// The user's message.
    pub prompt: String,
}

/// Fields of `pre_tool_use`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolCallWire {
    /// The runtime tool name.
    pub tool_name: String,
    /// The model's id for the call.
    pub tool_call_id: String,
    /// The call's arguments.
    pub tool_input: Value,
}

/// Fields of `post_tool_use`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolResultWire {
    /// The runtime tool name.
    pub tool_name: String,
    /// The model's id for the call.
    pub tool_call_id: String,
    /// The arguments the call ran with.
    pub tool_input: Value,
    /// What the tool returned.
    pub tool_result: Value,
}

/// Fields of `post_tool_use_failure`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolFailureWire {
    /// The runtime tool name.
    pub tool_name: String,
    /// The model's id for the call.
    pub tool_call_id: String,
    /// The arguments the call ran with.
    pub tool_input: Value,
    /// Why it failed.
    pub error: String,
}

/// Fields of `post_tool_use_cancelled`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolCancelledWire {
    /// The runtime tool name.
    pub tool_name: String,
    /// The model's id for the call.
    pub tool_call_id: String,
    /// The arguments the call ran with.
    pub tool_input: Value,
    /// Why it was cancelled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Fields of `subagent_start` (the sub-agent's `trace_id` is the common one).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SubagentStartWire {
    /// The delegation's id.
    pub task_id: String,
    /// Which agent is delegated to.
    pub agent_type: String,
    /// The task as the caller phrased it.
    pub task_description: String,
}

/// Fields of `subagent_stop`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SubagentStopWire {
    /// The delegation's id.
    pub task_id: String,
    /// Which agent ran.
    pub agent_type: String,
    /// `true` exactly when `status` is `completed`.
    pub success: bool,
    /// How it ended.
    pub status: SubagentStatusWire,
    /// How long it ran, in seconds.
    #[schemars(range(min = 0))]
    pub duration_seconds: f64,
    /// What it returned (never together with `error`; `null` is a result).
    #[serde(
        default,
        deserialize_with = "super::outcome::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub result: Option<Value>,
    /// Why it failed or stopped (never together with `result`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// How many times a hook kept this sub-agent working when it had completed; absent when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub continued: u32,
}

/// Fields of `subagent_cancel`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SubagentCancelWire {
    /// The delegation's id.
    pub task_id: String,
    /// Which agent was cancelled.
    pub agent_type: String,
    /// Why, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Fields of `approval_correction`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApprovalCorrectionWire {
    /// The confirmation request that was answered.
    pub request_id: String,
    /// The runtime tool name.
    pub tool_name: String,
    /// The model's id for the call.
    pub tool_call_id: String,
    /// The arguments as proposed.
    pub tool_input: Value,
    /// The arguments as corrected.
    pub corrected_input: Value,
    /// Who corrected them.
    pub corrected_by: String,
}

/// Fields of a custom event: host-defined data under `data`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CustomWire {
    /// Host-defined data.
    #[serde(default)]
    pub data: Map<String, Value>,
}

impl PayloadWire {
    /// The flat JSON object.
    pub fn to_json(&self) -> Value {
        let mut object = Map::new();
        object.insert("event".into(), Value::String(self.event.to_string()));
        object.extend(to_object(&self.common));
        object.extend(self.fields.to_object());
        Value::Object(object)
    }

    /// Reads a flat JSON object.
    ///
    /// # Errors
    /// [`ProtocolError::InvalidWire`] when `value` is not an object, `event` is missing or
    /// unknown, a required field is missing or of the wrong type, or a key is unknown.
    pub fn from_json(value: Value) -> Result<Self> {
        let Value::Object(mut object) = value else {
            return Err(ProtocolError::payload("expected a JSON object"));
        };
        let event: Event = match object.remove("event") {
            Some(Value::String(name)) => name.parse()?,
            _ => return Err(ProtocolError::payload("missing string field `event`")),
        };
        let mut common = Map::new();
        for key in COMMON_KEYS {
            if let Some(value) = object.remove(key) {
                common.insert(key.into(), value);
            }
        }
        let common = from_object(common)?;
        let fields = FieldsWire::from_object(&event, object)?;
        Ok(Self {
            event,
            common,
            fields,
        })
    }
}

const COMMON_KEYS: [&str; 6] = [
    "session_id",
    "run_id",
    "trace_id",
    "agent_id",
    "source",
    "metadata",
];

/// Writes the flat object field by field without building a [`Value`] first (http hooks
/// serialize every delivery's body this way): `event`, the common fields, the event's fields,
/// each group in declaration order. The object equals [`PayloadWire::to_json`]'s.
impl Serialize for PayloadWire {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Flat<'a> {
            event: &'a Event,
            #[serde(flatten)]
            common: &'a CommonWire,
            #[serde(flatten)]
            fields: &'a FieldsWire,
        }
        Flat {
            event: &self.event,
            common: &self.common,
            fields: &self.fields,
        }
        .serialize(serializer)
    }
}

impl Serialize for FieldsWire {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::SessionStart(f) => f.serialize(serializer),
            Self::SessionEnd(f) => f.serialize(serializer),
            Self::UserTurn(f) => f.serialize(serializer),
            Self::PreToolUse(f) => f.serialize(serializer),
            Self::PostToolUse(f) => f.serialize(serializer),
            Self::PostToolUseFailure(f) => f.serialize(serializer),
            Self::PostToolUseCancelled(f) => f.serialize(serializer),
            Self::SubagentStart(f) => f.serialize(serializer),
            Self::SubagentStop(f) => f.serialize(serializer),
            Self::SubagentCancel(f) => f.serialize(serializer),
            Self::ApprovalCorrection(f) => f.serialize(serializer),
            Self::PermissionRequest(f) => f.serialize(serializer),
            Self::Notification(f) => f.serialize(serializer),
            Self::Custom(f) => f.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for PayloadWire {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Self::from_json(Value::deserialize(deserializer)?).map_err(serde::de::Error::custom)
    }
}

impl FieldsWire {
    fn to_object(&self) -> Map<String, Value> {
        match self {
            Self::SessionStart(f) => to_object(f),
            Self::SessionEnd(f) => to_object(f),
            Self::UserTurn(f) => to_object(f),
            Self::PreToolUse(f) => to_object(f),
            Self::PostToolUse(f) => to_object(f),
            Self::PostToolUseFailure(f) => to_object(f),
            Self::PostToolUseCancelled(f) => to_object(f),
            Self::SubagentStart(f) => to_object(f),
            Self::SubagentStop(f) => to_object(f),
            Self::SubagentCancel(f) => to_object(f),
            Self::ApprovalCorrection(f) => to_object(f),
            Self::PermissionRequest(f) => to_object(f),
            Self::Notification(f) => to_object(f),
            Self::Custom(f) => to_object(f),
        }
    }

    fn from_object(event: &Event, object: Map<String, Value>) -> Result<Self> {
        Ok(match event {
            Event::SessionStart => Self::SessionStart(from_object(object)?),
            Event::SessionEnd => Self::SessionEnd(from_object(object)?),
            Event::UserTurn => Self::UserTurn(from_object(object)?),
            Event::PreToolUse => Self::PreToolUse(from_object(object)?),
            Event::PostToolUse => Self::PostToolUse(from_object(object)?),
            Event::PostToolUseFailure => Self::PostToolUseFailure(from_object(object)?),
            Event::PostToolUseCancelled => Self::PostToolUseCancelled(from_object(object)?),
            Event::SubagentStart => Self::SubagentStart(from_object(object)?),
            Event::SubagentStop => Self::SubagentStop(from_object(object)?),
            Event::SubagentCancel => Self::SubagentCancel(from_object(object)?),
            Event::ApprovalCorrection => Self::ApprovalCorrection(from_object(object)?),
            Event::PermissionRequest => Self::PermissionRequest(from_object(object)?),
            Event::Notification => Self::Notification(from_object(object)?),
            Event::Custom(_) => Self::Custom(from_object(object)?),
        })
    }
}

// ---- domain → wire ----------------------------------------------------------------------------

impl From<&Payload> for PayloadWire {
    fn from(payload: &Payload) -> Self {
        Self {
            event: payload.event(),
            common: CommonWire::from(&payload.common),
            fields: FieldsWire::from(&payload.data),
        }
    }
}

impl From<&PayloadCommon> for CommonWire {
    fn from(common: &PayloadCommon) -> Self {
        Self {
            session_id: common.session_id.clone(),
            run_id: common.run_id.clone(),
            trace_id: common.trace_id.clone(),
            agent_id: common.agent_id.clone(),
            source: common.source.clone(),
            metadata: common.metadata.clone(),
        }
    }
}

impl From<&ToolCall> for ToolCallWire {
    fn from(call: &ToolCall) -> Self {
        Self {
            tool_name: call.tool_name.clone(),
            tool_call_id: call.tool_call_id.clone(),
            tool_input: call.tool_input.clone(),
        }
    }
}

impl From<&EventData> for FieldsWire {
    fn from(data: &EventData) -> Self {
        match data {
            EventData::SessionStart => Self::SessionStart(NoFields {}),
            EventData::SessionEnd(end) => Self::SessionEnd(SessionEndWire {
                status: end.status.into(),
                error: end.error.clone(),
                answer: end.answer.clone(),
                continued: end.continued,
            }),
            EventData::UserTurn(turn) => Self::UserTurn(UserTurnWire {
                prompt: turn.prompt.clone(),
            }),
            EventData::PreToolUse(call) => Self::PreToolUse(call.into()),
            EventData::PostToolUse(done) => {
                let call = ToolCallWire::from(&done.call);
                Self::PostToolUse(ToolResultWire {
                    tool_name: call.tool_name,
                    tool_call_id: call.tool_call_id,
                    tool_input: call.tool_input,
                    tool_result: done.tool_result.clone(),
                })
            }
            EventData::PostToolUseFailure(failed) => {
                let call = ToolCallWire::from(&failed.call);
                Self::PostToolUseFailure(ToolFailureWire {
                    tool_name: call.tool_name,
                    tool_call_id: call.tool_call_id,
                    tool_input: call.tool_input,
                    error: failed.error.clone(),
                })
            }
            EventData::PostToolUseCancelled(cancelled) => {
                let call = ToolCallWire::from(&cancelled.call);
                Self::PostToolUseCancelled(ToolCancelledWire {
                    tool_name: call.tool_name,
                    tool_call_id: call.tool_call_id,
                    tool_input: call.tool_input,
                    reason: cancelled.reason.clone(),
                })
            }
            EventData::SubagentStart(start) => Self::SubagentStart(SubagentStartWire {
                task_id: start.task_id.clone(),
                agent_type: start.agent_type.clone(),
                task_description: start.task_description.clone(),
            }),
            EventData::SubagentStop(stop) => Self::SubagentStop(subagent_stop_wire(stop)),
            EventData::SubagentCancel(cancel) => Self::SubagentCancel(SubagentCancelWire {
                task_id: cancel.task_id.clone(),
                agent_type: cancel.agent_type.clone(),
                reason: cancel.reason.clone(),
            }),
            EventData::ApprovalCorrection(correction) => {
                let call = ToolCallWire::from(&correction.call);
                Self::ApprovalCorrection(ApprovalCorrectionWire {
                    request_id: correction.request_id.clone(),
                    tool_name: call.tool_name,
                    tool_call_id: call.tool_call_id,
                    tool_input: call.tool_input,
                    corrected_input: correction.corrected_input.clone(),
                    corrected_by: correction.corrected_by.clone(),
                })
            }
            EventData::PermissionRequest(request) => Self::PermissionRequest(request.into()),
            EventData::Notification(notice) => Self::Notification(notice.into()),
            EventData::Custom(_, data) => Self::Custom(CustomWire { data: data.clone() }),
        }
    }
}

fn subagent_stop_wire(stop: &SubagentStop) -> SubagentStopWire {
    let (result, error) = match &stop.ending {
        SubagentEnding::Result(value) => (Some(value.clone()), None),
        SubagentEnding::Error(error) => (None, Some(error.clone())),
        SubagentEnding::Pending => (None, None),
    };
    SubagentStopWire {
        task_id: stop.task_id.clone(),
        agent_type: stop.agent_type.clone(),
        success: stop.status == SubagentStatus::Completed,
        status: stop.status.into(),
        duration_seconds: stop.duration.as_secs_f64(),
        result,
        error,
        continued: stop.continued,
    }
}

// ---- wire → domain ----------------------------------------------------------------------------

impl TryFrom<PayloadWire> for Payload {
    type Error = ProtocolError;

    /// Validates a wire payload into the domain type.
    ///
    /// # Errors
    /// [`ProtocolError::InvalidWire`] for an unknown status, a negative or non-finite duration,
    /// `success` that disagrees with `status`, both `result` and `error`, or fields that do not
    /// belong to `event`.
    fn try_from(wire: PayloadWire) -> Result<Self> {
        let common = PayloadCommon {
            session_id: wire.common.session_id,
            run_id: wire.common.run_id,
            trace_id: wire.common.trace_id,
            agent_id: wire.common.agent_id,
            source: wire.common.source,
            metadata: wire.common.metadata,
        };
        let data = event_data(wire.event, wire.fields)?;
        Ok(Self { common, data })
    }
}

fn call(tool_name: String, tool_call_id: String, tool_input: Value) -> ToolCall {
    ToolCall {
        tool_name,
        tool_call_id,
        tool_input,
    }
}

fn event_data(event: Event, fields: FieldsWire) -> Result<EventData> {
    Ok(match (event, fields) {
        (Event::SessionStart, FieldsWire::SessionStart(_)) => EventData::SessionStart,
        (Event::SessionEnd, FieldsWire::SessionEnd(f)) => EventData::SessionEnd(SessionEnd {
            status: f.status.into(),
            error: f.error,
            answer: f.answer,
            continued: f.continued,
        }),
        (Event::UserTurn, FieldsWire::UserTurn(f)) => {
            EventData::UserTurn(UserTurn { prompt: f.prompt })
        }
        (Event::PreToolUse, FieldsWire::PreToolUse(f)) => {
            EventData::PreToolUse(call(f.tool_name, f.tool_call_id, f.tool_input))
        }
        (Event::PostToolUse, FieldsWire::PostToolUse(f)) => EventData::PostToolUse(ToolResult {
            call: call(f.tool_name, f.tool_call_id, f.tool_input),
            tool_result: f.tool_result,
        }),
        (Event::PostToolUseFailure, FieldsWire::PostToolUseFailure(f)) => {
            EventData::PostToolUseFailure(ToolFailure {
                call: call(f.tool_name, f.tool_call_id, f.tool_input),
                error: f.error,
            })
        }
        (Event::PostToolUseCancelled, FieldsWire::PostToolUseCancelled(f)) => {
            EventData::PostToolUseCancelled(ToolCancelled {
                call: call(f.tool_name, f.tool_call_id, f.tool_input),
                reason: f.reason,
            })
        }
        (Event::SubagentStart, FieldsWire::SubagentStart(f)) => {
            EventData::SubagentStart(SubagentStart {
                task_id: f.task_id,
                agent_type: f.agent_type,
                task_description: f.task_description,
            })
        }
        (Event::SubagentStop, FieldsWire::SubagentStop(f)) => {
            EventData::SubagentStop(subagent_stop(f)?)
        }
        (Event::SubagentCancel, FieldsWire::SubagentCancel(f)) => {
            EventData::SubagentCancel(SubagentCancel {
                task_id: f.task_id,
                agent_type: f.agent_type,
                reason: f.reason,
            })
        }
        (Event::ApprovalCorrection, FieldsWire::ApprovalCorrection(f)) => {
            EventData::ApprovalCorrection(ApprovalCorrection {
                request_id: f.request_id,
                call: call(f.tool_name, f.tool_call_id, f.tool_input),
                corrected_input: f.corrected_input,
                corrected_by: f.corrected_by,
            })
        }
        (Event::PermissionRequest, FieldsWire::PermissionRequest(f)) => {
            EventData::PermissionRequest(f.into())
        }
        (Event::Notification, FieldsWire::Notification(f)) => EventData::Notification(f.into()),
        (Event::Custom(name), FieldsWire::Custom(f)) => EventData::Custom(name, f.data),
        (event, _) => {
            return Err(ProtocolError::payload(format!(
                "fields do not belong to event `{event}`"
            )));
        }
    })
}

fn subagent_stop(f: SubagentStopWire) -> Result<SubagentStop> {
    let status = SubagentStatus::from(f.status);
    if f.success != (status == SubagentStatus::Completed) {
        return Err(ProtocolError::payload(format!(
            "`success: {}` disagrees with `status: {}`",
            f.success,
            status.as_str()
        )));
    }
    let duration = Duration::try_from_secs_f64(f.duration_seconds).map_err(|_| {
        ProtocolError::payload(format!(
            "`duration_seconds` must be a finite number >= 0, got {}",
            f.duration_seconds
        ))
    })?;
    let ending = match (f.result, f.error) {
        (Some(_), Some(_)) => {
            return Err(ProtocolError::payload(
                "`result` and `error` are mutually exclusive",
            ));
        }
        (Some(result), None) => SubagentEnding::Result(result),
        (None, Some(error)) => SubagentEnding::Error(error),
        (None, None) => SubagentEnding::Pending,
    };
    let consistent = match (&ending, status) {
        (SubagentEnding::Error(_), SubagentStatus::Completed) => false,
        (SubagentEnding::Result(_), status) => status == SubagentStatus::Completed,
        _ => true,
    };
    if !consistent {
        return Err(ProtocolError::payload(format!(
            "a `{}` sub-agent cannot carry {}",
            status.as_str(),
            if matches!(ending, SubagentEnding::Error(_)) {
                "an `error`"
            } else {
                "a `result`"
            }
        )));
    }
    Ok(SubagentStop {
        task_id: f.task_id,
        agent_type: f.agent_type,
        status,
        duration,
        ending,
        continued: f.continued,
    })
}

macro_rules! wire_enum {
    ($(#[$doc:meta])* $wire:ident <=> $domain:ident { $($(#[$vdoc:meta])* $variant:ident),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
        #[serde(rename_all = "snake_case")]
        pub enum $wire {
            $($(#[$vdoc])* $variant),*
        }

        impl From<$domain> for $wire {
            fn from(value: $domain) -> Self {
                match value {
                    $($domain::$variant => Self::$variant),*
                }
            }
        }

        impl From<$wire> for $domain {
            fn from(value: $wire) -> Self {
                match value {
                    $($wire::$variant => Self::$variant),*
                }
            }
        }
    };
}

wire_enum! {
    /// How a session ended, on the wire.
    SessionEndStatusWire <=> SessionEndStatus {
        /// `completed`.
        Completed,
        /// `failed`.
        Failed,
        /// `cancelled`.
        Cancelled,
        /// `turn_limit`.
        TurnLimit,
    }
}

wire_enum! {
    /// How a sub-agent ended, on the wire.
    SubagentStatusWire <=> SubagentStatus {
        /// `completed`.
        Completed,
        /// `failed`.
        Failed,
        /// `cancelled`.
        Cancelled,
        /// `pending_approval`.
        PendingApproval,
        /// `timed_out`.
        TimedOut,
    }
}
