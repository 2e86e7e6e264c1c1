//! `tollgate serve --config FILE`: the approvals API over HTTP, and the approvals page for
//! people at `/approvals` (`docs/server.md`).
//!
//! Prints `listening on http://ADDR` on stderr once bound (with `listen: 127.0.0.1:0`, the
//! port the system picked). SIGTERM or SIGINT stops accepting connections; requests under way
//! finish, then the process exits 0.
//!
//! Exit status: 0 stopped by a signal; 1 the configuration, the database or the address
//! cannot be used; 2 bad arguments.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use tollgate_approval::Store;
use tollgate_server::{AppState, ServerConfig};

use crate::registry::{fail, init_logging, warn};

/// Arguments of `tollgate serve`.
#[derive(Debug, Args)]
pub struct Serve {
    /// The server's configuration file (YAML): listen, database, tokens, …
    #[arg(long, value_name = "FILE")]
    config: PathBuf,
}

/// Runs `tollgate serve`.
///
/// # Errors
/// Only when the Tokio runtime cannot start.
pub fn run(args: Serve) -> Result<ExitCode> {
    init_logging();
    let config = match ServerConfig::load(&args.config) {
        Ok(config) => config,
        Err(e) => return Ok(fail(1, &e.to_string())),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let store = match Store::open(&config.database).await {
            Ok(store) => store,
            Err(e) => return Ok(fail(1, &e.to_string())),
        };
        let listener = match tokio::net::TcpListener::bind(config.listen).await {
            Ok(listener) => listener,
            Err(e) => return Ok(fail(1, &format!("cannot listen on {}: {e}", config.listen))),
        };
        let address = listener.local_addr()?;
        let shutdown = match stop_signal() {
            Ok(shutdown) => shutdown,
            Err(e) => return Ok(fail(1, &format!("cannot watch for signals: {e}"))),
        };
        if !address.ip().is_loopback() {
            warn(format!(
                "{address} is not a loopback address and the server speaks plain HTTP: \
                 bearer tokens cross the network in the clear unless a TLS proxy fronts it"
            ));
        }
        eprintln!("tollgate serve: listening on http://{address}");
        let state = AppState::new(config, store);
        match tollgate_server::runs::resume_runs(&state).await {
            Ok(0) => {}
            Ok(n) => eprintln!("tollgate serve: resumed {n} run(s) from the database"),
            Err(e) => return Ok(fail(1, &format!("cannot resume the runs: {e}"))),
        }
        if let Err(e) = tollgate_server::serve(listener, state, shutdown).await {
            return Ok(fail(1, &format!("the server failed: {e}")));
        }
        eprintln!("tollgate serve: stopped");
        Ok(ExitCode::SUCCESS)
    })
}

/// Completes at the first SIGTERM or SIGINT. The handlers are installed before it returns,
/// so a signal that arrives once the address is printed is never missed.
fn stop_signal() -> std::io::Result<impl Future<Output = ()> + Send + 'static> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut terminate = signal(SignalKind::terminate())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    Ok(async move {
        tokio::select! {
            _ = terminate.recv() => {}
            _ = interrupt.recv() => {}
        }
        eprintln!("tollgate serve: stopping (requests under way finish first)");
    })
}
