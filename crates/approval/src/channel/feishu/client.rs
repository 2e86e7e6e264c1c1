//! The open platform's HTTP API as the channel uses it: the tenant access token (fetched
//! with the app's id and secret, cached, renewed before it expires) and the two message
//! calls (create, patch).

use std::fmt;
use std::time::{Duration, Instant};

use reqwest::header::CONTENT_TYPE;
use reqwest::{Client, Method, StatusCode};
use serde_json::{Value, json};
use tokio::sync::Mutex;
use url::Url;

use super::config::Redacted;
use crate::channel::ChannelError;

const TOKEN_PATH: &str = "/open-apis/auth/v3/tenant_access_token/internal";
const MESSAGES_PATH: &str = "/open-apis/im/v1/messages";

/// A token is renewed once it has less than this left (the platform hands out a new one
/// in its last half hour, so renewing early costs nothing).
pub(super) const RENEW_BEFORE: Duration = Duration::from_secs(300);
/// Each call to the platform, all included.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Codes the platform answers when the access token is missing, invalid or expired.
const AUTH_CODES: [i64; 4] = [99_991_661, 99_991_663, 99_991_668, 99_991_677];
/// "Request trigger frequency limit".
const RATE_LIMITED: i64 = 99_991_400;

/// The API client of one app.
pub(super) struct Api {
    http: Client,
    base: Url,
    app_id: String,
    app_secret: String,
    token: Mutex<Option<Cached>>,
}

struct Cached {
    value: String,
    renew_at: Instant,
}

impl fmt::Debug for Api {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Api")
            .field("base", &self.base.as_str())
            .field("app_id", &self.app_id)
            .field("app_secret", &Redacted)
            .finish_non_exhaustive()
    }
}

/// How one call went.
enum Reply {
    /// `code: 0`; the `data` object.
    Data(Value),
    /// The access token was refused.
    Auth(String),
    /// Anything else.
    Failed(ChannelError),
}

