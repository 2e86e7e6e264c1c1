//! The one table: each Claude Code tool, its runtime counterpart and their fields, plus the few
//! conversions that are more than a rename.
//!
//! [`to_tollgate`](super::to_tollgate), [`to_claude`](super::to_claude), `claude_code_tool`,
//! [`aliases`] and the bridge's rewrite back into a host's input (`tollgate hook`) all read
//! [`TOOLS`]; none keeps a list of its own.

use std::path::{Path, PathBuf};
use std::slice;

use serde_json::{Map, Value, json};

/// One Claude Code tool.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ClaudeTool {
    /// Claude Code's name (`Bash`).
    pub name: &'static str,
    /// The runtime tool that does the same job; `None` when there is none, and then its calls
    /// stay as they are.
    pub runtime: Option<&'static str>,
    /// When a runtime call goes to Claude Code as this tool.
    pub pick: Pick,
    /// The fields both sides have, in the order `to_tollgate` checks them.
    pub fields: &'static [Field],
    /// A field only tollgate's side has, computed from the others going to tollgate and dropped
    /// going to Claude Code (`MultiEdit`'s `content`). A rewrite of it has no host counterpart.
    pub ours_only: Option<Derived>,
    /// A field only Claude Code's side has, computed going to Claude Code (`Agent`'s
    /// `description`) and dropped going to tollgate like any field the row does not name.
    pub theirs_only: Option<Derived>,
}

/// When [`to_claude`](super::to_claude) turns a call of a row's runtime tool into that row.
/// `write_file` is `MultiEdit`, `Edit` or `Write` by its arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    /// Unless an earlier row of the same runtime tool is picked by a key.
    Default,
    /// When tollgate's input has this key (`edits` → `MultiEdit`); rows of one runtime tool
    /// are tried in the table's order.
    With(&'static str),
    /// Never: another name of the tool named here (`Task`, `Agent`'s former name). Calls under
    /// it map like those under the other name, and matchers accept either ([`aliases`]).
    AliasOf(&'static str),
}

/// One field both sides have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// tollgate's name (`timeout_seconds`).
    pub ours: &'static str,
    /// Claude Code's name (`timeout`).
    pub theirs: &'static str,
    /// How many of Claude Code's units make one of tollgate's: 1000 for milliseconds against
    /// seconds; 1 for a plain rename.
    pub factor: u32,
    /// What the field holds, and what [`to_tollgate`](super::to_tollgate) requires of it.
    pub kind: Kind,
}

/// What a field holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A string the call must have.
    Text,
    /// A file path the call must have: absolute in Claude Code, relative to the workspace in
    /// tollgate when it lies under it (the module docs say how).
    Path,
    /// A string the call may leave out; tollgate's side then holds this default.
    TextOr(&'static str),
    /// `true` or `false`, optional.
    Flag,
    /// A duration, optional: whole seconds from 1 to 600 on tollgate's side (the runtime's
    /// shell timeout; Claude Code's rounded up and clamped), `factor` times smaller units on
    /// Claude Code's.
    Duration,
    /// A list the call must have.
    List,
}

/// A field one side has and the other does not.
#[derive(Debug, Clone, Copy)]
pub struct Derived {
    /// Its name, on the side that has it.
    pub name: &'static str,
    /// tollgate's name of the field it is computed from.
    pub from: &'static str,
    /// The computation, from `from`'s tollgate value; an error says what in it does not fit,
    /// after the tool's name (`with an `edits` entry without …`).
    pub derive: fn(&Value) -> Result<Value, String>,
}

const fn rename(ours: &'static str, theirs: &'static str, kind: Kind) -> Field {
    Field {
        ours,
        theirs,
        factor: 1,
        kind,
    }
}

const fn mapped(
    name: &'static str,
    runtime: &'static str,
    pick: Pick,
    fields: &'static [Field],
) -> ClaudeTool {
    ClaudeTool {
        name,
        runtime: Some(runtime),
        pick,
        fields,
        ours_only: None,
        theirs_only: None,
    }
}

