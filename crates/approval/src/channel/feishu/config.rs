//! The Feishu channel's configuration, as the server's config file spells it, and its
//! validation.

use std::fmt;
use std::net::IpAddr;

use serde::Deserialize;
use url::Url;

/// Feishu's open platform (mainland China). Lark's is `https://open.larksuite.com`.
pub const FEISHU_BASE_URL: &str = "https://open.feishu.cn";

/// The Feishu/Lark channel's settings.
///
/// Secrets (`app_secret`, `verification_token`, `encrypt_key`) arrive already expanded from
/// `${ENV}` by the server's config loader; `Debug` prints them as `<redacted>`.
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FeishuConfig {
    /// The open platform's origin: `https://open.feishu.cn` (the default) or
    /// `https://open.larksuite.com`; a test points it at a local stand-in. `https` is required
    /// except for a loopback host.
    #[serde(default = "default_base_url")]
    pub base_url: String,
    /// The custom app's App ID (`cli_…`).
    pub app_id: String,
    /// The custom app's App Secret.
    pub app_secret: String,
    /// The Verification Token of the app's events and callbacks settings.
    pub verification_token: String,
    /// The Encrypt Key of the app's events and callbacks settings. When set, callbacks must
    /// arrive encrypted and signed; when absent, plain callbacks are checked by their token.
    #[serde(default)]
    pub encrypt_key: Option<String>,
    /// What kind of id [`FeishuConfig::receive_id`] is.
    pub receive_id_type: ReceiveIdType,
    /// Who receives the cards: a user's `open_id`, a group's `chat_id`, …
    pub receive_id: String,
    /// Who may decide from Feishu, and as which tollgate approver.
    pub approvers: FeishuApprovers,
    /// Which agents' requests go to this channel (globs; empty: all). Read by the server.
    #[serde(default)]
    pub agents: Vec<String>,
    /// Which tools' requests go to this channel (globs; empty: all). Read by the server.
    #[serde(default)]
    pub tools: Vec<String>,
}

fn default_base_url() -> String {
    FEISHU_BASE_URL.to_owned()
}

impl fmt::Debug for FeishuConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FeishuConfig")
            .field("base_url", &self.base_url)
            .field("app_id", &self.app_id)
            .field("app_secret", &Redacted)
            .field("verification_token", &Redacted)
            .field("encrypt_key", &self.encrypt_key.as_ref().map(|_| Redacted))
            .field("receive_id_type", &self.receive_id_type)
            .field("receive_id", &self.receive_id)
            .field("approvers", &self.approvers)
            .field("agents", &self.agents)
            .field("tools", &self.tools)
            .finish()
    }
}

/// Prints `<redacted>` in place of a secret.
pub(super) struct Redacted;

impl fmt::Debug for Redacted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// The `receive_id_type` query parameter of `POST /open-apis/im/v1/messages`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReceiveIdType {
    /// A user's id within this app (`ou_…`).
    OpenId,
    /// A group chat (`oc_…`).
    ChatId,
    /// A user's id across one developer's apps (`on_…`).
    UnionId,
    /// A user's id within the tenant.
    UserId,
    /// A user's email address.
    Email,
}

impl ReceiveIdType {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OpenId => "open_id",
            Self::ChatId => "chat_id",
            Self::UnionId => "union_id",
            Self::UserId => "user_id",
            Self::Email => "email",
        }
    }
}

/// The channel's approvers: Feishu user ids (the `open_id` a click reports).
pub type FeishuApprovers = crate::channel::PlatformApprovers;

impl FeishuConfig {
    /// Checks the settings and returns the open platform's origin as a URL.
    ///
    /// # Errors
    /// A message naming the first bad key (never its value, which may be a secret):
    /// `base_url` not an http(s) origin (or plain `http` to a host that is not loopback), an
    /// empty id or secret, an empty `encrypt_key`, no approvers, an empty approver id or
    /// name.
    pub(super) fn validate(&self) -> Result<Url, String> {
        let base = base_url(&self.base_url)?;
        non_empty("app_id", &self.app_id)?;
        non_empty("app_secret", &self.app_secret)?;
        non_empty("verification_token", &self.verification_token)?;
        if let Some(key) = &self.encrypt_key {
            non_empty("encrypt_key", key)?;
        }
        non_empty("receive_id", &self.receive_id)?;
        let pairs = self.approvers.pairs();
        if pairs.is_empty() {
            return Err("feishu: `approvers` is empty, so nobody could decide from Feishu".into());
        }
        for (id, name) in pairs {
            non_empty("approvers (an id)", id)?;
            non_empty("approvers (a name)", name)?;
        }
        Ok(base)
    }
}

fn non_empty(key: &str, value: &str) -> Result<(), String> {
    if value.trim().is_empty() {
        return Err(format!("feishu: `{key}` is empty"));
    }
    Ok(())
}

fn base_url(text: &str) -> Result<Url, String> {
    let url = Url::parse(text.trim_end_matches('/'))
        .map_err(|e| format!("feishu: `base_url` is not a URL: {e}"))?;
    let loopback = match url.host() {
        Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip).is_loopback(),
        Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip).is_loopback(),
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        None => false,
    };
    match url.scheme() {
        "https" => {}
        "http" if loopback => {}
        "http" => {
            return Err(
                "feishu: `base_url` must use https (the app secret travels over it)".into(),
            );
        }
        other => {
            return Err(format!(
                "feishu: `base_url` scheme {other:?} is not http(s)"
            ));
        }
    }
    if url.host().is_none() || url.query().is_some() || url.fragment().is_some() {
        return Err(format!(
            "feishu: `base_url` must be an origin such as {FEISHU_BASE_URL}"
        ));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("feishu: `base_url` must not carry credentials".into());
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls_are_https_or_loopback_http() {
        assert!(base_url("https://open.feishu.cn").is_ok());
        assert!(base_url("https://open.larksuite.com/").is_ok());
        assert!(base_url("http://127.0.0.1:8080").is_ok());
        assert!(base_url("http://[::1]:8080").is_ok());
        assert!(base_url("http://localhost:9").is_ok());
        assert!(base_url("http://open.feishu.cn").is_err());
        assert!(base_url("ftp://open.feishu.cn").is_err());
        assert!(base_url("open.feishu.cn").is_err());
        assert!(base_url("https://open.feishu.cn/?a=1").is_err());
        assert!(base_url("https://user:pw@open.feishu.cn").is_err());
    }

    #[test]
    fn approvers_map_both_ways() {
        let list = FeishuApprovers::Ids(vec!["ou_a".into()]);
        assert_eq!(list.name_of("ou_a"), Some("ou_a"));
        assert_eq!(list.id_of("ou_a"), Some("ou_a"));
        assert_eq!(list.name_of("ou_b"), None);
        let map = FeishuApprovers::Names(std::collections::BTreeMap::from([(
            "ou_a".into(),
            "alice".into(),
        )]));
        assert_eq!(map.name_of("ou_a"), Some("alice"));
        assert_eq!(map.id_of("alice"), Some("ou_a"));
        assert_eq!(map.name_of("alice"), None);
    }
}
