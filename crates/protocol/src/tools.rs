//! Tool names: those of tollgate's reference runtime (`tollgate run`), and the Claude Code
//! tools that do the same jobs. Here, in the vocabulary, so that configuration checks can tell
//! a `tools` pattern that matches no tool without depending on the runtime (whose tests keep
//! it equal to [`RUNTIME_TOOLS`]).

/// The tools of the reference runtime, in the order it lists them.
pub const RUNTIME_TOOLS: [&str; 6] = [
    "bash_code_execute_tool",
    "sql_query",
    "sql_execute",
    "read_file",
    "write_file",
    "call_agent",
];

/// Claude Code's built-in tools, each with the runtime tool that does the same job, if any
/// (`tollgate replay` maps recorded calls the same way).
pub const CLAUDE_CODE_TOOLS: [(&str, Option<&str>); 14] = [
    ("Bash", Some("bash_code_execute_tool")),
    ("Read", Some("read_file")),
    ("Write", Some("write_file")),
    ("Edit", Some("write_file")),
    ("MultiEdit", Some("write_file")),
    ("Task", Some("call_agent")),
    ("Agent", Some("call_agent")),
    ("Glob", None),
    ("Grep", None),
    ("LS", None),
    ("NotebookEdit", None),
    ("WebFetch", None),
    ("WebSearch", None),
    ("TodoWrite", None),
];

/// The Claude Code tool `name`, with its runtime counterpart if it has one.
pub fn claude_code_tool(name: &str) -> Option<(&'static str, Option<&'static str>)> {
    CLAUDE_CODE_TOOLS
        .into_iter()
        .find(|(claude, _)| *claude == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_code_tools_map_to_runtime_tools() {
        assert_eq!(
            claude_code_tool("Bash"),
            Some(("Bash", Some("bash_code_execute_tool")))
        );
        assert_eq!(claude_code_tool("WebFetch"), Some(("WebFetch", None)));
        assert_eq!(claude_code_tool("bash"), None);
        for (_, runtime) in CLAUDE_CODE_TOOLS {
            assert!(
                runtime.is_none_or(|r| RUNTIME_TOOLS.contains(&r)),
                "{runtime:?}"
            );
        }
    }
}
