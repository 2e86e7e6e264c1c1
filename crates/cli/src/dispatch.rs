//! `tollgate dispatch`: build a registry exactly as a run would and dispatch one event through
//! the real dispatcher.
//!
//! The registry is built as `tollgate run` builds it (ties in priority run in registration
//! order): `--admin` files (source `admin_config`; their `network.allow_cidrs`, `standalone` and
//! `sandbox` are the policy of every file), the `--agent` file's class hooks (`agent_config`),
//! its hook files and the `--hooks` files (`user_config`), then the skills selected with
//! `--skill NAME|PATH` (`skill`). With `--agent` the agent's permission gate reviews tool calls
//! too (the shell analyzer on `bash_code_execute_tool`, its confirmation settings); without
//! one, only the hooks decide.
//! Everything printed is escaped: control characters, line separators and bidirectional
//! controls in names, reasons and warnings never reach the terminal raw (the JSON keeps its
//! values: they are `\uXXXX` escapes there). Load warnings go to stderr; hook failures are WARN logs on stderr (`RUST_LOG=info|debug|…`
//! sets the level, default `warn`).
//!
//! `--payload` is a wire payload (`tollgate schema payload`) as JSON or `@FILE` (`@-`: stdin).
//! Missing `session_id`, `run_id`, `trace_id`, `agent_id`, `source` (and `tool_call_id` when
//! there is a `tool_name`) are filled in; `event` comes from `--event` and must agree with the
//! payload's own `event`, if any.
//!
//! Prints one JSON line per dispatch: `{"event","decision","reason","decided_by",
//! "observation","modified_args","modified_result","additional_context","side_effects":[{"hook",
//! "kind","detail"}],"hook_runs":[{"name","kind","source","status","decision","reason","error",
//! "failure_mode","duration_ms","rewrote"}]}`. `--repeat N` dispatches the same payload N times
//! through the same registry (stateful hooks such as rate limits see every call).
//!
//! `--protocol claude-code` reads the payload as Claude Code writes it to a hook's stdin
//! (`hook_event_name`, `tool_name: "Bash"`, `tool_input.command`, `cwd`, …), as it is: the
//! event comes from `hook_event_name` (`--event` may be left out, and must agree when given),
//! the call is mapped to the runtime's tools, and hooks declared in Claude Code's shape see
//! the payload's `cwd`, `transcript_path` and `permission_mode`, and the call's `tool_input`
//! as sent ([`tollgate_protocol::claude_code::from_claude_payload`]). A call of a tool the
//! table maps whose input does not fit it (`Bash` with a `timeout` of `-1`) is denied without
//! running a hook: the report's `reason` names the field.
//!
//! Exit status: 0 when dispatched, whatever the decision; 1 when the configuration cannot be
//! built (unreadable file, agent class error); 2 on bad arguments or a bad payload.

use std::io::{Read, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Result;
use clap::Args;
use serde::Serialize;
use serde_json::{Map, Value};
use tollgate_core::{Background, DecidedBy, DispatchOutcome, Dispatcher};
use tollgate_handlers::text::escape_controls_json;
use tollgate_protocol::claude_code::{ClaudeContext, from_claude_payload};
use tollgate_protocol::wire::{PayloadWire, SideEffectWire};
use tollgate_protocol::{Event, Payload, ProtocolError};

use crate::registry::{HookSources, Policy, fail, init_logging};

/// Arguments of `tollgate dispatch`.
#[derive(Debug, Args)]
pub struct Dispatch {
    #[command(flatten)]
    sources: HookSources,
    /// The event: canonical name (`pre_tool_use`), alias (`PreToolUse`) or `custom:<name>`.
    /// Optional with `--protocol claude-code` (the payload's `hook_event_name` names it).
    #[arg(long, value_name = "NAME", value_parser = parse_event,
          required_unless_present = "protocol")]
    event: Option<Event>,
    /// The payload as a JSON object, or `@FILE` (`@-` for stdin).
    #[arg(long, value_name = "JSON|@FILE")]
    payload: String,
    /// Whose payload `--payload` is: tollgate's wire payload (the default) or the one Claude
    /// Code writes to a hook's stdin.
    #[arg(long, value_enum, value_name = "PROTOCOL")]
    protocol: Option<Protocol>,
    /// Dispatch the same payload N times through one registry, one JSON line each (exercises
    /// stateful hooks such as `ConnectorRateLimitHook`).
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..))]
    repeat: u32,
}

