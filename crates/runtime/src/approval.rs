//! The durable approver: every `ask` files (or re-attaches to) a confirmation request in the
//! approval store and waits for a decision, which may come from another process.
//!
//! - The request holds the arguments that will run and their hash; the call runs only after
//!   [`Approver::consume`] marked the approval used, once, with arguments that still hash to
//!   the approved ones.
//! - Expiry denies (fail closed); a failing store denies.
//! - A cancelled run cancels its pending request (`cancelled`).
//! - A resumed run (same run id) finds its request through the re-attach key: a decision given
//!   while it was away is applied once; an approval already used is not used again.
//!
//! Someone at the run's own terminal may answer too: an [`InlineChannel`] (the CLI's) is
//! raced against the store, and its answer is written to the store like any other, so the
//! first decision wins whichever channel it came from.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tollgate_approval::{
    ApproverRule, Approvers, Decision, NewRequest, Refused, Request, Status, Store, Verdict,
    format_ms,
};
use tollgate_config::{ApprovalSettings, HookFile};
use tollgate_core::BoxFuture;

use crate::gate::{Approval, ApprovalRequest, Approver, Waiting};

/// Default `approval.timeout_seconds`: 30 minutes.
pub const DEFAULT_APPROVAL_TIMEOUT_SECS: u64 = 1800;

/// How often a waiter reads its row, to see decisions other processes write. Decisions made
/// in this process wake it at once.
pub const POLL: Duration = Duration::from_millis(200);

/// An agent's approval policy: its file's `approval:` under the admin files' (whose keys win).
#[derive(Debug, Clone)]
pub struct ApprovalPolicy {
    /// Seconds a request waits before it expires.
    pub timeout_seconds: u64,
    /// Who may decide.
    pub approvers: Approvers,
    /// Entries that could not be built (bad glob), as `name: reason`; they add nobody.
    pub problems: Vec<String>,
}

impl ApprovalPolicy {
    /// The policy for an agent whose file says `agent`, under `admin` files.
    pub fn resolve(agent: &ApprovalSettings, admin: &[HookFile]) -> Self {
        let merged = admin
            .iter()
            .fold(agent.clone(), |acc, file| acc.overridden_by(&file.approval));
        let mut problems = Vec::new();
        let approvers = match merged.approvers {
            None => Approvers::default(),
            Some(entries) if entries.is_empty() => Approvers::nobody(),
            Some(entries) => Approvers::new(
                entries
                    .iter()
                    .filter_map(|e| {
                        ApproverRule::new(&e.name, &e.agents, &e.tools)
                            .map_err(|err| problems.push(err.to_string()))
                            .ok()
                    })
                    .collect(),
            ),
        };
        Self {
            timeout_seconds: merged
                .timeout_seconds
                .unwrap_or(DEFAULT_APPROVAL_TIMEOUT_SECS),
            approvers,
            problems,
        }
    }
}

/// A person at hand who may answer inline (the CLI's terminal).
pub trait InlineChannel: Send + Sync {
    /// Shows `request` as waiting and resolves when the person answers (`None`: this channel
    /// cannot answer; keep waiting for others). Dropped as soon as a decision comes from
    /// elsewhere.
    fn answer<'a>(&'a self, request: &'a Request) -> BoxFuture<'a, Option<InlineAnswer>>;

    /// Tells the person why their answer did not count (they are not an approver, …).
    fn tell(&self, message: &str);
}

/// An inline answer.
#[derive(Debug, Clone, PartialEq)]
pub struct InlineAnswer {
    /// Approve (with an optional edit) or reject.
    pub verdict: Verdict,
    /// A note.
    pub note: Option<String>,
}

/// The [`Approver`] backed by the approval store.
pub struct DurableApprover {
    db: PathBuf,
    /// Opened at the first ask, so a run that never asks creates no database.
    store: tokio::sync::OnceCell<Store>,
    me: String,
    cancel: CancellationToken,
    inline: Option<Arc<dyn InlineChannel>>,
    /// How often a waiting call reads its row (a decision by another process).
    poll: Duration,
}

