//! `sandbox:` in admin hook files (top level) and on admin hook entries: how far the OS
//! sandbox of command hooks and of the agent's shell tool is widened, or turned off.
//!
//! ```yaml
//! sandbox:                         # admin files only
//!   hidden: [~/.kube, /srv/app/secrets.env]   # more paths no command may read
//!   sources:                       # per hook source: skill, plugin, user_config,
//!     user_config:                 #   admin_config, agent_config, builtin
//!       writable: [~/.myrm]        # more writable paths
//!       network: true              # HTTP(S) through the SSRF-guarded egress proxy; `host`: the
//!                                  #   host's network; `off` (default for external sources)
//!       env: [AUDIT_TOKEN]         # variables passed through from the runtime's environment
//!   shell_tool: {network: true}    # the agent's bash tool
//! hooks:
//!   PreToolUse:
//!     - script: echo "$ARGUMENTS" >> ~/.myrm/audit.log
//!       sandbox: {writable: [~/.myrm]}   # this hook only (or `sandbox: off`)
//! ```
//!
//! `sandbox: off` (top level: every command, hooks and the shell tool; on an entry: that hook)
//! runs commands unconfined. Paths may start with `~/`; relative paths are relative to the
//! file. A malformed part is ignored with a warning, which never widens anything.

use std::path::{Path, PathBuf};

use serde_json::Value;
use tollgate_protocol::HookSource;

use crate::{fields, suggest};

/// What admin files say about the sandbox (merged over all admin files).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SandboxSettings {
    /// `sandbox: off`: no command runs in the sandbox.
    pub off: bool,
    /// `sandbox.hidden`: more paths no command may read.
    pub hidden: Vec<PathBuf>,
    /// `sandbox.sources.<source>`: what every hook of that source gets.
    pub sources: Vec<(HookSource, Widening)>,
    /// `sandbox.shell_tool`: what the agent's shell tool gets.
    pub shell_tool: Widening,
}

/// The network a sandbox gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetworkChoice {
    /// `off` / `false`: nothing reachable.
    Off,
    /// `true` / `on` / `proxy`: HTTP(S) through the egress proxy, which the SSRF guard of http
    /// hooks polices.
    Proxy,
    /// `host`: the host's network, unguarded.
    Host,
}

/// Paths, network and environment a sandbox gets beyond its defaults.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Widening {
    /// More writable paths (absolute).
    pub writable: Vec<PathBuf>,
    /// The network; `None`: the default.
    pub network: Option<NetworkChoice>,
    /// Names of variables passed through from the runtime's environment.
    pub env: Vec<String>,
}

impl Widening {
    /// Adds `other` to this one (a later `network` wins).
    pub fn merge(&mut self, other: &Widening) {
        self.writable.extend(other.writable.iter().cloned());
        self.network = other.network.or(self.network);
        self.env.extend(other.env.iter().cloned());
    }
}

/// A hook entry's own `sandbox:` (admin files only).
#[derive(Debug, Clone, PartialEq)]
pub enum HookSandbox {
    /// `sandbox: off`.
    Off,
    /// `sandbox: {writable, network, env}`.
    Widen(Widening),
}

impl SandboxSettings {
    /// Adds another admin file's settings: `off` if any says so, lists concatenated.
    pub fn merge(&mut self, other: &SandboxSettings) {
        self.off |= other.off;
        self.hidden.extend(other.hidden.iter().cloned());
        self.sources.extend(other.sources.iter().cloned());
        self.shell_tool.merge(&other.shell_tool);
    }

    /// What hooks from `source` get from `sources`.
    pub fn for_source(&self, source: HookSource) -> Widening {
        let mut widening = Widening::default();
        for (_, w) in self.sources.iter().filter(|(s, _)| *s == source) {
            widening.merge(w);
        }
        widening
    }
}

/// A sink for warnings: (entry path, message).
pub(crate) type Warn<'a> = &'a mut dyn FnMut(String, String);