/// The shape of `--payload`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Protocol {
    /// tollgate's wire payload (`tollgate schema payload`).
    Tollgate,
    /// Claude Code's hook input, as Claude Code writes it to stdin.
    ClaudeCode,
}

fn parse_event(name: &str) -> std::result::Result<Event, String> {
    name.parse::<Event>().map_err(|e| e.to_string())
}

/// Runs `tollgate dispatch`.
///
/// # Errors
/// Only when the Tokio runtime cannot start or writing to `out` fails.
pub fn run(args: Dispatch, out: &mut impl Write) -> Result<ExitCode> {
    init_logging();
    let value = match read_payload(&args.payload) {
        Ok(value) => value,
        Err(message) => return Ok(fail(2, &format!("bad payload: {message}"))),
    };
    let (policy, payload) = if args.protocol == Some(Protocol::ClaudeCode) {
        let (payload, context) = match from_claude(args.event.as_ref(), value) {
            Ok(read) => read,
            Err(Unread::Bad(message)) => return Ok(fail(2, &format!("bad payload: {message}"))),
            Err(Unread::Unfit(report)) => {
                let json = serde_json::to_string(&report)?;
                for _ in 0..args.repeat {
                    writeln!(out, "{}", escape_controls_json(&json))?;
                }
                return Ok(ExitCode::SUCCESS);
            }
        };
        let policy = match args.sources.build_for(context) {
            Ok(policy) => policy,
            Err((code, message)) => return Ok(fail(code, &message)),
        };
        let payload = with_agent(payload, policy.agent.as_ref().map(|a| &a.metadata));
        (policy, payload)
    } else {
        let policy = match args.sources.build() {
            Ok(policy) => policy,
            Err((code, message)) => return Ok(fail(code, &message)),
        };
        let Some(event) = &args.event else {
            return Ok(fail(
                2,
                "--event is required (or pass --protocol claude-code)",
            ));
        };
        match to_payload(event, value, &policy) {
            Ok(payload) => (policy, payload),
            Err(message) => return Ok(fail(2, &format!("bad payload: {message}"))),
        }
    };
    let payload = Arc::new(payload);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(dispatch_all(policy, payload, args.repeat, out))?;
    Ok(ExitCode::SUCCESS)
}

async fn dispatch_all(
    policy: Policy,
    payload: Arc<Payload>,
    repeat: u32,
    out: &mut impl Write,
) -> Result<()> {
    let background = Background::default();
    let mut dispatcher = Dispatcher::new(policy.registry).with_background(background.clone());
    if let Some(gate) = policy.gate {
        dispatcher = dispatcher.with_permission_gate(Arc::new(gate));
    }
    for _ in 0..repeat {
        let outcome = dispatcher.dispatch(Arc::clone(&payload)).await;
        // Reasons and hook errors are a hook's own text: valid JSON, but no raw terminal controls.
        let json = serde_json::to_string(&Report::new(&outcome))?;
        writeln!(out, "{}", escape_controls_json(&json))?;
        out.flush()?;
    }
    // Fire-and-forget hooks keep their deadline; let them finish before the process exits.
    // Advisory ones (Claude Code's `async` hooks), whose answers nobody reads, are stopped.
    background.settled().await;
    Ok(())
}

// ---- the payload -----------------------------------------------------------------------

