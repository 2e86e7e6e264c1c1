//! `tollgate run`: one agent session, streamed to the terminal and written to a trace.
//!
//! Output (stdout) is for a person: the run header, the model's words, each tool call with the
//! folded decision and the deciding hook, hook failures under the dispatch they belong to (once
//! each, see [`failures`]), approvals, observations, sub-agents (indented) and the final
//! answer, and a skill the prompt selects (`[use NAME]`) that the agent does not have. Load
//! warnings (skipped hook entries) go to stderr. While a tool or a hook works, a
//! spinner turns on stderr (only when stderr is a terminal).
//!
//! `ask` decisions: the call waits on a durable confirmation request in the approval database
//! (`--db`); a live line shows its id, the time left and the command that approves it from
//! another terminal (`tollgate approvals approve ID`). With a terminal on stdin the user may
//! also answer inline (`y`, `n [note]`, `e`). Ctrl-C cancels the run and the request.
//! `--no-approvals` denies every ask at once instead ("approval required"), for runs nobody
//! watches. `--resume RUN_ID` runs again as run RUN_ID: its asks re-attach to the requests
//! the earlier attempt filed, and a decision given meanwhile is applied once.
//!
//! Exit status: 0 when the session completed; 1 when it failed, hit the turn limit, or its
//! agent cannot be loaded or built; 2 on bad arguments; 130 when cancelled (Ctrl-C: the running
//! tool is stopped, `post_tool_use_cancelled` and `session_end` still fire; a second Ctrl-C
//! exits at once).

mod approve;
mod failures;

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::registry::{HookSources, agent_for_run, fail, load_admin};
use anyhow::Result;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::Value;
use tollgate_core::HooksMode;
use tollgate_handlers::text::escape_controls;
use tollgate_runtime::gate::{Approver, DenyApprover};
use tollgate_runtime::trace::{JsonlFile, TraceLine, TraceSink};
use tollgate_runtime::{
    CancellationToken, DurableApprover, EndStatus, ModelSpec, RunRequest, Services,
};

/// Arguments of `tollgate run`.
#[derive(Debug, Args)]
pub struct Run {
    /// The agent, its hook files and skills, the admin files. (A prompt starting with `[use
    /// NAME]` selects the agent's skill NAME too.)
    #[command(flatten)]
    sources: HookSources,
    /// The model: `scripted:FILE` (replays assistant turns), `openai:MODEL` (an
    /// OpenAI-compatible endpoint: TOLLGATE_MODEL_BASE_URL / OPENAI_BASE_URL, OPENAI_API_KEY)
    /// or `direct` (the prompt is the tool call). Default: the agent file's `model`; without
    /// --agent, the default agent's `direct`.
    #[arg(long, value_name = "SPEC")]
    model: Option<String>,
    /// Write the trace (JSON Lines, one object per step) to FILE.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Evaluation bypass: run no hook at all (recorded in the trace). The permission gate
    /// (shell analyzer, confirmation settings) still applies.
    #[arg(long)]
    bypass_hooks: bool,
    /// The tools' working directory (default: the agent file's `workspace`, else a fresh
    /// directory under the system temp dir, kept after the run).
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    /// The approval database that asks wait on (created on first use). Default:
    /// $TOLLGATE_DB, else $XDG_STATE_HOME/tollgate/tollgate.db, else
    /// ~/.local/state/tollgate/tollgate.db — per user and outside any workspace, so the
    /// agent's tools cannot approve their own calls (a database inside the workspace is
    /// refused). `tollgate approvals` uses the same default.
    #[arg(long, value_name = "PATH")]
    db: Option<PathBuf>,
    /// Run again as run RUN_ID (from the run header or the trace's `run_id`): asks re-attach
    /// to the approval requests that run filed; a decision given meanwhile is applied once.
    #[arg(long, value_name = "RUN_ID")]
    resume: Option<String>,
    /// Deny every `ask` at once ("approval required") instead of waiting for a decision:
    /// for runs nobody can approve (CI, batch jobs). No request is filed.
    #[arg(long, conflicts_with_all = ["db", "resume"])]
    no_approvals: bool,
    /// The user's message.
    prompt: String,
}

