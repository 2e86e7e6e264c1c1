//! Runs over HTTP: `POST /v1/runs` starts an agent run, `GET /v1/runs/{id}/events` streams
//! its trace as Server-Sent Events.
//!
//! Each trace step becomes one SSE event whose `id:` is the step's `seq`, so a client that
//! reconnects with `Last-Event-ID` gets what it missed; a client that connects after the run
//! ended gets the whole history and the end. The stream ends after `run.ended`.
//!
//! Runs are durable: a run's row and its trace lines (its journal) live in the server's
//! database beside the approval requests its calls file. A line reaches SSE clients only once
//! it is committed, and a tool starts only once its `tool_started` line is. A restarted server
//! resumes every run that was `running` or `waiting` from its journal ([`resume_runs`]): model
//! turns and tool results are replayed from the lines, never requested or run again; a tool
//! that was running is reported interrupted; a waiting call re-attaches to its request.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::watch;
use tollgate_approval::RunRecord;
use tollgate_runtime::CancellationToken;

mod journal;
mod start;
mod stream;

pub(crate) use journal::Journal;
pub use start::resume_runs;
pub(crate) use stream::events;

use crate::AppState;
use crate::auth::Caller;
use crate::body::JsonBody;
use crate::error::ApiError;
use crate::wire::{Cancelled, RunCreated, RunList};

/// `POST /v1/runs`.
#[derive(Debug, Default, Deserialize, Serialize, utoipa::ToSchema)]
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
    /// Why it failed, when it did.
    pub error: Option<String>,
    /// When it was created (ms since the Unix epoch).
    pub created_at: i64,
    /// When it ended (ms), once it did.
    pub ended_at: Option<i64>,
    /// Where its events stream.
    pub events_url: String,
}

impl RunView {
    fn new(record: RunRecord, base: &str) -> Self {
        Self {
            events_url: format!("{base}/v1/runs/{}/events", record.id),
            run_id: record.id,
            agent: record.agent,
            status: record.status,
            turns: record.turns,
            pending_approval: record.pending_approval,
            error: record.error,
            created_at: record.created_at,
            ended_at: record.ended_at,
        }
    }
}

/// A run going on in this process.
struct LiveRun {
    cancel: CancellationToken,
    /// The `seq` after the last committed line.
    committed: watch::Sender<u64>,
}

/// The runs going on in this server process, and the journal their lines go to.
#[derive(Default)]
pub struct Runs {
    live: Mutex<HashMap<String, Arc<LiveRun>>>,
    /// Fires when the server stops: streams end (their clients reconnect with
    /// `Last-Event-ID` to the next server), runs are left as they stand.
    stopping: CancellationToken,
}

impl std::fmt::Debug for Runs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runs").finish_non_exhaustive()
    }
}

impl Runs {
    fn get(&self, id: &str) -> Option<Arc<LiveRun>> {
        self.live.lock().ok()?.get(id).cloned()
    }

    fn add(&self, id: &str, cancel: CancellationToken) {
        if let Ok(mut live) = self.live.lock() {
            let run = LiveRun {
                cancel,
                committed: watch::channel(0).0,
            };
            live.insert(id.to_owned(), Arc::new(run));
        }
    }

    fn remove(&self, id: &str) {
        if let Ok(mut live) = self.live.lock() {
            live.remove(id);
        }
    }

    /// Line `seq` of run `id` is in the database: its watchers may read it.
    fn committed(&self, id: &str, seq: u64) {
        if let Some(run) = self.get(id) {
            run.committed.send_replace(seq + 1);
        }
    }

    /// How many runs go on in this process.
    pub fn live_count(&self) -> usize {
        self.live.lock().map_or(0, |l| l.len())
    }

    /// Ends every event stream (the server is stopping); runs stay as they stand.
    pub fn stop_streams(&self) {
        self.stopping.cancel();
    }
}

