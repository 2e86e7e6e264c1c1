//! tollgate's HTTP server: the approvals API over the confirmation store.
//!
//! One [`AppState`] (the store, the tokens, the configuration) and one router built by
//! [`router`]; [`serve`] runs it on a listener until a shutdown signal. Routes:
//!
//! ```text
//! GET  /healthz                        no token; 200 {"status":"ok"} or 503
//! GET  /v1/approvals?status=…          approver/admin → {requests}
//! POST /v1/approvals                   runner/admin, {agent, session_id, tool_name,
//!                                      tool_use_id, arguments, …} → 201 or 200 {request, attached}
//! GET  /v1/approvals/{id}?wait=S       approver/admin, or the runner that filed it
//!                                      → {request, history} (a long poll with `wait`)
//! POST /v1/approvals/{id}/approve      approver/admin, {note?, edit?} → {request}
//! POST /v1/approvals/{id}/reject       approver/admin, {note?} → {request}
//! POST /v1/runs                        runner/admin, {agent, prompt, skills?, model?, metadata?}
//!                                      → 201 {run_id, events_url}
//! GET  /v1/runs, /v1/runs/{id}         any token → the runs in the database
//! POST /v1/runs/{id}/cancel            runner/admin
//! GET  /v1/runs/{id}/events            any token → Server-Sent Events, one per trace step
//! GET  /metrics                        any token → Prometheus text (the `metrics` module)
//! GET  /v1/openapi.json                no token; the OpenAPI document of these routes
//! POST /v1/channels/feishu/callback    no token, signed by Feishu/Lark: a card click or the
//!                                      URL check → toast and card, or {"challenge"}
//! POST /v1/channels/slack/interactions no token, signed by Slack: a click → empty 200
//! GET  /approvals                      the web page for people (session cookie; see below)
//! ```
//!
//! Every error is `{"error": KIND, "message": TEXT}` ([`wire::ErrorBody`]): 400 a bad body or
//! query, 401 no or an unknown token (with `WWW-Authenticate: Bearer`), 403 a token without
//! the role or not among the request's approvers, 404, 405, 409 already decided (with
//! `status`, `by`, `at`), 413 a body over [`MAX_BODY_BYTES`], 415, 500 the database failed,
//! 503 a request that took longer than [`REQUEST_TIMEOUT`].
//!
//! The page (`/approvals`, its sign-in and its forms) answers HTML, never JSON; its sign-in,
//! cookie and CSRF rules are in the `web` module's docs and the project's `docs/server.md`.
//!
//! Handlers stay thin: the rules (who may decide, one decision wins, late decisions refused)
//! live in [`tollgate_approval::Store`].

mod approvals;
mod auth;
mod body;
mod channels;
mod config;
mod error;
mod listen;
pub mod metrics;
mod openapi;
pub mod runs;
mod web;
pub mod wire;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use tokio::net::TcpListener;
use tollgate_approval::Store;
use tower_http::compression::CompressionLayer;
use tower_http::trace::{DefaultMakeSpan, DefaultOnResponse, TraceLayer};

pub use approvals::CHANNEL;
pub use auth::{Approver, Caller, MIN_TOKEN_LEN, Role, Token, Tokens};
pub use body::MAX_BODY_BYTES;
pub use config::{DEFAULT_APPROVAL_TIMEOUT, DEFAULT_LISTEN, ServerConfig};
pub use error::{ApiError, ConfigError, Result};
pub use listen::HEADER_READ_TIMEOUT;
pub use openapi::openapi;
pub use web::{SESSION_TTL, Sessions, WEB_CHANNEL};

/// Longest an API request may take, body included; then it is answered 503 `timeout`.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// What every handler shares. Cheap to clone.
#[derive(Debug, Clone)]
pub struct AppState {
    /// The confirmation store.
    pub store: Store,
    /// Who may call the API.
    pub tokens: Arc<Tokens>,
    /// The configuration the server started with.
    pub config: Arc<ServerConfig>,
    /// The runs started through this server process.
    pub runs: Arc<runs::Runs>,
    /// Browsers signed in to the approvals page.
    pub sessions: Arc<Sessions>,
    /// Where runs' trace lines go (the database, then their watchers).
    journal: runs::Journal,
    /// The address [`serve`] listens on (with `listen: …:0`, the port the system chose).
    bound: Arc<std::sync::OnceLock<std::net::SocketAddr>>,
    /// What `GET /metrics` shows; this server's own, not shared with others in the process.
    pub metrics: Arc<crate::metrics::Metrics>,
    /// The approval channels (Feishu/Lark, Slack) and their sender; runs under [`serve`].
    pub hub: tollgate_approval::channel::Hub,
}