/// Runs `tollgate run`.
///
/// # Errors
/// Only when the Tokio runtime cannot start.
pub fn run(args: Run) -> Result<ExitCode> {
    crate::registry::init_run_logging();
    if args.prompt.trim().is_empty() {
        return Ok(fail(2, "the prompt is empty"));
    }
    let sources = &args.sources;
    let (agent, skills) =
        match agent_for_run(sources.agent.as_deref(), &sources.hooks, &sources.skills) {
            Ok(agent) => agent,
            Err((code, message)) => return Ok(fail(code, &message)),
        };
    // The model's shell commands run as this user: keep them from reading this process's
    // environment (API keys) through /proc/<pid>/environ. (A root process stays readable by
    // root; run agents as an unprivileged user.)
    if let Err(e) = nix::sys::prctl::set_dumpable(false) {
        eprintln!("warning: cannot hide this process's environment from its tools: {e}");
    }
    let model = match args
        .model
        .as_deref()
        .map(|m| ModelSpec::parse(m, std::path::Path::new("")))
    {
        Some(Err(e)) => return Ok(fail(2, &e)),
        other => other.transpose().ok().flatten(),
    };
    let admin = match load_admin(&sources.admin) {
        Ok(admin) => admin,
        Err(message) => return Ok(fail(1, &message)),
    };
    for file in &admin {
        for warning in &file.warnings {
            crate::registry::warn(warning);
        }
    }
    let console = Arc::new(Console::new());
    let approvals_db =
        (!args.no_approvals).then(|| args.db.clone().unwrap_or_else(crate::approvals::default_db));
    let renderer = Renderer::new(Arc::clone(&console), approvals_db);
    let mut sinks: Vec<Arc<dyn TraceSink>> = vec![Arc::new(renderer)];
    if let Some(path) = &args.trace {
        let config = std::iter::once(agent.path.as_str())
            .chain(agent.hook_files.iter().map(|f| f.path.as_str()))
            .chain(agent.skills.paths())
            .chain(admin.iter().map(|f| f.path.as_str()));
        if let Some(file) = config
            .into_iter()
            .find(|c| crate::registry::same_file(std::path::Path::new(c), path))
        {
            return Ok(fail(
                2,
                &format!(
                    "--trace {}: that is {file}, a configuration file of this run; the trace would overwrite it",
                    path.display()
                ),
            ));
        }
        match JsonlFile::create(path) {
            Ok(file) => sinks.push(Arc::new(file)),
            Err(e) => {
                return Ok(fail(
                    2,
                    &format!("cannot create the trace {}: {e}", path.display()),
                ));
            }
        }
    }
    if let Some(run_id) = &args.resume
        && (run_id.trim().is_empty()
            || run_id.len() > 200
            || run_id.chars().any(|c| c.is_control() || c.is_whitespace()))
    {
        return Ok(fail(
            2,
            "--resume: a run id is one word of at most 200 characters (the run header's `run …`)",
        ));
    }
    let db = args.db.clone().unwrap_or_else(crate::approvals::default_db);
    let cancel = CancellationToken::new();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let approver: Arc<dyn Approver> = if args.no_approvals {
        Arc::new(DenyApprover)
    } else {
        let terminal =
            approve::Terminal::new(Arc::clone(&console), &db, std::io::stdin().is_terminal());
        Arc::new(
            DurableApprover::new(db.clone(), tollgate_approval::os_user(), cancel.clone())
                .with_inline(Arc::new(terminal)),
        )
    };
    let services = Services {
        approver,
        admin: Arc::from(admin),
        hooks_mode: if args.bypass_hooks {
            HooksMode::Bypass
        } else {
            HooksMode::Enforce
        },
        source: "cli".into(),
        protected: if args.no_approvals {
            Vec::new()
        } else {
            tollgate_approval::database_files(&db)
        },
        transcript: args.trace.clone(),
        permission_mode: if args.no_approvals {
            "dontAsk".into()
        } else {
            "default".into()
        },
        ..Services::default()
    };
    let request = RunRequest {
        agent,
        prompt: args.prompt,
        skills,
        model,
        workspace: args.workspace,
        run_id: args.resume,
    };
    // First signal: cancel (running hooks finish under their deadlines so their decisions are
    // recorded; the running tool is stopped; `session_end` fires). Second signal: quit now.
    let quit = CancellationToken::new();
    let report = runtime.block_on(async {
        let (on_signal, on_quit) = (cancel.clone(), quit.clone());
        tokio::spawn(async move {
            // SIGINT (Ctrl-C), SIGTERM (docker stop, systemd, CI timeouts) and SIGHUP (the
            // terminal went away) all count.
            use tokio::signal::unix::{Signal, SignalKind, signal};
            let (Ok(mut int), Ok(mut term), Ok(mut hup)) = (
                signal(SignalKind::interrupt()),
                signal(SignalKind::terminate()),
                signal(SignalKind::hangup()),
            ) else {
                return;
            };
            async fn any(int: &mut Signal, term: &mut Signal, hup: &mut Signal) {
                tokio::select! {
                    _ = int.recv() => {}
                    _ = term.recv() => {}
                    _ = hup.recv() => {}
                }
            }
            any(&mut int, &mut term, &mut hup).await;
            // Cancel first: the terminal may be gone (SIGHUP), and then writing to it fails.
            on_signal.cancel();
            let _ = writeln!(
                std::io::stderr(),
                "\ncancelling… (running hooks finish first; signal again to quit now)"
            );
            any(&mut int, &mut term, &mut hup).await;
            on_quit.cancel();
        });
        let running = async {
            let report = tollgate_runtime::run(request, &services, sinks, cancel.clone()).await;
            // Fire-and-forget hooks (a session-end webhook) keep their deadline; let them finish
            // before the process exits, unless a signal says to stop waiting. Advisory ones
            // (Claude Code's `async` hooks), whose answers nobody reads any more, are stopped.
            let settled = services.background.settled();
            let mut settled = std::pin::pin!(settled);
            let done = std::future::poll_fn(|cx| {
                std::task::Poll::Ready(settled.as_mut().poll(cx).is_ready())
            })
            .await;
            if !done {
                let _ = writeln!(
                    std::io::stderr(),
                    "waiting for background hooks to finish, each within its timeout \
                     (Ctrl-C stops waiting)"
                );
                if cancel.is_cancelled() {
                    // Cancelled already: the next signal quits.
                    settled.await;
                } else {
                    tokio::select! {
                        () = settled => {}
                        () = cancel.cancelled() => {}
                    }
                }
            }
            report
        };
        tokio::select! {
            report = running => Some(report),
            // Dropping the run drops every hook and tool in flight: their process groups are
            // killed on drop, nothing outlives tollgate.
            () = quit.cancelled() => None,
        }
    });
    // A question still waiting on stdin (cancelled at the prompt) must not hold the exit.
    // Shutting down drops the background tasks too (detached hooks: their groups are killed).
    runtime.shutdown_timeout(Duration::from_millis(100));
    console.clear();
    let Some(report) = report else {
        let _ = writeln!(
            std::io::stderr(),
            "quit: the run was stopped where it stood"
        );
        return Ok(ExitCode::from(130));
    };
    let mut out = std::io::stdout().lock();
    let status = report.status.as_str();
    // Paths as given, so escaped like everything else shown.
    let trace = args
        .trace
        .map(|p| format!(" · trace {}", escape_controls(&p.display().to_string())))
        .unwrap_or_default();
    let workspace = escape_controls(&report.workspace.display().to_string());
    // A closed stdout (`| head`) must not turn a completed run into a failure.
    let _ = writeln!(
        out,
        "■ {status} after {} model turn(s) · workspace {workspace}{trace}",
        report.turns,
    );
    if let Some(error) = &report.error {
        let _ = writeln!(out, "  error: {}", shorten(error, 2000));
    }
    Ok(match report.status {
        EndStatus::Completed => ExitCode::SUCCESS,
        EndStatus::Cancelled => ExitCode::from(130),
        _ => ExitCode::from(1),
    })
}

