//! Claude Code tool calls as tollgate runtime tool calls (`docs/replay.md` has the table).
//!
//! | Claude Code | tollgate | `tool_input` |
//! |---|---|---|
//! | `Bash` | `bash_code_execute_tool` | `{command, timeout_seconds?}` (`timeout` ms / 1000) |
//! | `Read` | `read_file` | `{path}` (`file_path`) |
//! | `Write` | `write_file` | `{path, content}` |
//! | `Edit` | `write_file` | `{path, content: new_string, old_string, replace_all?}` |
//! | `MultiEdit` | `write_file` | `{path, content: every new_string joined by "\n", edits}` |
//! | `Task`, `Agent` | `call_agent` | `{agent: subagent_type or "general-purpose", task: prompt}` |
//! | anything else | unchanged | unchanged |
//!
//! A call whose input does not fit its row (`Bash` without a string `command`, `Task` without
//! `prompt`) is not dropped: it is dispatched as recorded, name and input unchanged, and the
//! reason travels with it ([`Mapped::not_mapped`]) so the report can say so.

use clap::ValueEnum;
use serde_json::{Map, Value, json};

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
    match translate(name, input) {
        Ok(Some((tool_name, tool_input))) => Mapped {
            tool_name: tool_name.to_owned(),
            tool_input,
            not_mapped: None,
        },
        Ok(None) => verbatim(None),
        Err(why) => verbatim(Some(why)),
    }
}

/// The runtime tool and input for a tool the mapping knows; `None` for any other tool.
fn translate(
    name: &str,
    input: &Map<String, Value>,
) -> Result<Option<(&'static str, Value)>, String> {
    let f = Fields { tool: name, input };
    let (tool_name, tool_input) = match name {
        "Bash" => ("bash_code_execute_tool", bash(&f)?),
        "Read" => ("read_file", json!({"path": f.text("file_path")?})),
        "Write" => (
            "write_file",
            json!({"path": f.text("file_path")?, "content": f.text("content")?}),
        ),
        "Edit" => ("write_file", edit(&f)?),
        "MultiEdit" => ("write_file", multi_edit(&f)?),
        "Task" | "Agent" => ("call_agent", agent(&f)?),
        _ => return Ok(None),
    };
    Ok(Some((tool_name, tool_input)))
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
    if let Some(ms) = timeout_ms {
        // The runtime's tool takes whole seconds from 1 to 600: round up, clamp, and keep the
        // original in `claude_code_input`. A zero timeout means none.
        if ms > 0.0 {
            let seconds = (ms / 1000.0).ceil().clamp(1.0, 600.0);
            #[expect(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                reason = "clamped to 1..=600"
            )]
            let seconds = seconds as u64;
            out["timeout_seconds"] = json!(seconds);
        }
    }
    Ok(out)
}

fn edit(f: &Fields<'_>) -> Result<Value, String> {
    let mut out = json!({
        "path": f.text("file_path")?,
        "content": f.text("new_string")?,
        "old_string": f.text("old_string")?,
    });
    if let Some(all) = f.optional("replace_all", Value::as_bool)? {
        out["replace_all"] = Value::Bool(all);
    }
    Ok(out)
}