impl AppState {
    /// The state of a server with `config`, over `store`. Starts the task that writes runs'
    /// journals, so it must be called inside a Tokio runtime.
    pub fn new(config: ServerConfig, store: Store) -> Self {
        let runs: Arc<runs::Runs> = Arc::default();
        Self {
            journal: runs::Journal::start(store.clone(), Arc::clone(&runs)),
            hub: channels::hub(&config, &store),
            store,
            tokens: Arc::new(config.tokens.clone()),
            config: Arc::new(config),
            runs,
            sessions: Arc::new(Sessions::new(SESSION_TTL)),
            metrics: Arc::default(),
            bound: Arc::default(),
        }
    }
}

/// The server's routes over `state`. Routes added later (runs, streams) merge in here; a
/// long-lived stream must sit outside the request timeout, which only wraps the API routes.
pub fn router(state: AppState) -> Router {
    let api = Router::new()
        .route(
            "/v1/approvals",
            get(approvals::list).post(approvals::file::file),
        )
        .route("/v1/approvals/{id}", get(approvals::show))
        .route("/v1/approvals/{id}/approve", post(approvals::approve))
        .route("/v1/approvals/{id}/reject", post(approvals::reject))
        .route("/v1/runs", post(runs::create).get(runs::list))
        .route("/v1/runs/{id}", get(runs::show))
        .route("/v1/runs/{id}/cancel", post(runs::cancel))
        .route("/metrics", get(metrics::scrape))
        .merge(web::routes(&state))
        .layer(middleware::from_fn(timeout))
        // Lists of requests and runs, and the page, shrink well; the event stream is never
        // compressed (the default predicate skips `text/event-stream`), nor are small bodies.
        .layer(CompressionLayer::new());
    Router::new()
        .route("/healthz", get(healthz))
        .route("/v1/openapi.json", get(openapi::document))
        // Signed by the platforms, not by a bearer token; each answers within its window.
        .merge(channels::routes())
        // A stream lasts as long as its run: outside the request timeout.
        .route("/v1/runs/{id}/events", get(runs::events))
        .merge(api)
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(
            // One INFO line per request: method, path, status, latency; never a header.
            TraceLayer::new_for_http()
                .make_span_with(DefaultMakeSpan::new().level(tracing::Level::INFO))
                .on_response(DefaultOnResponse::new().level(tracing::Level::INFO)),
        )
        .with_state(state)
}

/// Serves [`router`] on `listener` until `shutdown` completes; then stops accepting, ends the
/// event streams (clients reconnect with `Last-Event-ID`) and lets the other requests under
/// way finish. Runs are left as they stand: the next server resumes them
/// ([`runs::resume_runs`]). Meanwhile the approval channels' hub announces pending requests
/// and updates ended ones (it stops with the server).
///
/// # Errors
/// Accepting connections failed.
///
/// # Cancel safety
/// Dropping the future drops every connection at once and stops the channel hub, maybe in
/// the middle of a send (the next server sends it again); complete `shutdown` instead.
pub async fn serve(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    if let Ok(address) = listener.local_addr() {
        let _ = state.bound.set(address);
    }
    let runs = Arc::clone(&state.runs);
    let (stop_hub, hub_stopped) = tokio::sync::oneshot::channel::<()>();
    // Ends with this future, however it ends: a pass cut short is safe (the hub's cancel
    // safety), and a hub outliving its server would go on sending for a server that is gone.
    let _hub = AbortOnDrop(tokio::spawn(state.hub.clone().run(async move {
        let _ = hub_stopped.await;
    })));
    let shutdown = async move {
        shutdown.await;
        let _ = stop_hub.send(());
        runs.stop_streams();
    };
    listen::serve_connections(listener, router(state), shutdown).await
}

/// Aborts its task when dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// `GET /healthz`: whether the database answers (no token).
#[utoipa::path(get, path = "/healthz", tag = "server",
    responses(
        (status = 200, description = "The approval database answers", body = wire::Health),
        (status = 503, description = "It does not (`unavailable`)", body = wire::ErrorBody),
    ))]
async fn healthz(State(state): State<AppState>) -> Response {
    match state.store.ping().await {
        Ok(()) => Json(wire::Health {
            status: "ok".into(),
        })
        .into_response(),
        Err(e) => {
            tracing::error!(error = %e, "health check: the approval database does not answer");
            ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "unavailable",
                "the approval database does not answer",
            )
            .into_response()
        }
    }
}

async fn timeout(request: Request, next: Next) -> Response {
    match tokio::time::timeout(REQUEST_TIMEOUT, next.run(request)).await {
        Ok(response) => response,
        Err(_) => ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "timeout",
            format!(
                "the request took longer than {} s",
                REQUEST_TIMEOUT.as_secs()
            ),
        )
        .into_response(),
    }
}

async fn not_found() -> ApiError {
    ApiError::not_found("no such route")
}

async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "this route does not take that method",
    )
}
