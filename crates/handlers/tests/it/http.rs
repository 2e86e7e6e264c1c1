//! HTTP hooks against real axum receivers on 127.0.0.1, through the real dispatcher.
//!
//! Only loopback receivers are ever contacted: tests that name other addresses expect them to
//! be refused before any traffic, or never followed.

mod claude;
mod detached;
mod responses;
mod signing;
mod ssrf;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use ipnet::IpNet;
use serde_json::json;
use tokio::net::TcpListener;
use tollgate_core::{DispatchOutcome, Dispatcher, HookOptions, RegistryBuilder};
use tollgate_handlers::HttpHook;
use tollgate_protocol::{Payload, PayloadCommon, SessionEnd, SessionEndStatus, ToolCall};

/// One request as the receiver got it.
#[derive(Clone, Debug)]
struct Seen {
    headers: HeaderMap,
    body: Bytes,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// An axum server on 127.0.0.1 that records every request and answers with `reply`.
struct Receiver {
    addr: SocketAddr,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Receiver {
    async fn start<F, Fut>(reply: F) -> Self
    where
        F: Fn(Seen) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = Response> + Send + 'static,
    {
        Self::on(TcpListener::bind("127.0.0.1:0").await.unwrap(), reply)
    }

    fn on<F, Fut>(listener: TcpListener, reply: F) -> Self
    where
        F: Fn(Seen) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = Response> + Send + 'static,
    {
        let addr = listener.local_addr().unwrap();
        let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
        let log = seen.clone();
        let handler = move |headers: HeaderMap, body: Bytes| {
            let (log, reply) = (log.clone(), reply.clone());
            async move {
                let request = Seen { headers, body };
                log.lock().unwrap().push(request.clone());
                reply(request).await
            }
        };
        let app = Router::new().fallback(handler);
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Self { addr, seen }
    }

    /// Answers every request with `status` and `body`.
    async fn replying(status: u16, body: &'static str) -> Self {
        let status = StatusCode::from_u16(status).unwrap();
        Self::start(move |_| async move { (status, body).into_response() }).await
    }

    fn url(&self) -> String {
        format!("http://{}/hook", self.addr)
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    fn hits(&self) -> usize {
        self.seen.lock().unwrap().len()
    }
}

/// The allow-list tests use to reach their receivers.
fn loopback() -> Vec<IpNet> {
    vec!["127.0.0.0/8".parse().unwrap()]
}

fn common() -> PayloadCommon {
    PayloadCommon {
        session_id: "s1".into(),
        run_id: "r1".into(),
        trace_id: "t1".into(),
        agent_id: "a1".into(),
        ..Default::default()
    }
}

fn tool_call() -> Arc<Payload> {
    Arc::new(Payload::new(
        common(),
        ToolCall {
            tool_name: "sql_execute".into(),
            tool_call_id: "call_1".into(),
            tool_input: json!({"sql": "select 1"}),
        },
    ))
}

fn session_end() -> Arc<Payload> {
    Arc::new(Payload::new(
        common(),
        SessionEnd {
            status: SessionEndStatus::Completed,
            error: None,
            answer: None,
            continued: 0,
        },
    ))
}

/// A hook posting to `url`, allowed to reach loopback.
fn hook(url: &str) -> HttpHook {
    HttpHook::new("webhook", url, &loopback()).unwrap()
}

async fn dispatch(hook: HttpHook, options: HookOptions, payload: Arc<Payload>) -> DispatchOutcome {
    let mut registry = RegistryBuilder::new();
    registry.register_with(payload.event(), hook, options);
    Dispatcher::new(registry.build().unwrap())
        .dispatch(payload)
        .await
}

async fn dispatch_one(hook: HttpHook) -> DispatchOutcome {
    dispatch(hook, HookOptions::default(), tool_call()).await
}
