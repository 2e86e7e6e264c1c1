//! HTTP hooks: the payload POSTed as JSON to a webhook (`docs/http-hooks.md`).
//!
//! # Request
//!
//! `POST <url>` with `Content-Type: application/json` and the payload's
//! [wire form](tollgate_protocol::wire::PayloadWire) as the body, plus:
//! - [`X-Webhook-Id`](ID_HEADER): a new random UUID for every delivery;
//! - [`X-Webhook-Event`](EVENT_HEADER): the event's canonical name;
//! - [`X-Webhook-Signature`](SIGNATURE_HEADER), when the hook has a [`Secret`]:
//!   `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`. Receivers check it with
//!   [`verify_signature`].
//!
//! # Response
//!
//! - a 2xx with an empty body (or only whitespace): no opinion;
//! - a 2xx with one JSON object: an outcome, with the same native and Claude-Code-compatible
//!   fields as command hooks ([`OutcomeWire`](tollgate_protocol::wire::OutcomeWire));
//! - a 2xx with any other body, or a body over the cap ([`HttpHook::DEFAULT_RESPONSE_CAP`]): a
//!   hook failure, `invalid_output`;
//! - any other status (3xx included: redirects are never followed) or a transport error: a
//!   hook failure, `errored`;
//! - a host name the SSRF guard refuses when it is resolved: a hook failure, `refused`.
//!
//! Failures are resolved by the hook's failure mode like every other hook's. The deadline is
//! the registration's ([`HookTimeout`]): the dispatcher drops the request future when it
//! passes, which closes the connection.
//!
//! # SSRF guard
//!
//! Only `http` and `https`. The address connected to is the address checked ([`check_ip`]):
//! IP literals, in every notation the URL parser accepts, when the hook is built (a refused one
//! is an [`HttpError::RefusedUrl`]); host names inside the client's DNS resolver, every
//! resolved address, so a second lookup cannot answer differently between check and connect.
//! Redirects are not followed and proxies from the environment are not used. Only trusted
//! configuration may allow extra networks (the `allow` list of [`HttpHook::new`]).
//!
//! # Example
//!
//! A signed session-end webhook that never delays the agent:
//!
//! ```no_run
//! use tollgate_core::{Dispatcher, HookOptions, RegistryBuilder};
//! use tollgate_handlers::http::HttpHook;
//! use tollgate_protocol::Event;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let hook = HttpHook::builder("session-end", "https://hooks.example.com/end")
//!     .secret_env("${HOOK_SECRET}")
//!     .build()?; // HttpError::SecretUnset("HOOK_SECRET") when the variable is unset or empty
//! let mut hooks = RegistryBuilder::new();
//! hooks.register_with(Event::SessionEnd, hook, HookOptions::default().fire_and_forget(true));
//! let dispatcher = Dispatcher::new(hooks.build()?);
//! # Ok(()) }
//! ```

mod deliver;
mod egress;
mod error;
mod guard;
mod resolve;
mod response;
mod signature;
mod target;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use ipnet::IpNet;
use reqwest::Client;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::redirect::Policy;
use tollgate_core::{BoxFuture, Hook, HookContext, HookError, HookTimeout};
use tollgate_protocol::wire::PayloadWire;
use tollgate_protocol::{HookKind, Outcome};
use url::Url;

pub use egress::GuardedEgress;
pub use error::HttpError;
pub use guard::{Embedding, Reason, check_ip};
pub use signature::{
    DEFAULT_TOLERANCE, EVENT_HEADER, ID_HEADER, SIGNATURE_HEADER, Secret, SignatureError,
    verify_signature,
};

use crate::claude::ClaudeCode;
use crate::text::{redact_url, redact_url_text};
use resolve::GuardedResolver;

/// An http hook: a URL checked by the SSRF guard, an optional signing secret, and an HTTP
/// client that resolves through the guard. Its `Debug` output shows the URL redacted to
/// `scheme://host:port/…`, never its path, query or secret.
pub struct HttpHook {
    name: String,
    url: Url,
    secret: Option<Secret>,
    headers: HeaderMap,
    client: Client,
    response_cap: usize,
    claude: Option<ClaudeCode>,
}

