//! `tools` patterns that can match no tool: a guard written for another runtime (`tools:
//! Bash`, Claude Code's name) or with Claude Code's permission-rule syntax (`Bash(rm *)`) loads
//! without complaint and never runs.
//!
//! [`unmatched_tools`] checks the patterns of tool events against the names of the tools a run
//! can have ([`KnownTools`]: the reference runtime's, plus whatever the caller adds: an agent's
//! tools, a host's custom tools). A pattern that matches none of them is a warning; the hook
//! still loads. Patterns with `__` (MCP-style `server__tool` names, `connector__*`) name tools
//! that servers add at run time and are not checked.
//!
//! ```text
//! tools: Bash         → `Bash` matches none of this runtime's tools (bash_code_execute_tool,
//!                       …); Claude Code's `Bash` is `bash_code_execute_tool` here
//! tools: Bash(rm *)   → … plus: `tools` matches tool names, not arguments
//! tools: sql_querry   → … (did you mean `sql_query`?)
//! ```

use std::collections::BTreeSet;

use serde_json::json;
use tollgate_core::ToolMatcher;
use tollgate_handlers::claude::Matcher;
use tollgate_protocol::Event;
use tollgate_protocol::claude_code::{aliases, to_claude};
use tollgate_protocol::tools::{RUNTIME_TOOLS, claude_code_tool};

use crate::spec::{Dialect, HookSpec};
use crate::suggest;
use crate::warning::Warning;

/// Most names a warning lists.
const MAX_LISTED: usize = 12;

/// The tool names a run can have: the reference runtime's, plus any added with
/// [`KnownTools::with`].
#[derive(Debug, Clone)]
pub struct KnownTools {
    names: Vec<String>,
}

impl Default for KnownTools {
    fn default() -> Self {
        Self::runtime()
    }
}

impl KnownTools {
    /// The reference runtime's tools ([`RUNTIME_TOOLS`]).
    pub fn runtime() -> Self {
        Self {
            names: RUNTIME_TOOLS.iter().map(|&n| n.to_owned()).collect(),
        }
    }

    /// These plus `names` (an agent's tools, a host's custom tools); repeats are dropped.
    pub fn with<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        for name in names {
            let name = name.into();
            if !self.names.contains(&name) {
                self.names.push(name);
            }
        }
        self
    }

    /// The names, in the order added.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    fn listed(&self) -> String {
        let mut listed: Vec<&str> = self.names.iter().map(String::as_str).collect();
        if listed.len() > MAX_LISTED {
            listed.truncate(MAX_LISTED);
            listed.push("…");
        }
        listed.join(", ")
    }
}

/// One warning for each `tools` pattern of a tool-event hook in `specs` that matches none of
/// `known` (patterns with `__` aside), at the entry's `tools` (or, for Claude Code's shape, its
/// `matcher`). Sub-agent events match `tools` against agent types and are not checked.
pub fn unmatched_tools(specs: &[HookSpec], known: &KnownTools) -> Vec<Warning> {
    let mut seen = BTreeSet::new();
    let mut warnings = Vec::new();
    for spec in specs.iter().filter(|s| is_tool_event(&s.event)) {
        if let Dialect::ClaudeCode(claude) = &spec.dialect {
            let at = tools_path(&spec.entry);
            if let Some(message) = unmatched_matcher(claude.matcher.as_deref(), known)
                && seen.insert((spec.file.clone(), at.clone(), String::new()))
            {
                warnings.push(Warning::new(&spec.file, at, message));
            }
            continue;
        }
        let Some(patterns) = &spec.tools else {
            continue;
        };
        let unmatched: Vec<&String> = patterns
            .iter()
            .filter(|p| !p.contains("__") && !matches_any(p, known))
            .collect();
        let none_run = unmatched.len() == patterns.len();
        for pattern in unmatched {
            let at = tools_path(&spec.entry);
            // The inner hooks of one Claude Code group share its matcher: one warning.
            if seen.insert((spec.file.clone(), at.clone(), pattern.clone())) {
                warnings.push(Warning::new(
                    &spec.file,
                    at,
                    message(pattern, known, none_run),
                ));
            }
        }
    }
    warnings
}

/// The names Claude Code gives the known tools' calls (`write_file` is `Write`, `Edit` or
/// `MultiEdit` by its arguments, `call_agent` `Agent` or `Task`).
fn claude_names(known: &KnownTools) -> Vec<String> {
    let mut names = Vec::new();
    for name in known.names() {
        let shapes = [json!({}), json!({"old_string": ""}), json!({"edits": []})];
        for input in shapes {
            let (claude, _) = to_claude(name, &input, None);
            for n in std::iter::once(claude.as_str()).chain(aliases(&claude).iter().copied()) {
                if !names.iter().any(|k| k == n) {
                    names.push(n.to_owned());
                }
            }
        }
    }
    names
}

