//! Starting a run, and resuming the runs a stopped server left going.

use std::sync::Arc;

use axum::http::StatusCode;
use serde_json::{Value, json};
use tollgate_approval::{JournalLine, RunChange, RunRecord, Status};
use tollgate_config::{HookFile, Trust};
use tollgate_runtime::trace::TraceSink;
use tollgate_runtime::{
    AgentDef, CancellationToken, DurableApprover, ModelSpec, RunRequest, Services,
};

use super::{NewRun, agent_file};
use crate::AppState;
use crate::error::ApiError;

/// A run ready to go: what it runs and what it runs with.
pub(super) struct Prepared {
    pub(super) request: RunRequest,
    services: Services,
    cancel: CancellationToken,
}

/// Resolves `body` against the server's configuration: the agent by name, the model override,
/// the admin hook files, the approval database.
///
/// # Errors
/// A 400 for a bad model, a 404 for an unknown agent, a 422 for an agent file that does not
/// load, a 500 for admin hook files that do not load.
pub(super) fn prepare(state: &AppState, body: &NewRun) -> Result<Prepared, ApiError> {
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
    let file = agent_file(state, &body.agent)?;
    let mut agent = AgentDef::load(&file)
        .map_err(|e| ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "bad_agent", e.to_string()))?;
    // A skill named in the request must exist: a run without the hooks its caller asked for
    // must not start as if it had them.
    let known = agent.skills.names();
    if let Some(name) = body.skills.iter().find(|s| !known.contains(&s.as_str())) {
        let have = if known.is_empty() {
            "it has none".to_owned()
        } else {
            format!("its skills: {}", known.join(", "))
        };
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "unknown_skill",
            format!(
                "agent `{}` has no skill named `{name}` ({have})",
                body.agent
            ),
        ));
    }
    agent.metadata.extend(body.metadata.clone());
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
    let db = std::path::absolute(&state.config.database)
        .unwrap_or_else(|_| state.config.database.clone());
    let cancel = CancellationToken::new();
    let services = Services {
        approver: Arc::new(DurableApprover::with_store(
            state.store.clone(),
            "server",
            cancel.clone(),
        )),
        admin: Arc::from(admin),
        source: "api".into(),
        protected: tollgate_approval::database_files(&db),
        default_approvers: state.tokens.approver_names(),
        ..Services::default()
    };
    let request = RunRequest {
        agent,
        prompt: body.prompt.clone(),
        skills: body.skills.clone(),
        model,
        workspace: None,
        run_id: None,
    };
    Ok(Prepared {
        request,
        services,
        cancel,
    })
}

/// Runs `run` as run `run_id` in the background (going on from `journal` when given); its
/// lines go to the server's journal, and it leaves the live runs once its last line is
/// committed.
pub(super) fn spawn(
    state: &AppState,
    run_id: &str,
    run: Prepared,
    journal: Option<tollgate_runtime::Journal>,
) {
    let Prepared {
        mut request,
        services,
        cancel,
    } = run;
    request.run_id = Some(run_id.to_owned());
    state.runs.add(run_id, cancel.clone());
    let sink = state.journal.sink(run_id);
    let metrics = state.metrics.run_sink();
    let runs = Arc::clone(&state.runs);
    let run_id = run_id.to_owned();
    tokio::spawn(async move {
        // The metrics first: what a stream shows is already counted.
        let sinks: Vec<Arc<dyn TraceSink>> = vec![metrics, sink.clone()];
        // Boxed: the run's future holds the request once, not beside a copy in this one.
        match journal {
            Some(journal) => {
                Box::pin(tollgate_runtime::resume(
                    request, &journal, &services, sinks, cancel,
                ))
                .await
            }
            None => Box::pin(tollgate_runtime::run(request, &services, sinks, cancel)).await,
        };
        services.background.idle().await;
        if let Err(e) = sink.flush().await {
            tracing::error!(run = %run_id, error = %e, "the run's last lines were not written");
        }
        runs.remove(&run_id);
    });
}

/// Resumes every run the database holds as `running` or `waiting` (a server that stopped or
/// died left them): each goes on from its journal in the background. A run that cannot go on
/// (its agent file is gone or broken) ends `failed`, with a last line saying why. Returns how
/// many runs were resumed.
///
/// # Errors
/// The database cannot list the runs.
pub async fn resume_runs(state: &AppState) -> Result<usize, tollgate_approval::StoreError> {
    let mut resumed = 0;
    let mut failed = 0;
    for record in state.store.live_runs().await? {
        let lines = state.store.run_lines(&record.id, None, u32::MAX).await?;
        let next_seq = lines.last().map_or(0, |l| l.seq + 1);
        let journal = tollgate_runtime::Journal::new(
            lines
                .iter()
                .filter_map(|l| serde_json::from_str::<Value>(&l.line).ok())
                .collect(),
        );
        let body = serde_json::from_value::<NewRun>(record.request.clone())
            .map_err(|e| format!("the run's request does not read back: {e}"));
        match body.and_then(|body| prepare(state, &body).map_err(|e| e.message().to_owned())) {
            Ok(run) => {
                cancel_orphans(state, &record, journal.top_session(), None).await;
                tracing::info!(run = %record.id, status = %record.status, "resuming a run");
                // A run whose first line never reached the database (the server died right
                // after creating it) starts afresh: its stream begins with `run.started`.
                let journal = (!lines.is_empty()).then_some(journal);
                spawn(state, &record.id, run, journal);
                resumed += 1;
            }
            Err(why) => {
                // Nobody will wait on its requests any more: an approval must not look as if
                // it starts something.
                let why = format!("the run cannot be resumed: {why}");
                cancel_orphans(state, &record, None, Some(&why)).await;
                fail(state, &record, next_seq, journal.top_session(), &why);
                failed += 1;
            }
        }
    }
    if failed > 0 {
        tracing::error!("{failed} run(s) could not be resumed and ended failed");
    }
    Ok(resumed)
}

/// Cancels the pending requests of `record` that nobody waits on any more: those of its
/// sub-agents (a delegation is not rebuilt; it counts as an interrupted tool) when the top
/// session `keep` goes on, or all of them (with `why`) when the run cannot go on.
async fn cancel_orphans(
    state: &AppState,
    record: &RunRecord,
    keep: Option<&str>,
    why: Option<&str>,
) {
    let Ok(pending) = state.store.list(Some(Status::Pending)).await else {
        return;
    };
    let reason = why.unwrap_or("the sub-agent that asked was interrupted when the server stopped");
    for request in pending {
        if request.run_id == record.id && keep.is_none_or(|top| top != request.session_id) {
            let _ = state.store.cancel(&request.id, "server", reason).await;
        }
    }
}

/// Ends a run that cannot be resumed: a last `session_end` line (of its top session, when one
/// was recorded) and status `failed`.
fn fail(state: &AppState, record: &RunRecord, seq: u64, session: Option<&str>, error: &str) {
    tracing::error!(run = %record.id, "{error}");
    state.metrics.run_failed_on_resume();
    let line = json!({
        "seq": seq, "elapsed_ms": 0, "run_id": record.id, "session_id": session.unwrap_or(""),
        "agent": record.agent, "depth": 0, "type": "session_end", "status": "failed",
        "turns": 0, "error": error,
    });
    state.journal.append(
        JournalLine {
            run_id: record.id.clone(),
            seq,
            kind: "session_end".into(),
            line: line.to_string(),
        },
        Some(RunChange {
            run_id: record.id.clone(),
            status: "failed".into(),
            pending_approval: None,
            turns: None,
            error: Some(error.to_owned()),
        }),
    );
}
