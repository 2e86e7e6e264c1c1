//! tollgate-server driven over real HTTP on 127.0.0.1: the approvals page through plain
//! requests (`web`) and through a headless Chromium (`browser`), `/metrics` (`metrics`),
//! the OpenAPI document (`openapi`), and one run's event stream read by many clients at once
//! (`fanout`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod browser;
mod channels;
mod channels_feishu;
mod channels_random;
mod channels_slack;
mod compression;
mod fanout;
mod filing;
mod metrics;
mod openapi;
mod slow_clients;
mod web;

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;
use tokio::task::JoinHandle;
use tollgate_approval::{Clock, ManualClock, NewRequest, Store};
use tollgate_server::{AppState, ServerConfig};

/// An approver's token.
pub const OPS: &str = "ops-lead-token-0123456789";
/// Another approver's token.
pub const DBA: &str = "dba-token-0123456789abcdef";
/// A runner's token.
pub const CI: &str = "ci-token-0123456789abcdef";

/// How to start a [`Server`].
#[derive(Default, Clone)]
pub struct Setup {
    /// More top-level keys of its configuration (`agents_dir: agents`, `approval: {…}`).
    pub extra: String,
    /// The environment `${NAME}` reads from (nothing else is read).
    pub env: HashMap<String, String>,
    /// The store's clock; the system's when `None`.
    pub clock: Option<Arc<ManualClock>>,
}

/// A server on a free port of 127.0.0.1, in this process; stopped when dropped (its channel
/// hub with it).
pub struct Server {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    /// Its approval store.
    pub store: Store,
    task: JoinHandle<()>,
    setup: Setup,
    dir: Arc<tempfile::TempDir>,
}

impl Server {
    /// A server whose `public_url` is `public_url`, when given.
    pub async fn start(public_url: Option<&str>) -> Self {
        let public = public_url.map_or_else(String::new, |u| format!("public_url: {u}\n"));
        Self::start_with(|_| public).await
    }

    /// A server whose folder `setup` fills; `setup` returns more top-level keys of its
    /// configuration (`agents_dir: agents`, say).
    pub async fn start_with(setup: impl FnOnce(&std::path::Path) -> String) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let extra = setup(dir.path());
        Self::launch(
            Arc::new(dir),
            Setup {
                extra,
                ..Setup::default()
            },
        )
        .await
    }

    /// A server in a new folder, as `setup` says.
    pub async fn start_setup(setup: Setup) -> Self {
        Self::launch(Arc::new(tempfile::tempdir().unwrap()), setup).await
    }

    /// Another server on the same folder and database, with the same configuration and
    /// environment (a second replica, or the server restarted); its store's clock is
    /// `clock`, or the system's.
    pub async fn replica(&self, clock: Option<Arc<ManualClock>>) -> Self {
        let setup = Setup {
            clock,
            ..self.setup.clone()
        };
        Self::launch(Arc::clone(&self.dir), setup).await
    }

    /// Stops the server at once, as a crash would: its connections and its channel hub are
    /// dropped wherever they are (a send under way is cut short). What is left can
    /// [`Dead::restart`].
    pub async fn crash(mut self) -> Dead {
        self.task.abort();
        // Gone once this returns (`Drop` aborts it again, harmlessly).
        let _ = (&mut self.task).await;
        Dead {
            setup: self.setup.clone(),
            dir: Arc::clone(&self.dir),
        }
    }

    async fn launch(dir: Arc<tempfile::TempDir>, setup: Setup) -> Self {
        let yaml = format!(
            "listen: 127.0.0.1:0\n\
             database: sqlite://approvals.db\n\
             {}\
             tokens:\n\
             \x20 - {{name: ops-lead, token: {OPS}, roles: [approver]}}\n\
             \x20 - {{name: dba, token: {DBA}, roles: [admin]}}\n\
             \x20 - {{name: ci, token: {CI}, roles: [runner]}}\n",
            setup.extra
        );
        let env = setup.env.clone();
        let config =
            ServerConfig::parse(&yaml, dir.path(), &|name| env.get(name).cloned()).unwrap();
        let store = match &setup.clock {
            Some(clock) => {
                let clock: Arc<dyn Clock> = Arc::clone(clock) as Arc<dyn Clock>;
                Store::open_with_clock(&config.database, clock)
                    .await
                    .unwrap()
            }
            None => Store::open(&config.database).await.unwrap(),
        };
        let listener = tokio::net::TcpListener::bind(config.listen).await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let state = AppState::new(config, store.clone());
        let task = tokio::spawn(async move {
            tollgate_server::serve(listener, state, std::future::pending())
                .await
                .unwrap();
        });
        Self {
            url,
            store,
            task,
            setup,
            dir,
        }
    }

    /// The server's folder (its database is `approvals.db` there).
    pub fn dir(&self) -> &std::path::Path {
        self.dir.path()
    }

    /// Files a pending `sql_execute` call with `arguments` that `approvers` may decide; its id.
    pub async fn file(&self, arguments: Value, approvers: &[&str]) -> String {
        let new = NewRequest {
            run_id: "run-7".into(),
            session_id: "s".into(),
            scope: next_scope(),
            agent: "ops".into(),
            tool_name: "sql_execute".into(),
            tool_call_id: "c1".into(),
            arguments,
            reasons: vec!["calls of `sql_execute` need confirmation".into()],
            asked_by: "permission_gate".into(),
            approvers: approvers.iter().map(|a| (*a).to_owned()).collect(),
            timeout_seconds: 600,
        };
        self.store.file(&new).await.unwrap().request.id
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The folder and configuration of a server that crashed.
pub struct Dead {
    setup: Setup,
    dir: Arc<tempfile::TempDir>,
}

impl Dead {
    /// A new server on the same folder, configuration and environment, whose store's clock
    /// is `clock` (or the system's).
    pub async fn restart(self, clock: Option<Arc<ManualClock>>) -> Server {
        let setup = Setup {
            clock,
            ..self.setup
        };
        Server::launch(self.dir, setup).await
    }
}

/// A scope unique to each filing, so each filing is its own request.
fn next_scope() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!("t{}:pre_tool_use", NEXT.fetch_add(1, Ordering::Relaxed))
}
