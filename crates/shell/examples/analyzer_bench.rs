//! Prints one JSON line with the analyzer's throughput over the test corpus
//! (`tests/corpus.txt`) on one thread: `{"commands":N,"commands_per_sec":X}`.
//!
//! Run with `cargo run --release -p tollgate-shell --example analyzer_bench`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

use tollgate_shell::{Profile, analyze};

#[path = "../benches/corpus.rs"]
mod corpus;

/// Passes over the corpus; `ANALYZER_BENCH_PASSES` overrides (for profiling runs).
fn passes() -> u32 {
    std::env::var("ANALYZER_BENCH_PASSES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(200)
}

fn main() {
    let commands = corpus::commands();
    let passes = passes();
    for command in &commands {
        std::hint::black_box(analyze(command, Profile::External));
    }
    let start = Instant::now();
    for _ in 0..passes {
        for command in &commands {
            std::hint::black_box(analyze(std::hint::black_box(command), Profile::External));
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    let total = f64::from(passes) * commands.len() as f64;
    println!(
        "{{\"commands\":{},\"commands_per_sec\":{:.0}}}",
        commands.len(),
        total / seconds
    );
}
