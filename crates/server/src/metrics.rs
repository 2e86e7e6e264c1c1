//! `GET /metrics`: the server's metrics in the Prometheus text format (version 0.0.4).
//!
//! | name | type | labels | what |
//! |---|---|---|---|
//! | `tollgate_runs_started_total` | counter | | runs started through `POST /v1/runs` |
//! | `tollgate_runs_ended_total` | counter | `status` | runs that ended, by their end status |
//! | `tollgate_runs_in_progress` | gauge | `status` (`running`, `waiting`) | runs not ended yet; `waiting` while a call waits for approval |
//! | `tollgate_approvals_pending` | gauge | | requests waiting for a human, read from the database at scrape time |
//! | `tollgate_approval_decision_latency_seconds` | histogram | `decision`, `channel` | from a request's filing to its decision through the API or the page |
//! | `tollgate_hook_runs_total` | counter | `kind`, `status` | hook runs of the server's runs, by hook kind and run status |
//!
//! Each [`Metrics`] has its own recorder (no process-wide one), so two servers in one process
//! count apart. The run metrics come from the trace: [`Metrics::run_sink`] is one more sink of
//! a run, placed before the stream's, so a client that saw an event can scrape it counted.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use metrics_exporter_prometheus::{
    Matcher, PrometheusBuilder, PrometheusHandle, PrometheusRecorder,
};
use serde_json::Value;
use tollgate_approval::{Request, Status};
use tollgate_runtime::trace::{TraceLine, TraceSink};

use crate::AppState;
use crate::auth::Caller;
use crate::error::ApiError;

/// The content type of the text exposition format.
pub const CONTENT_TYPE_TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";

const RUNS_STARTED: &str = "tollgate_runs_started_total";
const RUNS_ENDED: &str = "tollgate_runs_ended_total";
const RUNS_IN_PROGRESS: &str = "tollgate_runs_in_progress";
const APPROVALS_PENDING: &str = "tollgate_approvals_pending";
const DECISION_LATENCY: &str = "tollgate_approval_decision_latency_seconds";
const HOOK_RUNS: &str = "tollgate_hook_runs_total";
const RUNS: &str = "tollgate_runs";

/// Upper bounds of the decision latency buckets, in seconds: a person answers in seconds to
/// hours.
const DECISION_BUCKETS: [f64; 14] = [
    1.0, 5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0, 7200.0, 14400.0, 43200.0,
    86400.0,
];

/// The end statuses of a run, shown at 0 before any run ends.
const END_STATUSES: [&str; 5] = [
    "completed",
    "failed",
    "cancelled",
    "turn_limit",
    "timed_out",
];

/// A server's metrics: its own recorder and the handles it updates.
pub struct Metrics {
    recorder: PrometheusRecorder,
    handle: PrometheusHandle,
    runs_started: metrics::Counter,
    running: metrics::Gauge,
    waiting: metrics::Gauge,
    pending: metrics::Gauge,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// Metrics with every fixed series registered at zero.
    pub fn new() -> Self {
        // Only an empty bucket list is refused, and this one is not empty.
        let recorder = PrometheusBuilder::new()
            .set_buckets_for_metric(Matcher::Full(DECISION_LATENCY.into()), &DECISION_BUCKETS)
            .unwrap_or_else(|_| PrometheusBuilder::new())
            .build_recorder();
        let handle = recorder.handle();
        let (runs_started, running, waiting, pending) =
            metrics::with_local_recorder(&recorder, || {
                describe();
                for status in END_STATUSES {
                    metrics::counter!(RUNS_ENDED, "status" => status).absolute(0);
                }
                (
                    metrics::counter!(RUNS_STARTED),
                    metrics::gauge!(RUNS_IN_PROGRESS, "status" => "running"),
                    metrics::gauge!(RUNS_IN_PROGRESS, "status" => "waiting"),
                    metrics::gauge!(APPROVALS_PENDING),
                )
            });
        Self {
            recorder,
            handle,
            runs_started,
            running,
            waiting,
            pending,
        }
    }

    /// Counts a run that starts now; the returned sink, given to the run first, counts the rest
    /// (its waits, its hook runs, its end).
    pub fn run_sink(self: &Arc<Self>) -> Arc<dyn TraceSink> {
        self.runs_started.increment(1);
        self.running.increment(1.0);
        Arc::new(RunMetrics {
            metrics: Arc::clone(self),
            state: Mutex::new(RunState::default()),
        })
    }

    /// Observes the decision latency of `request`, just decided through `channel`.
    pub fn decided(&self, request: &Request, channel: &str) {
        let decision = match request.status {
            Status::Approved | Status::Rejected => request.status.as_str(),
            _ => return,
        };
        let Some(responded_at) = request.responded_at else {
            return;
        };
        // Milliseconds to seconds; a clock stepped back counts as no wait.
        let seconds = responded_at.saturating_sub(request.created_at).max(0) as f64 / 1000.0;
        metrics::with_local_recorder(&self.recorder, || {
            metrics::histogram!(
                DECISION_LATENCY,
                "decision" => decision,
                "channel" => label(channel),
            )
            .record(seconds);
        });
    }

