//! Webhook signatures: the `X-Webhook-Signature` header, how tollgate makes it and how a
//! receiver checks it.
//!
//! Format: `t=<unix seconds>,v1=<hex HMAC-SHA256>`, where the MAC ([RFC 2104], SHA-256) is
//! keyed with the secret's bytes and computed over the ASCII timestamp, a `.`, and the raw
//! request body, byte for byte as received: `"<t>.<raw body>"`. The same scheme as [Stripe's
//! webhook signatures] with one signature.
//!
//! [RFC 2104]: https://www.rfc-editor.org/rfc/rfc2104
//! [Stripe's webhook signatures]: https://docs.stripe.com/webhooks#verify-manually

use std::fmt;
use std::io::Write as _;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::error::HttpError;

type HmacSha256 = Hmac<Sha256>;

/// The header carrying the signature.
pub const SIGNATURE_HEADER: &str = "X-Webhook-Signature";
/// The header carrying the delivery's unique id (a random UUID, new for every delivery).
pub const ID_HEADER: &str = "X-Webhook-Id";
/// The header carrying the event's canonical name (`pre_tool_use`, `custom:deploy`, …).
pub const EVENT_HEADER: &str = "X-Webhook-Event";
/// How far a signature's timestamp may be from the receiver's clock, either way: 300 s.
pub const DEFAULT_TOLERANCE: Duration = Duration::from_secs(300);

/// Length of the hex `v1` value: a SHA-256 MAC is 32 bytes.
const V1_HEX_LEN: usize = 64;
/// A `t` longer than this many digits cannot be a `u64`.
const T_MAX_DIGITS: usize = 20;

/// A webhook signing key. Never empty; its `Debug` output does not show it.
#[derive(Clone)]
pub struct Secret {
    mac: HmacSha256,
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(..)")
    }
}

impl Secret {
    /// A secret from raw key bytes (for embedders that hold the key themselves).
    ///
    /// # Errors
    /// [`HttpError::EmptySecret`] for an empty or whitespace-only key: tollgate never signs
    /// with an empty key.
    pub fn new(key: impl AsRef<[u8]>) -> Result<Self, HttpError> {
        keyed(key.as_ref())
            .map(|mac| Self { mac })
            .ok_or(HttpError::EmptySecret)
    }

    /// Resolves a secret spec from the process environment. The spec must be exactly one
    /// reference, `${NAME}` (`NAME` is ASCII letters, digits and `_`, not starting with a
    /// digit); the key is the variable's value as UTF-8 bytes, used as is (not trimmed, not
    /// decoded from hex or base64). A value that is only whitespace counts as empty.
    ///
    /// Literal secrets are refused: a secret written into a hook file ends up in repositories
    /// and logs (secrets come from `${ENV}` only).
    ///
    /// # Errors
    /// [`HttpError::SecretNotEnvReference`] when the spec is not one reference;
    /// [`HttpError::SecretUnset`], naming the variable, when it is unset, empty,
    /// whitespace-only or not UTF-8.
    pub fn from_env(spec: &str) -> Result<Self, HttpError> {
        Self::from_spec(spec, |name| std::env::var(name).ok())
    }

    /// [`Secret::from_env`] with the variables looked up by `lookup` instead of the process
    /// environment (for tests, or an environment captured at startup).
    ///
    /// # Errors
    /// As for [`Secret::from_env`].
    pub fn from_spec(
        spec: &str,
        lookup: impl FnOnce(&str) -> Option<String>,
    ) -> Result<Self, HttpError> {
        let name = env_reference(spec).ok_or(HttpError::SecretNotEnvReference)?;
        match lookup(name) {
            Some(value) if !value.trim().is_empty() => Self::new(value),
            _ => Err(HttpError::SecretUnset(name.to_owned())),
        }
    }

    /// The `X-Webhook-Signature` value for `body` sent at `timestamp` (unix seconds):
    /// `t=<timestamp>,v1=<64 lowercase hex digits>`.
    pub fn sign(&self, timestamp: u64, body: &[u8]) -> String {
        self.signature(timestamp, body).as_str().to_owned()
    }

    /// [`Secret::sign`]'s text, formatted on the stack. The key was set once, when the secret
    /// was made: each signature clones the keyed MAC instead of keying it again.
    pub(super) fn signature(&self, timestamp: u64, body: &[u8]) -> SignatureText {
        let mut text = SignatureText {
            bytes: [0; SIGNATURE_MAX_LEN],
            len: 0,
        };
        let mut rest = &mut text.bytes[..];
        // At most 26 bytes: always fits, so the write cannot fail.
        let _ = write!(rest, "t={timestamp},v1=");
        let prefix = SIGNATURE_MAX_LEN - rest.len();
        let mut mac = self.mac.clone();
        feed_text(&mut mac, &text.bytes[2..prefix - 4], body);
        let hex = &mut text.bytes[prefix..prefix + V1_HEX_LEN];
        if hex::encode_to_slice(mac.finalize().into_bytes(), hex).is_ok() {
            text.len = prefix + V1_HEX_LEN;
        }
        text
    }
}

