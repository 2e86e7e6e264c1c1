//! One registry per run: 1,000 concurrent runs never see each other's events, and every run's
//! hooks are dropped when its run ends.

use std::sync::{Arc, Mutex, Weak};

use serde_json::json;
use tollgate_core::{Dispatcher, RegistryBuilder, hook_fn};
use tollgate_protocol::{Event, Outcome, Payload};

use crate::support::{call, common};

/// What one run's hook saw.
struct Seen {
    run_ids: Mutex<Vec<String>>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_thousand_concurrent_runs_stay_isolated_and_drop_their_hooks() {
    let mut tasks = Vec::new();
    for n in 0..1000 {
        tasks.push(tokio::spawn(async move {
            let run_id = format!("run-{n}");
            let seen = Arc::new(Seen {
                run_ids: Mutex::new(Vec::new()),
            });
            let hook_state = seen.clone();
            let mut hooks = RegistryBuilder::new();
            hooks.register(
                Event::PreToolUse,
                hook_fn(format!("recorder-{n}"), move |ctx| {
                    hook_state
                        .run_ids
                        .lock()
                        .unwrap()
                        .push(ctx.payload().common.run_id.clone());
                    async {
                        tokio::task::yield_now().await;
                        Ok(Outcome::allow())
                    }
                }),
            );
            let dispatcher = Dispatcher::new(hooks.build().unwrap());
            for step in 0..3 {
                let payload = Payload::new(common(&run_id), call("bash", json!({"step": step})));
                dispatcher.dispatch(Arc::new(payload)).await;
                tokio::task::yield_now().await;
            }
            let weak: Weak<Seen> = Arc::downgrade(&seen);
            drop(dispatcher); // the run ends
            let seen = Arc::into_inner(seen).map(|s| s.run_ids.into_inner().unwrap());
            (run_id, seen, weak)
        }));
    }
    for task in tasks {
        let (run_id, seen, weak) = task.await.unwrap();
        let seen = seen.expect("the run's hook still held its state after the run ended");
        assert_eq!(
            seen,
            vec![run_id.clone(); 3],
            "{run_id} saw another run's events"
        );
        assert!(
            weak.upgrade().is_none(),
            "{run_id}: hook state outlived the run"
        );
    }
}
