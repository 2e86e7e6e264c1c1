//! Rewritten tollgate arguments back in the host's field names, for `updatedInput`.
//!
//! The replay mapping (`crate::replay::mapping`) turns a host call into a runtime call
//! (`Bash {command, description}` → `bash_code_execute_tool {command}`) through the one table
//! of Claude Code's tools, [`tollgate_protocol::claude_code::TOOLS`]. When hooks rewrite the
//! runtime call, the host needs the rewrite in its own names: this module reads the same rows
//! backwards, field by field, and keeps no table of its own. It starts from the host's input as
//! sent (so `description`, `run_in_background` and other fields the mapping drops are kept) and
//! writes only the fields the rewrite changed, under the row's Claude Code name, times the
//! field's unit factor (`timeout_seconds` 30 → `timeout` 30000). Paths are copied: the bridge
//! maps without a workspace, as replay does.
//!
//! Codex sends its shell tool as `Bash {command}`: the same row, less the fields Codex's tool
//! lacks ([`CODEX_LACKS`]).
//!
//! A tool the mapping leaves alone (`Glob`, MCP tools, Codex's `apply_patch`) is rewritten as
//! is. A rewrite of a field with no host counterpart (a `timeout_seconds` for Codex's shell,
//! the `content` a `MultiEdit` derives from its `edits`) cannot be expressed: it is an error,
//! and the bridge denies the call rather than run something no hook approved.

use serde_json::Value;
use tollgate_protocol::claude_code::{self, Field};

use super::host::{HostTool, Protocol};

/// Fields of Claude Code's tools (tool, Claude Code's field name) that Codex's tool of the
/// same name does not have.
const CODEX_LACKS: [(&str, &str); 1] = [("Bash", "timeout")];

/// The fields of the host's tool `host_tool`, in the table's rows.
fn fields(protocol: Protocol, host_tool: &str) -> impl Iterator<Item = &'static Field> + '_ {
    let row = claude_code::tool(host_tool).filter(|row| row.runtime.is_some());
    let lacks = move |field: &&Field| {
        protocol == Protocol::Codex && CODEX_LACKS.contains(&(host_tool, field.theirs))
    };
    row.map_or(&[][..], |row| row.fields)
        .iter()
        .filter(move |field| !lacks(field))
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
    let find = |key: &str| {
        fields(protocol, &tool.name)
            .find(|f| f.ours == key)
            .ok_or_else(|| {
                format!(
                    "hooks rewrote `{key}`, which the host's `{}` tool has no field for",
                    tool.name
                )
            })
    };
    let mut out = host.clone();
    for (key, value) in rewritten {
        if before.get(key) != Some(value) {
            let field = find(key)?;
            out.insert(field.theirs.to_owned(), scaled(field, value)?);
        }
    }
    for key in before.keys().filter(|k| !rewritten.contains_key(*k)) {
        out.remove(find(key)?.theirs);
    }
    Ok(Value::Object(out))
}

/// `value` in the host's units; no workspace, so paths are copied.
fn scaled(field: &Field, value: &Value) -> Result<Value, String> {
    field.claude_value(value, None).ok_or_else(|| {
        format!(
            "hooks rewrote `{}` to a value that is no whole number",
            field.ours
        )
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::{Map, json};
    use tollgate_protocol::claude_code::{Kind, TOOLS, to_claude};

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

    /// A well-formed value of `kind`, as the host sends it.
    fn example(kind: Kind) -> Value {
        match kind {
            Kind::Text => json!("text"),
            Kind::Path => json!("/ws/a.txt"),
            Kind::TextOr(_) => json!("Explore"),
            Kind::Flag => json!(true),
            Kind::Duration => json!(5000),
            Kind::List => json!([{"old_string": "o", "new_string": "n"}]),
        }
    }

    /// Another value of the same JSON type.
    fn changed(value: &Value) -> Value {
        match value {
            Value::String(s) => json!(format!("{s}-2")),
            Value::Bool(b) => json!(!b),
            Value::Number(n) => json!(n.as_u64().unwrap() + 1),
            Value::Array(items) => {
                let mut items = items.clone();
                items.push(json!({"old_string": "x", "new_string": "y"}));
                Value::Array(items)
            }
            other => panic!("no example is {other}"),
        }
    }

    /// The host's keys whose value differs between `a` and `b`.
    fn differing(a: &Value, b: &Value) -> Vec<String> {
        let (a, b) = (a.as_object().unwrap(), b.as_object().unwrap());
        let mut keys: Vec<String> = a.keys().chain(b.keys()).cloned().collect();
        keys.sort();
        keys.dedup();
        keys.retain(|k| a.get(k) != b.get(k));
        keys
    }

    /// For every row of the shared table and every field: a rewrite of that one field lands on
    /// the host's input under the name, and with the value, `to_claude` gives it; a field only
    /// tollgate has is refused by the bridge and dropped by `to_claude`.
    #[test]
    fn the_bridge_and_to_claude_agree_on_every_rows_field_names() {
        for row in TOOLS.iter().filter(|r| r.runtime.is_some()) {
            let sent: Map<String, Value> = row
                .fields
                .iter()
                .map(|f| (f.theirs.to_owned(), example(f.kind)))
                .collect();
            let host = tool(row.name, Value::Object(sent));
            let before = &host.mapped.tool_input;
            let (_, claude_before) = to_claude(&host.mapped.tool_name, before, None);
            for field in row.fields {
                let mut rewritten = before.clone();
                rewritten[field.ours] = changed(&before[field.ours]);
                let out = to_host(Protocol::ClaudeCode, &host, &rewritten).unwrap();
                let (_, claude) = to_claude(&host.mapped.tool_name, &rewritten, None);
                assert_eq!(differing(&host.input, &out), [field.theirs], "{}", row.name);
                assert!(differing(&claude_before, &claude).contains(&field.theirs.to_owned()));
                assert_eq!(out[field.theirs], claude[field.theirs], "{}", field.theirs);

                let codex = to_host(Protocol::Codex, &host, &rewritten);
                match (row.name, field.theirs) {
                    ("Bash", "timeout") => assert!(codex.is_err()),
                    _ => assert_eq!(codex.unwrap(), out, "{}.{}", row.name, field.theirs),
                }
            }
            if let Some(derived) = row.ours_only {
                let mut rewritten = before.clone();
                rewritten[derived.name] = json!("new text");
                let err = to_host(Protocol::ClaudeCode, &host, &rewritten).unwrap_err();
                assert!(err.contains(derived.name), "{err}");
                let (_, claude) = to_claude(&host.mapped.tool_name, &rewritten, None);
                assert!(claude.get(derived.name).is_none(), "{}", row.name);
            }
        }
    }
}
