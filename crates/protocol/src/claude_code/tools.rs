//! Tool calls in both directions (the table is in the [module docs](super)).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

/// Claude Code's built-in tools, each with the runtime tool that does the same job, if any.
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

/// The other names of the Claude Code tool `name`: the delegation tool was renamed from `Task`
/// to `Agent`, and matchers and rules may use either; every other tool has one name.
pub fn aliases(name: &str) -> &'static [&'static str] {
    match name {
        "Agent" => &["Task"],
        "Task" => &["Agent"],
        _ => &[],
    }
}

/// The runtime tool and input for a Claude Code call, `Ok(None)` for a tool the table does not
/// map (its call stays as it is).
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
    if claude_code_tool(name).and_then(|(_, ours)| ours).is_none() {
        return Ok(None);
    }
    let Value::Object(input) = input else {
        return Err(format!("{name} with an input that is not an object"));
    };
    let f = Fields { tool: name, input };
    let path = |f: &Fields<'_>| f.text("file_path").map(|p| relative(p, root));
    let (tool_name, tool_input) = match name {
        "Bash" => ("bash_code_execute_tool", bash(&f)?),
        "Read" => ("read_file", json!({"path": path(&f)?})),
        "Write" => (
            "write_file",
            json!({"path": path(&f)?, "content": f.text("content")?}),
        ),
        "Edit" => ("write_file", edit(&f, path(&f)?)?),
        "MultiEdit" => ("write_file", multi_edit(&f, path(&f)?)?),
        _ => ("call_agent", agent(&f)?),
    };
    Ok(Some((tool_name, tool_input)))
}

/// Claude Code's name and input for a tollgate call. Never fails: a tool with no Claude Code
/// counterpart (`sql_query`, an MCP tool) keeps its name and input, and a field a row does not
/// know is kept as it is.
pub fn to_claude(name: &str, input: &Value, root: Option<&Path>) -> (String, Value) {
    let Value::Object(map) = input else {
        return (claude_name(name, &Map::new()).to_owned(), input.clone());
    };
    let mut out = map.clone();
    let claude = claude_name(name, map);
    match name {
        "bash_code_execute_tool" => {
            if let Some(seconds) = out.remove("timeout_seconds") {
                let ms = seconds
                    .as_u64()
                    .and_then(|s| s.checked_mul(1000))
                    .map_or(seconds, |ms| json!(ms));
                out.insert("timeout".into(), ms);
            }
        }
        "read_file" | "write_file" => {
            if let Some(path) = out.remove("path") {
                let absolute = path
                    .as_str()
                    .map_or(path.clone(), |p| json!(absolute(p, root)));
                out.insert("file_path".into(), absolute);
            }
            if claude == "Edit" {
                if let Some(content) = out.remove("content") {
                    out.insert("new_string".into(), content);
                }
            } else if claude == "MultiEdit" {
                out.remove("content");
            }
        }
        "call_agent" => {
            if let Some(agent) = out.remove("agent") {
                out.insert("subagent_type".into(), agent);
            }
            if let Some(task) = out.remove("task") {
                let description = task.as_str().map(describe).unwrap_or_default();
                out.insert("prompt".into(), task);
                out.insert("description".into(), json!(description));
            }
        }
        _ => {}
    }
    (claude.to_owned(), Value::Object(out))
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

/// Claude Code's name for the tollgate tool `name` called with `input`.
fn claude_name<'a>(name: &'a str, input: &Map<String, Value>) -> &'a str {
    match name {
        "bash_code_execute_tool" => "Bash",
        "read_file" => "Read",
        "write_file" if input.contains_key("edits") => "MultiEdit",
        "write_file" if input.contains_key("old_string") => "Edit",
        "write_file" => "Write",
        "call_agent" => "Agent",
        other => other,
    }
}

/// The first line of a task, at most 60 characters: Claude Code's `description` is a short
/// summary of the prompt.
fn describe(task: &str) -> String {
    task.lines()
        .next()
        .unwrap_or_default()
        .chars()
        .take(60)
        .collect()
}

/// `path` under `root` when it is relative and there is a root.
fn absolute(path: &str, root: Option<&Path>) -> String {
    match root {
        Some(root) if Path::new(path).is_relative() => root.join(path).display().to_string(),
        _ => path.to_owned(),
    }
}

/// `path` relative to `root` when it lies under it.
fn relative(path: &str, root: Option<&Path>) -> String {
    let under = root.and_then(|root| Path::new(path).strip_prefix(root).ok());
    match under {
        Some(rest) if !rest.as_os_str().is_empty() => PathBuf::from(rest).display().to_string(),
        _ => path.to_owned(),
    }
}

struct Fields<'a> {
    tool: &'a str,
    input: &'a Map<String, Value>,
}

impl Fields<'_> {
    fn text(&self, key: &str) -> Result<&str, String> {
        self.input
            .get(key)
            .and_then(Value::as_str)
            .ok_or_else(|| format!("{} without a string `{key}`", self.tool))
    }

    fn optional<T>(
        &self,
        key: &str,
        read: impl Fn(&Value) -> Option<T>,
    ) -> Result<Option<T>, String> {
        self.input
            .get(key)
            .map(|v| read(v).ok_or_else(|| format!("{} with a malformed `{key}`", self.tool)))
            .transpose()
    }
}

fn bash(f: &Fields<'_>) -> Result<Value, String> {
    let mut out = json!({"command": f.text("command")?});
    let timeout_ms = f.optional("timeout", |v| v.as_f64().filter(|ms| *ms >= 0.0))?;
    // The runtime's tool takes whole seconds from 1 to 600: round up and clamp. Zero is none.
    if let Some(ms) = timeout_ms.filter(|ms| *ms > 0.0) {
        let seconds = (ms / 1000.0).ceil().clamp(1.0, 600.0);
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "clamped to 1..=600"
        )]
        let seconds = seconds as u64;
        out["timeout_seconds"] = json!(seconds);
    }
    Ok(out)
}

fn edit(f: &Fields<'_>, path: String) -> Result<Value, String> {
    let mut out = json!({
        "path": path,
        "content": f.text("new_string")?,
        "old_string": f.text("old_string")?,
    });
    if let Some(all) = f.optional("replace_all", Value::as_bool)? {
        out["replace_all"] = Value::Bool(all);
    }
    Ok(out)
}

fn multi_edit(f: &Fields<'_>, path: String) -> Result<Value, String> {
    let edits = f
        .input
        .get("edits")
        .and_then(Value::as_array)
        .ok_or("MultiEdit without a list `edits`")?;
    let new_text: Option<Vec<&str>> = edits
        .iter()
        .map(|e| e.get("new_string").and_then(Value::as_str))
        .collect();
    let new_text =
        new_text.ok_or("MultiEdit with an `edits` entry without a string `new_string`")?;
    Ok(json!({"path": path, "content": new_text.join("\n"), "edits": edits}))
}

fn agent(f: &Fields<'_>) -> Result<Value, String> {
    let agent = f.optional("subagent_type", |v| v.as_str().map(str::to_owned))?;
    Ok(json!({
        "agent": agent.as_deref().unwrap_or("general-purpose"),
        "task": f.text("prompt")?,
    }))
}
