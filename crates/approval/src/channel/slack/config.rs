//! The Slack channel's configuration: the app's credentials, the channel it posts to and who
//! may decide from Slack.

use std::fmt;

use serde::Deserialize;

/// Slack's Web API.
pub const DEFAULT_BASE_URL: &str = "https://slack.com/api";

/// The `slack` section of the server's configuration.
///
/// Secrets (`bot_token`, `signing_secret`) arrive already expanded from `${ENV}`; `Debug`
/// shows them as `<redacted>`.
#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlackConfig {
    /// The Web API's base URL without a trailing slash (`https://slack.com/api`; a local
    /// stand-in in tests).
    #[serde(default = "default_base_url")]
    pub base_url: String,
    /// The app's bot token (`xoxb-…`), sent as `Authorization: Bearer`.
    pub bot_token: String,
    /// The app's signing secret, the HMAC key of the `v0` signatures on interactions.
    pub signing_secret: String,
    /// The channel the requests are posted to: a conversation id (`C0123ABCD`).
    pub channel: String,
    /// The Slack users who may decide, and the approver name each decides as.
    pub approvers: SlackApprovers,
    /// Which agents' requests go to Slack (globs; empty: all). Read by the server's hub.
    #[serde(default)]
    pub agents: Vec<String>,
    /// Which tools' requests go to Slack (globs; empty: all). Read by the server's hub.
    #[serde(default)]
    pub tools: Vec<String>,
}

fn default_base_url() -> String {
    DEFAULT_BASE_URL.to_owned()
}

impl fmt::Debug for SlackConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SlackConfig")
            .field("base_url", &self.base_url)
            .field("bot_token", &"<redacted>")
            .field("signing_secret", &"<redacted>")
            .field("channel", &self.channel)
            .field("approvers", &self.approvers)
            .field("agents", &self.agents)
            .field("tools", &self.tools)
            .finish()
    }
}

/// The Slack channel's approvers: Slack user ids (`U0123ABCD`).
pub type SlackApprovers = crate::channel::PlatformApprovers;

impl SlackConfig {
    /// Checks what serde cannot: non-empty credentials, an http(s) base URL, user ids that
    /// are Slack ids, and at least one approver.
    pub(super) fn validate(&self) -> Result<(), String> {
        let base = url::Url::parse(&self.base_url)
            .map_err(|e| format!("slack.base_url {:?} is not a URL: {e}", self.base_url))?;
        if !matches!(base.scheme(), "http" | "https") {
            return Err(format!("slack.base_url {:?} is not http(s)", self.base_url));
        }
        header_value("slack.bot_token", &self.bot_token)?;
        if self.signing_secret.is_empty() {
            return Err("slack.signing_secret is empty".to_owned());
        }
        if self.channel.trim().is_empty() {
            return Err("slack.channel is empty".to_owned());
        }
        self.validate_approvers()
    }

    fn validate_approvers(&self) -> Result<(), String> {
        let pairs = self.approvers.pairs();
        if pairs.is_empty() {
            return Err("slack.approvers is empty: nobody could decide from Slack".to_owned());
        }
        for (id, name) in pairs {
            if !is_user_id(id) {
                return Err(format!(
                    "slack.approvers: {id:?} is not a Slack user id (letters and digits, like U0123ABCD)"
                ));
            }
            if name.trim().is_empty() {
                return Err(format!(
                    "slack.approvers: the approver name of {id} is empty"
                ));
            }
        }
        Ok(())
    }
}

/// Slack user ids are upper-case letters and digits (`U0123ABCD`, `W0123ABCD`); nothing else
/// may appear inside a `<@…>` mention.
pub(super) fn is_user_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// A secret that goes into a header: non-empty, visible ASCII (the message never quotes it).
fn header_value(key: &str, value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Err(format!("{key} is empty"));
    }
    if !value.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(format!(
            "{key} holds spaces or characters a header cannot carry"
        ));
    }
    Ok(())
}
