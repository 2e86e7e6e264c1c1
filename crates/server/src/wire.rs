//! The JSON bodies of the API, shared by the server and its clients (`tollgate approvals
//! --server`). Requests and audit events are [`tollgate_approval`]'s rows as they serialise:
//! times in milliseconds since the Unix epoch.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tollgate_approval::{AuditEvent, Request, Status};
use utoipa::ToSchema;

use crate::runs::RunView;

/// `POST /v1/approvals/{id}/approve`: an optional note and optional edited arguments (a JSON
/// object). An empty body is an approval without either.
#[derive(Debug, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ApproveBody {
    /// For the record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Run the call with these arguments instead (must be an object).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub edit: Option<Value>,
}

/// `POST /v1/approvals/{id}/reject`: an optional note (the model reads it).
#[derive(Debug, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RejectBody {
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// `POST /v1/approvals`: a call that asks a human, filed by a runner (`tollgate hook` files the
/// asks of Claude Code and Codex this way). `agent`, `session_id`, `tool_name` and
/// `tool_use_id`, with the filing token's name, are the idempotency key: filing the same call
/// again re-attaches to its request instead of filing a second one.
#[derive(Debug, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewApproval {
    /// The agent asking (`claude-code`, `codex`, …).
    pub agent: String,
    /// The agent's session; also the request's `run_id`.
    pub session_id: String,
    /// The tool, as the agent names it.
    pub tool_name: String,
    /// The agent's id for the call (for a prompt that asks: the prompt's id).
    pub tool_use_id: String,
    /// The arguments the call will run with once approved (a JSON object).
    #[schema(value_type = Object)]
    pub arguments: Value,
    /// Why a human is asked.
    #[serde(default)]
    pub reasons: Vec<String>,
    /// The hook (or `permission_gate`) whose ask decided; default: the token's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asked_by: Option<String>,
    /// Who may decide; default: the names of the server's approver and admin tokens. An
    /// empty list means nobody may.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approvers: Option<Vec<String>>,
    /// Seconds the request waits before it expires and denies (1 to 604800); default: the
    /// server's `approval.timeout_seconds`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<u64>,
}

/// `POST /v1/approvals`'s answer: the request, new (201) or found (200, `attached: true`).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct FiledApproval {
    /// The request as it stands (it may already be decided when re-attached).
    pub request: Request,
    /// `true` when the same call had been filed before and this is its request.
    pub attached: bool,
}

/// `GET /v1/approvals`: the requests, newest first.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct RequestList {
    /// The requests.
    pub requests: Vec<Request>,
}

/// `GET /v1/approvals/{id}`: one request and its audit history, oldest first.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct RequestDetail {
    /// The request.
    pub request: Request,
    /// Every attempt on it, applied or refused.
    pub history: Vec<AuditEvent>,
}

/// A decision's answer: the request in its new state.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Decided {
    /// The request.
    pub request: Request,
}

/// Every error's body.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ErrorBody {
    /// What kind of error: `bad_request`, `unauthorized`, `forbidden`, `not_found`,
    /// `already_decided`, `payload_too_large`, `unsupported_media_type`,
    /// `method_not_allowed`, `timeout`, `unavailable`, `store_failed`.
    pub error: String,
    /// For people.
    pub message: String,
    /// `already_decided`: the request's status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
    /// `already_decided`: who decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    /// `already_decided`: when, RFC 3339 UTC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
}

/// `GET /healthz` when the database answers.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Health {
    /// `ok`.
    pub status: String,
}

/// `POST /v1/runs`: the run started.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct RunCreated {
    /// `run_` and a ULID.
    pub run_id: String,
    /// Where its events stream (`GET /v1/runs/{id}/events`).
    pub events_url: String,
}

/// `GET /v1/runs`: the runs the server's database holds, newest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct RunList {
    /// The runs.
    pub runs: Vec<RunView>,
}

/// `POST /v1/runs/{id}/cancel`.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Cancelled {
    /// Always `true`: the run was told to stop.
    pub cancelled: bool,
}
