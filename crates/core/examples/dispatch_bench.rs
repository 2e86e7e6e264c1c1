//! Prints the cost of a `pre_tool_use` dispatch through 100 registered no-op function hooks of
//! which 10 match the tool, one JSON line per way of writing the hooks:
//! `{"hooks":100,"matching":10,"path":"hook_fn","ns_per_dispatch":N}` for async closures
//! (`hook_fn`, a boxed future per run: how any hook that awaits runs) and the same with
//! `"path":"hook_sync"` for closures that answer at once (`hook_sync`, served without a future).
//!
//! Run with `cargo run --release -p tollgate-core --example dispatch_bench`.
//!
//! After a warmup, the iterations are timed in [`BATCHES`] batches and the median batch is
//! reported, so that a burst of load from other processes moves the figure less.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

#[path = "../benches/setup.rs"]
mod setup;

use setup::Path;

const HOOKS: usize = 100;
const MATCHING: usize = 10;
/// Timed batches; the median is reported.
const BATCHES: u32 = 21;
/// Measured iterations per path, over all batches; `DISPATCH_BENCH_ITERATIONS` overrides (for
/// profiling runs, as does `DISPATCH_BENCH_PATH=hook_fn|hook_sync` to measure one path).
fn iterations() -> u32 {
    std::env::var("DISPATCH_BENCH_ITERATIONS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(210_000)
        .max(BATCHES)
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let only = std::env::var("DISPATCH_BENCH_PATH").ok();
    for path in [Path::Async, Path::Sync] {
        if only.as_deref().is_some_and(|only| only != path.label()) {
            continue;
        }
        let ns = runtime.block_on(median_ns(path));
        println!(
            "{{\"hooks\":{HOOKS},\"matching\":{MATCHING},\"path\":\"{}\",\"ns_per_dispatch\":{ns}}}",
            path.label()
        );
    }
}

/// The median batch's time per dispatch, in nanoseconds.
async fn median_ns(path: Path) -> u128 {
    let dispatcher = setup::dispatcher_on(path, HOOKS, MATCHING);
    let payload = setup::payload("bash_code_execute_tool");
    let iterations = iterations();
    let check = dispatcher.dispatch(payload.clone()).await;
    assert_eq!(
        check.runs.len(),
        MATCHING,
        "the setup must match exactly {MATCHING} hooks"
    );
    for _ in 0..iterations / 10 {
        std::hint::black_box(dispatcher.dispatch(payload.clone()).await);
    }
    let per_batch = iterations / BATCHES;
    let mut batches = Vec::new();
    for _ in 0..BATCHES {
        let start = Instant::now();
        for _ in 0..per_batch {
            std::hint::black_box(dispatcher.dispatch(payload.clone()).await);
        }
        batches.push(start.elapsed().as_nanos() / u128::from(per_batch));
    }
    batches.sort_unstable();
    batches[batches.len() / 2]
}
