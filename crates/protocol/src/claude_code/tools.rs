//! Tool calls in both directions, both read off [`TOOLS`](super::TOOLS).

use std::path::Path;

use serde_json::{Map, Value, json};

use super::table::{absolute, row_for, tool};
use crate::payload::ToolCall;

/// The runtime tool and input for a Claude Code call, `Ok(None)` for a tool the table does not
/// map (its call stays as it is). The input holds the row's fields under tollgate's names (and
/// a derived `content` for `MultiEdit`); other fields are dropped.
///
/// # Errors
/// Why a mapped tool's input does not fit its row (`Bash without a string `command``, `Task
/// without a string `prompt``, a `timeout` that is not a non-negative number, an input that is
/// not an object).
pub fn to_tollgate(
    name: &str,
    input: &Value,
    root: Option<&Path>,
) -> Result<Option<(&'static str, Value)>, String> {
    let Some((row, runtime)) = tool(name).and_then(|t| Some((t, t.runtime?))) else {
        return Ok(None);
    };
    let Value::Object(input) = input else {
        return Err(format!("{name} with an input that is not an object"));
    };
    let mut out = Map::new();
    for field in row.fields {
        if let Some(value) = field.tollgate_value(name, input, root)? {
            out.insert(field.ours.to_owned(), value);
        }
    }
    if let Some(derived) = row.ours_only {
        let from = out.get(derived.from).unwrap_or(&Value::Null);
        let value = (derived.derive)(from).map_err(|why| format!("{name} {why}"))?;
        out.insert(derived.name.to_owned(), value);
    }
    Ok(Some((runtime, Value::Object(out))))
}

/// Claude Code's name and input for a tollgate call. Never fails: a tool with no Claude Code
/// counterpart (`sql_query`, an MCP tool) keeps its name and input, a field a row does not know
/// is kept as it is, and so is a value that does not convert (a `timeout_seconds` that is no
/// whole number).
pub fn to_claude(name: &str, input: &Value, root: Option<&Path>) -> (String, Value) {
    let Value::Object(map) = input else {
        let claude = row_for(name, &Map::new()).map_or(name, |row| row.name);
        return (claude.to_owned(), input.clone());
    };
    let Some(row) = row_for(name, map) else {
        return (name.to_owned(), input.clone());
    };
    let mut out = map.clone();
    // Take every renamed field out before writing any back, so no rename overwrites another.
    let taken: Vec<_> = row
        .fields
        .iter()
        .filter_map(|field| out.remove(field.ours).map(|value| (field, value)))
        .collect();
    for (field, value) in taken {
        let theirs = field.claude_value(&value, root).unwrap_or(value);
        out.insert(field.theirs.to_owned(), theirs);
    }
    if let Some(derived) = row.ours_only {
        out.remove(derived.name);
    }
    if let Some(derived) = row.theirs_only
        && let Some(from) = map.get(derived.from)
    {
        let value = (derived.derive)(from).unwrap_or_default();
        out.insert(derived.name.to_owned(), value);
    }
    (row.name.to_owned(), Value::Object(out))
}

/// The key of a payload's `metadata` that holds a tool call as Claude Code (or Codex, which
/// names its shell tool the same way) sent it: `{"tool_name": "Bash", "tool_input": {…}}`,
/// untouched. [`from_claude_payload`](super::from_claude_payload) and `tollgate hook` put it
/// there, so that hooks declared in Claude Code's shape see the input as sent
/// ([`claude_call`]) and not a round trip through tollgate's fields, which has no place for
/// `description`, `run_in_background` or a `timeout` that is no whole number of seconds.
pub const SENT_CALL: &str = "claude_code_call";

/// Claude Code's name and input for `call`, a call of a payload whose `metadata` is
/// `metadata`: the call as Claude Code sent it ([`SENT_CALL`]) with the fields hooks rewrote
/// since patched in ([`patch_sent_input`]), when the metadata holds the same call; otherwise
/// [`to_claude`]. Never fails: a sent call that is not this call's (another tool), or that a
/// rewrite cannot be patched into, gives way to [`to_claude`].
pub fn claude_call(
    call: &ToolCall,
    metadata: &Map<String, Value>,
    root: Option<&Path>,
) -> (String, Value) {
    let sent = metadata.get(SENT_CALL).and_then(|sent| {
        let name = sent.get("tool_name")?.as_str()?;
        Some((name, sent.get("tool_input")?))
    });
    if let Some((name, sent)) = sent {
        let runtime = match to_tollgate(name, sent, root) {
            Ok(Some((runtime, _))) => Some(runtime),
            Ok(None) => Some(name),
            Err(_) => None,
        };
        if runtime == Some(call.tool_name.as_str())
            && let Ok(input) = patch_sent_input(name, sent, &call.tool_input, root)
        {
            return (name.to_owned(), input);
        }
    }
    to_claude(&call.tool_name, &call.tool_input, root)
}

