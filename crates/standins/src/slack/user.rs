//! A Slack user pressing a button of a posted message: the `block_actions` interaction Slack
//! sends to the app's request URL, form-encoded and signed.
//!
//! Wire format, from Slack's reference:
//! <https://docs.slack.dev/reference/interaction-payloads/block_actions-payload> (the
//! payload, sent as the `payload` field of an `application/x-www-form-urlencoded` body) and
//! <https://docs.slack.dev/authentication/verifying-requests-from-slack> (the `v0`
//! signature: `X-Slack-Signature: v0=<hex HMAC-SHA256 of "v0:<timestamp>:<body>">` with
//! the signing secret as key, and `X-Slack-Request-Timestamp` in Unix seconds).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;

use super::PostedMessage;

const TEAM_ID: &str = "T0STANDIN";
const APP_ID: &str = "A0STANDIN";

/// A member of the stand-in's workspace who clicks buttons.
#[derive(Debug)]
pub struct SlackUser {
    id: String,
    signing_secret: String,
    clicks: AtomicU64,
}

impl SlackUser {
    /// User `id` (`U0123ABCD`) of a workspace whose app signs with `signing_secret`.
    pub fn new(id: &str, signing_secret: &str) -> Self {
        Self {
            id: id.to_owned(),
            signing_secret: signing_secret.to_owned(),
            clicks: AtomicU64::new(0),
        }
    }

    /// The user's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The `block_actions` payload of pressing the button `action_id` in `message`, with
    /// `response_url` as the URL the app may answer through; `None` when the message has no
    /// such button. Each press gets a new `trigger_id`.
    pub fn press(
        &self,
        message: &PostedMessage,
        action_id: &str,
        response_url: &str,
    ) -> Option<Value> {
        let (block_id, button) = find_button(&message.body, action_id)?;
        let click = self.clicks.fetch_add(1, Ordering::SeqCst) + 1;
        let now = now_seconds();
        let action_ts = format!("{now}.{click:06}");
        let mut action = json!({
            "type": "button",
            "action_id": action_id,
            "block_id": block_id,
            "text": button.get("text").cloned().unwrap_or(Value::Null),
            "action_ts": action_ts,
        });
        for key in ["value", "style"] {
            if let Some(value) = button.get(key) {
                action[key] = value.clone();
            }
        }
        Some(json!({
            "type": "block_actions",
            "user": {"id": self.id, "username": self.id.to_lowercase(), "name": self.id.to_lowercase(), "team_id": TEAM_ID},
            "api_app_id": APP_ID,
            "token": "deprecated-verification-token",
            "container": {"type": "message", "message_ts": message.ts, "channel_id": message.channel, "is_ephemeral": false},
            "trigger_id": trigger_id(now, click),
            "team": {"id": TEAM_ID, "domain": "standin"},
            "enterprise": null,
            "is_enterprise_install": false,
            "channel": {"id": message.channel, "name": "approvals"},
            "message": {
                "type": "message", "subtype": "bot_message", "bot_id": "B0STANDIN",
                "ts": message.ts,
                "text": message.body.get("text").cloned().unwrap_or(Value::Null),
                "blocks": message.body.get("blocks").cloned().unwrap_or(json!([])),
            },
            "state": {"values": {}},
            "response_url": response_url,
            "actions": [action],
        }))
    }

    /// `payload` form-encoded and signed at `timestamp` (Unix seconds).
    pub fn sign(&self, payload: &Value, timestamp: i64) -> Signed {
        let body = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("payload", &payload.to_string())
            .finish();
        self.sign_body(body, timestamp)
    }

    /// [`SlackUser::sign`] at the current time.
    pub fn sign_now(&self, payload: &Value) -> Signed {
        self.sign(payload, now_seconds())
    }

    /// Any `body` signed at `timestamp`, exactly as given.
    pub fn sign_body(&self, body: String, timestamp: i64) -> Signed {
        let timestamp = timestamp.to_string();
        let signature = v0_signature(&self.signing_secret, &timestamp, body.as_bytes());
        Signed {
            body,
            timestamp,
            signature,
        }
    }
}

/// A signed interaction request, ready to post.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Signed {
    /// The form body (`payload=…`).
    pub body: String,
    /// `X-Slack-Request-Timestamp`.
    pub timestamp: String,
    /// `X-Slack-Signature` (`v0=…`).
    pub signature: String,
}

impl Signed {
    /// The same request with one hex digit of the signature changed.
    pub fn with_bad_signature(mut self) -> Self {
        let flipped = match self.signature.pop() {
            Some('0') => '1',
            _ => '0',
        };
        self.signature.push(flipped);
        self
    }

    /// The headers Slack sends with it (names in lower case).
    pub fn headers(&self) -> Vec<(&'static str, String)> {
        vec![
            (
                "content-type",
                "application/x-www-form-urlencoded".to_owned(),
            ),
            ("x-slack-request-timestamp", self.timestamp.clone()),
            ("x-slack-signature", self.signature.clone()),
        ]
    }

    /// Posts it to `url` and returns the status and body of the answer.
    ///
    /// # Errors
    /// When `url` cannot be reached.
    pub async fn post(&self, url: &str) -> Result<(u16, String), reqwest::Error> {
        let mut request = reqwest::Client::new().post(url).body(self.body.clone());
        for (name, value) in self.headers() {
            request = request.header(name, value);
        }
        let response = request.send().await?;
        let status = response.status().as_u16();
        Ok((status, response.text().await?))
    }
}

/// `v0=` and the hex HMAC-SHA256 of `v0:<timestamp>:<body>` under `secret`.
fn v0_signature(secret: &str, timestamp: &str, body: &[u8]) -> String {
    let mut mac = match Hmac::<Sha256>::new_from_slice(secret.as_bytes()) {
        Ok(mac) => mac,
        // HMAC takes keys of any length.
        Err(_) => return String::from("v0="),
    };
    mac.update(format!("v0:{timestamp}:").as_bytes());
    mac.update(body);
    format!("v0={}", hex::encode(mac.finalize().into_bytes()))
}

/// The block id and the button with `action_id` among the message's blocks.
fn find_button<'a>(body: &'a Value, action_id: &str) -> Option<(Value, &'a Value)> {
    let blocks = body.get("blocks")?.as_array()?;
    blocks.iter().find_map(|block| {
        let elements = block.get("elements")?.as_array()?;
        let button = elements
            .iter()
            .find(|e| e.get("action_id").and_then(Value::as_str) == Some(action_id))?;
        Some((
            block.get("block_id").cloned().unwrap_or(Value::Null),
            button,
        ))
    })
}

/// A trigger id in Slack's shape (`<digits>.<digits>.<hex>`), new for every press.
fn trigger_id(now: i64, click: u64) -> String {
    let mixed = u128::from(click).wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c834);
    format!("{now}{click:04}.424242424242.{mixed:032x}")
}

fn now_seconds() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}
