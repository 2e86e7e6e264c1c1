//! The server's configuration file (YAML).
//!
//! ```yaml
//! listen: 127.0.0.1:8080                 # IP address and port; port 0 picks a free one
//! database: sqlite://tollgate.db         # relative paths are relative to this file
//! agents_dir: ./agents                   # read by the runs API (not built yet)
//! admin_hooks: [admin.yaml]              # likewise
//! public_url: http://127.0.0.1:8080      # how people reach this server
//! tokens:
//!   - {name: ops-lead, token: "${OPS_LEAD_TOKEN}", roles: [approver]}
//!   - {name: auditor, token_sha256: "<64 hex digits>", roles: [admin]}
//! approval:
//!   timeout_seconds: 1800
//!   fail_closed: false                   # see `channels`
//!   channels: []                         # Feishu/Lark, Slack (docs/channels.md)
//! ```
//!
//! The file is read raw (YAML into JSON), then validated: `${NAME}` in any string value is
//! replaced by the environment variable `NAME` (unset is an error naming the key), unknown
//! keys are errors with a suggestion, and the tokens are checked and kept only as SHA-256
//! digests. Errors never quote a value: a value may be a secret.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value};
use tollgate_config::approval::MAX_APPROVAL_TIMEOUT_SECS;

pub use channels::ChannelConfig;

use crate::auth::{Role, Token, Tokens};
use crate::error::{ConfigError, Result};

/// Keys of the file's top level.
const TOP_KEYS: [&str; 7] = [
    "listen",
    "database",
    "agents_dir",
    "admin_hooks",
    "public_url",
    "tokens",
    "approval",
];
/// Keys of one `tokens` entry.
const TOKEN_KEYS: [&str; 4] = ["name", "token", "token_sha256", "roles"];
/// Keys of `approval`.
const APPROVAL_KEYS: [&str; 3] = ["timeout_seconds", "fail_closed", "channels"];

/// Where the server listens unless `listen` says otherwise.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";
/// How long a request the server files waits for a human unless `approval.timeout_seconds`
/// says otherwise.
pub const DEFAULT_APPROVAL_TIMEOUT: Duration = Duration::from_secs(1800);

/// The validated configuration of `tollgate serve`.
#[derive(Debug)]
pub struct ServerConfig {
    /// The address to bind (port 0: any free port).
    pub listen: SocketAddr,
    /// The SQLite file of the approval store.
    pub database: PathBuf,
    /// Where agent files for runs are looked up (for the runs API; unused so far).
    pub agents_dir: Option<PathBuf>,
    /// Admin hook files for runs (for the runs API; unused so far).
    pub admin_hooks: Vec<PathBuf>,
    /// How people reach the server, when set: the only origin the approvals page takes forms
    /// from, and with `https` its session cookie is `Secure`.
    pub public_url: Option<url::Url>,
    /// Who may call the API.
    pub tokens: Tokens,
    /// How long a request filed by a run of this server waits (for the runs API).
    pub approval_timeout: Duration,
    /// Where pending requests are announced besides the web page (`approval.channels`).
    pub channels: Vec<ChannelConfig>,
    /// Whether a request routed to a channel that could not be built is denied rather than
    /// left waiting on the other channels (`approval.fail_closed`, default `false`).
    pub channels_fail_closed: bool,
}

