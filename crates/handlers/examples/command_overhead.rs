//! Prints what a command hook costs: the median time of dispatching one no-op command hook
//! (`true`) through the dispatcher inside the OS sandbox and unconfined, against spawning
//! `/bin/bash -c true` directly with Tokio, measured alternately in the same run:
//!
//! ```text
//! {"iterations":N,"median_bash_us":B,"median_hook_unconfined_us":U,"median_hook_sandboxed_us":S,
//!  "ratio_sandboxed":S/B,"ratio_unconfined":U/B,"sandboxed_over_unconfined":S/U,
//!  "sandbox_start_us":F,"target_ratio_sandboxed":1.5}
//! ```
//!
//! The sandbox is built once per hook (its first run, `sandbox_start_us`, not in the medians);
//! each run after that starts the shell in the sandbox's existing namespaces, in a PID
//! namespace of its own.
//!
//! This program is its own sandbox launcher. Run with
//! `cargo run --release -p tollgate-handlers --example command_overhead`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tollgate_core::{Dispatcher, RegistryBuilder};
use tollgate_handlers::CommandHook;
use tollgate_handlers::command::Containment;
use tollgate_protocol::{Event, HookSource, Payload, PayloadCommon, RunStatus, ToolCall};
use tollgate_sandbox::Launcher;

const ITERATIONS: usize = 300;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn dispatcher(hook: CommandHook) -> Dispatcher {
    let mut hooks = RegistryBuilder::new();
    hooks.register(Event::PreToolUse, hook);
    Dispatcher::new(hooks.build().unwrap())
}

async fn timed(dispatcher: &Dispatcher, payload: &Arc<Payload>) -> Duration {
    let start = Instant::now();
    let outcome = dispatcher.dispatch(payload.clone()).await;
    let took = start.elapsed();
    assert_eq!(
        outcome.runs[0].status,
        RunStatus::Completed,
        "{:?}",
        outcome.runs
    );
    took
}

async fn bash() -> Duration {
    let start = Instant::now();
    let status = tokio::process::Command::new("/bin/bash")
        .args(["-c", "true"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .await
        .unwrap();
    assert!(status.success());
    start.elapsed()
}

async fn measure() {
    let sandboxed = dispatcher(
        CommandHook::new("noop", "true", HookSource::Skill)
            .with_launcher(Launcher::current_exe().unwrap()),
    );
    let unconfined = dispatcher(
        CommandHook::new("noop", "true", HookSource::AdminConfig)
            .with_containment(Containment::Off),
    );
    let payload = Arc::new(Payload::new(
        PayloadCommon::default(),
        ToolCall {
            tool_name: "bash_code_execute_tool".into(),
            tool_call_id: "call_1".into(),
            tool_input: json!({"command": "ls -la"}),
        },
    ));
    let first = timed(&sandboxed, &payload).await;
    let (mut boxed, mut open, mut direct) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ITERATIONS {
        boxed.push(timed(&sandboxed, &payload).await);
        open.push(timed(&unconfined, &payload).await);
        direct.push(bash().await);
    }
    let (boxed, open, direct) = (median(boxed), median(open), median(direct));
    println!(
        "{{\"iterations\":{ITERATIONS},\"median_bash_us\":{},\"median_hook_unconfined_us\":{},\
         \"median_hook_sandboxed_us\":{},\"ratio_sandboxed\":{:.3},\"ratio_unconfined\":{:.3},\
         \"sandboxed_over_unconfined\":{:.3},\"sandbox_start_us\":{},\"target_ratio_sandboxed\":1.5}}",
        direct.as_micros(),
        open.as_micros(),
        boxed.as_micros(),
        boxed.as_secs_f64() / direct.as_secs_f64(),
        open.as_secs_f64() / direct.as_secs_f64(),
        boxed.as_secs_f64() / open.as_secs_f64(),
        first.as_micros(),
    );
}

fn main() -> ExitCode {
    if let Some(code) = tollgate_sandbox::main_if_launcher() {
        return code;
    }
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(measure());
    ExitCode::SUCCESS
}
