//! The confirmation store on SQLite.
//!
//! Every change is one conditional `UPDATE` (`… WHERE status = 'pending'`, or `… AND
//! consumed_at IS NULL` for consume) inside a transaction that also appends its audit row, so
//! a double click, a retried callback or a second process gives exactly one transition and
//! every attempt, applied or refused, is on record. SQLite transactions start with `BEGIN
//! IMMEDIATE`: the writer lock is taken first, and a second process waits for it (up to the
//! busy timeout) instead of failing half-way.
//!
//! The queries use `$N` placeholders and portable SQL (`ON CONFLICT … DO NOTHING`), so a
//! PostgreSQL migration set can sit beside the SQLite one.

#[macro_use]
mod rows;
mod channels;
mod clock;
mod file;
mod runs;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::{Row, Sqlite, Transaction};
use tokio::sync::watch;

use crate::error::{Refused, StoreError};
use crate::hash::args_hash;
use crate::model::{AuditEvent, Decision, NewRequest, Request, Status, Verdict};
pub use channels::{ChannelMessage, Outgoing, Retry};
pub use clock::{Clock, ManualClock, SystemClock};
pub use file::database_files;
use file::{migration_lock, prepare_file};
use rows::{SELECT_BY_ID, apply, audit, by_id, by_key, decode};
pub use runs::{JournalLine, LIVE_STATUSES, RunChange, RunRecord};

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/sqlite");

/// How long a writer waits for another process's write lock before giving up.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// What [`Store::file`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct Filed {
    /// The request row (new or found).
    pub request: Request,
    /// `true` when a row with the same idempotency key already existed (a resumed run).
    pub attached: bool,
}

/// The confirmation store. Cheap to clone; clones share the pool and the in-process
/// notification.
#[derive(Clone)]
pub struct Store {
    pool: SqlitePool,
    path: PathBuf,
    clock: Arc<dyn Clock>,
    changed: Arc<watch::Sender<u64>>,
    /// One channel per request someone waits on: a change wakes only that request's waiters.
    watched: Arc<std::sync::Mutex<std::collections::HashMap<String, watch::Sender<u64>>>>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish()
    }
}

/// One attempt to change a request.
struct Attempt<'a> {
    id: &'a str,
    actor: &'a str,
    channel: Option<&'a str>,
    action: &'static str,
}

/// What an accepted attempt writes.
enum Change {
    /// Leave `pending` for `to`.
    Leave {
        to: Status,
        note: Option<String>,
        edit: Option<Value>,
    },
    /// Mark an approved request consumed, if its arguments hash to `hash`.
    Consume { hash: String },
    /// Record that the consumed call's tool returned.
    Finish,
}

impl Store {
    /// Opens (creating it and its folder when missing) the SQLite file at `path`, in WAL
    /// mode, and brings its schema up to date.
    ///
    /// # Errors
    /// The file cannot be created or opened, is not a SQLite database, or a migration fails.
    pub async fn open(path: &Path) -> Result<Self, StoreError> {
        Self::open_with_clock(path, Arc::new(SystemClock)).await
    }