/// A Claude Code `matcher` that matches none of the known tools as Claude Code names them.
/// MCP-style matchers (with `__`) name tools servers add at run time and are not checked.
fn unmatched_matcher(matcher: Option<&str>, known: &KnownTools) -> Option<String> {
    let text = matcher?;
    let compiled = Matcher::parse(Some(text)).ok()?;
    let names = claude_names(known);
    if text.contains("__") || compiled.matches_any(names.iter().map(String::as_str)) {
        return None;
    }
    let mut message = format!(
        "`{text}` matches none of this runtime's tools as Claude Code names them ({})",
        names.join(", ")
    );
    let missing: Vec<&str> = text
        .split('|')
        .filter(|n| claude_code_tool(n).is_some_and(|(_, ours)| ours.is_none()))
        .collect();
    if !missing.is_empty() {
        message.push_str(&format!(
            "; Claude Code's {} {} no counterpart here",
            missing
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", "),
            if missing.len() == 1 { "has" } else { "have" }
        ));
    }
    message.push_str("; as written the hook never runs");
    Some(message)
}

fn is_tool_event(event: &Event) -> bool {
    matches!(
        event,
        Event::PreToolUse
            | Event::PostToolUse
            | Event::PostToolUseFailure
            | Event::PostToolUseCancelled
            | Event::ApprovalCorrection
            | Event::PermissionRequest
    )
}

/// A pattern that does not compile was refused when its entry was read; were one to get
/// here, it is not this check's to report.
fn matches_any(pattern: &str, known: &KnownTools) -> bool {
    ToolMatcher::one(pattern).map_or(true, |m| known.names.iter().any(|n| m.is_match(n)))
}

/// `hooks.PreToolUse[0].tools`, or `hooks.PreToolUse[0].matcher` for an inner hook of a Claude
/// Code group (`hooks.PreToolUse[0].hooks[1]`).
fn tools_path(entry: &str) -> String {
    match entry.find(".hooks[") {
        Some(group) => format!("{}.matcher", &entry[..group]),
        None => format!("{entry}.tools"),
    }
}

fn message(pattern: &str, known: &KnownTools, none_run: bool) -> String {
    let mut text = format!(
        "`{pattern}` matches none of this runtime's tools ({})",
        known.listed()
    );
    // `Bash(rm *)`: Claude Code's permission-rule syntax, a tool name and an argument pattern.
    let rule = pattern
        .strip_suffix(')')
        .and_then(|p| p.split_once('('))
        .filter(|(tool, _)| !tool.is_empty());
    let tool = rule.map_or(pattern, |(tool, _)| tool);
    match claude_code_tool(tool) {
        Some((claude, Some(ours))) => {
            text.push_str(&format!("; Claude Code's `{claude}` is `{ours}` here"));
        }
        Some((claude, None)) => {
            text.push_str(&format!(
                "; `{claude}` is a Claude Code tool with no counterpart here"
            ));
        }
        None => {
            let names: Vec<&str> = known.names.iter().map(String::as_str).collect();
            if let Some(meant) = suggest::closest(tool, &names) {
                text.push_str(&format!(" (did you mean `{meant}`?)"));
            }
        }
    }
    if let Some((_, arguments)) = rule {
        text.push_str(&format!(
            "; `tools` matches tool names only, never arguments: match the tool here and test \
             its arguments (`{arguments}`) in the hook itself (its script reads the call from \
             the payload; an `llm` hook states it as its condition)"
        ));
    }
    text.push_str(if none_run {
        "; as written the hook never runs"
    } else {
        "; this pattern never matches"
    });
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_point_at_tools_or_the_groups_matcher() {
        assert_eq!(
            tools_path("hooks.PreToolUse[0]"),
            "hooks.PreToolUse[0].tools"
        );
        assert_eq!(
            tools_path("hooks.PreToolUse[2].hooks[1]"),
            "hooks.PreToolUse[2].matcher"
        );
    }

    #[test]
    fn globs_match_when_any_known_name_does() {
        let known = KnownTools::runtime().with(["deploy"]);
        for pattern in [
            "sql_*",
            "*",
            "bash_code_execute_tool",
            "deploy",
            "{read,write}_file",
        ] {
            assert!(matches_any(pattern, &known), "{pattern}");
        }
        for pattern in ["Bash", "bash", "Bash(rm *)", "sql", "mcp_*"] {
            assert!(!matches_any(pattern, &known), "{pattern}");
        }
    }

    #[test]
    fn the_list_is_capped() {
        let known = KnownTools::runtime().with((0..20).map(|i| format!("t{i}")));
        assert!(known.listed().ends_with("t5, …"), "{}", known.listed());
    }
}