/// How often a call waiting on a shared store ([`DurableApprover::with_store`]) reads its row:
/// the store's own decisions wake it at once, so only decisions written by another process
/// (`tollgate approvals --db` on the same file) wait for this.
pub const SHARED_POLL: Duration = Duration::from_secs(30);

impl DurableApprover {
    /// An approver filing into the approval database at `db` (created at the first ask). `me`
    /// is the local user (who cancels, and who answers inline through channel `tty`);
    /// `cancel` is the run's cancel token: when it fires, a pending request is cancelled.
    pub fn new(db: impl Into<PathBuf>, me: impl Into<String>, cancel: CancellationToken) -> Self {
        Self {
            db: db.into(),
            store: tokio::sync::OnceCell::new(),
            me: me.into(),
            cancel,
            inline: None,
            poll: POLL,
        }
    }

    /// An approver filing into `store`, already open. A server passes its own store: its runs
    /// share one connection pool, and a decision the server records wakes the waiting call at
    /// once; a decision another process writes to the file is read within [`SHARED_POLL`]
    /// (so thousands of waiting calls cost no steady reads).
    pub fn with_store(store: Store, me: impl Into<String>, cancel: CancellationToken) -> Self {
        Self {
            db: store.path().to_path_buf(),
            store: tokio::sync::OnceCell::new_with(Some(store)),
            me: me.into(),
            cancel,
            inline: None,
            poll: SHARED_POLL,
        }
    }

    /// Lets a person at hand answer inline too.
    #[must_use]
    pub fn with_inline(mut self, inline: Arc<dyn InlineChannel>) -> Self {
        self.inline = Some(inline);
        self
    }

    /// The database file.
    pub fn db_path(&self) -> &std::path::Path {
        &self.db
    }

    async fn store(&self) -> Result<&Store, String> {
        self.store
            .get_or_try_init(|| Store::open(&self.db))
            .await
            .map_err(|e| e.to_string())
    }

    async fn settle(&self, store: &Store, request: &ApprovalRequest, filed: Request) -> Approval {
        if filed.status.is_terminal() {
            return self.answer(request, &filed);
        }
        let id = filed.id.clone();
        let waited = loop {
            tokio::select! {
                biased;
                () = self.cancel.cancelled() => {
                    let why = "the run was cancelled while it waited for approval";
                    let _ = Box::pin(store.cancel(&id, &self.me, why)).await;
                    break Box::pin(store.get(&id)).await.map_err(Refused::from).and_then(|row| {
                        row.ok_or(Refused::NotFound { id: id.clone() })
                    });
                }
                decided = store.wait(&id, self.poll) => break decided,
                Some(answer) = inline(self.inline.as_deref(), &filed) => {
                    let decision = Decision {
                        verdict: answer.verdict,
                        by: self.me.clone(),
                        channel: "tty".into(),
                        note: answer.note,
                    };
                    match Box::pin(store.decide(&id, &decision)).await {
                        // Not this person's call to make: say so, and keep waiting.
                        Err(refused @ Refused::NotAllowed { .. }) => {
                            if let Some(inline) = &self.inline {
                                inline.tell(&refused.to_string());
                            }
                        }
                        // Decided here or elsewhere first: the store's row is the answer.
                        _ => break Box::pin(store.wait(&id, self.poll)).await,
                    }
                }
            }
        };
        match waited {
            Ok(row) => self.answer(request, &row),
            Err(e) => store_failed(&e.to_string()),
        }
    }

    /// A resumed run proposes other arguments under a call id that was asked before: the
    /// request (about the old arguments) cannot approve them. A pending one is cancelled so
    /// nobody approves something that will not run; the call is denied.
    async fn changed_arguments(&self, store: &Store, row: &Request) -> Approval {
        let why = format!(
            "this call was asked before with other arguments ({}); the resumed run proposes \
             different ones, so the earlier request cannot approve them",
            row.id
        );
        if row.status == Status::Pending {
            let _ = store.cancel(&row.id, &self.me, &why).await;
        }
        Approval {
            status: "arguments_changed".into(),
            request_id: Some(row.id.clone()),
            ..Approval::plain(false, "runtime", Some(why))
        }
    }