    /// [`Store::open`] with another clock.
    ///
    /// # Errors
    /// As [`Store::open`].
    pub async fn open_with_clock(path: &Path, clock: Arc<dyn Clock>) -> Result<Self, StoreError> {
        file::prepare_folder(path)?;
        let options = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .busy_timeout(BUSY_TIMEOUT)
            .foreign_keys(true);
        let open_error = |e: sqlx::Error| StoreError::Open {
            path: path.to_path_buf(),
            reason: e.to_string(),
        };
        // Two processes opening a new file at once would both try to create the schema:
        // migrations run under an exclusive lock on a file beside the database.
        let had_lock = file::lock_path(path).exists();
        let guard = migration_lock(path).await?;
        // Under the lock: another process may be creating the schema right now.
        if let Err(e) = prepare_file(path).await {
            drop(guard);
            if !had_lock {
                let _ = std::fs::remove_file(file::lock_path(path));
            }
            return Err(e);
        }
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(options)
            .await
            .map_err(open_error)?;
        MIGRATOR.run(&pool).await.map_err(|e| StoreError::Open {
            path: path.to_path_buf(),
            reason: format!("cannot bring the schema up to date: {e}"),
        })?;
        drop(guard);
        Ok(Self {
            pool,
            path: path.to_path_buf(),
            clock,
            changed: Arc::new(watch::channel(0).0),
            watched: Arc::default(),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Now, by the store's clock (milliseconds since the Unix epoch).
    pub fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }

    /// A receiver that sees a new value after every change this process commits.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    async fn begin(&self) -> Result<Transaction<'static, Sqlite>, StoreError> {
        Ok(self.pool.begin_with("BEGIN IMMEDIATE").await?)
    }

    /// Announces a change of request `id`: to its waiters and to [`Store::changes`].
    fn notify(&self, id: &str) {
        if let Ok(watched) = self.watched.lock()
            && let Some(sender) = watched.get(id)
        {
            sender.send_modify(|n| *n = n.wrapping_add(1));
        }
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Reads one row of the requests table, for health checks.
    ///
    /// # Errors
    /// The database does not answer (no connection free within the pool's timeout, a read
    /// error, …).
    pub async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query("SELECT 1 FROM confirmation_request LIMIT 1")
            .fetch_optional(&self.pool)
            .await?;
        Ok(())
    }

    /// Files a request, or finds the one with the same idempotency key (a resumed run):
    /// no second row is ever created for the same call. Both are audited (`create`,
    /// `attach`).
    ///
    /// # Errors
    /// The database fails.
    pub async fn file(&self, new: &NewRequest) -> Result<Filed, StoreError> {
        let key = new.idempotency_key();
        let id = format!("cr_{}", ulid::Ulid::generate());
        let timeout = i64::try_from(new.timeout_seconds.saturating_mul(1000)).unwrap_or(i64::MAX);
        let mut tx = self.begin().await?;
        let now = self.now_ms();
        let inserted = sqlx::query(
            "INSERT INTO confirmation_request (id, idempotency_key, run_id, session_id, agent, \
             tool_name, tool_call_id, arguments, args_hash, reasons, asked_by, approvers, status, \
             created_at, expires_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 'pending', $13, $14) \
             ON CONFLICT (idempotency_key) DO NOTHING",
        )
        .bind(&id)
        .bind(&key)
        .bind(&new.run_id)
        .bind(&new.session_id)
        .bind(&new.agent)
        .bind(&new.tool_name)
        .bind(&new.tool_call_id)
        .bind(new.arguments.to_string())
        .bind(args_hash(&new.arguments))
        .bind(serde_json::to_string(&new.reasons).unwrap_or_default())
        .bind(&new.asked_by)
        .bind(serde_json::to_string(&new.approvers).unwrap_or_default())
        .bind(now)
        .bind(now.saturating_add(timeout))
        .execute(&mut *tx)
        .await?
        .rows_affected()
            == 1;
        let request = by_key(&mut tx, &key)
            .await?
            .ok_or_else(|| StoreError::Corrupt(format!("request {key} vanished while filed")))?;
        let (action, detail) = if inserted {
            ("create", new.reasons.join("; "))
        } else {
            ("attach", format!("re-attached by run {}", new.run_id))
        };
        let status = request.status.as_str();
        audit(
            &mut tx,
            &request.id,
            now,
            &format!("agent:{}", new.agent),
            action,
            (true, status, status),
            None,
            Some(&detail),
        )
        .await?;
        tx.commit().await?;
        if inserted {
            self.notify(&request.id);
        }
        Ok(Filed {
            request,
            attached: !inserted,
        })
    }

    /// The request `id`, if there is one.
    ///
    /// # Errors
    /// The database fails.
    pub async fn get(&self, id: &str) -> Result<Option<Request>, StoreError> {
        let row = sqlx::query(SELECT_BY_ID)
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(decode).transpose()
    }

    /// Requests, newest first: all of them, or those with `status`.
    ///
    /// # Errors
    /// The database fails.
    pub async fn list(&self, status: Option<Status>) -> Result<Vec<Request>, StoreError> {
        let rows = match status {
            Some(status) => {
                sqlx::query(select_request!(
                    "WHERE status = $1 ORDER BY created_at DESC, id DESC"
                ))
                .bind(status.as_str())
                .fetch_all(&self.pool)
                .await?
            }
            None => {
                sqlx::query(select_request!("ORDER BY created_at DESC, id DESC"))
                    .fetch_all(&self.pool)
                    .await?
            }
        };
        rows.iter().map(decode).collect()
    }

    /// How many requests wait for a human now: pending and not overdue (an overdue one is
    /// expired by the next sweep or decision, so it no longer waits). Writes nothing.
    ///
    /// # Errors
    /// The database fails.
    pub async fn count_pending(&self) -> Result<u64, StoreError> {
        let count: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM confirmation_request WHERE status = 'pending' AND expires_at > $1",
        )
        .bind(self.now_ms())
        .fetch_one(&self.pool)
        .await?;
        Ok(u64::try_from(count).unwrap_or(0))
    }

