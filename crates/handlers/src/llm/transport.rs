//! Posting a request to the endpoint and reading the reply, with capped bodies.

use std::error::Error as _;
use std::sync::OnceLock;

use reqwest::header::{ACCEPT, CONTENT_TYPE};
use reqwest::{Client, Response, StatusCode};
use tollgate_core::HookError;

use super::answer::{EXCERPT, invalid};
use super::config::Endpoint;
use super::{LlmError, Result};
use crate::text::escape_controls;
use crate::text::excerpt;

/// Most bytes read from a 2xx response (1 MiB): a verdict is a few hundred.
const SUCCESS_CAP: usize = 1024 * 1024;
/// Most bytes read from an error response (64 KiB); an excerpt of them goes into the error.
const ERROR_CAP: usize = 64 * 1024;

/// One client for every llm hook of the process, so connections are pooled across runs.
///
/// Redirects are never followed (a 3xx is a failed call) and environment proxies
/// (`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY`) are ignored: the endpoint is exactly the
/// configured one, and the key never goes through a proxy nobody configured for it.
pub(super) fn shared_client() -> Result<Client> {
    static CLIENT: OnceLock<Client> = OnceLock::new();
    if let Some(client) = CLIENT.get() {
        return Ok(client.clone());
    }
    let built = Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .user_agent(concat!("tollgate/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| LlmError::Client(chain(&e)))?;
    Ok(CLIENT.get_or_init(|| built).clone())
}

/// What the endpoint answered.
pub(super) enum Reply {
    /// A 2xx status, with its body.
    Success(Vec<u8>),
    /// Any other status, with an excerpt of its body.
    Failed(StatusCode, String),
}

/// Posts `body` (JSON) to the endpoint's `/chat/completions` URL.
///
/// # Errors
/// [`FailureKind::Errored`](tollgate_core::FailureKind::Errored) when the request cannot be
/// sent or the body cannot be read; `InvalidOutput` for a 2xx body over 1 MiB.
///
/// # Cancel safety
/// Cancel safe: dropping the future drops the connection.
pub(super) async fn post(
    client: &Client,
    endpoint: &Endpoint,
    body: Vec<u8>,
) -> Result<Reply, HookError> {
    let mut request = client
        .post(endpoint.chat_completions_url().clone())
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "application/json")
        .body(body);
    if let Some(key) = endpoint.api_key() {
        request = request.bearer_auth(key);
    }
    let response = request.send().await.map_err(transport_error)?;
    let status = response.status();
    if status.is_success() {
        let (bytes, cut) = read_capped(response, SUCCESS_CAP).await?;
        if cut {
            return Err(invalid("the response body is over 1 MiB"));
        }
        return Ok(Reply::Success(bytes));
    }
    let (bytes, _) = read_capped(response, ERROR_CAP).await?;
    Ok(Reply::Failed(status, excerpt(&bytes, EXCERPT)))
}

/// Reads at most `cap` bytes of the body; `true` when there was more.
async fn read_capped(mut response: Response, cap: usize) -> Result<(Vec<u8>, bool), HookError> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(transport_error)? {
        let room = cap - body.len();
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            return Ok((body, true));
        }
        body.extend_from_slice(&chunk);
    }
    Ok((body, false))
}

/// Whether a failed reply says the server does not accept `response_format` (or its
/// `json_schema`): the cue for [`StructuredOutput::Auto`](super::StructuredOutput::Auto) to
/// retry without it.
pub(super) fn rejects_structured_output(status: StatusCode, body: &str) -> bool {
    let body = body.to_ascii_lowercase();
    matches!(status.as_u16(), 400 | 422)
        && (body.contains("response_format") || body.contains("json_schema"))
}

/// The hook failure for a non-2xx reply.
pub(super) fn status_error(status: StatusCode, body: &str) -> HookError {
    let note = if status.is_redirection() {
        " (redirects are not followed)"
    } else {
        ""
    };
    let mut message = format!("the llm endpoint answered HTTP {status}{note}");
    if !body.is_empty() {
        message.push_str(": ");
        message.push_str(body);
    }
    HookError::msg(message)
}

fn transport_error(error: reqwest::Error) -> HookError {
    let error = error.without_url();
    HookError::msg(escape_controls(&format!(
        "llm request failed: {}",
        chain(&error)
    )))
}

/// The error and its sources, `: `-separated (reqwest's own message names only the step).
fn chain(error: &reqwest::Error) -> String {
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

    #[test]
    fn only_bad_requests_naming_response_format_trigger_the_fallback() {
        let openai = r#"{"error": {"message": "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.", "type": "invalid_request_error", "param": "response_format", "code": null}}"#;
        assert!(rejects_structured_output(StatusCode::BAD_REQUEST, openai));
        assert!(rejects_structured_output(
            StatusCode::UNPROCESSABLE_ENTITY,
            "unknown field JSON_SCHEMA"
        ));
        assert!(!rejects_structured_output(
            StatusCode::BAD_REQUEST,
            "bad model"
        ));
        assert!(!rejects_structured_output(
            StatusCode::INTERNAL_SERVER_ERROR,
            openai
        ));
        assert!(!rejects_structured_output(StatusCode::UNAUTHORIZED, openai));
    }
}
