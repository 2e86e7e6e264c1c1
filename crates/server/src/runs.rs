//! Runs over HTTP: `POST /v1/runs` starts an agent run, `GET /v1/runs/{id}/events` streams
//! its trace as Server-Sent Events.
//!
//! Each trace step becomes one SSE event whose `id:` is the step's `seq`, so a client that
//! reconnects with `Last-Event-ID` gets what it missed; a client that connects after the run
//! ended gets the whole history and the end. The stream ends after `run.ended`.
//!
//! Runs live in this process: the log of a run is kept in memory for as long as the server
//! runs (the asks of a run are in the approval database and survive a restart; the run itself
//! does not yet).

use std::collections::HashMap;
use std::convert::Infallible;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::Stream;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::sync::broadcast;
use tollgate_config::{HookFile, Trust};
use tollgate_runtime::trace::{TraceLine, TraceSink};
use tollgate_runtime::{
    AgentDef, CancellationToken, DurableApprover, ModelSpec, RunRequest, Services,
};

use crate::AppState;
use crate::auth::{Caller, Role};
use crate::body::JsonBody;
use crate::error::ApiError;

/// `POST /v1/runs`.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewRun {
    /// An agent of the server's agents directory, by name (`ops` → `agents/ops.yaml`).
    pub agent: String,
    /// The user's message.
    pub prompt: String,
    /// Skills of the agent to select.
    #[serde(default)]
    pub skills: Vec<String>,
    /// `openai:MODEL` or `direct` instead of the agent file's model (never a file).
    #[serde(default)]
    pub model: Option<String>,
    /// Added to the agent's `metadata` (every hook payload carries it).
    #[serde(default)]
    pub metadata: serde_json::Map<String, Value>,
}

/// A run as `GET /v1/runs/{id}` shows it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct RunView {
    /// The run id.
    pub run_id: String,
    /// The agent.
    pub agent: String,
    /// `running`, `waiting` (a call waits for approval), `completed`, `failed`, `cancelled`,
    /// `turn_limit`, `timed_out`.
    pub status: String,
    /// Model turns used (known at the end).
    pub turns: Option<u32>,
    /// The request a call waits on, while one does.
    pub pending_approval: Option<String>,
    /// Where its events stream.
    pub events_url: String,
}

/// One streamed step.
#[derive(Debug, Clone)]
struct Streamed {
    id: u64,
    name: String,
    data: String,
    last: bool,
}

/// A run in this process.
struct RunEntry {
    view: Mutex<RunView>,
    log: Mutex<Vec<Streamed>>,
    live: broadcast::Sender<Streamed>,
    cancel: CancellationToken,
}

/// The runs of this server.
#[derive(Default)]
pub struct Runs {
    runs: Mutex<HashMap<String, Arc<RunEntry>>>,
}

impl std::fmt::Debug for Runs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runs").finish_non_exhaustive()
    }
}

impl Runs {
    fn get(&self, id: &str) -> Option<Arc<RunEntry>> {
        self.runs.lock().ok()?.get(id).cloned()
    }
}

/// The SSE event name of a trace step.
fn event_name(line: &TraceLine) -> String {
    let top = line.origin.depth == 0;
    let event = line
        .get("event")
        .and_then(Value::as_str)
        .unwrap_or_default();
    match line.step.kind {
        "session_start" if top => "run.started",
        "session_start" => "subagent.session_started",
        "session_end" if top => "run.ended",
        "session_end" => "subagent.session_ended",
        "model_turn" => "model.turn",
        "answer" => "model.answer",
        "tool_call" => "tool.call",
        "tool_started" => "tool.started",
        "hook_run" => "hook.run",
        "dispatch" if event == "pre_tool_use" => "tool.decision",
        "dispatch" => "hook.dispatch",
        "approval_waiting" => "approval.waiting",
        "approval" => "approval.decided",
        "approval_correction" => "approval.correction",
        "approval_refused" => "approval.refused",
        "observation" => "tool.result",
        "subagent_start" => "subagent.start",
        "subagent_stop" => "subagent.stop",
        "user_turn" => "user.turn",
        "warning" => "run.warning",
        other => return format!("trace.{other}"),
    }
    .to_owned()
}

/// Writes a run's trace into its log and to its live subscribers.
struct ToStream {
    entry: Arc<RunEntry>,
    approve_base: String,
}

