//! Slack's Web API (`chat.postMessage`, `chat.update`) and the `response_url` of a click,
//! over HTTPS with JSON bodies.

use std::error::Error as _;
use std::time::Duration;

use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, RETRY_AFTER};
use reqwest::{Client, Response, StatusCode};
use serde_json::Value;

use crate::channel::ChannelError;

/// How long one call may take, connection included.
const TIMEOUT: Duration = Duration::from_secs(10);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Slack's answers are small; a larger body is not Slack's.
const MAX_BODY_BYTES: usize = 1024 * 1024;
const JSON: &str = "application/json; charset=utf-8";

/// `error` codes of an `ok: false` answer that a later retry may get past.
const TRANSIENT_ERRORS: &[&str] = &[
    "ratelimited",
    "rate_limited",
    "internal_error",
    "fatal_error",
    "service_unavailable",
    "request_timeout",
];

/// A client for one app's bot token. Holds no state but the connection pool.
#[derive(Clone)]
pub struct Api {
    client: Client,
    base: String,
    token: String,
}

impl Api {
    /// A client calling `base` (no trailing slash) with `token`.
    ///
    /// # Errors
    /// When the TLS back-end cannot be set up.
    pub fn new(base: &str, token: &str) -> Result<Self, String> {
        let client = Client::builder()
            .timeout(TIMEOUT)
            .connect_timeout(CONNECT_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .build()
            .map_err(|e| format!("cannot build the Slack HTTP client: {e}"))?;
        Ok(Self {
            client,
            base: base.trim_end_matches('/').to_owned(),
            token: token.to_owned(),
        })
    }

    /// Calls Web API method `method` with `body` and returns its answer when `ok` is true.
    ///
    /// # Errors
    /// [`ChannelError::Transient`] when Slack cannot be reached, answers 429 or 5xx, or says
    /// it is rate limiting or failing inside; [`ChannelError::Rejected`] for any other
    /// `ok: false` (its `error` code) or 4xx.
    ///
    /// # Cancel safety
    /// Dropping the future drops the request; Slack may or may not have acted on it.
    pub async fn call(&self, method: &str, body: &Value) -> Result<Value, ChannelError> {
        let response = self
            .client
            .post(format!("{}/{method}", self.base))
            .header(AUTHORIZATION, format!("Bearer {}", self.token))
            .header(CONTENT_TYPE, JSON)
            .body(body.to_string())
            .send()
            .await
            .map_err(|e| ChannelError::Transient(format!("{method}: {}", describe(e))))?;
        let answer = answer_of(method, response).await?;
        if answer.get("ok").and_then(Value::as_bool) == Some(true) {
            return Ok(answer);
        }
        let error = answer
            .get("error")
            .and_then(Value::as_str)
            .unwrap_or("ok is not true");
        let message = format!("Slack refused {method}: {error}");
        if TRANSIENT_ERRORS.contains(&error) {
            Err(ChannelError::Transient(message))
        } else {
            Err(ChannelError::Rejected(message))
        }
    }

    /// Posts `body` to a click's `response_url` (no token: the URL is the credential, so it
    /// never appears in a message).
    ///
    /// # Errors
    /// A message saying why the post failed.
    pub async fn respond(&self, response_url: &str, body: &Value) -> Result<(), String> {
        let response = self
            .client
            .post(response_url)
            .header(CONTENT_TYPE, JSON)
            .body(body.to_string())
            .send()
            .await
            .map_err(describe)?;
        let status = response.status();
        if status.is_success() {
            return Ok(());
        }
        Err(format!("the response_url answered {status}"))
    }
}

/// The JSON answer of a call that reached Slack, or why it is not one.
async fn answer_of(method: &str, response: Response) -> Result<Value, ChannelError> {
    let status = response.status();
    if status == StatusCode::TOO_MANY_REQUESTS {
        let wait = response
            .headers()
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .map(|v| format!("; retry after {v} s"))
            .unwrap_or_default();
        return Err(ChannelError::Transient(format!(
            "Slack is rate limiting {method}{wait}"
        )));
    }
    if status.is_server_error() {
        return Err(ChannelError::Transient(format!(
            "Slack answered {status} to {method}"
        )));
    }
    if !status.is_success() {
        return Err(ChannelError::Rejected(format!(
            "Slack answered {status} to {method}"
        )));
    }
    let body = read_capped(response)
        .await
        .map_err(|e| ChannelError::Transient(format!("{method}: {e}")))?;
    serde_json::from_slice(&body)
        .map_err(|e| ChannelError::Transient(format!("{method}: the answer is not JSON ({e})")))
}

async fn read_capped(mut response: Response) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(describe)? {
        if body.len() + chunk.len() > MAX_BODY_BYTES {
            return Err(format!("the answer exceeds {MAX_BODY_BYTES} bytes"));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// A transport error with its causes, without the URL (a `response_url` is a credential).
fn describe(error: reqwest::Error) -> String {
    let error = error.without_url();
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text = format!("{text}: {cause}");
        source = cause.source();
    }
    text
}
