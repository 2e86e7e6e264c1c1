//! The accept loop: HTTP/1.1 connections on a listener, each served by the router, with a
//! deadline for every request's header and a graceful end.
//!
//! A client must send a request's whole header within [`HEADER_READ_TIMEOUT`] of the
//! connection opening (or of the previous response, on a kept-alive connection), else the
//! connection is closed: a client that connects and sends nothing, or trickles a header a
//! byte at a time, cannot hold a descriptor for long (the request timeout only starts once a
//! header has arrived).

use std::future::Future;
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;

/// How long a client has to send a request's header.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Serves `app` on `listener` until `shutdown` completes; then stops accepting and waits for
/// the connections under way to finish their requests.
///
/// # Errors
/// Never, so far: a failed accept (too many open files, a connection reset before it was
/// accepted) is logged and the loop goes on after a pause.
pub(crate) async fn serve_connections(
    listener: TcpListener,
    app: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT);
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of descriptors or memory, or a connection gone before it was
                    // accepted: wait a little rather than spin.
                    tracing::warn!(error = %e, "cannot accept a connection");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(app.clone());
        let connection = graceful.watch(http.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, "a connection ended with an error");
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}
