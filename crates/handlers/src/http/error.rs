//! Why an http hook cannot be built.

/// Why an [`HttpHook`](super::HttpHook) or a [`Secret`](super::Secret) cannot be built. The
/// config layer skips that hook entry and logs the error as a warning; its siblings load.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HttpError {
    /// The URL is not one an http hook may post to: not a URL, not `http`/`https`, no host,
    /// credentials in it, a host name over 253 bytes, `localhost` while no loopback address is
    /// allowed, or an IP literal the SSRF guard refuses.
    #[error("http hook URL `{url}` refused: {reason}")]
    RefusedUrl {
        /// The URL, redacted to `scheme://host:port/…` (webhook URLs carry tokens in their
        /// path and query); `<not a valid URL>` when it does not parse.
        url: String,
        /// Why.
        reason: String,
    },
    /// A secret spec is not exactly one `${NAME}` reference. The spec is not echoed: it may be
    /// a literal secret.
    #[error(
        "secret must be an environment reference like `${{HOOK_SECRET}}`; literal secrets are refused"
    )]
    SecretNotEnvReference,
    /// The environment variable a secret refers to is unset, empty, only whitespace or not
    /// UTF-8.
    #[error("secret variable `{0}` is unset or empty")]
    SecretUnset(String),
    /// A secret given as bytes is empty or only whitespace.
    #[error("secret is empty")]
    EmptySecret,
    /// A header is not one a hook may set: not a valid name or value, or one tollgate sets
    /// itself (`Content-Type`, `Host`, `Content-Length`, `X-Webhook-*`). The value is not
    /// echoed: it may hold a token.
    #[error("header `{name}` refused: {reason}")]
    Header {
        /// The header's name as given.
        name: String,
        /// Why.
        reason: String,
    },
    /// The HTTP client cannot be built (TLS back end initialisation).
    #[error("cannot build the HTTP client: {0}")]
    Client(#[from] reqwest::Error),
}
