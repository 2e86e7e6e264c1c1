//! Who may decide a request.
//!
//! A list of approvers comes from the agent file and the admin files (`approval: {approvers:
//! [...]}`). Each entry is a name, optionally limited to some agents and tools (glob
//! patterns). When a request is filed, the names that apply to its agent and tool are stored
//! on the row, so every channel (the CLI, a web page, another process) checks the same list.
//! With no list configured, the local default is the operating-system user who runs the
//! agent.

use globset::{Glob, GlobSet, GlobSetBuilder};

/// One approver entry.
#[derive(Debug, Clone)]
pub struct ApproverRule {
    name: String,
    agents: Option<GlobSet>,
    tools: Option<GlobSet>,
}

/// An approver entry that could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("approver `{name}`: bad pattern `{pattern}`: {reason}")]
pub struct RuleError {
    /// The entry's name.
    pub name: String,
    /// The pattern.
    pub pattern: String,
    /// Why it is not a glob.
    pub reason: String,
}

impl ApproverRule {
    /// An approver for every agent and tool.
    pub fn anyone(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            agents: None,
            tools: None,
        }
    }

    /// An approver limited to agents matching `agents` and tools matching `tools` (glob
    /// patterns; an empty list means every one).
    ///
    /// # Errors
    /// A pattern that is not a valid glob.
    pub fn new(
        name: impl Into<String>,
        agents: &[String],
        tools: &[String],
    ) -> Result<Self, RuleError> {
        let name = name.into();
        Ok(Self {
            agents: set(&name, agents)?,
            tools: set(&name, tools)?,
            name,
        })
    }

    /// The approver's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    fn covers(&self, agent: &str, tool: &str) -> bool {
        self.agents.as_ref().is_none_or(|s| s.is_match(agent))
            && self.tools.as_ref().is_none_or(|s| s.is_match(tool))
    }
}

fn set(name: &str, patterns: &[String]) -> Result<Option<GlobSet>, RuleError> {
    if patterns.is_empty() {
        return Ok(None);
    }
    let mut builder = GlobSetBuilder::new();
    for pattern in patterns {
        let glob = Glob::new(pattern).map_err(|e| RuleError {
            name: name.to_owned(),
            pattern: pattern.clone(),
            reason: e.kind().to_string(),
        })?;
        builder.add(glob);
    }
    builder.build().map(Some).map_err(|e| RuleError {
        name: name.to_owned(),
        pattern: patterns.join(", "),
        reason: e.to_string(),
    })
}

/// The configured approvers. The default (nothing configured) is the local user.
#[derive(Debug, Clone, Default)]
pub struct Approvers {
    rules: Vec<ApproverRule>,
    configured: bool,
}

impl Approvers {
    /// A configured list of entries (in any order; a name may appear in several entries).
    pub fn new(rules: Vec<ApproverRule>) -> Self {
        Self {
            rules,
            configured: true,
        }
    }

    /// A configured empty list (`approvers: []`): nobody may approve, asks are denied.
    pub fn nobody() -> Self {
        Self::new(Vec::new())
    }

    /// Whether a list is configured (else the local user decides).
    pub fn is_configured(&self) -> bool {
        self.configured
    }

    /// The names that may decide a call of `tool` by `agent`. With no entry configured:
    /// `local_default` (the OS user). May be empty when entries exist but none covers the
    /// call: then nobody can approve it, and it expires.
    pub fn for_call(&self, agent: &str, tool: &str, local_default: &str) -> Vec<String> {
        if !self.configured {
            return vec![local_default.to_owned()];
        }
        let mut names: Vec<String> = Vec::new();
        for rule in self.rules.iter().filter(|r| r.covers(agent, tool)) {
            if !names.iter().any(|n| n == &rule.name) {
                names.push(rule.name.clone());
            }
        }
        names
    }
}

/// The operating-system user running this process (`uid-<n>` when it has no name).
pub fn os_user() -> String {
    let uid = nix::unistd::getuid();
    match nix::unistd::User::from_uid(uid) {
        Ok(Some(user)) => user.name,
        _ => format!("uid-{uid}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_list_means_the_local_user() {
        assert_eq!(Approvers::default().for_call("a", "t", "alice"), ["alice"]);
    }

    #[test]
    fn entries_are_limited_by_agent_and_tool() {
        let approvers = Approvers::new(vec![
            ApproverRule::anyone("ops-lead"),
            ApproverRule::new("dba", &[], &["sql_*".into()]).unwrap(),
            ApproverRule::new("dev", &["coder*".into()], &[]).unwrap(),
        ]);
        assert_eq!(
            approvers.for_call("ops", "sql_execute", "alice"),
            ["ops-lead", "dba"]
        );
        assert_eq!(
            approvers.for_call("coder-1", "bash_code_execute_tool", "alice"),
            ["ops-lead", "dev"]
        );
        let narrow = Approvers::new(vec![
            ApproverRule::new("dba", &[], &["sql_*".into()]).unwrap(),
        ]);
        assert!(narrow.for_call("ops", "write_file", "alice").is_empty());
        assert!(Approvers::nobody().for_call("ops", "t", "alice").is_empty());
    }

    #[test]
    fn a_bad_pattern_names_the_entry() {
        let err = ApproverRule::new("dba", &[], &["sql_[".into()]).unwrap_err();
        assert_eq!(err.name, "dba");
        assert_eq!(err.pattern, "sql_[");
    }
}
