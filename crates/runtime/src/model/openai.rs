//! The OpenAI-compatible provider: `POST {base_url}/chat/completions` with tool calling.
//!
//! Wire format: [Chat Completions][chat]. Works against OpenAI and the servers that speak its
//! dialect (vLLM, Ollama's `/v1`, llama.cpp's `llama-server`).
//!
//! [chat]: https://platform.openai.com/docs/api-reference/chat/create

use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};
use tollgate_core::BoxFuture;

use super::{Message, Model, ModelError, ModelRequest, Role};

/// Where and what to ask.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenAiConfig {
    /// The API root, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:11434/v1`.
    pub base_url: String,
    /// The model name sent as `model`.
    pub model: String,
    /// The bearer key; `None` sends no `Authorization` header (local servers).
    pub api_key: Option<String>,
    /// Deadline of one request.
    pub timeout: Duration,
}

/// Largest response body read from the endpoint; a larger one fails the turn.
pub const MAX_RESPONSE_BYTES: usize = 8 * 1024 * 1024;

static MADE_UP_IDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The default API root.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

impl OpenAiConfig {
    /// The config for `model`. A key goes only to the endpoint it belongs to:
    /// - an agent file's endpoint (`file`: its `base_url` and the name of the variable holding
    ///   its key, `api_key_env`) gets that key or none;
    /// - else `TOLLGATE_MODEL_BASE_URL` gets `TOLLGATE_MODEL_API_KEY`;
    /// - else `OPENAI_BASE_URL` gets `OPENAI_API_KEY`;
    /// - else [`DEFAULT_BASE_URL`] gets `TOLLGATE_MODEL_API_KEY`, else `OPENAI_API_KEY`.
    ///
    /// `env` looks variables up (the process environment in production); empty values count
    /// as unset.
    pub fn from_env(
        model: &str,
        file: Option<(&str, Option<&str>)>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Self {
        let nonempty = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        let (base_url, api_key) = if let Some((url, key_env)) = file {
            (url.to_owned(), key_env.and_then(&nonempty))
        } else if let Some(url) = nonempty("TOLLGATE_MODEL_BASE_URL") {
            (url, nonempty("TOLLGATE_MODEL_API_KEY"))
        } else if let Some(url) = nonempty("OPENAI_BASE_URL") {
            (url, nonempty("OPENAI_API_KEY"))
        } else {
            let key = nonempty("TOLLGATE_MODEL_API_KEY").or_else(|| nonempty("OPENAI_API_KEY"));
            (DEFAULT_BASE_URL.to_owned(), key)
        };
        Self {
            base_url,
            model: model.to_owned(),
            api_key,
            timeout: Duration::from_secs(120),
        }
    }
}

/// A Chat Completions client with tool calling.
#[derive(Debug)]
pub struct OpenAiModel {
    config: OpenAiConfig,
    url: String,
    client: reqwest::Client,
}

impl OpenAiModel {
    /// A client for `config`.
    ///
    /// # Errors
    /// [`ModelError::Setup`] when the HTTP client cannot be built or the base URL is not
    /// http(s).
    pub fn new(config: OpenAiConfig) -> Result<Self, ModelError> {
        let base = config.base_url.trim_end_matches('/');
        let not_http =
            || ModelError::Setup(format!("model base URL `{base}` is not an http(s) URL"));
        // `chat/completions` goes after the base's path, before its query: Azure-style bases
        // carry one (`…/v1?api-version=2024-06-01`).
        let mut url = reqwest::Url::parse(base).map_err(|_| not_http())?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(not_http());
        }
        let path = format!("{}/chat/completions", url.path().trim_end_matches('/'));
        url.set_path(&path);
        let client = reqwest::Client::builder()
            .timeout(config.timeout)
            .build()
            .map_err(|e| ModelError::Setup(format!("cannot build the HTTP client: {e}")))?;
        Ok(Self {
            url: url.to_string(),
            config,
            client,
        })
    }

