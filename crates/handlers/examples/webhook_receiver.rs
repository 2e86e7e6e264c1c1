//! A webhook receiver for tollgate's http hooks that verifies `X-Webhook-Signature` over the
//! raw body and prints each verified delivery as one JSON line.
//!
//! ```sh
//! # Self-contained demo: starts the receiver on 127.0.0.1, sends it one signed delivery from an
//! # http hook through the dispatcher, prints what the receiver saw, and exits.
//! cargo run -p tollgate-handlers --example webhook_receiver
//!
//! # Serve until interrupted, with the key from HOOK_SECRET (the variable the hook's
//! # `secret: ${HOOK_SECRET}` names):
//! HOOK_SECRET=s3cret cargo run -p tollgate-handlers --example webhook_receiver -- --serve 127.0.0.1:8787
//! ```
//!
//! The receiver answers `204 No Content` (no opinion) to a verified delivery and `401` to any
//! other request; a real receiver could answer an outcome instead, such as
//! `{"decision":"deny","reason":"…"}`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::SystemTime;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tollgate_core::{Dispatcher, RegistryBuilder};
use tollgate_handlers::HttpHook;
use tollgate_handlers::http::{
    DEFAULT_TOLERANCE, EVENT_HEADER, ID_HEADER, SIGNATURE_HEADER, Secret, verify_signature,
};
use tollgate_protocol::{Event, Payload, PayloadCommon, SessionEnd, SessionEndStatus};

/// The receiver's copy of the shared key.
struct Key(Vec<u8>);

async fn receive(State(key): State<Arc<Key>>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    };
    let signature = header(SIGNATURE_HEADER);
    // Verify the bytes as received, before parsing: re-serialized JSON would not match.
    if let Err(error) = verify_signature(
        &key.0,
        signature,
        &body,
        SystemTime::now(),
        DEFAULT_TOLERANCE,
    ) {
        eprintln!("rejected: {error}");
        return StatusCode::UNAUTHORIZED;
    }
    let payload: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let line = json!({"verified": true, "id": header(ID_HEADER), "event": header(EVENT_HEADER), "payload": payload});
    println!("{line}");
    StatusCode::NO_CONTENT
}

async fn serve(listener: TcpListener, key: Vec<u8>) {
    let app = Router::new()
        .fallback(receive)
        .with_state(Arc::new(Key(key)));
    axum::serve(listener, app).await.unwrap();
}

/// Starts the receiver on a free loopback port and sends it one signed delivery.
async fn demo() {
    let key = b"demo-secret".to_vec();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/tollgate", listener.local_addr().unwrap());
    tokio::spawn(serve(listener, key.clone()));

    // Loopback is refused by default; only trusted config may allow it, as here.
    let hook = HttpHook::builder("session-end", &url)
        .allow_cidrs(&["127.0.0.0/8".parse().unwrap()])
        .secret(Secret::new(&key).unwrap())
        .build()
        .unwrap();
    let mut hooks = RegistryBuilder::new();
    hooks.register(Event::SessionEnd, hook);
    let dispatcher = Dispatcher::new(hooks.build().unwrap());
    let payload = Payload::new(
        PayloadCommon {
            session_id: "demo".into(),
            ..Default::default()
        },
        SessionEnd {
            status: SessionEndStatus::Completed,
            error: None,
            answer: None,
            continued: 0,
        },
    );
    let outcome = dispatcher.dispatch(Arc::new(payload)).await;
    let run =
        serde_json::to_string(&outcome.runs.get(0).unwrap().to_wire(&Event::SessionEnd)).unwrap();
    eprintln!("hook run: {run}");
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => demo().await,
        [flag, addr] if flag == "--serve" => {
            let key = std::env::var("HOOK_SECRET").unwrap_or_default();
            assert!(!key.is_empty(), "set HOOK_SECRET to the hook's secret");
            let listener = TcpListener::bind(addr).await.unwrap();
            eprintln!("listening on http://{}", listener.local_addr().unwrap());
            serve(listener, key.into_bytes()).await;
        }
        _ => eprintln!("usage: webhook_receiver [--serve ADDR]"),
    }
}
