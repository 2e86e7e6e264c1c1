//! The rows of the confirmation store and what callers pass in.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Where a confirmation request stands. `pending` is the only state that changes; the four
/// others are terminal and never change again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Waiting for a human.
    Pending,
    /// A listed approver approved the call (possibly with edited arguments).
    Approved,
    /// A listed approver rejected the call.
    Rejected,
    /// Nobody decided before `expires_at`: the call is denied. Never a human rejection.
    Expired,
    /// The run stopped waiting (Ctrl-C, the run was cancelled): the call is denied.
    Cancelled,
}

impl Status {
    /// The database and wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Approved => "approved",
            Self::Rejected => "rejected",
            Self::Expired => "expired",
            Self::Cancelled => "cancelled",
        }
    }

    /// Parses the database spelling.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "pending" => Self::Pending,
            "approved" => Self::Approved,
            "rejected" => Self::Rejected,
            "expired" => Self::Expired,
            "cancelled" => Self::Cancelled,
            _ => return None,
        })
    }

    /// Whether the status is final.
    pub fn is_terminal(self) -> bool {
        self != Self::Pending
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A call that asks a human, as the runtime files it.
#[derive(Debug, Clone, PartialEq)]
pub struct NewRequest {
    /// The run the call belongs to (also the re-attach key's session part).
    pub run_id: String,
    /// The session within the run.
    pub session_id: String,
    /// Where in the run the ask happened, the same in every attempt of the run (the
    /// delegation path, the model turn and the event: `t2/call_7/t1:pre_tool_use`); part of
    /// the re-attach key, so calls that reuse an id in another turn get their own request.
    pub scope: String,
    /// The agent proposing the call.
    pub agent: String,
    /// The tool (or `user_turn` / `subagent_start` for asks that are not tool calls).
    pub tool_name: String,
    /// The model's call id (empty for a `user_turn` ask).
    pub tool_call_id: String,
    /// The arguments that will run once approved (after hooks rewrote them).
    pub arguments: Value,
    /// Why a human is asked (one line per hook or gate that asked).
    pub reasons: Vec<String>,
    /// The hook or `permission_gate` whose ask decided.
    pub asked_by: String,
    /// Who may decide (an empty list means nobody can).
    pub approvers: Vec<String>,
    /// How long the request waits before it expires, in seconds.
    pub timeout_seconds: u64,
}

impl NewRequest {
    /// The re-attach key: agent, run, scope and tool call (and the tool, for asks without a
    /// call id). A restarted run that proposes the same call finds its row through it.
    pub fn idempotency_key(&self) -> String {
        serde_json::json!([
            self.agent,
            self.run_id,
            self.scope,
            self.tool_name,
            self.tool_call_id
        ])
        .to_string()
    }
}

/// One confirmation request as stored. Times are milliseconds since the Unix epoch (UTC).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Request {
    /// `cr_` and a ULID (sortable by creation time).
    pub id: String,
    /// See [`NewRequest::idempotency_key`].
    pub idempotency_key: String,
    /// The run.
    pub run_id: String,
    /// The session within the run.
    pub session_id: String,
    /// The agent.
    pub agent: String,
    /// The tool.
    pub tool_name: String,
    /// The model's call id.
    pub tool_call_id: String,
    /// The arguments as asked.
    pub arguments: Value,
    /// SHA-256 (hex) of the canonical JSON of `arguments`.
    pub args_hash: String,
    /// Why a human was asked.
    pub reasons: Vec<String>,
    /// The hook or `permission_gate` whose ask decided.
    pub asked_by: String,
    /// Who may decide.
    pub approvers: Vec<String>,
    /// Where it stands.
    pub status: Status,
    /// The channel that decided (`cli`, `tty`, `web`, …) or sent the request.
    pub channel: Option<String>,
    /// The channel's id for the message it sent (a card id), when it sent one.
    pub channel_message_id: Option<String>,
    /// When it was filed.
    pub created_at: i64,
    /// When it expires if nobody decides.
    pub expires_at: i64,
    /// When it left `pending`.
    pub responded_at: Option<i64>,
    /// Who (or what: `timeout`, the run) moved it out of `pending`.
    pub responded_by: Option<String>,
    /// The decider's note (a rejection's note reaches the model).
    pub response_note: Option<String>,
    /// Arguments an approver edited; the call runs with these instead.
    pub edited_arguments: Option<Value>,
    /// SHA-256 of the canonical JSON of `edited_arguments`.
    pub edited_args_hash: Option<String>,
    /// When the runtime took the approval to run the call (once).
    pub consumed_at: Option<i64>,
    /// When the approved call's tool returned; `None` after `consumed_at` means it started
    /// and its end was never recorded (the process died).
    pub finished_at: Option<i64>,
}

impl Request {
    /// The arguments an approved call runs with: the edited ones when an approver edited them.
    pub fn arguments_to_run(&self) -> &Value {
        self.edited_arguments.as_ref().unwrap_or(&self.arguments)
    }

    /// The hash the call's arguments must have when it is consumed.
    pub fn hash_to_run(&self) -> &str {
        self.edited_args_hash.as_deref().unwrap_or(&self.args_hash)
    }
}

/// One row of the append-only audit: a transition or a refused attempt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AuditEvent {
    /// Order of writing.
    pub id: i64,
    /// The request.
    pub request_id: String,
    /// When, in milliseconds since the Unix epoch.
    pub at: i64,
    /// Who tried (an approver's name, `timeout`, the run).
    pub actor: String,
    /// `create`, `attach`, `approve`, `reject`, `expire`, `cancel`, `consume`, `finish`;
    /// the approval channels' `send`, `update` and `click` (no status change).
    pub action: String,
    /// `applied` or `refused`.
    pub outcome: String,
    /// The status before.
    pub from_status: String,
    /// The status after (equal to `from_status` when refused).
    pub to_status: String,
    /// The channel the attempt came through.
    pub channel: Option<String>,
    /// Why it was refused, the note, or the edit.
    pub detail: Option<String>,
}

/// What a human decides.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// The call may run; with `edit`, with these arguments instead.
    Approve {
        /// Replacement arguments (re-reviewed by the runtime's gate before they run).
        edit: Option<Value>,
    },
    /// The call is denied.
    Reject,
}

/// A decision attempt.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// Approve or reject.
    pub verdict: Verdict,
    /// Who decides (checked against the request's approvers).
    pub by: String,
    /// Where the decision comes from (`cli`, `tty`, `web`, …).
    pub channel: String,
    /// Why; a rejection's note reaches the model.
    pub note: Option<String>,
}
