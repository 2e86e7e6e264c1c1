//! Where an llm hook sends its request: the endpoint (base URL, model, API key) and the
//! request-shape settings that differ between OpenAI-compatible servers.

use std::fmt;

use url::Url;

use super::{LlmError, Result};
use crate::text::redact_url;

/// Base URL used when neither the hook nor the environment names one (OpenAI's API).
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
/// Env var naming the base URL of tollgate's llm endpoint (e.g. `http://127.0.0.1:11434/v1`).
pub const ENV_BASE_URL: &str = "TOLLGATE_LLM_BASE_URL";
/// Env var naming the model (e.g. `gpt-4o-mini`, `llama3.1:8b`).
pub const ENV_MODEL: &str = "TOLLGATE_LLM_MODEL";
/// Env var holding the API key sent as `Authorization: Bearer <key>`.
pub const ENV_API_KEY: &str = "TOLLGATE_LLM_API_KEY";
/// OpenAI SDK's base URL variable, the fallback for [`ENV_BASE_URL`].
pub const OPENAI_BASE_URL: &str = "OPENAI_BASE_URL";
/// OpenAI SDK's key variable, the fallback for [`ENV_API_KEY`] (see [`Endpoint::resolve`]).
pub const OPENAI_API_KEY: &str = "OPENAI_API_KEY";

/// Per-hook endpoint settings (`base_url:`, `model:` and `api_key:` of a hook entry).
///
/// **Admin config only.** The config layer passes an override only for hooks from admin
/// (trusted) hook files; for every other source it passes `None`, so a skill or user file can
/// never point a judge at an endpoint of its choosing or pick a weaker model. Empty or
/// whitespace-only values count as unset. `api_key` is the key itself (the config layer resolves
/// `${ENV}` references before building the override).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct EndpointOverride {
    /// Base URL of the Chat Completions API, without `/chat/completions`.
    pub base_url: Option<String>,
    /// Model name, sent as `model`.
    pub model: Option<String>,
    /// API key. Required for any key to be sent when `base_url` is overridden.
    pub api_key: Option<String>,
}

impl fmt::Debug for EndpointOverride {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EndpointOverride")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

/// Where a resolved setting came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Set in code ([`Endpoint::new`], [`Endpoint::with_api_key`]).
    Explicit,
    /// From the hook's [`EndpointOverride`] (admin config).
    Override,
    /// From the named environment variable.
    Env(&'static str),
    /// The built-in default ([`DEFAULT_BASE_URL`]).
    Default,
}

/// Whether requests carry `response_format: {"type": "json_schema", …, "strict": true}`
/// ([Structured Outputs](https://platform.openai.com/docs/guides/structured-outputs)).
///
/// The answer is parsed just as strictly in every mode: structured output only makes a clean
/// verdict more likely, it never loosens what counts as one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum StructuredOutput {
    /// Send it; if the server answers 400 or 422 with an error that names `response_format` or
    /// `json_schema`, send the same request again once without it, and leave it out of this
    /// hook's later requests. For servers whose support is unknown.
    #[default]
    Auto,
    /// Always send it; a server that rejects it fails the hook (`errored`).
    Always,
    /// Never send it: the prompt alone asks for the JSON verdict (old local servers).
    Never,
}

/// Which request field carries the token budget.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TokenLimitField {
    /// `max_completion_tokens`: OpenAI's current field (required by its reasoning models; it
    /// also bounds reasoning tokens); vLLM and recent llama.cpp accept it.
    #[default]
    MaxCompletionTokens,
    /// `max_tokens`: the deprecated field, for servers that only know it (Ollama, LM Studio,
    /// older llama.cpp ignore `max_completion_tokens`).
    MaxTokens,
}

impl TokenLimitField {
    /// The JSON key.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::MaxCompletionTokens => "max_completion_tokens",
            Self::MaxTokens => "max_tokens",
        }
    }
}

/// A resolved Chat Completions endpoint: `POST {base_url}/chat/completions`, with the model,
/// an optional bearer key and the request-shape settings.
///
/// The endpoint is trusted configuration (admin file or process environment), so it is not
/// behind the webhook SSRF guard: local servers on `127.0.0.1` are expected. Debug output
/// never shows the key.
#[derive(Clone)]
pub struct Endpoint {
    base_url: Url,
    base_origin: Origin,
    url: Url,
    model: String,
    model_origin: Origin,
    api_key: Option<(String, Origin)>,
    pub(super) structured_output: StructuredOutput,
    pub(super) token_limit_field: TokenLimitField,
    pub(super) temperature: Option<f64>,
}

