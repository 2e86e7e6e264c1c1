//! `tollgate hook --protocol claude-code|codex`: tollgate as the hook command of Claude Code
//! and Codex (`docs/hook-bridge.md`).
//!
//! One command for every event: it reads the host's payload on stdin (`host`), dispatches it
//! as a tollgate event through the policy `tollgate dispatch` would build from the same
//! `--admin`, `--agent`, `--hooks` and `--skill` sources plus the runtime's permission gate
//! (`policy`), maps rewritten arguments back into the host's names (`reverse`), resolves an
//! ask (`ask`), answers in the host's format (`answer`) and appends the decision to the audit
//! file (`audit`). `tollgate hook install` writes the host's settings (`install`);
//! `tollgate hook log` shows the audit file.
//!
//! The answer goes out as soon as the decision is made. The hosts wait for the hook process
//! to exit, not only for its output to end, so Claude Code's `async` hooks still running are
//! stopped when the bridge exits; other `fire_and_forget` hooks (a session-end webhook) get
//! until the bridge's deadline first.
//!
//! The hook never lets through what it could not decide: a payload it cannot read, a
//! configuration that does not load, hooks that do not answer before `--timeout` (the host's
//! hook timeout) less a margin, a panic: on `PreToolUse` and `UserPromptSubmit` each blocks
//! (exit 2, the reason on stderr); on other events it fails (exit 1), which the hosts report
//! and go past.

mod answer;
mod ask;
mod audit;
mod decide;
mod host;
mod install;
mod policy;
mod reverse;

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use clap::{Args, Subcommand};
use tokio::time::Instant;

use self::answer::Answer;
use self::ask::Server;
use self::audit::Entry;
use self::decide::{Context, Decided, decide};
use self::host::{HostCall, Protocol};
use self::policy::Policy;
use crate::registry::{HookSources, init_logging};

/// The largest payload read from stdin (a `Write` of a large file is large).
const MAX_STDIN_BYTES: u64 = 64 * 1024 * 1024;

/// How long before the host's timeout the hook answers at the latest.
const MARGIN: Duration = Duration::from_secs(10);

/// Arguments of `tollgate hook`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct Hook {
    #[command(subcommand)]
    action: Option<Action>,
    /// The host whose hook this is.
    #[arg(long, value_enum, required = true)]
    protocol: Option<Protocol>,
    #[command(flatten)]
    flags: BridgeFlags,
}

#[derive(Debug, Subcommand)]
enum Action {
    /// Register `tollgate hook` for every event in Claude Code's settings or Codex's
    /// hooks.json (merging with the hooks there; a backup first; a second install changes
    /// nothing).
    Install(install::Install),
    /// Show the last decisions of the audit file: time, host, event, tool, decision, reason.
    Log(audit::Log),
}

/// What decides a hook call, and where its asks and audit go.
#[derive(Debug, Args)]
pub struct BridgeFlags {
    #[command(flatten)]
    sources: HookSources,
    /// A `tollgate serve` to file asks with: the hook waits (within --timeout) until a person
    /// approves or rejects the call on its page or API. Without it, Claude Code asks its user
    /// and Codex denies.
    #[arg(long, value_name = "URL")]
    server: Option<String>,
    /// The bearer token (role runner) for --server (default: --token-file, else
    /// $TOLLGATE_TOKEN). Prefer either: a command line is visible to other users.
    #[arg(long, value_name = "TOKEN", requires = "server")]
    token: Option<String>,
    /// A file holding the bearer token for --server.
    #[arg(
        long,
        value_name = "FILE",
        requires = "server",
        conflicts_with = "token"
    )]
    token_file: Option<PathBuf>,
    /// The audit file, one JSON line per hook call (default:
    /// $XDG_STATE_HOME/tollgate/hook-audit.jsonl, else ~/.local/state/tollgate/hook-audit.jsonl).
    #[arg(long, value_name = "FILE")]
    audit: Option<PathBuf>,
    /// The host's timeout for this hook, in seconds (its `timeout` in the settings): the hook
    /// answers 10 s before it, denying what is not decided by then.
    #[arg(long, value_name = "SECONDS", default_value_t = 600,
          value_parser = clap::value_parser!(u64).range(15..=86_400))]
    timeout: u64,
}

