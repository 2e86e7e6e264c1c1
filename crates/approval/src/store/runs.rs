//! Durable runs: the `run` table (one row per run) and `run_line` (the run's trace, its
//! journal), in the same database as the requests its calls file.

use serde::Serialize;
use serde_json::Value;
use sqlx::sqlite::SqliteRow;
use sqlx::{QueryBuilder, Row, Sqlite};

use super::Store;
use crate::error::StoreError;

/// A run's status: `running` and `waiting` (a call waits for a human) are live; the others
/// are ends.
pub const LIVE_STATUSES: [&str; 2] = ["running", "waiting"];

/// One run as stored.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunRecord {
    /// The run id.
    pub id: String,
    /// The agent's name.
    pub agent: String,
    /// What started it (the API request's fields), as JSON.
    pub request: Value,
    /// `running`, `waiting`, `completed`, `failed`, `cancelled`, `turn_limit`, `timed_out`.
    pub status: String,
    /// The request a call waits on, while the run is `waiting`.
    pub pending_approval: Option<String>,
    /// Model turns used, once the run ended.
    pub turns: Option<u32>,
    /// Why it failed, when it did.
    pub error: Option<String>,
    /// When it was created (ms since the Unix epoch).
    pub created_at: i64,
    /// When its row last changed (ms).
    pub updated_at: i64,
    /// When it ended (ms), once it did.
    pub ended_at: Option<i64>,
}

impl RunRecord {
    /// Whether the run is still going (`running` or `waiting`).
    pub fn is_live(&self) -> bool {
        LIVE_STATUSES.contains(&self.status.as_str())
    }
}

/// One line of a run's journal.
#[derive(Debug, Clone, PartialEq)]
pub struct JournalLine {
    /// The run.
    pub run_id: String,
    /// Its position in the run's trace.
    pub seq: u64,
    /// The trace line's `type`.
    pub kind: String,
    /// The trace line, as a JSON text.
    pub line: String,
}

/// A change of a run's row that a batch of lines brings.
#[derive(Debug, Clone, PartialEq)]
pub struct RunChange {
    /// The run.
    pub run_id: String,
    /// Its new status.
    pub status: String,
    /// The request a call now waits on (`None`: none).
    pub pending_approval: Option<String>,
    /// Model turns, when known.
    pub turns: Option<u32>,
    /// Why it failed, when it did.
    pub error: Option<String>,
}

/// The run columns, in [`decode_run`]'s order; a macro so queries stay `&'static str`.
macro_rules! select_run {
    ($tail:literal) => {
        concat!(
            "SELECT id, agent, request, status, pending_approval, turns, error, created_at, \
             updated_at, ended_at FROM run ",
            $tail
        )
    };
}

fn decode_run(row: &SqliteRow) -> Result<RunRecord, StoreError> {
    let request: String = row.try_get("request")?;
    let turns: Option<i64> = row.try_get("turns")?;
    Ok(RunRecord {
        id: row.try_get("id")?,
        agent: row.try_get("agent")?,
        request: serde_json::from_str(&request)
            .map_err(|e| StoreError::Corrupt(format!("run request: {e}")))?,
        status: row.try_get("status")?,
        pending_approval: row.try_get("pending_approval")?,
        turns: turns.and_then(|t| u32::try_from(t).ok()),
        error: row.try_get("error")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
        ended_at: row.try_get("ended_at")?,
    })
}

impl Store {
    /// Records a new run, `running`.
    ///
    /// # Errors
    /// The database fails, or a run with that id exists.
    pub async fn create_run(
        &self,
        id: &str,
        agent: &str,
        request: &Value,
    ) -> Result<RunRecord, StoreError> {
        let now = self.now_ms();
        sqlx::query(
            "INSERT INTO run (id, agent, request, status, created_at, updated_at) \
             VALUES ($1, $2, $3, 'running', $4, $4)",
        )
        .bind(id)
        .bind(agent)
        .bind(request.to_string())
        .bind(now)
        .execute(&self.pool)
        .await?;
        self.run(id)
            .await?
            .ok_or_else(|| StoreError::Corrupt(format!("run {id} vanished while created")))
    }

