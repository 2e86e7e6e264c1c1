//! Approval channels in the server: the hub built from `approval.channels`, and the callback
//! routes the platforms post clicks to (`POST /v1/channels/feishu/callback`,
//! `POST /v1/channels/slack/interactions`). The routes take no bearer token: the platform's
//! signature (and Feishu's verification token) is the authentication, checked by the channel.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Json, Router, routing::post};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tollgate_approval::Store;
use tollgate_approval::channel::feishu::{Feishu, FeishuConfig};
use tollgate_approval::channel::slack::{Slack, SlackConfig};
use tollgate_approval::channel::{self, Channel, Entry, Hub, Slot};

use crate::AppState;
use crate::config::{ChannelConfig, ServerConfig};
use crate::error::ApiError;

/// The hub for `config`'s channels over `store`. A channel that cannot be built is logged
/// with the entry and the reason, and kept as [`Slot::Broken`]: its requests are audited as
/// not sent (and denied with `approval.fail_closed`).
pub fn hub(config: &ServerConfig, store: &Store) -> Hub {
    let entries = config.channels.iter().map(entry).collect();
    Hub::new(store.clone(), entries, config.channels_fail_closed)
}

fn entry(config: &ChannelConfig) -> Entry {
    let route = config.route.clone();
    let slot = match built(config) {
        Ok(channel) => {
            tracing::info!(entry = %config.at, "approval channel {} ready", config.kind);
            Slot::Ready(channel)
        }
        Err(reason) => {
            tracing::error!(entry = %config.at, "approval channel {} not built: {reason}",
                config.kind);
            Slot::Broken {
                kind: config.kind.to_owned(),
                reason,
            }
        }
    };
    Entry { slot, route }
}

fn built(config: &ChannelConfig) -> Result<Arc<dyn Channel>, String> {
    let settings = config.settings.clone()?;
    match config.kind {
        "feishu" => Ok(Arc::new(Feishu::new(settings_of::<FeishuConfig>(
            settings,
        )?)?)),
        "slack" => Ok(Arc::new(Slack::new(settings_of::<SlackConfig>(settings)?)?)),
        other => Err(format!("unknown channel kind `{other}`")),
    }
}

/// The settings as the channel's config type; the error names the key, never a value.
fn settings_of<T: DeserializeOwned>(settings: Value) -> Result<T, String> {
    serde_path_to_error::deserialize(settings).map_err(|e| {
        let inner = e.inner().to_string();
        let what = match inner.split_once(", expected") {
            Some((head, _)) if head.starts_with("unknown field") => inner.clone(),
            _ => inner.split_once("expected ").map_or_else(
                || "a bad value".to_owned(),
                |(_, e)| format!("expected {e}"),
            ),
        };
        let path = e.path().to_string();
        if path == "." {
            what
        } else {
            format!("`{path}`: {what}")
        }
    })
}

/// The callback routes, outside the bearer-token API.
pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/channels/feishu/callback", post(feishu))
        .route("/v1/channels/slack/interactions", post(slack))
}

/// Feishu/Lark card callbacks (no bearer token: the platform's signature and verification
/// token are checked).
///
/// Takes the body exactly as the platform posts it: `{"encrypt": …}` with the
/// `X-Lark-Request-Timestamp`, `X-Lark-Request-Nonce` and `X-Lark-Signature` headers when the
/// channel has an `encrypt_key`, plain JSON otherwise. Answers a `url_verification`
/// challenge with `{"challenge": …}`, a click with a toast and, once the request is decided,
/// the replacement card (`docs/channels.md`).
#[utoipa::path(post, path = "/v1/channels/feishu/callback", operation_id = "feishu_callback",
    tag = "channels",
    request_body(content = String, content_type = "application/json",
        description = "The callback as the platform posts it"),
    responses(
        (status = 200, description = "`{\"challenge\": …}`, `{\"toast\": …, \"card\"?: …}` or `{}`",
            content_type = "application/json"),
        (status = 400, description = "A malformed body, bad base64, ciphertext or padding (`refused`)", body = crate::wire::ErrorBody),
        (status = 401, description = "A bad or missing signature, a timestamp out of the 5-minute window, a wrong verification token (`refused`)", body = crate::wire::ErrorBody),
        (status = 404, description = "No Feishu channel is configured (or it was not built)", body = crate::wire::ErrorBody),
        (status = 413, description = "A body over 64 KiB", body = crate::wire::ErrorBody),
    ))]
pub(crate) async fn feishu(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    callback(&state, "feishu", &headers, &body).await
}

/// Slack interactivity payloads (no bearer token: the `v0` signature is checked).
///
/// Takes the form body Slack posts (`payload=…`) with `X-Slack-Request-Timestamp` and
/// `X-Slack-Signature`. Answers a click at once with an empty 200; the message is then
/// replaced through the click's `response_url` (`docs/channels.md`).
#[utoipa::path(post, path = "/v1/channels/slack/interactions", operation_id = "slack_interactions",
    tag = "channels",
    request_body(content = String, content_type = "application/x-www-form-urlencoded",
        description = "`payload=<the interaction as JSON>`, as Slack posts it"),
    responses(
        (status = 200, description = "Received (an empty body), or `{}` for an interaction tollgate has nothing to do with"),
        (status = 400, description = "A body that is not Slack's shape (`refused`)", body = crate::wire::ErrorBody),
        (status = 401, description = "A bad or missing signature, or a timestamp more than 5 minutes off (`refused`)", body = crate::wire::ErrorBody),
        (status = 404, description = "No Slack channel is configured (or it was not built)", body = crate::wire::ErrorBody),
        (status = 413, description = "A body over 64 KiB", body = crate::wire::ErrorBody),
    ))]
pub(crate) async fn slack(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    callback(&state, "slack", &headers, &body).await
}

async fn callback(state: &AppState, kind: &str, headers: &HeaderMap, body: &[u8]) -> Response {
    let Some(channel) = state.hub.channel(kind) else {
        return ApiError::not_found(format!("no {kind} channel is configured")).into_response();
    };
    let answer = channel::receive(&state.store, channel.as_ref(), headers, body).await;
    let status = StatusCode::from_u16(answer.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    match answer.body {
        Some(body) => (status, Json(body)).into_response(),
        None => status.into_response(),
    }
}
