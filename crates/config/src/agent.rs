//! Agent config (JSON): `model_config_json.hooks`. Strict: an invalid entry is an error,
//! because an agent whose hooks cannot be built must not run.

use std::path::Path;

use serde_json::{Map, Value};
use tollgate_core::ToolMatcher;

use crate::error::{ConfigError, Result};
use crate::{fields, read, suggest};

/// One `class_hooks` entry: `{class, priority, params}`.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassHookSpec {
    /// The class name, resolved through the class table when the registry is built.
    pub class: String,
    /// Lower runs first; 0 by default.
    pub priority: i32,
    /// The class's params (`null` when none are given).
    pub params: Value,
    /// Its entry path, like `model_config_json.hooks.class_hooks[0]`.
    pub entry: String,
}

/// An agent's hook settings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentConfig {
    /// The file, as given.
    pub path: String,
    /// Its folder, absolute (made so when parsed): relative path params of its class hooks
    /// are taken from it.
    pub dir: std::path::PathBuf,
    /// `class_hooks`, in order; their source is `agent_config`.
    pub class_hooks: Vec<ClassHookSpec>,
    /// `require_confirmation_for_all`: every tool call needs a human's approval.
    pub require_confirmation_for_all: bool,
    /// `confirmation_tools`: globs of tool names whose calls need a human's approval (for
    /// example `oa__*_pay`), for the confirmation gate.
    pub confirmation_tools: Vec<String>,
}

const HOOKS: &str = "model_config_json.hooks";
/// The keys of `model_config_json.hooks`.
const HOOK_KEYS: [&str; 3] = [
    "class_hooks",
    "require_confirmation_for_all",
    "confirmation_tools",
];

impl AgentConfig {
    /// Reads and parses an agent config.
    ///
    /// # Errors
    /// As [`AgentConfig::parse`], plus [`ConfigError::Read`].
    pub fn load(path: &Path) -> Result<Self> {
        Self::parse(path, &read(path)?)
    }

    /// Parses an agent config: a JSON object whose `model_config_json` (an object, or a string
    /// holding one, as stored in a database column) may have `hooks`. Other keys of the agent
    /// config are not ours and are ignored; inside `hooks` every key is checked.
    ///
    /// # Errors
    /// [`ConfigError::Json`] for invalid JSON; [`ConfigError::Invalid`] naming the entry for
    /// an unknown key or a value of the wrong type.
    pub fn parse(path: &Path, text: &str) -> Result<Self> {
        let file = path.display().to_string();
        let json = |e: serde_json::Error| ConfigError::Json {
            path: file.clone(),
            message: e.to_string(),
        };
        let root: Value = serde_json::from_str(text).map_err(json)?;
        let mut config = Self {
            path: file.clone(),
            dir: crate::spec::declaring_dir(&file),
            ..Self::default()
        };
        // Strict about the shape that carries hooks: a config whose hooks cannot be found must
        // not quietly run with none.
        if !root.is_object() {
            return Err(config.invalid("$", bad_type("a JSON object", &root)));
        }
        let model = match root.get("model_config_json") {
            Some(Value::String(inner)) => serde_json::from_str(inner).map_err(json)?,
            Some(other) => other.clone(),
            None => Value::Null,
        };
        if !(model.is_object() || model.is_null()) {
            return Err(config.invalid("model_config_json", bad_type("a JSON object", &model)));
        }
        match model.get("hooks") {
            None | Some(Value::Null) => {}
            Some(Value::Object(hooks)) => config.hooks(hooks)?,
            Some(other) => return Err(config.invalid(HOOKS, bad_type("a mapping", other))),
        }
        Ok(config)
    }

    fn hooks(&mut self, hooks: &Map<String, Value>) -> Result<()> {
        for (key, value) in hooks {
            let at = format!("{HOOKS}.{key}");
            match key.as_str() {
                "class_hooks" => {
                    let items = value
                        .as_array()
                        .ok_or_else(|| self.invalid(&at, bad_type("a list", value)))?;
                    for (i, item) in items.iter().enumerate() {
                        let spec = self.class_hook(&format!("{at}[{i}]"), item)?;
                        self.class_hooks.push(spec);
                    }
                }
                "require_confirmation_for_all" => {
                    self.require_confirmation_for_all =
                        fields::boolean(value).map_err(|e| self.invalid(&at, e))?;
                }
                "confirmation_tools" => {
                    let globs = fields::tools(value).map_err(|e| self.invalid(&at, e))?;
                    ToolMatcher::new(&globs).map_err(|e| self.invalid(&at, e.to_string()))?;
                    self.confirmation_tools = globs;
                }
                admin if crate::ADMIN_ONLY_KEYS.contains(&admin) => {
                    return Err(self.invalid(
                        &at,
                        format!(
                            "`{admin}` is honoured in admin hook files only (pass one with \
                             --admin); an agent config cannot set it"
                        ),
                    ));
                }
                other => return Err(self.invalid(&at, suggest::unknown_key(other, &HOOK_KEYS))),
            }
        }
        Ok(())
    }

    fn class_hook(&self, at: &str, item: &Value) -> Result<ClassHookSpec> {
        let map = item
            .as_object()
            .ok_or_else(|| self.invalid(at, bad_type("a mapping", item)))?;
        if let Some(key) = map
            .keys()
            .find(|k| !matches!(k.as_str(), "class" | "priority" | "params"))
        {
            let why = suggest::unknown_key(key, &["class", "priority", "params"]);
            return Err(self.invalid(&format!("{at}.{key}"), why));
        }
        let class = map
            .get("class")
            .ok_or_else(|| "missing".to_owned())
            .and_then(fields::text)
            .map_err(|e| self.invalid(&format!("{at}.class"), e))?;
        let priority = match map.get("priority") {
            None | Some(Value::Null) => 0,
            Some(p) => {
                fields::priority(p).map_err(|e| self.invalid(&format!("{at}.priority"), e))?
            }
        };
        Ok(ClassHookSpec {
            class,
            priority,
            params: map.get("params").cloned().unwrap_or(Value::Null),
            entry: at.to_owned(),
        })
    }

    fn invalid(&self, entry: &str, message: impl Into<String>) -> ConfigError {
        ConfigError::Invalid {
            path: self.path.clone(),
            entry: entry.to_owned(),
            message: message.into(),
        }
    }
}

fn bad_type(expected: &str, found: &Value) -> String {
    format!("must be {expected}, found {}", fields::type_name(found))
}