/// Builds an [`HttpHook`]; every check happens in [`HttpHookBuilder::build`]. Its `Debug`
/// output shows the URL redacted, like [`HttpHook`]'s.
#[must_use]
pub struct HttpHookBuilder {
    name: String,
    url: String,
    allow: Vec<IpNet>,
    secret: Option<SecretSource>,
    headers: Vec<(String, String)>,
    response_cap: usize,
    claude: Option<ClaudeCode>,
}

#[derive(Debug)]
enum SecretSource {
    Env(String),
    Given(Secret),
}

impl fmt::Debug for HttpHook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpHook")
            .field("name", &self.name)
            .field("url", &redact_url(&self.url))
            .field("signed", &self.secret.is_some())
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("response_cap", &self.response_cap)
            .finish_non_exhaustive()
    }
}

impl HttpHook {
    /// Cap on the response body, in bytes (1 MiB).
    pub const DEFAULT_RESPONSE_CAP: usize = 1024 * 1024;

    /// An unsigned hook posting to `url`. `allow` lists networks the SSRF guard lets through
    /// although they are refused by default; pass one only from trusted (admin) configuration.
    ///
    /// # Errors
    /// As for [`HttpHookBuilder::build`].
    pub fn new(name: impl Into<String>, url: &str, allow: &[IpNet]) -> Result<Self, HttpError> {
        Self::builder(name, url).allow_cidrs(allow).build()
    }

    /// A builder, for signed hooks and other settings.
    pub fn builder(name: impl Into<String>, url: impl Into<String>) -> HttpHookBuilder {
        HttpHookBuilder {
            name: name.into(),
            url: url.into(),
            allow: Vec::new(),
            secret: None,
            headers: Vec::new(),
            response_cap: Self::DEFAULT_RESPONSE_CAP,
            claude: None,
        }
    }

    /// The URL, as parsed (IPv4 literals in canonical dotted form). It may carry the
    /// receiver's token in its path or query: do not log it.
    pub fn url(&self) -> &Url {
        &self.url
    }

    /// Whether deliveries carry an `X-Webhook-Signature`.
    pub fn is_signed(&self) -> bool {
        self.secret.is_some()
    }

    async fn run(&self, ctx: HookContext) -> Result<Outcome, HookError> {
        let body = match &self.claude {
            Some(claude) => {
                claude.started(&self.name, ctx.payload());
                serde_json::to_vec(&claude.payload(ctx.payload()))?
            }
            None => serde_json::to_vec(&PayloadWire::from(ctx.payload()))?,
        };
        let parse = |body: &[u8]| match &self.claude {
            Some(claude) => claude.interpret_body(ctx.payload(), body),
            None => response::parse_body(body),
        };
        deliver::deliver(
            deliver::Delivery {
                client: &self.client,
                url: &self.url,
                secret: self.secret.as_ref(),
                headers: &self.headers,
                event: &ctx.event(),
                body,
                response_cap: self.response_cap,
            },
            parse,
        )
        .await
    }
}

impl fmt::Debug for HttpHookBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpHookBuilder")
            .field("name", &self.name)
            .field("url", &redact_url_text(&self.url))
            .field("allow", &self.allow)
            .field("secret", &self.secret)
            .field(
                "headers",
                &self.headers.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            )
            .field("response_cap", &self.response_cap)
            .finish()
    }
}

impl HttpHookBuilder {
    /// Networks the SSRF guard lets through although they are refused by default (see
    /// [`check_ip`]). Only trusted (admin) configuration may set them.
    pub fn allow_cidrs(mut self, allow: &[IpNet]) -> Self {
        self.allow = allow.to_vec();
        self
    }

    /// Signs deliveries with the secret a `${NAME}` spec refers to, read from the environment
    /// in [`build`](Self::build) (see [`Secret::from_env`]).
    pub fn secret_env(mut self, spec: impl Into<String>) -> Self {
        self.secret = Some(SecretSource::Env(spec.into()));
        self
    }

    /// Signs deliveries with `secret`.
    pub fn secret(mut self, secret: Secret) -> Self {
        self.secret = Some(SecretSource::Given(secret));
        self
    }