// ---- the terminal ----------------------------------------------------------------------

/// The spinner shared by the renderer and the approver.
struct Console {
    spinner: Mutex<Option<ProgressBar>>,
}

impl Console {
    fn new() -> Self {
        Self {
            spinner: Mutex::new(None),
        }
    }

    /// Prints a line to stdout without tearing the spinner.
    fn say(&self, line: &str) {
        let guard = self.spinner.lock();
        let print = || {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{line}");
            let _ = out.flush();
        };
        match guard.as_deref() {
            Ok(Some(spinner)) => spinner.suspend(print),
            _ => print(),
        }
    }

    fn warn(&self, line: &str) {
        let guard = self.spinner.lock();
        // Never `eprintln!`: it panics when stderr is gone (a closed terminal or pipe).
        let print = || {
            let _ = writeln!(std::io::stderr(), "{line}");
        };
        match guard.as_deref() {
            Ok(Some(spinner)) => spinner.suspend(print),
            _ => print(),
        }
    }

    fn spin(&self, message: String) {
        let Ok(mut guard) = self.spinner.lock() else {
            return;
        };
        match guard.as_ref() {
            Some(spinner) => spinner.set_message(message),
            None => {
                let spinner = ProgressBar::new_spinner();
                if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} ({elapsed})") {
                    spinner.set_style(style);
                }
                spinner.set_message(message);
                spinner.enable_steady_tick(Duration::from_millis(100));
                *guard = Some(spinner);
            }
        }
    }

    fn clear(&self) {
        if let Ok(mut guard) = self.spinner.lock()
            && let Some(spinner) = guard.take()
        {
            spinner.finish_and_clear();
        }
    }
}