/// Claude Code's input for a call it sent as `name` with `sent`, after hooks rewrote
/// tollgate's arguments of it to `rewritten`: `sent` as it is (so fields the table does not
/// name, such as `Bash`'s `description`, are kept, and values keep their spelling: a `timeout`
/// of 2500 ms stays 2500), with each field whose value the rewrite changed written under
/// Claude Code's name and in its units, and each field the rewrite left out removed. Paths are
/// written absolute under `root` (a relative path stays relative without one). A tool the
/// table does not map keeps its fields: `rewritten` is the answer.
///
/// # Errors
/// `sent` does not fit its tool (see [`to_tollgate`]), `rewritten` is no object, or the rewrite
/// changes a field Claude Code's tool has no counterpart for (a new key, `MultiEdit`'s derived
/// `content`) or gives a duration that is no whole number: the message names the field.
pub fn patch_sent_input(
    name: &str,
    sent: &Value,
    rewritten: &Value,
    root: Option<&Path>,
) -> Result<Value, String> {
    let Value::Object(rewritten) = rewritten else {
        return Err("the rewritten arguments are no JSON object".into());
    };
    let (Some(row), Some((_, Value::Object(before))), Value::Object(sent)) =
        (tool(name), to_tollgate(name, sent, root)?, sent)
    else {
        return Ok(Value::Object(rewritten.clone()));
    };
    let field = |key: &str| {
        row.fields.iter().find(|f| f.ours == key).ok_or_else(|| {
            format!("hooks rewrote `{key}`, which the host's `{name}` tool has no field for")
        })
    };
    let mut out = sent.clone();
    for (key, value) in rewritten {
        let unchanged = before.get(key).is_some_and(|old| {
            old == value || field(key).is_ok_and(|f| f.same_for_claude(old, value, root))
        });
        if !unchanged {
            let field = field(key)?;
            let theirs = field.claude_value(value, root).ok_or_else(|| {
                format!("hooks rewrote `{key}` to a value that is no whole number")
            })?;
            out.insert(field.theirs.to_owned(), theirs);
        }
    }
    for key in before.keys().filter(|k| !rewritten.contains_key(*k)) {
        out.remove(field(key)?.theirs);
    }
    Ok(Value::Object(out))
}

