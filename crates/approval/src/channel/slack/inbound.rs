//! One interaction request from Slack: the `v0` signature check, then the form body's
//! `payload`.
//!
//! Slack signs `v0:<X-Slack-Request-Timestamp>:<raw body>` with HMAC-SHA256 under the app's
//! signing secret and sends `X-Slack-Signature: v0=<hex>`. The timestamp must lie within five
//! minutes of the server's clock, either way, so a captured request cannot be replayed later.

use hmac::{Hmac, Mac};
use serde::Deserialize;
use sha2::Sha256;

use super::blocks::{APPROVE_ACTION, ButtonValue, REJECT_ACTION};
use crate::channel::{Click, HeaderMap, Inbound, Refusal};

/// How far the request's timestamp may be from the server's clock, in seconds.
pub const WINDOW_SECONDS: i64 = 5 * 60;

const TIMESTAMP_HEADER: &str = "x-slack-request-timestamp";
const SIGNATURE_HEADER: &str = "x-slack-signature";

/// Checks the timestamp window and the signature of `body`.
///
/// # Errors
/// 401 for a missing or unreadable header, a timestamp outside the window, or a signature
/// that does not match; the message never quotes the secret or the expected signature.
pub fn verify(headers: &HeaderMap, body: &[u8], now_ms: i64, secret: &str) -> Result<(), Refusal> {
    let timestamp = header(headers, TIMESTAMP_HEADER)?;
    let seconds: i64 = timestamp.parse().map_err(|_| {
        Refusal::unauthorized("X-Slack-Request-Timestamp is not a Unix time in seconds")
    })?;
    let off = (i128::from(now_ms.div_euclid(1000)) - i128::from(seconds)).abs();
    if off > i128::from(WINDOW_SECONDS) {
        return Err(Refusal::unauthorized(format!(
            "X-Slack-Request-Timestamp is {off} s off the server's clock (at most {WINDOW_SECONDS} s)"
        )));
    }
    let signature = header(headers, SIGNATURE_HEADER)?;
    let hex_digest = signature
        .strip_prefix("v0=")
        .ok_or_else(|| Refusal::unauthorized("X-Slack-Signature is not a v0 signature"))?;
    let digest = hex::decode(hex_digest)
        .map_err(|_| Refusal::unauthorized("X-Slack-Signature is not hex"))?;
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes())
        .map_err(|_| Refusal::unauthorized("the signing secret cannot key HMAC-SHA256"))?;
    mac.update(b"v0:");
    mac.update(timestamp.as_bytes());
    mac.update(b":");
    mac.update(body);
    // `verify_slice` compares in constant time.
    mac.verify_slice(&digest)
        .map_err(|_| Refusal::unauthorized("X-Slack-Signature does not match the body"))
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Result<&'a str, Refusal> {
    let value = headers
        .get(name)
        .ok_or_else(|| Refusal::unauthorized(format!("the request has no {name} header")))?;
    value
        .to_str()
        .map_err(|_| Refusal::unauthorized(format!("the {name} header is not visible ASCII")))
}

/// Reads a checked form body: a click on one of tollgate's buttons, or
/// [`Inbound::Ignore`] for any other interaction.
///
/// # Errors
/// 400 when the body has no single `payload` field, the payload is not JSON of Slack's
/// shape, or tollgate's button carries a value tollgate did not write.
pub fn read(body: &[u8]) -> Result<Inbound, Refusal> {
    let mut payloads = url::form_urlencoded::parse(body).filter(|(key, _)| key == "payload");
    let payload = payloads
        .next()
        .ok_or_else(|| Refusal::bad_request("the form body has no payload field"))?
        .1;
    if payloads.next().is_some() {
        return Err(Refusal::bad_request(
            "the form body has more than one payload field",
        ));
    }
    let payload: serde_json::Value = serde_json::from_str(&payload)
        .map_err(|e| Refusal::bad_request(format!("the payload is not JSON: {e}")))?;
    let kind = payload
        .get("type")
        .and_then(serde_json::Value::as_str)
        .ok_or_else(|| Refusal::bad_request("the payload has no type"))?;
    if kind != "block_actions" {
        return Ok(Inbound::Ignore);
    }
    let actions: BlockActions = serde_json::from_value(payload).map_err(|e| {
        Refusal::bad_request(format!("the block_actions payload is malformed: {e}"))
    })?;
    actions.click()
}

