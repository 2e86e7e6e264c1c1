//! How fast a waiting call resumes once a decision is written, in one process.
//!
//! ```text
//! cargo run --release -p tollgate-approval --example resume_latency
//! ```
//!
//! For each iteration: file a request in a SQLite file in a temporary folder, start
//! `Store::wait` on it in a task with a 1 s poll (so only the in-process notification can wake
//! it quickly), then approve it. The latency runs from just before `Store::decide` is called
//! until the waiting task holds the decided row, so it includes the decision's transaction
//! (with its fsync) and the waiter's read of the row. After a warm-up, prints one JSON line:
//! `{"p50_us":…,"p99_us":…,"iterations":…}`.

use std::error::Error;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::json;
use tokio::sync::oneshot;
use tollgate_approval::{Decision, NewRequest, Status, Store, Verdict};

const WARM_UP: usize = 50;
const ITERATIONS: usize = 500;
/// Long enough that a waiter woken by its poll would show as a second, not microseconds.
const POLL: Duration = Duration::from_secs(1);
/// Time for the waiting task to read the row and park before the decision is written.
const SETTLE: Duration = Duration::from_millis(5);

type BoxError = Box<dyn Error + Send + Sync>;

/// The line printed, in this key order.
#[derive(Serialize)]
struct Report {
    p50_us: u128,
    p99_us: u128,
    iterations: usize,
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let dir = tempfile::tempdir()?;
    let store = Store::open(&dir.path().join("approvals.db")).await?;
    for n in 0..WARM_UP {
        resume(&store, &format!("warm-{n}")).await?;
    }
    let mut latencies = Vec::with_capacity(ITERATIONS);
    for n in 0..ITERATIONS {
        latencies.push(resume(&store, &format!("call-{n}")).await?);
    }
    latencies.sort_unstable();
    let micros = |p: f64| percentile(&latencies, p).as_micros();
    let report = Report {
        p50_us: micros(0.50),
        p99_us: micros(0.99),
        iterations: ITERATIONS,
    };
    println!("{}", serde_json::to_string(&report)?);
    Ok(())
}

/// One request from filing to the waiter holding its decision; returns the time from just
/// before the decision to the waiter resuming.
async fn resume(store: &Store, call: &str) -> Result<Duration, BoxError> {
    let id = store.file(&asking(call)).await?.request.id;
    let (resumed, at) = oneshot::channel();
    let waiter = tokio::spawn({
        let (store, id) = (store.clone(), id.clone());
        async move {
            let decided = store.wait(&id, POLL).await;
            // The receiver only goes away if `resume` failed already.
            let _ = resumed.send(Instant::now());
            decided
        }
    });
    tokio::time::sleep(SETTLE).await;
    let start = Instant::now();
    store.decide(&id, &approve()).await?;
    let at = at.await?;
    let decided = waiter.await??;
    if decided.status != Status::Approved {
        return Err(format!("{id} resumed as {}", decided.status).into());
    }
    Ok(at.saturating_duration_since(start))
}

/// The nearest-rank percentile `p` (0..=1) of sorted `values`.
fn percentile(values: &[Duration], p: f64) -> Duration {
    let rank = (p * values.len() as f64).ceil() as usize;
    values
        .get(rank.saturating_sub(1))
        .copied()
        .unwrap_or_default()
}

fn asking(call: &str) -> NewRequest {
    NewRequest {
        run_id: "run-1".into(),
        session_id: "session-1".into(),
        scope: "t1:pre_tool_use".into(),
        agent: "ops".into(),
        tool_name: "sql_execute".into(),
        tool_call_id: call.into(),
        arguments: json!({"sql": "DELETE FROM users"}),
        reasons: vec!["calls of `sql_execute` need confirmation".into()],
        asked_by: "permission_gate".into(),
        approvers: vec!["ops-lead".into()],
        timeout_seconds: 3600,
    }
}

fn approve() -> Decision {
    Decision {
        verdict: Verdict::Approve { edit: None },
        by: "ops-lead".into(),
        channel: "cli".into(),
        note: None,
    }
}
