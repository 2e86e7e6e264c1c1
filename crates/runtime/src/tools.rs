//! The agent's tools: shell, SQLite and files, each confined to the run's workspace.
//!
//! | name | arguments | result |
//! |---|---|---|
//! | `bash_code_execute_tool` | `{"command": string, "timeout_seconds"?: 1–600}` | `{"exit_code", "stdout", "stderr"}`; a non-zero exit is a failure |
//! | `sql_query` | `{"sql": string}` (one statement; the database is opened read-only) | `{"columns", "rows", "truncated", "cut"?}`, capped while read (see [`sql`]) |
//! | `sql_execute` | `{"sql": string}` (one or more statements) | `{"rows_affected"}` |
//! | `read_file` | `{"path": string}` relative to the workspace | the text |
//! | `write_file` | `{"path": string, "content": string}` | `{"path", "bytes"}` |
//! | `call_agent` | `{"agent": string, "task": string}` | the sub-agent's answer (see [`crate::session`]) |

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;
use tollgate_core::BoxFuture;

use crate::model::ToolSpec;

mod bash;
mod files;
pub mod sql;

pub use bash::{BashTool, ShellContainment};
pub use files::{ReadFileTool, WriteFileTool};
pub use sql::{SqlExecuteTool, SqlQueryTool};

/// The name of the bash tool (the shell analyzer reviews its `command`).
pub const BASH_TOOL: &str = "bash_code_execute_tool";
/// The name of the delegation tool.
pub const CALL_AGENT_TOOL: &str = "call_agent";
/// Every built-in tool name.
pub const BUILTIN_TOOLS: [&str; 6] = [
    BASH_TOOL,
    "sql_query",
    "sql_execute",
    "read_file",
    "write_file",
    CALL_AGENT_TOOL,
];

/// Why a tool call failed. The model observes the message; `post_tool_use_failure` fires.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ToolError(pub String);

impl ToolError {
    /// A failure with this message.
    pub fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }
}

/// What every tool of a run shares.
#[derive(Debug, Clone)]
pub struct ToolEnv {
    /// The directory files are confined to, and the shell's working directory.
    pub workspace: PathBuf,
    /// The SQLite database file, when the agent has one.
    pub database: Option<PathBuf>,
    /// The deadline of one shell command (its default and its maximum) and of one SQL call
    /// (`bash_timeout_seconds` in the agent file).
    pub tool_timeout: Duration,
}

/// One tool.
pub trait Tool: Send + Sync {
    /// Its name and argument schema, as announced to the model.
    fn spec(&self) -> ToolSpec;

    /// Runs the call with its final arguments.
    ///
    /// # Cancel safety
    /// The future may be dropped (the user cancelled): a running process is killed, nothing
    /// else is left half-done beyond what the call already wrote.
    fn call<'a>(
        &'a self,
        args: &'a Value,
        env: &'a ToolEnv,
    ) -> BoxFuture<'a, Result<Value, ToolError>>;
}

/// Builds the built-in tool `name` (not `call_agent`, which the session handles itself); the
/// shell tool is `bash`.
pub fn builtin(name: &str, bash: &BashTool) -> Option<Box<dyn Tool>> {
    Some(match name {
        BASH_TOOL => Box::new(bash.clone()),
        "sql_query" => Box::new(SqlQueryTool),
        "sql_execute" => Box::new(SqlExecuteTool),
        "read_file" => Box::new(ReadFileTool),
        "write_file" => Box::new(WriteFileTool),
        _ => return None,
    })
}

/// The string argument `key`, or a failure naming it.
pub(crate) fn string_arg<'a>(args: &'a Value, key: &str) -> Result<&'a str, ToolError> {
    args.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::new(format!("missing string argument `{key}`")))
}

/// The text the model observes for a tool result.
pub fn observation_text(result: &Value) -> String {
    match result {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Configuration checks name the runtime's tools from tollgate-protocol, which cannot
    /// depend on this crate: the two lists must not drift apart.
    #[test]
    fn the_builtin_tools_are_the_protocols_runtime_tools() {
        assert_eq!(BUILTIN_TOOLS, tollgate_protocol::tools::RUNTIME_TOOLS);
        let bash = BashTool::new(ShellContainment::Off);
        for name in BUILTIN_TOOLS {
            match builtin(name, &bash) {
                Some(tool) => assert_eq!(tool.spec().name, name),
                None => assert_eq!(name, CALL_AGENT_TOOL),
            }
        }
    }
}
