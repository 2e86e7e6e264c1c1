//! `tollgate hook install --claude-code|--codex [--project DIR]`: registers `tollgate hook` for
//! every bridged event in the host's hook settings, merging with what is there.
//!
//! | host | without `--project` | with `--project DIR` |
//! |---|---|---|
//! | Claude Code | `$CLAUDE_CONFIG_DIR/settings.json`, else `~/.claude/settings.json` | `DIR/.claude/settings.json` |
//! | Codex | `$CODEX_HOME/hooks.json`, else `~/.codex/hooks.json` | `DIR/.codex/hooks.json` |
//!
//! The file keeps everything else it holds (other settings, the user's own hooks, in order).
//! Per event, a command hook that runs `… hook --protocol <host>` is tollgate's: it is
//! replaced in place when the command or timeout changed; otherwise a group `{"hooks":
//! [{"type": "command", "command": …, "timeout": …}]}` (no `matcher`: every tool) is
//! appended. On `PreToolUse` and `UserPromptSubmit` the command ends in `|| exit 2`, so a
//! tollgate that is not there blocks instead of letting everything through. When something changes, the file as it was is copied first to `FILE.bak` (or
//! `FILE.bak.1`, … when that exists), and the new file replaces it in one rename. A second
//! install with the same flags changes nothing and writes nothing. A file that is not a JSON
//! object, or whose `hooks` is not one, is left alone (exit 1).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use serde_json::{Value, json};
use tollgate_handlers::text::escape_controls;

use super::BridgeFlags;
use super::host::{HostEvent, Protocol};
use crate::registry::fail;

/// Arguments of `tollgate hook install`.
#[derive(Debug, Args)]
pub struct Install {
    /// Install into Claude Code's settings.
    #[arg(long, conflicts_with = "codex", required_unless_present = "codex")]
    claude_code: bool,
    /// Install into Codex's hooks.json.
    #[arg(long)]
    codex: bool,
    /// The project folder whose settings to change (default: the user's settings).
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    /// The `tollgate` the hooks run (default: this executable).
    #[arg(long, value_name = "PATH")]
    executable: Option<PathBuf>,
    #[command(flatten)]
    flags: BridgeFlags,
}

/// Runs `tollgate hook install`. Exit status: 0 installed or already there; 1 the file cannot
/// be read, parsed or written; 2 bad arguments.
///
/// # Errors
/// Writing to `out` fails.
pub fn run(args: Install, out: &mut impl Write) -> Result<ExitCode> {
    let protocol = if args.codex {
        Protocol::Codex
    } else {
        Protocol::ClaudeCode
    };
    if args.flags.token.is_some() {
        return Ok(fail(
            2,
            "install does not write a token into the host's settings: use --token-file FILE, \
             or set TOLLGATE_TOKEN where the host runs",
        ));
    }
    let command = match command_line(&args, protocol) {
        Ok(command) => command,
        Err(message) => return Ok(fail(2, &message)),
    };
    let path = settings_path(protocol, args.project.as_deref());
    match install(&path, protocol, &command, args.flags.timeout) {
        Ok(Done::Unchanged) => writeln!(
            out,
            "{}: tollgate's hooks are already there; nothing changed",
            escape_controls(&path.display().to_string())
        )?,
        Ok(Done::Written { backup }) => {
            let events: Vec<&str> = HostEvent::installed(protocol)
                .iter()
                .map(|e| e.name())
                .collect();
            writeln!(
                out,
                "{}: tollgate hook for {}{}",
                escape_controls(&path.display().to_string()),
                events.join(", "),
                backup.map_or_else(String::new, |b| format!(
                    " (the previous file is in {})",
                    escape_controls(&b.display().to_string())
                ))
            )?;
            writeln!(out, "command: {}", escape_controls(&command))?;
        }
        Err(message) => return Ok(fail(1, &message)),
    }
    Ok(ExitCode::SUCCESS)
}

/// Where `protocol`'s hook settings are.
pub fn settings_path(protocol: Protocol, project: Option<&Path>) -> PathBuf {
    let home = || std::env::var_os("HOME").map_or_else(PathBuf::new, PathBuf::from);
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    match (protocol, project) {
        (Protocol::ClaudeCode, Some(dir)) => dir.join(".claude/settings.json"),
        (Protocol::Codex, Some(dir)) => dir.join(".codex/hooks.json"),
        (Protocol::ClaudeCode, None) => var("CLAUDE_CONFIG_DIR")
            .unwrap_or_else(|| home().join(".claude"))
            .join("settings.json"),
        (Protocol::Codex, None) => var("CODEX_HOME")
            .unwrap_or_else(|| home().join(".codex"))
            .join("hooks.json"),
    }
}