impl TraceSink for ToStream {
    fn record(&self, line: &TraceLine) {
        let name = event_name(line);
        let mut data = line.to_json();
        if line.step.kind == "approval_waiting"
            && let Some(id) = line.get("request_id").and_then(Value::as_str)
        {
            data["approval_id"] = id.into();
            data["approve_url"] = format!("{}/v1/approvals/{id}/approve", self.approve_base).into();
            if let Ok(mut view) = self.entry.view.lock() {
                view.status = "waiting".into();
                view.pending_approval = Some(id.to_owned());
            }
        }
        if line.step.kind == "approval"
            && line.origin.depth == 0
            && let Ok(mut view) = self.entry.view.lock()
        {
            view.status = "running".into();
            view.pending_approval = None;
        }
        let streamed = Streamed {
            id: line.seq,
            last: name == "run.ended",
            name,
            data: data.to_string(),
        };
        // Under the log's lock, so a subscriber that copies the log and subscribes under the
        // same lock sees every step exactly once.
        if let Ok(mut log) = self.entry.log.lock() {
            log.push(streamed.clone());
            let _ = self.entry.live.send(streamed);
        }
    }
}

/// A name of the agents directory: letters, digits, `_`, `-`, `.` (no path).
fn agent_file(state: &AppState, name: &str) -> Result<PathBuf, ApiError> {
    let valid = !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if !valid {
        return Err(ApiError::bad_request(
            "`agent` is the name of an agent of the server's agents directory (letters, digits, `_`, `-`, `.`)",
        ));
    }
    let dir =
        state.config.agents_dir.as_ref().ok_or_else(|| {
            ApiError::not_found("this server has no `agents_dir`: it runs no agents")
        })?;
    ["yaml", "yml", "json"]
        .iter()
        .map(|ext| dir.join(format!("{name}.{ext}")))
        .find(|p| p.is_file())
        .ok_or_else(|| ApiError::not_found(format!("no agent `{name}` in the agents directory")))
}

/// `POST /v1/runs` (role `runner` or `admin`): starts a run; `201 {run_id, events_url}`.
pub(crate) async fn create(
    State(state): State<AppState>,
    Caller(token): Caller,
    JsonBody(body): JsonBody<NewRun>,
) -> Result<Response, ApiError> {
    if !token.has(Role::Runner) {
        return Err(ApiError::forbidden(format!(
            "the token `{}` lacks the runner role",
            token.name()
        )));
    }
    if body.prompt.trim().is_empty() {
        return Err(ApiError::bad_request("`prompt` must not be empty"));
    }
    let model = match body.model.as_deref() {
        None => None,
        Some(m) if m.starts_with("scripted:") => {
            return Err(ApiError::bad_request(
                "`model`: a request may name `openai:MODEL` or `direct`, never a file",
            ));
        }
        Some(m) => Some(
            ModelSpec::parse(m, std::path::Path::new(""))
                .map_err(|e| ApiError::bad_request(format!("`model`: {e}")))?,
        ),
    };
    let file = agent_file(&state, &body.agent)?;
    let mut agent = AgentDef::load(&file)
        .map_err(|e| ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "bad_agent", e.to_string()))?;
    agent.metadata.extend(body.metadata);
    // The server's `approval.timeout_seconds` is the default: the agent file's, then the
    // admin files', win over it.
    if agent.approval.timeout_seconds.is_none() {
        agent.approval.timeout_seconds = Some(state.config.approval_timeout.as_secs());
    }
    let mut admin = Vec::new();
    for path in &state.config.admin_hooks {
        admin.push(HookFile::load(path, Trust::Admin).map_err(|e| {
            ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "bad_admin_hooks",
                e.to_string(),
            )
        })?);
    }
    let run_id = format!("run_{}", ulid::Ulid::generate());
    let base = state.config.public_url.as_ref().map_or_else(
        || format!("http://{}", state.config.listen),
        |u| u.as_str().trim_end_matches('/').to_owned(),
    );
    let events_url = format!("{base}/v1/runs/{run_id}/events");
    let cancel = CancellationToken::new();
    let entry = Arc::new(RunEntry {
        view: Mutex::new(RunView {
            run_id: run_id.clone(),
            agent: agent.name.clone(),
            status: "running".into(),
            turns: None,
            pending_approval: None,
            events_url: events_url.clone(),
        }),
        log: Mutex::new(Vec::new()),
        live: broadcast::channel(1024).0,
        cancel: cancel.clone(),
    });
    if let Ok(mut runs) = state.runs.runs.lock() {
        runs.insert(run_id.clone(), Arc::clone(&entry));
    }
    let db = std::path::absolute(&state.config.database)
        .unwrap_or_else(|_| state.config.database.clone());
    let protected = tollgate_approval::database_files(&db);
    let services = Services {
        approver: Arc::new(DurableApprover::new(db.clone(), "server", cancel.clone())),
        admin: Arc::from(admin),
        source: "api".into(),
        protected,
        default_approvers: state.tokens.approver_names(),
        ..Services::default()
    };
    let request = RunRequest {
        agent,
        prompt: body.prompt,
        skills: body.skills,
        model,
        workspace: None,
        run_id: Some(run_id.clone()),
    };
    let sink = Arc::new(ToStream {
        entry: Arc::clone(&entry),
        approve_base: base,
    });
    // The metrics first: what a stream shows is already counted.
    let sinks: Vec<Arc<dyn TraceSink>> = vec![state.metrics.run_sink(), sink];
    tokio::spawn(async move {
        let report = tollgate_runtime::run(request, &services, sinks, cancel).await;
        services.background.idle().await;
        if let Ok(mut view) = entry.view.lock() {
            view.status = report.status.as_str().into();
            view.turns = Some(report.turns);
            view.pending_approval = None;
        }
    });
    let body = Json(json!({"run_id": run_id, "events_url": events_url}));
    Ok((StatusCode::CREATED, body).into_response())
}

