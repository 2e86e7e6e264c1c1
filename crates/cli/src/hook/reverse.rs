//! Rewritten tollgate arguments back in the host's field names, for `updatedInput`.
//!
//! The replay mapping (`crate::replay::mapping`) turns a host call into a runtime call
//! (`Bash {command, description}` → `bash_code_execute_tool {command}`). When hooks rewrite
//! the runtime call, the host needs the rewrite in its own names: this module is the thin
//! reverse of that mapping, field by field. It starts from the host's input as sent (so
//! `description`, `run_in_background` and other fields the mapping drops are kept) and writes
//! only the fields the rewrite changed:
//!
//! | tollgate field | Claude Code field | Codex field |
//! |---|---|---|
//! | `bash_code_execute_tool.command` | `Bash.command` | `Bash.command` |
//! | `bash_code_execute_tool.timeout_seconds` | `Bash.timeout` (× 1000, ms) | — |
//! | `read_file.path` | `Read.file_path` | — |
//! | `write_file.path`, `.content` | `Write.file_path`, `.content`; `Edit.file_path`, `.new_string` | — |
//! | `write_file.old_string`, `.replace_all`, `.edits` | `Edit.…`, `MultiEdit.edits` | — |
//! | `call_agent.agent`, `.task` | `Task`/`Agent` `.subagent_type`, `.prompt` | — |
//!
//! A tool the mapping leaves alone (`Glob`, MCP tools, Codex's `apply_patch`) is rewritten as
//! is. A rewrite of a field with no host counterpart (a `timeout_seconds` for Codex's shell,
//! the `content` a `MultiEdit` derives from its `edits`) cannot be expressed: it is an error,
//! and the bridge denies the call rather than run something no hook approved.

use serde_json::Value;

use super::host::{HostTool, Protocol};

/// One field of a mapped tool: its tollgate name, its host name, and the factor from ours to
/// theirs (1000 for seconds → milliseconds).
struct Field {
    ours: &'static str,
    theirs: &'static str,
    factor: u64,
}

const fn field(ours: &'static str, theirs: &'static str) -> Field {
    Field {
        ours,
        theirs,
        factor: 1,
    }
}

const CLAUDE_BASH: [Field; 2] = [
    field("command", "command"),
    Field {
        ours: "timeout_seconds",
        theirs: "timeout",
        factor: 1000,
    },
];
const CODEX_BASH: [Field; 1] = [field("command", "command")];
const READ: [Field; 1] = [field("path", "file_path")];
const WRITE: [Field; 2] = [field("path", "file_path"), field("content", "content")];
const EDIT: [Field; 4] = [
    field("path", "file_path"),
    field("content", "new_string"),
    field("old_string", "old_string"),
    field("replace_all", "replace_all"),
];
const MULTI_EDIT: [Field; 2] = [field("path", "file_path"), field("edits", "edits")];
const AGENT: [Field; 2] = [field("agent", "subagent_type"), field("task", "prompt")];

fn fields(protocol: Protocol, host_tool: &str) -> &'static [Field] {
    match (protocol, host_tool) {
        (Protocol::ClaudeCode, "Bash") => &CLAUDE_BASH,
        (Protocol::Codex, "Bash") => &CODEX_BASH,
        (_, "Read") => &READ,
        (_, "Write") => &WRITE,
        (_, "Edit") => &EDIT,
        (_, "MultiEdit") => &MULTI_EDIT,
        (_, "Task" | "Agent") => &AGENT,
        _ => &[],
    }
}

/// The host's input for `tool` after hooks rewrote its tollgate arguments to `rewritten`.
///
/// # Errors
/// `rewritten` is not an object, or changes a field the host's tool has no counterpart for
/// (the message names it).
pub fn to_host(protocol: Protocol, tool: &HostTool, rewritten: &Value) -> Result<Value, String> {
    let Value::Object(rewritten) = rewritten else {
        return Err("hooks rewrote the arguments to something that is no JSON object".into());
    };
    let renamed = tool.mapped.tool_name != tool.name;
    let (Value::Object(host), Value::Object(before)) = (&tool.input, &tool.mapped.tool_input)
    else {
        return Ok(Value::Object(rewritten.clone()));
    };
    if !renamed {
        // The mapping left the call as sent: its fields are the host's.
        return Ok(Value::Object(rewritten.clone()));
    }
    let table = fields(protocol, &tool.name);
    let mut out = host.clone();
    for (key, value) in rewritten {
        if before.get(key) != Some(value) {
            let field = find(table, key, &tool.name)?;
            out.insert(field.theirs.to_owned(), scaled(field, value)?);
        }
    }
    for key in before.keys().filter(|k| !rewritten.contains_key(*k)) {
        out.remove(find(table, key, &tool.name)?.theirs);
    }
    Ok(Value::Object(out))
}