/// The hook command: this executable and the flags, paths made absolute, quoted for `sh`.
fn command_line(args: &Install, protocol: Protocol) -> Result<String, String> {
    let exe = match &args.executable {
        Some(path) => absolute(path)?,
        None => std::env::current_exe().map_err(|e| format!("cannot find this executable: {e}"))?,
    };
    let mut words = vec![
        exe.display().to_string(),
        "hook".into(),
        "--protocol".into(),
        protocol_flag(protocol).into(),
    ];
    let flags = &args.flags;
    let paths = [
        ("--admin", &flags.sources.admin),
        ("--hooks", &flags.sources.hooks),
    ];
    for (flag, list) in paths {
        for path in list {
            words.extend([flag.to_owned(), absolute(path)?.display().to_string()]);
        }
    }
    if let Some(agent) = &flags.sources.agent {
        words.extend(["--agent".into(), absolute(agent)?.display().to_string()]);
    }
    for skill in &flags.sources.skills {
        let skill = if Path::new(skill).exists() {
            absolute(Path::new(skill))?.display().to_string()
        } else {
            skill.clone()
        };
        words.extend(["--skill".into(), skill]);
    }
    if let Some(server) = &flags.server {
        words.extend(["--server".into(), server.clone()]);
    }
    if let Some(file) = &flags.token_file {
        words.extend(["--token-file".into(), absolute(file)?.display().to_string()]);
    }
    if let Some(audit) = &flags.audit {
        words.extend(["--audit".into(), absolute(audit)?.display().to_string()]);
    }
    words.extend(["--timeout".into(), flags.timeout.to_string()]);
    Ok(words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" "))
}

fn protocol_flag(protocol: Protocol) -> &'static str {
    match protocol {
        Protocol::ClaudeCode => "claude-code",
        Protocol::Codex => "codex",
    }
}