fn read_payload(arg: &str) -> std::result::Result<Value, String> {
    let text = match arg.strip_prefix('@') {
        Some("-") => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| format!("cannot read stdin: {e}"))?;
            text
        }
        Some(path) => {
            std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?
        }
        None => arg.to_owned(),
    };
    serde_json::from_str(&text).map_err(|e| format!("not valid JSON: {e}"))
}

/// Fills the defaults (with `--agent`: its name as `agent_id` and its `metadata`) and validates
/// `value` as a payload of `event`.
fn to_payload(
    event: &Event,
    value: Value,
    policy: &Policy,
) -> std::result::Result<Payload, String> {
    let Value::Object(mut object) = value else {
        return Err("expected a JSON object".into());
    };
    if let Some(given) = object.get("event") {
        let given: Event = given
            .as_str()
            .ok_or("`event` must be a string")?
            .parse()
            .map_err(|e: tollgate_protocol::ProtocolError| e.to_string())?;
        if given != *event {
            return Err(format!(
                "the payload's event `{given}` disagrees with --event `{event}`"
            ));
        }
    }
    object.insert("event".into(), Value::String(event.to_string()));
    fill_defaults(
        &mut object,
        policy.agent.as_ref().map_or("cli", |a| &a.name),
    );
    if let Some(agent) = &policy.agent {
        let metadata = object
            .entry("metadata")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(metadata) = metadata {
            agent.fill_metadata(metadata);
        }
    }
    let wire = PayloadWire::from_json(Value::Object(object)).map_err(|e| e.to_string())?;
    Payload::try_from(wire).map_err(|e| e.to_string())
}

/// Why a Claude Code payload gives no payload to dispatch.
enum Unread {
    /// It is no payload of the event (exit 2).
    Bad(String),
    /// A call of a tool the table maps whose input does not fit the tool: denied without a
    /// hook run, since no policy written for the runtime's tool could see it.
    Unfit(Box<Report>),
}

/// A Claude Code payload, read as it is; `--event`, when given, must name the same event.
fn from_claude(
    event: Option<&Event>,
    value: Value,
) -> std::result::Result<(Payload, ClaudeContext), Unread> {
    let named: Option<Event> = value
        .get("hook_event_name")
        .and_then(Value::as_str)
        .and_then(|name| name.parse().ok());
    if let (Some(event), Some(named)) = (event, &named)
        && named != event
    {
        return Err(Unread::Bad(format!(
            "the payload's hook_event_name is `{named}`, not --event `{event}`"
        )));
    }
    let (mut payload, mut context) = match from_claude_payload(value) {
        Ok(read) => read,
        Err(ProtocolError::UnfitToolInput(why)) => {
            let event = named.map_or_else(|| "?".to_owned(), |e| e.to_string());
            return Err(Unread::Unfit(Box::new(Report::unfit(event, &why))));
        }
        Err(e) => return Err(Unread::Bad(e.to_string())),
    };
    if context.cwd.as_os_str().is_empty() {
        context.cwd = std::env::current_dir().unwrap_or_default();
    }
    let id = generated_id();
    let common = &mut payload.common;
    for (field, prefix) in [
        (&mut common.session_id, "cli-session"),
        (&mut common.run_id, "cli-run"),
        (&mut common.trace_id, "cli-trace"),
    ] {
        if field.is_empty() {
            *field = format!("{prefix}-{id}");
        }
    }
    Ok((payload, context))
}

/// With `--agent`, the payload's metadata gets the agent's (as in a run; keys the payload has
/// win).
fn with_agent(mut payload: Payload, metadata: Option<&Map<String, Value>>) -> Payload {
    if let Some(metadata) = metadata {
        for (key, value) in metadata {
            payload
                .common
                .metadata
                .entry(key.clone())
                .or_insert_with(|| value.clone());
        }
    }
    payload
}

