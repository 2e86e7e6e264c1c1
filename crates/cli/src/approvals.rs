//! `tollgate approvals`: list, show, approve and reject confirmation requests in the approval
//! database, from any terminal, while the run that asked waits (or after it died: a resumed
//! run applies the decision).
//!
//! Exit status: 0 done; 1 not found, not allowed, or the database cannot be used; 2 bad
//! arguments; 3 already decided (the message says by whom and when).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, Subcommand, ValueEnum};
use serde_json::{Value, json};
use tollgate_approval::{
    Decision, Request, Status, Store, Verdict, format_ms, format_span, os_user,
};
use tollgate_handlers::text::escape_controls;

use crate::registry::fail;

mod source;

use source::{Client, Failure, Source};

/// Where the approval database lives unless `--db` or `TOLLGATE_DB` says otherwise:
/// `$XDG_STATE_HOME/tollgate/tollgate.db`, else `~/.local/state/tollgate/tollgate.db`. It is
/// per user and outside any workspace, so an agent's tools cannot write its own approvals.
pub fn default_db() -> PathBuf {
    if let Some(path) = std::env::var_os("TOLLGATE_DB").filter(|p| !p.is_empty()) {
        return PathBuf::from(path);
    }
    let state = std::env::var_os("XDG_STATE_HOME")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".local/state")))
        .unwrap_or_else(std::env::temp_dir);
    state.join("tollgate").join("tollgate.db")
}

/// Arguments of `tollgate approvals`.
#[derive(Debug, Args)]
pub struct Approvals {
    /// The approval database (default: $TOLLGATE_DB, else
    /// $XDG_STATE_HOME/tollgate/tollgate.db, else ~/.local/state/tollgate/tollgate.db; the
    /// same default as `tollgate run --db`).
    #[arg(long, value_name = "PATH", global = true)]
    db: Option<PathBuf>,
    /// Act through a `tollgate serve` at URL instead of the database file; decisions are
    /// recorded under the token's name, through channel `api`.
    #[arg(long, value_name = "URL", global = true, conflicts_with = "db")]
    server: Option<String>,
    /// The bearer token for --server (default: $TOLLGATE_TOKEN). Prefer the variable: a
    /// command line is visible to other users of the machine.
    #[arg(long, value_name = "TOKEN", global = true, requires = "server")]
    token: Option<String>,
    #[command(subcommand)]
    command: Action,
}

