//! `approval:` in agent files and admin hook files: how long a call waits for a human and who
//! may decide it.
//!
//! ```yaml
//! approval:
//!   timeout_seconds: 1800          # 1..=604800; default 1800 (30 minutes); then it expires
//!   approvers:                     # default: the operating-system user running the agent
//!     - ops-lead                   # may decide every call
//!     - name: dba                  # may decide calls of these tools only
//!       tools: ["sql_*"]
//!     - name: alice
//!       agents: ["coder*"]         # … of these agents only
//! ```
//!
//! An admin file's settings win over the agent file's, key by key (the operator decides who
//! approves). A malformed entry is skipped with a warning; it never adds an approver.

use serde_json::Value;

use crate::{fields, suggest};

/// Longest `timeout_seconds`: a week.
pub const MAX_APPROVAL_TIMEOUT_SECS: u64 = 604_800;

/// One `approvers` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApproverEntry {
    /// Who (as they name themselves to `tollgate approvals approve --as`, or the OS user).
    pub name: String,
    /// Globs of agent names this approver covers; empty: every agent.
    pub agents: Vec<String>,
    /// Globs of tool names this approver covers; empty: every tool.
    pub tools: Vec<String>,
}

/// `approval:` as read from one file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApprovalSettings {
    /// `timeout_seconds`, when set.
    pub timeout_seconds: Option<u64>,
    /// `approvers`, when set (an empty list means nobody may approve: asks are denied).
    pub approvers: Option<Vec<ApproverEntry>>,
}

impl ApprovalSettings {
    /// `other`'s keys over this one's (admin over agent).
    pub fn overridden_by(&self, other: &ApprovalSettings) -> ApprovalSettings {
        ApprovalSettings {
            timeout_seconds: other.timeout_seconds.or(self.timeout_seconds),
            approvers: other.approvers.clone().or_else(|| self.approvers.clone()),
        }
    }
}

/// Parses an `approval:` value; `warn(entry, message)` gets every part that was skipped.
pub fn parse(value: &Value, warn: &mut dyn FnMut(String, String)) -> ApprovalSettings {
    let mut settings = ApprovalSettings::default();
    let Some(map) = value.as_object() else {
        warn(
            "approval".into(),
            format!(
                "must be a mapping with `timeout_seconds` and `approvers`, found {}; ignored",
                fields::type_name(value)
            ),
        );
        return settings;
    };
    for (key, value) in map {
        match key.as_str() {
            "timeout_seconds" => match value.as_u64() {
                Some(n) if (1..=MAX_APPROVAL_TIMEOUT_SECS).contains(&n) => {
                    settings.timeout_seconds = Some(n);
                }
                _ => warn(
                    "approval.timeout_seconds".into(),
                    format!(
                        "must be a whole number of seconds from 1 to {MAX_APPROVAL_TIMEOUT_SECS}; ignored"
                    ),
                ),
            },
            "approvers" => settings.approvers = Some(approvers(value, warn)),
            other => warn(
                format!("approval.{other}"),
                format!(
                    "{}; ignored",
                    suggest::unknown_key(other, &["timeout_seconds", "approvers"])
                ),
            ),
        }
    }
    settings
}

fn approvers(value: &Value, warn: &mut dyn FnMut(String, String)) -> Vec<ApproverEntry> {
    let Some(items) = value.as_array() else {
        warn(
            "approval.approvers".into(),
            "must be a list of names or {name, agents, tools}; nobody may approve".into(),
        );
        return Vec::new();
    };
    let mut entries = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let at = format!("approval.approvers[{i}]");
        match entry(item) {
            Ok(entry) => entries.push(entry),
            Err(message) => warn(at, format!("{message}; skipped")),
        }
    }
    entries
}

