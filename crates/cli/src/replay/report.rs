//! What `tollgate replay` prints: one [`CallReport`] per replayed call and a [`Summary`], as
//! JSON or as an aligned table.

use std::fmt::Write as _;
use std::io::{self, Write};

use serde::Serialize;
use serde_json::Value;
use tollgate_core::{DecidedBy, DispatchOutcome};
use tollgate_handlers::text::escape_controls;
use tollgate_protocol::RunStatus;

use super::Prepared;

/// The verdict on one replayed call.
#[derive(Debug, Serialize)]
pub struct CallReport {
    /// 1-based number of the call among the replayed ones (the table's `#`).
    pub index: usize,
    /// The transcript line it was recorded on.
    pub line: u64,
    /// The model's id for the call.
    pub tool_call_id: String,
    /// The tool name the hooks saw.
    pub tool_name: String,
    /// Claude Code's name for the tool (Claude Code transcripts only).
    pub claude_code_tool: Option<String>,
    /// `allow`, `deny` or `ask`.
    pub decision: &'static str,
    /// The hook that denied or asked (`permission_gate` never appears: replay has none).
    pub hook: Option<String>,
    /// The deny or ask reason.
    pub reason: Option<String>,
    /// Whether the call would run with arguments the hooks changed (never for a deny).
    pub rewritten: bool,
    /// The hooks that rewrote the arguments, in run order.
    pub rewritten_by: Vec<String>,
    /// The arguments it would run with, when rewritten.
    pub modified_args: Option<Value>,
    /// Hook runs that failed (timed out, crashed, refused, …), resolved by their failure mode.
    pub hook_failures: Vec<FailureReport>,
    /// What a reader must know about how the call was replayed: `not mapped: Task without a
    /// string `prompt`; dispatched as recorded`.
    pub note: Option<String>,
}

/// One failed hook run.
#[derive(Debug, Serialize)]
pub struct FailureReport {
    /// The hook's name.
    pub hook: String,
    /// `timed_out`, `crashed`, `errored`, `refused`, `invalid_output` or `dropped`.
    pub status: &'static str,
    /// What went wrong.
    pub error: Option<String>,
}

/// Counts over the replayed calls. `allowed + denied + asked == total`; `rewritten` counts the
/// allowed or asked calls whose arguments hooks changed; `skipped` counts tool calls found in
/// the transcript that could not be replayed (each has a warning), so `total + skipped` is the
/// number of tool calls in the file, unless `skipped_lines` (lines that could not be read at
/// all, which may have held calls) is not zero.
#[derive(Debug, Default, Serialize)]
pub struct Summary {
    /// Calls replayed.
    pub total: usize,
    /// Allowed (rewritten or not).
    pub allowed: usize,
    /// Denied.
    pub denied: usize,
    /// Sent to a human.
    pub asked: usize,
    /// Allowed or asked with rewritten arguments.
    pub rewritten: usize,
    /// Claude Code calls the tool mapping could not translate, dispatched as recorded (counted
    /// in `total` too).
    pub not_mapped: usize,
    /// Found but not replayable.
    pub skipped: usize,
    /// Lines skipped whole (not JSON, over the size limit, not an entry): any calls on them
    /// are in no other count.
    pub skipped_lines: usize,
    /// Calls during which at least one hook failed.
    pub with_hook_failures: usize,
}

impl CallReport {
    /// The report of the dispatch of `call`, the `index`th call replayed.
    pub fn new(index: usize, call: &Prepared, outcome: &DispatchOutcome) -> Self {
        let rewritten = !outcome.is_denied()
            && outcome
                .modified_args
                .as_ref()
                .is_some_and(|a| *a != call.tool_input);
        Self {
            index,
            line: call.line,
            tool_call_id: call.tool_call_id.clone(),
            tool_name: call.tool_name.clone(),
            claude_code_tool: call.claude_code_tool.clone(),
            decision: outcome.decision.as_str(),
            hook: outcome.decided_by.as_ref().map(|d| match d {
                DecidedBy::Hook(name) => name.to_string(),
                DecidedBy::PermissionGate => "permission_gate".to_owned(),
            }),
            reason: outcome.decision.reason().map(str::to_owned),
            rewritten,
            rewritten_by: outcome
                .runs
                .iter()
                .filter(|r| rewritten && r.rewrote)
                .map(|r| r.name.to_owned())
                .collect(),
            modified_args: outcome.modified_args.clone().filter(|_| rewritten),
            hook_failures: outcome
                .runs
                .iter()
                .filter(|r| !matches!(r.status, RunStatus::Completed | RunStatus::Detached))
                .map(|r| FailureReport {
                    hook: r.name.to_owned(),
                    status: r.status.as_str(),
                    error: r.error.clone(),
                })
                .collect(),
            note: call
                .not_mapped
                .as_ref()
                .map(|why| format!("not mapped: {why}; dispatched as recorded")),
        }
    }
}

impl Summary {
    /// Counts `calls`; the skipped calls and lines are given.
    pub fn new(calls: &[CallReport], skipped: usize, skipped_lines: usize) -> Self {
        let count = |decision: &str| calls.iter().filter(|c| c.decision == decision).count();
        Self {
            total: calls.len(),
            allowed: count("allow"),
            denied: count("deny"),
            asked: count("ask"),
            rewritten: calls.iter().filter(|c| c.rewritten).count(),
            not_mapped: calls.iter().filter(|c| c.note.is_some()).count(),
            skipped,
            skipped_lines,
            with_hook_failures: calls.iter().filter(|c| !c.hook_failures.is_empty()).count(),
        }
    }

