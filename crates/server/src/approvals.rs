//! `/v1/approvals`: file, list, show, approve and reject confirmation requests. Listing and
//! deciding need a token with the `approver` (or `admin`) role; a decision is recorded under
//! the token's name through channel `api`, and the store checks that name against the
//! request's approvers. Filing needs the `runner` (or `admin`) role (the `file` module), and a
//! runner may show, and wait on, the requests it filed.

pub(crate) mod file;

use std::time::Duration;

use axum::Json;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use serde::Deserialize;
use serde_json::Value;
use tollgate_approval::{Decision, Refused, Status, Verdict};

use crate::AppState;
use crate::auth::{Approver, Caller, Role};
use crate::body::JsonBody;
use crate::error::ApiError;
use crate::openapi::Id;
use crate::wire::{ApproveBody, Decided, ErrorBody, RejectBody, RequestDetail, RequestList};

/// The channel API decisions are recorded under.
pub const CHANNEL: &str = "api";

/// The longest `GET /v1/approvals/{id}?wait=` (seconds): under the API's request timeout.
pub const MAX_WAIT_SECONDS: u64 = 25;

/// How often a long poll reads its row, to see decisions other processes write (decisions
/// made through this server wake it at once).
const POLL: Duration = Duration::from_millis(200);

/// `?status=` of `GET /v1/approvals`.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(crate) struct ListQuery {
    /// `pending` (the default), `approved`, `rejected`, `expired`, `cancelled` or `all`.
    status: Option<String>,
}

/// `GET /v1/approvals?status=pending|approved|rejected|expired|cancelled|all` (default
/// `pending`), newest first. Overdue pending requests are expired first.
#[utoipa::path(get, path = "/v1/approvals", operation_id = "list_approvals", tag = "approvals", params(ListQuery),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The requests, newest first", body = RequestList),
        (status = 400, description = "Another `status` or query parameter", body = ErrorBody),
        (status = 401, description = "No token, or an unknown one", body = ErrorBody),
        (status = 403, description = "The token lacks the approver role", body = ErrorBody),
    ))]
pub(crate) async fn list(
    State(state): State<AppState>,
    _: Approver,
    query: Result<Query<ListQuery>, QueryRejection>,
) -> Result<Json<RequestList>, ApiError> {
    let Query(query) = query.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let status = match query.status.as_deref().unwrap_or("pending") {
        "all" => None,
        text => Some(Status::parse(text).ok_or_else(|| {
            ApiError::bad_request(
                "`status` must be pending, approved, rejected, expired, cancelled or all",
            )
        })?),
    };
    state.store.sweep().await.map_err(|e| ApiError::store(&e))?;
    let requests = state
        .store
        .list(status)
        .await
        .map_err(|e| ApiError::store(&e))?;
    Ok(Json(RequestList { requests }))
}

/// `?wait=` of `GET /v1/approvals/{id}`.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(crate) struct ShowQuery {
    /// Seconds to wait, while the request is pending, for it to be decided or to expire
    /// before answering (a long poll); at most 25 (a longer wait is cut to 25). Default 0.
    wait: Option<u64>,
}

/// `GET /v1/approvals/{id}?wait=SECONDS`: the request and its audit history; 404 for an
/// unknown id. Approvers and admins see every request, a runner the ones it filed
/// (`POST /v1/approvals`). With `wait`, a pending request is answered once it is decided or
/// expires, or when the wait is over (still pending).
#[utoipa::path(get, path = "/v1/approvals/{id}", operation_id = "show_approval", tag = "approvals", params(Id, ShowQuery),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The request and its history, oldest first", body = RequestDetail),
        (status = 400, description = "Another query parameter, or a `wait` that is not a number", body = ErrorBody),
        (status = 401, description = "No token, or an unknown one", body = ErrorBody),
        (status = 403, description = "The token lacks the approver role, and did not file the request", body = ErrorBody),
        (status = 404, description = "No such request", body = ErrorBody),
    ))]