    /// The text exposition, after reading the pending count from `store`.
    ///
    /// # Errors
    /// The database fails.
    pub async fn render(&self, store: &tollgate_approval::Store) -> Result<String, ApiError> {
        let pending = store
            .count_pending()
            .await
            .map_err(|e| ApiError::store(&e))?;
        self.pending.set(pending as f64);
        // Every run the database holds, by status: right across restarts, unlike the
        // in-process counters.
        let counts = store.run_counts().await.map_err(|e| ApiError::store(&e))?;
        metrics::with_local_recorder(&self.recorder, || {
            for status in ["running", "waiting"].into_iter().chain(END_STATUSES) {
                let n = counts
                    .iter()
                    .find(|(s, _)| s == status)
                    .map_or(0, |(_, n)| *n);
                metrics::gauge!(RUNS, "status" => status).set(n as f64);
            }
        });
        Ok(self.handle.render())
    }

    fn hook_run(&self, kind: &str, status: &str) {
        metrics::with_local_recorder(&self.recorder, || {
            metrics::counter!(HOOK_RUNS, "kind" => label(kind), "status" => label(status))
                .increment(1);
        });
    }

    /// Counts a run this process found in the database and could not resume (it ended
    /// `failed`).
    pub fn run_failed_on_resume(&self) {
        self.run_ended("failed");
    }

    fn run_ended(&self, status: &str) {
        metrics::with_local_recorder(&self.recorder, || {
            metrics::counter!(RUNS_ENDED, "status" => label(status)).increment(1);
        });
    }
}

fn describe() {
    metrics::describe_counter!(RUNS_STARTED, "Runs started through POST /v1/runs.");
    metrics::describe_counter!(RUNS_ENDED, "Runs that ended, by end status.");
    metrics::describe_gauge!(
        RUNS_IN_PROGRESS,
        "Runs not ended yet: running, or waiting for an approval."
    );
    metrics::describe_gauge!(
        RUNS,
        "Runs in the database by status, read at each scrape (all servers on it, all restarts)."
    );
    metrics::describe_gauge!(
        APPROVALS_PENDING,
        "Confirmation requests waiting for a human (pending and not overdue)."
    );
    metrics::describe_histogram!(
        DECISION_LATENCY,
        metrics::Unit::Seconds,
        "Seconds from a request's filing to its decision through the API or the page."
    );
    metrics::describe_counter!(HOOK_RUNS, "Hook runs, by hook kind and run status.");
}

/// A label value as written, when it is a short snake_case word (what the runtime writes);
/// `other` for anything else, so no input can grow the number of series without bound.
fn label(value: &str) -> String {
    let word = !value.is_empty()
        && value.len() <= 32
        && value.bytes().all(|b| b.is_ascii_lowercase() || b == b'_');
    if word { value } else { "other" }.to_owned()
}

/// Where one run stands, as its trace told.
#[derive(Default)]
struct RunState {
    ended: bool,
    /// The asks waiting for a human: session id and tool call id.
    waiting: HashSet<(String, String)>,
}

/// The trace sink of one run.
struct RunMetrics {
    metrics: Arc<Metrics>,
    state: Mutex<RunState>,
}

impl RunMetrics {
    /// The run is no longer in progress.
    fn leave(&self, state: &mut RunState) {
        state.ended = true;
        if state.waiting.is_empty() {
            self.metrics.running.decrement(1.0);
        } else {
            self.metrics.waiting.decrement(1.0);
        }
        state.waiting.clear();
    }

    fn ask(&self, state: &mut RunState, line: &TraceLine, waits: bool) {
        let call = line
            .get("tool_call_id")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let key = (line.origin.session_id.clone(), call.to_owned());
        let was_waiting = !state.waiting.is_empty();
        if waits {
            state.waiting.insert(key);
        } else {
            state.waiting.remove(&key);
        }
        match (was_waiting, state.waiting.is_empty()) {
            (false, false) => {
                self.metrics.running.decrement(1.0);
                self.metrics.waiting.increment(1.0);
            }
            (true, true) => {
                self.metrics.waiting.decrement(1.0);
                self.metrics.running.increment(1.0);
            }
            _ => {}
        }
    }
}

impl TraceSink for RunMetrics {
    fn record(&self, line: &TraceLine) {
        let text = |key| line.get(key).and_then(Value::as_str).unwrap_or_default();
        // A detached hook's first line says only `detached`: its second line, once it ended,
        // is the one counted.
        if line.step.kind == "hook_run" && text("status") != "detached" {
            self.metrics.hook_run(text("kind"), text("status"));
            return;
        }
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        if state.ended {
            return;
        }
        match line.step.kind {
            "approval_waiting" => self.ask(&mut state, line, true),
            "approval" => self.ask(&mut state, line, false),
            "session_end" if line.origin.depth == 0 => {
                self.metrics.run_ended(text("status"));
                self.leave(&mut state);
            }
            _ => {}
        }
    }
}

