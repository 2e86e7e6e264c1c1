//! Tool names: those of tollgate's reference runtime (`tollgate run`), and the Claude Code
//! tools that do the same jobs ([`crate::claude_code`] maps calls between them). Here, in the vocabulary, so that configuration checks can tell
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

/// Claude Code's built-in tools and their runtime counterparts: the table lives with the rest
/// of the mapping in [`crate::claude_code`].
pub use crate::claude_code::{CLAUDE_CODE_TOOLS, claude_code_tool};

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