#[derive(Debug, Subcommand)]
enum Action {
    /// Lists requests, newest first (overdue pending requests are expired first).
    List {
        /// Which requests.
        #[arg(long, value_enum, default_value = "pending")]
        status: Which,
        /// One JSON object per request, one per line.
        #[arg(long)]
        json: bool,
    },
    /// Shows one request and its full audit history.
    Show {
        /// The request id (`cr_…`).
        id: String,
        /// As one JSON object `{request, history}`.
        #[arg(long)]
        json: bool,
    },
    /// Approves a request: the waiting call runs (once).
    Approve {
        /// The request id (`cr_…`).
        id: String,
        /// A note for the record.
        #[arg(long, value_name = "TEXT")]
        note: Option<String>,
        /// Run the call with these arguments instead (a JSON object); the run's permission
        /// gate reviews them again, and `approval_correction` fires.
        #[arg(long, value_name = "JSON")]
        edit: Option<String>,
        /// Decide as NAME (default: the OS user). NAME must be one of the request's approvers.
        #[arg(long = "as", value_name = "NAME")]
        as_name: Option<String>,
    },
    /// Rejects a request: the call is denied, and the note reaches the model.
    Reject {
        /// The request id (`cr_…`).
        id: String,
        /// Why; the model reads it (e.g. "use the staging DB").
        #[arg(long, value_name = "TEXT")]
        note: Option<String>,
        /// Decide as NAME (default: the OS user).
        #[arg(long = "as", value_name = "NAME")]
        as_name: Option<String>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Which {
    Pending,
    Approved,
    Rejected,
    Expired,
    Cancelled,
    All,
}

/// Runs `tollgate approvals`.
///
/// # Errors
/// Only when writing to stdout fails or the Tokio runtime cannot start.
pub fn run(args: Approvals, out: &mut impl Write) -> Result<ExitCode> {
    if let Some(problem) = bad_argument(&args.command) {
        return Ok(fail(2, &problem));
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let source = match open(&args).await {
            Ok(source) => source,
            Err(failure) => return Ok(failure.exit()),
        };
        match args.command {
            Action::List { status, json } => list(&source, status, json, out).await,
            Action::Show { id, json } => show(&source, &id, json, out).await,
            Action::Approve {
                id,
                note,
                edit,
                as_name,
            } => {
                let edit = match edit.as_deref().map(serde_json::from_str::<Value>) {
                    None => None,
                    Some(Ok(value @ Value::Object(_))) => Some(value),
                    Some(Ok(_)) => return Ok(fail(2, "--edit: must be a JSON object")),
                    Some(Err(e)) => return Ok(fail(2, &format!("--edit: not valid JSON: {e}"))),
                };
                let decision = Decision {
                    verdict: Verdict::Approve { edit },
                    by: as_name.unwrap_or_else(os_user),
                    channel: "cli".into(),
                    note,
                };
                decide(&source, &id, &decision, out).await
            }
            Action::Reject { id, note, as_name } => {
                let decision = Decision {
                    verdict: Verdict::Reject,
                    by: as_name.unwrap_or_else(os_user),
                    channel: "cli".into(),
                    note,
                };
                decide(&source, &id, &decision, out).await
            }
        }
    })
}

/// A request id or a decider's name no request or person can have: said before anything is
/// opened (and never echoed whole).
fn bad_argument(action: &Action) -> Option<String> {
    let (id, by) = match action {
        Action::List { .. } => return None,
        Action::Show { id, .. } => (id, None),
        Action::Approve { id, as_name, .. } | Action::Reject { id, as_name, .. } => {
            (id, as_name.as_deref())
        }
    };
    let word = |text: &str| {
        !text.trim().is_empty() && text.len() <= 200 && !text.chars().any(char::is_control)
    };
    if !word(id) {
        return Some(
            "the request id must be one word (`cr_…`, as `tollgate approvals list` shows it)"
                .into(),
        );
    }
    match by {
        Some(name) if !word(name) => Some(
            "--as: a name of at most 200 characters, not empty, without control characters".into(),
        ),
        _ => None,
    }
}

/// The database file, or the server with its token.
async fn open(args: &Approvals) -> Result<Source, Failure> {
    if let Some(server) = &args.server {
        if matches!(
            &args.command,
            Action::Approve {
                as_name: Some(_),
                ..
            } | Action::Reject {
                as_name: Some(_),
                ..
            }
        ) {
            return Err(Failure::new(
                2,
                "--as does not apply with --server: the server records the token's name",
            ));
        }
        let token = args
            .token
            .clone()
            .or_else(|| std::env::var("TOLLGATE_TOKEN").ok())
            .filter(|t| !t.is_empty())
            .ok_or_else(|| Failure::new(2, "--server needs --token TOKEN or $TOLLGATE_TOKEN"))?;
        return Ok(Source::Server(Client::new(server, token)?));
    }
    let db = args.db.clone().unwrap_or_else(default_db);
    if !db.exists() {
        return Err(Failure::new(
            1,
            format!(
                "no approval database at {} (a `tollgate run` that asks creates it; pass --db PATH)",
                db.display()
            ),
        ));
    }
    Store::open(&db)
        .await
        .map(Source::Db)
        .map_err(|e| Failure::new(1, e.to_string()))
}

async fn list(source: &Source, which: Which, json: bool, out: &mut impl Write) -> Result<ExitCode> {
    let requests = match source.list(which_word(which)).await {
        Ok(requests) => requests,
        Err(failure) => return Ok(failure.exit()),
    };
    if json {
        for request in &requests {
            writeln!(out, "{}", serde_json::to_string(request)?)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    if requests.is_empty() {
        let word = if which == Which::All {
            ""
        } else {
            which_word(which)
        };
        writeln!(out, "no {word} requests")?;
        return Ok(ExitCode::SUCCESS);
    }
    let now = source.now_ms();
    writeln!(
        out,
        "{:<30} {:<9} {:<16} {:<24} {:<12} REASON",
        "ID", "STATUS", "AGENT", "TOOL", "WHEN"
    )?;
    for r in &requests {
        let when = if r.status == Status::Pending {
            format!("{} left", format_span((r.expires_at - now) / 1000))
        } else {
            format!(
                "{} ago",
                format_span((now - r.responded_at.unwrap_or(r.created_at)) / 1000)
            )
        };
        writeln!(
            out,
            "{:<30} {:<9} {:<16} {:<24} {:<12} {}",
            r.id,
            r.status.as_str(),
            cut(&r.agent, 16),
            cut(&r.tool_name, 24),
            when,
            cut(&r.reasons.join("; "), 100)
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

async fn show(source: &Source, id: &str, json: bool, out: &mut impl Write) -> Result<ExitCode> {
    let (request, history) = match source.show(id).await {
        Ok(found) => found,
        Err(failure) => return Ok(failure.exit()),
    };
    if json {
        writeln!(out, "{}", json!({"request": request, "history": history}))?;
        return Ok(ExitCode::SUCCESS);
    }
    describe(&request, out)?;
    writeln!(out, "history:")?;
    for event in &history {
        let detail = event
            .detail
            .as_deref()
            .map(|d| format!(" — {}", cut(d, 300)))
            .unwrap_or_default();
        let channel = event
            .channel
            .as_deref()
            .map(|c| format!(" via {}", cut(c, 40)))
            .unwrap_or_default();
        writeln!(
            out,
            "  {}  {:<8} {:<7} by {}{channel}: {} → {}{detail}",
            format_ms(event.at),
            event.action,
            event.outcome,
            cut(&event.actor, 80),
            event.from_status,
            event.to_status
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

fn describe(r: &Request, out: &mut impl Write) -> Result<()> {
    writeln!(out, "{}  {}", r.id, r.status.as_str())?;
    writeln!(out, "  agent       {}", cut(&r.agent, 200))?;
    writeln!(out, "  run         {}", cut(&r.run_id, 200))?;
    writeln!(
        out,
        "  tool        {} (call {})",
        cut(&r.tool_name, 200),
        cut(&r.tool_call_id, 200)
    )?;
    writeln!(out, "  arguments   {}", cut(&r.arguments.to_string(), 2000))?;
    writeln!(out, "  args_hash   {}", r.args_hash)?;
    writeln!(out, "  reason      {}", cut(&r.reasons.join("; "), 1000))?;
    writeln!(out, "  asked by    {}", cut(&r.asked_by, 200))?;
    writeln!(out, "  approvers   {}", cut(&r.approvers.join(", "), 500))?;
    writeln!(out, "  created     {}", format_ms(r.created_at))?;
    writeln!(out, "  expires     {}", format_ms(r.expires_at))?;
    if let Some(at) = r.responded_at {
        writeln!(
            out,
            "  decided     {} by {}{}",
            format_ms(at),
            cut(r.responded_by.as_deref().unwrap_or_default(), 200),
            r.channel
                .as_deref()
                .map(|c| format!(" via {}", cut(c, 40)))
                .unwrap_or_default()
        )?;
    }
    if let Some(note) = &r.response_note {
        writeln!(out, "  note        {}", cut(note, 1000))?;
    }
    if let Some(edit) = &r.edited_arguments {
        writeln!(out, "  edited to   {}", cut(&edit.to_string(), 2000))?;
    }
    match (r.consumed_at, r.finished_at) {
        (Some(c), Some(f)) => writeln!(out, "  ran         {} – {}", format_ms(c), format_ms(f))?,
        (Some(c), None) => writeln!(
            out,
            "  ran         started {}; its end is not recorded (still running, or the run died)",
            format_ms(c)
        )?,
        _ => {}
    }
    Ok(())
}

async fn decide(
    source: &Source,
    id: &str,
    decision: &Decision,
    out: &mut impl Write,
) -> Result<ExitCode> {
    match source.decide(id, decision).await {
        Ok(request) => {
            let verb = match request.status {
                Status::Approved if request.edited_arguments.is_some() => "approved (with edits)",
                other => other.as_str(),
            };
            writeln!(
                out,
                "{} {verb} by {} at {}",
                request.id,
                cut(request.responded_by.as_deref().unwrap_or(&decision.by), 200),
                format_ms(request.responded_at.unwrap_or_default())
            )?;
            Ok(ExitCode::SUCCESS)
        }
        Err(failure) => Ok(failure.exit()),
    }
}

fn which_word(which: Which) -> &'static str {
    match which {
        Which::Pending => "pending",
        Which::Approved => "approved",
        Which::Rejected => "rejected",
        Which::Expired => "expired",
        Which::Cancelled => "cancelled",
        Which::All => "all",
    }
}

/// At most `max` characters, control characters escaped (everything shown came from a model,
/// a hook or another person).
fn cut(text: &str, max: usize) -> String {
    let mut cut: String = text.chars().take(max).collect();
    if text.chars().nth(max).is_some() {
        cut.push('…');
    }
    escape_controls(&cut.replace('\n', " ⏎ "))
}
