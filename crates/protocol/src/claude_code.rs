//! Claude Code's view of tollgate's vocabulary: one table that translates tool calls both ways,
//! and the payload a hook written for Claude Code receives.
//!
//! [Claude Code's hooks](https://code.claude.com/docs/en/hooks) see Claude Code's tools (`Bash`,
//! `Read`, `Write`, `Edit`, …) with its field names (`command`, `file_path`, `content`, …). A
//! tollgate run calls `bash_code_execute_tool` with `{command}` and `write_file` with `{path,
//! content}`. [`TOOLS`] is the only place these correspondences are written: one row per Claude
//! Code tool, with its runtime tool and its fields as (tollgate's name, Claude Code's name, unit
//! factor). Everything else is read off it: [`to_tollgate`] and [`to_claude`], the two
//! directions of the mapping, used by hooks declared in Claude Code's shape (they see Claude
//! Code's names, and their `updatedInput` comes back through [`to_tollgate`]), by `tollgate
//! replay` (recorded Claude Code calls judged by tollgate hooks) and by `tollgate dispatch
//! --protocol claude-code`; [`claude_code_tool`] and [`aliases`], for configuration checks and
//! matchers; and [`patch_sent_input`], which writes a hook's new arguments back onto the input
//! Claude Code sent one [`Field`] at a time (`tollgate hook`'s `updatedInput`).
//!
//! A call that came from Claude Code (`tollgate hook`, `dispatch --protocol claude-code`)
//! carries the input as sent in its payload's `metadata` ([`SENT_CALL`]): hooks declared in
//! Claude Code's shape see that input ([`claude_call`]), with rewrites patched in, not a round
//! trip through tollgate's fields, which would drop `description` or round a `timeout`.
//!
//! | tollgate | Claude Code |
//! |---|---|
//! | `bash_code_execute_tool {command, timeout_seconds?}` | `Bash {command, timeout?}` (milliseconds) |
//! | `read_file {path}` | `Read {file_path}` |
//! | `write_file {path, content}` | `Write {file_path, content}` |
//! | `write_file {path, content, edits}` | `MultiEdit {file_path, edits}` (`content` derived from `edits`) |
//! | `write_file {path, content, old_string, replace_all?}` | `Edit {file_path, old_string, new_string: content, replace_all?}` |
//! | `call_agent {agent, task}` | `Agent {subagent_type, prompt, description}` (`Task` too; `description` derived from `task`) |
//! | any other tool | unchanged |
//!
//! What is more than a rename sits next to the table as a small function: the timeout's
//! rounding and clamping ([`Kind::Duration`]), `MultiEdit`'s `content` and `Agent`'s
//! `description` ([`Derived`]), the `general-purpose` default agent ([`Kind::TextOr`]), and
//! paths ([`Kind::Path`]).
//!
//! Paths: tollgate's file tools take paths relative to the workspace, Claude Code's absolute
//! ones. With a root (the workspace, the payload's `cwd`), a relative `path` becomes
//! `<root>/<path>` and an absolute `file_path` under the root becomes relative again; without
//! one paths are copied as they are.
//!
//! ```
//! use serde_json::json;
//! use std::path::Path;
//! use tollgate_protocol::claude_code::{to_claude, to_tollgate};
//!
//! let root = Some(Path::new("/work/ws"));
//! let (name, input) = to_claude("write_file", &json!({"path": "a.txt", "content": "hi"}), root);
//! assert_eq!(name, "Write");
//! assert_eq!(input, json!({"file_path": "/work/ws/a.txt", "content": "hi"}));
//! let back = to_tollgate(&name, &input, root).unwrap();
//! assert_eq!(back, Some(("write_file", json!({"path": "a.txt", "content": "hi"}))));
//! ```

mod payload;
mod table;
mod tools;

pub use payload::{
    ClaudeContext, SubAgent, from_claude_payload, hook_event_name, to_claude_payload,
};
pub use table::{
    CLAUDE_CODE_TOOLS, ClaudeTool, Derived, Field, Kind, Pick, TOOLS, aliases, claude_code_tool,
    tool,
};
pub use tools::{
    SENT_CALL, claude_call, patch_sent_input, response_to_claude, to_claude, to_tollgate,
};

#[cfg(test)]
mod tests;
