//! `tollgate shell-check`: the static shell analyzer (`tollgate-shell`) on the command line.
//!
//! Prints one JSON object per command:
//! `{"command":…,"profile":…,"verdict":"allow|escalate|block","refused":bool,
//! "findings":[{"rule":…,"message":…,"span":[start,end]}]}`, where `span` is a byte range of
//! the command and `refused` applies the profile (`escalate` is refused for `external` only).
//! Control characters, line separators and bidirectional controls in strings are escaped
//! (`\u009b`), as everywhere tollgate prints what it was given.
//!
//! Exit status: 0 when every command could be analysed, whatever the verdicts; 2 on input that
//! cannot be read (a `--jsonl` line that is not one JSON string, or is not UTF-8), after the
//! objects for the lines before it, with the line number on stderr.

use std::io::{BufRead, Write};
use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, ValueEnum};
use serde::Serialize;
use serde_json::Value;
use tollgate_handlers::text::escape_controls_json;
use tollgate_shell::{Profile, analyze};

/// Arguments of `tollgate shell-check`.
#[derive(Debug, Args)]
pub struct ShellCheck {
    /// Who wrote the command. The default, `external`, is the strictest.
    #[arg(long, value_enum, default_value_t = ProfileArg::External)]
    profile: ProfileArg,
    /// Read the commands from standard input, one JSON string per line (blank lines are
    /// skipped), and print one JSON object per line.
    #[arg(long, conflicts_with = "command")]
    jsonl: bool,
    /// The command line to analyse.
    #[arg(required_unless_present = "jsonl")]
    command: Option<String>,
}

/// The analyzer profiles, as `--profile` values.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum ProfileArg {
    /// Built-in, admin-config and agent-config hooks: `escalate` is allowed.
    Trusted,
    /// Skill, plugin and user-config hooks: `escalate` is refused too.
    External,
    /// The agent's own bash tool: inline interpreter code is allowed, `escalate` means "ask a
    /// human".
    Agent,
}

impl From<ProfileArg> for Profile {
    fn from(arg: ProfileArg) -> Self {
        match arg {
            ProfileArg::Trusted => Profile::Trusted,
            ProfileArg::External => Profile::External,
            ProfileArg::Agent => Profile::Agent,
        }
    }
}

/// Runs `tollgate shell-check`, writing to `out`; reads standard input with `--jsonl`.
///
/// # Errors
///
/// Writing to `out` failed.
pub fn run(args: ShellCheck, out: &mut impl Write) -> Result<ExitCode> {
    let profile = Profile::from(args.profile);
    match args.command {
        Some(command) => {
            writeln!(out, "{}", report(&command, profile)?)?;
            Ok(ExitCode::SUCCESS)
        }
        None => jsonl(std::io::stdin().lock(), out, profile),
    }
}

/// One JSON object per command line of `input`.
fn jsonl(mut input: impl BufRead, out: &mut impl Write, profile: Profile) -> Result<ExitCode> {
    let mut line = Vec::new();
    for number in 1.. {
        line.clear();
        let read = match input.read_until(b'\n', &mut line) {
            Ok(read) => read,
            Err(e) => return unreadable(out, number, &format!("cannot read standard input: {e}")),
        };
        if read == 0 {
            break;
        }
        let command = match parse_line(&line) {
            Ok(Some(command)) => command,
            Ok(None) => continue,
            Err(why) => return unreadable(out, number, &why),
        };
        writeln!(out, "{}", report(&command, profile)?)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The command on one `--jsonl` line; `None` for a blank line.
fn parse_line(line: &[u8]) -> Result<Option<String>, String> {
    let text = std::str::from_utf8(line).map_err(|e| format!("not valid UTF-8 ({e})"))?;
    if text.trim().is_empty() {
        return Ok(None);
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::String(command)) => Ok(Some(command)),
        Ok(other) => Err(format!("expected a JSON string, got {}", kind(&other))),
        Err(e) => Err(format!("not JSON ({e})")),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn unreadable(out: &mut impl Write, line: usize, why: &str) -> Result<ExitCode> {
    out.flush()?;
    eprintln!("tollgate shell-check: line {line}: {why}");
    Ok(ExitCode::from(2))
}

/// The JSON object for one command (fields in this order).
#[derive(Debug, Serialize)]
struct Report<'a> {
    command: &'a str,
    profile: &'static str,
    verdict: &'static str,
    refused: bool,
    findings: Vec<FindingReport>,
}

/// One finding: rule id, why, and the byte range `[start, end]` of the command.
#[derive(Debug, Serialize)]
struct FindingReport {
    rule: &'static str,
    message: String,
    span: [usize; 2],
}

fn report(command: &str, profile: Profile) -> serde_json::Result<String> {
    let analysis = analyze(command, profile);
    let report = Report {
        command,
        profile: profile.as_str(),
        verdict: analysis.verdict.as_str(),
        refused: analysis.refused(),
        findings: analysis
            .findings
            .into_iter()
            .map(|f| FindingReport {
                rule: f.rule,
                message: f.message,
                span: [f.span.start, f.span.end],
            })
            .collect(),
    };
    // DEL, C1 and bidirectional controls of the command (and of messages quoting it) are
    // escaped too, so the output cannot steer a terminal.
    serde_json::to_string(&report).map(|json| escape_controls_json(&json))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regression_terminal_controls_in_a_command_were_printed_raw() {
        let json = report("echo '\u{9b}2J\u{202e}\u{7f}'", Profile::External).unwrap();
        assert!(!json.contains(['\u{9b}', '\u{202e}', '\u{7f}']), "{json}");
        assert!(json.contains(r"\u009b2J\u202e\u007f"), "{json}");
        let value: Value = serde_json::from_str(&json).unwrap();
        assert_eq!(value["command"], "echo '\u{9b}2J\u{202e}\u{7f}'");
    }

    #[test]
    fn jsonl_stops_at_the_first_unreadable_line() {
        let input: &[u8] = b"\"ls\"\n\n\"sudo id\"\r\n42\n\"never\"\n";
        let mut out = Vec::new();
        let code = jsonl(input, &mut out, Profile::External).unwrap();
        assert_eq!(code, ExitCode::from(2));
        let lines: Vec<Value> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["verdict"], "allow");
        assert_eq!(lines[1]["verdict"], "block");
        assert_eq!(lines[1]["command"], "sudo id");
    }

    #[test]
    fn lines_must_be_json_strings() {
        assert_eq!(parse_line(b"\"a\\tb\"\n"), Ok(Some("a\tb".to_owned())));
        assert_eq!(parse_line(b"  \n"), Ok(None));
        assert!(parse_line(b"{}").unwrap_err().contains("an object"));
        assert!(parse_line(b"ls -la").unwrap_err().contains("not JSON"));
        assert!(parse_line(b"\"\xff\"").unwrap_err().contains("UTF-8"));
    }
}