impl Endpoint {
    /// An endpoint set in code, with no key, structured output [`Auto`](StructuredOutput::Auto),
    /// `max_completion_tokens` and temperature 0.
    ///
    /// # Errors
    /// [`LlmError::InvalidBaseUrl`] unless `base_url` is an absolute `http`/`https` URL without
    /// credentials, query or fragment; [`LlmError::MissingModel`] for an empty model.
    pub fn new(base_url: &str, model: impl Into<String>) -> Result<Self> {
        let model = model.into().trim().to_owned();
        if model.is_empty() {
            return Err(LlmError::MissingModel);
        }
        Self::build(
            (base_url.trim(), Origin::Explicit),
            (model, Origin::Explicit),
            None,
        )
    }

    /// Resolves the endpoint from the process environment and an optional admin override; see
    /// [`Endpoint::resolve`].
    ///
    /// # Errors
    /// As [`Endpoint::resolve`].
    pub fn from_env(overrides: Option<&EndpointOverride>) -> Result<Self> {
        Self::resolve(|name| std::env::var(name).ok(), overrides)
    }

    /// Resolves the endpoint from `env` (a variable lookup, so tests need not touch the process
    /// environment) and an optional admin override. Empty values count as unset.
    ///
    /// - base URL: `overrides.base_url`, else [`ENV_BASE_URL`], else [`OPENAI_BASE_URL`], else
    ///   [`DEFAULT_BASE_URL`];
    /// - model: `overrides.model`, else [`ENV_MODEL`]; there is no default model;
    /// - API key: `overrides.api_key`, else [`ENV_API_KEY`], else [`OPENAI_API_KEY`], with two
    ///   limits so that a key never travels to an endpoint it was not configured for: an
    ///   overridden base URL gets only the override's key, and a base URL from
    ///   [`ENV_BASE_URL`] never gets [`OPENAI_API_KEY`]. No key: no `Authorization` header.
    ///
    /// # Errors
    /// [`LlmError::MissingModel`] when no model is set; [`LlmError::InvalidBaseUrl`] as in
    /// [`Endpoint::new`].
    pub fn resolve(
        env: impl Fn(&str) -> Option<String>,
        overrides: Option<&EndpointOverride>,
    ) -> Result<Self> {
        let set = |value: Option<&String>| {
            let value = value?.trim();
            (!value.is_empty()).then(|| value.to_owned())
        };
        let var = |name: &'static str| set(env(name).as_ref()).map(|v| (v, Origin::Env(name)));
        let layer = |field: fn(&EndpointOverride) -> &Option<String>| {
            set(overrides.and_then(|o| field(o).as_ref())).map(|v| (v, Origin::Override))
        };
        let base = layer(|o| &o.base_url)
            .or_else(|| var(ENV_BASE_URL))
            .or_else(|| var(OPENAI_BASE_URL))
            .unwrap_or_else(|| (DEFAULT_BASE_URL.to_owned(), Origin::Default));
        let model = layer(|o| &o.model)
            .or_else(|| var(ENV_MODEL))
            .ok_or(LlmError::MissingModel)?;
        let key = layer(|o| &o.api_key).or_else(|| match base.1 {
            Origin::Override => None,
            Origin::Env(ENV_BASE_URL) => var(ENV_API_KEY),
            _ => var(ENV_API_KEY).or_else(|| var(OPENAI_API_KEY)),
        });
        Self::build((&base.0, base.1), model, key)
    }

    fn build(
        base: (&str, Origin),
        model: (String, Origin),
        api_key: Option<(String, Origin)>,
    ) -> Result<Self> {
        let (base_url, url) = chat_completions_url(base.0)?;
        Ok(Self {
            base_url,
            base_origin: base.1,
            url,
            model: model.0,
            model_origin: model.1,
            api_key,
            structured_output: StructuredOutput::default(),
            token_limit_field: TokenLimitField::default(),
            temperature: Some(0.0),
        })
    }

    /// Sends `Authorization: Bearer <key>`; an empty key removes it.
    #[must_use]
    pub fn with_api_key(mut self, key: impl Into<String>) -> Self {
        let key = key.into().trim().to_owned();
        self.api_key = (!key.is_empty()).then_some((key, Origin::Explicit));
        self
    }

    /// Sets whether requests carry a strict JSON schema (default
    /// [`Auto`](StructuredOutput::Auto)).
    #[must_use]
    pub fn with_structured_output(mut self, mode: StructuredOutput) -> Self {
        self.structured_output = mode;
        self
    }

