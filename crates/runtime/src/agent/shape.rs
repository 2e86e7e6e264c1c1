//! What an agent file is, and the checks made on its raw document before its fields are read:
//! agent file or hook file, admin-only keys, the keys of `model_config_json`, and serde
//! messages without the values they quote.

use std::path::Path;

use serde_json::Value;
use tollgate_config::Warning;

/// The top-level keys of an agent file.
const AGENT_KEYS: [&str; 19] = [
    "name",
    "description",
    "model",
    "base_url",
    "api_key_env",
    "system_prompt",
    "tools",
    "max_turns",
    "workspace",
    "database",
    "seed",
    "bash_timeout_seconds",
    "metadata",
    "hooks",
    "skills",
    "subagents",
    "sandbox",
    "approval",
    "model_config_json",
];

/// Which of tollgate's YAML/JSON configuration files a parsed document looks like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigShape {
    /// An agent file: a mapping with a key only agent files have (`name`, `model`, `tools`,
    /// `model_config_json`, …), whose `hooks` (if any) is a list of files.
    Agent,
    /// A hook file: a mapping whose `hooks` maps events to hooks, or with only hook-file keys.
    HookFile,
    /// Neither (not a mapping, or none of either's keys).
    Neither,
}

/// The shape of a parsed configuration document: how `tollgate check` tells an agent file from
/// a hook file, and how `--hooks` and `--agent` notice they were given the other kind.
pub fn config_shape(value: &Value) -> ConfigShape {
    let Value::Object(map) = value else {
        return ConfigShape::Neither;
    };
    if map.get("hooks").is_some_and(Value::is_object) {
        return ConfigShape::HookFile;
    }
    let hook_file_keys = ["hooks", "network", "standalone", "sandbox", "approval"];
    if map
        .keys()
        .any(|k| AGENT_KEYS.contains(&k.as_str()) && !hook_file_keys.contains(&k.as_str()))
    {
        return ConfigShape::Agent;
    }
    if !map.is_empty() && map.keys().all(|k| hook_file_keys.contains(&k.as_str())) {
        return ConfigShape::HookFile;
    }
    ConfigShape::Neither
}

/// [`config_shape`] of the file at `path`; [`ConfigShape::Neither`] when it cannot be read or
/// parsed (its loader then says why).
pub fn config_shape_of(path: &Path) -> ConfigShape {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|text| tollgate_config::yaml::parse(&text).ok())
        .map_or(ConfigShape::Neither, |value| config_shape(&value))
}

/// An agent file has the [`ConfigShape::Agent`] shape (without `name`, as an agent row exported
/// from a database, it is named after the file). Anything else is refused without showing any
/// of it: the path may reach any file (`~/.ssh/id_rsa`, `/etc/shadow`, whose lines read as YAML
/// keys), and serde's errors would name its keys.
pub(super) fn recognised(value: &Value) -> Result<(), String> {
    match (config_shape(value), value) {
        (ConfigShape::Agent, _) => Ok(()),
        (ConfigShape::HookFile, _) => Err(
            "not an agent file: it is a hook file (its `hooks` maps events to hooks); pass it \
             with --hooks"
                .into(),
        ),
        (ConfigShape::Neither, Value::Object(map)) => Err(format!(
            "not an agent file: none of an agent file's keys (`name`, `model`, `tools`, \
             `model_config_json`, …) among its {} top-level keys (the keys are not shown: the \
             file may be anything)",
            map.len()
        )),
        (ConfigShape::Neither, _) => {
            Err("not an agent file: the top level is not a mapping".into())
        }
    }
}

/// `network` and `standalone` are admin hook file keys: say so rather than "unknown field".
/// (`sandbox` is an agent file key too, for the shell tool; its `off` is refused where parsed.)
pub(super) fn admin_only(value: &Value) -> Result<(), String> {
    let key = tollgate_config::ADMIN_ONLY_KEYS
        .into_iter()
        .find(|key| *key != "sandbox" && value.get(key).is_some());
    match key {
        Some(key) => Err(format!(
            "{key}: `{key}` is honoured in admin hook files only (pass one with --admin); an \
             agent file cannot set it{}",
            if key == "network" {
                " (the shell tool's network is `sandbox: {network: true}`)"
            } else {
                ""
            }
        )),
        None => Ok(()),
    }
}

/// Keys of `model_config_json` other than `hooks`: a near miss of `hooks` is an error (a
/// misspelt key must not quietly leave the agent without its policy); anything else is the
/// model's own configuration, which tollgate does not use, and is ignored with a warning.
pub(super) fn model_config_keys(value: &Value, file: &str) -> Result<Vec<Warning>, String> {
    let model = match value.get("model_config_json") {
        Some(Value::Object(model)) => model.clone(),
        // As stored in a database column: a JSON text (AgentConfig::parse reports bad JSON).
        Some(Value::String(text)) => match serde_json::from_str(text) {
            Ok(Value::Object(model)) => model,
            _ => return Ok(Vec::new()),
        },
        _ => return Ok(Vec::new()),
    };
    let mut warnings = Vec::new();
    for key in model.keys().filter(|k| *k != "hooks") {
        // A near miss of `hooks` (`hook`, `Hooks`, `hoks`, `_hooks`); `webhook_url` is not one.
        let folded: String = key
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .collect::<String>()
            .to_lowercase();
        if strsim::levenshtein(&folded, "hooks") <= 1 {
            return Err(format!(
                "model_config_json.{key}: unknown key; did you mean `hooks`? (the agent's hooks \
                 are read from `model_config_json.hooks` only)"
            ));
        }
        warnings.push(Warning::new(
            file,
            format!("model_config_json.{key}"),
            "not used by tollgate (only `model_config_json.hooks` is); ignored",
        ));
    }
    Ok(warnings)
}

/// serde's message without the value it found: `invalid type: string "…", expected a
/// sequence` becomes `invalid type: string, expected a sequence` (the value may be a secret
/// the path reached); `unknown variant `…`` loses the variant the same way.
pub(super) fn without_values(message: &str) -> String {
    for prefix in ["invalid type: ", "invalid value: "] {
        if let Some(rest) = message.strip_prefix(prefix)
            && let Some(at) = rest.rfind(", expected ")
        {
            // `string "…"`, `integer `5``, `floating point `1.5``, or a bare `map`, `null`, …
            let found = &rest[..at];
            let value_at = [" \"", " `"].iter().filter_map(|q| found.find(q)).min();
            let kind = value_at.map_or(found, |end| &found[..end]);
            return format!("{prefix}{kind}{}", &rest[at..]);
        }
    }
    if let Some(rest) = message.strip_prefix("unknown variant `")
        && let Some(at) = rest.rfind(", expected ")
    {
        return format!("unknown variant{}", &rest[at..]);
    }
    message.to_owned()
}