    fn answer(&self, request: &ApprovalRequest, row: &Request) -> Approval {
        let by = row.responded_by.clone().unwrap_or_default();
        let mut approval = Approval {
            approved: false,
            status: row.status.as_str().into(),
            by,
            note: row.response_note.clone(),
            edited_arguments: row.edited_arguments.clone(),
            request_id: Some(row.id.clone()),
            channel: row.channel.clone(),
        };
        match row.status {
            Status::Approved if row.consumed_at.is_some() => {
                approval.status = "already_run".into();
                approval.note = Some(
                    Refused::AlreadyConsumed {
                        id: row.id.clone(),
                        at: row.consumed_at.unwrap_or_default(),
                        finished: row.finished_at.is_some(),
                    }
                    .to_string(),
                );
            }
            Status::Approved => approval.approved = true,
            Status::Expired => {
                approval.note = Some(format!(
                    "nobody decided within {} s (expired at {})",
                    request.timeout_seconds,
                    format_ms(row.expires_at)
                ));
            }
            Status::Rejected | Status::Cancelled | Status::Pending => {}
        }
        approval
    }
}

async fn inline(channel: Option<&dyn InlineChannel>, row: &Request) -> Option<InlineAnswer> {
    match channel {
        Some(channel) => channel.answer(row).await,
        None => None,
    }
}

fn store_failed(error: &str) -> Approval {
    Approval {
        status: "error".into(),
        ..Approval::plain(
            false,
            "approval_store",
            Some(format!(
                "the approval store failed, so the call is denied: {error}"
            )),
        )
    }
}

impl Approver for DurableApprover {
    fn ask<'a>(
        &'a self,
        request: &'a ApprovalRequest,
        waiting: &'a (dyn Fn(&Waiting) + Send + Sync),
    ) -> BoxFuture<'a, Approval> {
        Box::pin(async move {
            let new = NewRequest {
                run_id: request.run_id.clone(),
                session_id: request.session_id.clone(),
                scope: request.scope.clone(),
                agent: request.agent.clone(),
                tool_name: request.tool_name.clone(),
                tool_call_id: request.tool_call_id.clone(),
                arguments: request.arguments.clone(),
                reasons: vec![request.reason.clone()],
                asked_by: request.asked_by.clone(),
                approvers: request.approvers.clone(),
                timeout_seconds: request.timeout_seconds,
            };
            // The store calls are boxed: their futures are large and short-lived, and this
            // one lives as long as the request waits.
            let store = match Box::pin(self.store()).await {
                Ok(store) => store,
                Err(e) => return store_failed(&e),
            };
            let filed = match Box::pin(store.file(&new)).await {
                Ok(filed) => filed,
                Err(e) => return store_failed(&e.to_string()),
            };
            if filed.attached
                && filed.request.args_hash != tollgate_approval::args_hash(&new.arguments)
            {
                return Box::pin(self.changed_arguments(store, &filed.request)).await;
            }
            waiting(&Waiting {
                request_id: filed.request.id.clone(),
                expires_at_ms: filed.request.expires_at,
                approvers: filed.request.approvers.clone(),
                attached: filed.attached,
                status: filed.request.status.as_str().into(),
            });
            self.settle(store, request, filed.request).await
        })
    }

    fn consume<'a>(
        &'a self,
        approval: &'a Approval,
        arguments: &'a Value,
    ) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let Some(id) = &approval.request_id else {
                return Ok(());
            };
            self.store()
                .await?
                .consume(id, "runtime", arguments)
                .await
                .map(drop)
                .map_err(|e| e.to_string())
        })
    }

    fn finish<'a>(&'a self, approval: &'a Approval) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let Some(id) = &approval.request_id else {
                return;
            };
            let finished = match self.store().await {
                Ok(store) => store
                    .finish(id, "runtime")
                    .await
                    .map(drop)
                    .map_err(|e| e.to_string()),
                Err(e) => Err(e),
            };
            if let Err(e) = finished {
                tracing::warn!("cannot record the end of approved call {id}: {e}");
            }
        })
    }
}
