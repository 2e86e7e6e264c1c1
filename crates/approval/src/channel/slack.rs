//! Slack: a message with Approve and Reject buttons in one channel, and the clicks that come
//! back as `block_actions` interactions.
//!
//! - [`Channel::send`] posts the message with `chat.postMessage` (bot token, Block Kit). Each
//!   button's `value` is compact JSON holding only the request id, the verdict and the nonce;
//!   the message id is `<channel>:<ts>`.
//! - [`Channel::inbound`] checks the `v0` signature (HMAC-SHA256 under the app's signing
//!   secret, timestamp within five minutes either way) before reading the form body's
//!   `payload`; a click on one of tollgate's buttons becomes an [`Inbound::Click`] whose
//!   event id is Slack's `trigger_id`.
//! - [`Channel::answer`] replies with an empty 200 at once, as Slack asks, and posts the new
//!   message to the click's `response_url` from a spawned task: the final message (who
//!   decided and when, no buttons), or a note only the clicker sees.
//! - [`Channel::update`] replaces the message with `chat.update` when the request ended
//!   another way (expired, cancelled, decided on the web page).
//!
//! Every text a request carries is escaped for Slack's `mrkdwn` (`&`, `<`, `>`), so arguments
//! such as `<!channel>` show as text and ping nobody.

mod api;
mod blocks;
mod config;
mod inbound;

use std::fmt;

use serde_json::{Value, json};

pub use blocks::{APPROVE_ACTION, ButtonValue, MAX_VALUE_CHARS, REJECT_ACTION, escape};
pub use config::{DEFAULT_BASE_URL, SlackApprovers, SlackConfig};
pub use inbound::WINDOW_SECONDS;

use super::{
    Answer, BoxFuture, Channel, ChannelError, Click, ClickOutcome, HeaderMap, Inbound, Refusal,
};
use crate::model::Request;
use api::Api;

/// The Slack channel of one app, posting to one Slack channel.
pub struct Slack {
    config: SlackConfig,
    api: Api,
}

impl fmt::Debug for Slack {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Slack")
            .field("config", &self.config)
            .finish()
    }
}

impl Slack {
    /// A channel for `config`, once it is checked.
    ///
    /// # Errors
    /// A message naming the key at fault: an empty token, secret or channel, a base URL that
    /// is not http(s), no approvers, or an approver id that is not a Slack user id.
    pub fn new(config: SlackConfig) -> Result<Self, String> {
        config.validate()?;
        let api = Api::new(&config.base_url, &config.bot_token)?;
        Ok(Self { config, api })
    }

    /// The configuration (the hub reads its `agents` and `tools`).
    pub fn config(&self) -> &SlackConfig {
        &self.config
    }

    async fn post(&self, request: &Request, nonce: &str) -> Result<String, ChannelError> {
        let message = blocks::pending(request, nonce).map_err(ChannelError::Rejected)?;
        let body = json!({
            "channel": self.config.channel,
            "text": message.text,
            "blocks": message.blocks,
            "unfurl_links": false,
            "unfurl_media": false,
        });
        let answer = self.api.call("chat.postMessage", &body).await?;
        let channel = answer
            .get("channel")
            .and_then(Value::as_str)
            .unwrap_or(&self.config.channel);
        let ts = answer.get("ts").and_then(Value::as_str).ok_or_else(|| {
            ChannelError::Rejected("chat.postMessage answered ok without a ts".to_owned())
        })?;
        Ok(format!("{channel}:{ts}"))
    }

    async fn replace(&self, request: &Request, message_id: &str) -> Result<(), ChannelError> {
        if !request.status.is_terminal() {
            return Err(ChannelError::Rejected(format!(
                "request {} is still pending: there is no final message",
                request.id
            )));
        }
        let (channel, ts) = message_id.split_once(':').ok_or_else(|| {
            ChannelError::Rejected(format!(
                "{message_id:?} is not a Slack message id (channel:ts)"
            ))
        })?;
        let message = blocks::final_message(request, &self.config.approvers);
        let body = json!({
            "channel": channel,
            "ts": ts,
            "text": message.text,
            "blocks": message.blocks,
        });
        self.api.call("chat.update", &body).await.map(|_| ())
    }

    /// What to post to the click's `response_url`, in order.
    fn replies(&self, outcome: &ClickOutcome) -> Vec<Value> {
        let approvers = &self.config.approvers;
        let replace = |request: &Request| {
            let message = blocks::final_message(request, approvers);
            json!({"replace_original": true, "text": message.text, "blocks": message.blocks})
        };
        match outcome {
            ClickOutcome::Decided(request) => vec![replace(request)],
            ClickOutcome::AlreadyDecided(request) => vec![
                replace(request),
                ephemeral(&blocks::already_decided(request, approvers)),
            ],
            ClickOutcome::NotApprover(_) => {
                vec![ephemeral("You are not an approver of this request.")]
            }
            ClickOutcome::Unknown => vec![ephemeral(
                "This button is no longer valid: tollgate does not know its request, or the message is out of date.",
            )],
            ClickOutcome::Failed => vec![ephemeral(
                "tollgate could not record your decision and nothing changed. Please try again.",
            )],
        }
    }

    /// Posts `replies` to `response_url` from a task of its own, one after the other; a
    /// failure is logged (without the URL, a credential) and ends the task.
    fn spawn_replies(&self, click: &Click, replies: Vec<Value>) {
        let Some(url) = click.response_url.clone() else {
            tracing::debug!(request = %click.request_id, "the Slack click has no response_url");
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::warn!(request = %click.request_id, "no runtime to update the Slack message on");
            return;
        };
        let api = self.api.clone();
        let request_id = click.request_id.clone();
        runtime.spawn(async move {
            for reply in replies {
                if let Err(error) = api.respond(&url, &reply).await {
                    tracing::warn!(request = %request_id, %error, "could not answer a Slack click through its response_url");
                    return;
                }
            }
        });
    }
}

/// A reply only the clicker sees; the message stays as it is.
fn ephemeral(text: &str) -> Value {
    json!({"response_type": "ephemeral", "replace_original": false, "text": text})
}

impl Channel for Slack {
    fn kind(&self) -> &'static str {
        "slack"
    }

    fn send<'a>(
        &'a self,
        request: &'a Request,
        nonce: &'a str,
    ) -> BoxFuture<'a, Result<String, ChannelError>> {
        Box::pin(self.post(request, nonce))
    }

    fn update<'a>(
        &'a self,
        request: &'a Request,
        message_id: &'a str,
    ) -> BoxFuture<'a, Result<(), ChannelError>> {
        Box::pin(self.replace(request, message_id))
    }

    fn inbound(&self, headers: &HeaderMap, body: &[u8], now_ms: i64) -> Result<Inbound, Refusal> {
        inbound::verify(headers, body, now_ms, &self.config.signing_secret)?;
        inbound::read(body)
    }

    fn approver(&self, operator: &str) -> Option<String> {
        self.config.approvers.name_of(operator).map(str::to_owned)
    }

    fn answer<'a>(&'a self, click: &'a Click, outcome: &'a ClickOutcome) -> BoxFuture<'a, Answer> {
        Box::pin(async move {
            self.spawn_replies(click, self.replies(outcome));
            Answer {
                status: 200,
                body: None,
            }
        })
    }
}
