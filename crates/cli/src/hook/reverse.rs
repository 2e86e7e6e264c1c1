//! Rewritten tollgate arguments back in the host's field names, for `updatedInput`.
//!
//! The bridge maps a host call to a runtime call (`Bash {command, description}` →
//! `bash_code_execute_tool {command}`) through the one table of Claude Code's tools,
//! [`tollgate_protocol::claude_code::TOOLS`]. When hooks rewrite the runtime call, the host
//! needs the rewrite in its own names: [`claude_code::patch_sent_input`] reads the same rows
//! backwards, field by field. It starts from the host's input as sent (so `description`,
//! `run_in_background` and other fields the mapping drops are kept) and writes only the fields
//! the rewrite changed, under the row's Claude Code name, times the field's unit factor
//! (`timeout_seconds` 30 → `timeout` 30000). Paths go back absolute under the payload's `cwd`
//! (a hook's `other.txt` is `<cwd>/other.txt`): the hosts' file tools take absolute paths, and
//! a relative path without a `cwd` to resolve it against is refused.
//!
//! Codex sends its shell tool as `Bash {command}`: the same row, less the fields Codex's tool
//! lacks ([`CODEX_LACKS`]).
//!
//! A tool the mapping leaves alone (`Glob`, MCP tools, Codex's `apply_patch`) is rewritten as
//! is. A rewrite of a field with no host counterpart (a `timeout_seconds` for Codex's shell,
//! the `content` a `MultiEdit` derives from its `edits`) cannot be expressed: it is an error,
//! and the bridge denies the call rather than run something no hook approved.

use std::path::Path;

use serde_json::Value;
use tollgate_protocol::claude_code::{self, Kind};

use super::host::{HostTool, Protocol};

/// Fields of Claude Code's tools (tool, Claude Code's field name) that Codex's tool of the
/// same name does not have.
const CODEX_LACKS: [(&str, &str); 1] = [("Bash", "timeout")];