pub(crate) async fn show(
    State(state): State<AppState>,
    Caller(token): Caller,
    id: Result<Path<String>, PathRejection>,
    query: Result<Query<ShowQuery>, QueryRejection>,
) -> Result<Json<RequestDetail>, ApiError> {
    let id = path_id(id)?;
    let Query(query) = query.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let mut request = state
        .store
        .get(&id)
        .await
        .map_err(|e| ApiError::store(&e))?
        .ok_or_else(|| ApiError::from(Refused::NotFound { id: id.clone() }))?;
    if !token.has(Role::Approver) && file::filed_by(&request).as_deref() != Some(token.name()) {
        return Err(ApiError::forbidden(format!(
            "the token `{}` lacks the approver role, and did not file {id}",
            token.name()
        )));
    }
    let wait = Duration::from_secs(query.wait.unwrap_or(0).min(MAX_WAIT_SECONDS));
    if request.status == Status::Pending && !wait.is_zero() {
        // Cancel-safe: the store's wait leaves the row as it is when the timer wins.
        if let Ok(decided) = tokio::time::timeout(wait, state.store.wait(&id, POLL)).await {
            request = decided?;
        } else if let Some(now) = state
            .store
            .get(&id)
            .await
            .map_err(|e| ApiError::store(&e))?
        {
            request = now;
        }
    }
    let history = state
        .store
        .history(&id)
        .await
        .map_err(|e| ApiError::store(&e))?;
    Ok(Json(RequestDetail { request, history }))
}

/// `POST /v1/approvals/{id}/approve` with `{note?, edit?}`.
#[utoipa::path(post, path = "/v1/approvals/{id}/approve", tag = "approvals", params(Id),
    security(("bearer" = [])),
    request_body(content = Option<ApproveBody>, description = "An empty body approves without a note or an edit"),
    responses(
        (status = 200, description = "The request, approved", body = Decided),
        (status = 400, description = "A malformed body, or an `edit` that is not an object", body = ErrorBody),
        (status = 401, description = "No token, or an unknown one", body = ErrorBody),
        (status = 403, description = "The token lacks the role, or is not among the request's approvers", body = ErrorBody),
        (status = 404, description = "No such request", body = ErrorBody),
        (status = 409, description = "No longer pending: `status`, `by` and `at` say who decided and when", body = ErrorBody),
        (status = 413, description = "A body over 64 KiB", body = ErrorBody),
        (status = 415, description = "A body not sent as `application/json`", body = ErrorBody),
    ))]
pub(crate) async fn approve(
    State(state): State<AppState>,
    Approver(token): Approver,
    id: Result<Path<String>, PathRejection>,
    JsonBody(body): JsonBody<ApproveBody>,
) -> Result<Json<Decided>, ApiError> {
    let id = path_id(id)?;
    let edit = match body.edit {
        None | Some(Value::Null) => None,
        Some(edit @ Value::Object(_)) => Some(edit),
        Some(_) => return Err(ApiError::bad_request("`edit` must be a JSON object")),
    };
    let decision = Decision {
        verdict: Verdict::Approve { edit },
        by: token.name().to_owned(),
        channel: CHANNEL.into(),
        note: body.note,
    };
    decide(&state, &id, &decision).await
}

/// `POST /v1/approvals/{id}/reject` with `{note?}`.
#[utoipa::path(post, path = "/v1/approvals/{id}/reject", tag = "approvals", params(Id),
    security(("bearer" = [])),
    request_body(content = Option<RejectBody>, description = "The note reaches the model"),
    responses(
        (status = 200, description = "The request, rejected", body = Decided),
        (status = 400, description = "A malformed body", body = ErrorBody),
        (status = 401, description = "No token, or an unknown one", body = ErrorBody),
        (status = 403, description = "The token lacks the role, or is not among the request's approvers", body = ErrorBody),
        (status = 404, description = "No such request", body = ErrorBody),
        (status = 409, description = "No longer pending: `status`, `by` and `at` say who decided and when", body = ErrorBody),
        (status = 413, description = "A body over 64 KiB", body = ErrorBody),
        (status = 415, description = "A body not sent as `application/json`", body = ErrorBody),
    ))]
pub(crate) async fn reject(
    State(state): State<AppState>,
    Approver(token): Approver,
    id: Result<Path<String>, PathRejection>,
    JsonBody(body): JsonBody<RejectBody>,
) -> Result<Json<Decided>, ApiError> {
    let id = path_id(id)?;
    let decision = Decision {
        verdict: Verdict::Reject,
        by: token.name().to_owned(),
        channel: CHANNEL.into(),
        note: body.note,
    };
    decide(&state, &id, &decision).await
}

async fn decide(
    state: &AppState,
    id: &str,
    decision: &Decision,
) -> Result<Json<Decided>, ApiError> {
    let request = state.store.decide(id, decision).await?;
    state.metrics.decided(&request, CHANNEL);
    Ok(Json(Decided { request }))
}

fn path_id(id: Result<Path<String>, PathRejection>) -> Result<String, ApiError> {
    id.map(|Path(id)| id)
        .map_err(|e| ApiError::bad_request(e.body_text()))
}