/// Renders trace lines for a person.
struct Renderer {
    console: Arc<Console>,
    failures: failures::Failures,
    /// The approval database, for the command a waiting line shows.
    db: Option<PathBuf>,
}

impl Renderer {
    fn new(console: Arc<Console>, db: Option<PathBuf>) -> Self {
        Self {
            console,
            failures: failures::Failures::default(),
            db,
        }
    }
}

impl TraceSink for Renderer {
    fn record(&self, line: &TraceLine) {
        let console = &self.console;
        let pad = "  ".repeat(line.origin.depth as usize);
        let tag = if line.origin.depth > 0 {
            format!("[{}] ", shorten(&line.origin.agent, 80))
        } else {
            String::new()
        };
        let field = |key: &str| {
            // Everything shown comes from models, tools and hooks: escaped.
            shorten(
                line.get(key).and_then(Value::as_str).unwrap_or_default(),
                400,
            )
        };
        match line.step.kind {
            "session_start" => {
                let skills = line
                    .get("skills")
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len);
                let skills = if skills == 0 {
                    "none".to_owned()
                } else {
                    compact(line.get("skills"))
                };
                let run = if line.origin.depth == 0 {
                    format!(" · run {}", shorten(&line.origin.run_id, 200))
                } else {
                    String::new()
                };
                console.say(&format!(
                    "{pad}▶ {tag}agent `{}` · model {} · hooks {} ({} registered) · skills {skills}{run}",
                    shorten(&line.origin.agent, 80),
                    field("model"),
                    field("hooks"),
                    line.get("hook_count").and_then(Value::as_u64).unwrap_or(0),
                ));
            }
            "user_turn" => console.say(&format!(
                "{pad}{tag}user: {}",
                shorten(&field("prompt"), 300)
            )),
            "model_turn" => {
                let content = field("content");
                if !content.is_empty()
                    && line
                        .get("tool_calls")
                        .and_then(Value::as_array)
                        .is_some_and(|c| !c.is_empty())
                {
                    console.say(&format!("{pad}{tag}model: {}", shorten(&content, 300)));
                }
            }
            "tool_call" => {
                console.say(&format!(
                    "{pad}{tag}→ {} {}",
                    field("tool_name"),
                    shorten(&compact(line.get("arguments")), 200)
                ));
                console.spin(format!("hooks: pre_tool_use for {}", field("tool_name")));
            }
            // A Claude Code hook's `statusMessage`, the moment the hook starts.
            "hook_status" => console.say(&format!(
                "{pad}  · {tag}{}",
                shorten(&field("message"), 200)
            )),
            "hook_run" => {
                if let Some(late) = self.failures.hook_run(line, &pad, &tag) {
                    console.say(&late);
                }
            }
            "waiting_for_hooks" => console.say(&format!(
                "{pad}  ⋯ {tag}waiting: {}",
                shorten(&field("why"), 200)
            )),
            "keep_working" => console.say(&format!(
                "{pad}  ↻ {tag}a hook keeps the session working: {}",
                shorten(&field("reason"), 300)
            )),
            "hook_ended_session" => console.say(&format!(
                "{pad}  ■ {tag}a hook ended the session: {}",
                shorten(&field("reason"), 300)
            )),
            "dispatch" => {
                render_dispatch(console, line, &pad);
                for failed in self.failures.dispatch(line, &pad) {
                    console.say(&failed);
                }
            }
            "approval_waiting" => {
                let id = field("request_id");
                let command = self
                    .db
                    .as_deref()
                    .map(|db| format!(" · approve: {}", approve::approve_command(&id, db)))
                    .unwrap_or_default();
                let expires = line
                    .get("expires_at_ms")
                    .and_then(Value::as_i64)
                    .map(tollgate_approval::format_ms)
                    .unwrap_or_default();
                let attached = line.get("attached").and_then(Value::as_bool) == Some(true);
                let status = field("status");
                if attached && status != "pending" {
                    console.say(&format!(
                        "{pad}  ↺ re-attached to approval request {id}: already {status}"
                    ));
                } else {
                    let again = if attached { " (re-attached)" } else { "" };
                    // Who may approve, when the person running tollgate may not.
                    let me = tollgate_approval::os_user();
                    let approvers: Vec<&str> = line
                        .get("approvers")
                        .and_then(Value::as_array)
                        .map(|a| a.iter().filter_map(Value::as_str).collect())
                        .unwrap_or_default();
                    let as_hint = if approvers.is_empty() || approvers.contains(&me.as_str()) {
                        String::new()
                    } else {
                        format!(
                            " --as NAME (one of: {})",
                            shorten(&approvers.join(", "), 200)
                        )
                    };
                    console.say(&format!(
                        "{pad}  ⏸ waiting for approval {id}{again}: {} · expires {expires}{command}{as_hint}",
                        shorten(&field("reason"), 200),
                    ));
                }
            }
            "approval" => {
                let status = field("status");
                let word = match status.as_str() {
                    "approved" => "approved",
                    "rejected" => "rejected",
                    "already_run" => "not run again",
                    "no_approver" => "nobody may approve it",
                    "arguments_changed" => "asked before with other arguments",
                    "" => "not approved",
                    other => other,
                };
                let note = line
                    .get("note")
                    .and_then(Value::as_str)
                    .map(|n| format!(" — {}", shorten(n, 200)))
                    .unwrap_or_default();
                let via = line
                    .get("channel")
                    .and_then(Value::as_str)
                    .map(|c| format!(" via {}", shorten(c, 40)))
                    .unwrap_or_default();
                console.clear();
                console.say(&format!(
                    "{pad}  ? asked by {}: {} → {word} by {}{via}{note}",
                    field("asked_by"),
                    shorten(&field("reason"), 200),
                    field("by")
                ));
            }
            "approval_correction" => console.say(&format!(
                "{pad}  ✎ arguments corrected by {}: {}",
                field("by"),
                shorten(&compact(line.get("corrected")), 200)
            )),
            "approval_refused" => console.say(&format!(
                "{pad}  ✗ not run: {}",
                shorten(&field("reason"), 300)
            )),
            "tool_started" => console.spin(format!("running {}", field("tool_name"))),
            "observation" => {
                console.clear();
                let mark = match field("status").as_str() {
                    "ok" => "↳",
                    _ => "↳ ✗",
                };
                console.say(&format!(
                    "{pad}  {mark} {}: {}",
                    field("status"),
                    shorten(&field("content"), 240)
                ));
            }
            "subagent_start" => console.say(&format!(
                "{pad}⇢ delegating to `{}` ({}): {}",
                field("agent_type"),
                field("task_id"),
                shorten(&field("task_description"), 200)
            )),
            "subagent_stop" => console.say(&format!(
                "{pad}⇠ `{}` {} after {:.1} s",
                field("agent_type"),
                field("status"),
                line.get("duration_seconds")
                    .and_then(Value::as_f64)
                    .unwrap_or(0.0)
            )),
            "answer" => {
                let content = line
                    .get("content")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                // Continuation lines are indented, so an answer cannot pass a line of its own
                // off as tollgate's (`■ completed`, `✗ deny …`).
                let content = clean(content).replace('\n', &format!("\n{pad}  │ "));
                console.say(&format!("{pad}{tag}answer: {content}"));
            }
            "session_end" if line.origin.depth > 0 => {
                console.say(&format!("{pad}■ {tag}{}", field("status")));
            }
            // A skill the prompt selects (`[use NAME]`) that the agent lacks changes what the
            // run does: said with the run, not among the load warnings.
            "warning" if field("entry") == "skills" => {
                console.say(&format!("{pad}⚠ {tag}{}", field("message")));
            }
            "warning" => {
                // A warning about a hook's answer names no file.
                let place = [field("file"), field("entry")]
                    .into_iter()
                    .filter(|p| !p.is_empty())
                    .collect::<Vec<_>>()
                    .join(": ");
                console.warn(&format!("warning: {place}: {}", field("message")));
            }
            _ => {}
        }
    }
}

