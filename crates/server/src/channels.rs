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

/// `POST /v1/channels/feishu/callback`: Feishu/Lark card callbacks.
async fn feishu(State(state): State<AppState>, headers: HeaderMap, body: Bytes) -> Response {
    callback(&state, "feishu", &headers, &body).await
}

/// `POST /v1/channels/slack/interactions`: Slack interactivity payloads.
async fn slack(State(state): State<AppState>, headers: HeaderMap, body: Bytes) -> Response {
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