/// The base of links (`public_url`, else the address the server listens on).
fn base_url(state: &AppState) -> String {
    state.config.public_url.as_ref().map_or_else(
        || {
            format!(
                "http://{}",
                state.bound.get().unwrap_or(&state.config.listen)
            )
        },
        |u| u.as_str().trim_end_matches('/').to_owned(),
    )
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
    token.runner()?;
    if body.prompt.trim().is_empty() {
        return Err(ApiError::bad_request("`prompt` must not be empty"));
    }
    let run = start::prepare(&state, &body)?;
    let run_id = format!("run_{}", ulid::Ulid::generate());
    let recorded = serde_json::to_value(&body).unwrap_or_default();
    state
        .store
        .create_run(&run_id, &run.request.agent.name, &recorded)
        .await
        .map_err(|e| ApiError::store(&e))?;
    let events_url = format!("{}/v1/runs/{run_id}/events", base_url(&state));
    start::spawn(&state, &run_id, run, None);
    let body = Json(RunCreated { run_id, events_url });
    Ok((StatusCode::CREATED, body).into_response())
}

/// `?status=&limit=` of `GET /v1/runs`.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(crate) struct ListQuery {
    /// Only runs with this status (`running`, `waiting`, `completed`, …).
    status: Option<String>,
    /// How many (default 100, at most 1,000).
    limit: Option<u32>,
}

/// The statuses a run can have.
const STATUSES: [&str; 7] = [
    "running",
    "waiting",
    "completed",
    "failed",
    "cancelled",
    "turn_limit",
    "timed_out",
];

/// Most runs `GET /v1/runs` lists.
pub const MAX_LIST: u32 = 1000;

/// `GET /v1/runs?status=&limit=` (any token): the server's runs, newest first (default 100,
/// at most [`MAX_LIST`]); every run the database holds, across restarts.
pub(crate) async fn list(
    State(state): State<AppState>,
    Caller(_): Caller,
    query: Result<Query<ListQuery>, QueryRejection>,
) -> Result<Json<RunList>, ApiError> {
    let Query(query) = query.map_err(|e| ApiError::bad_request(e.body_text()))?;
    if let Some(status) = &query.status
        && !STATUSES.contains(&status.as_str())
    {
        return Err(ApiError::bad_request(format!(
            "`status` must be one of {}",
            STATUSES.join(", ")
        )));
    }
    let limit = query.limit.unwrap_or(100).min(MAX_LIST);
    let records = state
        .store
        .runs(query.status.as_deref(), limit)
        .await
        .map_err(|e| ApiError::store(&e))?;
    let base = base_url(&state);
    let runs: Vec<RunView> = records
        .into_iter()
        .map(|r| RunView::new(r, &base))
        .collect();
    Ok(Json(RunList { runs }))
}

fn path_id(id: Result<Path<String>, PathRejection>) -> Result<String, ApiError> {
    id.map(|Path(id)| id)
        .map_err(|e| ApiError::bad_request(e.body_text()))
}

async fn record(state: &AppState, id: &str) -> Result<RunRecord, ApiError> {
    state
        .store
        .run(id)
        .await
        .map_err(|e| ApiError::store(&e))?
        .ok_or_else(|| ApiError::not_found("no run with that id on this server"))
}

/// `GET /v1/runs/{id}` (any token).
pub(crate) async fn show(
    State(state): State<AppState>,
    Caller(_): Caller,
    id: Result<Path<String>, PathRejection>,
) -> Result<Json<RunView>, ApiError> {
    let record = record(&state, &path_id(id)?).await?;
    Ok(Json(RunView::new(record, &base_url(&state))))
}

/// `POST /v1/runs/{id}/cancel` (runner or admin): cancels the run (a waiting request is
/// cancelled too); 409 when it already ended.
pub(crate) async fn cancel(
    State(state): State<AppState>,
    Caller(token): Caller,
    id: Result<Path<String>, PathRejection>,
) -> Result<Json<Cancelled>, ApiError> {
    token.runner()?;
    let id = path_id(id)?;
    let record = record(&state, &id).await?;
    match state.runs.get(&id) {
        Some(live) => {
            live.cancel.cancel();
            Ok(Json(Cancelled { cancelled: true }))
        }
        None => Err(ApiError::new(
            StatusCode::CONFLICT,
            "conflict",
            format!("the run is {}: there is nothing to cancel", record.status),
        )),
    }
}
