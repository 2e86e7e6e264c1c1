//! Prints the overhead of an http hook: the median time of dispatching one signed http hook
//! through the dispatcher, over the median time of a bare reqwest POST of the same body to the
//! same loopback receiver, measured alternately in the same run, each side with its own client
//! (and so its own kept-alive connection):
//! `{"iterations":N,"median_hook_us":A,"median_direct_us":B,"ratio":A/B}`.
//!
//! Run with `cargo run --release -p tollgate-handlers --example http_overhead`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::http::StatusCode;
use serde_json::json;
use tokio::net::TcpListener;
use tollgate_core::{Dispatcher, RegistryBuilder};
use tollgate_handlers::HttpHook;
use tollgate_handlers::http::Secret;
use tollgate_protocol::wire::PayloadWire;
use tollgate_protocol::{Event, Payload, PayloadCommon, RunStatus, ToolCall};

const WARM_UP: usize = 50;
const ITERATIONS: usize = 500;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

async fn receiver() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let app = Router::new().fallback(|body: Bytes| async move {
        std::hint::black_box(body);
        StatusCode::NO_CONTENT
    });
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    url
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let url = receiver().await;
    let hook = HttpHook::builder("bench", &url)
        .allow_cidrs(&["127.0.0.0/8".parse().unwrap()])
        .secret(Secret::new(b"bench-secret").unwrap())
        .build()
        .unwrap();
    let mut hooks = RegistryBuilder::new();
    hooks.register(Event::PreToolUse, hook);
    let dispatcher = Dispatcher::new(hooks.build().unwrap());
    let payload = Arc::new(Payload::new(
        PayloadCommon::default(),
        ToolCall {
            tool_name: "sql_execute".into(),
            tool_call_id: "call_1".into(),
            tool_input: json!({"sql": "select * from orders where id = 42"}),
        },
    ));
    let body = serde_json::to_vec(&PayloadWire::from(&*payload)).unwrap();
    let direct = reqwest::Client::builder().no_proxy().build().unwrap();

    let (mut hook_times, mut direct_times) = (Vec::new(), Vec::new());
    for i in 0..WARM_UP + ITERATIONS {
        let start = Instant::now();
        let outcome = dispatcher.dispatch(payload.clone()).await;
        let took = start.elapsed();
        assert_eq!(outcome.runs[0].status, RunStatus::Completed);

        let start = Instant::now();
        let response = direct
            .post(&url)
            .header("content-type", "application/json")
            .body(body.clone())
            .send()
            .await
            .unwrap();
        let status = response.status();
        response.bytes().await.unwrap();
        let direct_took = start.elapsed();
        assert_eq!(status, StatusCode::NO_CONTENT);

        if i >= WARM_UP {
            hook_times.push(took);
            direct_times.push(direct_took);
        }
    }
    let (hook, direct) = (median(hook_times), median(direct_times));
    println!(
        "{{\"iterations\":{ITERATIONS},\"median_hook_us\":{},\"median_direct_us\":{},\"ratio\":{:.3}}}",
        hook.as_micros(),
        direct.as_micros(),
        hook.as_secs_f64() / direct.as_secs_f64()
    );
}
