//! The HTTP server every stand-in runs: one thread, one runtime, one catch-all handler that
//! records the request and lets the service's wire module answer it.

use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::JoinHandle;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, Method, Uri};
use axum::response::Response;
use tokio::sync::oneshot;

use crate::recorder::{RecordedRequest, Recorder};
use crate::script::Script;
use crate::{Error, Result};

/// Request bodies up to this size are read (a long conversation resent whole).
const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;

/// One service's wire format.
pub(crate) trait Wire: Send + Sync + 'static {
    /// Answers `request`, the `number`th the server received (from 1), from `script`.
    fn answer(&self, script: &Script, request: &RecordedRequest, number: u64) -> Response;
}

struct Shared {
    wire: Box<dyn Wire>,
    script: Script,
    recorder: Recorder,
    received: AtomicU64,
}

/// A running stand-in: an HTTP server on `127.0.0.1` and the requests it recorded.
///
/// Dropping it stops the server (open connections are closed) and joins its thread.
#[derive(Debug)]
pub struct StandIn {
    addr: SocketAddr,
    recorder: Recorder,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl StandIn {
    /// Binds an ephemeral loopback port and serves `wire` from `script` on a new thread.
    pub(crate) fn start(wire: impl Wire, script: Script) -> Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).map_err(Error::Bind)?;
        listener.set_nonblocking(true).map_err(Error::Bind)?;
        let addr = listener.local_addr().map_err(Error::Bind)?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .map_err(Error::Start)?;
        let recorder = Recorder::default();
        let shared = Arc::new(Shared {
            wire: Box::new(wire),
            script,
            recorder: recorder.clone(),
            received: AtomicU64::new(0),
        });
        let (stop, stopped) = oneshot::channel();
        let thread = std::thread::Builder::new()
            .name(format!("standin-{}", addr.port()))
            .spawn(move || runtime.block_on(serve(listener, shared, stopped)))
            .map_err(Error::Start)?;
        Ok(Self {
            addr,
            recorder,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`, without a trailing slash.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request received so far, oldest first.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.recorder.snapshot()
    }
}

impl Drop for StandIn {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn serve(listener: TcpListener, shared: Arc<Shared>, stopped: oneshot::Receiver<()>) {
    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
        return;
    };
    let app = Router::new()
        .fallback(handle)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(shared);
    // Leaving `select!` drops the server and, with the runtime, every open connection.
    tokio::select! {
        _ = axum::serve(listener, app) => {}
        _ = stopped => {}
    }
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let number = shared.received.fetch_add(1, Ordering::SeqCst) + 1;
    let mut request = RecordedRequest {
        method: method.to_string(),
        path: uri.path().to_owned(),
        query: uri.query().map(str::to_owned),
        headers: headers
            .iter()
            .map(|(name, value)| {
                let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
                (name.as_str().to_owned(), value)
            })
            .collect(),
        body: String::from_utf8_lossy(&body).into_owned(),
        json: serde_json::from_slice(&body).ok(),
        status: 0,
    };
    let response = shared.wire.answer(&shared.script, &request, number);
    request.status = response.status().as_u16();
    shared.recorder.push(request);
    if let Some(Hold(duration)) = response.extensions().get::<Hold>().copied() {
        // Done and recorded, but the caller hears nothing yet (a reply in flight).
        tokio::time::sleep(duration).await;
    }
    response
}

/// A response extension: the request was handled, but its answer leaves only after this long.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Hold(pub(crate) std::time::Duration);
