//! A dispatch in which no hook matches allocates nothing.
//!
//! This is its own test binary (not part of `tests/it`) because counting allocations needs a
//! global allocator, which would otherwise count every other test too.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

#[path = "../benches/setup.rs"]
mod setup;

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

fn poll_to_completion<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
    }
}

#[test]
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