    /// `N calls: A allowed, D denied, Q asked, R rewritten`, plus the calls dispatched as
    /// recorded, the skipped calls and calls with hook failures when there are any.
    pub fn line(&self) -> String {
        let mut line = format!(
            "{} calls: {} allowed, {} denied, {} asked, {} rewritten",
            self.total, self.allowed, self.denied, self.asked, self.rewritten
        );
        if self.not_mapped > 0 {
            let _ = write!(
                line,
                "; {} not mapped, dispatched as recorded",
                self.not_mapped
            );
        }
        if self.skipped > 0 {
            let _ = write!(line, "; {} skipped (see the warnings)", self.skipped);
        }
        if self.skipped_lines > 0 {
            let _ = write!(
                line,
                "; {} unreadable line(s) skipped, calls on them are not counted",
                self.skipped_lines
            );
        }
        if self.with_hook_failures > 0 {
            let _ = write!(line, "; {} with hook failures", self.with_hook_failures);
        }
        line
    }
}

// ---- the table -------------------------------------------------------------------------------

const HEADER: [&str; 5] = ["#", "tool", "decision", "hook", "reason"];
/// Widest `tool` and `hook` cells; longer ones are shortened with `…`.
const MAX_NAME: usize = 40;
/// The reason column never gets narrower than this, whatever the terminal width.
const MIN_REASON: usize = 24;

/// Prints the calls as an aligned table, then the summary line. Cells have their control
/// characters escaped; names and reasons are shortened with `…` so a row fits in `width`
/// characters where possible.
///
/// # Errors
/// When writing to `out` fails.
pub fn print_table(
    calls: &[CallReport],
    summary: &Summary,
    width: usize,
    out: &mut impl Write,
) -> io::Result<()> {
    let rows: Vec<[String; 5]> = calls.iter().map(row).collect();
    let mut widths = HEADER.map(|h| h.chars().count());
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    widths[1] = widths[1].min(MAX_NAME);
    widths[3] = widths[3].min(MAX_NAME);
    let used: usize = widths[..4].iter().map(|w| w + 2).sum();
    let reason_width = width.saturating_sub(used).max(MIN_REASON);
    write_row(&HEADER.map(str::to_owned), &widths, reason_width, out)?;
    for row in &rows {
        write_row(row, &widths, reason_width, out)?;
    }
    writeln!(out)?;
    writeln!(out, "{}", summary.line())
}

fn write_row(
    row: &[String; 5],
    widths: &[usize; 5],
    reason_width: usize,
    out: &mut impl Write,
) -> io::Result<()> {
    let index = format!("{:>w$}", row[0], w = widths[0]);
    let mut line = index;
    for (cell, w) in row[1..4].iter().zip(&widths[1..4]) {
        let _ = write!(line, "  {:<w$}", shorten(cell, *w));
    }
    let _ = write!(line, "  {}", shorten(&row[4], reason_width));
    writeln!(out, "{}", line.trim_end())
}

fn row(call: &CallReport) -> [String; 5] {
    let tool = match &call.claude_code_tool {
        Some(claude) if *claude != call.tool_name => format!("{} ({claude})", call.tool_name),
        _ => call.tool_name.clone(),
    };
    let hook = match (&call.hook, call.rewritten_by.is_empty()) {
        (Some(hook), _) => hook.clone(),
        (None, false) => call.rewritten_by.join(", "),
        (None, true) => "-".to_owned(),
    };
    [
        call.index.to_string(),
        escape_controls(&tool),
        call.decision.to_owned(),
        escape_controls(&hook),
        escape_controls(&reason_cell(call)),
    ]
}

/// The decision's reason, then what else a reader must know: a rewrite, hook failures.
fn reason_cell(call: &CallReport) -> String {
    let mut parts: Vec<String> = call.reason.iter().cloned().collect();
    parts.extend(call.note.iter().cloned());
    if let Some(args) = &call.modified_args {
        parts.push(format!("arguments rewritten to {args}"));
    }
    for failure in &call.hook_failures {
        let error = failure.error.as_deref().unwrap_or("no detail");
        parts.push(format!("hook {} {}: {error}", failure.hook, failure.status));
    }
    if parts.is_empty() {
        "-".to_owned()
    } else {
        parts.join("; ")
    }
}

/// `text` cut to `width` characters, the last one `…` when anything was cut.
fn shorten(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_owned();
    }
    let mut short: String = text.chars().take(width.saturating_sub(1)).collect();
    short.push('…');
    short
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shorten_keeps_short_text_and_marks_cuts() {
        assert_eq!(shorten("abc", 3), "abc");
        assert_eq!(shorten("abcdef", 4), "abc…");
        assert_eq!(shorten("ééééé", 3), "éé…");
    }

    #[test]
    fn escape_controls_escapes_newlines_ansi_and_bidi_but_keeps_text() {
        assert_eq!(escape_controls("a\nb\u{1b}[31m"), "a\\nb\\u{1b}[31m");
        assert_eq!(escape_controls("x\u{202e}y"), "x\\u{202e}y");
        assert_eq!(escape_controls("naïve → ok"), "naïve → ok");
    }
}