impl Api {
    /// A client for the platform at `base`.
    ///
    /// # Errors
    /// The HTTP client cannot be built (no TLS roots).
    pub(super) fn new(base: Url, app_id: &str, app_secret: &str) -> Result<Self, String> {
        let http = Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .timeout(CALL_TIMEOUT)
            .connect_timeout(CONNECT_TIMEOUT)
            .user_agent(concat!("tollgate/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| format!("feishu: cannot build the HTTP client: {e}"))?;
        Ok(Self {
            http,
            base,
            app_id: app_id.to_owned(),
            app_secret: app_secret.to_owned(),
            token: Mutex::new(None),
        })
    }

    /// `POST /open-apis/im/v1/messages?receive_id_type=…` with `body`; the new message's id.
    pub(super) async fn create_message(
        &self,
        receive_id_type: &str,
        body: &Value,
    ) -> Result<String, ChannelError> {
        let mut url = self.url(MESSAGES_PATH);
        url.query_pairs_mut()
            .append_pair("receive_id_type", receive_id_type);
        let data = self.call(Method::POST, url, body, "send the card").await?;
        match data.get("message_id").and_then(Value::as_str) {
            Some(id) if !id.is_empty() => Ok(id.to_owned()),
            // The message may exist: a retry with the same uuid finds it.
            _ => Err(ChannelError::Transient(
                "Feishu accepted the card but named no message_id".into(),
            )),
        }
    }

    /// `PATCH /open-apis/im/v1/messages/{message_id}` with `body`.
    pub(super) async fn update_message(
        &self,
        message_id: &str,
        body: &Value,
    ) -> Result<(), ChannelError> {
        let mut url = self.url(MESSAGES_PATH);
        if let Ok(mut segments) = url.path_segments_mut() {
            segments.push(message_id);
        }
        self.call(Method::PATCH, url, body, "update the card")
            .await
            .map(drop)
    }

    fn url(&self, path: &str) -> Url {
        let mut url = self.base.clone();
        url.set_path(path);
        url
    }

    /// One API call with the cached token; when the platform refuses the token, one more
    /// with a fresh one.
    async fn call(
        &self,
        method: Method,
        url: Url,
        body: &Value,
        what: &str,
    ) -> Result<Value, ChannelError> {
        let token = self.token().await?;
        match self.send(&method, &url, body, &token, what).await {
            Reply::Data(data) => return Ok(data),
            Reply::Failed(error) => return Err(error),
            Reply::Auth(_) => self.forget(&token).await,
        }
        let token = self.token().await?;
        match self.send(&method, &url, body, &token, what).await {
            Reply::Data(data) => Ok(data),
            Reply::Failed(error) => Err(error),
            Reply::Auth(message) => Err(ChannelError::Rejected(format!(
                "Feishu refused a fresh tenant_access_token to {what}: {message}"
            ))),
        }
    }

    async fn send(
        &self,
        method: &Method,
        url: &Url,
        body: &Value,
        token: &str,
        what: &str,
    ) -> Reply {
        let request = self
            .http
            .request(method.clone(), url.clone())
            .bearer_auth(token)
            .header(CONTENT_TYPE, "application/json; charset=utf-8")
            .body(serde_json::to_vec(body).unwrap_or_default());
        match exchange(request, what).await {
            Ok((status, bytes)) => classify(status, &bytes, what),
            Err(error) => Reply::Failed(error),
        }
    }

    /// The cached token, or a fresh one when none is cached or it is due for renewal.
    ///
    /// Concurrent callers wait for one fetch. Dropping the future leaves the cache as it was.
    async fn token(&self) -> Result<String, ChannelError> {
        let mut cached = self.token.lock().await;
        if let Some(token) = cached.as_ref().filter(|t| Instant::now() < t.renew_at) {
            return Ok(token.value.clone());
        }
        let fresh = self.fetch_token().await?;
        let value = fresh.value.clone();
        *cached = Some(fresh);
        Ok(value)
    }

    /// Drops `token` from the cache (unless another caller renewed it already).
    async fn forget(&self, token: &str) {
        let mut cached = self.token.lock().await;
        if cached.as_ref().is_some_and(|t| t.value == token) {
            *cached = None;
        }
    }

    async fn fetch_token(&self) -> Result<Cached, ChannelError> {
        let what = "issue a tenant_access_token";
        let body = json!({"app_id": self.app_id, "app_secret": self.app_secret});
        let request = self
            .http
            .post(self.url(TOKEN_PATH))
            .header(CONTENT_TYPE, "application/json; charset=utf-8")
            .body(serde_json::to_vec(&body).unwrap_or_default());
        let (status, bytes) = exchange(request, what).await?;
        // The token endpoint answers its fields beside `code`, not inside `data`.
        let answer: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        let data = match classify(status, &bytes, what) {
            Reply::Data(_) => answer,
            Reply::Failed(error) => return Err(error),
            Reply::Auth(message) => {
                return Err(ChannelError::Rejected(format!(
                    "Feishu refused to {what}: {message}"
                )));
            }
        };
        let value = data.get("tenant_access_token").and_then(Value::as_str);
        let expire = data.get("expire").and_then(Value::as_u64);
        let (Some(value), Some(expire)) = (value.filter(|v| !v.is_empty()), expire) else {
            return Err(ChannelError::Transient(format!(
                "Feishu's answer to {what} has no tenant_access_token or expire"
            )));
        };
        let lifetime = Duration::from_secs(expire).saturating_sub(RENEW_BEFORE);
        Ok(Cached {
            value: value.to_owned(),
            renew_at: Instant::now() + lifetime,
        })
    }
}

/// Sends `request` and reads the whole answer. Any failure to get one is transient.
async fn exchange(
    request: reqwest::RequestBuilder,
    what: &str,
) -> Result<(StatusCode, Vec<u8>), ChannelError> {
    let unreachable = |e: reqwest::Error| {
        ChannelError::Transient(format!("cannot reach Feishu to {what}: {}", chain(&e)))
    };
    let response = request.send().await.map_err(unreachable)?;
    let status = response.status();
    let bytes = response.bytes().await.map_err(unreachable)?;
    Ok((status, bytes.to_vec()))
}

/// Reads an answer: `{"code": 0, "data": …}` is success; the auth codes (or a bare 401) ask
/// for a fresh token; 5xx, 429 and the rate-limit code are transient; any other code is a
/// refusal.
fn classify(status: StatusCode, bytes: &[u8], what: &str) -> Reply {
    if status.is_server_error() || status == StatusCode::TOO_MANY_REQUESTS {
        return Reply::Failed(ChannelError::Transient(format!(
            "Feishu answered {status} to {what}"
        )));
    }
    let answer: Option<Value> = serde_json::from_slice(bytes).ok();
    let code = answer.as_ref().and_then(|a| a.get("code")?.as_i64());
    let message = answer
        .as_ref()
        .and_then(|a| a.get("msg")?.as_str())
        .map(|m| m.chars().take(200).collect::<String>())
        .unwrap_or_default();
    match code {
        Some(0) if status.is_success() => {
            let data = answer.and_then(|mut a| a.get_mut("data").map(Value::take));
            Reply::Data(data.unwrap_or(Value::Null))
        }
        Some(code) if AUTH_CODES.contains(&code) => Reply::Auth(format!("code {code}: {message}")),
        _ if status == StatusCode::UNAUTHORIZED => Reply::Auth(format!("{status}: {message}")),
        Some(RATE_LIMITED) => Reply::Failed(ChannelError::Transient(format!(
            "Feishu rate-limited the call to {what}: {message}"
        ))),
        Some(code) => Reply::Failed(ChannelError::Rejected(format!(
            "Feishu refused to {what}: code {code}: {message}"
        ))),
        None if status.is_success() => Reply::Failed(ChannelError::Transient(format!(
            "Feishu's answer to {what} is not its JSON envelope"
        ))),
        None => Reply::Failed(ChannelError::Rejected(format!(
            "Feishu answered {status} to {what}"
        ))),
    }
}

fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(status: u16, body: &str) -> &'static str {
        let status = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
        match classify(status, body.as_bytes(), "test") {
            Reply::Data(_) => "data",
            Reply::Auth(_) => "auth",
            Reply::Failed(ChannelError::Transient(_)) => "transient",
            Reply::Failed(ChannelError::Rejected(_)) => "rejected",
        }
    }

    #[test]
    fn answers_are_classified() {
        assert_eq!(kind(200, r#"{"code":0,"data":{}}"#), "data");
        assert_eq!(kind(400, r#"{"code":99991663,"msg":"invalid"}"#), "auth");
        assert_eq!(kind(401, "nope"), "auth");
        assert_eq!(kind(503, r#"{"code":0}"#), "transient");
        assert_eq!(kind(429, ""), "transient");
        assert_eq!(
            kind(400, r#"{"code":99991400,"msg":"slow down"}"#),
            "transient"
        );
        assert_eq!(
            kind(400, r#"{"code":230001,"msg":"bad receive_id"}"#),
            "rejected"
        );
        assert_eq!(kind(200, r#"{"code":230001}"#), "rejected");
        assert_eq!(kind(200, "<html>"), "transient");
        assert_eq!(kind(404, "<html>"), "rejected");
    }
}
