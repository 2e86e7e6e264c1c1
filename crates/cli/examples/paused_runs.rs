//! How fast the real server starts runs that pause for approval, and what each paused run
//! costs it in memory.
//!
//! ```text
//! cargo build --release -p tollgate --bin tollgate --example paused_runs
//! target/release/examples/paused_runs             # N = 1000, 5000, 10000
//! target/release/examples/paused_runs --quick     # N = 200, 1000
//! PAUSED_RUNS=2000 target/release/examples/paused_runs   # N = 2000 only
//! ```
//!
//! For each N, a fresh `tollgate serve` (the binary built beside this example, or
//! `$TOLLGATE_BIN`) runs as a child process on 127.0.0.1 with a SQLite database in a
//! temporary folder. Its agent's scripted model calls `write_file` once; a class hook
//! (`ReadOnlyGuard` on that tool) runs on the call, then the call waits for an approver, who
//! never comes. After one warm-up run (approved, ended), the server's `VmRSS` is the idle
//! baseline. Then N runs are started through `POST /v1/runs`, [`CLIENTS`] requests at a
//! time, and the run counts of `GET /metrics` are read until none is `running`, or [`DEADLINE`] after the
//! first request (`all_waiting` says which). `runs_per_s` is the runs that wait by then over
//! that time. After [`SETTLE`], the server's `VmRSS` (`/proc/PID/status`, the server alone)
//! less the baseline, over the runs alive (waiting, or still starting when the deadline
//! passed), is `bytes_per_run`. `idle_cpu_percent` is the CPU the server then uses over
//! [`IDLE_WINDOW`] while no request comes (100 is one core); `threads` and `open_fds` are
//! what it holds. The soft descriptor limit is raised to the hard one first (the server
//! inherits it; `fd_limit`). Runs that end instead of pausing (`ended`) and requests the
//! server answers other than 201 (`refused`) are counted, not hidden. Prints one JSON line
//! per N.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use serde::Serialize;
use serde_json::{Value, json};

#[allow(dead_code)]
#[path = "support/served.rs"]
mod served;

use served::{CI, Served, open_fds, rss_bytes, status_field, until};

/// Requests to `POST /v1/runs` in flight at once.
const CLIENTS: usize = 16;
/// Time for the server to settle before its memory is read.
const SETTLE: Duration = Duration::from_secs(1);
/// How long the server's CPU use is watched while the runs wait.
const IDLE_WINDOW: Duration = Duration::from_secs(2);
/// Longest wait for N runs to pause; then the server is measured as it is.
const DEADLINE: Duration = Duration::from_secs(120);

