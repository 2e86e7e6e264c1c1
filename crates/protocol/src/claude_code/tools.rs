//! Tool calls in both directions, both read off [`TOOLS`](super::TOOLS).

use std::path::Path;

use serde_json::{Map, Value, json};

use super::table::{absolute, row_for, tool};

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