fn render_dispatch(console: &Console, line: &TraceLine, pad: &str) {
    // A hook's `systemMessage` (Claude Code's) is for the person running the agent.
    let effects = line.get("side_effects").and_then(Value::as_array);
    for effect in effects.into_iter().flatten() {
        if effect.get("kind").and_then(Value::as_str) == Some("system_message") {
            console.say(&format!(
                "{pad}  ℹ {}: {}",
                shorten(
                    effect
                        .get("hook")
                        .and_then(Value::as_str)
                        .unwrap_or_default(),
                    120
                ),
                shorten(
                    effect
                        .get("detail")
                        .and_then(Value::as_str)
                        .unwrap_or_default(),
                    300
                )
            ));
        }
    }
    let field = |key: &str| {
        // Everything shown comes from models, tools and hooks: escaped.
        shorten(
            line.get(key).and_then(Value::as_str).unwrap_or_default(),
            400,
        )
    };
    let event = field("event");
    let decision = field("decision");
    let by = line.get("decided_by").and_then(Value::as_str).map(|b| {
        if b == "permission_gate" {
            " by the permission gate".to_owned()
        } else {
            format!(" by hook `{}`", shorten(b, 200))
        }
    });
    let hooks = line.get("hooks").and_then(Value::as_u64).unwrap_or(0);
    let bypassed = line
        .get("bypassed")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    match event.as_str() {
        "pre_tool_use" | "user_turn" | "subagent_start" => {
            let detail = if bypassed {
                " (hooks bypassed)".to_owned()
            } else {
                format!(" ({hooks} hook(s))")
            };
            let reason = line
                .get("reason")
                .and_then(Value::as_str)
                .map(|r| format!(": {}", shorten(r, 200)))
                .unwrap_or_default();
            let mark = match decision.as_str() {
                "deny" => "✗",
                "ask" => "?",
                _ => "✓",
            };
            if event == "pre_tool_use" || decision != "allow" {
                console.say(&format!(
                    "{pad}  {mark} {decision}{}{reason}{detail} [{event}]",
                    by.unwrap_or_default()
                ));
            }
            if let Some(args) = line.get("modified_args").filter(|a| !a.is_null()) {
                console.say(&format!(
                    "{pad}  ✎ arguments rewritten by hooks: {}",
                    shorten(&compact(Some(args)), 200)
                ));
            }
        }
        "post_tool_use" => {
            if line.get("modified_result").is_some_and(|r| !r.is_null()) {
                console.say(&format!("{pad}  ✎ result rewritten by hooks"));
            }
            if decision == "deny" {
                console.say(&format!(
                    "{pad}  ✗ result withheld{}",
                    by.unwrap_or_default()
                ));
            }
        }
        _ => {}
    }
}

fn compact(value: Option<&Value>) -> String {
    value.map(Value::to_string).unwrap_or_default()
}

/// At most `max` characters, line breaks shown as ` ⏎ `, and control, line-separator and
/// bidirectional characters escaped (model, tool and hook text is untrusted).
fn shorten(text: &str, max: usize) -> String {
    let mut cut: String = text.chars().take(max).collect();
    if text.chars().nth(max).is_some() {
        cut.push('…');
    }
    escape_controls(&cut.replace('\n', " ⏎ "))
}

/// Escapes control characters (ANSI sequences, BEL, …) but keeps line breaks: for text shown
/// whole, such as the model's answer.
fn clean(text: &str) -> String {
    text.split('\n')
        .map(|line| shorten(line, usize::MAX))
        .collect::<Vec<_>>()
        .join("\n")
}