    /// The audit history of `id`, oldest first.
    ///
    /// # Errors
    /// The database fails.
    pub async fn history(&self, id: &str) -> Result<Vec<AuditEvent>, StoreError> {
        let rows = sqlx::query(
            "SELECT id, request_id, at, actor, action, outcome, from_status, to_status, channel, \
             detail FROM confirmation_event WHERE request_id = $1 ORDER BY id",
        )
        .bind(id)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| {
                Ok(AuditEvent {
                    id: row.try_get("id")?,
                    request_id: row.try_get("request_id")?,
                    at: row.try_get("at")?,
                    actor: row.try_get("actor")?,
                    action: row.try_get("action")?,
                    outcome: row.try_get("outcome")?,
                    from_status: row.try_get("from_status")?,
                    to_status: row.try_get("to_status")?,
                    channel: row.try_get("channel")?,
                    detail: row.try_get("detail")?,
                })
            })
            .collect()
    }

    /// Approves or rejects `id` for `decision.by`.
    ///
    /// # Errors
    /// [`Refused::NotFound`]; [`Refused::NotAllowed`] when `by` is not one of the request's
    /// approvers; [`Refused::AlreadyDecided`] when it is no longer pending (an overdue
    /// request is expired first, so a late approval is refused and the row stays
    /// `expired`); [`Refused::Store`]. Every refusal on an existing request is audited.
    pub async fn decide(&self, id: &str, decision: &Decision) -> Result<Request, Refused> {
        let attempt = Attempt {
            id,
            actor: &decision.by,
            channel: Some(&decision.channel),
            action: match decision.verdict {
                Verdict::Approve { .. } => "approve",
                Verdict::Reject => "reject",
            },
        };
        self.attempt(attempt, |row, _| {
            if row.status.is_terminal() {
                return Err(already(row));
            }
            if !row.approvers.iter().any(|a| a == &decision.by) {
                return Err(Refused::NotAllowed {
                    id: row.id.clone(),
                    by: decision.by.clone(),
                    approvers: row.approvers.clone(),
                });
            }
            Ok(match &decision.verdict {
                Verdict::Approve { edit } => Change::Leave {
                    to: Status::Approved,
                    note: decision.note.clone(),
                    edit: edit.clone(),
                },
                Verdict::Reject => Change::Leave {
                    to: Status::Rejected,
                    note: decision.note.clone(),
                    edit: None,
                },
            })
        })
        .await
    }

    /// Cancels a pending request (the run stopped waiting): the call is denied.
    ///
    /// # Errors
    /// As [`Store::decide`], without the approver check.
    pub async fn cancel(&self, id: &str, by: &str, reason: &str) -> Result<Request, Refused> {
        let attempt = Attempt {
            id,
            actor: by,
            channel: None,
            action: "cancel",
        };
        self.attempt(attempt, |row, _| {
            if row.status.is_terminal() {
                return Err(already(row));
            }
            Ok(Change::Leave {
                to: Status::Cancelled,
                note: Some(reason.to_owned()),
                edit: None,
            })
        })
        .await
    }

    /// Expires `id` if it is pending and overdue; the call is denied (fail closed). Refused
    /// when it is not yet overdue or already decided.
    ///
    /// # Errors
    /// As [`Store::cancel`], and [`Refused::NotOverdue`].
    pub async fn expire(&self, id: &str) -> Result<Request, Refused> {
        let attempt = Attempt {
            id,
            actor: "timeout",
            channel: None,
            action: "expire",
        };
        self.attempt(attempt, |row, now| {
            if row.status.is_terminal() {
                return Err(already(row));
            }
            if now < row.expires_at {
                return Err(Refused::NotOverdue {
                    id: row.id.clone(),
                    expires_at: row.expires_at,
                });
            }
            Ok(Change::Leave {
                to: Status::Expired,
                note: None,
                edit: None,
            })
        })
        .await
    }

    /// Expires every pending request that is overdue; returns them.
    ///
    /// # Errors
    /// The database fails.
    pub async fn sweep(&self) -> Result<Vec<Request>, StoreError> {
        let overdue: Vec<String> = sqlx::query(
            "SELECT id FROM confirmation_request WHERE status = 'pending' AND expires_at <= $1",
        )
        .bind(self.now_ms())
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(|row| row.try_get("id"))
        .collect::<Result<_, _>>()?;
        let mut expired = Vec::new();
        for id in overdue {
            match self.expire(&id).await {
                Ok(request) => expired.push(request),
                // Decided meanwhile: nothing to expire.
                Err(Refused::Store(e)) => return Err(e),
                Err(_) => {}
            }
        }
        Ok(expired)
    }

    /// Takes an approved request to run its call: at most once, and only when `arguments`
    /// (what the runtime is about to run) hash to the approved arguments (the edited ones
    /// when an approver edited them). Call it before the tool starts.
    ///
    /// # Errors
    /// [`Refused::NotApproved`], [`Refused::AlreadyConsumed`],
    /// [`Refused::ArgumentsChanged`], [`Refused::NotFound`], [`Refused::Store`]; all audited
    /// but `NotFound`.
    pub async fn consume(&self, id: &str, by: &str, arguments: &Value) -> Result<Request, Refused> {
        let hash = args_hash(arguments);
        let attempt = Attempt {
            id,
            actor: by,
            channel: None,
            action: "consume",
        };
        self.attempt(attempt, |row, _| {
            if row.status != Status::Approved {
                return Err(Refused::NotApproved {
                    id: row.id.clone(),
                    status: row.status,
                });
            }
            if let Some(at) = row.consumed_at {
                return Err(Refused::AlreadyConsumed {
                    id: row.id.clone(),
                    at,
                    finished: row.finished_at.is_some(),
                });
            }
            if row.hash_to_run() != hash {
                return Err(Refused::ArgumentsChanged {
                    id: row.id.clone(),
                    approved: row.hash_to_run().to_owned(),
                    got: hash.clone(),
                });
            }
            Ok(Change::Consume { hash: hash.clone() })
        })
        .await
    }

    /// Records that a consumed call's tool returned (however it ended).
    ///
    /// # Errors
    /// [`Refused::NotRunning`] when it was never consumed or already finished;
    /// [`Refused::Store`].
    pub async fn finish(&self, id: &str, by: &str) -> Result<Request, Refused> {
        let attempt = Attempt {
            id,
            actor: by,
            channel: None,
            action: "finish",
        };
        self.attempt(attempt, |row, _| {
            if row.consumed_at.is_none() || row.finished_at.is_some() {
                return Err(Refused::NotRunning { id: row.id.clone() });
            }
            Ok(Change::Finish)
        })
        .await
    }

    /// Runs one attempt: the row is read under the writer lock, an overdue pending row is
    /// expired first, `check` accepts or refuses, and the change and its audit row commit
    /// together.
    async fn attempt(
        &self,
        attempt: Attempt<'_>,
        check: impl FnOnce(&Request, i64) -> Result<Change, Refused>,
    ) -> Result<Request, Refused> {
        let mut tx = self.begin().await?;
        // Read under the writer lock: audit times follow the order of writes, and a decision
        // that waited for the lock is judged against the deadline when it is written.
        let now = self.now_ms();
        let Some(mut row) = by_id(&mut tx, attempt.id).await? else {
            return Err(Refused::NotFound {
                id: attempt.id.to_owned(),
            });
        };
        let mut changed = false;
        if row.status == Status::Pending && now >= row.expires_at && attempt.action != "expire" {
            let expiry = Change::Leave {
                to: Status::Expired,
                note: None,
                edit: None,
            };
            let timeout = Attempt {
                id: attempt.id,
                actor: "timeout",
                channel: None,
                action: "expire",
            };
            row = apply(&mut tx, &row, &timeout, &expiry, now).await?;
            changed = true;
        }
        let result = match check(&row, now) {
            // A change that fails half-way returns before the commit: dropping the
            // transaction rolls it back, so no transition stands without its audit row.
            Ok(change) => Ok(apply(&mut tx, &row, &attempt, &change, now).await?),
            Err(refusal) => {
                let status = row.status.as_str();
                audit(
                    &mut tx,
                    &row.id,
                    now,
                    attempt.actor,
                    attempt.action,
                    (false, status, status),
                    attempt.channel,
                    Some(&refusal.to_string()),
                )
                .await?;
                Err(refusal)
            }
        };
        tx.commit().await.map_err(StoreError::from)?;
        if changed || result.is_ok() {
            self.notify(attempt.id);
        }
        result
    }

    /// Waits until `id` leaves `pending` and returns it. Wakes at once on a change this
    /// process commits, reads the row every `poll` (so a decision written by another process
    /// is seen), and expires the request itself when it becomes overdue (the call is then
    /// denied).
    ///
    /// # Cancel safety
    /// Cancel-safe: dropping the future leaves the request as it is (pending).
    ///
    /// # Errors
    /// [`Refused::NotFound`] or the database fails.
    pub async fn wait(&self, id: &str, poll: Duration) -> Result<Request, Refused> {
        let mut changes = self.watch(id);
        let _unwatch = Unwatch { store: self, id };
        loop {
            changes.borrow_and_update();
            // The reads are boxed: a query's future is large and short-lived, and a waiter
            // lives as long as its request is pending.
            let Some(row) = Box::pin(self.get(id)).await? else {
                return Err(Refused::NotFound { id: id.to_owned() });
            };
            if row.status.is_terminal() {
                return Ok(row);
            }
            let now = self.now_ms();
            if now >= row.expires_at {
                match Box::pin(self.expire(id)).await {
                    Ok(row) => return Ok(row),
                    Err(Refused::AlreadyDecided { .. } | Refused::NotOverdue { .. }) => continue,
                    Err(e) => return Err(e),
                }
            }
            let until_expiry =
                Duration::from_millis(u64::try_from(row.expires_at - now).unwrap_or(0));
            tokio::select! {
                _ = changes.changed() => {}
                () = tokio::time::sleep(poll.min(until_expiry)) => {}
            }
        }
    }
}

impl Store {
    /// A receiver woken by every change of request `id` this process commits.
    fn watch(&self, id: &str) -> watch::Receiver<u64> {
        match self.watched.lock() {
            Ok(mut watched) => watched
                .entry(id.to_owned())
                .or_insert_with(|| watch::channel(0).0)
                .subscribe(),
            // A poisoned map: every change wakes this waiter instead.
            Err(_) => self.changes(),
        }
    }
}

/// Forgets request `id`'s channel once its last waiter is gone.
struct Unwatch<'a> {
    store: &'a Store,
    id: &'a str,
}

impl Drop for Unwatch<'_> {
    fn drop(&mut self) {
        if let Ok(mut watched) = self.store.watched.lock()
            && watched
                .get(self.id)
                .is_some_and(|sender| sender.receiver_count() <= 1)
        {
            watched.remove(self.id);
        }
    }
}

fn already(row: &Request) -> Refused {
    Refused::AlreadyDecided {
        id: row.id.clone(),
        status: row.status,
        by: row.responded_by.clone(),
        at: row.responded_at,
    }
}