    /// Appends journal lines and applies run changes, all in one transaction: either all of
    /// them are durable or none is. A change to a run that already ended is ignored (an ended
    /// run stays ended).
    ///
    /// # Errors
    /// The database fails (a line whose `(run_id, seq)` exists is an error: the journal never
    /// rewrites a line).
    pub async fn append_lines(
        &self,
        lines: &[JournalLine],
        changes: &[RunChange],
    ) -> Result<(), StoreError> {
        if lines.is_empty() && changes.is_empty() {
            return Ok(());
        }
        let now = self.now_ms();
        let mut tx = self.begin().await?;
        // SQLite allows 32 766 bound values per statement; 4 per line.
        for chunk in lines.chunks(4096) {
            let mut insert: QueryBuilder<Sqlite> =
                QueryBuilder::new("INSERT INTO run_line (run_id, seq, kind, line) ");
            insert.push_values(chunk, |mut row, line| {
                row.push_bind(&line.run_id)
                    .push_bind(i64::try_from(line.seq).unwrap_or(i64::MAX))
                    .push_bind(&line.kind)
                    .push_bind(&line.line);
            });
            insert.build().execute(&mut *tx).await?;
        }
        for change in changes {
            let ended = !LIVE_STATUSES.contains(&change.status.as_str());
            sqlx::query(
                "UPDATE run SET status = $2, pending_approval = $3, \
                 turns = COALESCE($4, turns), error = COALESCE($5, error), updated_at = $6, \
                 ended_at = CASE WHEN $7 THEN $6 ELSE ended_at END \
                 WHERE id = $1 AND status IN ('running', 'waiting')",
            )
            .bind(&change.run_id)
            .bind(&change.status)
            .bind(&change.pending_approval)
            .bind(change.turns.map(i64::from))
            .bind(&change.error)
            .bind(now)
            .bind(ended)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// The run `id`, if there is one.
    ///
    /// # Errors
    /// The database fails or the row does not read back.
    pub async fn run(&self, id: &str) -> Result<Option<RunRecord>, StoreError> {
        let row = sqlx::query(select_run!("WHERE id = $1"))
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(decode_run).transpose()
    }

    /// Runs, newest first, at most `limit`: all, or those with `status`.
    ///
    /// # Errors
    /// The database fails or a row does not read back.
    pub async fn runs(
        &self,
        status: Option<&str>,
        limit: u32,
    ) -> Result<Vec<RunRecord>, StoreError> {
        let rows = sqlx::query(select_run!(
            "WHERE $1 IS NULL OR status = $1 ORDER BY created_at DESC, id DESC LIMIT $2"
        ))
        .bind(status)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(decode_run).collect()
    }

    /// The runs that were `running` or `waiting`, oldest first: those a restarted server
    /// resumes.
    ///
    /// # Errors
    /// The database fails or a row does not read back.
    pub async fn live_runs(&self) -> Result<Vec<RunRecord>, StoreError> {
        let rows = sqlx::query(select_run!(
            "WHERE status IN ('running', 'waiting') ORDER BY created_at, id"
        ))
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(decode_run).collect()
    }

    /// Counts runs by status.
    ///
    /// # Errors
    /// The database fails.
    pub async fn run_counts(&self) -> Result<Vec<(String, u64)>, StoreError> {
        let rows = sqlx::query("SELECT status, COUNT(*) AS n FROM run GROUP BY status")
            .fetch_all(&self.pool)
            .await?;
        rows.iter()
            .map(|r| {
                let n: i64 = r.try_get("n")?;
                Ok((r.try_get("status")?, u64::try_from(n).unwrap_or(0)))
            })
            .collect()
    }

    /// Up to `limit` journal lines of run `id` after `seq` `after` (from the start when
    /// `None`), in `seq` order.
    ///
    /// # Errors
    /// The database fails.
    pub async fn run_lines(
        &self,
        id: &str,
        after: Option<u64>,
        limit: u32,
    ) -> Result<Vec<JournalLine>, StoreError> {
        let after = after.map_or(-1, |a| i64::try_from(a).unwrap_or(i64::MAX));
        let rows = sqlx::query(
            "SELECT run_id, seq, kind, line FROM run_line WHERE run_id = $1 AND seq > $2 \
             ORDER BY seq LIMIT $3",
        )
        .bind(id)
        .bind(after)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| {
                let seq: i64 = r.try_get("seq")?;
                Ok(JournalLine {
                    run_id: r.try_get("run_id")?,
                    seq: u64::try_from(seq).unwrap_or(0),
                    kind: r.try_get("kind")?,
                    line: r.try_get("line")?,
                })
            })
            .collect()
    }
}
