//! `tollgate`: the command-line interface.

mod approvals;
mod check;
mod dispatch;
mod doctor;
mod hook;
mod registry;
mod replay;
mod run;
mod serve;
mod shell_check;

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand, ValueEnum};
use tollgate_core::{DispatchMode, builtin_mode};
use tollgate_protocol::schema::{hook_run_schema, outcome_schema, payload_schema};
use tollgate_protocol::{ALIASES, BUILTIN_EVENTS};

/// tollgate: a hook engine for LLM-agent runtimes.
///
/// When an agent proposes an action (call a tool, start a sub-agent, end a session), tollgate
/// runs the hooks registered for that lifecycle event and folds their answers into one
/// decision: allow, deny, ask a human, rewrite the arguments or the result, add context.
#[derive(Debug, Parser)]
#[command(name = "tollgate", version, about, long_about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run an agent session: every tool call goes through the agent's hooks; the run streams
    /// to the terminal and, with --trace, to a JSON Lines file.
    ///
    /// Without --agent the default agent runs (the standard tools, the `direct` model: the
    /// prompt is the tool call), so `tollgate run --hooks FILE "rm -rf build"` tries a hook
    /// file in a real run.
    ///
    /// Exits 0 when the session completed, 1 when it failed (or its agent cannot be built or
    /// hit its turn limit), 2 on bad arguments, 130 when cancelled.
    Run(run::Run),
    /// Lists and decides confirmation requests (asks waiting for a human) in the approval
    /// database.
    Approvals(approvals::Approvals),
    /// Serve agent runs and approvals over HTTP (docs/server.md): start runs and stream
    /// their events, decide confirmation requests through the API, the /approvals web page
    /// or Feishu/Slack buttons (docs/channels.md); runs survive a restart.
    ///
    /// Prints `listening on http://ADDR` on stderr once bound. SIGTERM or SIGINT stops it
    /// gracefully (exit 0); exits 1 when the configuration, the database or the address
    /// cannot be used.
    Serve(serve::Serve),
    /// List the lifecycle events: canonical name, accepted aliases, and how their hooks run.
    Events,
    /// Print the JSON Schema of what hooks receive (payload), may answer (outcome), or a hook
    /// run as written to a trace (hook-run).
    Schema {
        /// Which schema.
        #[arg(value_enum)]
        which: SchemaKind,
    },
    /// Analyse a shell command line: allow, escalate or block, with the rules that matched.
    ///
    /// Prints one JSON object: {"command","profile","verdict","refused","findings":[{"rule",
    /// "message","span"}]}. Exits 0 when the command could be analysed (whatever the verdict),
    /// 2 on unreadable --jsonl input.
    ShellCheck(shell_check::ShellCheck),
    /// Load SKILL.md files, agent files and hook files (YAML or JSON) and print the resolved
    /// hooks and the warnings; an agent file shows its gate, skills and sub-agents too.
    ///
    /// Exits 0 when every file parsed (warnings allowed), 1 otherwise; with `--strict`, 1 also
    /// on any warning (for CI). `--json` prints
    /// {"files":[{"path","hooks":[…],"warnings":[{"entry","message"}],"errors":[…]}]}.
    Check(check::Check),
    /// Build the hooks as a run would (admin, agent, user hook files, selected skills) and
    /// dispatch one event through them.
    ///
    /// Prints one JSON object per dispatch: {"decision","reason","modified_args",
    /// "modified_result","additional_context","side_effects":[…],"hook_runs":[…]}. Exits 0
    /// when dispatched (whatever the decision), 1 when the configuration cannot be built, 2 on
    /// a bad payload or arguments.
    Dispatch(dispatch::Dispatch),
    /// Replay the tool calls of a Claude Code session transcript or a tollgate trace through
    /// the pre_tool_use hooks as a dry run (hooks run, tools never do).
    ///
    /// Prints a table (#, tool, decision, hook, reason) and a summary line, or with `--json`
    /// {"calls":[{"index","tool_name","decision","hook","reason",…}],"summary":{"total",
    /// "allowed","denied","asked","rewritten","skipped",…}}. Bad transcript lines are warnings
    /// on stderr (with their line number) and are skipped. Exits 0 when the replay ran
    /// (whatever the decisions), 1 when the configuration cannot be built, 2 on bad arguments,
    /// an unreadable transcript, a file that is no transcript (binary, other text) or one
    /// without tool calls. Mapping: docs/replay.md.
    Replay(replay::Replay),
    /// Be the hook command of Claude Code or Codex: read the host's hook payload on stdin,
    /// decide it with tollgate's policy (admin and hook files, the shell analyzer on `Bash`),
    /// and answer in the host's format (docs/hook-bridge.md).
    ///
    /// `tollgate hook install --claude-code|--codex` registers it in the host's settings;
    /// `tollgate hook log` shows the audit file. Exits 0 (the host reads stdout), 2 (blocked:
    /// the reason is on stderr) or 1 (a failure on an event that blocks nothing).
    Hook(Box<hook::Hook>),
    /// Check what this machine gives the OS sandbox of shell commands (command hooks, the
    /// agent's shell tool): kernel features, and containment tried for real.
    ///
    /// Prints a table, or with `--json` {"verdict","launcher","features","unavailable",
    /// "checks":[{"name","ok","detail"}]}. Exits 0 when commands run contained (`contained`,
    /// or `degraded` without Landlock or seccomp), 1 when they cannot (`unavailable`).
    Doctor(doctor::Doctor),
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum SchemaKind {
    /// What a hook receives.
    Payload,
    /// What a command or http hook may answer.
    Outcome,
    /// One hook run as written to a trace.
    HookRun,
}

