//! `GET /v1/runs/{id}/events`: a run's journal as Server-Sent Events, read from the database
//! and woken by the journal writer after each commit.

use std::collections::VecDeque;
use std::convert::Infallible;

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures::Stream;
use serde_json::Value;
use tokio::sync::watch;
use tollgate_approval::{JournalLine, Store};
use tollgate_runtime::CancellationToken;

use super::{base_url, path_id, record};
use crate::AppState;
use crate::auth::Caller;
use crate::error::ApiError;

/// Lines read from the database at a time.
const PAGE: u32 = 256;

/// The SSE event name of a trace line.
pub(crate) fn event_name(line: &Value) -> String {
    let text = |key: &str| line.get(key).and_then(Value::as_str).unwrap_or_default();
    let top = line.get("depth").and_then(Value::as_u64) == Some(0);
    match text("type") {
        "session_start" if top => "run.started",
        "session_start" => "subagent.session_started",
        "session_resumed" => "run.resumed",
        "session_end" if top => "run.ended",
        "session_end" => "subagent.session_ended",
        "model_turn" => "model.turn",
        "answer" => "model.answer",
        "tool_call" => "tool.call",
        "tool_started" => "tool.started",
        "hook_run" => "hook.run",
        "hook_status" => "hook.status",
        "dispatch" if text("event") == "pre_tool_use" => "tool.decision",
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

/// Where a stream stands.
struct Reader {
    store: Store,
    run_id: String,
    after: Option<u64>,
    /// Wakes after each commit while the run goes on in this process; `None` once it does not.
    committed: Option<watch::Receiver<u64>>,
    stopping: CancellationToken,
    buffer: VecDeque<JournalLine>,
    base: String,
    ended: bool,
}

impl Reader {
    /// The next event, or `None` at the end (`run.ended`, the run no longer going on here,
    /// the server stopping, the database failing).
    async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(line) = self.buffer.pop_front() {
                self.after = Some(line.seq);
                return Some(self.event(&line));
            }
            if self.ended {
                return None;
            }
            // Seen before reading: a commit after this point wakes the wait below.
            if let Some(committed) = &mut self.committed {
                committed.borrow_and_update();
            }
            match self.store.run_lines(&self.run_id, self.after, PAGE).await {
                Ok(lines) if !lines.is_empty() => {
                    self.buffer.extend(lines);
                    continue;
                }
                Ok(_) => {}
                Err(e) => {
                    tracing::error!(run = %self.run_id, error = %e, "cannot read the run's journal");
                    return None;
                }
            }
            let committed = self.committed.as_mut()?;
            tokio::select! {
                changed = committed.changed() => {
                    if changed.is_err() {
                        // The run left: one more read gets its last lines.
                        self.committed = None;
                    }
                }
                () = self.stopping.cancelled() => return None,
            }
        }
    }

    fn event(&mut self, line: &JournalLine) -> Event {
        let mut value: Value = serde_json::from_str(&line.line).unwrap_or(Value::Null);
        let name = event_name(&value);
        if name == "run.ended" {
            self.ended = true;
        }
        let data = if line.kind == "approval_waiting"
            && let Some(id) = value
                .get("request_id")
                .and_then(Value::as_str)
                .map(str::to_owned)
        {
            value["approval_id"] = id.as_str().into();
            value["approve_url"] = format!("{}/v1/approvals/{id}/approve", self.base).into();
            value.to_string()
        } else {
            line.line.clone()
        };
        Event::default()
            .id(line.seq.to_string())
            .event(name)
            .data(data)
    }
}

/// `GET /v1/runs/{id}/events` (any token): the run's lines as SSE, from after `Last-Event-ID`
/// (or from the start), live until `run.ended`. A run that ended streams its whole history
/// and the end; 404 for an unknown run.
pub(crate) async fn events(
    State(state): State<AppState>,
    Caller(_): Caller,
    headers: HeaderMap,
    id: Result<Path<String>, PathRejection>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let id = path_id(id)?;
    // Subscribed before the run's row is read: a run that ends meanwhile still streams whole.
    let committed = state.runs.get(&id).map(|r| r.committed.subscribe());
    record(&state, &id).await?;
    let after = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let reader = Reader {
        store: state.store.clone(),
        base: base_url(&state),
        run_id: id,
        after,
        committed,
        stopping: state.runs.stopping.clone(),
        buffer: VecDeque::new(),
        ended: false,
    };
    let stream = futures::stream::unfold(reader, |mut reader| async move {
        let event = reader.next().await?;
        Some((Ok(event), reader))
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}