fn absolute(path: &Path) -> Result<PathBuf, String> {
    std::path::absolute(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// `word` as one `sh` word: bare when it holds only safe characters, else single-quoted.
fn quote(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        return word.to_owned();
    }
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// What [`install`] did.
#[derive(Debug, PartialEq)]
enum Done {
    Unchanged,
    Written { backup: Option<PathBuf> },
}

fn install(path: &Path, protocol: Protocol, command: &str, timeout: u64) -> Result<Done, String> {
    let shown = path.display();
    let existing = match std::fs::read_to_string(path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(format!("cannot read {shown}: {e}")),
    };
    let mut doc = match existing.as_deref().filter(|t| !t.trim().is_empty()) {
        Some(text) => serde_json::from_str(text)
            .map_err(|e| format!("{shown} is not JSON ({e}); it is left as it is"))?,
        None => json!({}),
    };
    if !merge(&mut doc, protocol, command, timeout).map_err(|e| format!("{shown}: {e}"))? {
        return Ok(Done::Unchanged);
    }
    let backup = match existing {
        Some(text) => Some(backup(path, &text)?),
        None => None,
    };
    write(path, &doc)?;
    Ok(Done::Written { backup })
}

/// Puts tollgate's hook on every installed event of `doc`; whether anything changed.
///
/// # Errors
/// `doc` or its `hooks`, or an event's list, is not of the shape the hosts read.
fn merge(doc: &mut Value, protocol: Protocol, command: &str, timeout: u64) -> Result<bool, String> {
    let Value::Object(root) = doc else {
        return Err("not a JSON object; it is left as it is".into());
    };
    let hooks = root.entry("hooks").or_insert_with(|| json!({}));
    let Value::Object(hooks) = hooks else {
        return Err("`hooks` is not an object; it is left as it is".into());
    };
    let mut changed = false;
    for event in HostEvent::installed(protocol) {
        let ours = json!({"type": "command", "command": event_command(*event, command),
            "timeout": timeout});
        let groups = hooks.entry(event.name()).or_insert_with(|| json!([]));
        let Value::Array(groups) = groups else {
            return Err(format!(
                "`hooks.{}` is not a list; it is left as it is",
                event.name()
            ));
        };
        changed |= put(groups, protocol, &ours);
    }
    Ok(changed)
}

/// The command for `event`: where a call waits on the answer, `|| exit 2`, so that a hook
/// that cannot run at all (the executable moved or removed: the shell exits 127) blocks the
/// call instead of being a failed hook the host goes past; the shell's message is the reason.
/// tollgate itself never exits 1 on those events.
fn event_command(event: HostEvent, command: &str) -> String {
    if event.blocks() {
        format!("{command} || exit 2")
    } else {
        command.to_owned()
    }
}

/// Replaces tollgate's hook in `groups` with `ours`, or appends a group holding it.
fn put(groups: &mut Vec<Value>, protocol: Protocol, ours: &Value) -> bool {
    let marker = format!(" hook --protocol {}", protocol_flag(protocol));
    let is_ours = |hook: &Value| {
        hook.get("command")
            .and_then(Value::as_str)
            .is_some_and(|c| c.contains(&marker))
    };
    for group in groups.iter_mut() {
        let Some(list) = group.get_mut("hooks").and_then(Value::as_array_mut) else {
            continue;
        };
        if let Some(hook) = list.iter_mut().find(|h| is_ours(h)) {
            if hook == ours {
                return false;
            }
            *hook = ours.clone();
            return true;
        }
    }
    groups.push(json!({"hooks": [ours]}));
    true
}

/// Copies `text` (the file as it was) to the first free `FILE.bak`, `FILE.bak.1`, ….
fn backup(path: &Path, text: &str) -> Result<PathBuf, String> {
    use std::os::unix::fs::OpenOptionsExt;
    for n in 0..1000 {
        let mut name = path.as_os_str().to_owned();
        name.push(if n == 0 {
            ".bak".to_owned()
        } else {
            format!(".bak.{n}")
        });
        let candidate = PathBuf::from(name);
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&candidate);
        match file {
            Ok(mut file) => {
                file.write_all(text.as_bytes())
                    .map_err(|e| format!("cannot write {}: {e}", candidate.display()))?;
                return Ok(candidate);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(format!("cannot write {}: {e}", candidate.display())),
        }
    }
    Err(format!("{}: too many backups already", path.display()))
}

/// Writes `doc` pretty-printed to `path` through a temporary file and a rename.
fn write(path: &Path, doc: &Value) -> Result<(), String> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut text = serde_json::to_string_pretty(doc).map_err(|e| e.to_string())?;
    text.push('\n');
    let mut temp = tempfile::NamedTempFile::new_in(dir)
        .map_err(|e| format!("cannot write in {}: {e}", dir.display()))?;
    temp.write_all(text.as_bytes())
        .map_err(|e| format!("cannot write in {}: {e}", dir.display()))?;
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(temp.path(), meta.permissions());
    }
    temp.persist(path)
        .map_err(|e| format!("cannot replace {}: {e}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    const CMD: &str = "/usr/bin/tollgate hook --protocol claude-code --timeout 600";

    #[test]
    fn merging_adds_one_group_per_event_and_keeps_the_users_hooks() {
        let theirs =
            json!({"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]});
        let mut doc = json!({"model": "opus", "hooks": {"PreToolUse": [theirs.clone()]}});
        assert!(merge(&mut doc, Protocol::ClaudeCode, CMD, 600).unwrap());
        assert_eq!(doc["model"], "opus");
        let pre = doc["hooks"]["PreToolUse"].as_array().unwrap();
        assert_eq!(pre[0], theirs);
        let blocking = format!("{CMD} || exit 2");
        assert_eq!(
            pre[1],
            json!({"hooks": [{"type": "command", "command": blocking, "timeout": 600}]})
        );
        assert_eq!(
            doc["hooks"]["SessionStart"][0],
            json!({"hooks": [{"type": "command", "command": CMD, "timeout": 600}]})
        );
        for event in HostEvent::installed(Protocol::ClaudeCode) {
            assert!(doc["hooks"][event.name()].is_array(), "{event:?}");
        }
        let once = doc.clone();
        assert!(!merge(&mut doc, Protocol::ClaudeCode, CMD, 600).unwrap());
        assert_eq!(doc, once);
    }

    #[test]
    fn a_changed_command_replaces_tollgates_hook_in_place() {
        let mut doc = json!({});
        merge(
            &mut doc,
            Protocol::Codex,
            "t hook --protocol codex --timeout 600",
            600,
        )
        .unwrap();
        merge(
            &mut doc,
            Protocol::Codex,
            "t hook --protocol codex --timeout 900",
            900,
        )
        .unwrap();
        let pre = doc["hooks"]["PreToolUse"].as_array().unwrap();
        assert_eq!(pre.len(), 1);
        assert_eq!(pre[0]["hooks"][0]["timeout"], 900);
    }

    #[test]
    fn files_of_another_shape_are_refused() {
        for bad in [
            json!([]),
            json!({"hooks": []}),
            json!({"hooks": {"PreToolUse": {}}}),
        ] {
            let mut doc = bad.clone();
            assert!(
                merge(&mut doc, Protocol::ClaudeCode, CMD, 600).is_err(),
                "{bad}"
            );
            assert_eq!(doc, bad);
        }
    }

    #[test]
    fn words_are_quoted_for_sh() {
        assert_eq!(quote("/opt/tollgate"), "/opt/tollgate");
        assert_eq!(quote("/my dir/it's.yaml"), r"'/my dir/it'\''s.yaml'");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("$HOME"), "'$HOME'");
    }
}