    /// Sends this header with every delivery (checked in [`build`](Self::build); its value
    /// is marked sensitive and never shown).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Declared in Claude Code's shape: the hook posts Claude Code's payload, matches and reads
    /// answers with Claude Code's rules (see [`crate::claude`]).
    pub fn claude_code(mut self, claude: ClaudeCode) -> Self {
        self.claude = Some(claude);
        self
    }

    /// Sets the cap on the response body, in bytes.
    pub fn response_cap(mut self, bytes: usize) -> Self {
        self.response_cap = bytes;
        self
    }

    /// Checks the URL and the secret and builds the hook with its own HTTP client (its
    /// connections are reused across deliveries).
    ///
    /// # Errors
    /// [`HttpError::RefusedUrl`], naming the URL (redacted to `scheme://host:port/…`) and the
    /// reason, for a URL that is not `http`/`https`, carries credentials (`user:pass@`), has a
    /// host name over 253 bytes, names `localhost` while the allow-list admits no loopback
    /// address, or whose IP literal the SSRF guard refuses; [`HttpError::SecretUnset`],
    /// naming the variable, or [`HttpError::SecretNotEnvReference`] for a secret spec that
    /// cannot be used; [`HttpError::Client`] when the TLS back end cannot be initialised.
    pub fn build(self) -> Result<HttpHook, HttpError> {
        let url = target::parse(&self.url, &self.allow)?;
        let secret = match self.secret {
            None => None,
            Some(SecretSource::Given(secret)) => Some(secret),
            Some(SecretSource::Env(spec)) => Some(Secret::from_env(&spec)?),
        };
        Ok(HttpHook {
            name: self.name,
            url,
            secret,
            headers: headers(&self.headers)?,
            client: client(self.allow.into())?,
            response_cap: self.response_cap,
            claude: self.claude,
        })
    }
}

/// The extra headers, checked: valid, not one tollgate sets itself, values sensitive.
fn headers(given: &[(String, String)]) -> Result<HeaderMap, HttpError> {
    let mut map = HeaderMap::new();
    for (name, value) in given {
        let refused = |reason: &str| HttpError::Header {
            name: name.clone(),
            reason: reason.to_owned(),
        };
        let header =
            HeaderName::try_from(name.as_str()).map_err(|_| refused("not a header name"))?;
        let reserved = [
            "content-type",
            "content-length",
            "host",
            "transfer-encoding",
        ];
        if reserved.contains(&header.as_str()) || header.as_str().starts_with("x-webhook-") {
            return Err(refused("tollgate sets it itself"));
        }
        let mut value =
            HeaderValue::try_from(value.as_str()).map_err(|_| refused("not a header value"))?;
        value.set_sensitive(true);
        map.append(header, value);
    }
    Ok(map)
}

/// The client: resolves through the guard, never follows redirects, never uses a proxy.
/// Its timeout is only a backstop for callers outside the dispatcher, which enforces the hook's
/// own, shorter deadline.
fn client(allow: Arc<[IpNet]>) -> Result<Client, HttpError> {
    Ok(Client::builder()
        .dns_resolver(Arc::new(GuardedResolver::new(allow)))
        .redirect(Policy::none())
        .no_proxy()
        .timeout(Duration::from_secs(HookTimeout::MAX_SECS))
        .user_agent(concat!("tollgate/", env!("CARGO_PKG_VERSION")))
        .build()?)
}

impl Hook for HttpHook {
    fn name(&self) -> &str {
        &self.name
    }

    fn kind(&self) -> HookKind {
        HookKind::Http
    }

    fn should_trigger(&self, ctx: &HookContext) -> bool {
        self.claude
            .as_ref()
            .is_none_or(|c| c.triggers(ctx.payload()))
    }

    /// POSTs the payload and reads the answer (see the [module docs](self)).
    ///
    /// # Cancel safety
    /// Cancel safe: dropping the future (the dispatcher does at the deadline) drops the request
    /// and closes its connection; nothing keeps running.
    fn execute(&self, ctx: HookContext) -> BoxFuture<'_, Result<Outcome, HookError>> {
        Box::pin(self.run(ctx))
    }
}
