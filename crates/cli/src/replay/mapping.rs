//! Claude Code tool calls as tollgate runtime tool calls (`docs/replay.md` has the table),
//! read off the one table [`tollgate_protocol::claude_code::TOOLS`] every part of tollgate
//! uses (`Bash {command, timeout}` → `bash_code_execute_tool {command, timeout_seconds}`,
//! `Read`/`Write`/`Edit`/`MultiEdit` → `read_file`/`write_file`, `Task`/`Agent` →
//! `call_agent`; anything else unchanged). The hook bridge writes rewrites back through the
//! same rows (`crate::hook::reverse`).
//!
//! A call whose input does not fit its row (`Bash` without a string `command`, `Task` without
//! `prompt`) is not dropped: it is dispatched as recorded, name and input unchanged, and the
//! reason travels with it ([`Mapped::not_mapped`]) so the report can say so.

use clap::ValueEnum;
use serde_json::{Map, Value};
use tollgate_protocol::claude_code;

/// Which tool names and inputs Claude Code calls are replayed under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum ToolNames {
    /// tollgate's runtime tools (`Bash` → `bash_code_execute_tool`, …); hooks written for a
    /// tollgate run apply unchanged.
    #[default]
    Tollgate,
    /// Claude Code's own names and inputs, verbatim (`Bash` with `{command, description}`), as
    /// Claude Code's PreToolUse hooks see them; hooks written for Claude Code apply unchanged.
    Claude,
}

/// A call as it is dispatched.
#[derive(Debug, Clone, PartialEq)]
pub struct Mapped {
    /// The tool name hooks match against.
    pub tool_name: String,
    /// The arguments hooks see.
    pub tool_input: Value,
    /// Why a tool the mapping knows was kept as recorded (`Task without a string
    /// `prompt``); `None` when it was mapped, or needs no mapping.
    pub not_mapped: Option<String>,
}

/// Maps one Claude Code call. Never fails: with `ToolNames::Tollgate`, a mapped tool that
/// lacks a field the mapping needs (`Bash` without a string `command`, a `timeout` that is not
/// a non-negative number, …) keeps its recorded name and input, and
/// [`Mapped::not_mapped`] names the field.
pub fn map_claude(name: &str, input: &Map<String, Value>, names: ToolNames) -> Mapped {
    let verbatim = |not_mapped| Mapped {
        tool_name: name.to_owned(),
        tool_input: Value::Object(input.clone()),
        not_mapped,
    };
    if names == ToolNames::Claude {
        return verbatim(None);
    }
    // Replay has no workspace: recorded paths are copied as they are.
    let input_value = Value::Object(input.clone());
    match claude_code::to_tollgate(name, &input_value, None) {
        Ok(Some((tool_name, tool_input))) => Mapped {
            tool_name: tool_name.to_owned(),
            tool_input,
            not_mapped: None,
        },
        Ok(None) => verbatim(None),
        Err(why) => verbatim(Some(why)),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    fn map(name: &str, input: Value, names: ToolNames) -> Mapped {
        let Value::Object(input) = input else {
            panic!("not an object")
        };
        map_claude(name, &input, names)
    }

    #[test]
    fn claude_calls_become_runtime_calls_unless_claude_names_are_asked_for() {
        let bash = json!({"command": "ls", "description": "list"});
        let mapped = map("Bash", bash.clone(), ToolNames::Tollgate);
        assert_eq!(
            (
                mapped.tool_name.as_str(),
                mapped.tool_input,
                mapped.not_mapped
            ),
            ("bash_code_execute_tool", json!({"command": "ls"}), None)
        );
        let mapped = map("Bash", bash.clone(), ToolNames::Claude);
        assert_eq!(
            (mapped.tool_name.as_str(), mapped.tool_input),
            ("Bash", bash)
        );
        let glob = json!({"pattern": "**/*.rs"});
        let mapped = map("Glob", glob.clone(), ToolNames::Tollgate);
        assert_eq!(
            (mapped.tool_name.as_str(), mapped.tool_input),
            ("Glob", glob)
        );
    }

    #[test]
    fn input_that_does_not_fit_is_kept_as_recorded_with_the_field_named() {
        let input = json!({"description": "d"});
        let mapped = map("Task", input.clone(), ToolNames::Tollgate);
        assert_eq!(
            (mapped.tool_name.as_str(), &mapped.tool_input),
            ("Task", &input)
        );
        let why = mapped.not_mapped.unwrap();
        assert!(why.starts_with("Task") && why.contains("`prompt`"), "{why}");
        assert_eq!(
            map("Bash", json!({"cmd": "ls"}), ToolNames::Claude).not_mapped,
            None
        );
    }
}
