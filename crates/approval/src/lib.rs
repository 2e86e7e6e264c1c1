//! Durable human approval for tollgate: the confirmation store.
//!
//! When a hook, the permission gate or an agent's confirmation settings say `ask`, the runtime
//! files a [`NewRequest`] here and waits. The request is a database row (SQLite by default),
//! not memory: a person decides from another process ([`Store::decide`]), exactly one
//! decision wins, every attempt is audited, an unanswered request expires and denies, and a
//! restarted run re-attaches to its row through the idempotency key instead of asking twice.
//!
//! ```text
//!            ┌──────────► approved ──consume (once, args hash must match)──► finish
//! pending ───┼──────────► rejected
//!            ├──timeout─► expired
//!            └──run─────► cancelled
//! ```
//!
//! Tables: `confirmation_request` (one row per asking call) and `confirmation_event` (the
//! append-only audit; triggers refuse updates and deletes); for a server's durable runs, `run`
//! (one row per run) and `run_line` (the run's trace, its append-only journal). See the project's
//! `docs/approvals.md` for the columns and the audit query.

mod approvers;
pub mod channel;
mod error;
mod hash;
mod model;
mod store;
mod time;

pub use approvers::{ApproverRule, Approvers, RuleError, os_user};
pub use error::{Refused, StoreError};
pub use hash::{args_hash, canonical_json};
pub use model::{AuditEvent, Decision, NewRequest, Request, Status, Verdict};
pub use store::{
    BUSY_TIMEOUT, ChannelMessage, Clock, Filed, JournalLine, LIVE_STATUSES, ManualClock, Outgoing,
    Retry, RunChange, RunRecord, Store, SystemClock, database_files,
};
pub use time::{format_ms, format_span};