/// The parts of a `block_actions` payload tollgate reads (Slack sends many more).
#[derive(Debug, Deserialize)]
struct BlockActions {
    user: User,
    #[serde(default)]
    trigger_id: Option<String>,
    #[serde(default)]
    response_url: Option<String>,
    #[serde(default)]
    container: Option<Container>,
    #[serde(default)]
    channel: Option<Channel>,
    #[serde(default)]
    message: Option<MessageRef>,
    actions: Vec<Action>,
}

#[derive(Debug, Deserialize)]
struct User {
    id: String,
}

#[derive(Debug, Deserialize)]
struct Container {
    #[serde(default)]
    message_ts: Option<String>,
    #[serde(default)]
    channel_id: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Channel {
    id: String,
}

#[derive(Debug, Deserialize)]
struct MessageRef {
    #[serde(default)]
    ts: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Action {
    action_id: String,
    #[serde(default)]
    value: Option<String>,
    #[serde(default)]
    action_ts: Option<String>,
}

impl BlockActions {
    fn click(self) -> Result<Inbound, Refusal> {
        let Some(action) = self
            .actions
            .iter()
            .find(|a| a.action_id == APPROVE_ACTION || a.action_id == REJECT_ACTION)
        else {
            return Ok(Inbound::Ignore);
        };
        let value = action
            .value
            .as_deref()
            .and_then(ButtonValue::decode)
            .ok_or_else(|| Refusal::bad_request("the button's value is not one tollgate wrote"))?;
        let approve = value.decision == "approve";
        if approve != (action.action_id == APPROVE_ACTION) {
            return Err(Refusal::bad_request(
                "the button's value does not match its action",
            ));
        }
        if self.user.id.is_empty() {
            return Err(Refusal::bad_request("the payload's user has no id"));
        }
        Ok(Inbound::Click(Click {
            event_id: self.event_id(action)?,
            request_id: value.request,
            approve,
            nonce: value.nonce,
            operator: self.user.id.clone(),
            operator_aliases: Vec::new(),
            message_id: self.message_id(),
            response_url: self.response_url.clone().filter(|url| !url.is_empty()),
        }))
    }

    /// The delivery's id: the `trigger_id`, else the message and action timestamps.
    fn event_id(&self, action: &Action) -> Result<String, Refusal> {
        if let Some(trigger) = self.trigger_id.as_deref().filter(|t| !t.is_empty()) {
            return Ok(trigger.to_owned());
        }
        match (self.message_ts(), action.action_ts.as_deref()) {
            (Some(message), Some(action)) => Ok(format!("{message}:{action}")),
            _ => Err(Refusal::bad_request(
                "the payload has neither a trigger_id nor message and action timestamps",
            )),
        }
    }

    fn message_ts(&self) -> Option<&str> {
        let from_container = self
            .container
            .as_ref()
            .and_then(|c| c.message_ts.as_deref());
        let from_message = self.message.as_ref().and_then(|m| m.ts.as_deref());
        from_container.or(from_message).filter(|ts| !ts.is_empty())
    }

    /// `<channel>:<ts>`, as [`super::Slack`]'s `send` returns it.
    fn message_id(&self) -> Option<String> {
        let channel = self
            .channel
            .as_ref()
            .map(|c| c.id.as_str())
            .or_else(|| {
                self.container
                    .as_ref()
                    .and_then(|c| c.channel_id.as_deref())
            })
            .filter(|id| !id.is_empty())?;
        Some(format!("{channel}:{}", self.message_ts()?))
    }
}