/// Runs `tollgate hook`.
///
/// # Errors
/// Writing to `out` fails (the bridge itself answers every failure to the host).
pub fn run(args: Hook, out: &mut impl Write) -> Result<ExitCode> {
    match (args.action, args.protocol) {
        (Some(Action::Install(install)), _) => install::run(install, out),
        (Some(Action::Log(log)), _) => audit::log(log, out),
        (None, Some(protocol)) => Ok(bridge(protocol, &args.flags, out)),
        (None, None) => Ok(crate::registry::fail(2, "--protocol is required")),
    }
}

/// One hook call: stdin in, the answer out, the audit line written.
fn bridge(protocol: Protocol, flags: &BridgeFlags, out: &mut impl Write) -> ExitCode {
    // The hosts read stderr as a block's reason: logs only when asked for.
    if std::env::var_os("RUST_LOG").is_some() {
        init_logging();
    }
    let started = Instant::now();
    let deadline = started + Duration::from_secs(flags.timeout).saturating_sub(MARGIN);
    let mut entry = Entry::new(now_ms(), protocol.name(), "?");
    let mut detached = None;
    let answer = match read_stdin().and_then(|text| host::read(protocol, &text)) {
        Err(message) => {
            entry.reason = Some(message.clone());
            Answer::failure(true, &message)
        }
        Ok(call) => {
            let decided = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                decide_call(&call, flags, deadline, &mut entry.warnings)
            }));
            let decided = match decided {
                Ok(Ok(Some((decided, left)))) => {
                    detached = Some(left);
                    Ok(Some(decided))
                }
                Ok(Ok(None)) => Ok(None),
                Ok(Err(message)) => Err(message),
                Err(_) => Err("the hook panicked; the call is not allowed".to_owned()),
            };
            record(&mut entry, &call, decided)
        }
    };
    entry.decided_at = tollgate_approval::format_ms(now_ms());
    entry.exit_code = answer.exit_code;
    entry.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let audit_path = flags.audit.clone().unwrap_or_else(audit::default_path);
    if let Err(e) = audit::append(&audit_path, &entry) {
        crate::registry::warn(format!("cannot append to {}: {e}", audit_path.display()));
    }
    let _ = out
        .write_all(answer.stdout.as_bytes())
        .and_then(|()| out.flush());
    if !answer.stderr.is_empty() {
        let _ = writeln!(std::io::stderr(), "{}", answer.stderr);
    }
    close_stdio();
    // The hosts go on when the hook exits, not when its output ends (docs/hook-bridge.md):
    // advisory hooks still running (Claude Code's `async` ones) are stopped here rather than
    // hold the host; a notification hook's webhook gets until the deadline, as before.
    if let Some(detached) = detached {
        detached.finish(deadline);
    }
    ExitCode::from(answer.exit_code)
}

/// Points stdout and stderr at `/dev/null` once the answer is out, so that nothing written
/// later (a log line, a panic message) reaches the host after its answer.
fn close_stdio() {
    let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") else {
        return;
    };
    let _ = nix::unistd::dup2_stdout(&null);
    let _ = nix::unistd::dup2_stderr(&null);
}

/// Hooks detached from a decision (Claude Code's `async` hooks, `fire_and_forget` ones) with
/// the runtime that drives them: they make progress only while it runs, and dropping it stops
/// them (their process groups are killed, their requests dropped).
struct Detached {
    runtime: tokio::runtime::Runtime,
    policy: Policy,
}