    async fn ask(&self, request: ModelRequest<'_>) -> Result<Message, ModelError> {
        let mut body = json!({
            "model": self.config.model,
            "messages": request.messages,
        });
        if !request.tools.is_empty() {
            let tools: Vec<Value> = request
                .tools
                .iter()
                .map(|t| {
                    json!({"type": "function", "function": {
                        "name": t.name, "description": t.description, "parameters": t.parameters,
                    }})
                })
                .collect();
            body["tools"] = Value::Array(tools);
            body["tool_choice"] = json!("auto");
        }
        let mut post = self
            .client
            .post(&self.url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.to_string());
        if let Some(key) = &self.config.api_key {
            post = post.bearer_auth(key);
        }
        let response = post.send().await.map_err(|e| self.transport_error(e))?;
        let status = response.status();
        let mut response = response;
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| self.transport_error(e))?
        {
            if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
                return Err(ModelError::Answer(format!(
                    "the response is larger than {MAX_RESPONSE_BYTES} bytes"
                )));
            }
            body.extend_from_slice(&chunk);
        }
        let text = String::from_utf8_lossy(&body);
        if !status.is_success() {
            let excerpt: String = text.chars().take(300).collect();
            return Err(ModelError::Request(format!("HTTP {status}: {excerpt}")));
        }
        parse_answer(&text)
    }
}

impl OpenAiModel {
    /// `POST URL: ERROR: CAUSE: …`: the endpoint (without credentials, query or fragment,
    /// which may hold a key) and the whole source chain, where the cause is (connection
    /// refused, DNS, TLS, timeout): reqwest's own message names only the step ("error sending
    /// request").
    fn transport_error(&self, error: reqwest::Error) -> ModelError {
        use std::error::Error as _;
        let error = error.without_url();
        let mut text = error.to_string();
        let mut source = error.source();
        while let Some(cause) = source {
            text.push_str(": ");
            text.push_str(&cause.to_string());
            source = cause.source();
        }
        ModelError::Request(format!("POST {}: {text}", shown_url(&self.url)))
    }
}

/// `url` without credentials, query or fragment.
fn shown_url(url: &str) -> String {
    let Ok(mut url) = reqwest::Url::parse(url) else {
        return "<the model endpoint>".to_owned();
    };
    let _ = url.set_username("");
    let _ = url.set_password(None);
    url.set_query(None);
    url.set_fragment(None);
    url.to_string()
}

#[derive(Deserialize)]
struct Completion {
    choices: Vec<Choice>,
}

#[derive(Deserialize)]
struct Choice {
    message: Message,
    #[serde(default)]
    finish_reason: Option<String>,
}

/// The assistant message of a Chat Completions response body.
fn parse_answer(text: &str) -> Result<Message, ModelError> {
    // Some servers answer 200 with an error object; say what the server said.
    if let Ok(Value::Object(object)) = serde_json::from_str::<Value>(text)
        && let Some(error) = object.get("error")
        && !object.contains_key("choices")
    {
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .map_or_else(|| error.to_string(), str::to_owned);
        let excerpt: String = message.chars().take(300).collect();
        return Err(ModelError::Request(format!(
            "the server answered an error: {excerpt}"
        )));
    }
    let completion: Completion = serde_json::from_str(text)
        .map_err(|e| ModelError::Answer(format!("not a Chat Completions response: {e}")))?;
    let Some(choice) = completion.choices.into_iter().next() else {
        return Err(ModelError::Answer("no choices".into()));
    };
    match choice.finish_reason.as_deref() {
        Some("length") if choice.message.tool_calls.is_empty() => {
            return Err(ModelError::Answer(
                "the answer was cut off (finish_reason length)".into(),
            ));
        }
        Some("content_filter") => {
            return Err(ModelError::Answer(
                "the answer was withheld by the server's content filter".into(),
            ));
        }
        _ => {}
    }
    let mut message = choice.message;
    if message.role != Role::Assistant {
        return Err(ModelError::Answer(format!(
            "role {:?}, not assistant",
            message.role
        )));
    }
    // Some servers leave out tool call ids; the conversation needs one per call.
    for call in &mut message.tool_calls {
        if call.id.trim().is_empty() {
            // Unique in this process, across turns and sessions.
            let n = MADE_UP_IDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            call.id = format!("call_tollgate_{:x}_{n}", std::process::id());
        }
    }
    for call in &message.tool_calls {
        if serde_json::from_str::<Value>(&call.function.arguments).is_err() {
            // Kept: the loop answers such a call with an error observation, so the model can fix it.
            tracing::debug!(call = %call.id, "tool call arguments are not JSON");
        }
    }
    message.tool_call_id = None;
    Ok(message)
}

impl Model for OpenAiModel {
    fn describe(&self) -> String {
        format!("openai:{}", self.config.model)
    }