/// The file as written, after `${NAME}` expansion.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    listen: Option<String>,
    database: Option<String>,
    agents_dir: Option<String>,
    #[serde(default)]
    admin_hooks: Vec<String>,
    public_url: Option<String>,
    #[serde(default)]
    tokens: Vec<RawToken>,
    #[serde(default)]
    approval: RawApproval,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawToken {
    name: String,
    token: Option<String>,
    token_sha256: Option<String>,
    roles: Vec<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawApproval {
    timeout_seconds: Option<u64>,
    #[serde(default)]
    fail_closed: bool,
}

impl ServerConfig {
    /// Reads and validates the file at `path`.
    ///
    /// # Errors
    /// [`ConfigError::Read`] when it cannot be read; [`ConfigError::Invalid`] for bad YAML,
    /// an unknown key, an unset variable, a bad value or token.
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError::Read {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
        let base = path.parent().unwrap_or(Path::new(""));
        Self::parse(&text, base, &|name| std::env::var(name).ok()).map_err(|reason| {
            ConfigError::Invalid {
                path: path.to_path_buf(),
                reason,
            }
        })
    }

    /// Validates `text`, resolving relative paths against `base` and `${NAME}` through `env`.
    ///
    /// # Errors
    /// Why the text is not a valid configuration, naming the key.
    pub fn parse(
        text: &str,
        base: &Path,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> std::result::Result<Self, String> {
        let mut value = tollgate_config::yaml::parse(text)?;
        if value.is_null() {
            value = Value::Object(Map::new());
        }
        check_keys(&value)?;
        // Channels are expanded one by one: an unset variable costs that channel only.
        let channels = value
            .get_mut("approval")
            .and_then(Value::as_object_mut)
            .and_then(|approval| approval.remove("channels"))
            .map(|list| channels::parse(list, env))
            .transpose()?
            .unwrap_or_default();
        expand(&mut value, "", env)?;
        let raw: Raw = serde_path_to_error::deserialize(value).map_err(|e| {
            let inner = e.inner().to_string();
            // serde quotes the value it refused; keep only what it expected.
            let expected = inner.split_once("expected ").map_or("", |(_, e)| e);
            format!("`{}`: wrong type, expected {expected}", e.path())
        })?;
        let mut config = raw.validate(base)?;
        config.channels = channels;
        Ok(config)
    }
}

impl Raw {
    fn validate(self, base: &Path) -> std::result::Result<ServerConfig, String> {
        let listen = self.listen.as_deref().unwrap_or(DEFAULT_LISTEN);
        let listen = listen.parse().map_err(|_| {
            "`listen`: must be an IP address and a port (`127.0.0.1:8080`, `[::1]:8080`)".to_owned()
        })?;
        let database = database_path(self.database.as_deref().unwrap_or("tollgate.db"), base)?;
        let public_url = self.public_url.as_deref().map(parse_url).transpose()?;
        let timeout = self
            .approval
            .timeout_seconds
            .map_or(Ok(DEFAULT_APPROVAL_TIMEOUT), approval_timeout)?;
        let tokens = self
            .tokens
            .into_iter()
            .enumerate()
            .map(|(i, t)| t.validate(i))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        Ok(ServerConfig {
            listen,
            database,
            agents_dir: self.agents_dir.map(|d| base.join(d)),
            admin_hooks: self.admin_hooks.iter().map(|f| base.join(f)).collect(),
            public_url,
            tokens: Tokens::new(tokens)?,
            approval_timeout: timeout,
            channels: Vec::new(),
            channels_fail_closed: self.approval.fail_closed,
        })
    }
}

impl RawToken {
    fn validate(self, index: usize) -> std::result::Result<Token, String> {
        let at = format!("tokens[{index}]");
        let digest = match (self.token, self.token_sha256) {
            (Some(token), None) => Token::digest_of(&token)
                .map_err(|reason| format!("`{at}.token` of `{}`: {reason}", self.name))?,
            (None, Some(hex)) => Token::parse_digest(&hex)
                .map_err(|reason| format!("`{at}.token_sha256` of `{}`: {reason}", self.name))?,
            _ => {
                return Err(format!(
                    "`{at}` (`{}`): needs exactly one of `token` and `token_sha256`",
                    self.name
                ));
            }
        };
        let roles = self
            .roles
            .iter()
            .enumerate()
            .map(|(j, role)| {
                role.parse::<Role>()
                    .map_err(|hint| format!("`{at}.roles[{j}]`: {hint}"))
            })
            .collect::<std::result::Result<Vec<_>, _>>()?;
        Token::new(self.name, digest, roles).map_err(|reason| format!("`{at}`: {reason}"))
    }
}

/// `sqlite://PATH`, `sqlite:PATH` or a bare path; relative to `base`.
fn database_path(text: &str, base: &Path) -> std::result::Result<PathBuf, String> {
    let path = text
        .strip_prefix("sqlite://")
        .or_else(|| text.strip_prefix("sqlite:"))
        .unwrap_or(text);
    if path.is_empty() || path.starts_with(':') {
        return Err(
            "`database`: must name a SQLite file (`sqlite://tollgate.db`); approvals \
                    must outlive the server, so no in-memory database"
                .into(),
        );
    }
    if path.contains("://") {
        return Err("`database`: only SQLite is supported (`sqlite://PATH`)".into());
    }
    Ok(base.join(path))
}

fn parse_url(text: &str) -> std::result::Result<url::Url, String> {
    match url::Url::parse(text) {
        Ok(url) if matches!(url.scheme(), "http" | "https") => Ok(url),
        _ => Err("`public_url`: must be an http:// or https:// URL".into()),
    }
}

fn approval_timeout(seconds: u64) -> std::result::Result<Duration, String> {
    if (1..=MAX_APPROVAL_TIMEOUT_SECS).contains(&seconds) {
        Ok(Duration::from_secs(seconds))
    } else {
        Err(format!(
            "`approval.timeout_seconds`: must be from 1 to {MAX_APPROVAL_TIMEOUT_SECS}"
        ))
    }
}

/// Refuses keys the format does not have, suggesting the one probably meant.
fn check_keys(value: &Value) -> std::result::Result<(), String> {
    let Some(top) = value.as_object() else {
        return Err(
            "the file must be a mapping of keys (`listen`, `database`, `tokens`, …)".into(),
        );
    };
    known(top, &TOP_KEYS, "")?;
    if let Some(Value::Array(tokens)) = top.get("tokens") {
        for (i, token) in tokens.iter().enumerate() {
            if let Some(token) = token.as_object() {
                known(token, &TOKEN_KEYS, &format!("tokens[{i}]."))?;
            }
        }
    }
    if let Some(Value::Object(approval)) = top.get("approval") {
        known(approval, &APPROVAL_KEYS, "approval.")?;
    }
    Ok(())
}

fn known(map: &Map<String, Value>, keys: &[&str], at: &str) -> std::result::Result<(), String> {
    match map.keys().find(|k| !keys.contains(&k.as_str())) {
        None => Ok(()),
        Some(key) => Err(format!(
            "unknown key `{at}{key}`{}",
            did_you_mean(key, keys)
        )),
    }
}

/// ` (did you mean `KEY`?)` for the known key most like `key` (Jaro–Winkler, as clap
/// suggests flags), or nothing.
fn did_you_mean(key: &str, keys: &[&str]) -> String {
    if key.len() > 64 {
        return String::new();
    }
    keys.iter()
        .map(|k| (strsim::jaro_winkler(key, k), *k))
        .filter(|(similarity, _)| *similarity >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map_or_else(String::new, |(_, k)| format!(" (did you mean `{k}`?)"))
}

/// Replaces `${NAME}` in every string of `value` by the variable `NAME` from `env`.
fn expand(
    value: &mut Value,
    at: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> std::result::Result<(), String> {
    match value {
        Value::String(text) => *text = expand_str(text, at, env)?,
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                expand(item, &format!("{at}[{i}]"), env)?;
            }
        }
        Value::Object(map) => {
            for (key, item) in map.iter_mut() {
                let at = if at.is_empty() {
                    key.clone()
                } else {
                    format!("{at}.{key}")
                };
                expand(item, &at, env)?;
            }
        }
        _ => {}
    }
    Ok(())
}

fn expand_str(
    text: &str,
    at: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> std::result::Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(format!("`{at}`: `${{` without its closing `}}`"));
        };
        let name = &after[..end];
        let valid = !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(format!(
                "`{at}`: `${{…}}` must hold an environment variable's name (letters, digits, `_`)"
            ));
        }
        let Some(found) = env(name) else {
            return Err(format!(
                "`{at}`: the environment variable `{name}` is not set"
            ));
        };
        out.push_str(&found);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

mod channels;

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
