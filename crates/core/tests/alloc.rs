//! Allocation bounds: a dispatch in which no hook runs allocates nothing, one through hooks that
//! answer at once allocates only its run list, and truncating a payload costs memory
//! proportional to what it keeps, not to how much of it needs escaping.
//!
//! This is its own test binary (not part of `tests/it`) because counting allocations needs a
//! global allocator, which would otherwise count every other test too. It has no libtest
//! harness (`harness = false`): dhat counts every thread's allocations, and the harness
//! allocates on its own threads when a test ends, so the checks run one after the other on the
//! main thread with nothing else running.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use serde_json::json;
use tollgate_core::truncate::{HOOK_PAYLOAD_MAX_BYTES, truncate_payload};
use tollgate_core::{Dispatcher, HookOptions, RegistryBuilder, ToolMatcher, hook_fn};

use setup::Path;
use tollgate_protocol::{Event, Outcome};

#[path = "../benches/setup.rs"]
mod setup;

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

fn main() {
    let checks: [(&str, fn()); 5] = [
        (
            "dispatch_with_no_matching_hook_allocates_nothing",
            dispatch_with_no_matching_hook_allocates_nothing,
        ),
        (
            "hooks_whose_matcher_declines_allocate_nothing",
            hooks_whose_matcher_declines_allocate_nothing,
        ),
        (
            "ten_hooks_answered_at_once_allocate_only_the_run_list",
            ten_hooks_answered_at_once_allocate_only_the_run_list,
        ),
        (
            "ten_async_hooks_allocate_a_future_each_and_the_run_list",
            ten_async_hooks_allocate_a_future_each_and_the_run_list,
        ),
        (
            "truncating_escape_heavy_strings_costs_less_memory_than_the_input",
            truncating_escape_heavy_strings_costs_less_memory_than_the_input,
        ),
    ];
    for (name, check) in checks {
        check();
        println!("test {name} ... ok");
    }
    println!("{} passed, 0 failed", checks.len());
}

/// Heap blocks allocated per dispatch of a `bash_code_execute_tool` call through 100 hooks of
/// which 10 match, written as `path` says (after one warm-up dispatch).
fn blocks_per_matching_dispatch(path: Path) -> u64 {
    let _profiler = dhat::Profiler::builder().testing().build();
    let dispatcher = setup::dispatcher_on(path, 100, 10);
    let matched = setup::payload("bash_code_execute_tool");
    poll_to_completion(dispatcher.dispatch(matched.clone()));
    let before = dhat::HeapStats::get();
    for _ in 0..100 {
        let outcome = poll_to_completion(dispatcher.dispatch(matched.clone()));
        assert_eq!(outcome.runs.len(), 10);
    }
    (dhat::HeapStats::get().total_blocks - before.total_blocks) / 100
}

fn poll_to_completion<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
    }
}

fn dispatch_with_no_matching_hook_allocates_nothing() {
    let _profiler = dhat::Profiler::builder().testing().build();
    let dispatcher = setup::dispatcher(100, 10);
    let unmatched = setup::payload("sql_query");
    let matched = setup::payload("bash_code_execute_tool");
    // Warm up once, so one-time lazy initialisation is not counted.
    poll_to_completion(dispatcher.dispatch(unmatched.clone()));

    let before = dhat::HeapStats::get();
    for _ in 0..100 {
        let outcome = poll_to_completion(dispatcher.dispatch(unmatched.clone()));
        assert!(outcome.runs.is_empty());
    }
    let after = dhat::HeapStats::get();
    assert_eq!(
        after.total_blocks, before.total_blocks,
        "allocations on the no-match path"
    );

    // The counter does count: the matching path allocates (boxed hook futures, records).
    let outcome = poll_to_completion(dispatcher.dispatch(matched));
    assert_eq!(outcome.runs.len(), 10);
    assert!(dhat::HeapStats::get().total_blocks > after.total_blocks);
}

fn hooks_whose_matcher_declines_allocate_nothing() {
    let _profiler = dhat::Profiler::builder().testing().build();
    let mut hooks = RegistryBuilder::new();
    for i in 0..5 {
        let hook =
            hook_fn(format!("declines-{i}"), |_| async { Ok(Outcome::allow()) }).when(|_| false);
        hooks.register(Event::PreToolUse, hook);
        let hook = hook_fn(format!("end-{i}"), |_| async { Ok(Outcome::allow()) }).when(|_| false);
        hooks.register(Event::SessionEnd, hook);
    }
    let only_sql = HookOptions::default().tools(ToolMatcher::one("sql_*").unwrap());
    hooks.register_with(
        Event::PreToolUse,
        hook_fn("sql", |_| async { Ok(Outcome::allow()) }),
        only_sql,
    );
    let dispatcher = Dispatcher::new(hooks.build().unwrap());
    let call = setup::payload("bash_code_execute_tool");
    let end = std::sync::Arc::new(tollgate_protocol::Payload::new(
        Default::default(),
        tollgate_protocol::SessionEnd {
            status: tollgate_protocol::SessionEndStatus::Completed,
            error: None,
            answer: None,
            continued: 0,
        },
    ));
    poll_to_completion(dispatcher.dispatch(call.clone()));

    let before = dhat::HeapStats::get();
    for _ in 0..10 {
        assert!(
            poll_to_completion(dispatcher.dispatch(call.clone()))
                .runs
                .is_empty()
        );
        assert!(
            poll_to_completion(dispatcher.dispatch(end.clone()))
                .runs
                .is_empty()
        );
    }
    assert_eq!(dhat::HeapStats::get().total_blocks, before.total_blocks);
}

fn ten_hooks_answered_at_once_allocate_only_the_run_list() {
    // One block: the list of ten run records. (Hooks written with `hook_fn` allocate eleven,
    // as every hook did before `hook_sync`.)
    assert_eq!(blocks_per_matching_dispatch(Path::Sync), 1);
}

fn ten_async_hooks_allocate_a_future_each_and_the_run_list() {
    assert_eq!(blocks_per_matching_dispatch(Path::Async), 11);
}

fn truncating_escape_heavy_strings_costs_less_memory_than_the_input() {
    let input_bytes = 8 << 20;
    let payload = json!({"event": "post_tool_use", "tool_result": "\"".repeat(input_bytes)});
    let _profiler = dhat::Profiler::builder().testing().build();
    let truncated = truncate_payload(&payload, HOOK_PAYLOAD_MAX_BYTES);
    assert!(serde_json::to_string(&*truncated).unwrap().len() <= HOOK_PAYLOAD_MAX_BYTES);
    let peak = dhat::HeapStats::get().max_bytes;
    assert!(
        peak < input_bytes,
        "peak {peak} bytes to truncate {input_bytes} bytes of quotes"
    );
}
