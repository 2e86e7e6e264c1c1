//! The bridge's audit file: one JSON line per hook call, so a user sees what tollgate decided
//! for Claude Code or Codex, and why (`tollgate hook log`, or `jq` over the file).
//!
//! Default: `$XDG_STATE_HOME/tollgate/hook-audit.jsonl`, else
//! `~/.local/state/tollgate/hook-audit.jsonl`, beside the approval database and outside any
//! project, so the agent's own tools are not pointed at it; `--audit FILE` chooses another.
//! The file is created 0600 in a folder created 0700. Each line is written with one
//! `write` to a file opened for appending, so concurrent hooks (parallel tool calls) never
//! interleave within a line.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tollgate_approval::format_ms;
use tollgate_handlers::text::{escape_controls, escape_controls_json};
use tollgate_protocol::wire::HookRunWire;

use crate::registry::fail;

/// Tool inputs up to this size (as JSON) are recorded whole; larger ones by size only.
const MAX_INPUT_BYTES: usize = 64 * 1024;

/// The audit file unless `--audit` says otherwise.
pub fn default_path() -> PathBuf {
    let state = std::env::var_os("XDG_STATE_HOME")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".local/state")))
        .unwrap_or_else(std::env::temp_dir);
    state.join("tollgate").join("hook-audit.jsonl")
}

/// One line of the audit file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Entry {
    /// When the answer was given, RFC 3339 UTC.
    pub decided_at: String,
    /// `claude-code` or `codex`.
    pub host: String,
    /// The host's event (`PreToolUse`).
    pub host_event: String,
    /// The tollgate event it was dispatched as; `null` when not bridged.
    pub event: Option<String>,
    /// The host's session.
    pub session_id: Option<String>,
    /// The call's id.
    pub tool_use_id: Option<String>,
    /// The tool as the host names it.
    pub tool_name: Option<String>,
    /// The tool as tollgate dispatched it.
    pub tollgate_tool: Option<String>,
    /// The input as the host sent it (`null` when over 64 KiB: see `tool_input_bytes`).
    pub tool_input: Option<Value>,
    /// The input's size in bytes, when it was too large to record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_input_bytes: Option<usize>,
    /// `allow`, `approved`, `ask`, `deny`; `ignored` for an event the bridge does not map,
    /// `error` when the call could not be decided.
    pub decision: String,
    /// Why (a deny's or ask's reason, who approved, what went wrong).
    pub reason: Option<String>,
    /// The hook or `permission_gate` that denied or asked.
    pub decided_by: Option<String>,
    /// The approval request, when one was filed.
    pub approval_id: Option<String>,
    /// The arguments the call was told to run with, in the host's names, when changed.
    pub updated_input: Option<Value>,
    /// Context hooks added.
    pub additional_context: Vec<String>,
    /// Every hook run.
    pub hook_runs: Vec<HookRunWire>,
    /// What loading the configuration skipped or found missing (`FILE: ENTRY: MESSAGE`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// What the hook exited with (0, 1 or 2).
    pub exit_code: u8,
    /// From reading stdin to the answer.
    pub duration_ms: u64,
}

impl Entry {
    /// An entry at `now_ms` for `host` and `host_event`, with nothing decided yet.
    pub fn new(now_ms: i64, host: &str, host_event: &str) -> Self {
        Self {
            decided_at: format_ms(now_ms),
            host: host.into(),
            host_event: host_event.into(),
            event: None,
            session_id: None,
            tool_use_id: None,
            tool_name: None,
            tollgate_tool: None,
            tool_input: None,
            tool_input_bytes: None,
            decision: "error".into(),
            reason: None,
            decided_by: None,
            approval_id: None,
            updated_input: None,
            additional_context: Vec::new(),
            hook_runs: Vec::new(),
            warnings: Vec::new(),
            exit_code: 0,
            duration_ms: 0,
        }
    }

    /// Records the tool input, or only its size when it is large.
    pub fn set_input(&mut self, input: &Value) {
        let bytes = input.to_string().len();
        if bytes <= MAX_INPUT_BYTES {
            self.tool_input = Some(input.clone());
        } else {
            self.tool_input_bytes = Some(bytes);
        }
    }
}