/// Longest signature header: `t=` (2), at most 20 digits, `,v1=` (4), 64 hex digits.
const SIGNATURE_MAX_LEN: usize = 2 + T_MAX_DIGITS + 4 + V1_HEX_LEN;

/// A signature header's text, on the stack.
pub(super) struct SignatureText {
    bytes: [u8; SIGNATURE_MAX_LEN],
    len: usize,
}

impl SignatureText {
    /// The text (ASCII).
    pub(super) fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }

    fn as_str(&self) -> &str {
        std::str::from_utf8(self.as_bytes()).unwrap_or_default()
    }
}

/// The variable name of a `${NAME}` spec.
fn env_reference(spec: &str) -> Option<&str> {
    let name = spec.trim().strip_prefix("${")?.strip_suffix('}')?;
    let mut chars = name.chars();
    let first = chars.next()?;
    let valid = (first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    valid.then_some(name)
}

/// The MAC keyed with `key`; `None` for an empty or whitespace-only key (`"   "`, `"\n"`: a
/// blank variable is a mistake, not a secret).
fn keyed(key: &[u8]) -> Option<HmacSha256> {
    if key.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    HmacSha256::new_from_slice(key).ok()
}

/// `"<t>.<body>"` into the MAC, `t` as text.
fn feed_text(mac: &mut HmacSha256, t: &[u8], body: &[u8]) {
    mac.update(t);
    mac.update(b".");
    mac.update(body);
}

/// Why a webhook signature was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SignatureError {
    /// The receiver's secret is empty or only whitespace.
    #[error("the secret is empty")]
    EmptySecret,
    /// The header is missing (pass `""`) or empty.
    #[error("the signature header is missing or empty")]
    MissingHeader,
    /// A comma-separated field is not `key=value`, or its key is neither `t` nor `v1`.
    #[error("malformed signature header: unexpected field `{0}`")]
    UnexpectedField(String),
    /// `t` or `v1` appears more than once.
    #[error("malformed signature header: `{0}` appears more than once")]
    DuplicateField(&'static str),
    /// `t` or `v1` is missing.
    #[error("malformed signature header: `{0}` is missing")]
    MissingField(&'static str),
    /// `t` is not unix seconds (ASCII digits only).
    #[error("malformed signature header: `t` is not unix seconds")]
    BadTimestamp,
    /// `v1` is empty, not hex, or not 64 hex digits (32 bytes).
    #[error("malformed signature header: `v1` is not 64 hex digits")]
    BadSignature,
    /// The timestamp is further from the receiver's clock than the tolerance.
    #[error("signature timestamp is {skew_secs} s away from now, outside the tolerance")]
    OutsideTolerance {
        /// How far `t` is from now, in seconds, either way.
        skew_secs: u64,
    },
    /// The MAC does not match: wrong secret, or the body or timestamp was changed.
    #[error("signature does not match")]
    Mismatch,
}

/// Checks an `X-Webhook-Signature` header, for receivers of tollgate's http hooks.
///
/// `secret` is the shared key's bytes (the value of the variable the hook's `${NAME}` refers
/// to); `header` the header's value; `raw_body` the request body exactly as received, before
/// any JSON parsing (re-serialized JSON will not match); `now` the receiver's clock;
/// `tolerance` how far the signed timestamp may be from `now`, either way
/// ([`DEFAULT_TOLERANCE`] is 300 s; whole seconds count).
///
/// The header must be exactly two comma-separated fields, `t=<digits>` and `v1=<64 hex
/// digits>`, in either order, with no spaces; duplicate, missing, empty or unknown fields are
/// rejected. The MAC is computed over the `t` digits exactly as they appear in the header
/// (leading zeros included), a `.` and the body, and compared in constant time. A signature binds the timestamp and body,
/// not the `X-Webhook-Id`: to reject a replay within the tolerance, remember the `v1` values
/// seen in the last `2 × tolerance`.
///
/// # Errors
/// A [`SignatureError`] saying why the request must be rejected.
///
/// # Example
///
/// ```
/// use std::time::{Duration, SystemTime};
/// use tollgate_handlers::http::{DEFAULT_TOLERANCE, Secret, SignatureError, verify_signature};
///
/// let key = b"from-the-HOOK_SECRET-variable";
/// let body = br#"{"event":"session_end","session_id":"s1"}"#;
/// let sent_at = SystemTime::now();
/// let t = sent_at.duration_since(SystemTime::UNIX_EPOCH).unwrap().as_secs();
/// let header = Secret::new(key).unwrap().sign(t, body); // what tollgate sends
///
/// assert_eq!(verify_signature(key, &header, body, sent_at, DEFAULT_TOLERANCE), Ok(()));
/// let tampered = br#"{"event":"session_end","session_id":"s2"}"#;
/// assert_eq!(
///     verify_signature(key, &header, tampered, sent_at, DEFAULT_TOLERANCE),
///     Err(SignatureError::Mismatch)
/// );
/// let later = sent_at + Duration::from_secs(301);
/// assert!(verify_signature(key, &header, body, later, DEFAULT_TOLERANCE).is_err());
/// ```
///
/// In an [axum](https://docs.rs/axum) receiver, take the body as `Bytes` so the raw bytes are
/// what gets verified (a complete one: `crates/handlers/examples/webhook_receiver.rs`):
///
/// ```no_run
/// use axum::body::Bytes;
/// use axum::http::{HeaderMap, StatusCode};
/// use std::time::SystemTime;
/// use tollgate_handlers::http::{DEFAULT_TOLERANCE, SIGNATURE_HEADER, verify_signature};
///
/// async fn receive(headers: HeaderMap, body: Bytes) -> StatusCode {
///     let key = std::env::var("HOOK_SECRET").unwrap_or_default();
///     let header = headers.get(SIGNATURE_HEADER).and_then(|v| v.to_str().ok()).unwrap_or("");
///     match verify_signature(key.as_bytes(), header, &body, SystemTime::now(), DEFAULT_TOLERANCE) {
///         Ok(()) => StatusCode::NO_CONTENT, // an empty 2xx: no opinion
///         Err(_) => StatusCode::UNAUTHORIZED,
///     }
/// }
/// ```
pub fn verify_signature(
    secret: &[u8],
    header: &str,
    raw_body: &[u8],
    now: SystemTime,
    tolerance: Duration,
) -> Result<(), SignatureError> {
    let mut mac = keyed(secret).ok_or(SignatureError::EmptySecret)?;
    let (t, signature) = parse_header(header)?;
    let timestamp = parse_timestamp(t)?;
    let now = now.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
    let skew_secs = now.abs_diff(timestamp);
    if skew_secs > tolerance.as_secs() {
        return Err(SignatureError::OutsideTolerance { skew_secs });
    }
    // Over the `t` text exactly as the header carries it, as the recipe says: `t=007` is
    // checked against a MAC of "007.<body>", never of a re-rendered "7.<body>".
    feed_text(&mut mac, t.as_bytes(), raw_body);
    mac.verify_slice(&signature)
        .map_err(|_| SignatureError::Mismatch)
}

/// The `t` text (checked to be digits) and the decoded `v1`.
fn parse_header(header: &str) -> Result<(&str, Vec<u8>), SignatureError> {
    if header.is_empty() {
        return Err(SignatureError::MissingHeader);
    }
    let (mut t, mut v1) = (None, None);
    for field in header.split(',') {
        match field.split_once('=') {
            Some(("t", value)) => set_once(&mut t, value, "t")?,
            Some(("v1", value)) => set_once(&mut v1, value, "v1")?,
            _ => return Err(SignatureError::UnexpectedField(field.to_owned())),
        }
    }
    let t = t.ok_or(SignatureError::MissingField("t"))?;
    let v1 = v1.ok_or(SignatureError::MissingField("v1"))?;
    parse_timestamp(t)?;
    Ok((t, parse_v1(v1)?))
}

fn set_once<'a>(
    slot: &mut Option<&'a str>,
    value: &'a str,
    key: &'static str,
) -> Result<(), SignatureError> {
    match slot.replace(value) {
        Some(_) => Err(SignatureError::DuplicateField(key)),
        None => Ok(()),
    }
}

fn parse_timestamp(t: &str) -> Result<u64, SignatureError> {
    let digits = !t.is_empty() && t.len() <= T_MAX_DIGITS && t.bytes().all(|b| b.is_ascii_digit());
    digits
        .then(|| t.parse().ok())
        .flatten()
        .ok_or(SignatureError::BadTimestamp)
}

fn parse_v1(v1: &str) -> Result<Vec<u8>, SignatureError> {
    if v1.len() != V1_HEX_LEN {
        return Err(SignatureError::BadSignature);
    }
    hex::decode(v1).map_err(|_| SignatureError::BadSignature)
}

#[cfg(test)]
#[path = "signature/tests.rs"]
mod tests;