impl Drop for RunMetrics {
    /// A run whose task died before `session_end` is no longer in progress either.
    fn drop(&mut self) {
        if let Ok(mut state) = self.state.lock()
            && !state.ended
        {
            self.leave(&mut state);
        }
    }
}

/// `GET /metrics` (any token): the text exposition.
#[utoipa::path(get, path = "/metrics", operation_id = "metrics", tag = "server", security(("bearer" = [])),
    responses(
        (status = 200, description = "Prometheus text exposition, version 0.0.4",
            content_type = "text/plain; version=0.0.4", body = String),
        (status = 401, description = "No token, or an unknown one", body = crate::wire::ErrorBody),
        (status = 500, description = "The approval database failed", body = crate::wire::ErrorBody),
    ))]
pub(crate) async fn scrape(
    State(state): State<AppState>,
    Caller(_): Caller,
) -> Result<Response, ApiError> {
    let text = state.metrics.render(&state.store).await?;
    Ok(([(CONTENT_TYPE, CONTENT_TYPE_TEXT)], text).into_response())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;
    use tollgate_runtime::trace::{Origin, Step};

    use super::*;

    fn line(kind: &'static str, depth: u32, fields: Value) -> TraceLine {
        TraceLine {
            seq: 0,
            elapsed_ms: 0,
            origin: Origin {
                run_id: "run".into(),
                session_id: format!("s{depth}"),
                agent: "ops".into(),
                depth,
            },
            step: Step::new(kind, fields),
        }
    }

    fn gauges(metrics: &Metrics) -> (f64, f64) {
        let text = metrics.handle.render();
        let value = |series: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(series))
                .unwrap()
                .trim()
                .parse()
                .unwrap()
        };
        (
            value("tollgate_runs_in_progress{status=\"running\"}"),
            value("tollgate_runs_in_progress{status=\"waiting\"}"),
        )
    }

    #[test]
    fn a_run_moves_between_running_and_waiting_and_leaves_at_its_end() {
        let metrics = Arc::new(Metrics::new());
        let sink = metrics.run_sink();
        assert_eq!(gauges(&metrics), (1.0, 0.0));
        let call = |id| json!({"tool_call_id": id});
        sink.record(&line("approval_waiting", 0, call("c1")));
        sink.record(&line("approval_waiting", 1, call("c1")));
        assert_eq!(gauges(&metrics), (0.0, 1.0), "one run, waiting twice");
        sink.record(&line("approval", 0, call("c1")));
        assert_eq!(gauges(&metrics), (0.0, 1.0), "the sub-agent still waits");
        sink.record(&line("approval", 1, call("c1")));
        assert_eq!(gauges(&metrics), (1.0, 0.0));
        sink.record(&line("approval_waiting", 0, call("c2")));
        sink.record(&line("session_end", 0, json!({"status": "cancelled"})));
        assert_eq!(gauges(&metrics), (0.0, 0.0), "ended while waiting");
        let text = metrics.handle.render();
        assert!(
            text.contains("tollgate_runs_ended_total{status=\"cancelled\"} 1"),
            "{text}"
        );
        drop(sink);
        assert_eq!(
            gauges(&metrics),
            (0.0, 0.0),
            "dropping an ended run changes nothing"
        );
    }

    #[test]
    fn a_run_dropped_before_its_end_is_no_longer_in_progress() {
        let metrics = Arc::new(Metrics::new());
        let sink = metrics.run_sink();
        sink.record(&line("approval_waiting", 0, json!({"tool_call_id": "c1"})));
        drop(sink);
        assert_eq!(gauges(&metrics), (0.0, 0.0));
    }

    #[test]
    fn hook_runs_count_once_each_and_odd_labels_become_other() {
        let metrics = Arc::new(Metrics::new());
        let sink = metrics.run_sink();
        let run = |status: &str| json!({"kind": "command", "status": status});
        sink.record(&line("hook_run", 0, run("completed")));
        sink.record(&line("hook_run", 0, run("detached")));
        sink.record(&line(
            "hook_run",
            0,
            json!({"kind": "command", "status": "completed", "detached": true}),
        ));
        sink.record(&line(
            "hook_run",
            0,
            json!({"kind": "Evil\n", "status": "x{}"}),
        ));
        let text = metrics.handle.render();
        assert!(
            text.contains("tollgate_hook_runs_total{kind=\"command\",status=\"completed\"} 2"),
            "{text}"
        );
        assert!(!text.contains("status=\"detached\""), "{text}");
        assert!(
            text.contains("tollgate_hook_runs_total{kind=\"other\",status=\"other\"} 1"),
            "{text}"
        );
    }
}