    /// Sets the field that carries the token budget (default `max_completion_tokens`).
    #[must_use]
    pub fn with_token_limit_field(mut self, field: TokenLimitField) -> Self {
        self.token_limit_field = field;
        self
    }

    /// Sets `temperature` (default `Some(0.0)`, for repeatable verdicts); `None` leaves it out,
    /// as OpenAI's reasoning models require.
    #[must_use]
    pub fn with_temperature(mut self, temperature: Option<f64>) -> Self {
        self.temperature = temperature;
        self
    }

    /// The base URL as configured (normalized by the `url` crate).
    pub fn base_url(&self) -> &Url {
        &self.base_url
    }

    /// Where the base URL came from.
    pub fn base_url_origin(&self) -> Origin {
        self.base_origin
    }

    /// The URL requests are posted to: `{base_url}/chat/completions`.
    pub fn chat_completions_url(&self) -> &Url {
        &self.url
    }

    /// The model name.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// Where the model came from.
    pub fn model_origin(&self) -> Origin {
        self.model_origin
    }

    /// Where the API key came from, or `None` when no key is sent.
    pub fn api_key_origin(&self) -> Option<Origin> {
        self.api_key.as_ref().map(|(_, origin)| *origin)
    }

    pub(super) fn api_key(&self) -> Option<&str> {
        self.api_key.as_ref().map(|(key, _)| key.as_str())
    }
}

impl fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Endpoint")
            .field("url", &self.url.as_str())
            .field("model", &self.model)
            .field("api_key", &self.api_key_origin())
            .field("structured_output", &self.structured_output)
            .field("token_limit_field", &self.token_limit_field)
            .field("temperature", &self.temperature)
            .finish_non_exhaustive()
    }
}

/// Validates a base URL and appends `/chat/completions` to its path.
fn chat_completions_url(base: &str) -> Result<(Url, Url)> {
    let invalid = |why: &str| LlmError::InvalidBaseUrl(why.to_owned());
    let parsed = Url::parse(base).map_err(|e| invalid(&format!("{e}")))?;
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(invalid("credentials in the URL (use the API key setting)"));
    }
    // Messages show only `scheme://host:port/…`: a query may hold a key (`?api-key=…`).
    let shown = redact_url(&parsed);
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(invalid(&format!(
            "{shown}: the scheme must be http or https"
        )));
    }
    if parsed.query().is_some() || parsed.fragment().is_some() {
        return Err(invalid(&format!("{shown}: no query or fragment allowed")));
    }
    let joined = format!("{}/chat/completions", parsed.as_str().trim_end_matches('/'));
    let url = Url::parse(&joined).map_err(|e| invalid(&format!("{shown}: {e}")))?;
    Ok((parsed, url))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chat_completions_url_keeps_the_base_path() {
        for base in ["http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1/"] {
            let (_, url) = chat_completions_url(base).unwrap();
            assert_eq!(url.as_str(), "http://127.0.0.1:8080/v1/chat/completions");
        }
        let (_, url) = chat_completions_url("https://example.com").unwrap();
        assert_eq!(url.as_str(), "https://example.com/chat/completions");
    }

    #[test]
    fn bad_base_urls_are_refused() {
        for base in [
            "ftp://example.com/v1",
            "example.com/v1",
            "https://user:secret@example.com/v1",
            "https://example.com/v1?key=k",
            "https://example.com/v1#x",
            "",
        ] {
            let err = chat_completions_url(base).unwrap_err();
            assert!(matches!(err, LlmError::InvalidBaseUrl(_)), "{base}");
            assert!(!err.to_string().contains("secret"), "{err}");
        }
    }

    #[test]
    fn regression_invalid_base_url_does_not_echo_the_query() {
        for base in [
            "https://h/v1?api-key=sk-SECRET",
            "https://h/v1#sk-SECRET",
            "ftp://h/sk-SECRET?api-key=sk-SECRET",
        ] {
            let message = chat_completions_url(base).unwrap_err().to_string();
            assert!(!message.contains("sk-SECRET"), "{message}");
            assert!(message.contains("://h/…"), "{message}");
        }
    }

    #[test]
    fn debug_output_hides_keys() {
        let endpoint = Endpoint::new("http://127.0.0.1/v1", "m")
            .unwrap()
            .with_api_key("sk-secret");
        assert!(!format!("{endpoint:?}").contains("sk-secret"));
        let overrides = EndpointOverride {
            api_key: Some("sk-secret".into()),
            ..Default::default()
        };
        assert!(!format!("{overrides:?}").contains("sk-secret"));
    }
}