const fn unmapped(name: &'static str) -> ClaudeTool {
    ClaudeTool {
        name,
        runtime: None,
        pick: Pick::Default,
        fields: &[],
        ours_only: None,
        theirs_only: None,
    }
}

const BASH: [Field; 2] = [
    rename("command", "command", Kind::Text),
    Field {
        ours: "timeout_seconds",
        theirs: "timeout",
        factor: 1000,
        kind: Kind::Duration,
    },
];
const AGENT: [Field; 2] = [
    rename("agent", "subagent_type", Kind::TextOr("general-purpose")),
    rename("task", "prompt", Kind::Text),
];
const JOINED_EDITS: Derived = Derived {
    name: "content",
    from: "edits",
    derive: joined_new_strings,
};
const SUMMARY: Derived = Derived {
    name: "description",
    from: "task",
    derive: summary,
};

/// Claude Code's built-in tools. Each tool is here once; `Task` and `Agent` are one tool under
/// two names, and `Write`, `Edit` and `MultiEdit` the three shapes of `write_file`.
pub static TOOLS: [ClaudeTool; 14] = [
    mapped("Bash", "bash_code_execute_tool", Pick::Default, &BASH),
    mapped(
        "Read",
        "read_file",
        Pick::Default,
        &[rename("path", "file_path", Kind::Path)],
    ),
    mapped(
        "Write",
        "write_file",
        Pick::Default,
        &[
            rename("path", "file_path", Kind::Path),
            rename("content", "content", Kind::Text),
        ],
    ),
    mapped(
        "MultiEdit",
        "write_file",
        Pick::With("edits"),
        &[
            rename("path", "file_path", Kind::Path),
            rename("edits", "edits", Kind::List),
        ],
    )
    .ours_only(JOINED_EDITS),
    mapped(
        "Edit",
        "write_file",
        Pick::With("old_string"),
        &[
            rename("path", "file_path", Kind::Path),
            rename("content", "new_string", Kind::Text),
            rename("old_string", "old_string", Kind::Text),
            rename("replace_all", "replace_all", Kind::Flag),
        ],
    ),
    mapped("Task", "call_agent", Pick::AliasOf("Agent"), &AGENT).theirs_only(SUMMARY),
    mapped("Agent", "call_agent", Pick::Default, &AGENT).theirs_only(SUMMARY),
    unmapped("Glob"),
    unmapped("Grep"),
    unmapped("LS"),
    unmapped("NotebookEdit"),
    unmapped("WebFetch"),
    unmapped("WebSearch"),
    unmapped("TodoWrite"),
];

/// [`TOOLS`] as (Claude Code's name, runtime tool) pairs.
pub const CLAUDE_CODE_TOOLS: [(&str, Option<&str>); 14] = {
    let mut pairs = [("", None); 14];
    let mut i = 0;
    while i < pairs.len() {
        pairs[i] = (TOOLS[i].name, TOOLS[i].runtime);
        i += 1;
    }
    pairs
};

impl ClaudeTool {
    const fn ours_only(mut self, derived: Derived) -> Self {
        self.ours_only = Some(derived);
        self
    }

    const fn theirs_only(mut self, derived: Derived) -> Self {
        self.theirs_only = Some(derived);
        self
    }
}

/// The row of the Claude Code tool `name` (`Bash`; case-sensitive).
pub fn tool(name: &str) -> Option<&'static ClaudeTool> {
    TOOLS.iter().find(|t| t.name == name)
}

/// The Claude Code tool `name`, with its runtime counterpart if it has one.
pub fn claude_code_tool(name: &str) -> Option<(&'static str, Option<&'static str>)> {
    tool(name).map(|t| (t.name, t.runtime))
}

/// The row a call of the runtime tool `runtime` with `input` goes to Claude Code as; `None` for
/// a tool no row maps (`sql_query`, an MCP tool).
pub(super) fn row_for(runtime: &str, input: &Map<String, Value>) -> Option<&'static ClaudeTool> {
    let mut rows = TOOLS.iter().filter(|t| t.runtime == Some(runtime));
    let keyed = rows
        .clone()
        .find(|t| matches!(t.pick, Pick::With(key) if input.contains_key(key)));
    keyed.or_else(|| rows.find(|t| t.pick == Pick::Default))
}