/// The host's input for `tool` after hooks rewrote its tollgate arguments to `rewritten`;
/// `cwd` is the host's working folder, the root of its file paths.
///
/// # Errors
/// `rewritten` is not an object, changes a field the host's tool has no counterpart for, or
/// gives a path that stays relative (no `cwd`): the message names the field.
pub fn to_host(
    protocol: Protocol,
    tool: &HostTool,
    rewritten: &Value,
    cwd: Option<&Path>,
) -> Result<Value, String> {
    if !rewritten.is_object() {
        return Err("hooks rewrote the arguments to something that is no JSON object".into());
    }
    let row = claude_code::tool(&tool.name).filter(|row| row.runtime.is_some());
    let fields = row.map_or(&[][..], |row| row.fields);
    if protocol == Protocol::Codex {
        let lacked = fields
            .iter()
            .filter(|f| CODEX_LACKS.contains(&(tool.name.as_str(), f.theirs)));
        for field in lacked {
            if rewritten.get(field.ours) != tool.mapped.tool_input.get(field.ours) {
                return Err(format!(
                    "hooks rewrote `{}`, which the host's `{}` tool has no field for",
                    field.ours, tool.name
                ));
            }
        }
    }
    let out = claude_code::patch_sent_input(&tool.name, &tool.input, rewritten, cwd)?;
    for field in fields.iter().filter(|f| f.kind == Kind::Path) {
        let path = out.get(field.theirs).and_then(Value::as_str);
        let changed = out.get(field.theirs) != tool.input.get(field.theirs);
        if changed && path.is_some_and(|p| Path::new(p).is_relative()) {
            return Err(format!(
                "hooks rewrote `{}` to a relative path, and the host's payload has no absolute \
                 `cwd` to resolve it against",
                field.ours
            ));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::{Map, json};
    use tollgate_protocol::claude_code::{Kind, TOOLS, to_claude};

    use super::*;
    use crate::hook::host::map_tool;

    /// The host's working folder in these tests.
    fn cwd() -> Option<&'static Path> {
        Some(Path::new("/ws"))
    }

    fn tool(name: &str, input: Value) -> HostTool {
        let mapped = map_tool(name, &input);
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
            cwd(),
        );
        assert_eq!(
            out.unwrap(),
            json!({"command": "rm -rf build --dry-run", "description": "clean"})
        );
        let codex = tool("Bash", json!({"command": "ls"}));
        assert_eq!(
            to_host(
                Protocol::Codex,
                &codex,
                &json!({"command": "ls -la"}),
                cwd()
            )
            .unwrap(),
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
            cwd(),
        );
        assert_eq!(out.unwrap(), json!({"command": "make", "timeout": 30000}));
        let out = to_host(
            Protocol::ClaudeCode,
            &bash,
            &json!({"command": "make"}),
            cwd(),
        );
        assert_eq!(out.unwrap(), json!({"command": "make"}));
        let codex = tool("Bash", json!({"command": "make"}));
        let err = to_host(
            Protocol::Codex,
            &codex,
            &json!({"command": "make", "timeout_seconds": 5}),
            cwd(),
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
            cwd(),
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
            cwd(),
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
            cwd(),
        );
        assert!(err.unwrap_err().contains("`content`"));
        let bash = tool("Bash", json!({"command": "ls"}));
        let err = to_host(
            Protocol::ClaudeCode,
            &bash,
            &json!({"command": "ls", "cwd": "/"}),
            cwd(),
        );
        assert!(err.unwrap_err().contains("`cwd`"));
        assert!(to_host(Protocol::ClaudeCode, &bash, &json!("ls"), cwd()).is_err());
    }

    #[test]
    fn tools_the_mapping_leaves_alone_are_rewritten_as_they_are() {
        let glob = tool("Glob", json!({"pattern": "*.rs"}));
        let out = to_host(
            Protocol::ClaudeCode,
            &glob,
            &json!({"pattern": "src/*.rs"}),
            cwd(),
        );
        assert_eq!(out.unwrap(), json!({"pattern": "src/*.rs"}));
        // A call that does not fit its tool is denied before any hook runs; were it
        // rewritten, the rewrite could not be placed.
        let unfit = tool("Bash", json!({"cmd": "ls"}));
        let out = to_host(
            Protocol::ClaudeCode,
            &unfit,
            &json!({"cmd": "ls -l"}),
            cwd(),
        );
        assert!(out.unwrap_err().contains("`command`"));
    }

    /// The regression: a hook's relative `path` reached Claude Code as a relative `file_path`.
    #[test]
    fn a_rewritten_relative_path_goes_back_absolute_under_the_hosts_cwd() {
        let edit = tool(
            "Edit",
            json!({"file_path": "/ws/a.txt", "old_string": "o", "new_string": "n"}),
        );
        let rewritten = json!({"path": "other.txt", "content": "n", "old_string": "o"});
        let out = to_host(Protocol::ClaudeCode, &edit, &rewritten, cwd()).unwrap();
        assert_eq!(
            out,
            json!({"file_path": "/ws/other.txt", "old_string": "o", "new_string": "n"})
        );
        let read = tool("Read", json!({"file_path": "/ws/a.txt"}));
        let out = to_host(
            Protocol::ClaudeCode,
            &read,
            &json!({"path": "b.txt"}),
            cwd(),
        );
        assert_eq!(out.unwrap(), json!({"file_path": "/ws/b.txt"}));
        let err = to_host(Protocol::ClaudeCode, &read, &json!({"path": "b.txt"}), None);
        assert!(err.unwrap_err().contains("`cwd`"));
        // An absolute path, and one the rewrite left alone, need no `cwd`.
        let out = to_host(
            Protocol::ClaudeCode,
            &read,
            &json!({"path": "/etc/x"}),
            None,
        );
        assert_eq!(out.unwrap(), json!({"file_path": "/etc/x"}));
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
                let out = to_host(Protocol::ClaudeCode, &host, &rewritten, cwd()).unwrap();
                let (_, claude) = to_claude(&host.mapped.tool_name, &rewritten, None);
                assert_eq!(differing(&host.input, &out), [field.theirs], "{}", row.name);
                assert!(differing(&claude_before, &claude).contains(&field.theirs.to_owned()));
                assert_eq!(out[field.theirs], claude[field.theirs], "{}", field.theirs);

                let codex = to_host(Protocol::Codex, &host, &rewritten, cwd());
                match (row.name, field.theirs) {
                    ("Bash", "timeout") => assert!(codex.is_err()),
                    _ => assert_eq!(codex.unwrap(), out, "{}.{}", row.name, field.theirs),
                }
            }
            if let Some(derived) = row.ours_only {
                let mut rewritten = before.clone();
                rewritten[derived.name] = json!("new text");
                let err = to_host(Protocol::ClaudeCode, &host, &rewritten, cwd()).unwrap_err();
                assert!(err.contains(derived.name), "{err}");
                let (_, claude) = to_claude(&host.mapped.tool_name, &rewritten, None);
                assert!(claude.get(derived.name).is_none(), "{}", row.name);
            }
        }
    }
}
