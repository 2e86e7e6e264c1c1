//! What can go wrong: the store itself, or an attempt the state machine refuses.

use std::path::PathBuf;

use crate::model::Status;
use crate::time::format_ms;

/// The database could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file cannot be opened, created or migrated.
    #[error("cannot open the approval database {}: {reason}", path.display())]
    Open {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A query failed (locked past the busy timeout, disk full, …).
    #[error("the approval database failed: {0}")]
    Db(#[from] sqlx::Error),
    /// A row the store wrote does not read back (edited by hand, another program).
    #[error("the approval database holds a bad row: {0}")]
    Corrupt(String),
    /// The operating system gave no random bytes (for a channel message's nonce).
    #[error("no random bytes from the operating system: {0}")]
    Random(String),
}

/// An attempt the store refused. Every refusal about an existing request is in its audit
/// history.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    /// No request has that id.
    #[error("no confirmation request `{id}`")]
    NotFound {
        /// The id asked for.
        id: String,
    },
    /// The decider is not one of the request's approvers.
    #[error("`{by}` may not decide {id}; its approvers: {}", list(approvers))]
    NotAllowed {
        /// The request.
        id: String,
        /// Who tried.
        by: String,
        /// Who may.
        approvers: Vec<String>,
    },
    /// The request already left `pending`.
    #[error("{id} is already {status}{}", decided(by.as_deref(), *at))]
    AlreadyDecided {
        /// The request.
        id: String,
        /// Its terminal status.
        status: Status,
        /// Who moved it there.
        by: Option<String>,
        /// When, in milliseconds since the Unix epoch.
        at: Option<i64>,
    },
    /// `expire` on a request that is not overdue yet.
    #[error("{id} does not expire before {}", format_ms(*expires_at))]
    NotOverdue {
        /// The request.
        id: String,
        /// When it expires.
        expires_at: i64,
    },
    /// `consume` on a request that was not approved.
    #[error("{id} is {status}, not an approval to run")]
    NotApproved {
        /// The request.
        id: String,
        /// Its status.
        status: Status,
    },
    /// `finish` on a request whose call is not running: never consumed, or its end is
    /// already recorded.
    #[error(
        "{id} has no running call to finish (never taken to run, or its end is already recorded)"
    )]
    NotRunning {
        /// The request.
        id: String,
    },
    /// The approval was already used to run the call.
    #[error("{id} was already used to run the call at {}{}", format_ms(*at), if *finished { "" } else { " (its end is not recorded: it is still running elsewhere, or the process stopped while it ran)" })]
    AlreadyConsumed {
        /// The request.
        id: String,
        /// When it was consumed.
        at: i64,
        /// Whether the tool's end was recorded.
        finished: bool,
    },
    /// The arguments about to run are not the approved ones.
    #[error(
        "the arguments about to run are not the ones approved in {id} (approved hash {approved}, about to run {got})"
    )]
    ArgumentsChanged {
        /// The request.
        id: String,
        /// The approved `args_hash`.
        approved: String,
        /// The hash of what was about to run.
        got: String,
    },
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<sqlx::Error> for Refused {
    fn from(e: sqlx::Error) -> Self {
        Self::Store(StoreError::Db(e))
    }
}

fn list(names: &[String]) -> String {
    if names.is_empty() {
        "nobody (no approver entry covers this agent and tool)".to_owned()
    } else {
        names.join(", ")
    }
}

fn decided(by: Option<&str>, at: Option<i64>) -> String {
    let by = by.map(|b| format!(" by {b}")).unwrap_or_default();
    let at = at
        .map(|t| format!(" at {}", format_ms(t)))
        .unwrap_or_default();
    format!("{by}{at}")
}