/// The other names of the Claude Code tool `name`: the delegation tool was renamed from `Task`
/// to `Agent`, and matchers and rules may use either; every other tool has one name.
pub fn aliases(name: &str) -> &'static [&'static str] {
    for row in &TOOLS {
        if let Pick::AliasOf(other) = &row.pick {
            if row.name == name {
                return slice::from_ref(other);
            }
            if *other == name {
                return slice::from_ref(&row.name);
            }
        }
    }
    &[]
}

impl Field {
    /// tollgate's `value` as Claude Code's field holds it: a relative path under `root`, a
    /// duration times [`factor`](Self::factor). `None` for a duration that is no whole number
    /// (or too large); every other value is copied.
    pub fn claude_value(&self, value: &Value, root: Option<&Path>) -> Option<Value> {
        match (self.kind, value) {
            (Kind::Path, Value::String(path)) => Some(json!(absolute(path, root))),
            (Kind::Duration, _) => value
                .as_u64()
                .and_then(|n| n.checked_mul(u64::from(self.factor)))
                .map(Value::from),
            _ => Some(value.clone()),
        }
    }

    /// The field of `input` (a call of Claude Code's `tool`) in tollgate's form; `None` for an
    /// optional field left out (or `null`, which JSON writers put for a field they leave out).
    pub(super) fn tollgate_value(
        &self,
        tool: &str,
        input: &Map<String, Value>,
        root: Option<&Path>,
    ) -> Result<Option<Value>, String> {
        let key = self.theirs;
        let value = input.get(key).filter(|v| !v.is_null() || self.required());
        let text = || {
            value
                .and_then(Value::as_str)
                .ok_or_else(|| format!("{tool} without a string `{key}`"))
        };
        let malformed = || format!("{tool} with a malformed `{key}`");
        Ok(match self.kind {
            Kind::Text => Some(json!(text()?)),
            Kind::Path => Some(json!(relative(text()?, root))),
            Kind::TextOr(default) => match value {
                None => Some(json!(default)),
                Some(v) => Some(json!(v.as_str().ok_or_else(malformed)?)),
            },
            Kind::Flag => value
                .map(|v| v.as_bool().map(Value::Bool).ok_or_else(malformed))
                .transpose()?,
            Kind::Duration => {
                let units = value.map(|v| v.as_f64().filter(|n| *n >= 0.0).ok_or_else(malformed));
                units.transpose()?.and_then(|n| seconds(n, self.factor))
            }
            Kind::List => Some(
                value
                    .filter(|v| v.is_array())
                    .cloned()
                    .ok_or_else(|| format!("{tool} without a list `{key}`"))?,
            ),
        })
    }

    /// Whether a call must have the field (a `null` is then no value either).
    fn required(&self) -> bool {
        matches!(self.kind, Kind::Text | Kind::Path | Kind::List)
    }

    /// Whether tollgate's values `a` and `b` are the same to Claude Code: equal, or equal once
    /// in Claude Code's form (a relative and an absolute path naming the same file under
    /// `root`).
    pub(super) fn same_for_claude(&self, a: &Value, b: &Value, root: Option<&Path>) -> bool {
        a == b
            || self
                .claude_value(a, root)
                .is_some_and(|a| Some(a) == self.claude_value(b, root))
    }
}

/// Whole seconds for a duration of `units`, `factor` of them to the second: rounded up and
/// clamped to the runtime's 1–600; zero is no duration.
fn seconds(units: f64, factor: u32) -> Option<Value> {
    if units <= 0.0 {
        return None;
    }
    let seconds = (units / f64::from(factor)).ceil().clamp(1.0, 600.0);
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "clamped to 1..=600"
    )]
    let seconds = seconds as u64;
    Some(json!(seconds))
}

