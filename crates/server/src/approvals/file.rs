//! `POST /v1/approvals`: a runner files a call that asks a human (the asks of an agent that is
//! not run by this server: `tollgate hook` files those of Claude Code and Codex), then waits on
//! it with `GET /v1/approvals/{id}?wait=SECONDS`.
//!
//! The request's scope is `api:<token name>`, so the idempotency key is the agent, the session,
//! the filing token, the tool and the call id: a hook retried for the same call re-attaches to
//! its request (200, `attached: true`) instead of filing a second one, and a runner never finds
//! another token's request by filing the same call.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use tollgate_approval::{NewRequest, Request};

use crate::AppState;
use crate::auth::Caller;
use crate::body::JsonBody;
use crate::error::ApiError;
use crate::wire::{ErrorBody, FiledApproval, NewApproval};

/// The scope of a request filed through the API by the token `name`.
fn scope_of(name: &str) -> String {
    format!("api:{name}")
}

/// The name of the token that filed `request` through the API; `None` for a request a run
/// filed.
pub(crate) fn filed_by(request: &Request) -> Option<String> {
    let key: Vec<String> = serde_json::from_str(&request.idempotency_key).ok()?;
    key.get(2)?.strip_prefix("api:").map(str::to_owned)
}

/// Longest `timeout_seconds` a request may have (7 days), as in agent and admin files.
const MAX_TIMEOUT_SECONDS: u64 = 604_800;

/// `POST /v1/approvals` with a [`NewApproval`]: 201 and the new request, or 200 and the one the
/// same call filed before.
#[utoipa::path(post, path = "/v1/approvals", operation_id = "file_approval", tag = "approvals",
    security(("bearer" = [])),
    request_body = NewApproval,
    responses(
        (status = 201, description = "Filed: the new request, pending", body = FiledApproval),
        (status = 200, description = "The same call was filed before: its request (`attached: true`), maybe decided", body = FiledApproval),
        (status = 400, description = "A malformed body, an empty `agent`, `session_id`, `tool_name` or `tool_use_id`, `arguments` that are not an object, or a `timeout_seconds` out of range", body = ErrorBody),
        (status = 401, description = "No token, or an unknown one", body = ErrorBody),
        (status = 403, description = "The token lacks the runner role", body = ErrorBody),
        (status = 413, description = "A body over 64 KiB", body = ErrorBody),
        (status = 415, description = "A body not sent as `application/json`", body = ErrorBody),
    ))]
pub(crate) async fn file(
    State(state): State<AppState>,
    Caller(token): Caller,
    JsonBody(body): JsonBody<NewApproval>,
) -> Result<(StatusCode, Json<FiledApproval>), ApiError> {
    token.runner()?;
    let new = new_request(&state, token.name(), body)?;
    let filed = state
        .store
        .file(&new)
        .await
        .map_err(|e| ApiError::store(&e))?;
    let status = if filed.attached {
        StatusCode::OK
    } else {
        StatusCode::CREATED
    };
    Ok((
        status,
        Json(FiledApproval {
            request: filed.request,
            attached: filed.attached,
        }),
    ))
}

/// The store's request for `body`, filed by the token `name`.
fn new_request(state: &AppState, name: &str, body: NewApproval) -> Result<NewRequest, ApiError> {
    for (field, value) in [
        ("agent", &body.agent),
        ("session_id", &body.session_id),
        ("tool_name", &body.tool_name),
        ("tool_use_id", &body.tool_use_id),
    ] {
        if value.trim().is_empty() {
            return Err(ApiError::bad_request(format!(
                "`{field}` must not be empty"
            )));
        }
    }
    if !body.arguments.is_object() {
        return Err(ApiError::bad_request("`arguments` must be a JSON object"));
    }
    let timeout_seconds = match body.timeout_seconds {
        None => state.config.approval_timeout.as_secs(),
        Some(s) if (1..=MAX_TIMEOUT_SECONDS).contains(&s) => s,
        Some(_) => {
            return Err(ApiError::bad_request(format!(
                "`timeout_seconds` must be 1 to {MAX_TIMEOUT_SECONDS}"
            )));
        }
    };
    Ok(NewRequest {
        run_id: body.session_id.clone(),
        session_id: body.session_id,
        scope: scope_of(name),
        agent: body.agent,
        tool_name: body.tool_name,
        tool_call_id: body.tool_use_id,
        arguments: body.arguments,
        reasons: body.reasons,
        asked_by: body.asked_by.unwrap_or_else(|| name.to_owned()),
        approvers: body
            .approvers
            .unwrap_or_else(|| state.tokens.approver_names()),
        timeout_seconds,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    fn request_with_key(key: serde_json::Value) -> Request {
        serde_json::from_value(json!({
            "id": "cr_1", "idempotency_key": key.to_string(), "run_id": "r", "session_id": "s",
            "agent": "a", "tool_name": "t", "tool_call_id": "c", "arguments": {},
            "args_hash": "h", "reasons": [], "asked_by": "x", "approvers": [],
            "status": "pending", "channel": null, "channel_message_id": null, "created_at": 0,
            "expires_at": 1, "responded_at": null, "responded_by": null, "response_note": null,
            "edited_arguments": null, "edited_args_hash": null, "consumed_at": null,
            "finished_at": null
        }))
        .unwrap()
    }

    #[test]
    fn the_filer_is_read_from_the_scope_of_the_key() {
        let filed = request_with_key(json!(["claude-code", "s", "api:ci", "Bash", "toolu_1"]));
        assert_eq!(filed_by(&filed).as_deref(), Some("ci"));
        let by_a_run = request_with_key(json!(["ops", "run-1", "t1/c1/t1:pre_tool_use", "x", "c"]));
        assert_eq!(filed_by(&by_a_run), None);
        let broken = request_with_key(json!("not a list"));
        assert_eq!(filed_by(&broken), None);
    }
}