/// `GET /v1/runs` (any token): the runs of this server process.
pub(crate) async fn list(State(state): State<AppState>, Caller(_): Caller) -> Json<Value> {
    let runs: Vec<RunView> = state
        .runs
        .runs
        .lock()
        .map(|runs| {
            runs.values()
                .filter_map(|e| e.view.lock().ok().map(|v| v.clone()))
                .collect()
        })
        .unwrap_or_default();
    Json(json!({"runs": runs}))
}

fn entry(
    state: &AppState,
    id: Result<Path<String>, PathRejection>,
) -> Result<Arc<RunEntry>, ApiError> {
    let Path(id) = id.map_err(|e| ApiError::bad_request(e.body_text()))?;
    state
        .runs
        .get(&id)
        .ok_or_else(|| ApiError::not_found("no run with that id on this server"))
}

/// `GET /v1/runs/{id}` (any token).
pub(crate) async fn show(
    State(state): State<AppState>,
    Caller(_): Caller,
    id: Result<Path<String>, PathRejection>,
) -> Result<Json<RunView>, ApiError> {
    let entry = entry(&state, id)?;
    let view = entry.view.lock().map(|v| v.clone()).map_err(|_| {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "run state lost",
        )
    })?;
    Ok(Json(view))
}

/// `POST /v1/runs/{id}/cancel` (runner or admin): cancels the run (a waiting request is
/// cancelled too).
pub(crate) async fn cancel(
    State(state): State<AppState>,
    Caller(token): Caller,
    id: Result<Path<String>, PathRejection>,
) -> Result<Json<Value>, ApiError> {
    if !token.has(Role::Runner) {
        return Err(ApiError::forbidden(format!(
            "the token `{}` lacks the runner role",
            token.name()
        )));
    }
    let entry = entry(&state, id)?;
    entry.cancel.cancel();
    Ok(Json(json!({"cancelled": true})))
}

/// `GET /v1/runs/{id}/events` (any token): the run's steps as SSE, from after
/// `Last-Event-ID` (or from the start), live until `run.ended`.
pub(crate) async fn events(
    State(state): State<AppState>,
    Caller(_): Caller,
    headers: HeaderMap,
    id: Result<Path<String>, PathRejection>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let entry = entry(&state, id)?;
    let after = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let (backlog, receiver) = {
        let log = entry.log.lock().map_err(|_| {
            ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                "run log lost",
            )
        })?;
        let backlog: Vec<Streamed> = log
            .iter()
            .filter(|s| after.is_none_or(|a| s.id > a))
            .cloned()
            .collect();
        (backlog, entry.live.subscribe())
    };
    let ended = backlog.iter().any(|s| s.last);
    let live = futures::stream::unfold((receiver, ended), |(mut receiver, done)| async move {
        if done {
            return None;
        }
        match receiver.recv().await {
            Ok(streamed) => {
                let last = streamed.last;
                Some((streamed, (receiver, last)))
            }
            // Too slow a reader (it reconnects with Last-Event-ID and gets the rest), or
            // the run is gone.
            Err(broadcast::error::RecvError::Lagged(_) | broadcast::error::RecvError::Closed) => {
                None
            }
        }
    });
    let stream = futures::StreamExt::map(
        futures::StreamExt::chain(futures::stream::iter(backlog), live),
        |s| {
            Ok(Event::default()
                .id(s.id.to_string())
                .event(s.name)
                .data(s.data))
        },
    );
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}