fn main() -> Result<ExitCode> {
    // This binary is also the sandbox launcher: it must branch off before any thread starts.
    if let Some(code) = tollgate_sandbox::main_if_launcher() {
        return Ok(code);
    }
    if let Ok(launcher) = tollgate_sandbox::Launcher::current_exe() {
        tollgate_sandbox::Launcher::set_default(launcher);
    }
    match run_command(Cli::parse()) {
        // `tollgate … | head`: the reader has what it wanted, and nothing went wrong.
        Err(e) if is_broken_pipe(&e) => Ok(ExitCode::SUCCESS),
        other => other,
    }
}

/// Whether writing failed because stdout's reader went away.
fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

fn run_command(cli: Cli) -> Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    match cli.command {
        None => {
            use clap::CommandFactory;
            Cli::command().print_help()?;
        }
        Some(Command::Events) => print_events(&mut out)?,
        Some(Command::Schema { which }) => {
            let schema = match which {
                SchemaKind::Payload => payload_schema(),
                SchemaKind::Outcome => outcome_schema(),
                SchemaKind::HookRun => hook_run_schema(),
            };
            writeln!(out, "{}", serde_json::to_string_pretty(&schema)?)?;
        }
        Some(Command::ShellCheck(args)) => return shell_check::run(args, &mut out),
        Some(Command::Check(args)) => return check::run(args, &mut out),
        Some(Command::Dispatch(args)) => return dispatch::run(args, &mut out),
        Some(Command::Replay(args)) => return replay::run(args, &mut out),
        Some(Command::Doctor(args)) => return doctor::run(args, &mut out),
        Some(Command::Hook(args)) => return hook::run(*args, &mut out),
        Some(Command::Approvals(args)) => return approvals::run(args, &mut out),
        Some(Command::Serve(args)) => {
            drop(out);
            return serve::run(args);
        }
        Some(Command::Run(args)) => {
            drop(out);
            return run::run(args);
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn print_events(out: &mut impl Write) -> Result<()> {
    writeln!(out, "{:<24} {:<13} ALIASES", "EVENT", "HOOKS RUN")?;
    for event in BUILTIN_EVENTS {
        let aliases: Vec<&str> = ALIASES
            .iter()
            .filter(|(_, e)| *e == event)
            .map(|(alias, _)| *alias)
            .collect();
        let mode = match builtin_mode(&event) {
            DispatchMode::Blocking | DispatchMode::Result => "sequentially",
            DispatchMode::Notification => "concurrently",
        };
        writeln!(
            out,
            "{:<24} {:<13} {}",
            event.as_str(),
            mode,
            aliases.join(", ")
        )?;
    }
    writeln!(
        out,
        "{:<24} {:<13} (custom events; declared blocking ones run sequentially)",
        "custom:<name>", "concurrently"
    )?;
    Ok(())
}