fn find<'a>(table: &'a [Field], key: &str, tool: &str) -> Result<&'a Field, String> {
    table.iter().find(|f| f.ours == key).ok_or_else(|| {
        format!("hooks rewrote `{key}`, which the host's `{tool}` tool has no field for")
    })
}

fn scaled(field: &Field, value: &Value) -> Result<Value, String> {
    if field.factor == 1 {
        return Ok(value.clone());
    }
    value
        .as_u64()
        .and_then(|n| n.checked_mul(field.factor))
        .map(Value::from)
        .ok_or_else(|| {
            format!(
                "hooks rewrote `{}` to a value that is no whole number",
                field.ours
            )
        })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;
    use crate::replay::mapping::{ToolNames, map_claude};

    fn tool(name: &str, input: Value) -> HostTool {
        let mapped = map_claude(name, input.as_object().unwrap(), ToolNames::Tollgate);
        HostTool {
            name: name.into(),
            input,
            use_id: "u".into(),
            mapped,
        }
    }

    #[test]
    fn a_rewritten_command_keeps_the_hosts_other_fields() {
        let bash = tool(
            "Bash",
            json!({"command": "rm -rf build", "description": "clean"}),
        );
        let out = to_host(
            Protocol::ClaudeCode,
            &bash,
            &json!({"command": "rm -rf build --dry-run"}),
        );
        assert_eq!(
            out.unwrap(),
            json!({"command": "rm -rf build --dry-run", "description": "clean"})
        );
        let codex = tool("Bash", json!({"command": "ls"}));
        assert_eq!(
            to_host(Protocol::Codex, &codex, &json!({"command": "ls -la"})).unwrap(),
            json!({"command": "ls -la"})
        );
    }

    #[test]
    fn timeouts_go_back_to_milliseconds_where_the_host_has_them() {
        let bash = tool("Bash", json!({"command": "make", "timeout": 120000}));
        let out = to_host(
            Protocol::ClaudeCode,
            &bash,
            &json!({"command": "make", "timeout_seconds": 30}),
        );
        assert_eq!(out.unwrap(), json!({"command": "make", "timeout": 30000}));
        let out = to_host(Protocol::ClaudeCode, &bash, &json!({"command": "make"}));
        assert_eq!(out.unwrap(), json!({"command": "make"}));
        let codex = tool("Bash", json!({"command": "make"}));
        let err = to_host(
            Protocol::Codex,
            &codex,
            &json!({"command": "make", "timeout_seconds": 5}),
        );
        assert!(err.unwrap_err().contains("`timeout_seconds`"));
    }

    #[test]
    fn file_and_agent_tools_get_their_field_names_back() {
        let edit = tool(
            "Edit",
            json!({"file_path": "/a", "old_string": "o", "new_string": "n"}),
        );
        let out = to_host(
            Protocol::ClaudeCode,
            &edit,
            &json!({"path": "/b", "content": "N", "old_string": "o"}),
        );
        assert_eq!(
            out.unwrap(),
            json!({"file_path": "/b", "old_string": "o", "new_string": "N"})
        );
        let task = tool("Task", json!({"prompt": "p", "description": "d"}));
        let out = to_host(
            Protocol::ClaudeCode,
            &task,
            &json!({"agent": "Explore", "task": "p2"}),
        );
        assert_eq!(
            out.unwrap(),
            json!({"prompt": "p2", "description": "d", "subagent_type": "Explore"})
        );
    }

    #[test]
    fn fields_without_a_host_counterpart_are_refused() {
        let multi = tool(
            "MultiEdit",
            json!({"file_path": "/a", "edits": [{"old_string": "a", "new_string": "b"}]}),
        );
        let err = to_host(
            Protocol::ClaudeCode,
            &multi,
            &json!({"path": "/a", "content": "x", "edits": [{"old_string": "a", "new_string": "b"}]}),
        );
        assert!(err.unwrap_err().contains("`content`"));
        let bash = tool("Bash", json!({"command": "ls"}));
        let err = to_host(
            Protocol::ClaudeCode,
            &bash,
            &json!({"command": "ls", "cwd": "/"}),
        );
        assert!(err.unwrap_err().contains("`cwd`"));
        assert!(to_host(Protocol::ClaudeCode, &bash, &json!("ls")).is_err());
    }

    #[test]
    fn tools_the_mapping_leaves_alone_are_rewritten_as_they_are() {
        let glob = tool("Glob", json!({"pattern": "*.rs"}));
        let out = to_host(Protocol::ClaudeCode, &glob, &json!({"pattern": "src/*.rs"}));
        assert_eq!(out.unwrap(), json!({"pattern": "src/*.rs"}));
        let unfit = tool("Bash", json!({"cmd": "ls"}));
        let out = to_host(Protocol::ClaudeCode, &unfit, &json!({"cmd": "ls -l"}));
        assert_eq!(out.unwrap(), json!({"cmd": "ls -l"}));
    }
}