/// Parses the top-level `sandbox:` of an admin file in `dir`.
pub(crate) fn parse_settings(value: &Value, dir: &Path, warn: Warn<'_>) -> SandboxSettings {
    let mut settings = SandboxSettings::default();
    if let Some(on) = switch(value) {
        settings.off = !on;
        return settings;
    }
    let Some(map) = value.as_object() else {
        warn(
            "sandbox".into(),
            format!(
                "must be `off` or a mapping, found {}; ignored",
                fields::type_name(value)
            ),
        );
        return settings;
    };
    for (key, value) in map {
        let at = format!("sandbox.{key}");
        match key.as_str() {
            "hidden" => settings.hidden = paths(value, dir, &at, warn),
            "shell_tool" => settings.shell_tool = widening(value, dir, &at, warn),
            "sources" => settings.sources = sources(value, dir, &at, warn),
            other => warn(
                at,
                format!(
                    "{}; ignored",
                    suggest::unknown_key(other, &["hidden", "shell_tool", "sources"])
                ),
            ),
        }
    }
    settings
}

/// Parses a hook entry's `sandbox:` (at `at`) in a file in `dir`.
pub(crate) fn parse_hook(value: &Value, dir: &Path, at: &str, warn: Warn<'_>) -> HookSandbox {
    match switch(value) {
        Some(false) => HookSandbox::Off,
        Some(true) => HookSandbox::Widen(Widening::default()),
        None => HookSandbox::Widen(widening(value, dir, at, warn)),
    }
}

/// `off`/`false` → `Some(false)`, `on`/`true` → `Some(true)`, anything else `None`.
fn switch(value: &Value) -> Option<bool> {
    match value {
        Value::Bool(on) => Some(*on),
        Value::String(s) if s == "off" => Some(false),
        Value::String(s) if s == "on" => Some(true),
        _ => None,
    }
}

fn network(value: &Value) -> Option<NetworkChoice> {
    match (switch(value), value.as_str()) {
        (Some(false), _) => Some(NetworkChoice::Off),
        (Some(true), _) | (None, Some("proxy")) => Some(NetworkChoice::Proxy),
        (None, Some("host")) => Some(NetworkChoice::Host),
        _ => None,
    }
}

fn sources(value: &Value, dir: &Path, at: &str, warn: Warn<'_>) -> Vec<(HookSource, Widening)> {
    let Some(map) = value.as_object() else {
        warn(
            at.into(),
            "must be a mapping of hook sources; ignored".into(),
        );
        return Vec::new();
    };
    let mut out = Vec::new();
    for (name, value) in map {
        let here = format!("{at}.{name}");
        match source(name) {
            Some(source) => out.push((source, widening(value, dir, &here, warn))),
            None => warn(
                here,
                match suggest::closest(name, &SOURCES) {
                    Some(meant) => {
                        format!("unknown hook source `{name}` (did you mean `{meant}`?); ignored")
                    }
                    None => format!(
                        "unknown hook source `{name}` (expected skill, plugin, user_config, \
                         admin_config, agent_config or builtin); ignored"
                    ),
                },
            ),
        }
    }
    out
}

/// The hook sources' names.
const SOURCES: [&str; 6] = [
    "builtin",
    "agent_config",
    "admin_config",
    "skill",
    "plugin",
    "user_config",
];

fn source(name: &str) -> Option<HookSource> {
    [
        HookSource::Builtin,
        HookSource::AgentConfig,
        HookSource::AdminConfig,
        HookSource::Skill,
        HookSource::Plugin,
        HookSource::UserConfig,
    ]
    .into_iter()
    .find(|s| s.as_str() == name)
}

fn widening(value: &Value, dir: &Path, at: &str, warn: Warn<'_>) -> Widening {
    let mut widening = Widening::default();
    let Some(map) = value.as_object() else {
        warn(
            at.into(),
            format!(
                "must be a mapping with `writable`, `network`, `env`, found {}; ignored",
                fields::type_name(value)
            ),
        );
        return widening;
    };
    for (key, value) in map {
        let here = format!("{at}.{key}");
        match key.as_str() {
            "writable" => widening.writable = paths(value, dir, &here, warn),
            "network" => match network(value) {
                Some(choice) => widening.network = Some(choice),
                None => warn(
                    here,
                    "must be `off`, `proxy` (also true, on) or `host`; ignored".into(),
                ),
            },
            "env" => widening.env = names(value, &here, warn),
            other => warn(
                here,
                format!(
                    "{}; ignored",
                    suggest::unknown_key(other, &["writable", "network", "env"])
                ),
            ),
        }
    }
    widening
}

fn strings<'v>(value: &'v Value, at: &str, warn: Warn<'_>) -> Vec<&'v str> {
    let Some(items) = value.as_array() else {
        warn(at.into(), "must be a list; ignored".into());
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        match item.as_str().filter(|s| !s.trim().is_empty()) {
            Some(s) => out.push(s),
            None => warn(
                format!("{at}[{i}]"),
                "must be a non-empty string; ignored".into(),
            ),
        }
    }
    out
}