/// The line printed per N, in this key order.
#[derive(Serialize)]
struct Report {
    runs: usize,
    all_waiting: bool,
    waiting: usize,
    /// Runs still starting at the deadline.
    running: usize,
    /// Runs that ended instead of pausing (a failure to report, not to hide).
    ended: usize,
    /// `POST /v1/runs` answered other than 201.
    refused: usize,
    hook: &'static str,
    runs_per_s: f64,
    rss_idle_bytes: u64,
    rss_bytes: u64,
    bytes_per_run: u64,
    /// CPU the server used while every run waited and no request came, in % of one core.
    idle_cpu_percent: f64,
    threads: u64,
    open_fds: usize,
    fd_limit: u64,
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<()> {
    let fd_limit = raise_fd_limit()?;
    for runs in sizes() {
        let report = measure(runs, fd_limit).await?;
        println!("{}", serde_json::to_string(&report)?);
    }
    Ok(())
}

/// The Ns: `$PAUSED_RUNS`, else 200 and 1000 with `--quick`, else 1000, 5000 and 10000.
fn sizes() -> Vec<usize> {
    if let Some(n) = std::env::var("PAUSED_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
    {
        return vec![n];
    }
    if std::env::args().any(|a| a == "--quick") {
        vec![200, 1000]
    } else {
        vec![1000, 5000, 10_000]
    }
}

/// Raises the soft limit on open descriptors to the hard one; the new soft limit.
fn raise_fd_limit() -> Result<u64> {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let (_, hard) = getrlimit(Resource::RLIMIT_NOFILE)?;
    setrlimit(Resource::RLIMIT_NOFILE, hard, hard)?;
    Ok(hard)
}

async fn measure(runs: usize, fd_limit: u64) -> Result<Report> {
    let served = Arc::new(Served::start(&[
        ("paused.yaml", AGENT.to_owned()),
        ("paused.jsonl", script()),
    ])?);
    warm_up(&served).await?;
    let pid = served.pid();
    let rss_idle_bytes = rss_bytes(pid)?;
    let start = Instant::now();
    let refused = create(&served, runs).await?;
    let now = paused(&served, runs - refused, start).await;
    let runs_per_s = now.waiting as f64 / start.elapsed().as_secs_f64();
    let alive = (now.waiting + now.running).max(1) as u64;
    tokio::time::sleep(SETTLE).await;
    let rss = rss_bytes(pid)?;
    let cpu = cpu_ticks(pid)?;
    tokio::time::sleep(IDLE_WINDOW).await;
    let used = cpu_ticks(pid)?.saturating_sub(cpu) as f64 / TICKS_PER_S;
    let idle_cpu_percent = used * 100.0 / IDLE_WINDOW.as_secs_f64();
    Ok(Report {
        runs,
        all_waiting: now.running == 0,
        waiting: now.waiting,
        running: now.running,
        ended: now.ended,
        refused,
        hook: "class ReadOnlyGuard on pre_tool_use of write_file",
        runs_per_s: (runs_per_s * 10.0).round() / 10.0,
        rss_idle_bytes,
        rss_bytes: rss,
        bytes_per_run: rss.saturating_sub(rss_idle_bytes) / alive,
        idle_cpu_percent: idle_cpu_percent.round(),
        threads: status_field(pid, "Threads:")?,
        open_fds: open_fds(pid)?,
        fd_limit,
    })
}

/// One run through its approval to its end, so one-time costs fall in the baseline.
async fn warm_up(served: &Served) -> Result<()> {
    let run = served.start_run("paused").await?;
    let mut events = served.events(&run).await?;
    let (waiting, _) = until(&mut events, "approval.waiting").await?;
    let Some(id) = waiting.data["approval_id"].as_str() else {
        bail!("approval.waiting without approval_id: {}", waiting.data);
    };
    served.approve(id).await?;
    until(&mut events, "run.ended").await?;
    tokio::time::sleep(SETTLE).await;
    Ok(())
}

/// Starts `runs` runs, [`CLIENTS`] requests at a time; how many the server refused.
async fn create(served: &Arc<Served>, runs: usize) -> Result<usize> {
    let (next, refused) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let mut clients = tokio::task::JoinSet::new();
    for _ in 0..CLIENTS {
        let (served, next, refused) = (Arc::clone(served), Arc::clone(&next), Arc::clone(&refused));
        clients.spawn(async move {
            while next.fetch_add(1, Ordering::Relaxed) < runs {
                if served.start_run("paused").await.is_err() {
                    refused.fetch_add(1, Ordering::Relaxed);
                }
            }
        });
    }
    while let Some(done) = clients.join_next().await {
        done?;
    }
    Ok(refused.load(Ordering::Relaxed))
}

/// Clock ticks per second of `/proc/PID/stat` (`USER_HZ`, 100 on every Linux ABI).
const TICKS_PER_S: f64 = 100.0;

/// The CPU time process `pid` has used (user and system, all threads), in clock ticks.
fn cpu_ticks(pid: u32) -> Result<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // After the command name, which is in parentheses and may hold spaces.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    // utime and stime: fields 14 and 15 of the line, the 12th and 13th after the name.
    let tick = |n: usize| fields.get(n).and_then(|f| f.parse::<u64>().ok());
    match (tick(11), tick(12)) {
        (Some(user), Some(system)) => Ok(user + system),
        _ => bail!("cannot read the CPU time of {pid}"),
    }
}

/// How the new runs stand.
#[derive(Default)]
struct Progress {
    waiting: usize,
    running: usize,
    ended: usize,
}

/// Reads the server's run counts by status (`tollgate_runs` of `GET /metrics`, counted in its
/// database) until none of the `runs` new ones is `running`, or until [`DEADLINE`] after
/// `start`; how they stand then (the warm-up run aside).
async fn paused(served: &Served, runs: usize, start: Instant) -> Progress {
    let mut last = Progress::default();
    loop {
        // A server out of descriptors may fail a read: the last good one stands, and the
        // deadline ends the retries.
        if let Ok(text) = served.get_text("/metrics", CI).await {
            let count = |status: &str| {
                let series = format!("tollgate_runs{{status=\"{status}\"}} ");
                text.lines()
                    .find_map(|l| l.strip_prefix(series.as_str()))
                    .and_then(|v| v.trim().parse::<f64>().ok())
                    .map_or(0, |v| v as usize)
            };
            let (waiting, running) = (count("waiting"), count("running"));
            let ended = [
                "completed",
                "failed",
                "cancelled",
                "turn_limit",
                "timed_out",
            ]
            .into_iter()
            .map(count)
            .sum::<usize>();
            last = Progress {
                waiting,
                running,
                ended: ended.saturating_sub(1),
            };
            if waiting + running + ended == runs + 1 && running == 0 {
                return last;
            }
        }
        if start.elapsed() > DEADLINE {
            return last;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The agent: one `write_file` call, checked by a class hook, then waiting for an approver.
const AGENT: &str = "name: paused\nmodel: scripted:paused.jsonl\ntools: [write_file]\n\
                     model_config_json:\n  hooks:\n    confirmation_tools: [write_file]\n    \
                     class_hooks:\n      - {class: ReadOnlyGuard, params: {tools: [write_file], \
                     sql_args: [content]}}\n";

fn script() -> String {
    let call: Value = json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c1",
        "type": "function", "function": {"name": "write_file",
        "arguments": {"path": "out.txt", "content": "SELECT 1"}}}]});
    format!(
        "{call}\n{}\n",
        json!({"role": "assistant", "content": "done"})
    )
}