/// Claude Code's `tool_response` for a tool's result: `Bash` gets `{stdout, stderr,
/// interrupted, isImage}`, `Read` gets `{type: "text", file: {filePath, content, numLines,
/// startLine, totalLines}}`, the file-writing tools `{filePath, success}`; other results stay as
/// they are.
pub fn response_to_claude(name: &str, input: &Value, result: &Value, root: Option<&Path>) -> Value {
    let file_path = || {
        input
            .get("path")
            .and_then(Value::as_str)
            .map(|p| absolute(p, root))
            .unwrap_or_default()
    };
    match (name, result) {
        ("bash_code_execute_tool", Value::Object(out)) => json!({
            "stdout": out.get("stdout").cloned().unwrap_or(json!("")),
            "stderr": out.get("stderr").cloned().unwrap_or(json!("")),
            "interrupted": false,
            "isImage": false,
        }),
        ("read_file", Value::String(text)) => {
            let lines = text.lines().count();
            json!({"type": "text", "file": {
                "filePath": file_path(), "content": text, "numLines": lines,
                "startLine": 1, "totalLines": lines,
            }})
        }
        ("write_file", Value::Object(_)) => json!({"filePath": file_path(), "success": true}),
        _ => result.clone(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn root() -> Option<&'static Path> {
        Some(Path::new("/ws"))
    }

    fn sent(name: &str, input: Value) -> Map<String, Value> {
        let mut metadata = Map::new();
        metadata.insert(
            SENT_CALL.into(),
            json!({"tool_name": name, "tool_input": input}),
        );
        metadata
    }

    fn call(name: &str, input: Value) -> ToolCall {
        ToolCall {
            tool_name: name.into(),
            tool_call_id: "c".into(),
            tool_input: input,
        }
    }

    /// The regression: a Claude-shaped hook saw `to_claude(to_tollgate(sent))`, without the
    /// fields the table does not name and with the timeout rounded to whole seconds.
    #[test]
    fn a_sent_call_is_seen_as_sent_with_its_unnamed_fields_and_units() {
        let input = json!({"command": "make", "timeout": 2500, "description": "build",
            "run_in_background": true, "dangerouslyDisableSandbox": false});
        let (_, ours) = to_tollgate("Bash", &input, root()).unwrap().unwrap();
        let metadata = sent("Bash", input.clone());
        let seen = claude_call(&call("bash_code_execute_tool", ours), &metadata, root());
        assert_eq!(seen, ("Bash".to_owned(), input));
        let task = json!({"prompt": "p", "description": "d"});
        let (_, ours) = to_tollgate("Task", &task, root()).unwrap().unwrap();
        let seen = claude_call(
            &call("call_agent", ours),
            &sent("Task", task.clone()),
            root(),
        );
        assert_eq!(seen, ("Task".to_owned(), task));
    }

    #[test]
    fn a_rewrite_is_patched_into_the_sent_input() {
        let input = json!({"command": "make", "timeout": 2500, "description": "build"});
        let metadata = sent("Bash", input);
        let rewritten = json!({"command": "make -n", "timeout_seconds": 3});
        let (_, seen) = claude_call(
            &call("bash_code_execute_tool", rewritten),
            &metadata,
            root(),
        );
        assert_eq!(
            seen,
            json!({"command": "make -n", "timeout": 2500, "description": "build"})
        );
        let rewritten = json!({"command": "make", "timeout_seconds": 5});
        let (_, seen) = claude_call(
            &call("bash_code_execute_tool", rewritten),
            &metadata,
            root(),
        );
        assert_eq!(
            seen,
            json!({"command": "make", "timeout": 5000, "description": "build"})
        );
        let (_, seen) = claude_call(
            &call("bash_code_execute_tool", json!({"command": "make"})),
            &metadata,
            root(),
        );
        assert_eq!(seen, json!({"command": "make", "description": "build"}));
    }

    #[test]
    fn a_rewritten_path_goes_back_absolute_under_the_root() {
        let edit = json!({"file_path": "/ws/a.txt", "old_string": "o", "new_string": "n"});
        let rewritten = json!({"path": "other.txt", "content": "n", "old_string": "o"});
        let out = patch_sent_input("Edit", &edit, &rewritten, root()).unwrap();
        assert_eq!(out["file_path"], "/ws/other.txt");
        // The same file, relative or absolute, is no change.
        let same = json!({"path": "/ws/a.txt", "content": "n", "old_string": "o"});
        assert_eq!(
            patch_sent_input("Edit", &edit, &same, root()).unwrap(),
            edit
        );
        let read = json!({"file_path": "/ws/a.txt", "limit": 10});
        let out = patch_sent_input("Read", &read, &json!({"path": "b/c.txt"}), root()).unwrap();
        assert_eq!(out, json!({"file_path": "/ws/b/c.txt", "limit": 10}));
    }

    #[test]
    fn a_rewrite_without_a_claude_field_is_refused_and_claude_call_falls_back() {
        let bash = json!({"command": "ls"});
        let err = patch_sent_input("Bash", &bash, &json!({"command": "ls", "cwd": "/"}), root());
        assert!(err.unwrap_err().contains("`cwd`"));
        let err = patch_sent_input(
            "Bash",
            &bash,
            &json!({"command": "ls", "timeout_seconds": 1.5}),
            root(),
        );
        assert!(err.unwrap_err().contains("`timeout_seconds`"));
        let metadata = sent("Bash", bash);
        let rewritten = json!({"command": "ls", "cwd": "/"});
        let seen = claude_call(
            &call("bash_code_execute_tool", rewritten.clone()),
            &metadata,
            root(),
        );
        assert_eq!(
            seen,
            to_claude("bash_code_execute_tool", &rewritten, root())
        );
    }

    #[test]
    fn a_sent_call_of_another_tool_is_not_used() {
        let metadata = sent("Bash", json!({"command": "ls", "description": "d"}));
        let read = call("read_file", json!({"path": "a.txt"}));
        assert_eq!(
            claude_call(&read, &metadata, root()),
            ("Read".to_owned(), json!({"file_path": "/ws/a.txt"}))
        );
        // A tool the table does not map is seen with its current input.
        let metadata = sent("Glob", json!({"pattern": "*.rs"}));
        let glob = call("Glob", json!({"pattern": "src/*.rs"}));
        assert_eq!(
            claude_call(&glob, &metadata, root()),
            ("Glob".to_owned(), json!({"pattern": "src/*.rs"}))
        );
    }

    #[test]
    fn a_null_optional_field_is_left_out() {
        let (_, ours) = to_tollgate("Bash", &json!({"command": "ls", "timeout": null}), None)
            .unwrap()
            .unwrap();
        assert_eq!(ours, json!({"command": "ls"}));
        let why = to_tollgate("Bash", &json!({"command": null}), None).unwrap_err();
        assert!(why.contains("`command`"), "{why}");
        let why = to_tollgate("Bash", &json!({"command": "ls", "timeout": -1}), None);
        assert!(why.unwrap_err().contains("`timeout`"));
    }
}