fn paths(value: &Value, dir: &Path, at: &str, warn: Warn<'_>) -> Vec<PathBuf> {
    strings(value, at, warn)
        .into_iter()
        .map(|text| resolve(text, dir))
        .collect()
}

fn names(value: &Value, at: &str, warn: Warn<'_>) -> Vec<String> {
    let valid = |s: &str| {
        s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !s.starts_with(|c: char| c.is_ascii_digit())
    };
    let mut out = Vec::new();
    for (i, name) in strings(value, at, warn).into_iter().enumerate() {
        if valid(name) {
            out.push(name.to_owned());
        } else {
            warn(
                format!("{at}[{i}]"),
                format!("`{name}` is not a variable name; ignored"),
            );
        }
    }
    out
}

/// `~` and `~/…` are under `$HOME`; relative paths are relative to `dir`.
fn resolve(text: &str, dir: &Path) -> PathBuf {
    let home = || std::env::var_os("HOME").map(PathBuf::from);
    if text == "~" {
        return home().unwrap_or_else(|| dir.to_owned());
    }
    if let (Some(rest), Some(home)) = (text.strip_prefix("~/"), home()) {
        return home.join(rest);
    }
    let path = Path::new(text);
    if path.is_absolute() {
        path.to_owned()
    } else {
        std::path::absolute(dir.join(path)).unwrap_or_else(|_| dir.join(path))
    }
}

impl From<NetworkChoice> for tollgate_handlers::command::Network {
    fn from(choice: NetworkChoice) -> Self {
        match choice {
            NetworkChoice::Off => Self::Off,
            NetworkChoice::Proxy => Self::Proxy,
            NetworkChoice::Host => Self::On,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_suggested_source_names_are_the_sources() {
        for name in SOURCES {
            assert_eq!(source(name).map(HookSource::as_str), Some(name));
        }
    }

    fn parse(value: Value) -> (SandboxSettings, Vec<(String, String)>) {
        let mut warnings = Vec::new();
        let settings = parse_settings(&value, Path::new("/etc/tollgate"), &mut |a, m| {
            warnings.push((a, m))
        });
        (settings, warnings)
    }

    #[test]
    fn off_and_on_switch_the_sandbox() {
        assert!(parse(json!("off")).0.off);
        assert!(parse(json!(false)).0.off);
        assert!(!parse(json!("on")).0.off);
    }

    #[test]
    fn widenings_resolve_paths_and_bad_parts_only_warn() {
        let (settings, warnings) = parse(json!({
            "hidden": ["secrets.env"],
            "sources": {
                "user_config": {"writable": ["~/.myrm", "logs"], "network": "on", "env": ["TOKEN", "1X"]},
                "nobody": {}
            },
            "shell_tool": {"network": true, "writable": 3},
            "mode": "strict"
        }));
        assert_eq!(
            settings.hidden,
            [PathBuf::from("/etc/tollgate/secrets.env")]
        );
        let user = settings.for_source(HookSource::UserConfig);
        assert_eq!(user.writable[1], PathBuf::from("/etc/tollgate/logs"));
        assert!(user.writable[0].ends_with(".myrm"));
        assert_eq!(user.network, Some(NetworkChoice::Proxy));
        assert_eq!(user.env, ["TOKEN"]);
        assert_eq!(settings.shell_tool.network, Some(NetworkChoice::Proxy));
        assert!(settings.shell_tool.writable.is_empty());
        let at: Vec<&str> = warnings.iter().map(|(a, _)| a.as_str()).collect();
        assert_eq!(
            at,
            [
                "sandbox.mode",
                "sandbox.shell_tool.writable",
                "sandbox.sources.nobody",
                "sandbox.sources.user_config.env[1]"
            ]
        );
    }

    #[test]
    fn a_hook_entry_turns_its_sandbox_off_or_widens_it() {
        let mut warn = |_: String, _: String| {};
        assert_eq!(
            parse_hook(&json!("off"), Path::new("/d"), "x", &mut warn),
            HookSandbox::Off
        );
        let HookSandbox::Widen(w) = parse_hook(
            &json!({"writable": ["/var/log/x"]}),
            Path::new("/d"),
            "x",
            &mut warn,
        ) else {
            panic!("expected a widening");
        };
        assert_eq!(w.writable, [PathBuf::from("/var/log/x")]);
    }
}
