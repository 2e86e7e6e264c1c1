//! Hook files (YAML), user or admin: `hooks:`, and for admin files `network.allow_cidrs`,
//! `standalone`, `sandbox` (see [`crate::sandbox`]) and `approval` (see [`crate::approval`]).

use std::path::Path;

use ipnet::IpNet;
use serde_json::Value;
use tollgate_protocol::HookSource;

use crate::error::{ConfigError, Result};
use crate::hooks_map::{self, Origin};
use crate::spec::HookSpec;
use crate::warning::Warning;
use crate::{fields, read, suggest, yaml};

/// Whether a hook file is trusted. Only the caller decides (`--admin FILE`, the server's admin
/// config); a file's content never makes it admin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trust {
    /// A user hook file: hooks get source `user_config`; `network` and `standalone` are
    /// ignored with a warning.
    User,
    /// An admin hook file: hooks get source `admin_config`.
    Admin,
}

/// A parsed hook file.
#[derive(Debug, Clone)]
pub struct HookFile {
    /// The file, as given.
    pub path: String,
    /// How it was passed.
    pub trust: Trust,
    /// The hooks that passed validation.
    pub hooks: Vec<HookSpec>,
    /// `network.allow_cidrs` (admin only): networks http hooks may reach although the SSRF
    /// guard refuses them by default.
    pub allow_cidrs: Vec<IpNet>,
    /// `standalone: true` (admin only): external hooks default to `fail_closed`.
    pub standalone: bool,
    /// `sandbox:` (admin only): how the OS sandbox of commands is widened or turned off.
    pub sandbox: crate::sandbox::SandboxSettings,
    /// `approval:` (admin only): how long asks wait and who may decide them.
    pub approval: crate::approval::ApprovalSettings,
    /// What was skipped or ignored, and why.
    pub warnings: Vec<Warning>,
}

impl HookFile {
    /// Reads and parses a hook file.
    ///
    /// # Errors
    /// As [`HookFile::parse`], plus [`ConfigError::Read`].
    pub fn load(path: &Path, trust: Trust) -> Result<Self> {
        Self::parse(path, &read(path)?, trust)
    }

    /// Parses a hook file's text.
    ///
    /// # Errors
    /// [`ConfigError::Yaml`] for invalid YAML (duplicate keys and alias bombs included);
    /// [`ConfigError::Invalid`] when the top level is not a mapping, or is a mapping without any
    /// key a hook file has (`hooks`, `network`, `standalone`, `sandbox`): such a file is not a
    /// hook file, and none of its keys is shown (it may be any file the path reaches,
    /// `/etc/shadow` lines read as YAML keys).
    pub fn parse(path: &Path, text: &str, trust: Trust) -> Result<Self> {
        let file = path.display().to_string();
        let value = yaml::parse(text).map_err(|message| ConfigError::Yaml {
            path: file.clone(),
            message,
        })?;
        let empty = serde_json::Map::new();
        let map = match &value {
            Value::Object(map) => map,
            Value::Null => &empty,
            other => {
                return Err(ConfigError::Invalid {
                    path: file,
                    entry: "(top level)".into(),
                    message: format!("must be a mapping, found {}", fields::type_name(other)),
                });
            }
        };
        if !map.is_empty() && !map.keys().any(|k| TOP_LEVEL.contains(&k.as_str())) {
            // A near miss is named by the word it is close to, never by itself.
            let typo = map
                .keys()
                .find_map(|k| suggest::closest(k, &TOP_LEVEL))
                .map(|meant| format!("; one of them is close to `{meant}`: a typo?"))
                .unwrap_or_default();
            return Err(ConfigError::Invalid {
                path: file,
                entry: "(top level)".into(),
                message: format!(
                    "not a hook file: none of its {} top-level keys is one of `hooks`, \
                     `network`, `standalone`, `sandbox`, `approval` (the keys are not shown: the file may \
                     be anything){typo}",
                    map.len()
                ),
            });
        }
        let mut parsed = Self {
            path: file,
            trust,
            hooks: Vec::new(),
            allow_cidrs: Vec::new(),
            standalone: false,
            sandbox: Default::default(),
            approval: Default::default(),
            warnings: Vec::new(),
        };
        for (key, value) in map {
            parsed.top_level(key, value);
        }
        Ok(parsed)
    }

