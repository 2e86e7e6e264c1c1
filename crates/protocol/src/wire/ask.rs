//! Wire form of the two events around a human's approval: `permission_request` (before the
//! request is filed) and `notification` (while it waits).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::payload::{Notification, PermissionRequest, ToolCall};

/// Fields of `permission_request`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PermissionRequestWire {
    /// The runtime tool name.
    pub tool_name: String,
    /// The model's id for the call.
    pub tool_call_id: String,
    /// The arguments the call would run with.
    pub tool_input: Value,
    /// Why a human would be asked.
    pub reason: String,
}

/// Fields of `notification`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NotificationWire {
    /// What kind of attention: `permission_prompt`.
    pub notification_type: String,
    /// The text to show.
    pub message: String,
    /// The tool of the call that waits, when one does (`user_turn` for a prompt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// The confirmation request waiting, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

impl From<&PermissionRequest> for PermissionRequestWire {
    fn from(request: &PermissionRequest) -> Self {
        Self {
            tool_name: request.call.tool_name.clone(),
            tool_call_id: request.call.tool_call_id.clone(),
            tool_input: request.call.tool_input.clone(),
            reason: request.reason.clone(),
        }
    }
}

impl From<PermissionRequestWire> for PermissionRequest {
    fn from(wire: PermissionRequestWire) -> Self {
        Self {
            call: ToolCall {
                tool_name: wire.tool_name,
                tool_call_id: wire.tool_call_id,
                tool_input: wire.tool_input,
            },
            reason: wire.reason,
        }
    }
}

impl From<&Notification> for NotificationWire {
    fn from(notice: &Notification) -> Self {
        Self {
            notification_type: notice.notification_type.clone(),
            message: notice.message.clone(),
            tool_name: notice.tool_name.clone(),
            request_id: notice.request_id.clone(),
        }
    }
}

impl From<NotificationWire> for Notification {
    fn from(wire: NotificationWire) -> Self {
        Self {
            notification_type: wire.notification_type,
            message: wire.message,
            tool_name: wire.tool_name,
            request_id: wire.request_id,
        }
    }
}
