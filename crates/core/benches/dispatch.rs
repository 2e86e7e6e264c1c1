//! Criterion bench of one `pre_tool_use` dispatch through 100 no-op function hooks.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use criterion::{Criterion, criterion_group, criterion_main};

#[path = "setup.rs"]
mod setup;

fn dispatch(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    for (matching, tool) in [
        (10, "bash_code_execute_tool"),
        (0, "bash_code_execute_tool"),
    ] {
        let dispatcher = setup::dispatcher(100, matching);
        let payload = setup::payload(tool);
        c.bench_function(
            &format!("pre_tool_use/100_hooks/{matching}_matching"),
            |b| b.iter(|| runtime.block_on(dispatcher.dispatch(payload.clone()))),
        );
    }
}

criterion_group!(benches, dispatch);
criterion_main!(benches);