/// Appends `entry` to `path` (folder created 0700, file 0600).
///
/// # Errors
/// The folder or file cannot be created or written.
pub fn append(path: &Path, entry: &Entry) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
    }
    let mut line = serde_json::to_string(entry).map_err(std::io::Error::other)?;
    line.push('\n');
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(line.as_bytes())
}

/// Arguments of `tollgate hook log`.
#[derive(Debug, Args)]
pub struct Log {
    /// The audit file (default: $XDG_STATE_HOME/tollgate/hook-audit.jsonl, else
    /// ~/.local/state/tollgate/hook-audit.jsonl).
    #[arg(long, value_name = "FILE")]
    audit: Option<PathBuf>,
    /// Only entries with this decision (`allow`, `approved`, `ask`, `deny`, `ignored`,
    /// `error`).
    #[arg(long, value_name = "DECISION")]
    decision: Option<String>,
    /// Show the last N entries.
    #[arg(short = 'n', long, value_name = "N", default_value_t = 20)]
    limit: usize,
    /// Print the entries as they are in the file (JSON Lines).
    #[arg(long)]
    json: bool,
}

/// Runs `tollgate hook log`: the last entries, oldest first, as a table or JSON Lines.
///
/// Exit status: 0; 1 when the file cannot be read.
///
/// # Errors
/// Writing to `out` fails.
pub fn log(args: Log, out: &mut impl Write) -> Result<ExitCode> {
    let path = args.audit.unwrap_or_else(default_path);
    let file = match std::fs::File::open(&path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            writeln!(out, "no hook call recorded yet ({})", path.display())?;
            return Ok(ExitCode::SUCCESS);
        }
        Err(e) => return Ok(fail(1, &format!("cannot read {}: {e}", path.display()))),
    };
    let mut entries: Vec<(String, Entry)> = Vec::new();
    for (number, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line?;
        match serde_json::from_str::<Entry>(&line) {
            Ok(entry) if args.decision.as_ref().is_none_or(|d| *d == entry.decision) => {
                entries.push((line, entry));
            }
            Ok(_) => {}
            Err(e) => crate::registry::warn(format!("{}:{}: {e}", path.display(), number + 1)),
        }
    }
    let skip = entries.len().saturating_sub(args.limit);
    for (line, entry) in &entries[skip..] {
        if args.json {
            writeln!(out, "{}", escape_controls_json(line))?;
        } else {
            writeln!(out, "{}", row(entry))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `TIME  HOST  EVENT  TOOL  DECISION  BY: REASON`, escaped, the reason cut at 160 chars.
fn row(entry: &Entry) -> String {
    let reason: String = entry
        .reason
        .as_deref()
        .unwrap_or("")
        .chars()
        .take(160)
        .collect();
    let by = entry
        .decided_by
        .as_deref()
        .map_or_else(String::new, |b| format!("[{b}] "));
    let command = entry
        .tool_input
        .as_ref()
        .and_then(|i| i.get("command"))
        .and_then(Value::as_str)
        .map_or_else(String::new, |c| {
            format!(" {}", c.chars().take(60).collect::<String>())
        });
    escape_controls(&format!(
        "{}  {:<11} {:<18} {:<8} {:<8} {by}{reason}{}",
        entry.decided_at,
        entry.host,
        entry.host_event,
        entry.tool_name.as_deref().unwrap_or("-"),
        entry.decision,
        if command.is_empty() {
            String::new()
        } else {
            format!("  ·{command}")
        }
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    #[test]
    fn entries_are_appended_as_lines_in_a_private_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state/tollgate/hook-audit.jsonl");
        let mut entry = Entry::new(0, "codex", "PreToolUse");
        entry.set_input(&json!({"command": "ls"}));
        append(&path, &entry).unwrap();
        append(&path, &entry).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<Entry> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines, [entry.clone(), entry]);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let dir_mode = std::fs::metadata(path.parent().unwrap())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(dir_mode & 0o777, 0o700);
    }

    #[test]
    fn large_inputs_are_recorded_by_size() {
        let mut entry = Entry::new(0, "claude-code", "PreToolUse");
        let content = "x".repeat(MAX_INPUT_BYTES);
        entry.set_input(&json!({"content": content}));
        assert_eq!(entry.tool_input, None);
        assert_eq!(entry.tool_input_bytes, Some(MAX_INPUT_BYTES + 14));
    }
}
