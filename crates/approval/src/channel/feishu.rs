//! Feishu / Lark interactive cards: the [`Channel`] of a Feishu (or Lark) custom app.
//!
//! - **Send.** The app's bot posts a card (JSON 2.0) to one user or chat through
//!   `POST /open-apis/im/v1/messages`, with the request id as the platform's `uuid` so a
//!   re-send after a crash does not post a second card. The card shows the tool, the agent,
//!   the arguments (canonical JSON, cut to 600 characters, as plain
//!   text), the reasons and the expiry; its Approve and Reject buttons carry only
//!   `{request_id, decision, nonce}`.
//! - **Click.** The platform posts a `card.action.trigger` callback to the server.
//!   [`Channel::inbound`] checks it (signature and 5-minute timestamp window, decryption, verification token) and reads the click; the server applies
//!   it; [`Channel::answer`] replies within the platform's 3 s with a toast and, once the
//!   request is decided, a replacement card without buttons (`Approved by <at id=…></at> at
//!   …`).
//! - **Update.** A request that ends otherwise (expired, cancelled, decided elsewhere) gets
//!   its card replaced through `PATCH /open-apis/im/v1/messages/{message_id}`.
//!
//! The `tenant_access_token` is fetched with the app id and secret, cached until five
//! minutes before it expires, and fetched again (once) when the platform
//! refuses it.

mod callback;
mod card;
mod client;
mod config;
mod crypto;

use std::fmt;

use serde_json::json;

use self::card::Cards;
use self::client::Api;
pub use self::config::{FEISHU_BASE_URL, FeishuApprovers, FeishuConfig, ReceiveIdType};
use crate::channel::{
    Answer, BoxFuture, Channel, ChannelError, Click, ClickOutcome, HeaderMap, Inbound, Refusal,
};
use crate::model::Request;

/// A Feishu/Lark approval channel: one app, one receiver, its approvers.
pub struct Feishu {
    config: FeishuConfig,
    api: Api,
}

impl fmt::Debug for Feishu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The config's Debug redacts the secrets.
        f.debug_struct("Feishu")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Feishu {
    /// Checks `config` and builds the channel. No network I/O: the first token is fetched
    /// by the first send.
    ///
    /// # Errors
    /// A message naming the bad key (see [`FeishuConfig`]), or an HTTP client that cannot be
    /// built.
    pub fn new(config: FeishuConfig) -> Result<Self, String> {
        let base = config.validate()?;
        let api = Api::new(base, &config.app_id, &config.app_secret)?;
        Ok(Self { config, api })
    }

    /// The configuration (its `Debug` redacts the secrets).
    pub fn config(&self) -> &FeishuConfig {
        &self.config
    }

    fn cards(&self) -> Cards<'_> {
        Cards {
            approvers: &self.config.approvers,
        }
    }

    async fn post_card(&self, request: &Request, nonce: &str) -> Result<String, ChannelError> {
        let card = self.cards().pending(request, nonce);
        let body = json!({
            "receive_id": self.config.receive_id,
            "msg_type": "interactive",
            "content": card.to_string(),
            "uuid": request.id,
        });
        let kind = self.config.receive_id_type.as_str();
        self.api.create_message(kind, &body).await
    }

    async fn patch_card(&self, request: &Request, message_id: &str) -> Result<(), ChannelError> {
        let card = self.cards().last(request, None);
        let body = json!({ "content": card.to_string() });
        self.api.update_message(message_id, &body).await
    }
}

impl Channel for Feishu {
    fn kind(&self) -> &'static str {
        "feishu"
    }

    fn send<'a>(
        &'a self,
        request: &'a Request,
        nonce: &'a str,
    ) -> BoxFuture<'a, Result<String, ChannelError>> {
        Box::pin(self.post_card(request, nonce))
    }

    fn update<'a>(
        &'a self,
        request: &'a Request,
        message_id: &'a str,
    ) -> BoxFuture<'a, Result<(), ChannelError>> {
        Box::pin(self.patch_card(request, message_id))
    }

    fn inbound(&self, headers: &HeaderMap, body: &[u8], now_ms: i64) -> Result<Inbound, Refusal> {
        let keys = callback::Keys {
            verification_token: &self.config.verification_token,
            encrypt_key: self.config.encrypt_key.as_deref(),
        };
        callback::read(&keys, headers, body, now_ms)
    }

    fn approver(&self, operator: &str) -> Option<String> {
        self.config.approvers.name_of(operator).map(str::to_owned)
    }

    fn answer<'a>(&'a self, click: &'a Click, outcome: &'a ClickOutcome) -> BoxFuture<'a, Answer> {
        let answer = self.cards().answer(click, outcome);
        Box::pin(std::future::ready(answer))
    }
}
