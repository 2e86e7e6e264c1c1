//! The channel port: how a pending request reaches people outside tollgate (a Feishu/Lark
//! card, a Slack message) and how their click comes back.
//!
//! A [`Channel`] does three things, and nothing else:
//!
//! - [`Channel::send`] posts the message for a pending request and returns the platform's
//!   message id. The buttons carry only the request id, the verdict and a per-request random
//!   nonce, never the arguments.
//! - [`Channel::update`] replaces that message when the request ended without a click on this
//!   channel (expired, cancelled, decided on the web page or another channel).
//! - [`Channel::inbound`] checks one callback request (signature, timestamp window,
//!   decryption, verification token) and reads what it asks for; [`Channel::answer`] renders
//!   the reply to a click once the server has applied it to the store.
//!
//! The server's channel hub decides which requests go to which channel, stores the message id
//! and the nonce, retries failed sends and audits them; the server's callback routes
//! de-duplicate event ids, check the nonce, map the operator to an approver name and make the
//! one transition through [`crate::Store::decide`]. A channel holds no state of its own
//! beyond caches (an access token), so any number of server tasks can share one database.

use std::future::Future;
use std::pin::Pin;

pub use reqwest::header::HeaderMap;
use serde_json::Value;

use crate::model::Request;

/// A boxed, sendable future (the port's methods are called through `dyn Channel`).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One approval channel (Feishu/Lark, Slack).
///
/// # Cancel safety
/// `send` and `update` may be dropped at an await point (the server is stopping). A dropped
/// `send` may or may not have posted the message; the hub sends again on its next pass, with
/// the request id as the platform's de-duplication key where the platform has one (Feishu's
/// `uuid`).
pub trait Channel: Send + Sync {
    /// The channel's kind, as it appears in the audit's `channel` column and in the callback
    /// route: `feishu` or `slack`.
    fn kind(&self) -> &'static str;

    /// Posts the message for the pending `request`; `nonce` goes into every button's value.
    /// Returns the platform's message id (Feishu's `message_id`; Slack's `channel:ts`).
    fn send<'a>(
        &'a self,
        request: &'a Request,
        nonce: &'a str,
    ) -> BoxFuture<'a, Result<String, ChannelError>>;

    /// Replaces message `message_id` of `request`, which has reached a terminal status,
    /// with a final message saying how it ended (no buttons).
    fn update<'a>(
        &'a self,
        request: &'a Request,
        message_id: &'a str,
    ) -> BoxFuture<'a, Result<(), ChannelError>>;

    /// Checks and reads one callback request: `headers` and the raw `body` exactly as
    /// received, `now_ms` the server's clock (milliseconds since the Unix epoch) for the
    /// timestamp window. Pure: no I/O.
    ///
    /// # Errors
    /// [`Refusal`] for a request that fails a check (bad signature, stale timestamp, wrong
    /// verification token, bad ciphertext or padding, a body that is not the platform's
    /// shape); the server answers it with the refusal's 4xx status.
    fn inbound(&self, headers: &HeaderMap, body: &[u8], now_ms: i64) -> Result<Inbound, Refusal>;

    /// The approver name that platform user `operator` decides as, if they are one of this
    /// channel's approvers.
    fn approver(&self, operator: &str) -> Option<String>;

    /// The reply to `click` once the server has applied it. Called within the platform's
    /// reply window (Feishu: 3 s), so it must not wait on the network; a channel that
    /// updates its message out of band (Slack's `response_url`) spawns that work.
    fn answer<'a>(&'a self, click: &'a Click, outcome: &'a ClickOutcome) -> BoxFuture<'a, Answer>;
}

/// What a checked callback asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Inbound {
    /// Answer with this JSON body as is (Feishu's `url_verification` challenge).
    Reply(Value),
    /// A click on one of the buttons.
    Click(Click),
    /// A well-formed callback tollgate has nothing to do with: answered 200 with `{}`.
    Ignore,
}

/// A click on an Approve or Reject button, as the platform reported it.
#[derive(Debug, Clone, PartialEq)]
pub struct Click {
    /// The platform's id of this delivery, for de-duplication (Feishu's `header.event_id`;
    /// Slack's `trigger_id`).
    pub event_id: String,
    /// The request the button belongs to (from the button's value).
    pub request_id: String,
    /// `true` for Approve, `false` for Reject.
    pub approve: bool,
    /// The nonce from the button's value.
    pub nonce: String,
    /// Who clicked: the platform's user id (Feishu `open_id`, Slack `user.id`).
    pub operator: String,
    /// Other ids of the same person worth keeping in the audit (Feishu `union_id`).
    pub operator_aliases: Vec<String>,
    /// The message the click came from, when the platform says.
    pub message_id: Option<String>,
    /// Where a reply may be posted later (Slack's `response_url`).
    pub response_url: Option<String>,
}

/// What became of a click, for [`Channel::answer`].
#[derive(Debug, Clone, PartialEq)]
pub enum ClickOutcome {
    /// The click decided the request (the row after the transition).
    Decided(Request),
    /// The request was already decided (by this click delivered before, or by anyone else):
    /// the row as it stands.
    AlreadyDecided(Request),
    /// The operator is not an approver of this request (the request stays pending).
    NotApprover(Request),
    /// The button's nonce is not the one sent for this request, or the request is unknown.
    Unknown,
    /// The store failed; the request is unchanged.
    Failed,
}

/// The HTTP reply to a callback.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The status code (200 for anything the platform should show to the operator).
    pub status: u16,
    /// The JSON body (Feishu: a toast and a replacement card); `None` for an empty body.
    pub body: Option<Value>,
}

/// A callback the channel refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Refusal {
    /// The 4xx status to answer with.
    pub status: u16,
    /// Why, for the log and the reply body; never quotes a secret.
    pub message: String,
}

impl Refusal {
    /// A refusal with status 400 (malformed).
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self {
            status: 400,
            message: message.into(),
        }
    }

    /// A refusal with status 401 (a signature, timestamp or token check failed).
    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self {
            status: 401,
            message: message.into(),
        }
    }
}

/// A send or update that failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChannelError {
    /// The platform could not be reached, or answered 5xx / 429: worth retrying.
    #[error("{0}")]
    Transient(String),
    /// The platform refused the request (bad credentials, unknown receiver, bad card): a
    /// retry will not help until the configuration changes.
    #[error("{0}")]
    Rejected(String),
}

impl ChannelError {
    /// Whether a retry may succeed.
    pub fn is_transient(&self) -> bool {
        matches!(self, Self::Transient(_))
    }
}

mod approvers;
mod callback;
pub mod feishu;
mod hub;
pub mod slack;

pub use approvers::PlatformApprovers;
pub use callback::receive;
pub use hub::{Cursor, Entry, Hub, Route, Slot, TICK};
