//! Prints the overhead of a command hook: the median time of dispatching one no-op command hook
//! (`true`) through the dispatcher, over the median time of spawning `/bin/sh -c true` directly
//! with Tokio, measured alternately in the same run:
//! `{"iterations":N,"median_hook_us":A,"median_direct_us":B,"ratio":A/B,
//!   "median_direct_bash_us":C,"ratio_same_shell":A/C}`.
//!
//! Command hooks run under `/bin/bash` (the dialect the analyzer vets; see the command module
//! docs), which starts slower than dash, `/bin/sh` on Debian: `ratio_same_shell` compares with
//! spawning the same shell directly, so it shows tollgate's own overhead.
//!
//! Run with `cargo run --release -p tollgate-handlers --example command_overhead`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tollgate_core::{Dispatcher, RegistryBuilder};
use tollgate_handlers::CommandHook;
use tollgate_protocol::{Event, HookSource, Payload, PayloadCommon, RunStatus, ToolCall};

const ITERATIONS: usize = 300;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut hooks = RegistryBuilder::new();
    hooks.register(
        Event::PreToolUse,
        CommandHook::new("noop", "true", HookSource::AdminConfig),
    );
    let dispatcher = Dispatcher::new(hooks.build().unwrap());
    let payload = Arc::new(Payload::new(
        PayloadCommon::default(),
        ToolCall {
            tool_name: "bash_code_execute_tool".into(),
            tool_call_id: "call_1".into(),
            tool_input: json!({"command": "ls -la"}),
        },
    ));
    let (mut hook, mut direct, mut direct_bash) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ITERATIONS {
        let start = Instant::now();
        let outcome = dispatcher.dispatch(payload.clone()).await;
        hook.push(start.elapsed());
        assert_eq!(outcome.runs[0].status, RunStatus::Completed);

        let start = Instant::now();
        let status = tokio::process::Command::new("/bin/sh")
            .args(["-c", "true"])
            .status()
            .await
            .unwrap();
        direct.push(start.elapsed());
        assert!(status.success());

        let start = Instant::now();
        let status = tokio::process::Command::new("/bin/bash")
            .args(["-c", "true"])
            .status()
            .await
            .unwrap();
        direct_bash.push(start.elapsed());
        assert!(status.success());
    }
    let (hook, direct, bash) = (median(hook), median(direct), median(direct_bash));
    println!(
        "{{\"iterations\":{ITERATIONS},\"median_hook_us\":{},\"median_direct_us\":{},\"ratio\":{:.3},\"median_direct_bash_us\":{},\"ratio_same_shell\":{:.3}}}",
        hook.as_micros(),
        direct.as_micros(),
        hook.as_secs_f64() / direct.as_secs_f64(),
        bash.as_micros(),
        hook.as_secs_f64() / bash.as_secs_f64()
    );
}