fn fill_defaults(object: &mut Map<String, Value>, agent_id: &str) {
    let id = generated_id();
    let mut fill = |key: &str, value: String| {
        object
            .entry(key.to_owned())
            .or_insert_with(|| Value::String(value));
    };
    fill("session_id", format!("cli-session-{id}"));
    fill("run_id", format!("cli-run-{id}"));
    fill("trace_id", format!("cli-trace-{id}"));
    fill("agent_id", agent_id.into());
    fill("source", "cli".into());
    if object.contains_key("tool_name") {
        object
            .entry("tool_call_id")
            .or_insert_with(|| Value::String(format!("call-{id}")));
    }
}

/// Why a call whose input does not fit its tool (`why`: `Bash with a malformed `timeout``) is
/// denied, by `dispatch --protocol claude-code` and by `tollgate hook`.
pub(crate) fn unfit_reason(why: &str) -> String {
    format!("{why}: the call does not fit its tool's fields, so tollgate's policy cannot vet it")
}

/// A process-unique id part: `<nanos since epoch>-<pid>` in hex.
pub(crate) fn generated_id() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{:x}-{:x}", nanos, std::process::id())
}

// ---- the report ------------------------------------------------------------------------

#[derive(Debug, Serialize)]
struct Report {
    event: String,
    decision: &'static str,
    reason: Option<String>,
    decided_by: Option<String>,
    observation: Option<String>,
    modified_args: Option<Value>,
    modified_result: Option<Value>,
    additional_context: Vec<String>,
    side_effects: Vec<SideEffectReport>,
    hook_runs: Vec<HookRunReport>,
}

#[derive(Debug, Serialize)]
struct SideEffectReport {
    hook: String,
    #[serde(flatten)]
    effect: SideEffectWire,
}

#[derive(Debug, Serialize)]
struct HookRunReport {
    name: String,
    kind: String,
    source: String,
    status: String,
    decision: Option<String>,
    reason: Option<String>,
    error: Option<String>,
    failure_mode: String,
    duration_ms: u64,
    rewrote: bool,
}

impl Report {
    /// The denial of a call whose input does not fit its tool (`why` names the field).
    fn unfit(event: String, why: &str) -> Self {
        let reason = format!("tollgate: {}", unfit_reason(why));
        Self {
            event,
            decision: "deny",
            reason: Some(reason.clone()),
            decided_by: None,
            observation: Some(reason),
            modified_args: None,
            modified_result: None,
            additional_context: Vec::new(),
            side_effects: Vec::new(),
            hook_runs: Vec::new(),
        }
    }

    fn new(outcome: &DispatchOutcome) -> Self {
        Self {
            event: outcome.event.to_string(),
            decision: outcome.decision.as_str(),
            reason: outcome.decision.reason().map(str::to_owned),
            decided_by: outcome.decided_by.as_ref().map(|d| match d {
                DecidedBy::Hook(name) => name.to_string(),
                DecidedBy::PermissionGate => "permission_gate".to_owned(),
            }),
            observation: outcome.observation(),
            modified_args: outcome.modified_args.clone(),
            modified_result: outcome.modified_result.clone(),
            additional_context: outcome.additional_context.clone(),
            side_effects: outcome
                .side_effects
                .iter()
                .map(|s| SideEffectReport {
                    hook: s.hook.to_string(),
                    effect: SideEffectWire::from(&s.effect),
                })
                .collect(),
            hook_runs: outcome
                .runs
                .iter()
                .map(|r| HookRunReport::new(r.to_wire(&outcome.event)))
                .collect(),
        }
    }
}

impl HookRunReport {
    fn new(wire: tollgate_protocol::wire::HookRunWire) -> Self {
        Self {
            name: wire.hook,
            kind: wire.kind,
            source: wire.source,
            status: wire.status,
            decision: wire.decision,
            reason: wire.reason,
            error: wire.error,
            failure_mode: wire.failure_mode,
            duration_ms: wire.duration_ms,
            rewrote: wire.rewrote,
        }
    }
}
