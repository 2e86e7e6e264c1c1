//! `tollgate replay`: feed every tool call recorded in a transcript through `pre_tool_use` as a
//! dry run, and report what the hooks would have decided.
//!
//! The transcript is a Claude Code session (JSONL, `tool_use` blocks of `assistant` entries) or
//! a tollgate trace (`tool_call` lines), detected per line ([`transcript`]). Claude Code calls
//! are mapped to tollgate's runtime tools unless `--tool-names claude` ([`mapping`]). The
//! registry is built as `tollgate dispatch` builds it ([`crate::registry`]); one registry and
//! one dispatcher serve the whole replay, in file order, so stateful hooks (rate limits) see
//! every call. Hooks really run (a command hook runs its shell line on each payload); tools
//! never do: nothing recorded is executed. The runtime's permission gate reviews each call as
//! in `tollgate run`: the shell analyzer's `agent` profile on `bash_code_execute_tool` (a
//! `block` denies as `permission_gate`, an `escalate` asks); with `--agent` the agent's
//! confirmation settings apply too, as in a run.
//!
//! Each payload is `{"event":"pre_tool_use","session_id","run_id","trace_id","agent_id",
//! "source":"replay","metadata":{"replay":true,"transcript","line","format",…},"tool_name",
//! "tool_call_id","tool_input"}`; `docs/replay.md` lists the metadata and id rules.
//!
//! Exit status: 0 when the replay ran, whatever the decisions; 1 when the configuration cannot
//! be built; 2 on bad arguments, an unreadable transcript, a file that is no transcript at all
//! (binary, UTF-16, other text), or a transcript without a tool call that could be replayed.

pub(crate) mod mapping;
mod payload;
mod report;
mod transcript;

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Result;
use clap::Args;
use serde::Serialize;
use tollgate_core::{Background, Dispatcher};
use tollgate_handlers::text::escape_controls_json;

use crate::registry::{HookSources, Policy, fail, init_logging, warn};
use mapping::ToolNames;
use payload::{Prepared, prepare};
use report::{CallReport, Summary, print_table};
use transcript::{ReadError, Transcript};

/// Default `--max-line-bytes`: Claude Code lines holding a written file or an image can be
/// several MiB.
const DEFAULT_MAX_LINE: usize = 64 * 1024 * 1024;

/// Arguments of `tollgate replay`.
#[derive(Debug, Args)]
pub struct Replay {
    /// The transcript: a Claude Code session (JSONL) or a tollgate trace; `-` reads stdin.
    #[arg(value_name = "TRANSCRIPT")]
    transcript: PathBuf,
    #[command(flatten)]
    sources: HookSources,
    /// Which tool names and inputs Claude Code calls are replayed under: tollgate's runtime
    /// tools (`Bash` → `bash_code_execute_tool {command}`) or Claude Code's own, verbatim.
    /// Trace lines always keep their names.
    #[arg(long, value_enum, value_name = "NAMES", default_value_t = ToolNames::Tollgate)]
    tool_names: ToolNames,
    /// Print {"calls":[…],"summary":{…}} as JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// Skip (with a warning) transcript lines longer than this many bytes.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_LINE,
          value_parser = clap::value_parser!(usize))]
    max_line_bytes: usize,
}

#[derive(Serialize)]
struct JsonReport<'a> {
    calls: &'a [CallReport],
    summary: &'a Summary,
}

/// Runs `tollgate replay`.
///
/// # Errors
/// Only when the Tokio runtime cannot start or writing to `out` fails.
pub fn run(args: Replay, out: &mut impl Write) -> Result<ExitCode> {
    init_logging();
    if args.sources.is_empty() {
        return Ok(fail(
            2,
            "no hooks to replay against: pass --agent, --hooks, --admin or --skill",
        ));
    }
    let source = args.transcript.display().to_string();
    let transcript = match read_transcript(&args) {
        Ok(transcript) => transcript,
        Err(message) => return Ok(fail(2, &message)),
    };
    let (calls, skipped, mut warnings) = prepare(&transcript, &source, args.tool_names);
    warnings.extend(transcript.warnings.iter().cloned());
    warnings.extend(transcript.notes.iter().cloned());
    warnings.sort_by_key(|w| w.line);
    for warning in &warnings {
        warn(format_args!("{source}: {warning}"));
    }
    if calls.is_empty() {
        let message = match skipped {
            0 => format!(
                "{source}: no tool calls found ({} lines read)",
                transcript.lines
            ),
            n => {
                format!("{source}: none of its {n} tool calls could be replayed (see the warnings)")
            }
        };
        return Ok(fail(2, &message));
    }
    let policy = match args.sources.build() {
        Ok(policy) => policy,
        Err((code, message)) => return Ok(fail(code, &message)),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let reports = runtime.block_on(dispatch_all(policy, &calls));
    let summary = Summary::new(&reports, skipped, transcript.skipped_lines());
    let printed = if args.json {
        let report = JsonReport {
            calls: &reports,
            summary: &summary,
        };
        let json = serde_json::to_string_pretty(&report)?;
        writeln!(out, "{}", escape_controls_json(&json))
    } else {
        print_table(&reports, &summary, terminal_width(), out)
    };
    // A closed stdout (`| head`) is an error here and a quiet exit in `main`.
    printed?;
    Ok(ExitCode::SUCCESS)
}

fn read_transcript(args: &Replay) -> std::result::Result<Transcript, String> {
    let path = &args.transcript;
    let reader: Box<dyn BufRead> = if path.as_os_str() == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        let file = File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Box::new(BufReader::with_capacity(1 << 16, file))
    };
    transcript::read(reader, args.max_line_bytes).map_err(|e| match e {
        ReadError::Io(e) => format!("cannot read {}: {e}", path.display()),
        ReadError::NotATranscript(_) => format!("{}: {e}; nothing was replayed", path.display()),
    })
}

async fn dispatch_all(policy: Policy, calls: &[Prepared]) -> Vec<CallReport> {
    let background = Background::default();
    // Without an agent file the replay still applies the run's default gate (the shell
    // analyzer on the shell tool), as a run of the default agent would.
    let Policy {
        registry,
        gate,
        agent,
    } = policy;
    let dispatcher = Dispatcher::new(registry)
        .with_background(background.clone())
        .with_permission_gate(Arc::new(gate.unwrap_or_default()));
    let mut reports = Vec::with_capacity(calls.len());
    for (i, call) in calls.iter().enumerate() {
        let payload = if let Some(agent) = &agent {
            // The agent's metadata (`org_id`, …) as a run of it would carry; recorded keys win.
            let mut payload = (*call.payload).clone();
            agent.fill_metadata(&mut payload.common.metadata);
            Arc::new(payload)
        } else {
            Arc::clone(&call.payload)
        };
        let outcome = dispatcher.dispatch(payload).await;
        reports.push(CallReport::new(i + 1, call, &outcome));
    }
    // Fire-and-forget hooks keep their deadline; let them finish before the process exits.
    background.idle().await;
    reports
}

/// `$COLUMNS` when set to a number, else 120.
fn terminal_width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(120)
}