/// `MultiEdit`'s `content`: the new text of every edit, joined by `\n`.
fn joined_new_strings(edits: &Value) -> Result<Value, String> {
    let new_text: Option<Vec<&str>> = edits
        .as_array()
        .map(|edits| {
            edits
                .iter()
                .map(|e| e.get("new_string").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default();
    let new_text = new_text.ok_or("with an `edits` entry without a string `new_string`")?;
    Ok(json!(new_text.join("\n")))
}

/// `Agent`'s `description`: the task's first line, at most 60 characters (Claude Code's is a
/// short summary of the prompt); empty for a task that is no string.
fn summary(task: &Value) -> Result<Value, String> {
    let first_line = task.as_str().and_then(|t| t.lines().next());
    let text: String = first_line.unwrap_or_default().chars().take(60).collect();
    Ok(json!(text))
}

/// `path` under `root` when it is relative and there is a root.
pub(super) fn absolute(path: &str, root: Option<&Path>) -> String {
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::collections::BTreeSet;

    use super::*;
    use crate::claude_code::{to_claude, to_tollgate};

    /// A well-formed value of `kind`, as Claude Code sends it.
    fn example(kind: Kind, root: &Path) -> Value {
        match kind {
            Kind::Text => json!("first line\nsecond line"),
            Kind::Path => json!(root.join("src/a.rs").display().to_string()),
            Kind::TextOr(_) => json!("Explore"),
            Kind::Flag => json!(true),
            Kind::Duration => json!(5000),
            Kind::List => json!([{"old_string": "o", "new_string": "n"}]),
        }
    }

    fn keys(value: &Value) -> BTreeSet<&str> {
        value
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect()
    }

    /// `to_tollgate` and `to_claude` read each row the same way: a call with every field of a
    /// row comes back from tollgate as the same tool (or the name it is an alias of), with the
    /// same fields and values, plus only the field Claude Code derives.
    #[test]
    fn every_rows_fields_round_trip_through_tollgate() {
        let root = Path::new("/ws");
        for row in TOOLS.iter().filter(|r| r.runtime.is_some()) {
            let sent: Map<String, Value> = row
                .fields
                .iter()
                .map(|f| (f.theirs.to_owned(), example(f.kind, root)))
                .collect();
            let sent = Value::Object(sent);
            let (runtime, ours) = to_tollgate(row.name, &sent, Some(root)).unwrap().unwrap();
            assert_eq!(Some(runtime), row.runtime, "{}", row.name);
            let mut expected: BTreeSet<&str> = row.fields.iter().map(|f| f.ours).collect();
            expected.extend(row.ours_only.map(|d| d.name));
            assert_eq!(keys(&ours), expected, "{}", row.name);

            let (name, back) = to_claude(runtime, &ours, Some(root));
            let named = match row.pick {
                Pick::AliasOf(other) => other,
                Pick::Default | Pick::With(_) => row.name,
            };
            assert_eq!(name, named);
            let mut expected = keys(&sent);
            expected.extend(row.theirs_only.map(|d| d.name));
            assert_eq!(keys(&back), expected, "{}", row.name);
            for field in row.fields {
                assert_eq!(back[field.theirs], sent[field.theirs], "{}", field.theirs);
            }
        }
    }

    #[test]
    fn a_rows_key_is_one_of_its_fields_and_an_alias_names_a_row() {
        for row in &TOOLS {
            match row.pick {
                Pick::With(key) => {
                    assert!(row.fields.iter().any(|f| f.ours == key), "{}", row.name);
                }
                Pick::AliasOf(other) => {
                    let other = tool(other).unwrap();
                    assert_eq!(other.runtime, row.runtime);
                    assert_eq!(other.fields, row.fields);
                }
                Pick::Default => {}
            }
            let factors_ok = row
                .fields
                .iter()
                .all(|f| (f.factor == 1) != (f.kind == Kind::Duration));
            assert!(factors_ok, "{}", row.name);
        }
        assert_eq!(aliases("Agent"), ["Task"]);
    }
}