fn multi_edit(f: &Fields<'_>) -> Result<Value, String> {
    let path = f.text("file_path")?;
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn map(name: &str, input: Value, names: ToolNames) -> Mapped {
        let Value::Object(input) = input else {
            panic!("not an object")
        };
        map_claude(name, &input, names)
    }

    fn tollgate(name: &str, input: Value) -> (String, Value) {
        let mapped = map(name, input, ToolNames::Tollgate);
        assert_eq!(mapped.not_mapped, None);
        (mapped.tool_name, mapped.tool_input)
    }

    #[test]
    fn bash_keeps_the_command_and_converts_the_timeout_to_seconds() {
        let input = json!({"command": "rm -rf build", "description": "clean", "timeout": 120000});
        assert_eq!(
            tollgate("Bash", input),
            (
                "bash_code_execute_tool".into(),
                json!({"command": "rm -rf build", "timeout_seconds": 120})
            )
        );
        // The runtime takes whole seconds from 1 to 600: rounded up and clamped; 0 is none.
        let (_, args) = tollgate("Bash", json!({"command": "ls", "timeout": 1500}));
        assert_eq!(args, json!({"command": "ls", "timeout_seconds": 2}));
        let (_, args) = tollgate("Bash", json!({"command": "ls", "timeout": 1_200_000}));
        assert_eq!(args, json!({"command": "ls", "timeout_seconds": 600}));
        let (_, args) = tollgate("Bash", json!({"command": "ls", "timeout": 0}));
        assert_eq!(args, json!({"command": "ls"}));
        let (_, args) = tollgate("Bash", json!({"command": "ls"}));
        assert_eq!(args, json!({"command": "ls"}));
    }

    #[test]
    fn file_tools_become_read_file_and_write_file_with_path() {
        assert_eq!(
            tollgate("Read", json!({"file_path": "/a", "limit": 5})),
            ("read_file".into(), json!({"path": "/a"}))
        );
        assert_eq!(
            tollgate("Write", json!({"file_path": "/a", "content": "x"})),
            ("write_file".into(), json!({"path": "/a", "content": "x"}))
        );
        let edit =
            json!({"file_path": "/a", "old_string": "o", "new_string": "n", "replace_all": true});
        assert_eq!(
            tollgate("Edit", edit),
            (
                "write_file".into(),
                json!({"path": "/a", "content": "n", "old_string": "o", "replace_all": true})
            )
        );
        let edits =
            json!([{"old_string": "a", "new_string": "b"}, {"old_string": "c", "new_string": "d"}]);
        assert_eq!(
            tollgate("MultiEdit", json!({"file_path": "/a", "edits": edits})),
            (
                "write_file".into(),
                json!({"path": "/a", "content": "b\nd", "edits": edits})
            )
        );
    }

    #[test]
    fn task_and_agent_become_call_agent() {
        let input = json!({"description": "d", "prompt": "find it", "subagent_type": "Explore"});
        assert_eq!(
            tollgate("Task", input),
            (
                "call_agent".into(),
                json!({"agent": "Explore", "task": "find it"})
            )
        );
        assert_eq!(
            tollgate("Agent", json!({"prompt": "p"})),
            (
                "call_agent".into(),
                json!({"agent": "general-purpose", "task": "p"})
            )
        );
    }

    #[test]
    fn other_tools_and_claude_names_stay_verbatim() {
        let input = json!({"pattern": "**/*.rs"});
        assert_eq!(tollgate("Glob", input.clone()), ("Glob".into(), input));
        let bash = json!({"command": "ls", "description": "list"});
        let mapped = map("Bash", bash.clone(), ToolNames::Claude);
        assert_eq!(
            (mapped.tool_name.as_str(), mapped.tool_input),
            ("Bash", bash)
        );
    }

    #[test]
    fn input_that_does_not_fit_is_kept_as_recorded_with_the_field_named() {
        for (name, input, field) in [
            ("Bash", json!({"cmd": "ls"}), "`command`"),
            (
                "Bash",
                json!({"command": "ls", "timeout": "1s"}),
                "`timeout`",
            ),
            (
                "Edit",
                json!({"file_path": "/a", "new_string": "n"}),
                "`old_string`",
            ),
            ("Task", json!({"description": "d"}), "`prompt`"),
            (
                "MultiEdit",
                json!({"file_path": "/a", "edits": [{}]}),
                "`new_string`",
            ),
        ] {
            let mapped = map(name, input.clone(), ToolNames::Tollgate);
            assert_eq!(
                (mapped.tool_name.as_str(), &mapped.tool_input),
                (name, &input)
            );
            let why = mapped.not_mapped.unwrap();
            assert!(why.starts_with(name) && why.contains(field), "{why}");
        }
        assert_eq!(
            map("Bash", json!({"cmd": "ls"}), ToolNames::Claude).not_mapped,
            None
        );
    }

    /// `tollgate check` names Claude Code tools' counterparts from tollgate-protocol's table:
    /// it must say what this mapping does.
    #[test]
    fn the_mapping_is_the_protocols_claude_code_table() {
        let input = json!({
            "command": "ls", "file_path": "/a", "content": "c", "old_string": "o",
            "new_string": "n", "edits": [{"old_string": "o", "new_string": "n"}], "prompt": "p",
        });
        for (claude, ours) in tollgate_protocol::tools::CLAUDE_CODE_TOOLS {
            let (name, _) = tollgate(claude, input.clone());
            assert_eq!(name, ours.unwrap_or(claude), "{claude}");
        }
    }
}