    fn complete<'a>(
        &'a self,
        request: ModelRequest<'a>,
    ) -> BoxFuture<'a, Result<Message, ModelError>> {
        Box::pin(self.ask(request))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regression_a_base_url_with_a_query_got_the_path_after_the_query() {
        let mut config = OpenAiConfig::from_env("m", None, |_| None);
        config.base_url = "http://127.0.0.1:9/v1/?api-version=2024".into();
        let model = OpenAiModel::new(config).unwrap();
        assert_eq!(
            model.url,
            "http://127.0.0.1:9/v1/chat/completions?api-version=2024"
        );
    }

    #[test]
    fn the_shown_url_has_no_credentials_query_or_fragment() {
        assert_eq!(
            shown_url("https://user:pw@llm.example:8443/v1/chat/completions?key=k#f"),
            "https://llm.example:8443/v1/chat/completions"
        );
        assert_eq!(shown_url("not a url"), "<the model endpoint>");
    }

    #[test]
    fn keys_go_only_to_their_own_endpoint() {
        let env = |name: &str| match name {
            "OPENAI_BASE_URL" => Some("http://openai-env/v1".to_owned()),
            "OPENAI_API_KEY" => Some("k-openai".to_owned()),
            "TOLLGATE_MODEL_API_KEY" => Some(" ".to_owned()),
            "MY_KEY" => Some("k-mine".to_owned()),
            _ => None,
        };
        let config = OpenAiConfig::from_env("m", None, env);
        assert_eq!(config.base_url, "http://openai-env/v1");
        assert_eq!(config.api_key.as_deref(), Some("k-openai"));
        // An agent file's endpoint never gets the environment's key, only the one it names.
        let file = OpenAiConfig::from_env("m", Some(("http://x/v1", None)), env);
        assert_eq!(
            (file.base_url.as_str(), file.api_key),
            ("http://x/v1", None)
        );
        let named = OpenAiConfig::from_env("m", Some(("http://x/v1", Some("MY_KEY"))), env);
        assert_eq!(named.api_key.as_deref(), Some("k-mine"));
        let tollgate = |name: &str| match name {
            "TOLLGATE_MODEL_BASE_URL" => Some("http://t/v1".to_owned()),
            "OPENAI_API_KEY" => Some("k-openai".to_owned()),
            _ => None,
        };
        assert_eq!(OpenAiConfig::from_env("m", None, tollgate).api_key, None);
        let default = OpenAiConfig::from_env("m", None, |n| {
            (n == "OPENAI_API_KEY").then(|| "k".to_owned())
        });
        assert_eq!(
            (default.base_url.as_str(), default.api_key.as_deref()),
            (DEFAULT_BASE_URL, Some("k"))
        );
    }

    #[test]
    fn answers_are_checked() {
        let ok = r#"{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"t","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}"#;
        assert_eq!(parse_answer(ok).unwrap().tool_calls[0].function.name, "t");
        assert!(parse_answer(r#"{"choices":[]}"#).is_err());
        assert!(parse_answer("<html>").is_err());
        let filtered = r#"{"choices":[{"message":{"role":"assistant","content":null},"finish_reason":"content_filter"}]}"#;
        assert!(
            parse_answer(filtered)
                .unwrap_err()
                .to_string()
                .contains("content filter")
        );
        let error = r#"{"error":{"message":"rate limited","type":"requests"}}"#;
        assert!(
            parse_answer(error)
                .unwrap_err()
                .to_string()
                .contains("rate limited")
        );
        let no_id = r#"{"choices":[{"message":{"role":"assistant","tool_calls":[{"function":{"name":"t","arguments":"{}"}}]}}]}"#;
        let first = parse_answer(no_id).unwrap().tool_calls[0].id.clone();
        let second = parse_answer(no_id).unwrap().tool_calls[0].id.clone();
        assert!(!first.is_empty());
        assert_ne!(first, second, "made-up ids never repeat");
        let cut = r#"{"choices":[{"message":{"role":"assistant","content":"half"},"finish_reason":"length"}]}"#;
        assert!(
            parse_answer(cut)
                .unwrap_err()
                .to_string()
                .contains("cut off")
        );
        assert!(
            OpenAiModel::new(OpenAiConfig::from_env(
                "m",
                Some(("file:///x", None)),
                |_| None
            ))
            .is_err()
        );
    }
}