fn entry(item: &Value) -> Result<ApproverEntry, String> {
    let name_of = |v: &Value| {
        v.as_str()
            .map(str::trim)
            .filter(|s| !s.is_empty() && !s.chars().any(char::is_control))
            .map(str::to_owned)
            .ok_or_else(|| "`name` must be a non-empty name without control characters".to_owned())
    };
    match item {
        Value::String(_) => Ok(ApproverEntry {
            name: name_of(item)?,
            agents: Vec::new(),
            tools: Vec::new(),
        }),
        Value::Object(map) => {
            let mut entry = ApproverEntry {
                name: name_of(map.get("name").unwrap_or(&Value::Null))?,
                agents: Vec::new(),
                tools: Vec::new(),
            };
            for (key, value) in map {
                match key.as_str() {
                    "name" => {}
                    "agents" => entry.agents = globs(key, value)?,
                    "tools" => entry.tools = globs(key, value)?,
                    other => {
                        return Err(suggest::unknown_key(other, &["name", "agents", "tools"]));
                    }
                }
            }
            Ok(entry)
        }
        other => Err(format!(
            "must be a name or {{name, agents, tools}}, found {}",
            fields::type_name(other)
        )),
    }
}

fn globs(key: &str, value: &Value) -> Result<Vec<String>, String> {
    let list = match value {
        Value::String(s) => vec![s.clone()],
        Value::Array(items) => items
            .iter()
            .map(|v| v.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| format!("`{key}` must be a list of glob patterns"))?,
        _ => return Err(format!("`{key}` must be a list of glob patterns")),
    };
    for pattern in &list {
        globset::Glob::new(pattern)
            .map_err(|e| format!("`{key}`: bad pattern `{pattern}`: {}", e.kind()))?;
    }
    Ok(list)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(value: Value) -> (ApprovalSettings, Vec<(String, String)>) {
        let mut warnings = Vec::new();
        let settings = parse(&value, &mut |e, m| warnings.push((e, m)));
        (settings, warnings)
    }

    #[test]
    fn names_and_rules_are_read() {
        let (settings, warnings) = read(json!({
            "timeout_seconds": 600,
            "approvers": ["ops-lead", {"name": "dba", "tools": ["sql_*"]}, {"name": "al", "agents": "coder*"}]
        }));
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(settings.timeout_seconds, Some(600));
        let approvers = settings.approvers.unwrap();
        assert_eq!(approvers[0].name, "ops-lead");
        assert_eq!(approvers[1].tools, ["sql_*"]);
        assert_eq!(approvers[2].agents, ["coder*"]);
    }

    #[test]
    fn bad_parts_are_skipped_and_never_add_an_approver() {
        let (settings, warnings) = read(json!({
            "timeout_seconds": 0,
            "approvers": [{"name": "dba", "tool": ["sql_*"]}, 7, "", {"name": "x", "tools": ["a["]}],
            "timeout": 5
        }));
        assert_eq!(settings.timeout_seconds, None);
        assert_eq!(settings.approvers, Some(Vec::new()));
        let entries: Vec<&str> = warnings.iter().map(|(e, _)| e.as_str()).collect();
        assert_eq!(
            entries,
            [
                "approval.approvers[0]",
                "approval.approvers[1]",
                "approval.approvers[2]",
                "approval.approvers[3]",
                "approval.timeout",
                "approval.timeout_seconds"
            ]
        );
        assert!(
            warnings[0].1.contains("did you mean `tools`"),
            "{:?}",
            warnings[0]
        );
    }

    #[test]
    fn admin_keys_win_one_by_one() {
        let agent = ApprovalSettings {
            timeout_seconds: Some(60),
            approvers: Some(vec![ApproverEntry {
                name: "dev".into(),
                agents: vec![],
                tools: vec![],
            }]),
        };
        let admin = ApprovalSettings {
            timeout_seconds: None,
            approvers: Some(Vec::new()),
        };
        let merged = agent.overridden_by(&admin);
        assert_eq!(merged.timeout_seconds, Some(60));
        assert_eq!(merged.approvers, Some(Vec::new()));
    }
}
