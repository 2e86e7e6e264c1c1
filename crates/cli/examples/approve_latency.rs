//! How fast a paused run resumes once approved over HTTP, through the real server.
//!
//! ```text
//! cargo build --release -p tollgate --bin tollgate --example approve_latency
//! target/release/examples/approve_latency            # 1000 approvals
//! target/release/examples/approve_latency --quick    # 104
//! ```
//!
//! Starts `tollgate serve` (the binary built beside this example, or `$TOLLGATE_BIN`) on
//! 127.0.0.1 with a SQLite database in a temporary folder. [`CHAINS`] runs go at once; the
//! scripted model of each makes its calls one after the other, and every call waits for an
//! approver. For each call the benchmark reads `approval.waiting` on the run's event stream,
//! thinks for a while, sends `POST /v1/approvals/{id}/approve`, and times from just before
//! sending it to the arrival of the run's `tool.started`: the decision's transaction, the
//! run noticing it, the approval being consumed, and the step reaching the stream. The think
//! time (spread evenly over 0 to [`THINK_MAX`], a fixed sequence) is not in the figure; it
//! puts each approval at any point of the waiter's cycle, as a person's would be, rather than
//! always just after the waiter started. Prints one JSON line:
//! `{"approvals":…,"runs":…,"calls_per_run":…,"measured":"…","min_ms":…,"p50_ms":…,
//! "p90_ms":…,"p99_ms":…,"max_ms":…}`.

use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use serde::Serialize;
use serde_json::json;

#[allow(dead_code)]
#[path = "support/served.rs"]
mod served;

use served::{Served, ms, percentile, until};

/// Runs that wait for approvals at the same time.
const CHAINS: usize = 8;
/// Calls per run; `--quick` makes it 13.
const CALLS_PER_RUN: usize = 125;
/// The longest think time before an approval: long against any polling period a waiter
/// might have, so that approvals fall evenly over its cycle.
const THINK_MAX: Duration = Duration::from_secs(1);
/// Calls of the warm-up run, not measured.
const WARM_UP: usize = 5;

/// The line printed, in this key order.
#[derive(Serialize)]
struct Report {
    approvals: usize,
    runs: usize,
    calls_per_run: usize,
    measured: &'static str,
    min_ms: f64,
    p50_ms: f64,
    p90_ms: f64,
    p99_ms: f64,
    max_ms: f64,
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<()> {
    let quick = std::env::args().any(|a| a == "--quick");
    let calls = if quick { 13 } else { CALLS_PER_RUN };
    let served = Served::start(&[
        ("chain.yaml", agent("chain", calls)),
        ("chain.jsonl", script(calls)),
        ("warm.yaml", agent("warm", WARM_UP)),
        ("warm.jsonl", script(WARM_UP)),
    ])?;
    chain(&served, "warm", WARM_UP, 0).await?;
    let mut tasks = tokio::task::JoinSet::new();
    let served = std::sync::Arc::new(served);
    for n in 0..CHAINS {
        let served = std::sync::Arc::clone(&served);
        tasks.spawn(async move { chain(&served, "chain", calls, n).await });
    }
    let mut latencies = Vec::with_capacity(CHAINS * calls);
    while let Some(done) = tasks.join_next().await {
        latencies.extend(done??);
    }
    latencies.sort_unstable();
    let report = Report {
        approvals: latencies.len(),
        runs: CHAINS,
        calls_per_run: calls,
        measured: "POST /v1/approvals/{id}/approve sent -> tool.started read on the run's SSE stream",
        min_ms: ms(latencies.first().copied().unwrap_or_default()),
        p50_ms: ms(percentile(&latencies, 0.50)),
        p90_ms: ms(percentile(&latencies, 0.90)),
        p99_ms: ms(percentile(&latencies, 0.99)),
        max_ms: ms(latencies.last().copied().unwrap_or_default()),
    };
    println!("{}", serde_json::to_string(&report)?);
    Ok(())
}

/// One run of `agent` through its `calls` approvals; the latency of each. `seed` staggers
/// the think times of the runs.
async fn chain(served: &Served, agent: &str, calls: usize, seed: usize) -> Result<Vec<Duration>> {
    let run = served.start_run(agent).await?;
    let mut events = served.events(&run).await?;
    let mut latencies = Vec::with_capacity(calls);
    for call in 0..calls {
        let (waiting, _) = until(&mut events, "approval.waiting").await?;
        let Some(id) = waiting.data["approval_id"].as_str() else {
            bail!("approval.waiting without approval_id: {}", waiting.data);
        };
        tokio::time::sleep(think(call * CHAINS + seed)).await;
        let sent = Instant::now();
        served.approve(id).await?;
        let (_, resumed) = until(&mut events, "tool.started").await?;
        latencies.push(resumed.saturating_duration_since(sent));
    }
    until(&mut events, "run.ended").await?;
    Ok(latencies)
}

/// The `n`th think time: 0 to [`THINK_MAX`] in 97 even steps, visited in a scattered order.
fn think(n: usize) -> Duration {
    const STEPS: u32 = 97;
    let step = u32::try_from(n.wrapping_mul(37) % STEPS as usize).unwrap_or(0);
    THINK_MAX * step / (STEPS - 1)
}

/// Agent `name`, whose scripted model (`NAME.jsonl`) makes `calls` calls of `write_file`,
/// each of which waits for an approver, then answers.
fn agent(name: &str, calls: usize) -> String {
    format!(
        "name: {name}\nmodel: scripted:{name}.jsonl\ntools: [write_file]\nmax_turns: {}\n\
         model_config_json:\n  hooks:\n    confirmation_tools: [write_file]\n",
        calls + 1
    )
}

fn script(calls: usize) -> String {
    let mut lines: Vec<String> = (0..calls)
        .map(|n| {
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": format!("c{n}"),
                "type": "function", "function": {"name": "write_file",
                "arguments": {"path": format!("out-{n}.txt"), "content": "ran"}}}]})
            .to_string()
        })
        .collect();
    lines.push(json!({"role": "assistant", "content": "done"}).to_string());
    lines.join("\n") + "\n"
}