impl Detached {
    /// Lets the detached hooks that are not advisory (a session-end webhook) finish, until
    /// `deadline`; the others (Claude Code's `async` hooks) are stopped with the bridge.
    fn finish(self, deadline: Instant) {
        self.runtime.block_on(async {
            let _ = tokio::time::timeout_at(deadline, self.policy.settled()).await;
        });
    }
}

/// The decision for a bridged event (`Ok(None)`: not bridged), with the hooks it detached, or
/// why none could be made; the configuration's load warnings go to `warnings`.
fn decide_call(
    call: &HostCall,
    flags: &BridgeFlags,
    deadline: Instant,
    warnings: &mut Vec<String>,
) -> Result<Option<(Decided, Detached)>, String> {
    let Some(event) = call.event else {
        return Ok(None);
    };
    let policy = Policy::build(&flags.sources, call.claude_context())?;
    warnings.clone_from(&policy.warnings);
    let server = match &flags.server {
        Some(url) => Some(Server::new(url, token(flags)?)?),
        None => None,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let decided = runtime.block_on(async {
        let cx = Context {
            call,
            event,
            policy: &policy,
            server: server.as_ref(),
            deadline,
        };
        decide(&cx).await
    });
    let detached = Detached { runtime, policy };
    Ok(Some((decided, detached)))
}

/// The bearer token: --token, else --token-file, else $TOLLGATE_TOKEN.
fn token(flags: &BridgeFlags) -> Result<String, String> {
    if let Some(token) = &flags.token {
        return Ok(token.clone());
    }
    if let Some(path) = &flags.token_file {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read --token-file {}: {e}", path.display()))?;
        return Ok(text.trim().to_owned());
    }
    std::env::var("TOLLGATE_TOKEN")
        .ok()
        .filter(|t| !t.is_empty())
        .ok_or_else(|| "--server needs a token: --token-file FILE or TOLLGATE_TOKEN".into())
}

/// Fills `entry` from the call and its decision; the answer to give.
fn record(entry: &mut Entry, call: &HostCall, decided: Result<Option<Decided>, String>) -> Answer {
    entry.host_event.clone_from(&call.event_name);
    entry.session_id = Some(call.session_id.clone());
    entry.event = call.event.map(|e| e.event().to_string());
    if let Some(tool) = &call.tool {
        entry.tool_use_id = Some(tool.use_id.clone());
        entry.tool_name = Some(tool.name.clone());
        entry.tollgate_tool = Some(tool.mapped.tool_name.clone());
        entry.set_input(&tool.input);
    }
    let blocks = call.event.is_none_or(|e| e.blocks());
    match (decided, call.event) {
        (Err(message), _) => {
            entry.reason = Some(message.clone());
            Answer::failure(blocks, &message)
        }
        (Ok(Some(decided)), Some(event)) => {
            let answer = answer::render(call.protocol, event, &decided.verdict);
            entry.decision = decided.verdict.decision().into();
            entry.reason = decided.verdict.reason().map(str::to_owned);
            entry.decided_by = decided.decided_by;
            entry.approval_id = decided.approval_id;
            entry.updated_input = decided.verdict.updated_input;
            entry.additional_context = decided.verdict.context;
            entry.hook_runs = decided.hook_runs;
            entry.warnings.extend(decided.notes);
            answer
        }
        _ => {
            entry.decision = "ignored".into();
            entry.reason = Some(format!(
                "`{}` is not an event tollgate's hook bridge maps",
                call.event_name
            ));
            Answer::silent()
        }
    }
}

/// Reads stdin whole (at most [`MAX_STDIN_BYTES`]).
fn read_stdin() -> Result<String, String> {
    let mut text = String::new();
    std::io::stdin()
        .take(MAX_STDIN_BYTES)
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read the payload on stdin: {e}"))?;
    Ok(text)
}

fn now_ms() -> i64 {
    tollgate_approval::Clock::now_ms(&tollgate_approval::SystemClock)
}