    fn top_level(&mut self, key: &str, value: &Value) {
        let admin = self.trust == Trust::Admin;
        match key {
            "hooks" => {
                let plugin_root = plugin_root(&self.path);
                let (source, prefix) = match (self.trust, &plugin_root) {
                    (Trust::Admin, _) => (
                        HookSource::AdminConfig,
                        format!("admin_config:{}", file_stem(&self.path)),
                    ),
                    (Trust::User, Some(root)) => {
                        (HookSource::Plugin, format!("plugin:{}", file_stem(&root.display().to_string())))
                    }
                    (Trust::User, None) => (
                        HookSource::UserConfig,
                        format!("user_config:{}", file_stem(&self.path)),
                    ),
                };
                let origin = Origin {
                    file: &self.path,
                    source,
                    name_prefix: &prefix,
                    admin,
                    plugin_root,
                };
                hooks_map::parse(&origin, value, &mut self.hooks, &mut self.warnings);
            }
            "approval" if !admin => self.warn(
                key,
                "`approval` is honoured in agent files and admin hook files only (pass the file \
                 with --admin); ignored",
            ),
            "approval" => {
                let mut notes = Vec::new();
                self.approval =
                    crate::approval::parse(value, &mut |entry, message| notes.push((entry, message)));
                for (entry, message) in notes {
                    self.warn(&entry, message);
                }
            }
            key if !admin && crate::ADMIN_ONLY_KEYS.contains(&key) => self.warn(
                key,
                format!("`{key}` is honoured in admin hook files only (pass the file with --admin); ignored"),
            ),
            "network" => self.network(value),
            "sandbox" => {
                let dir = Path::new(&self.path)
                    .parent()
                    .map(Path::to_path_buf)
                    .unwrap_or_default();
                let mut notes = Vec::new();
                self.sandbox =
                    crate::sandbox::parse_settings(value, &dir, &mut |entry, message| {
                        notes.push((entry, message));
                    });
                for (entry, message) in notes {
                    self.warn(&entry, message);
                }
            }
            "standalone" => match fields::boolean(value) {
                Ok(on) => self.standalone = on,
                Err(e) => self.warn("standalone", format!("{e}; standalone mode stays off")),
            },
            "disableAllHooks" => self.warn(
                key,
                "Claude Code's `disableAllHooks` is not honoured: the file was given as a hook \
                 file, so its hooks load",
            ),
            other if CLAUDE_CODE_SETTINGS.contains(&other) => self.warn(
                other,
                format!("`{other}` is a Claude Code setting tollgate does not read; ignored"),
            ),
            other => self.warn(
                other,
                format!("{}; ignored", suggest::unknown_key(other, &TOP_LEVEL)),
            ),
        }
    }

    fn network(&mut self, value: &Value) {
        let Some(map) = value.as_object() else {
            return self.warn("network", "must be a mapping with `allow_cidrs`; ignored");
        };
        for (key, value) in map {
            if key != "allow_cidrs" {
                self.warn(
                    &format!("network.{key}"),
                    format!("{}; ignored", suggest::unknown_key(key, &["allow_cidrs"])),
                );
                continue;
            }
            let Some(items) = value.as_array() else {
                self.warn("network.allow_cidrs", "must be a list of CIDRs; ignored");
                continue;
            };
            for (i, item) in items.iter().enumerate() {
                match item.as_str().map(str::parse::<IpNet>) {
                    Some(Ok(net)) => self.allow_cidrs.push(net),
                    _ => self.warn(
                        &format!("network.allow_cidrs[{i}]"),
                        format!("{item} is not a CIDR like `127.0.0.0/8`; ignored"),
                    ),
                }
            }
        }
    }

    fn warn(&mut self, entry: &str, message: impl Into<String>) {
        self.warnings.push(Warning::new(&self.path, entry, message));
    }
}

/// The plugin a hook file belongs to: a Claude Code plugin keeps its hooks in
/// `<plugin>/hooks/hooks.json`. The folder is made absolute and real, like
/// [`HookSpec::dir`](crate::HookSpec::dir).
fn plugin_root(path: &str) -> Option<std::path::PathBuf> {
    let path = Path::new(path);
    let hooks_dir = path.parent()?;
    let in_hooks = path.file_name()? == "hooks.json" && hooks_dir.file_name()? == "hooks";
    in_hooks.then(|| crate::spec::declaring_dir(&hooks_dir.display().to_string()))
}

/// Top-level keys of Claude Code's `settings.json` (and a plugin's `hooks.json`) besides
/// `hooks`: named as such when a settings file is given as a hook file.
const CLAUDE_CODE_SETTINGS: [&str; 18] = [
    "$schema",
    "description",
    "permissions",
    "env",
    "model",
    "apiKeyHelper",
    "cleanupPeriodDays",
    "includeCoAuthoredBy",
    "statusLine",
    "outputStyle",
    "enabledPlugins",
    "extraKnownMarketplaces",
    "enableAllProjectMcpServers",
    "enabledMcpjsonServers",
    "disabledMcpjsonServers",
    "forceLoginMethod",
    "spinnerTipsEnabled",
    "alwaysThinkingEnabled",
];

/// The keys a hook file may have at its top level.
const TOP_LEVEL: [&str; 5] = ["hooks", "network", "standalone", "sandbox", "approval"];

fn file_stem(path: &str) -> String {
    Path::new(path)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.to_owned())
}
